"""What the audit needs beyond ``Machine``: superblocks, LVM config, mdadm.conf, sysfs queue files.

``gather`` reads them through a Backend (``run`` / ``read_text`` only) and never raises: every
read that fails is recorded in ``AuditInputs.unknown`` (what -> why) and the rules that needed
it stay silent or say they could not check.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import TypeVar

from app.backend import Backend, CommandResult
from app.model.devices import Machine
from app.model.smart import SmartReading
from app.parsers.dmsetup import CryptTable, parse_crypt_table
from app.parsers.errors import ParseError
from app.parsers.fsinfo import fs_info_argv, parse_fs_info
from app.parsers.lvmconfig import LvmConfig, parse_lvmconfig
from app.parsers.mdadm import MdConfArray, parse_scan
from app.parsers.tune2fs import Ext4Superblock
from app.parsers.xfs_info import XfsGeometry
from app.plans.builders.mdconf_edit import norm_uuid
from app.plans.builders.persist import FILES
from app.plans.shapes import MDADM_CONF
from app.plans.superblocks import EXAMINE_SCAN_ARGV

MDADM_CONF_PATHS = MDADM_CONF  # where mdadm reads its configuration (the plans append there)
FSTRIM_ARGV = ("systemctl", "is-active", "fstrim.timer")
MDMONITOR_ARGV = ("systemctl", "is-active", "mdmonitor.service")
MDADM_SCAN_ARGV = ("mdadm", "--detail", "--scan")
LVM_KEYS = (
    "devices/issue_discards",
    "devices/md_chunk_alignment",
    "devices/data_alignment_detection",
    "devices/data_alignment_offset_detection",
    "devices/data_alignment",
    "activation/raid_fault_policy",
    "activation/monitoring",
)
LVM_CONF = "/etc/lvm/lvm.conf"
LVMCONFIG_ARGV = ("lvmconfig", "--type", "full", *LVM_KEYS)


def audit_argvs() -> tuple[tuple[str, ...], ...]:
    """The read-only commands the audit may run whatever the machine (for a batched read)."""
    return (FSTRIM_ARGV, MDMONITOR_ARGV, MDADM_SCAN_ARGV, LVMCONFIG_ARGV)


_DEFAULT_LINE = re.compile(r"^#\s*([A-Za-z_]\w*=)", re.MULTILINE)
T = TypeVar("T")


@dataclass(frozen=True, slots=True)
class SchedulerState:
    available: tuple[str, ...]
    current: str | None

    @classmethod
    def parse(cls, text: str) -> SchedulerState:
        """``none [mq-deadline] kyber bfq`` -> available + the bracketed current one."""
        names: list[str] = []
        current: str | None = None
        for w in text.split():
            if w.startswith("[") and w.endswith("]"):
                w = w[1:-1]
                current = w
            names.append(w)
        if current is None and len(names) == 1:
            current = names[0]  # "none" alone (some dm/md devices)
        return cls(tuple(names), current)


@dataclass(frozen=True)
class AuditInputs:
    """Everything beyond the Machine. Keys are kernel names. A key missing from a mapping means
    "not read"; ``unknown`` says why for the reads that failed."""

    ext4: dict[str, Ext4Superblock] = field(default_factory=dict, hash=False)
    xfs: dict[str, XfsGeometry] = field(default_factory=dict, hash=False)
    lvm: LvmConfig | None = None
    mdadm_conf: tuple[MdConfArray, ...] | None = None  # None = not read; () = no ARRAY lines
    mdadm_conf_path: str | None = None  # the file it came from; None = no file
    mdadm_conf_text: str | None = None
    mdadm_scan: tuple[MdConfArray, ...] | None = None
    # mdadm --examine --scan: the arrays whose superblocks some device carries (read only when
    # mdadm.conf names a UUID no running array has; None = not read)
    mdadm_examine: tuple[MdConfArray, ...] | None = None
    discard_max_bytes: dict[str, int] = field(default_factory=dict, hash=False)
    fstrim_timer: str | None = None  # systemctl is-active: active, inactive, failed, ...
    mdmonitor: str | None = None  # systemctl is-active mdmonitor.service (None = not read)
    fstab_text: str | None = None  # /etc/fstab (None = not read or absent)
    crypttab_text: str | None = None  # /etc/crypttab (None = not read or absent)
    crypt_tables: dict[str, CryptTable] = field(default_factory=dict, hash=False)  # dm-N ->
    # SMART per disk, from callers that read it anyway (gather never runs smartctl)
    smart: dict[str, SmartReading] = field(default_factory=dict, hash=False)
    # disk -> the UDMA CRC error count first recorded in the state database (smart_logs.py)
    smart_crc_before: dict[str, int] = field(default_factory=dict, hash=False)
    # array -> KiB/s of its last finished full sync/rebuild as recorded (raidman report's store)
    sync_speed_kib_s: dict[str, int] = field(default_factory=dict, hash=False)
    schedulers: dict[str, SchedulerState] = field(default_factory=dict, hash=False)
    queue_depth: dict[str, int] = field(default_factory=dict, hash=False)
    write_cache: dict[str, str] = field(default_factory=dict, hash=False)  # write back/through
    # md array -> its own queue/optimal_io_size (what mkfs and pvcreate read from it)
    optimal_io: dict[str, int] = field(default_factory=dict, hash=False)
    # raidman's own boot-time settings files (app.plans.builders.persist) -> their text, where present
    persisted: dict[str, str] = field(default_factory=dict, hash=False)
    unknown: dict[str, str] = field(default_factory=dict, hash=False)  # what -> why not read
    # a degraded array -> when md said a member of it failed (the kernel log's "Disk failure
    # on ..." line of this boot) and that line; absent: not in the log (app.kernel_log)
    degraded_since: dict[str, tuple[float, str]] = field(default_factory=dict, hash=False)
    now: float | None = None  # the backend's clock when the inputs were read

    def scheduler(self, device: str) -> SchedulerState | None:
        return self.schedulers.get(device)


PERSIST_PATHS = tuple(f.path for f in FILES.values())


def backend_read_quiet(backend: Backend, path: str) -> str | None:
    """A file that may well be absent (raidman's own settings files): None, never a note."""
    try:
        text = backend.read_text(path)
    except Exception:  # a backend must not raise; the audit never fails on it
        return None
    return text if text is None or len(text) <= 64 * 1024 else None


def _why(r: CommandResult) -> str:
    if r.not_recorded:
        return f"{r.argv[0]}: not recorded in this capture"
    if r.returncode == 127:
        return f"{r.argv[0]} not found"
    msg = (r.stderr or r.stdout).strip().splitlines()
    return f"{' '.join(r.argv)}: exit {r.returncode}" + (f": {msg[-1].strip()}" if msg else "")


def gather(backend: Backend, machine: Machine) -> AuditInputs:
    """Read the audit's extra inputs. Never raises."""
    unknown: dict[str, str] = {}

    def attempt(what: str, fn: Callable[[], T]) -> T | None:
        try:
            return fn()
        except ParseError as e:
            unknown[what] = f"unreadable output: {e}"
        except Exception as e:  # a backend must not raise, but the audit never fails on it
            unknown[what] = f"{type(e).__name__}: {e}"
        return None

    def run(what: str, argv: list[str], ok_codes: tuple[int, ...] = (0,)) -> str | None:
        r = attempt(what, lambda: backend.run(argv, timeout=20))
        if r is None:
            return None
        if r.returncode not in ok_codes:
            unknown[what] = _why(r)
            return None
        return r.stdout

    recorded = getattr(backend, "recorded", None)  # a replay: was this file captured at all?

    def read(what: str, path: str) -> str | None:
        text = attempt(what, lambda: backend.read_text(path))
        if text is None and callable(recorded) and recorded(path) is False:
            unknown[what] = f"{path} not recorded in this capture"
        return text

    def parsed(what: str, parser: Callable[[str], T], text: str) -> T | None:
        return attempt(what, lambda: parser(text))

    ext4: dict[str, Ext4Superblock] = {}
    xfs: dict[str, XfsGeometry] = {}
    # the Linux probe already ran tune2fs/xfs_info for this machine: one reading, shared
    shared_fn = getattr(backend, "fs_info", None)
    shared: object = attempt("fs_info", lambda: shared_fn(machine)) if callable(shared_fn) else None
    for fs in machine.filesystems:
        argv = fs_info_argv(fs)
        if argv is None:
            continue
        what = f"{argv[0]}:{fs.device}"
        got: object = shared.get(fs.device) if isinstance(shared, dict) else None
        if isinstance(got, str):
            unknown[what] = got
            continue
        if isinstance(got, CommandResult):
            unknown[what] = _why(got)
            continue
        if got is None:
            text = run(what, list(argv))
            if text is not None:
                got = parsed(what, partial(parse_fs_info, fs), text)
        if isinstance(got, Ext4Superblock):
            ext4[fs.device] = got
        elif isinstance(got, XfsGeometry):
            xfs[fs.device] = got

    lvm: LvmConfig | None = None
    if machine.pvs:
        out = run("lvmconfig", list(LVMCONFIG_ARGV))
        missing = unknown.get("lvmconfig") == "lvmconfig not found"  # no use trying again
        if (
            out is None
            and not missing
            and read(LVM_CONF, LVM_CONF) is None
            and LVM_CONF not in unknown
        ):
            # Without lvm.conf, `--type full` fails ("Cannot clone NULL config node", seen
            # with LVM 2.03.16) although LVM then runs on its built-in defaults: read those.
            # `--type default` prints them commented out ("# issue_discards=0").
            why = unknown.pop("lvmconfig")
            out = run("lvmconfig", ["lvmconfig", "--type", "default", *LVM_KEYS])
            if out is None:
                again = unknown["lvmconfig"]  # said once when both failed alike
                unknown["lvmconfig"] = why if again == why else f"{why}; {again}"
            else:
                out = _DEFAULT_LINE.sub(r"\1", out)
        if out is not None:
            lvm = parsed("lvmconfig", parse_lvmconfig, out)

    conf: tuple[MdConfArray, ...] | None = None
    conf_path: str | None = None
    conf_text: str | None = None
    scan: tuple[MdConfArray, ...] | None = None
    examine: tuple[MdConfArray, ...] | None = None
    if machine.arrays:
        failed = False
        for path in MDADM_CONF_PATHS:
            text = read("mdadm.conf", path)
            if "mdadm.conf" in unknown:
                failed = True
                break
            if text is not None:
                conf_path, conf_text = path, text
                break
        if not failed:
            # an mdadm.conf the parser rejects is "unknown", not "lists nothing"
            conf = parsed("mdadm.conf", parse_scan, conf_text) if conf_text is not None else ()
        out = run("mdadm --detail --scan", list(MDADM_SCAN_ARGV))
        if out is not None:
            scan = parsed("mdadm --detail --scan", parse_scan, out)
        running = {norm_uuid(a.uuid) for a in machine.arrays}
        if conf and any(norm_uuid(e.uuid) not in running for e in conf if e.uuid):
            # a line no running array answers: is the array on some disk (stopped), or gone?
            out = run("mdadm --examine --scan", list(EXAMINE_SCAN_ARGV))
            if out is not None:
                examine = parsed("mdadm --examine --scan", parse_scan, out)

    fstrim: str | None = None
    if any(d.is_ssd for d in machine.disks):
        # is-active exits 3 for inactive units and still prints the state
        out = run("fstrim.timer", list(FSTRIM_ARGV), (0, 3))
        if out is not None:
            word = out.strip().splitlines()[0].strip() if out.strip() else ""
            if word:
                fstrim = word
            else:
                unknown["fstrim.timer"] = "systemctl printed nothing"

    mdmonitor: str | None = None
    if any(a.has_redundancy for a in machine.arrays):
        out = run("mdmonitor", list(MDMONITOR_ARGV), (0, 3, 4))
        if out is not None and out.strip():
            mdmonitor = out.strip().splitlines()[0].strip()

    fstab = read("fstab", "/etc/fstab") if machine.filesystems else None
    crypttab = read("crypttab", "/etc/crypttab") if machine.crypts else None
    crypt_tables: dict[str, CryptTable] = {}
    for c in machine.crypts:
        what = f"dmsetup:{c.kernel_name}"
        out = run(what, ["dmsetup", "table", c.name])
        if out is not None:
            t = parsed(what, parse_crypt_table, out)
            if t is not None:
                crypt_tables[c.kernel_name] = t

    discard: dict[str, int] = {}
    scheds: dict[str, SchedulerState] = {}
    depth: dict[str, int] = {}
    wcache: dict[str, str] = {}

    def read_int(what: str, path: str) -> int | None:
        text = read(what, path)
        if text is None:
            return None
        try:
            return int(text.strip())
        except ValueError:
            unknown[what] = f"{path}: not a number: {text.strip()!r}"
            return None

    layered = [a.name for a in machine.arrays if not a.is_container]
    layered += [lv.kernel_name for lv in machine.lvs if lv.kernel_name]
    layered += [c.kernel_name for c in machine.crypts]
    for d in machine.disks:
        if d.kind != "disk":
            continue
        base = f"/sys/block/{d.name}"
        s = read(f"scheduler:{d.name}", f"{base}/queue/scheduler")
        if s is not None and s.strip():
            scheds[d.name] = SchedulerState.parse(s)
        q = read_int(f"queue_depth:{d.name}", f"{base}/device/queue_depth")
        if q is not None:
            depth[d.name] = q
        w = read(f"write_cache:{d.name}", f"{base}/queue/write_cache")
        if w is not None and w.strip():
            wcache[d.name] = w.strip()
        v = read_int(f"discard:{d.name}", f"{base}/queue/discard_max_bytes")
        discard[d.name] = v if v is not None else d.discard_max_bytes
    for name in layered:
        v = read_int(f"discard:{name}", f"/sys/block/{name}/queue/discard_max_bytes")
        if v is not None:
            discard[name] = v
    optimal_io: dict[str, int] = {}
    for a in machine.arrays:
        if not a.is_container:
            v = read_int(f"optimal_io:{a.name}", f"/sys/block/{a.name}/queue/optimal_io_size")
            if v is not None:
                optimal_io[a.name] = v

    persisted: dict[str, str] = {}
    for path in PERSIST_PATHS:
        text = backend_read_quiet(backend, path)
        if text is not None:
            persisted[path] = text

    return AuditInputs(
        ext4=ext4,
        xfs=xfs,
        lvm=lvm,
        mdadm_conf=conf,
        mdadm_conf_path=conf_path,
        mdadm_conf_text=conf_text,
        mdadm_scan=scan,
        mdadm_examine=examine,
        discard_max_bytes=discard,
        fstrim_timer=fstrim,
        mdmonitor=mdmonitor,
        fstab_text=fstab,
        crypttab_text=crypttab,
        crypt_tables=crypt_tables,
        schedulers=scheds,
        queue_depth=depth,
        write_cache=wcache,
        optimal_io=optimal_io,
        persisted=persisted,
        unknown=unknown,
    )
