"""Scenario ``spare``: a disk to replace and its replacement waiting in the next bay (issue 40:
qualify, locate, replace, check, retire).

* md0: a RAID-1 of two 850 EVO partitions (sda1, sdb1), internal bitmap, ext4 on /srv/data;
  sdb counts reallocated sectors (still in sync: the hot ``--replace`` fits it);
* sdc: a new, blank 860 EVO, not yet qualified;
* the three sit in bays 0-2 of a SAS expander's enclosure (``/sys/class/enclosure/0:0:8:0``),
  so locate lights a slot's LED and a replace lights the old disk's fault LED;
* mdadm.conf names the members (``devices=``): retire takes the old one out of it.
"""

from __future__ import annotations

from backends.simulated.programs.disk_tools import add_enclosure
from backends.simulated.records import SimArray, SimFS
from backends.simulated.scenario_parts import (
    GIB,
    GPT_RAID,
    add_array,
    add_partition,
    evo850,
    finalize,
    members,
    new_state,
)
from backends.simulated.state import SimState

COMPONENT_KIB = 440 * 1024 * 1024  # 440 GiB per member
ENCLOSURE = "0:0:8:0"


def spare(t: float) -> SimState:
    st = new_state("fileserver", t)
    for i, dn in enumerate(("sda", "sdb")):
        d = evo850(dn, f"S2RBNX0J1000{i:02d}B", 180_000_000 + i * 3_000_000, hours=9100 + i)
        d.ptuuid = st.new_uuid(dn)
        st.disks[dn] = d
        add_partition(st, dn, 1, 2048, COMPONENT_KIB * 2 + 262144, GPT_RAID, "Linux RAID")
    st.disks["sdb"].smart.reallocated = 48
    sdc = evo850("sdc", "S3Z9NB0K400123W", 0, wlc=0, hours=2)
    sdc.model = "Samsung SSD 860 EVO 500GB"
    sdc.partition_table = None
    sdc.smart.self_tests = []  # new: the drive never tested itself
    st.disks["sdc"] = sdc
    a = add_array(
        st,
        SimArray(
            name="md0",
            level="raid1",
            raid_disks=2,
            members=members(["sda1", "sdb1"]),
            component_kib=COMPONENT_KIB,
            chunk_kib=0,
            array_name="fileserver:0",
            bitmap="internal",
            array_state="clean",
        ),
    )
    st.filesystems["md0"] = SimFS(
        "md0",
        "ext4",
        st.new_uuid("fs"),
        COMPONENT_KIB * 1024,
        mountpoints=("/srv/data",),
        used_bytes=210 * GIB,
    )
    add_enclosure(
        st, ENCLOSURE, {"sda": ("Slot 00", 0), "sdb": ("Slot 01", 1), "sdc": ("Slot 02", 2)}
    )
    st.events.clear()
    st = finalize(st)
    conf = st.mdadm_conf or ""
    st.mdadm_conf = "\n".join(
        f"{line} devices=/dev/sda1,/dev/sdb1" if line.startswith("ARRAY") and a.uuid[:8] in
        line.replace(":", "").replace("-", "") else line for line in conf.splitlines()
    ) + "\n"  # fmt: skip
    return st
