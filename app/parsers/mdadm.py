"""mdadm outputs: ``--detail`` (human), ``--examine`` (human), ``--detail --export`` (KEY=VALUE)
and ``--detail --scan`` / mdadm.conf ``ARRAY`` lines.

Sizes as mdadm prints them: ``Array Size``/``Used Dev Size`` in KiB, ``Avail Dev Size`` and
offsets in 512-byte sectors, ``Chunk Size`` "512K" (kept here in bytes).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from app.parsers.errors import ParseError
from app.parsers.safe import ascii_int, only_parse_errors

# "  Raid Level : raid1": the key is what comes before the first ":" after white space. Found
# with one linear search (``_KV_SEP``), then checked whole: the one regex this replaced
# (``([A-Za-z][...]*?)\s+:``, lazy, spaces in the key) took 2.7 s on a 24,000-space line.
_KV_SEP = re.compile(r"\s:")
_KV_KEY = re.compile(r"[A-Za-z][A-Za-z0-9 /()\[\]_.-]*")
_LEAD_INT = re.compile(r"^\s*(-?[0-9]{1,20})(?![0-9])", re.ASCII)
_STATUS_RE = re.compile(r"^([0-9]{1,3})%", re.ASCII)
_LOCAL_HOST = "(local to host "


# ---- shared helpers ---------------------------------------------------------------------------


def _lead_int(v: str | None) -> int | None:
    if v is None:
        return None
    m = _LEAD_INT.match(v)
    return int(m.group(1)) if m else None


def _events(v: str | None) -> int | None:
    """ "2193679" -> 2193679; 0.90 arrays print "major.minor" ("0.19"): None (see ``fields``)."""
    return ascii_int(v) if v is not None else None


def _chunk_bytes(v: str | None) -> int | None:
    """ "512K" -> 524288; "64K" -> 65536; "4M" -> 4194304."""
    if v is None:
        return None
    m = re.match(r"^\s*([0-9]{1,20})\s*([KMG]?)", v, re.ASCII)
    if not m:
        return None
    mult = {"": 1, "K": 1024, "M": 1024**2, "G": 1024**3}[m.group(2)]
    return int(m.group(1)) * mult


def _split_local(v: str | None) -> tuple[str | None, str | None]:
    """ "host:0  (local to host host)" -> ("host:0", "host")."""
    if v is None:
        return None, None
    body = v.rstrip()  # found with str searches: a regex backtracking over spaces is quadratic
    after_paren = body.rfind(")", 0, len(body) - 1) + 1  # the host name holds no ")"
    i = body.find(_LOCAL_HOST, after_paren) if body.endswith(")") else -1
    if i >= 0:
        return body[:i].strip(), body[i + len(_LOCAL_HOST) : -1]
    return v.strip(), None


def _key_value(raw: str) -> tuple[str, str] | None:
    """ "    Raid Level : raid1" -> ("Raid Level", "raid1"); None for a line without a key."""
    sep = _KV_SEP.search(raw)
    if sep is None:
        return None
    key = raw[: sep.start()].strip()
    if not _KV_KEY.fullmatch(key):
        return None
    return key, raw[sep.end() :].strip()


def _words(v: str | None) -> tuple[str, ...]:
    if not v:
        return ()
    return tuple(w.strip() for w in v.split(",") if w.strip())


def _status_percents(fields: Mapping[str, str]) -> dict[str, int]:
    """{"rebuild": 24, "resync": 4, "check": 21, "reshape": 3} from "<X> Status : NN% complete"."""
    out: dict[str, int] = {}
    for k, v in fields.items():
        if k.endswith(" Status"):
            m = _STATUS_RE.match(v)
            if m:
                out[k[: -len(" Status")].lower()] = int(m.group(1))
    return out


@dataclass(frozen=True, slots=True)
class MdadmDevice:
    """One row of the device table."""

    number: int | None  # None for "-" (removed slot, container member)
    major: int
    minor: int
    raid_device: int | None  # None for "-" (spare, faulty, container member)
    state: tuple[str, ...]  # ("active", "sync"), ("spare", "rebuilding"), ("removed",), ...
    device: str | None  # "/dev/sdb1"; None for a removed slot

    @property
    def name(self) -> str | None:
        """Kernel name (basename of the device path)."""
        return None if self.device is None else self.device.rsplit("/", 1)[-1]


def _device_row(tokens: list[str], source: str, lineno: int) -> MdadmDevice:
    if len(tokens) < 4:
        raise ParseError(source, f"short device table row {' '.join(tokens)!r}", lineno)

    def num(t: str) -> int | None:
        if t == "-":
            return None
        n = ascii_int(t)
        if n is None:
            raise ParseError(source, f"bad number {t!r} in device table", lineno)
        return n

    major, minor = num(tokens[1]), num(tokens[2])
    if major is None or minor is None:
        raise ParseError(source, "device table row without major/minor", lineno)
    rest = tokens[4:]
    device = rest[-1] if rest and rest[-1].startswith("/") else None
    state = tuple(rest[:-1] if device is not None else rest)
    return MdadmDevice(num(tokens[0]), major, minor, num(tokens[3]), state, device)


def _parse_blocks(
    text: str, source: str
) -> tuple[str, dict[str, str], list[tuple[int, str]], list[str]]:
    """Header device, key/value fields (continuations appended), table lines, and 'this' row."""
    lines = text.splitlines()
    i = 0
    while i < len(lines) and not lines[i].strip():
        i += 1
    if i >= len(lines):
        raise ParseError(source, "empty input")
    head = lines[i].strip()
    if not head.endswith(":") or " " in head:
        raise ParseError(source, f"expected '<device>:' first, got {head!r}", i + 1)
    device = head[:-1]
    fields: dict[str, str] = {}
    table: list[tuple[int, str]] = []
    this: list[str] = []
    last: str | None = None
    more: dict[str, list[str]] = {}  # continuation lines of a key
    in_table = False
    typed_table = False  # DDF's "Number RefNo Size Device Type/State" table is not modelled
    for n, raw in enumerate(lines[i + 1 :], i + 2):
        line = raw.strip()
        if not line:
            continue
        if line.startswith("Number "):
            in_table = True
            typed_table = "Major" in line and "Minor" in line
            continue
        if in_table:
            if not typed_table:
                continue
            if line.startswith("this "):
                this = line.split()[1:]
            else:
                table.append((n, line))
            continue
        kv = _key_value(raw)
        if kv is not None and " : " in raw + " ":
            last, fields[last] = kv
            more.pop(last, None)
        elif last is not None and raw[:1].isspace():
            more.setdefault(last, []).append(line)  # "(Linux-MD 08/16/22 16:20:42)"
        else:
            raise ParseError(source, f"unexpected line {line!r}", n)
    for key, lines_after in more.items():  # joined once: appending to a str is quadratic
        fields[key] = " ".join((fields[key], *lines_after))
    if not fields:
        raise ParseError(source, f"no 'Key : value' lines for {device}")
    return device, fields, table, this


# ---- mdadm --detail -------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MdadmDetail:
    device: str  # "/dev/md127"
    fields: Mapping[str, str] = field(compare=False, hash=False)  # every "Key : value" as printed
    version: str | None = None  # "1.2", "0.90", "ddf", "imsm"
    raid_level: str | None = None  # raid1, raid5, container, ...
    array_size_kib: int | None = None
    used_dev_size_kib: int | None = None
    raid_devices: int | None = None
    total_devices: int | None = None
    active_devices: int | None = None
    working_devices: int | None = None
    failed_devices: int | None = None
    spare_devices: int | None = None
    state: tuple[str, ...] = ()  # ("clean", "degraded", "recovering")
    chunk_bytes: int | None = None
    layout: str | None = None
    name: str | None = None  # "host:126" (without "(local to host ...)")
    homehost: str | None = None
    uuid: str | None = None
    events: int | None = None
    consistency_policy: str | None = None
    intent_bitmap: str | None = None  # "Internal", a file path
    progress: Mapping[str, int] = field(default_factory=dict, hash=False)  # {"rebuild": 24}
    container: str | None = None  # "/dev/md0" for a member volume
    container_member: int | None = None
    member_arrays: tuple[str, ...] = ()  # for a container
    devices: tuple[MdadmDevice, ...] = ()


@only_parse_errors("mdadm --detail")
def parse_detail(text: str) -> MdadmDetail:
    """``mdadm --detail /dev/mdX`` human output."""
    src = "mdadm --detail"
    device, f, table, _ = _parse_blocks(text, src)
    if "Raid Level" not in f:
        raise ParseError(src, f"{device}: no 'Raid Level' line")
    name, homehost = _split_local(f.get("Name"))
    uuid, uhost = _split_local(f.get("UUID"))  # 0.90: "UUID : ... (local to host h)"
    container = member = None
    if "Container" in f:
        cdev, _, mem = f["Container"].partition(",")
        container = cdev.strip()
        member = _lead_int(mem.replace("member", ""))
    devices = tuple(_device_row(line.split(), src, n) for n, line in table)
    return MdadmDetail(
        device=device,
        fields=dict(f),
        version=f.get("Version"),
        raid_level=f.get("Raid Level"),
        array_size_kib=_lead_int(f.get("Array Size")),
        used_dev_size_kib=_lead_int(f.get("Used Dev Size")),
        raid_devices=_lead_int(f.get("Raid Devices")),
        total_devices=_lead_int(f.get("Total Devices")),
        active_devices=_lead_int(f.get("Active Devices")),
        working_devices=_lead_int(f.get("Working Devices")),
        failed_devices=_lead_int(f.get("Failed Devices")),
        spare_devices=_lead_int(f.get("Spare Devices")),
        state=_words(f.get("State")),
        chunk_bytes=_chunk_bytes(f.get("Chunk Size")),
        layout=f.get("Layout"),
        name=name,
        homehost=homehost or uhost,
        uuid=uuid,
        events=_events(f.get("Events")),
        consistency_policy=f.get("Consistency Policy"),
        intent_bitmap=f.get("Intent Bitmap"),
        progress=_status_percents(f),
        container=container,
        container_member=member,
        member_arrays=tuple(f["Member Arrays"].split()) if "Member Arrays" in f else (),
        devices=devices,
    )


# ---- mdadm --examine ------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class MdadmExamine:
    device: str  # the member examined, "/dev/vda2"
    fields: Mapping[str, str] = field(compare=False, hash=False)
    magic: str | None = None
    version: str | None = None  # "1.2", "0.90.00", "01.02.00" (DDF)
    feature_map: str | None = None
    array_uuid: str | None = None  # "Array UUID" (1.x) or "UUID" (0.90)
    name: str | None = None
    homehost: str | None = None
    raid_level: str | None = None
    raid_devices: int | None = None
    avail_dev_size_sectors: int | None = None
    array_size_kib: int | None = None
    data_offset_sectors: int | None = None
    super_offset_sectors: int | None = None
    recovery_offset_sectors: int | None = None
    state: tuple[str, ...] = ()
    device_uuid: str | None = None
    flags: tuple[str, ...] = ()  # ("write-mostly", "failfast")
    events: int | None = None
    device_role: str | None = None  # "Active device 0", "spare", "Replacement device 1"
    array_state: str | None = None  # "AR" (letters only)
    layout: str | None = None
    chunk_bytes: int | None = None
    progress: Mapping[str, int] = field(default_factory=dict, hash=False)
    devices: tuple[MdadmDevice, ...] = ()  # 0.90 superblock table
    this: MdadmDevice | None = None  # the 0.90 "this" row

    @property
    def role_slot(self) -> int | None:
        """2 for "Active device 2" / "Replacement device 2"; None for spares and the rest."""
        if self.device_role is None:
            return None
        m = re.search(r"device ([0-9]{1,9})$", self.device_role, re.ASCII)
        return int(m.group(1)) if m else None


@only_parse_errors("mdadm --examine")
def parse_examine(text: str) -> MdadmExamine:
    """``mdadm --examine <member>`` human output (1.x, 0.90; DDF/IMSM keep their raw fields)."""
    src = "mdadm --examine"
    device, f, table, this = _parse_blocks(text, src)
    if "Magic" not in f and "Version" not in f:
        raise ParseError(src, f"{device}: neither 'Magic' nor 'Version' (not an md superblock)")
    name, homehost = _split_local(f.get("Name"))
    uuid, uhost = _split_local(f.get("Array UUID") or f.get("UUID"))
    devices: tuple[MdadmDevice, ...] = ()
    this_dev = None
    if this:
        this_dev = _device_row(this, src, 0)
        devices = tuple(_device_row(line.split()[1:], src, n) for n, line in table)
    astate = f.get("Array State")
    return MdadmExamine(
        device=device,
        fields=dict(f),
        magic=f.get("Magic"),
        version=f.get("Version"),
        feature_map=f.get("Feature Map"),
        array_uuid=uuid,
        name=name,
        homehost=homehost or uhost,
        raid_level=f.get("Raid Level"),
        raid_devices=_lead_int(f.get("Raid Devices")),
        avail_dev_size_sectors=_lead_int(f.get("Avail Dev Size")),
        array_size_kib=_lead_int(f.get("Array Size")),
        data_offset_sectors=_lead_int(f.get("Data Offset")),
        super_offset_sectors=_lead_int(f.get("Super Offset")),
        recovery_offset_sectors=_lead_int(f.get("Recovery Offset")),
        state=_words(f.get("State")),
        device_uuid=f.get("Device UUID"),
        flags=tuple((f.get("Flags") or "").split()),
        events=_events(f.get("Events")),
        device_role=f.get("Device Role"),
        array_state=astate.split()[0] if astate else None,
        layout=f.get("Layout"),
        chunk_bytes=_chunk_bytes(f.get("Chunk Size")),
        progress=_status_percents(f),
        devices=devices,
        this=this_dev,
    )


# ---- mdadm --detail --export ----------------------------------------------------------------


@only_parse_errors("mdadm --detail --export")
def parse_detail_export(text: str) -> dict[str, str]:
    """``KEY=VALUE`` lines (``mdadm --detail --export``); blank lines skipped, values unquoted."""
    out: dict[str, str] = {}
    for n, line in enumerate(text.splitlines(), 1):
        line = line.strip()
        if not line:
            continue
        key, eq, value = line.partition("=")
        if not eq or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", key):
            raise ParseError("mdadm --detail --export", f"not KEY=VALUE: {line!r}", n)
        if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
            value = value[1:-1]
        out[key] = value
    return out


@dataclass(frozen=True, slots=True)
class MdadmExport:
    level: str | None
    devices: int | None  # MD_DEVICES
    metadata: str | None
    uuid: str | None
    devname: str | None  # MD_DEVNAME: "test" for /dev/md/test
    name: str | None  # MD_NAME: "host:test"
    container: str | None  # MD_CONTAINER: "/dev/md/imsm0"
    member: int | None  # MD_MEMBER
    roles: tuple[tuple[str, str], ...]  # (device path or name, role: "0", "spare", ...)
    raw: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)

    def role_of(self, device: str) -> str | None:
        for d, r in self.roles:
            if d == device or d.rsplit("/", 1)[-1] == device:
                return r
        return None


_ROLE_KEY = re.compile(r"^MD_DEVICE_(.+)_ROLE$")


@only_parse_errors("mdadm --detail --export")
def export_view(kv: Mapping[str, str]) -> MdadmExport:
    """Typed view of ``parse_detail_export``. Member keys are mangled device names
    (``MD_DEVICE_sdb_ROLE``, ``MD_DEVICE_dev_sdd2_ROLE``, ``MD_DEVICE_ev_sdd2_ROLE``); the role
    is paired with ``MD_DEVICE_<same>_DEV`` when present."""
    roles: list[tuple[str, str]] = []
    for k, v in kv.items():
        m = _ROLE_KEY.match(k)
        if m:
            mangled = m.group(1)
            roles.append((kv.get(f"MD_DEVICE_{mangled}_DEV", mangled), v))
    return MdadmExport(
        level=kv.get("MD_LEVEL"),
        devices=_lead_int(kv.get("MD_DEVICES")),
        metadata=kv.get("MD_METADATA"),
        uuid=kv.get("MD_UUID"),
        devname=kv.get("MD_DEVNAME"),
        name=kv.get("MD_NAME"),
        container=kv.get("MD_CONTAINER"),
        member=_lead_int(kv.get("MD_MEMBER")),
        roles=tuple(sorted(roles)),
        raw=dict(kv),
    )


# ---- mdadm --detail --scan / mdadm.conf ----------------------------------------------------


@dataclass(frozen=True, slots=True)
class MdConfArray:
    devname: str | None  # "/dev/md/127", "/dev/md0", or None for "<ignore>"
    metadata: str | None = None
    uuid: str | None = None
    name: str | None = None
    container: str | None = None  # "/dev/md/imsm0" or a UUID
    member: str | None = None  # "0" (imsm/ddf member index, as written)
    level: str | None = None
    num_devices: int | None = None
    spares: int | None = None
    devices: tuple[str, ...] = ()  # devices=/dev/sda1,/dev/sdb1
    options: Mapping[str, str] = field(default_factory=dict, compare=False, hash=False)
    line: str = ""  # the whole ARRAY entry on one line (continuations joined), as written


_SHLEX_SPECIAL = frozenset("\"'\\")  # what makes shlex.split differ from str.split


def shell_words(line: str) -> list[str]:
    """``shlex.split(line)``; a plain ASCII line with no quote or escape is split at its spaces
    and tabs, which is what shlex makes of it (shlex reads a character at a time: the audit's
    scan of 250 arrays spent 40 ms in it). Raises ValueError on bad quoting, as shlex does."""
    if line.isascii() and _SHLEX_SPECIAL.isdisjoint(line) and line.replace("\t", " ").isprintable():
        return line.split()
    return shlex.split(line)


@only_parse_errors("mdadm.conf")
def parse_scan(text: str) -> tuple[MdConfArray, ...]:
    """``mdadm --detail --scan`` output or an mdadm.conf: ``ARRAY`` lines only (continuations =
    lines starting with whitespace; ``#`` comments; DEVICE/MAILADDR/HOMEHOST/... ignored)."""
    src = "mdadm.conf"
    parts: list[tuple[int, list[str]]] = []  # joined once: appending to a str is quadratic
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if raw[:1].isspace() and parts:
            parts[-1][1].append(line.strip())
        else:
            parts.append((n, [line.strip()]))
    out: list[MdConfArray] = []
    for n, words_of in parts:
        line = " ".join(words_of)
        if line.split(None, 1)[0].upper() != "ARRAY":
            continue  # DEVICE, MAILADDR...: not split (shlex reads a character at a time)
        try:
            words = shell_words(line)
        except ValueError as e:
            raise ParseError(src, f"bad quoting: {e}", n) from None
        if not words or words[0].upper() != "ARRAY":
            continue
        devname: str | None = None
        opts: dict[str, str] = {}
        for w in words[1:]:
            if "=" in w:
                k, _, v = w.partition("=")
                opts[k.lower()] = v
            elif devname is None:
                devname = None if w == "<ignore>" else w
            else:
                raise ParseError(src, f"unexpected word {w!r} in ARRAY line", n)
        if devname is None and not opts:
            raise ParseError(src, "ARRAY line with nothing in it", n)
        level = opts.get("level")
        out.append(
            MdConfArray(
                devname=devname,
                metadata=opts.get("metadata"),
                uuid=opts.get("uuid"),
                name=opts.get("name"),
                container=opts.get("container"),
                member=opts.get("member"),
                level=level,
                num_devices=_lead_int(opts.get("num-devices")),
                spares=_lead_int(opts.get("spares")),
                devices=tuple(d for d in opts.get("devices", "").split(",") if d),
                options=opts,
                line=line,
            )
        )
    return tuple(out)
