"""The TUI audits as `raidman report` does (issue 14: one audit, wherever it is shown): with the
sync speeds the wear database recorded for the array — by its UUID, so an older array that had
the same kernel name lends it nothing. Article 001 (/work/shared/seeds/001_*.txt): a RAID-5 of
large HDDs is at risk for the whole rebuild; the finding names how long that rebuild takes."""

from __future__ import annotations

from dataclasses import replace

from app.model import Machine
from app.report import report_findings
from app.ui.app import RaidmanApp
from app.wear.snapshots import SnapshotStore
from tests.rules.machines import EVO_UUID, Stack
from tests.ui.fake_backend import FakeBackend
from tests.ui.helpers import wait_for, wait_ready

OLD_UUID = "11111111:22222222:33333333:44444444"


def _big_hdd_raid5() -> Machine:
    m = Stack(level="raid5", layout="left-symmetric", chunk=512 * 1024, rotational=True).machine()
    size = 4 * 10**12
    (a,) = m.arrays
    assert a.uuid == EVO_UUID
    members = tuple(replace(x, size_kib=size // 1024) for x in a.members)
    return replace(
        m,
        disks=tuple(replace(d, size_bytes=size) for d in m.disks),
        arrays=(replace(a, members=members, sync=None),),
    )


def _record(store: SnapshotStore, uuid: str, kib_s: int, at: float, member_kib: int) -> None:
    sid = store.start_sync("md0", "recover", ["sda1"], at=at, array_uuid=uuid)
    store.end_sync(sid, at=at + member_kib / kib_s)


async def test_tui_findings_use_the_recorded_sync_speed_of_this_array() -> None:
    machine = _big_hdd_raid5()
    member_kib = max(x.size_kib or 0 for x in machine.arrays[0].members)
    store = SnapshotStore.open(None)  # this machine's database (tests' isolated state dir)
    _record(store, EVO_UUID, 50_000, 1000.0, member_kib)  # this array: 50,000 KiB/s
    _record(store, OLD_UUID, 200_000, 900_000.0, member_kib)  # newer, but another array's
    store.close()

    backend = FakeBackend(machine=machine)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.05)
    async with app.run_test(size=(160, 50)) as pilot:
        await wait_ready(pilot)
        await wait_for(pilot, lambda: any(f.code == "md-raid5-large-hdds" for f in app.findings))
        [f] = [f for f in app.findings if f.code == "md-raid5-large-hdds"]
        assert "the average of its last sync raidman recorded" in f.detail, f.detail
        assert "about 22 h" in f.detail  # 4 TB at 50,000 KiB/s, not 200,000 KiB/s's 5 h
        seen = {n: r for n, (_, r) in app.hostview.smart_seen.items()}
        with app.stores.lock:
            report = report_findings(backend, machine, seen, app.stores.open(app.host))
        assert sorted(x.to_json()["code"] for x in app.findings) == sorted(
            x.to_json()["code"] for x in report
        )
        assert [x for x in report if x.code == "md-raid5-large-hdds"] == [f]
