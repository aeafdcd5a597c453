"""``mdadm --create``: the target name, the checks mdadm makes, the new array and its first sync."""

from __future__ import annotations

import re

from app.model import levels, md_names
from backends.simulated.programs.argv import Result, parse_size
from backends.simulated.programs.devices import busy_reason, resolve, signatures
from backends.simulated.records import SimArray, SimMember
from backends.simulated.state import SimState


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


_LOG_OPTION = {"journal": "--write-journal", "ppl": "--consistency-policy=ppl"}


def _log(
    st: SimState, od: dict[str, str | None], level: str, metadata: str
) -> tuple[str | None, str]:
    """The RAID-4/5/6 write journal (--write-journal DEV) or RAID-5 partial parity log
    (--consistency-policy=ppl) asked for: ("journal"/"ppl"/None, mdadm's refusal)."""
    policy = od.get("consistency-policy")
    if policy not in (None, "ppl", "resync", "bitmap", "journal"):
        return None, f"mdadm: Invalid consistency policy: {policy}\n"
    if od.get("write-journal") is not None:
        if level not in levels.PARITY:
            return None, "mdadm: --write-journal is only supported for RAID level 4/5/6.\n"
        return "journal", ""
    if policy == "journal":
        return None, "mdadm: --write-journal is required for consistency policy journal\n"
    if policy == "ppl":
        if level != "raid5" or not metadata.startswith("1"):
            return None, "mdadm: PPL consistency policy is only supported for RAID level 5.\n"
        return "ppl", ""
    return None, ""


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
    log, err = _log(st, od, level, metadata)
    if err:
        return 2, "", err
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
    if log is not None:  # mdadm: a journal or PPL instead of a bitmap
        if bitmap_opt not in (None, "none"):
            return 2, "", f"mdadm: --bitmap is not compatible with {_LOG_OPTION[log]}\n"
        bitmap_opt = "none"
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
        chunk_kib=chunk_kib if level not in ("raid1", "linear") else 0,
        layout=layout,
        metadata=metadata,
        array_name=arr_name,
        uuid=st.new_uuid(name),
        bitmap=bitmap,
        array_state="clean",
        creation_time=st.t,
        log=log,
    )
    a.next_desc = len(devs)
    if log == "journal":  # the journal device: role "journal" (md.c slot_show), no slot
        jdev = resolve(st, str(od["write-journal"]))
        if jdev is None or busy_reason(st, jdev) or jdev in [m.device for m in members]:
            return 1, "", f"mdadm: cannot open {od['write-journal']}: Device or resource busy\n"
        a.members.append(SimMember(jdev, len(devs), None, {"journal"}, data_offset=2048))
        a.next_desc += 1
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
