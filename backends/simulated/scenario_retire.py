"""Scenario ``retire``: an array's later life, for the member superblocks and the lifecycle plans.

* md0: a RAID-1 of two 850 EVO partitions (sda1, sdb1) with an internal bitmap; sdb1 was failed
  and removed two hours ago and still carries md0's superblock, its events behind the array's
  (the simulator's events model: backends/simulated/programs/lifecycle.py): re-add or add;
* sdc1 carries the superblock of an older array ("oldhost:backup", RAID-1 of sdc1 and a disk long
  gone) that is not assembled: listed as a stray superblock, with an assemble plan;
* sdd: a blank disk to prepare.
"""

from __future__ import annotations

from backends.simulated.records import SimArray
from backends.simulated.scenario_parts import (
    GPT_RAID,
    add_array,
    add_partition,
    evo850,
    finalize,
    members,
    new_state,
)
from backends.simulated.state import SimState

COMPONENT_KIB = 400 * 1024 * 1024  # 400 GiB per member
REMOVED_S = 7200.0  # sdb1 left two hours ago


def retire(t: float) -> SimState:
    st = new_state("shelf", t)
    for i, dn in enumerate(("sda", "sdb", "sdc", "sdd")):
        d = evo850(dn, f"S2RBNX0H7000{i:02d}A", 300_000_000 + i * 1_000_000)
        d.ptuuid = st.new_uuid(dn)
        st.disks[dn] = d
        if dn != "sdd":
            add_partition(st, dn, 1, 2048, COMPONENT_KIB * 2 + 262144, GPT_RAID, "Linux RAID")
        else:
            d.partition_table = None
            d.ptuuid = None
    mem = members(["sda1", "sdb1"])
    a = add_array(
        st,
        SimArray(
            name="md0",
            level="raid1",
            raid_disks=2,
            members=mem[:1],
            component_kib=COMPONENT_KIB,
            chunk_kib=0,
            array_name="shelf:0",
            bitmap="internal",
            array_state="clean",
        ),
    )
    a.removed["sdb1"] = (t - REMOVED_S, 1)
    st.md_superblocks["sdb1"] = (a.uuid, a.array_name or "")
    old = SimArray(
        name="md1",
        level="raid1",
        raid_disks=2,
        members=members(["sdc1"]),
        component_kib=COMPONENT_KIB,
        chunk_kib=0,
        array_name="oldhost:backup",
        uuid=st.new_uuid("oldhost"),
        bitmap="internal",
        creation_time=t - 86400 * 400,
    )
    st.stopped_arrays[old.uuid] = old
    st.md_superblocks["sdc1"] = (old.uuid, old.array_name or "")
    st.events.clear()
    # what md said as sdb1 was failed and removed (raid1.c raid1_error(); md.c unbind_rdev)
    st.kernel_lines.extend(
        [
            (t - REMOVED_S, "md/raid1:md0: Disk failure on sdb1, disabling device."),
            (t - REMOVED_S, "md/raid1:md0: Operation continuing on 1 devices."),
            (t - REMOVED_S + 20, "md: unbind<sdb1>"),
            (t - REMOVED_S + 20, "md: export_rdev(sdb1)"),
        ]
    )
    return finalize(st)
