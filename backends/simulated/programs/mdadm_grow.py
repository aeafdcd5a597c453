"""``mdadm --grow``: a bitmap added or removed, members added (a reshape), the chunk changed,
and the level changes md makes in place (RAID-1 -> 5, RAID-5 -> 6, RAID-6 -> 5), as the VM
walk saw them (tests/fixtures/md_kinds/walk.json, compared by tests/simulated/
test_md_kinds_sim.py)."""

from __future__ import annotations

from app.model import levels, md_names
from backends.simulated.programs.argv import Result, parse_size
from backends.simulated.programs.devices import resolve
from backends.simulated.records import ReshapeFrom, SimArray, SimMember
from backends.simulated.state import SimState

TAKEOVER_CHUNK_SECTORS = 128  # raid5.c raid5_takeover_raid1: 64 KiB, halved until it divides


def md_grow(st: SimState, od: dict[str, str | None], pos: list[str]) -> Result:
    if not pos:
        return 2, "", "mdadm: no array given for --grow\n"
    dev = resolve(st, pos[0])
    if dev is None or dev not in st.arrays:
        return 1, "", f"mdadm: Cannot open {pos[0]}: No such file or directory\n"
    a = st.arrays[dev]
    if od.get("bitmap") is not None:
        return _bitmap(st, a, str(od["bitmap"]), pos[0])
    level = (
        md_names.MDADM_LEVELS.get(str(od.get("level") or "").lower()) if od.get("level") else None
    )
    if od.get("level") is not None and level is None:
        return 2, "", f"mdadm: invalid raid level: {od['level']}\n"
    want_n: int | None = None
    if od.get("raid-devices") is not None:
        try:
            want_n = int(str(od["raid-devices"]))
        except ValueError:
            return 2, "", f"mdadm: invalid number of raid devices: {od['raid-devices']}\n"
    if level is None and want_n is None and od.get("chunk") is None:
        return 2, "", "mdadm: no changes to --grow\n"
    if a.job is not None:
        return 1, "", f"mdadm: {pos[0]} is performing resync/recovery and cannot be reshaped\n"
    if level is not None and level != a.level:
        return _level(st, a, level, want_n, od.get("layout"), "force" in od, pos[0])
    if od.get("chunk") is not None and want_n is None:
        return _chunk(st, a, str(od["chunk"]), pos[0])
    if want_n is None:
        return 0, "", f"mdadm: {pos[0]}: no change requested\n"
    return _devices(st, a, want_n, pos[0])


def _bitmap(st: SimState, a: SimArray, want: str, name: str) -> Result:
    if want == "none":
        if a.bitmap is None:
            return 1, "", f"mdadm: no bitmap found on {name}\n"
        a.bitmap = None
    elif a.log is not None:
        return 1, "", f"mdadm: {name} has a {a.log}; cannot add a bitmap\n"
    elif want == "internal":
        if a.bitmap is not None:
            return 1, "", f"mdadm: {name} already has a bitmap ({a.bitmap})\n"
        a.bitmap = "internal"
    else:
        a.bitmap = want
    st.touch()
    return 0, "", ""


def _spares(a: SimArray) -> list[SimMember]:
    return [m for m in a.members if m.slot is None and m.state == {"spare"}]


def _devices(st: SimState, a: SimArray, n: int, name: str) -> Result:
    """More members: RAID-1 takes them as slots to recover; RAID-4/5/6/10 reshape, the added
    devices In_sync from the start (raid5.c raid5_start_reshape, raid10.c
    raid10_start_reshape: a device at or past the old raid_disks; VM: "reshape 2 -> 3
    (held)"), raid_disks reading "new (old)" and the size the old one until it ends."""
    if n == a.raid_disks:
        return 0, "", f"mdadm: {name}: no change requested\n"
    if n < a.raid_disks:
        return 1, "", "mdadm: shrinking the number of devices is not simulated\n"
    if a.level not in levels.REDUNDANT:
        return 1, "", f"mdadm: {a.level} array {name} cannot be reshaped.\n"
    spares = _spares(a)
    if len(spares) < n - a.raid_disks:
        return (
            1,
            "",
            (
                f"mdadm: Need {n - a.raid_disks} spare(s) to grow {name} to {n} devices, "
                f"have {len(spares)}: --add them first\n"
            ),
        )
    old = ReshapeFrom(a.level, a.raid_disks, a.chunk_kib, a.layout)
    for k, sp in enumerate(spares[: n - a.raid_disks]):
        sp.slot = a.raid_disks + k
        if a.level != "raid1":
            sp.state = {"in_sync"}
    if a.level == "raid1":
        a.raid_disks = n
        st.maybe_start_recovery(a)
        st.touch()
        return 0, "", f"raid_disks for {name} set to {n}\n"
    a.raid_disks = n
    st.start_sync(a, "reshape", reshape=old)
    return 0, "", ""


