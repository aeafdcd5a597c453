"""The array's life in the simulation: ``parted``, ``mkdir``, ``mount -o``, ``cp``,
``findmnt --verify`` (``mv`` is :mod:`backends.simulated.programs.files`), and mdadm's ``--assemble`` and ``--examine`` of one device.

Events: md bumps a superblock's ``events`` on every update (drivers/md/md.c ``md_update_sb``),
which a busy array does as it goes clean and dirty. The simulation does not model individual
writes, so an array's count is its creation's plus one per ``EVENTS_EVERY_S`` seconds it has
run; a member that left (``SimArray.removed``) keeps the count of the moment it left, so it
falls behind as the array runs on without it: what ``mdadm --examine`` shows and a re-add
decides on.
"""

from __future__ import annotations

import time
from collections.abc import Sequence

from backends.simulated.programs import files
from backends.simulated.programs.devices import resolve
from backends.simulated.state import SimArray, SimFS, SimPartition, SimState

Result = tuple[int, str, str]
EVENTS_BASE = 100
EVENTS_EVERY_S = 600.0
GPT_RAID = "a19d880f-05fc-4d3b-a006-743f0f84911e"
MIB = 1024 * 1024


def array_events(a: SimArray, t: float) -> int:
    """The array's events at ``t``: its creation's, one per ``EVENTS_EVERY_S`` it ran, one per
    failure md recorded before ``t``."""
    failures = sum(1 for f in a.failures if f < t)
    return EVENTS_BASE + int(max(0.0, t - a.creation_time) // EVENTS_EVERY_S) + failures


def _resolve(st: SimState, path: str) -> str | None:
    return resolve(st, path)


def _md_uuid(uuid: str) -> str:
    h = uuid.replace("-", "").replace(":", "")
    return ":".join(h[i : i + 8] for i in range(0, 32, 8))


# ---- parted ---------------------------------------------------------------------------------
def parted(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    a = [x for x in args if x not in ("--script", "-s")]
    if a[:2] == ["--align", "optimal"]:
        a = a[2:]
    if len(a) < 3 or a[1:3] != ["mklabel", "gpt"]:
        return (
            1,
            "",
            "parted: only 'mklabel gpt [mkpart NAME START END] [set 1 raid on]' is simulated\n",
        )
    dev = _resolve(st, a[0])
    d = st.disks.get(dev or "")
    if d is None:
        return 1, "", f"Error: Could not stat device {a[0]} - No such file or directory.\n"
    if dev is not None and (
        any(p.disk == dev and st.holders(p.name) for p in st.partitions.values())
        or (st.holders(dev) and any(not h.startswith(dev) for h in st.holders(dev)))
    ):
        return 1, "", f"Error: Partition(s) on {a[0]} are being used.\n"
    for pn in [n for n, p in st.partitions.items() if p.disk == dev]:
        del st.partitions[pn]
        st.md_superblocks.pop(pn, None)
        st.filesystems.pop(pn, None)
    d.partition_table = "gpt"
    d.ptuuid = st.new_uuid(d.name)
    rest = a[3:]
    if rest[:1] == ["mkpart"] and len(rest) >= 4:
        start, end = rest[2], rest[3]
        if start != "1MiB" or not end.endswith("%"):
            return 1, "", "parted: only 1MiB..N% is simulated\n"
        lss = d.logical
        first = MIB // lss
        last_usable = d.size_bytes // lss - 34
        end_sector = min(last_usable, d.size_bytes * int(end[:-1]) // 100 // lss - 1)
        name = f"{dev}p1" if dev and dev[-1].isdigit() else f"{dev}1"
        raid = rest[4:] == ["set", "1", "raid", "on"]
        st.partitions[name] = SimPartition(
            name,
            d.name,
            1,
            first * lss // 512,
            (end_sector - first + 1) * lss,
            GPT_RAID if raid else None,
            "Linux RAID" if raid else None,
            rest[1],
            st.new_uuid(name),
        )
    st.touch()
    return 0, "", ""


# ---- files: mkdir, cp, mv, findmnt -----------------------------------------------------------
def mkdir(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    for p in (a for a in args if not a.startswith("-")):
        st.files.setdefault(f"{p.rstrip('/')}/", "")  # a directory: its path with a slash
    return 0, "", ""


def stat(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    """``stat -c '%F|%u|%a|%n' -- PATH...`` (what mount-point pre-flight asks): the simulated
    machine's directories are root's, 0755; "/" and the system's top directories exist; a path
    it does not hold is missing (exit 1, as stat says for each)."""
    if len(args) < 3 or args[0] != "-c" or args[1] != "%F|%u|%a|%n":
        return 1, "", "stat: only -c '%F|%u|%a|%n' is simulated\n"
    paths = [a for a in args[2:] if a != "--"]
    out, err = [], []
    for p in paths:
        top = p.count("/") == 1 and p[1:] in ("srv", "mnt", "media", "etc", "root", "home")
        if p == "/" or top or _is_dir(st, p):
            out.append(f"directory|0|755|{p}")
        else:
            err.append(f"stat: cannot statx '{p}': No such file or directory")
    return (1 if err else 0), "".join(x + "\n" for x in out), "".join(x + "\n" for x in err)


def _is_dir(st: SimState, path: str) -> bool:
    return f"{path.rstrip('/')}/" in st.files


def cp(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    pos = [a for a in args if not a.startswith("-")]
    if len(pos) != 2:
        return 1, "", "cp: only SRC DST is simulated\n"
    src, dst = pos
    text = files.read_file(st, src)
    if text is None:
        return 1, "", f"cp: cannot stat '{src}': No such file or directory\n"
    files.write_file(st, dst, text)
    return 0, "", ""


def findmnt(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    """``findmnt --verify [--tab-file F]``: each line parses, its source exists (UUID= of a
    filesystem the simulation has), its target is a directory, its type is the filesystem's."""
    if "--verify" not in args and "-x" not in args:
        return 1, "", "findmnt: only --verify is simulated\n"
    a = list(args)
    path = a[a.index("--tab-file") + 1] if "--tab-file" in a[:-1] else "/etc/fstab"
    text = st.files.get(path)
    if text is None:
        return 1, "", f"findmnt: {path}: parse error: No such file or directory\n"
    errors = 0
    out = ""
    for raw in text.splitlines():
        f = raw.split("#", 1)[0].split()
        if not f:
            continue
        if len(f) < 3:
            out += f"   [E] {raw}: parse error\n"
            errors += 1
            continue
        out += f"{f[1]}\n"
        spec, target, fstype = f[0], f[1], f[2]
        if spec.startswith("UUID="):
            fs = next((x for x in st.filesystems.values() if x.uuid == spec[5:]), None)
            if fs is None:
                out += f"   [E] unreachable source: {spec}: No such file or directory\n"
                errors += 1
            elif fs.fstype != fstype:
                out += f"   [E] {fstype} does not match with on-disk {fs.fstype}\n"
                errors += 1
        if target.startswith("/") and target != "/" and not _is_dir(st, target):
            out += f"   [W] target specified more than once or does not exist: {target}\n"
    out += (
        f"\n{errors} parse errors, {errors} errors, 0 warnings\n"
        if errors
        else "\nSuccess, no errors or warnings detected\n"
    )
    return (1 if errors else 0), out, ""


# ---- mount -o -------------------------------------------------------------------------------
def mount(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    a = list(args)
    if "-o" in a[:-1]:
        i = a.index("-o")
        del a[i : i + 2]
    pos = [x for x in a if not x.startswith("-")]
    if len(pos) != 2:
        return 1, "", "mount: bad usage\n"
    dev = _resolve(st, pos[0])
    fs: SimFS | None = st.filesystems.get(dev) if dev else None
    if fs is None:
        return 32, "", f"mount: {pos[1]}: wrong fs type, bad option, bad superblock on {pos[0]}.\n"
    if not _is_dir(st, pos[1]) and pos[1] not in ("/mnt", "/srv", "/home"):
        return 32, "", f"mount: {pos[1]}: mount point does not exist.\n"
    if pos[1] in fs.mountpoints:
        return 32, "", f"mount: {pos[1]}: {pos[0]} already mounted on {pos[1]}.\n"
    fs.mountpoints = (*fs.mountpoints, pos[1])
    st.touch()
    return 0, "", ""


# ---- mdadm --assemble / --examine -----------------------------------------------------------
def _carriers(st: SimState, uuid: str) -> list[str]:
    return sorted(d for d, (u, _n) in st.md_superblocks.items() if u == uuid)


def assemble(st: SimState, od: dict[str, str | None], pos: list[str], scan: bool) -> Result:
    stopped: dict[str, SimArray] = st.stopped_arrays
    if scan:
        want = list(stopped)
    else:
        u = (od.get("uuid") or "").replace(":", "").replace("-", "").lower()
        want = [k for k in stopped if k.replace("-", "").lower() == u]
        if not pos or not want:
            return 1, "", f"mdadm: {pos[0] if pos else 'array'} not identified in config file.\n"
    out = ""
    started = 0
    for uuid in want:
        a = stopped[uuid]
        have = _carriers(st, uuid)
        if not have:
            del stopped[uuid]
            continue
        name = (
            a.name
            if a.name not in st.arrays
            else next(f"md{n}" for n in range(127, -1, -1) if f"md{n}" not in st.arrays)
        )
        a.name = name
        a.members = [m for m in a.members if m.device in have]
        for m in a.members:
            st.md_superblocks.pop(m.device, None)
        a.array_state = "clean"
        st.arrays[name] = a
        del stopped[uuid]
        started += 1
        path = pos[0] if pos else f"/dev/md/{(a.array_name or name).split(':')[-1]}"
        out += f"mdadm: {path} has been started with {len(a.members)} drives.\n"
    st.touch()
    if not started:
        return 1, "", "mdadm: No arrays found in config file or automatically\n"
    return 0, "", out


def _sb(st: SimState, dev: str) -> tuple[SimArray | None, str, str, int]:
    """(the array, its uuid, name, this device's events) of the superblock on ``dev``."""
    for a in st.arrays.values():
        m = a.member(dev)
        if m is not None and not a.metadata.startswith("external:"):
            # a faulty member's superblock is the one written before it failed
            when = m.failed_at if "faulty" in m.state and m.failed_at is not None else st.t
            return a, a.uuid, a.array_name or "", array_events(a, when)
    if dev in st.md_superblocks:
        uuid, name = st.md_superblocks[dev]
        for a in st.arrays.values():
            if a.uuid == uuid and dev in a.removed:
                return a, uuid, name, array_events(a, a.removed[dev][0])
        gone = st.stopped_arrays.get(uuid)
        return gone, uuid, name, (array_events(gone, st.t) if gone is not None else EVENTS_BASE)
    return None, "", "", 0


def examine(st: SimState, path: str, export: bool) -> Result:
    dev = _resolve(st, path)
    a, uuid, name, events = _sb(st, dev or "")
    if not uuid or dev is None:
        return 1, "", f"mdadm: No md superblock detected on {path}.\n"
    level = a.level if a is not None else "raid1"
    n = a.raid_disks if a is not None else 2
    m = a.member(dev) if a is not None else None
    utime = int(st.t) if m is not None else int(st.t) - 600
    if m is not None and "faulty" in m.state and m.failed_at is not None:
        utime = int(m.failed_at)
    if export:
        return (
            0,
            (
                f"MD_LEVEL={level}\nMD_DEVICES={n}\nMD_NAME={name}\nMD_UUID={_md_uuid(uuid)}\n"
                f"MD_UPDATE_TIME={utime}\nMD_DEV_UUID={_md_uuid(st.new_uuid(dev))}\n"
                f"MD_EVENTS={events}\n"
            ),
            "",
        )
    m = a.member(dev) if a is not None else None
    role = f"Active device {m.slot}" if m is not None and m.slot is not None else "spare"
    if m is None and a is not None and dev in a.removed:
        # failed, then removed: md wrote no superblock to it after the failure, so it still
        # names the slot it had (md.c md_update_sb skips Faulty devices)
        role = f"Active device {a.removed[dev][1]}"
    bitmap = "  Internal Bitmap : 8 sectors from superblock\n" if a is not None and a.bitmap else ""
    when = time.strftime("%a %b %d %H:%M:%S %Y", time.gmtime(utime))
    return (
        0,
        (
            f"{path}:\n          Magic : a92b4efc\n        Version : 1.2\n"
            f"    Feature Map : {'0x1' if bitmap else '0x0'}\n"
            f"     Array UUID : {_md_uuid(uuid)}\n           Name : {name}\n"
            f"     Raid Level : {level}\n   Raid Devices : {n}\n\n"
            f"    Data Offset : 262144 sectors\n   Super Offset : 8 sectors\n"
            f"          State : clean\n{bitmap}"
            f"    Update Time : {when}\n  Bad Block Log : 512 entries available at offset 16 sectors\n"
            f"         Events : {events}\n\n   Device Role : {role}\n"
        ),
        "",
    )


def examine_scan(st: SimState, verbose: bool) -> Result:
    """``mdadm --examine --scan [--verbose]``: one ARRAY per superblock UUID on any device."""
    groups: dict[str, tuple[str, list[str]]] = {}
    for a in st.arrays.values():
        if a.metadata.startswith("external:") or a.level == "container":
            continue
        devs = [m.device for m in a.members]
        groups[a.uuid] = (a.array_name or "", devs)
    for d, (u, n) in sorted(st.md_superblocks.items()):
        groups.setdefault(u, (n, []))[1].append(d)
    out = ""
    for uuid, (name, devs) in groups.items():
        if not devs:
            continue
        short = name.split(":")[-1] or uuid[:8]
        out += f"ARRAY /dev/md/{short}  metadata=1.2 UUID={_md_uuid(uuid)} name={name}\n"
        if verbose:
            out += "   devices=" + ",".join(f"/dev/{d}" for d in devs) + "\n"
    return 0, out, ""


def mdadm_lifecycle(
    st: SimState, keys: list[str], od: dict[str, str | None], pos: list[str]
) -> Result:
    """mdadm's ``--assemble`` and ``--examine`` (the commands module dispatches them here)."""
    if "assemble" in keys:
        return assemble(st, od, pos, "scan" in keys)
    if "scan" in keys:
        return examine_scan(st, "verbose" in keys)
    if len(pos) != 1:
        return 2, "", "mdadm: --examine one device at a time is simulated\n"
    return examine(st, pos[0], "export" in keys)
