"""Scenario ``lvm-raid``: LVM RAID LVs as dm-raid runs them (issue 42).

* VG ``vgr`` on three 1 TB NVMe disks (whole-disk PVs nvme0n1..nvme2n1);
* ``vgr/r1``: a 200 GiB raid1 on nvme0n1 + nvme1n1 in its initial resync, 40 % done, held by
  md's limits (``--maxrecoveryrate 256K`` under the system's 1000 KiB/s min: it runs at the
  min, as the VM's did) — so ``plan lv-sync check --lv vgr/r1`` is refused until it ends;
* ``vgr/r5``: a 100 GiB raid5 on all three whose last check counted 512 mismatched sectors
  (lv_attr ``m``): the audit's finding offers the check again.
"""

from __future__ import annotations

from backends.simulated.lvm_raid import SimRaid
from backends.simulated.records import SimLV, SimPV, SimVG
from backends.simulated.scenario_parts import GIB, finalize, new_state, nvme_disk
from backends.simulated.state import SimState

R1_BYTES = 200 * GIB
R5_BYTES = 100 * GIB


def lvm_raid(t: float) -> SimState:
    st = new_state("rhel-box", t)
    disks = ("nvme0n1", "nvme1n1", "nvme2n1")
    for i, name in enumerate(disks):
        d = nvme_disk(i)
        d.partition_table = None
        st.disks[name] = d
        st.pvs[name] = SimPV(name, "vgr", d.size_bytes, st.new_uuid("pv"))
    st.vgs["vgr"] = SimVG("vgr", st.new_uuid("vg"))
    r1 = SimRaid(
        images=[("nvme0n1",), ("nvme1n1",)],
        image_bytes=R1_BYTES,
        raid_type="raid1",
        health=["a", "a"],
        action="resync",
        rate_kib_s=1035,  # md's min 1000 x its throttle's (t + 1) / t, app.model.sync_model
        max_rate_kib_s=256,
    )
    r1.started_at = t - 0.4 * r1.total / 2 / r1.rate_kib_s  # 40 % done now
    st.lvs["vgr/r1"] = SimLV(
        "r1", "vgr", R1_BYTES, st.next_dm(), st.new_uuid("lv"), ("nvme0n1", "nvme1n1"),
        segtype="raid1", raid=r1,
    )  # fmt: skip
    r5 = SimRaid(
        images=[(d,) for d in disks],
        image_bytes=R5_BYTES // 2,
        raid_type="raid5_ls",
        mismatches=512,
        finds=512,
    )
    st.lvs["vgr/r5"] = SimLV(
        "r5", "vgr", R5_BYTES, st.next_dm(), st.new_uuid("lv"), disks, segtype="raid5",
        stripes=3, stripe_size=64 * 1024, raid=r5,
    )  # fmt: skip
    return finalize(st)