def _chunk(st: SimState, a: SimArray, text: str, name: str) -> Result:
    """A new chunk size: a RAID-4/5/6 restripes in place (raid5.c raid5_check_reshape; mdadm
    4.2 moves the data offset rather than asking for --backup-file: VM "chunk 64K -> 128K")."""
    sz = parse_size(text, "k")
    if sz is None or sz < 4096 or sz & (sz - 1):
        return 2, "", f"mdadm: invalid chunk/rounding value: {text}\n"
    kib = sz // 1024
    if a.level not in levels.PARITY:
        return 1, "", f"mdadm: changing the chunk of a {a.level} array is not simulated\n"
    if kib == a.chunk_kib:
        return 0, "", f"mdadm: {name}: no change requested\n"
    if a.component_kib % kib:
        return 1, "", f"mdadm: component size {a.component_kib}K is not a multiple of {kib}K\n"
    old = ReshapeFrom(a.level, a.raid_disks, a.chunk_kib, a.layout)
    a.chunk_kib = kib
    st.start_sync(a, "reshape", reshape=old)
    return 0, "", ""


def _level(
    st: SimState,
    a: SimArray,
    level: str,
    n: int | None,
    layout: str | None,
    force: bool,
    name: str,
) -> Result:
    """The level changes md makes in place (raid5.c raid5_takeover_raid1, raid6_takeover,
    raid5_takeover_raid6) and the restripes mdadm wraps around them (mdadm(8) LEVEL
    CHANGES), as the VM showed them (tests/fixtures/md_kinds/walk.json)."""
    if a.level == "raid1" and level == "raid5":
        if a.raid_disks != 2:  # raid5_takeover_raid1: -EINVAL unless two devices
            return 1, "", "mdadm: Impossibly level change request for RAID1\n"
        sectors = a.size_kib() * 2
        chunk = TAKEOVER_CHUNK_SECTORS
        while chunk and sectors & (chunk - 1):
            chunk >>= 1
        a.level, a.layout, a.chunk_kib = "raid5", md_names.PARITY_LAYOUT_NAMES[2], chunk // 2
        st.touch()
        return 0, "", f"mdadm: level of {name} changed to raid5\n"
    if a.level == "raid5" and level == "raid6":
        if n not in (None, a.raid_disks + 1):
            return 1, "", "mdadm: RAID-5 -> 6 with other than one more device is not simulated\n"
        spares = _spares(a)
        if not spares and not force:
            return (
                1,
                "",
                "mdadm: Need 1 spare to avoid degraded array, and only have 0.\n"
                "       Use --force to over-ride this check.\n",
            )
        # raid6_takeover: the RAID-5's layout with Q on a new last device (left-symmetric-6);
        # the spare takes that slot and the reshape to the standard layout rebuilds it
        six = f"{a.layout or md_names.PARITY_LAYOUT_NAMES[2]}-6"
        old = ReshapeFrom("raid6", a.raid_disks + 1, a.chunk_kib, six)
        a.level, a.raid_disks = "raid6", a.raid_disks + 1
        if spares:
            spares[0].slot = a.raid_disks - 1
        if layout == "preserve":  # no restripe: only Q to rebuild
            a.layout = six
            st.maybe_start_recovery(a)
        else:
            a.layout = layout or a.layout
            st.start_sync(a, "reshape", reshape=old)
        return 0, "", f"mdadm: level of {name} changed to raid6\n"
    if a.level == "raid6" and level == "raid5":
        if n not in (None, a.raid_disks - 1):
            return 1, "", "mdadm: RAID-6 -> 5 with other than one device fewer is not simulated\n"
        if a.degraded():
            return 1, "", f"mdadm: {name} is degraded: not simulated\n"
        # restriped to the -6 layout first; mdadm changes the level when that ends
        old = ReshapeFrom("raid6", a.raid_disks, a.chunk_kib, a.layout, level_after="raid5")
        a.layout = f"{(a.layout or md_names.PARITY_LAYOUT_NAMES[2]).removesuffix('-6')}-6"
        st.start_sync(a, "reshape", reshape=old)
        return 0, "", ""
    return 1, "", f"mdadm: {a.level} -> {level} is not simulated\n"
