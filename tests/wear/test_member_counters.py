"""Each member's own kernel counter (issue 22, item 4): /proc/diskstats has a line per partition,
so a sync on partitions is credited with what it wrote to its own members, apart from what an
array on other partitions of the same disks wrote meanwhile; "× its size" is of the member's own
size; SMART's figure (the whole disk, all its partitions) is shown beside it, said as such.

The case of the issue: ``--demo raid10-evo`` (md127, RAID-10 on sda2..sdd2, resyncing), a RAID-1
md126 created on sdb1/sdc1/sdd1 (512 MiB each). Before: md126's resync was credited "1.09 GB to
sdb" (its first mirror, only read) and md127's 268 MB to sdc (a first copy, only read)."""

from __future__ import annotations

from pathlib import Path

from app.monitor import WearMonitor
from app.wear.delta import array_wear
from app.wear.records import SyncMember
from app.wear.report import syncs_json
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend

MIB = 1 << 20
RAID1 = ("sdb1", "sdc1", "sdd1")


def run_until(
    mon: WearMonitor, backend: SimulatedBackend, clock: SimClock, array: str, step: float
) -> None:
    """Tick the monitor every ``step`` seconds until ``array`` has no sync (bounded)."""
    for _ in range(5000):
        clock.advance(step)
        mon.tick()
        live = next((a for a in backend.sample().arrays if a.name == array), None)
        if live is not None and live.sync is None:
            clock.advance(step)
            mon.tick()
            return
    raise AssertionError(f"{array}'s sync never ended")


def monitored(
    tmp_path: Path,
) -> tuple[SimulatedBackend, SimClock, SnapshotStore, WearMonitor, list[str]]:
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    store = SnapshotStore.open(tmp_path / "state.db")
    lines: list[str] = []
    mon = WearMonitor(backend, store, interval_s=3600, log=lines.append)
    mon.tick()
    r = backend.run(
        [
            "mdadm",
            "--create",
            "/dev/md126",
            "--level=1",
            "--raid-devices=3",
            "--bitmap=none",
            "--run",
            *(f"/dev/{d}" for d in RAID1),
        ]
    )
    assert r.ok, r.stderr
    return backend, clock, store, mon, lines


def test_a_sync_on_partitions_is_credited_with_its_own_members_writes(tmp_path: Path) -> None:
    backend, clock, store, mon, lines = monitored(tmp_path)
    st = backend.state
    at_start = {p: st.io[p].write_bytes if p in st.io else 0 for p in ("sdb2", "sdc2", "sdd2")}
    run_until(mon, backend, clock, "md126", 1.0)
    size = st.partitions["sdb1"].size_bytes
    assert size == 512 * MIB

    (md126,) = syncs_json(store, "md126")
    assert md126["action"] == "resync" and md126["outcome"] == "finished"
    got = {m["device"]: m for m in md126["members"]}
    assert set(got) == set(RAID1)
    # a RAID-1 resync reads the first mirror and writes the others (the simulator's model):
    # nothing of md127's resync on sdb2/sdd2 is in it any more
    assert got["sdb1"]["kernel_bytes_written"] == 0
    component = st.arrays["md126"].component_kib * 1024
    for d in ("sdc1", "sdd1"):
        m = got[d]
        assert m["kernel_scope"] == "member" and m["member_bytes"] == size
        assert m["kernel_bytes_written"] == component, m
        assert 0.99 <= m["kernel_capacity_share"] <= 1.0
        # beside it the whole disk's: every partition, md127's writes to sdd2 included
        assert (
            m["smart_scope"] == "whole disk" and m["disk_bytes"] == st.disks[m["disk"]].size_bytes
        )
    assert got["sdd1"]["disk_kernel_bytes_written"] > component
    text = "\n".join(lines)
    assert "kernel counter: this resync wrote 511.0 MiB to sdd1 = 1.00 × its size" in text, text
    assert "to sdb (whole disk, all its partitions)" in text

    # md127's RAID-10 n2 resync reads the first copy of each pair (sda2, sdc2) and writes the
    # second (sdb2, sdd2): exactly the kernel's counters of its own partitions, nothing of md126's
    (md127,) = [w for w in array_wear(store, "md127")]
    for m in md127.members:
        n, size127, own = md127.kernel_written(m)
        assert own and size127 == st.partitions[m.member.device].size_bytes
        dev = m.member.device
        now = st.io[dev].write_bytes if dev in st.io else 0
        assert n == now - at_start.get(dev, 0), (dev, n)
    assert md127.kernel_written(md127.member("sdc2"))[0] == 0  # type: ignore[arg-type]


def test_writes_to_another_array_on_the_same_disks_stay_out_of_a_sync(tmp_path: Path) -> None:
    """32 MiB written to the RAID-1 (each mirror) while md127 resyncs: md127's record holds its
    own partitions' writes only (the kernel's counter of each partition since the sync began);
    the whole disk's figure beside it has both arrays' writes."""
    backend, clock, store, mon, _lines = monitored(tmp_path)
    for _ in range(3):
        clock.advance(1)
        mon.tick()
    # md126 shares sdb..sdd with md127: its resync waits (md.c md_do_sync, resync=DELAYED)
    mdstat = backend.read_text("/proc/mdstat") or ""
    assert "resync=DELAYED" in mdstat.split("md127 :")[0], mdstat
    st = backend.state
    (running,) = store.syncs_for("md127")
    assert running.running
    for d in RAID1:  # a host write to the RAID-1: every mirror gets it
        st.add_io(d, 0, 32 * MIB)
    clock.advance(5)
    mon.tick()
    (ev,) = store.syncs_for("md127")
    (js,) = syncs_json(store, "md127")
    got = {m["device"]: m for m in js["members"]}
    for dev, disk in (("sdb2", "sdb"), ("sdc2", "sdc"), ("sdd2", "sdd")):
        own = st.io[dev].write_bytes - ev.kernel_start[dev] if dev in st.io else 0
        whole = st.io[disk].write_bytes - ev.kernel_start[disk]
        m = got[dev]
        assert m["kernel_scope"] == "member"
        assert m["kernel_bytes_written"] == own, (dev, m["kernel_bytes_written"], own)
        assert m["disk_kernel_bytes_written"] == whole
        # the 32 MiB host write to md126 (its resync still waits) is the disk's only other
        assert whole - own >= 32 * MIB
    assert got["sdc2"]["kernel_bytes_written"] == 0  # a first copy: md127 only read it


def test_a_record_from_before_per_member_counts_is_read_as_the_whole_disks(tmp_path: Path) -> None:
    store = SnapshotStore.open(tmp_path / "state.db")
    sid = store.start_sync(
        "md0", "recover", [SyncMember("sdd1", "sdd", None)], 10.0,
        kernel_start={"sdd": 1000}, capacities={"sdd": 1000 * MIB},
    )  # fmt: skip
    store.set_kernel_writes(sid, {"sdd": 1000}, {"sdd": 1000 + 250 * MIB}, {"sdd": 1000 * MIB})
    store.end_sync(sid, 20.0)
    (js,) = syncs_json(store, "md0")
    (m,) = js["members"]
    assert m["kernel_scope"] == "whole disk" and m["member_bytes"] is None
    assert m["kernel_bytes_written"] == 250 * MIB and m["kernel_capacity_share"] == 0.25
    (sw,) = array_wear(store, "md0")
    assert sw.lines()[0] == (
        "kernel counter: this rebuild wrote 250.0 MiB to sdd (whole disk, all its partitions: "
        "recorded before per-member counts) = 0.25 × its capacity"
    )
