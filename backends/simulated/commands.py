"""``run(argv)`` of the simulation: each supported program changes the state like the real one.

Every handler returns ``(returncode, stdout, stderr)`` and never raises for bad input.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Sequence

from app.model import levels, md_names
from backends.simulated.bitmap import dirty_fraction, examine_bitmap
from backends.simulated.programs import kernel_log, smartctl_tests
from backends.simulated.snapshot import build_smart, layout_number, smart_counters
from backends.simulated.state import SimArray, SimFS, SimLV, SimMember, SimPV, SimState, SimVG
from backends.simulated.sysfs import WriteError, mdadm_conf_line, read_path, write_path

Result = tuple[int, str, str]
E2FS_VERSION = "mke2fs 1.47.0 (5-Feb-2023)"


# ---- device names -------------------------------------------------------------------------
def resolve(st: SimState, path: str) -> str | None:
    if not path.startswith("/dev/"):
        return None
    rest = path[5:]
    if rest.startswith("md/"):
        nm = rest[3:]
        for a in st.arrays.values():
            if a.array_name and a.array_name.split(":")[-1] == nm:
                return a.name
        if f"md{nm}" in st.arrays:
            return f"md{nm}"
        return None
    if rest.startswith("mapper/"):
        for lv in st.lvs.values():
            if f"{lv.vg.replace('-', '--')}-{lv.name.replace('-', '--')}" == rest[7:]:
                return lv.kernel_name
        return None
    if rest in st.disks or rest in st.partitions or rest in st.arrays:
        return rest
    if "/" in rest:
        v = st.lvs.get(rest)
        return v.kernel_name if v else None
    found = st.lv_by_kernel(rest)
    return found.kernel_name if found else None


def signatures(st: SimState, dev: str) -> list[tuple[str, str, str, str]]:
    """(offset, type, uuid, label) rows as ``wipefs`` prints them."""
    out: list[tuple[str, str, str, str]] = []
    for a in st.arrays.values():
        if a.member(dev) is not None and not a.metadata.startswith("external:/"):
            if a.metadata.startswith("external:imsm"):
                out.append(("0x0", "isw_raid_member", "", ""))
            else:
                out.append(("0x1000", "linux_raid_member", a.uuid, a.array_name or ""))
            break
    else:
        if dev in st.md_superblocks:
            uuid, label = st.md_superblocks[dev]
            out.append(("0x1000", "linux_raid_member", uuid, label))
    if dev in st.pvs:
        out.append(("0x218", "LVM2_member", st.pvs[dev].uuid, ""))
    fs = st.filesystems.get(dev)
    if fs is not None:
        off = {"ext4": "0x438", "xfs": "0x0", "vfat": "0x36", "swap": "0xff6"}.get(fs.fstype, "0x0")
        out.append((off, fs.fstype, fs.uuid, fs.label or ""))
    d = st.disks.get(dev)
    if d is not None and d.partition_table:
        out.append(("0x200", d.partition_table, d.ptuuid or "", ""))
        out.append(("0x1fe", "PMBR", "", ""))
    return out


def busy_reason(st: SimState, dev: str) -> str | None:
    """Why ``dev`` cannot be used for a new array/PV/filesystem, or None."""
    for a in st.arrays.values():
        if a.member(dev) is not None:
            return f"member of {a.name}"
    if dev in st.pvs:
        return "an LVM physical volume"
    fs = st.filesystems.get(dev)
    if fs is not None and fs.mountpoints:
        return f"mounted on {fs.mountpoints[0]}"
    for p in st.partitions.values():
        if p.disk == dev and busy_reason(st, p.name):
            return f"holds {p.name}"
    if dev in st.arrays:
        for lv in st.lvs.values():
            if dev in lv.devices:
                return "holds an active volume group"
    return None


def io_hints(st: SimState, dev: str) -> tuple[int, int]:
    """(minimum_io_size, optimal_io_size) as the block layer stacks them."""
    if dev in st.disks:
        d = st.disks[dev]
        return d.min_io, d.optimal_io
    if dev in st.partitions:
        return io_hints(st, st.partitions[dev].disk)
    a = st.arrays.get(dev)
    if a is not None:
        chunk = a.chunk_kib * 1024
        opt = levels.optimal_io_bytes(a.level, a.raid_disks, chunk, a.layout)
        if not opt:
            return 512, 0
        return chunk, opt
    lv = st.lv_by_kernel(dev)
    if lv is not None and lv.devices:
        if lv.stripes and lv.stripe_size:
            return lv.stripe_size, lv.stripe_size * lv.stripes
        return io_hints(st, lv.devices[0])
    return 512, 0


def parse_size(text: str, default_unit: str = "m") -> int | None:
    """LVM/mdadm size: number with optional unit (binary units, case-insensitive)."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)([bskmgtpe]?)(?:i?b)?", text.strip().lower())
    if not m:
        return None
    unit = m.group(2) or default_unit
    mult = {"b": 1, "s": 512, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40,
            "p": 1 << 50, "e": 1 << 60}[unit]  # fmt: skip
    return int(float(m.group(1)) * mult)


# ---- option parsing -----------------------------------------------------------------------
def split_opts(
    args: Sequence[str], with_value: dict[str, str], flags: dict[str, str]
) -> tuple[list[tuple[str, str | None]], list[str]] | str:
    """Ordered (option, value) pairs and positional args; an error message on bad input."""
    out: list[tuple[str, str | None]] = []
    pos: list[str] = []
    i = 0
    while i < len(args):
        a = args[i]
        if a.startswith("--"):
            name, eq, val = a[2:].partition("=")
            if name in with_value.values() or name in with_value:
                name = with_value.get(name, name)
                if not eq:
                    i += 1
                    if i >= len(args):
                        return f"option '--{name}' requires an argument"
                    val = args[i]
                out.append((name, val))
            elif name in flags.values() or name in flags:
                out.append((flags.get(name, name), None))
            else:
                return f"unrecognized option '--{name}'"
        elif a.startswith("-") and len(a) > 1 and not a[1].isdigit():
            key = a[1]
            if key in with_value:
                val = a[2:]
                if not val:
                    i += 1
                    if i >= len(args):
                        return f"option requires an argument -- '{key}'"
                    val = args[i]
                out.append((with_value[key], val))
            elif key in flags:
                for ch in a[1:]:
                    if ch not in flags:
                        return f"invalid option -- '{ch}'"
                    out.append((flags[ch], None))
            else:
                return f"invalid option -- '{key}'"
        else:
            pos.append(a)
        i += 1
    return out, pos


# ---- mdadm --------------------------------------------------------------------------------
MDADM_VALUES = {
    "l": "level", "n": "raid-devices", "c": "chunk", "p": "layout", "b": "bitmap",
    "e": "metadata", "N": "name", "x": "spare-devices", "z": "size",
    "backup-file": "backup-file", "homehost": "homehost", "with": "with",
    "write-mostly": "write-mostly", "consistency-policy": "consistency-policy",
    "data-offset": "data-offset",
}  # fmt: skip
MDADM_FLAGS = {
    "C": "create", "G": "grow", "S": "stop", "D": "detail", "s": "scan", "E": "examine",
    "R": "run", "f": "fail", "r": "remove", "a": "add", "q": "quiet", "v": "verbose",
    "A": "assemble", "manage": "manage", "zero-superblock": "zero-superblock",
    "re-add": "re-add", "replace": "replace", "assume-clean": "assume-clean",
    "force": "force", "add-spare": "add-spare", "readonly": "readonly",
    "readwrite": "readwrite", "brief": "brief", "set-faulty": "fail",
    "X": "examine-bitmap", "examine-bitmap": "examine-bitmap",
}  # fmt: skip
MANAGE_OPS = {"fail", "remove", "add", "re-add", "replace", "with", "add-spare"}


