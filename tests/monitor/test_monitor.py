"""WearMonitor on a tiny fake backend with a manual clock; delta lines; report JSON pieces.

The numbers are the source article's (../shared/seeds/000_*.txt, "Total_LBAs_Written"):
sdd went from about sdc's level (603,302,987 LBAs) to 3,763,859,973 in one RAID-5 rebuild,
Wear_Leveling_Count dropped one point; the others barely moved.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from app.backend import CommandResult
from app.model import Disk, Machine, MdArray, MdMember, SyncStatus
from app.model.live import LiveSample, MdLive
from app.model.smart import SmartAttribute, SmartReading
from app.model.smart_tables import attribute_json
from app.monitor import WearMonitor
from app.wear.delta import sync_wear
from app.wear.records import SyncMember
from app.wear.report import smart_json, syncs_json
from app.wear.snapshots import SnapshotStore

EVO_850_500 = 500_107_862_016


class FakeBackend:
    """Four EVO 850 in a RAID-5; ``sdd`` is being rebuilt; counters move as the test says."""

    name = "fake"
    read_only_reason = None

    def __init__(self) -> None:
        self.t = 1000.0
        self.lbas = {"sda": 604127952, "sdb": 846533123, "sdc": 603302987, "sdd": 603302987}
        self.wear = dict.fromkeys(self.lbas, 95)
        self.sync: SyncStatus | None = None
        self.smart_calls: list[str] = []

    def now(self) -> float:
        return self.t

    def probe(self) -> Machine:
        disks = (
            *tuple(
                Disk(
                    n,
                    EVO_850_500,
                    model="Samsung SSD 850 EVO 500GB",
                    serial=f"S-{n}",
                    rotational=False,
                )
                for n in self.lbas
            ),
            Disk("loop0", 1 << 20, kind="loop"),
        )
        members = tuple(MdMember(f"{n}1", i, ("in_sync",)) for i, n in enumerate(self.lbas))
        arr = MdArray("md126", "raid5", raid_disks=4, members=members, sync=self.sync)
        return Machine(
            host="h",
            kernel="k",
            disks=disks,
            arrays=(arr,),
            edges=tuple((n, f"{n}1") for n in self.lbas)
            + tuple((f"{n}1", "md126") for n in self.lbas),
        )

    def sample(self) -> LiveSample:
        return LiveSample(self.t, (MdLive("md126", "clean", 1 if self.sync else 0, self.sync),))

    def smart(self, disk: str) -> SmartReading:
        self.smart_calls.append(disk)
        if disk not in self.lbas:
            return SmartReading(disk, available=False, reason="no SMART")
        return SmartReading(
            disk,
            True,
            protocol="ATA",
            serial=f"S-{disk}",
            health="PASSED",
            capacity_bytes=EVO_850_500,
            attributes=(
                SmartAttribute(177, "Wear_Leveling_Count", value=self.wear[disk], raw=40),
                SmartAttribute(241, "Total_LBAs_Written", value=99, raw=self.lbas[disk]),
            ),
            taken_at=self.t,
        )

    def read_text(self, path: str) -> str | None:
        return None

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        return CommandResult(tuple(argv), 127)


def test_rebuild_recorded_with_article_numbers(tmp_path: Path) -> None:
    be = FakeBackend()
    store = SnapshotStore.open(tmp_path / "state.db")
    lines: list[str] = []
    mon = WearMonitor(be, store, interval_s=600, log=lines.append)
    mon.tick()  # start snapshot of the four SSDs (loop0 skipped)
    assert len(store.snapshots_for("S-sdd")) == 1 and "loop0" not in be.smart_calls

    be.t += 5
    total = 976_773_120
    be.sync = SyncStatus("recover", 0, total, 500_000, targets=("sdd1",))
    mon.tick()
    (ev,) = store.syncs_for("md126")
    assert ev.running and ev.action == "recover" and ev.started_at == 1005.0
    assert {m.serial for m in ev.members} == {"S-sda", "S-sdb", "S-sdc", "S-sdd"}

    # halfway: 50 minutes later, periodic snapshot taken (interval 600 s), sync still running
    be.t += 3000
    be.lbas["sdd"] += (3763859973 - 603302987) // 2
    be.sync = SyncStatus("recover", total // 2, total, 500_000, targets=("sdd1",))
    mon.tick()
    running = sync_wear(store, store.syncs_for("md126")[0])
    sdd = running.member("sdd")
    assert (
        sdd is not None and sdd.running and sdd.bytes_written == (3763859973 - 603302987) // 2 * 512
    )
    assert "has written" in running.line(sdd)

    # finished: sdd at the article's value, one wear point, the others moved a little
    be.t += 3000
    be.lbas["sdd"] = 3763859973
    be.wear["sdd"] = 94
    be.lbas["sda"] += 2048
    be.sync = None
    mon.tick()
    (ev,) = store.syncs_for("md126")
    assert not ev.running and ev.ended_at == 7005.0 and ev.outcome == "finished"
    sw = sync_wear(store, ev)
    d = sw.member("sdd")
    assert d is not None
    assert d.bytes_written == (3763859973 - 603302987) * 512 == 1_618_205_176_832
    assert d.wear_points == 1
    assert d.capacity_share is not None and round(d.capacity_share, 2) == 3.24
    assert sw.line(d) == (
        "this rebuild wrote 1.5 TiB to sdd (whole disk, all its partitions) = 3.2 × its "
        "capacity, 1 wear point"
    )
    a = sw.member("sda")
    assert a is not None and a.bytes_written == 2048 * 512 and a.wear_points == 0
    assert any("this rebuild wrote 1.5 TiB to sdd" in ln for ln in lines)

    js = syncs_json(store, "md126")
    assert js[0]["action"] == "recover" and js[0]["start"] == 1005.0 and js[0]["end"] == 7005.0
    assert {m["disk"]: m["bytes_written"] for m in js[0]["members"]}["sdd"] == 1_618_205_176_832


def test_monitor_restart_mid_sync_adopts_or_closes(tmp_path: Path) -> None:
    be = FakeBackend()
    be.sync = SyncStatus("resync", 0, 100)
    store = SnapshotStore.open(tmp_path / "state.db")
    WearMonitor(be, store).tick()
    store.close()

    # restarted while still syncing: the open event is adopted, not duplicated
    store = SnapshotStore.open(tmp_path / "state.db")
    be.t += 10
    WearMonitor(be, store).tick()
    assert len(store.syncs_for("md126")) == 1 and store.running_syncs()
    store.close()

    # restarted after it ended while nobody watched: closed with an end snapshot
    store = SnapshotStore.open(tmp_path / "state.db")
    be.t += 10
    be.lbas["sdb"] += 1000
    be.sync = None
    WearMonitor(be, store).tick()
    (ev,) = store.syncs_for("md126")
    assert ev.ended_at == be.t and ev.outcome and "not running" in ev.outcome
    b = sync_wear(store, ev).member("sdb")
    assert b is not None and b.bytes_written == 1000 * 512


def test_smart_json() -> None:
    be = FakeBackend()
    j = smart_json(be.smart("sdc"))
    assert j == {
        "available": True,
        "reason": None,
        "health": "PASSED",
        "bytes_written": 603302987 * 512,
        "wear_used_percent": 5,
        "rated_tbw": None,  # the fake disk has no model: no rating is guessed
        "rated_tbw_used_percent": None,
        "rated_tbw_source": None,
        "temperature_c": None,
        "power_on_hours": None,
        # the whole reading (app/model/smart_tables.py): the fake disk's table, no logs read
        "protocol": "ATA",
        "attributes": [attribute_json(a) for a in be.smart("sdc").attributes],
        "nvme_health": None,
        "self_tests": None,
        "self_test_remaining": None,
        "last_self_test": "self-test log not read",
        "error_count": None,
        "errors": [],
    }
    none = smart_json(be.smart("loop0"))
    assert (
        none["available"] is False
        and none["reason"] == "no SMART"
        and none["bytes_written"] is None
    )


def test_a_sync_start_snapshot_read_after_the_sync_ended_is_not_its_start(
    tmp_path: Path,
) -> None:
    """SMART is slow (seconds per disk under load): a sync of a few seconds can be over before
    its start snapshot is read. That snapshot equals the end and would say "0 B"; the last
    snapshot before the sync is the start instead (seen in the VM: a 7 s RAID-5 rebuild)."""
    store = SnapshotStore.open(tmp_path / "state.db")
    c = {"bytes_written": 1000, "capacity_bytes": 10_000}
    store.record_snapshot("S", "sdd", c, ts=10.0, reason="start")
    sid = store.start_sync("md0", "recover", [SyncMember("sdd", "sdd", "S")], 20.0)
    store.end_sync(sid, 27.0)
    late = {"bytes_written": 9000, "capacity_bytes": 10_000}
    store.record_snapshot("S", "sdd", late, ts=30.0, reason="sync-start", sync_id=sid)
    store.record_snapshot("S", "sdd", late, ts=31.0, reason="sync-end", sync_id=sid)
    ev = store.sync(sid)
    assert ev is not None
    m = sync_wear(store, ev).member("sdd")
    assert m is not None and m.bytes_written == 8000