def mdadm(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    # manage ops take device lists; make "--with X" a flag + positional for the parser
    vals = {k: v for k, v in MDADM_VALUES.items() if v != "with"}
    flags = dict(MDADM_FLAGS)
    flags["with"] = "with"
    parsed = split_opts(list(args), vals, flags)
    if isinstance(parsed, str):
        return 2, "", f"mdadm: {parsed}\n"
    opts, pos = parsed
    keys = [k for k, _ in opts]
    od = {k: v for k, v in opts}
    if "create" in keys:
        return md_create(st, od, pos, stdin)
    if "detail" in keys and ("scan" in keys or not pos):
        lines = [mdadm_conf_line(st, a) for a in st.arrays.values()]
        return 0, "".join(line + "\n" for line in lines), ""
    if "detail" in keys:
        out = []
        for p in pos:
            dev = resolve(st, p)
            if dev is None or dev not in st.arrays:
                return 1, "", f"mdadm: cannot open {p}: No such file or directory\n"
            a = st.arrays[dev]
            # --brief: the ARRAY line (mdadm's Detail.c prints the brief form, as --scan does)
            out.append(mdadm_conf_line(st, a) + "\n" if "brief" in keys else md_detail(st, a, p))
        return 0, "".join(out), ""
    if "examine-bitmap" in keys:
        dev = resolve(st, pos[0]) if len(pos) == 1 else None
        if dev is None:
            return 1, "", f"mdadm: cannot open {pos[0] if pos else ''}: No such file or directory\n"
        return examine_bitmap(st, dev, pos[0])
    if "examine" in keys:
        if "scan" in keys:
            return 0, "".join(mdadm_conf_line(st, a) + "\n" for a in st.arrays.values()), ""
        return 1, "", "mdadm: --examine is not simulated beyond --scan\n"
    if "stop" in keys:
        return md_stop(st, pos)
    if "zero-superblock" in keys:
        return md_zero(st, pos)
    if "grow" in keys:
        return md_grow(st, od, pos)
    if not pos:
        return 2, "", "mdadm: No devices given.\n"
    # manage mode: first positional is the array, the rest follow ops in argv order
    return md_manage(st, list(args))


def _md_target(st: SimState, path: str) -> tuple[str | None, str]:
    """Kernel name for a --create target: (name, error)."""
    if path.startswith("/dev/md/"):
        nm = path[8:]
        if nm.isdigit():
            return f"md{int(nm)}", ""
        for a in st.arrays.values():
            if a.array_name and a.array_name.split(":")[-1] == nm:
                return None, f"mdadm: array {path} already exists\n"
        for k in range(127, -1, -1):
            if f"md{k}" not in st.arrays:
                return f"md{k}", ""
        return None, "mdadm: no free md device\n"
    m = re.fullmatch(r"/dev/md_?d?(\d+)", path)
    if m:
        return f"md{int(m.group(1))}", ""
    return (
        None,
        f"mdadm: {path} is an invalid name for an md device.  Try /dev/md/{path.rsplit('/', 1)[-1]}\n",
    )


def md_create(st: SimState, od: dict[str, str | None], pos: list[str], stdin: str | None) -> Result:
    if not pos:
        return 2, "", "mdadm: an md device must be given in this mode\n"
    name, err = _md_target(st, pos[0])
    if name is None:
        return 1, "", err
    if name in st.arrays:
        return 1, "", f"mdadm: Cannot open {pos[0]}: Device or resource busy\n"
    level = md_names.MDADM_LEVELS.get(str(od.get("level") or "").lower())
    if od.get("level") is None:
        return 2, "", "mdadm: a RAID level is needed to create an array.\n"
    if level is None:
        return 2, "", f"mdadm: invalid raid level: {od.get('level')}\n"
    try:
        n = int(od.get("raid-devices") or 0)
        spares_n = int(od.get("spare-devices") or 0)
    except ValueError:
        return 2, "", "mdadm: invalid number of raid devices\n"
    if n <= 0:
        return 2, "", "mdadm: no raid-devices specified.\n"
    devs = pos[1:]
    if len(devs) != n + spares_n:
        if len(devs) > n + spares_n:
            return (
                2,
                "",
                f"mdadm: You have listed more devices ({len(devs)}) than are in the array({n + spares_n})!\n",
            )
        return (
            2,
            "",
            "mdadm: You haven't given enough devices (real or missing) to create this array\n",
        )
    if n < levels.min_devices(level) and "force" not in od:
        return (
            2,
            "",
            f"mdadm: at least {levels.min_devices(level)} raid-devices needed for level {level[4:] or level}\n",
        )
    chunk_kib = 512
    if od.get("chunk"):
        sz = parse_size(str(od["chunk"]), "k")
        if sz is None or sz < 4096 or sz & (sz - 1):
            return 2, "", f"mdadm: invalid chunk/rounding value: {od['chunk']}\n"
        chunk_kib = sz // 1024
    layout: str | None = None
    if level == "raid10":
        layout = str(od.get("layout") or "n2")
        if not re.fullmatch(r"[nfo][1-9]", layout):
            return 2, "", f"mdadm: layout {layout} not understood for raid10.\n"
        if int(layout[1:]) > n:
            return 2, "", f"mdadm: that layout requires at least {layout[1:]} devices\n"
    elif level in levels.PARITY:
        lay = str(od.get("layout") or md_names.DEFAULT_PARITY_LAYOUT)
        number = md_names.parity_layout_number(level, lay)
        if number is None or number > 3:  # the simulation models the four rotating layouts
            return 2, "", f"mdadm: layout {lay} not understood for {level}.\n"
        layout = md_names.PARITY_LAYOUT_NAMES[number]
    metadata = str(od.get("metadata") or "1.2")
    if metadata not in ("1.2", "1.1", "1.0", "0.90", "1", "default"):
        return 2, "", f"mdadm: unrecognised metadata identifier: {metadata}\n"
    if metadata in ("1", "default"):
        metadata = "1.2"
    members: list[SimMember] = []
    warn = ""
    sizes = []
    for i, p in enumerate(devs):
        if p == "missing":
            continue
        dev = resolve(st, p)
        if dev is None:
            return 1, "", f"mdadm: cannot open {p}: No such file or directory\n"
        if busy_reason(st, dev):
            return 1, "", f"mdadm: cannot open {p}: Device or resource busy\n"
        for _off, typ, _u, _l in signatures(st, dev):
            if typ == "linux_raid_member":
                warn += f"mdadm: {p} appears to be part of a raid array:\n       level=raid? devices=? ctime=?\n"
            elif typ in ("gpt", "dos"):
                warn += f"mdadm: partition table exists on {p} but will be lost or\n       meaningless after creating array\n"
            elif typ != "PMBR":
                warn += f"mdadm: {p} appears to contain an {typ} file system\n"
        size = st.device_size(dev) or 0
        offset = 262144 if size >= 16 << 30 else 2048
        comp = (size // 512 - offset) // 2
        if level not in ("raid1", "linear"):
            comp -= comp % chunk_kib
        else:
            comp -= comp % 64
        if comp < max(chunk_kib, 64) * 2:
            return 1, "", f"mdadm: {p} is too small: {max(0, comp)}K\n"
        sizes.append(comp)
        slot = i if i < n else None
        members.append(
            SimMember(
                dev, i, slot, {"in_sync"} if slot is not None else {"spare"}, data_offset=offset
            )
        )
    if not members:
        return 1, "", "mdadm: no devices given\n"
    if warn and "run" not in od:
        answer = (stdin or "").strip().lower()
        if not answer.startswith("y"):
            return 1, warn + "Continue creating array? ", "mdadm: create aborted.\n"
    comp = min(sizes)
    if od.get("size"):
        want = parse_size(str(od["size"]), "k")
        if want is None or want // 1024 > comp:
            return 1, "", f"mdadm: {od['size']} is larger than the devices allow\n"
        comp = want // 1024
    notes = ""
    if "metadata" not in od:
        notes += "mdadm: Defaulting to version 1.2 metadata\n"
    if level == "raid1" and "metadata" not in od:
        notes = (
            "mdadm: Note: this array has metadata at the start and\n"
            "    may not be suitable as a boot device.\n" + notes
        )
    bitmap_opt = od.get("bitmap")
    redundant = level in levels.REDUNDANT
    if bitmap_opt is None:
        tmp = SimArray(name, level, n, [], comp, chunk_kib, layout)
        bitmap = "internal" if redundant and tmp.size_kib() >= 100 * 1024 * 1024 else None
        if bitmap:
            notes = "mdadm: automatically enabling write-intent bitmap on large array\n" + notes
    elif bitmap_opt in ("none",):
        bitmap = None
    elif bitmap_opt == "internal":
        bitmap = "internal" if redundant else None
        if not redundant:
            return 2, "", f"mdadm: --bitmap not meaningful with level {level}.\n"
    else:
        bitmap = bitmap_opt
    arr_name = str(od.get("name") or (pos[0][8:] if pos[0].startswith("/dev/md/") else name[2:]))
    if ":" not in arr_name:
        arr_name = f"{st.host}:{arr_name}"
    a = SimArray(
        name=name,
        level=level,
        raid_disks=n,
        members=members,
        component_kib=comp,
        chunk_kib=chunk_kib if level not in ("raid1",) else 0,
        layout=layout,
        metadata=metadata,
        array_name=arr_name,
        uuid=st.new_uuid(name),
        bitmap=bitmap,
        array_state="clean",
        creation_time=st.t,
    )
    a.next_desc = len(devs)
    for m in members:
        st.md_superblocks.pop(m.device, None)
        fs = st.filesystems.pop(m.device, None)
        del fs
    st.arrays[name] = a
    st.touch()
    if "assume-clean" in od or not redundant:
        pass
    elif level == "raid5" and "force" not in od and n >= 3:
        # mdadm builds a RAID-5 degraded and recovers onto its last device: faster than resync
        last = next(m for m in members if m.slot == n - 1)
        last.state = {"spare"}
        st.start_sync(a, "recover", targets=(last.device,))
    else:
        st.start_sync(a, "resync")
    if a.job is None:
        st.maybe_start_recovery(a)
    return 0, "", notes + f"mdadm: array {pos[0]} started.\n"


def md_detail(st: SimState, a: SimArray, path: str) -> str:
    lines = [f"{path}:"]
    if a.level == "container":
        lines += [
            f"           Version : {a.metadata.split(':', 1)[1]}",
            "        Raid Level : container",
            f"     Total Devices : {len(a.members)}",
            "",
            f"              UUID : {a.uuid}",
            f"     Member Arrays : {' '.join('/dev/' + x.name for x in st.arrays.values() if x.container == a.name)}",
            "",
            "    Number   Major   Minor   RaidDevice",
            "",
        ]
        lines += [f"       -       8       0        -        /dev/{m.device}" for m in a.members]
        return "\n".join(lines) + "\n"
    job = a.job
    state = a.array_state
    extra = []
    if a.degraded():
        extra.append("degraded")
    if job is not None:
        extra.append({"recover": "recovering", "resync": "resyncing", "check": "checking",
                      "repair": "repairing", "reshape": "reshaping"}[job.action])  # fmt: skip
    lines += [
        f"           Version : {a.metadata}",
        f"        Raid Level : {a.level}",
        f"        Array Size : {a.size_kib()} ({a.size_kib() / 1048576:.2f} GiB {a.size_kib() * 1024 / 1e9:.2f} GB)",
        f"     Used Dev Size : {a.component_kib} ({a.component_kib / 1048576:.2f} GiB {a.component_kib * 1024 / 1e9:.2f} GB)",
        f"      Raid Devices : {a.raid_disks}",
        f"     Total Devices : {len(a.members)}",
        "       Persistence : Superblock is persistent",
        "",
        f"     Intent Bitmap : {'Internal' if a.bitmap == 'internal' else a.bitmap or 'none'}",
        "",
        f"             State : {', '.join([state, *extra])}",
        f"    Active Devices : {len(a.in_sync_slots())}",
        f"   Working Devices : {sum(1 for m in a.members if 'faulty' not in m.state)}",
        f"    Failed Devices : {sum(1 for m in a.members if 'faulty' in m.state)}",
        f"     Spare Devices : {sum(1 for m in a.members if 'spare' in m.state)}",
        "",
    ]
    if a.level == "raid10":
        kind = {"n": "near", "f": "far", "o": "offset"}[(a.layout or "n2")[0]]
        lines.append(f"            Layout : {kind}={a.copies}")
    elif a.level in levels.PARITY:
        lines.append(f"            Layout : {a.layout}")
    if a.chunk_kib:
        lines.append(f"        Chunk Size : {a.chunk_kib}K")
    lines.append("")
    lines.append(f"Consistency Policy : {'bitmap' if a.bitmap else 'resync'}")
    if job is not None:
        pct = int(100 * job.pos / max(1, job.total))
        label = {"recover": "Rebuild Status", "reshape": "Reshape Status"}.get(
            job.action, "Resync Status"
        )
        lines += ["", f"    {label} : {pct}% complete"]
    lines += [
        "",
        f"              Name : {a.array_name}",
        f"              UUID : {a.uuid.replace('-', '')[:8]}:{a.uuid.replace('-', '')[8:16]}:{a.uuid.replace('-', '')[16:24]}:{a.uuid.replace('-', '')[24:]}",
        "",
        "    Number   Major   Minor   RaidDevice State",
    ]
    for m in sorted(a.members, key=lambda m: (m.slot is None, m.slot or 0, m.desc_nr)):
        if "faulty" in m.state:
            word = "faulty"
        elif "replacement" in m.state or ("spare" in m.state and m.slot is not None):
            word = "spare rebuilding"
        elif "spare" in m.state:
            word = "spare"
        else:
            word = "active sync"
        slot = "-" if m.slot is None else str(m.slot)
        lines.append(
            f"    {m.desc_nr:5d}     8      {m.desc_nr * 16:3d}    {slot:>5}      {word}   /dev/{m.device}"
        )
    return "\n".join(lines) + "\n"


def md_stop(st: SimState, pos: list[str]) -> Result:
    out = ""
    for p in pos:
        dev = resolve(st, p)
        if dev is None or dev not in st.arrays:
            return 1, out, f"mdadm: error opening {p}: No such file or directory\n"
        a = st.arrays[dev]
        used = (
            dev in st.pvs
            or (dev in st.filesystems and st.filesystems[dev].mountpoints)
            or any(x.container == dev for x in st.arrays.values())
        )
        if used:
            return (
                1,
                out,
                (
                    f"mdadm: Cannot get exclusive access to {p}:Perhaps a running process, "
                    "mounted filesystem or active volume group?\n"
                ),
            )
        for m in a.members:
            if not a.metadata.startswith("external:"):
                st.md_superblocks[m.device] = (a.uuid, a.array_name or "")
        del st.arrays[dev]
        st.filesystems.pop(dev, None)
        st.touch()
        out += f"mdadm: stopped {p}\n"
    return 0, "", out


def md_zero(st: SimState, pos: list[str]) -> Result:
    for p in pos:
        dev = resolve(st, p)
        if dev is None:
            return 1, "", f"mdadm: Couldn't open {p} for write - not zeroing\n"
        if any(a.member(dev) is not None for a in st.arrays.values()):
            return 1, "", f"mdadm: Couldn't open {p} for write - not zeroing\n"
        if dev not in st.md_superblocks:
            return 1, "", f"mdadm: Unrecognised md component device - {p}\n"
        del st.md_superblocks[dev]
        st.touch()
    return 0, "", ""


def md_manage(st: SimState, args: list[str]) -> Result:
    target: str | None = None
    op: str | None = None
    out, err = "", ""
    short = {"-f": "fail", "-r": "remove", "-a": "add", "--fail": "fail", "--remove": "remove",
             "--add": "add", "--re-add": "re-add", "--replace": "replace", "--with": "with",
             "--add-spare": "add-spare", "--set-faulty": "fail"}  # fmt: skip
    replace_src: list[str] = []
    for tok in args:
        if tok in ("--manage", "-q", "--quiet", "-v", "--verbose", "--run", "-R"):
            continue
        if tok in short:
            op = short[tok]
            continue
        if tok.startswith("-"):
            return 2, out, err + f"mdadm: unrecognized option '{tok}'\n"
        if target is None:
            dev = resolve(st, tok)
            if dev is None or dev not in st.arrays:
                return 1, out, err + f"mdadm: error opening {tok}: No such file or directory\n"
            target = dev
            continue
        if op is None:
            return 2, out, err + f"mdadm: No action given for {tok} in --manage mode\n"
        a = st.arrays[target]
        rc, o, e = manage_one(st, a, op, tok, replace_src)
        out += o
        err += e
        if rc:
            return rc, out, err
    if target is None:
        return 2, out, "mdadm: No devices given.\n"
    if op is None:
        return 0, md_detail(st, st.arrays[target], f"/dev/{target}"), ""
    return 0, out, err


def manage_one(st: SimState, a: SimArray, op: str, tok: str, replace_src: list[str]) -> Result:
    md = f"/dev/{a.name}"
    if op == "remove" and tok in ("failed", "detached"):
        gone = [m for m in a.members if "faulty" in m.state]
        for g in gone:
            a.members.remove(g)
            a.removed[g.device] = (st.t, g.desc_nr)
        st.touch()
        return 0, "", "".join(f"mdadm: hot removed /dev/{g.device} from {md}\n" for g in gone)
    dev = resolve(st, tok)
    if dev is None:
        return 1, "", f"mdadm: Cannot find {tok}: No such file or directory\n"
    m = a.member(dev)
    if op == "fail":
        if m is None:
            return 1, "", f"mdadm: set device faulty failed for {tok}:  No such device\n"
        if "faulty" in m.state:
            return 0, "", f"mdadm: set {tok} faulty in {md}\n"
        working = "in_sync" in m.state and m.slot is not None
        if working and (not a.redundant() or a.degraded() >= st.max_failures(a)):
            return 1, "", f"mdadm: set device faulty failed for {tok}:  Device or resource busy\n"
        st.advance_to(st.t)
        m.state = {"faulty"}
        m.slot = None
        m.recovery_start = None
        job = a.job
        if job is not None and (dev in job.targets or job.action in ("resync", "check", "repair")):
            a.last_sync_action = job.action
            a.job = None
            st.events.append((st.t, a.name, f"{job.action} interrupted: {dev} failed"))
        st.events.append((st.t, a.name, f"{dev} faulty, array degraded"))
        a.array_state = "clean"
        st.touch()
        st.maybe_start_recovery(a)
        return 0, "", f"mdadm: set {tok} faulty in {md}\n"
    if op == "remove":
        if m is None:
            return 1, "", f"mdadm: hot remove failed for {tok}: No such device or address\n"
        if "faulty" not in m.state and m.slot is not None:
            return 1, "", f"mdadm: hot remove failed for {tok}: Device or resource busy\n"
        a.members.remove(m)
        a.removed[dev] = (st.t, m.desc_nr)
        if a.job is not None and dev in a.job.targets:
            a.job = None
        st.md_superblocks[dev] = (a.uuid, a.array_name or "")
        st.touch()
        return 0, "", f"mdadm: hot removed {tok} from {md}\n"
    if op in ("add", "re-add", "add-spare"):
        if m is not None:
            return 1, "", f"mdadm: Cannot open {tok}: Device or resource busy\n"
        if busy_reason(st, dev):
            return 1, "", f"mdadm: Cannot open {tok}: Device or resource busy\n"
        size = st.device_size(dev) or 0
        offset = 262144 if size >= 16 << 30 else 2048
        if (size // 512 - offset) // 2 < a.component_kib:
            return 1, "", f"mdadm: {tok} not large enough to join array\n"
        was = a.removed.get(dev)
        can_readd = was is not None and a.bitmap is not None and op != "add-spare"
        if op == "re-add" and not can_readd:
            return 1, "", f"mdadm: --re-add for {tok} to {md} is not possible\n"
        st.md_superblocks.pop(dev, None)
        st.filesystems.pop(dev, None)
        if can_readd and was is not None and a.degraded() > 0:
            missing = sorted(set(range(a.raid_disks)) - set(a.slots()))
            new = SimMember(dev, was[1], missing[0], {"spare"}, data_offset=offset)
            a.members.append(new)
            del a.removed[dev]
            frac = dirty_fraction(was[0], st.t)
            if a.job is None:
                st.start_sync(a, "recover", targets=(dev,), partial_fraction=frac)
            st.touch()
            return 0, "", f"mdadm: re-added {tok}\n"
        new = SimMember(dev, a.next_desc, None, {"spare"}, data_offset=offset)
        a.next_desc += 1
        a.members.append(new)
        a.removed.pop(dev, None)
        st.touch()
        if op != "add-spare":
            st.maybe_start_recovery(a)
        return 0, "", f"mdadm: added {tok}\n"
    if op == "replace":
        if m is None or "in_sync" not in m.state:
            return 1, "", f"mdadm: {tok} is not an active member of {md}\n"
        replace_src.append(dev)
        m.state.add("want_replacement")
        st.touch()
        return 0, "", f"mdadm: Marked {tok} (device {m.slot} in {md}) for replacement\n"
    if op == "with":
        if not replace_src:
            return 2, "", "mdadm: --with must follow --replace\n"
        src = a.member(replace_src.pop())
        if m is None or m.slot is not None or "spare" not in m.state:
            return 1, "", f"mdadm: {tok} is not a spare in {md}: add it first with --add\n"
        assert src is not None
        m.slot = src.slot
        m.state = {"replacement"}
        if a.job is None:
            st.start_sync(a, "recover", targets=(dev,))
        st.touch()
        return 0, "", f"mdadm: Marked {tok} in {md} as replacement for device {src.slot}\n"
    return 2, "", f"mdadm: unsupported operation {op}\n"


def md_grow(st: SimState, od: dict[str, str | None], pos: list[str]) -> Result:
    if not pos:
        return 2, "", "mdadm: no array given for --grow\n"
    dev = resolve(st, pos[0])
    if dev is None or dev not in st.arrays:
        return 1, "", f"mdadm: Cannot open {pos[0]}: No such file or directory\n"
    a = st.arrays[dev]
    if od.get("bitmap") is not None:
        want = od["bitmap"]
        if want == "none":
            if a.bitmap is None:
                return 1, "", f"mdadm: no bitmap found on {pos[0]}\n"
            a.bitmap = None
        elif want == "internal":
            if a.bitmap is not None:
                return 1, "", f"mdadm: {pos[0]} already has a bitmap ({a.bitmap})\n"
            a.bitmap = "internal"
        else:
            a.bitmap = want
        st.touch()
        return 0, "", ""
    if od.get("raid-devices") is None:
        return 2, "", "mdadm: no changes to --grow\n"
    try:
        n = int(str(od["raid-devices"]))
    except ValueError:
        return 2, "", f"mdadm: invalid number of raid devices: {od['raid-devices']}\n"
    if a.job is not None:
        return 1, "", f"mdadm: {pos[0]} is performing resync/recovery and cannot be reshaped\n"
    if n == a.raid_disks:
        return 0, "", f"mdadm: {pos[0]}: no change requested\n"
    if n < a.raid_disks:
        return 1, "", "mdadm: shrinking the number of devices is not simulated\n"
    if a.level not in levels.REDUNDANT:
        return 1, "", f"mdadm: {a.level} array {pos[0]} cannot be reshaped.\n"
    spares = [m for m in a.members if m.slot is None and m.state == {"spare"}]
    if len(spares) < n - a.raid_disks:
        return (
            1,
            "",
            (
                f"mdadm: Need {n - a.raid_disks} spare(s) to grow {pos[0]} to {n} devices, "
                f"have {len(spares)}: --add them first\n"
            ),
        )
    for k, sp in enumerate(spares[: n - a.raid_disks]):
        sp.slot = a.raid_disks + k
    if a.level == "raid1":
        a.raid_disks = n
        st.maybe_start_recovery(a)
        st.touch()
        return 0, "", f"raid_disks for {pos[0]} set to {n}\n"
    st.start_sync(a, "reshape", reshape_to=n)
    return 0, "", ""


# ---- wipefs -------------------------------------------------------------------------------
def wipefs(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    flags = {"a": "all", "n": "no-act", "f": "force", "q": "quiet", "J": "json", "all": "all",
             "no-act": "no-act", "force": "force", "quiet": "quiet", "json": "json"}  # fmt: skip
    parsed = split_opts(list(args), {"t": "types", "o": "offset"}, flags)
    if isinstance(parsed, str):
        return 1, "", f"wipefs: {parsed}\n"
    opts, pos = parsed
    keys = {k for k, _ in opts}
    if not pos:
        return 1, "", "wipefs: no device specified\n"
    out = ""
    for p in pos:
        dev = resolve(st, p)
        if dev is None:
            return (
                1,
                out,
                f"wipefs: error: {p}: probing initialization failed: No such file or directory\n",
            )
        sigs = signatures(st, dev)
        if "all" not in keys or "no-act" in keys:
            if "all" in keys:
                for off, typ, _u, _l in sigs:
                    out += f"{p}: {_sig_len(typ)} bytes were erased at offset {off} ({typ}): {_sig_magic(typ)}\n"
            elif sigs and "json" in keys:
                out += _wipefs_json(dev, sigs)
            elif sigs:
                short = dev
                out += (
                    "DEVICE OFFSET TYPE              UUID                                 LABEL\n"
                )
                for off, typ, uuid, label in sigs:
                    out += f"{short:<6} {off:<6} {typ:<17} {uuid:<36} {label}\n"
            continue
        if busy_reason(st, dev) and "force" not in keys:
            return (
                1,
                out,
                f"wipefs: error: {p}: probing initialization failed: Device or resource busy\n",
            )
        for off, typ, _u, _l in sigs:
            out += f"{p}: {_sig_len(typ)} bytes were erased at offset {off} ({typ}): {_sig_magic(typ)}\n"
        st.md_superblocks.pop(dev, None)
        st.filesystems.pop(dev, None)
        st.pvs.pop(dev, None)
        d = st.disks.get(dev)
        if d is not None and d.partition_table:
            d.partition_table = None
            d.ptuuid = None
            for pn in [n for n, p_ in st.partitions.items() if p_.disk == dev]:
                del st.partitions[pn]
            out += f"{p}: calling ioctl to re-read partition table: Success\n"
        st.touch()
    return 0, out, ""


def _wipefs_json(dev: str, sigs: list[tuple[str, str, str, str]]) -> str:
    """``wipefs --json``'s shape (util-linux): one object per signature, empty fields as null;
    with no signatures wipefs prints nothing at all."""
    rows = [
        {"device": dev, "offset": off, "type": typ, "uuid": uuid or None, "label": label or None}
        for off, typ, uuid, label in sigs
    ]
    return json.dumps({"signatures": rows}, indent=3) + "\n"


def _sig_len(typ: str) -> int:
    return {"linux_raid_member": 4, "LVM2_member": 8, "ext4": 2, "xfs": 4, "gpt": 8,
            "PMBR": 2, "vfat": 8, "swap": 10, "isw_raid_member": 32}.get(typ, 4)  # fmt: skip


def _sig_magic(typ: str) -> str:
    return {"linux_raid_member": "fc 4e 2b a9", "LVM2_member": "4c 56 4d 32 20 30 30 31",
            "ext4": "53 ef", "xfs": "58 46 53 42", "gpt": "45 46 49 20 50 41 52 54",
            "PMBR": "55 aa"}.get(typ, "00 00 00 00")  # fmt: skip


# ---- LVM ----------------------------------------------------------------------------------
def pvcreate(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(list(args), {"dataalignment": "dataalignment", "metadatasize": "metadatasize"},
                        {"f": "force", "y": "yes", "v": "verbose", "q": "quiet"})  # fmt: skip
    if isinstance(parsed, str):
        return 3, "", f"  {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if not pos:
        return 3, "", "  Please enter a physical volume path.\n"
    out = ""
    for p in pos:
        dev = resolve(st, p)
        if dev is None:
            return 5, out, f"  No device found for {p}.\n"
        if dev in st.pvs:
            return (
                5,
                out,
                f'  Can\'t initialize physical volume "{p}" of volume group "{st.pvs[dev].vg}" without -ff\n'
                if st.pvs[dev].vg
                else f'  Physical volume "{p}" already exists\n',
            )
        if busy_reason(st, dev):
            return 5, out, f"  Cannot use {p}: device is in use ({busy_reason(st, dev)})\n"
        sigs = [s for s in signatures(st, dev) if s[1] not in ("PMBR",)]
        if (
            sigs
            and "force" not in od
            and "yes" not in od
            and not (stdin or "").strip().lower().startswith("y")
        ):
            return (
                5,
                f"WARNING: {sigs[0][1]} signature detected on {p} at offset {int(sigs[0][0], 16)}. Wipe it? [y/n]: [n]\n",
                f"  Aborted wiping of {sigs[0][1]}.\n  1 existing signature left on the device.\n",
            )
        st.filesystems.pop(dev, None)
        st.md_superblocks.pop(dev, None)
        align = 1 << 20
        if od.get("dataalignment"):
            align = parse_size(str(od["dataalignment"]), "k") or align
        else:
            _mn, opt = io_hints(st, dev)
            if opt:
                align = math.lcm(align, opt) if (1 << 20) % opt else align
                if opt > (1 << 20):
                    align = opt
        size = st.device_size(dev) or 0
        st.pvs[dev] = SimPV(dev, None, size, st.new_uuid("pv" + dev), pe_start=align)
        st.touch()
        out += f'  Physical volume "{p}" successfully created.\n'
    return 0, out, ""


def vgcreate(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(list(args), {"s": "physicalextentsize", "physicalextentsize": "physicalextentsize"},
                        {"y": "yes", "f": "force", "v": "verbose"})  # fmt: skip
    if isinstance(parsed, str):
        return 3, "", f"  {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if len(pos) < 2:
        return 3, "", "  Please enter a volume group name and physical volumes.\n"
    vg = pos[0]
    if not re.fullmatch(r"[A-Za-z0-9+_.][A-Za-z0-9+_.-]*", vg):
        return 3, "", f'  Volume group name "{vg}" has invalid characters.\n'
    if vg in st.vgs:
        return 5, "", f"  A volume group called {vg} already exists.\n"
    ext = 4 << 20
    if od.get("physicalextentsize"):
        e = parse_size(str(od["physicalextentsize"]), "m")
        if e is None or e < 4096 or e & (e - 1):
            return 3, "", f"  Invalid physical extent size {od['physicalextentsize']}\n"
        ext = e
    devs = []
    out = ""
    for p in pos[1:]:
        dev = resolve(st, p)
        if dev is None:
            return 5, "", f"  No device found for {p}.\n"
        if dev in st.pvs and st.pvs[dev].vg:
            return 5, "", f"  Physical volume '{p}' is already in volume group '{st.pvs[dev].vg}'\n"
        devs.append((p, dev))
    for p, dev in devs:
        if dev not in st.pvs:
            rc, o, perr = pvcreate(st, [p], stdin)
            if rc:
                return rc, out + o, perr
            out += o
    st.vgs[vg] = SimVG(vg, st.new_uuid("vg" + vg), ext)
    for _p, dev in devs:
        st.pvs[dev].vg = vg
    st.touch()
    return 0, out + f'  Volume group "{vg}" successfully created\n', ""


def vg_free_extents(st: SimState, vg: str) -> int:
    v = st.vgs[vg]
    total = sum(
        (pv.size_bytes - pv.pe_start) // v.extent_size for pv in st.pvs.values() if pv.vg == vg
    )
    used = sum(-(-lv.size_bytes // v.extent_size) for lv in st.lvs.values() if lv.vg == vg)
    return total - used


def lvcreate(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(
        list(args),
        {"L": "size", "size": "size", "l": "extents", "extents": "extents", "n": "name",
         "name": "name", "i": "stripes", "stripes": "stripes", "I": "stripesize",
         "stripesize": "stripesize", "type": "type"},
        {"y": "yes", "W": "wipesignatures", "Z": "zero", "a": "activate", "v": "verbose"},
    )  # fmt: skip
    if isinstance(parsed, str):
        return 3, "", f"  {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if not pos:
        return 3, "", "  Please provide a volume group name\n"
    vg = pos[0].split("/")[0]
    if vg not in st.vgs:
        return 5, "", f'  Volume group "{vg}" not found\n  Cannot process volume group {vg}\n'
    name = od.get("name")
    if not name:
        k = 0
        while f"{vg}/lvol{k}" in st.lvs:
            k += 1
        name = f"lvol{k}"
    if f"{vg}/{name}" in st.lvs:
        return 5, "", f'  Logical Volume "{name}" already exists in volume group "{vg}"\n'
    v = st.vgs[vg]
    free = vg_free_extents(st, vg)
    if (od.get("size") is None) == (od.get("extents") is None):
        return 3, "", "  Please specify either size or extents but not both.\n"
    if od.get("size") is not None:
        sz = parse_size(str(od["size"]), "m")
        if sz is None or sz <= 0:
            return 3, "", f"  Invalid argument for --size: {od['size']}\n"
        extents = -(-sz // v.extent_size)
    else:
        text = str(od["extents"])
        m = re.fullmatch(r"(\d+)(?:%(FREE|VG|PVS))?", text, re.IGNORECASE)
        if not m:
            return 3, "", f"  Invalid argument for --extents: {text}\n"
        num = int(m.group(1))
        if m.group(2):
            base = (
                free
                if m.group(2).upper() == "FREE"
                else free
                + sum(-(-lv.size_bytes // v.extent_size) for lv in st.lvs.values() if lv.vg == vg)
            )
            extents = base * num // 100
        else:
            extents = num
    if extents <= 0 or extents > free:
        return (
            5,
            "",
            f'  Volume group "{vg}" has insufficient free space ({free} extents): {extents} required.\n',
        )
    pvs = [pv.device for pv in st.pvs.values() if pv.vg == vg]
    try:
        stripes = int(str(od["stripes"])) if od.get("stripes") else None
    except ValueError:
        return 3, "", f"  Invalid argument for --stripes: {od['stripes']}\n"
    stripe_size = parse_size(str(od["stripesize"]), "k") if od.get("stripesize") else None
    if stripes and stripes > len(pvs):
        return (
            5,
            "",
            f"  Number of stripes ({stripes}) must not exceed number of physical volumes ({len(pvs)})\n",
        )
    devices = tuple(pvs[:stripes]) if stripes else (pvs[0],)
    lv = SimLV(name, vg, extents * v.extent_size, st.next_dm(), st.new_uuid("lv" + name), devices,
               segtype="striped" if stripes and stripes > 1 else "linear", stripes=stripes,
               stripe_size=(stripe_size or 64 * 1024) if stripes else None)  # fmt: skip
    st.lvs[f"{vg}/{name}"] = lv
    st.touch()
    return 0, f'  Logical volume "{name}" created.\n', ""


def lvm_config(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    known = {
        "devices/md_component_detection": "1", "devices/md_chunk_alignment": "1",
        "devices/data_alignment_detection": "1", "devices/data_alignment": "0",
        "devices/data_alignment_offset_detection": "1", "devices/issue_discards": "0",
        "allocation/raid_stripe_all_devices": "0", "activation/raid_region_size": "2048",
        "devices/default_data_alignment": "1",
    }  # fmt: skip
    if not args or args[0] not in ("config", "dumpconfig"):
        return 3, "", f"  lvm: unsupported command in the simulation: {' '.join(args)}\n"
    keys = [a for a in args[1:] if not a.startswith("-") and "/" in a]
    if not keys:
        return 0, "".join(f"{k}={v}\n" for k, v in known.items()), ""
    out = ""
    for k in keys:
        if k not in known:
            return 5, out, f"  Configuration node {k} not found\n"
        out += f"{k.split('/')[-1]}={known[k]}\n"
    return 0, out, ""


# ---- filesystems --------------------------------------------------------------------------
def fs_target_check(st: SimState, p: str, prog: str) -> tuple[str | None, Result | None]:
    dev = resolve(st, p)
    if dev is None:
        return None, (1, "", f"{prog}: The file {p} does not exist and no size was specified.\n")
    fs = st.filesystems.get(dev)
    if fs is not None and fs.mountpoints:
        return None, (1, "", f"{p} is mounted; will not make a filesystem here!\n")
    if any(a.member(dev) is not None for a in st.arrays.values()) or dev in st.pvs:
        return None, (
            1,
            "",
            f"{p} is apparently in use by the system; will not make a filesystem here!\n",
        )
    d = st.disks.get(dev)
    if d is not None and any(p_.disk == dev for p_ in st.partitions.values()):
        return None, (
            1,
            "",
            f"{p} is apparently in use by the system; will not make a filesystem here!\n",
        )
    return dev, None


def _e2fs_counter(label: str, total: int) -> str:
    """A phase as mke2fs writes it (e2fsprogs lib/ext2fs/progress.c): the label, "done/total"
    redrawn in place with backspaces, blanked, then "done"."""
    w = len(str(total))
    back = "\b" * (2 * w + 1)
    steps = sorted({0, total // 4, total // 2, 3 * total // 4})
    redraws = "".join(f"{i:>{w}}/{total:>{w}}{back}" for i in steps)
    return f"{label}: {redraws}{' ' * (2 * w + 1)}{back}done                            \n"


def mkfs_ext4(st: SimState, args: Sequence[str], stdin: str | None, fstype: str = "ext4") -> Result:
    parsed = split_opts(list(args), {"E": "extended", "b": "blocksize", "L": "label", "m": "reserved",
                                     "t": "type", "T": "usage", "O": "features", "i": "inode"},
                        {"F": "force", "q": "quiet", "v": "verbose", "n": "noaction"})  # fmt: skip
    if isinstance(parsed, str):
        return 1, "", f"mke2fs: {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if len(pos) != 1:
        return (
            1,
            "",
            "Usage: mkfs.ext4 [-c|-l filename] [-b block-size] ... device [blocks-count]\n",
        )
    dev, err = fs_target_check(st, pos[0], "mke2fs")
    if err is not None or dev is None:
        return err or (1, "", "")
    bs = 4096
    if od.get("blocksize"):
        try:
            bs = int(str(od["blocksize"]))
        except ValueError:
            return 1, "", f"mke2fs: invalid block size - {od['blocksize']}\n"
        if bs not in (1024, 2048, 4096, 65536):
            return 1, "", f"mke2fs: invalid block size - {bs}\n"
    mn, opt = io_hints(st, dev)
    stride = mn // bs if mn > 512 and mn >= bs else None
    width = opt // bs if opt and opt >= bs else None
    if od.get("extended"):
        for part in str(od["extended"]).split(","):
            k, _, v = part.partition("=")
            if k in ("stride", "stripe_width", "stripe-width"):
                if not v.isdigit():
                    return 1, "", f"\nBad option(s) specified: {part}\n"
                if k == "stride":
                    stride = int(v)
                else:
                    width = int(v)
            elif k not in (
                "lazy_itable_init",
                "lazy_journal_init",
                "nodiscard",
                "discard",
                "root_owner",
            ):
                return 1, "", f"\nBad option(s) specified: {k}\n"
    old = st.filesystems.get(dev)
    if old is not None and "force" not in od and not (stdin or "").strip().lower().startswith("y"):
        return 1, f"{pos[0]} contains a {old.fstype} file system\nProceed anyway? (y,N) ", ""
    if "noaction" in od:
        return 0, "", ""
    size = st.device_size(dev) or 0
    blocks = size // bs
    fs = SimFS(dev, fstype, st.new_uuid("fs" + dev), blocks * bs, label=od.get("label"),
               used_bytes=min(blocks * bs, 16 << 20) + blocks * bs // 64, block_size=bs,
               stride=stride, stripe_width=width, created_at=st.t)  # fmt: skip
    st.filesystems[dev] = fs
    st.md_superblocks.pop(dev, None)
    st.touch()
    out = f"Creating filesystem with {blocks} {bs // 1024}k blocks and {blocks // 4} inodes\n"
    out += f"Filesystem UUID: {fs.uuid}\n"
    if stride or width:
        out = f"Stride={stride or 0} blocks, Stripe width={width or 0} blocks\n" + out
    out = "Discarding device blocks: done\n" + out
    groups = max(1, -(-blocks // (8 * bs)))  # one block group per 8 × block-size blocks
    out += _e2fs_counter("Allocating group tables", groups)
    out += _e2fs_counter("Writing inode tables", groups)
    out += "Creating journal (262144 blocks): done\nWriting superblocks and filesystem accounting information: done\n\n"
    return 0, out if "quiet" not in od else "", f"{E2FS_VERSION}\n" if "quiet" not in od else ""


def mkfs_xfs(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(list(args), {"d": "data", "L": "label", "b": "block", "l": "log",
                                     "m": "meta", "i": "inode", "s": "sector"},
                        {"f": "force", "q": "quiet", "K": "nodiscard"})  # fmt: skip
    if isinstance(parsed, str):
        return 1, "", f"mkfs.xfs: {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if len(pos) != 1:
        return 1, "", "mkfs.xfs: no device name given in argument list\n"
    dev, err = fs_target_check(st, pos[0], "mkfs.xfs")
    if err is not None or dev is None:
        return err or (1, "", "")
    mn, opt = io_hints(st, dev)
    su: int | None = mn if mn > 4096 else None
    sw_bytes: int | None = opt if su and opt else None
    if od.get("data"):
        vals: dict[str, str] = {}
        for part in str(od["data"]).split(","):
            k, _, v = part.partition("=")
            vals[k] = v
        if "su" in vals or "sw" in vals:
            s = parse_size(vals.get("su", ""), "b")
            if s is None or not vals.get("sw", "").isdigit():
                return 1, "", "mkfs.xfs: both data su and data sw options must be specified\n"
            su, sw_bytes = s, s * int(vals["sw"])
    old = st.filesystems.get(dev)
    if old is not None and "force" not in od:
        return (
            1,
            "",
            (
                f"mkfs.xfs: {pos[0]} appears to contain an existing filesystem ({old.fstype}).\n"
                "mkfs.xfs: Use the -f option to force overwrite.\n"
            ),
        )
    size = st.device_size(dev) or 0
    fs = SimFS(dev, "xfs", st.new_uuid("xfs" + dev), size // 4096 * 4096, label=od.get("label"),
               used_bytes=size // 200, block_size=4096, sunit_bytes=su, swidth_bytes=sw_bytes,
               created_at=st.t)  # fmt: skip
    st.filesystems[dev] = fs
    st.touch()
    return 0, xfs_info_text(pos[0], fs), ""


def xfs_info_text(name: str, fs: SimFS) -> str:
    bs = fs.block_size
    blocks = fs.size_bytes // bs
    agcount = max(4, min(64, blocks // (1 << 18) or 4))
    su = (fs.sunit_bytes or 0) // bs
    sw = (fs.swidth_bytes or 0) // bs
    return (
        f"meta-data={name:<22} isize=512    agcount={agcount}, agsize={blocks // agcount} blks\n"
        "         =                       sectsz=512   attr=2, projid32bit=1\n"
        "         =                       crc=1        finobt=1, sparse=1, rmapbt=0\n"
        "         =                       reflink=1    bigtime=1 inobtcount=1 nrext64=0\n"
        f"data     =                       bsize={bs}   blocks={blocks}, imaxpct=25\n"
        f"         =                       sunit={su}    swidth={sw} blks\n"
        "naming   =version 2              bsize=4096   ascii-ci=0, ftype=1\n"
        "log      =internal log           bsize=4096   blocks=16384, version=2\n"
        f"         =                       sectsz=512   sunit={su} blks, lazy-count=1\n"
        "realtime =none                   extsz=4096   blocks=0, rtextents=0\n"
    )


def xfs_info(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    if len(args) != 1:
        return 1, "", "Usage: xfs_info [-V] [-t mtab] [mountpoint|device|file]\n"
    target = args[0]
    dev = resolve(st, target)
    if dev is None:
        for f in st.filesystems.values():
            if target in f.mountpoints:
                dev = f.device
    fs = st.filesystems.get(dev) if dev else None
    if fs is None or fs.fstype != "xfs":
        return (
            1,
            "",
            f"xfs_info: {target} is not a valid XFS filesystem (unexpected SB magic number 0x00000000)\n",
        )
    return 0, xfs_info_text(f"/dev/{dev}", fs), ""


def tune2fs(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(list(args), {"E": "extended", "L": "label", "m": "reserved", "O": "features"},
                        {"l": "list"})  # fmt: skip
    if isinstance(parsed, str):
        return 1, "", f"tune2fs: {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if len(pos) != 1:
        return 1, "", "Usage: tune2fs [-c max_mounts_count] [-e errors_behavior] ... device\n"
    dev = resolve(st, pos[0])
    fs = st.filesystems.get(dev) if dev else None
    head = "tune2fs 1.47.0 (5-Feb-2023)\n"
    if fs is None or fs.fstype not in ("ext2", "ext3", "ext4"):
        return (
            1,
            head,
            (
                f"tune2fs: Bad magic number in super-block while trying to open {pos[0]}\n"
                f"{pos[0]} contains {'a ' + fs.fstype + ' file system' if fs else 'no ext2/3/4 file system'}\n"
            ),
        )
    out = head
    if od.get("extended"):
        for part in str(od["extended"]).split(","):
            k, _, v = part.partition("=")
            if k in ("stride", "stripe_width", "stripe-width") and v.isdigit():
                if k == "stride":
                    fs.stride = int(v)
                    out += f"Setting stride size to {v}\n"
                else:
                    fs.stripe_width = int(v)
                    out += f"Setting stripe width to {v}\n"
            else:
                return (
                    1,
                    out,
                    "\nBad options specified.\n\nExtended options are separated by commas, ...\n",
                )
        st.touch()
    if od.get("label") is not None:
        fs.label = od["label"]
        st.touch()
    if "list" in od:
        out += tune2fs_list(st, fs)
    return 0, out, ""


def tune2fs_list(st: SimState, fs: SimFS) -> str:
    bs = fs.block_size
    blocks = fs.size_bytes // bs
    inodes = blocks // 4
    free = (fs.size_bytes - (fs.used_bytes or 0)) // bs
    rows = [
        ("Filesystem volume name", fs.label or "<none>"),
        ("Last mounted on", fs.mountpoints[0] if fs.mountpoints else "<not available>"),
        ("Filesystem UUID", fs.uuid),
        ("Filesystem magic number", "0xEF53"),
        ("Filesystem revision #", "1 (dynamic)"),
        (
            "Filesystem features",
            "has_journal ext_attr resize_inode dir_index filetype needs_recovery extent 64bit flex_bg sparse_super large_file huge_file dir_nlink extra_isize metadata_csum",
        ),
        ("Filesystem flags", "signed_directory_hash "),
        ("Default mount options", "user_xattr acl"),
        ("Filesystem state", "clean"),
        ("Errors behavior", "Continue"),
        ("Filesystem OS type", "Linux"),
        ("Inode count", str(inodes)),
        ("Block count", str(blocks)),
        ("Reserved block count", str(blocks // 20)),
        ("Free blocks", str(free)),
        ("Free inodes", str(inodes - 11)),
        ("First block", "0"),
        ("Block size", str(bs)),
        ("Fragment size", str(bs)),
        ("Group descriptor size", "64"),
        ("Blocks per group", "32768"),
        ("Inodes per group", "8192"),
    ]
    if fs.stride:
        rows.append(("RAID stride", str(fs.stride)))
    if fs.stripe_width:
        rows.append(("RAID stripe width", str(fs.stripe_width)))
    rows += [
        ("Flex block group size", "16"),
        ("Reserved blocks uid", "0 (user root)"),
        ("Reserved blocks gid", "0 (group root)"),
        ("First inode", "11"),
        ("Inode size", "256"),
        ("Journal inode", "8"),
        ("Default directory hash", "half_md4"),
        ("Journal backup", "inode blocks"),
        ("Checksum type", "crc32c"),
    ]
    return "".join(f"{(k + ':'):<26}{v}\n" for k, v in rows)


# ---- sysfs, sysctl, misc ------------------------------------------------------------------
def tee(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    paths = [a for a in args if not a.startswith("-")]
    append = "-a" in args or "--append" in args
    data = stdin or ""
    if not paths:
        return 0, data, ""
    for p in paths:
        try:
            if append and p.startswith("/etc/"):
                old = read_path(st, p) or ""
                write_path(st, p, old + data)
            else:
                write_path(st, p, data)
        except WriteError as e:
            return 1, data, f"tee: {p}: {e}\n"
    return 0, data, ""


SYSCTL_KEYS = {"dev.raid.speed_limit_min", "dev.raid.speed_limit_max"}


def sysctl(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    quiet_value = "-n" in args
    write = "-w" in args
    rest = [a for a in args if a not in ("-n", "-w", "-q")]
    if not rest:
        return 255, "", "sysctl: no variables specified\n"
    out = ""
    for item in rest:
        key, eq, val = item.partition("=")
        key = key.replace("/", ".")
        if key not in SYSCTL_KEYS:
            return (
                255,
                out,
                f"sysctl: cannot stat /proc/sys/{key.replace('.', '/')}: No such file or directory\n",
            )
        if eq or write:
            if not eq:
                return 255, out, f'sysctl: "{item}" must be of the form name=value\n'
            try:
                write_path(st, f"/proc/sys/{key.replace('.', '/')}", val)
            except WriteError as e:
                return 255, out, f'sysctl: setting key "{key}": {e}\n'
        value = st.speed_limit_min if key.endswith("min") else st.speed_limit_max
        out += f"{value}\n" if quiet_value else f"{key} = {value}\n"
    return 0, out, ""


def smartctl(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    devs = [a for a in args if a.startswith("/dev/")]
    if not devs:
        return 1, "", "smartctl: no device given\n"
    dev = resolve(st, devs[0])
    if dev is None or dev not in st.disks:
        return 2, "", f"Smartctl open device: {devs[0]} failed: No such device\n"
    d = st.disks[dev]
    r = build_smart(st, d)
    as_json = "-j" in args or "--json" in args
    doc: dict[str, object] = {
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 3], "exit_status": 0},
        "device": {"name": devs[0], "type": "sat" if d.transport != "nvme" else "nvme",
                   "protocol": r.protocol or "ATA"},
        "model_name": d.model,
        "serial_number": d.serial,
        "user_capacity": {"bytes": d.size_bytes},
        "logical_block_size": d.logical,
        "rotation_rate": 7200 if d.rotational else 0,
    }  # fmt: skip
    if not r.available:
        msg = f"{devs[0]}: Unknown USB bridge [0x152d:0x0578 (0x214)]\nPlease specify device type with the -d option."
        doc["smartctl"] = {"version": [7, 3], "exit_status": 1,
                           "messages": [{"string": msg, "severity": "error"}]}  # fmt: skip
        return 1, json.dumps(doc, indent=2) + "\n" if as_json else msg + "\n", ""
    c = smart_counters(st, d)
    doc["smart_status"] = {"passed": r.health == "PASSED"}
    doc["temperature"] = {"current": r.temperature_c}
    doc["power_on_time"] = {"hours": r.power_on_hours}
    if r.protocol == "NVMe":
        doc["nvme_smart_health_information_log"] = dict(r.nvme)
    else:
        doc["ata_smart_attributes"] = {
            "revision": 1,
            "table": [
                {"id": at.id, "name": at.name, "value": at.value, "worst": at.worst,
                 "thresh": at.thresh, "raw": {"value": at.raw, "string": at.raw_string},
                 "flags": {"prefailure": bool(at.prefail)}}
                for at in r.attributes
            ],
        }  # fmt: skip
    del c
    status = 0 if r.health == "PASSED" else 8
    doc["smartctl"] = {"version": [7, 3], "exit_status": status}
    if as_json:
        return status, json.dumps(doc, indent=2) + "\n", ""
    lines = [f"Device Model:     {d.model}", f"Serial Number:    {d.serial}",
             f"SMART overall-health self-assessment test result: {r.health}"]  # fmt: skip
    for at in r.attributes:
        lines.append(
            f"{at.id:3d} {at.name:<23} {at.value:03d}   {at.worst:03d}   {at.thresh:03d}    {at.raw_string}"
        )
    return status, "\n".join(lines) + "\n", ""


def mount(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    pos = [a for a in args if not a.startswith("-")]
    if len(pos) != 2:
        return 1, "", "mount: bad usage\n"
    dev = resolve(st, pos[0])
    fs = st.filesystems.get(dev) if dev else None
    if fs is None:
        return 32, "", f"mount: {pos[1]}: wrong fs type, bad option, bad superblock on {pos[0]}.\n"
    if pos[1] in fs.mountpoints:
        return 32, "", f"mount: {pos[1]}: {pos[0]} already mounted on {pos[1]}.\n"
    fs.mountpoints = (*fs.mountpoints, pos[1])
    st.touch()
    return 0, "", ""


def umount(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    for target in (a for a in args if not a.startswith("-")):
        dev = resolve(st, target)
        for fs in st.filesystems.values():
            if fs.device == dev or target in fs.mountpoints:
                if not fs.mountpoints:
                    break
                fs.mountpoints = ()
                st.touch()
                break
        else:
            return 32, "", f"umount: {target}: not mounted.\n"
    return 0, "", ""


def systemctl(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    if len(args) >= 2 and args[0] == "is-active":
        active = {"fstrim.timer", "mdmonitor.service", "mdmonitor", "lvm2-monitor.service"}
        return (0, "active\n", "") if args[1] in active else (3, "inactive\n", "")
    if len(args) >= 2 and args[0] in ("is-enabled",):
        return (0, "enabled\n", "") if args[1] == "fstrim.timer" else (1, "disabled\n", "")
    if args and args[0] in ("start", "enable", "restart", "daemon-reload"):
        return 0, "", ""
    return 1, "", f"systemctl: command {' '.join(args)} is not simulated\n"


def cat(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    out = ""
    for p in args:
        t = read_path(st, p)
        if t is None:
            return 1, out, f"cat: {p}: No such file or directory\n"
        out += t
    return 0, out, ""


def noop(message: str = "") -> Callable[[SimState, Sequence[str], str | None], Result]:
    def run(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
        return 0, message, ""

    return run


HANDLERS: dict[str, Callable[[SimState, Sequence[str], str | None], Result]] = {
    "mdadm": mdadm,
    "wipefs": wipefs,
    "pvcreate": pvcreate,
    "vgcreate": vgcreate,
    "lvcreate": lvcreate,
    "lvm": lvm_config,
    "mkfs.ext4": mkfs_ext4,
    "mkfs.xfs": mkfs_xfs,
    "tune2fs": tune2fs,
    "xfs_info": xfs_info,
    "tee": tee,
    "sysctl": sysctl,
    "smartctl": smartctl_tests.smartctl,
    "journalctl": kernel_log.journalctl,
    "dmesg": kernel_log.dmesg,
    "mount": mount,
    "umount": umount,
    "systemctl": systemctl,
    "cat": cat,
    "update-initramfs": noop("update-initramfs: Generating /boot/initrd.img-6.1.0-18-amd64\n"),
    "udevadm": noop(),
    "partprobe": noop(),
    "sync": noop(),
}


def dispatch(st: SimState, argv: Sequence[str], stdin: str | None) -> Result:
    if not argv:
        return 127, "", "demo: empty command\n"
    prog = argv[0].rsplit("/", 1)[-1]
    handler = HANDLERS.get(prog)
    if handler is None:
        return 127, "", f"demo: {argv[0]}: command not found (not simulated)\n"
    return handler(st, list(argv[1:]), stdin)


__all__ = ["dispatch", "layout_number", "resolve"]
