"""A recorded sync keeps the forecast made when it began (issue 22, item 5): the sync model's,
from the array's facts when raidman saw the sync start, or the plan's handed over; stored in the
wear database (schema 3; older rows read with none) and shown beside what happened in
``report --json`` (``arrays[].syncs[].forecast``), ``raidman report`` and the Wear tab."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

from app.model.sync_model import MemberWrite, SyncForecast
from app.monitor import WearMonitor
from app.report import full_report_text
from app.wear.dbfile import SCHEMA_VERSION
from app.wear.delta import array_wear
from app.wear.forecast import RecordedForecast, parse_forecast
from app.wear.report import syncs_json
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend

MIB = 1 << 20
RAID1 = ("sdb1", "sdc1", "sdd1")


def create_raid1(tmp_path: Path) -> tuple[SimulatedBackend, SimClock, SnapshotStore, WearMonitor]:
    """``--demo raid10-evo`` watched, a 3-way RAID-1 created on sdb1/sdc1/sdd1 (512 MiB each)."""
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    store = SnapshotStore.open(tmp_path / "state.db")
    mon = WearMonitor(backend, store, interval_s=3600)
    mon.tick()
    argv = ["mdadm", "--create", "/dev/md126", "--level=1", "--raid-devices=3"]
    r = backend.run([*argv, "--bitmap=none", "--run", *(f"/dev/{d}" for d in RAID1)])
    assert r.ok, r.stderr
    return backend, clock, store, mon


def finish(backend: SimulatedBackend, clock: SimClock, mon: WearMonitor, array: str) -> None:
    for _ in range(600):
        clock.advance(1)
        mon.tick()
        live = next((a for a in backend.sample().arrays if a.name == array), None)
        if live is not None and live.sync is None:
            clock.advance(1)
            mon.tick()
            return
    raise AssertionError(f"{array}'s sync never ended")


def test_a_new_raid1_keeps_the_models_forecast_beside_what_it_wrote(tmp_path: Path) -> None:
    backend, clock, store, mon = create_raid1(tmp_path)
    finish(backend, clock, mon, "md126")
    (js,) = syncs_json(store, "md126")
    fc = js["forecast"]
    assert fc is not None and fc["source"] == "model" and fc["action"] == "resync"
    # a RAID-1 resync copies the first mirror onto the others: the model and the kernel agree
    component = backend.state.arrays["md126"].component_kib * 1024
    want = {"sdb1": 0, "sdc1": component, "sdd1": component}
    assert {m["device"]: m["bytes_written"] for m in fc["members"]} == want
    assert {m["device"]: m["kernel_bytes_written"] for m in js["members"]} == want
    took = js["end"] - js["start"]
    assert fc["duration_s"] is not None and 0.5 * took <= fc["duration_s"] <= 1.5 * took
    assert js["forecast_vs_actual"] == "forecast 1s / 1022.0 MiB · took 1s / 1022.0 MiB"

    # the database keeps it: read again after a restart
    store.close()
    again = SnapshotStore.open(tmp_path / "state.db")
    (w,) = array_wear(again, "md126")
    assert w.sync.forecast is not None and w.sync.forecast.bytes_written == 2 * component
    assert w.lines()[0] == "forecast 1s / 1022.0 MiB · took 1s / 1022.0 MiB"

    # raidman report (text): the same line under "Recorded syncs"
    text = full_report_text(backend, backend.probe(), smart=False, findings=False, store=again)
    body = text.split("Recorded syncs\n", 1)[1]
    assert (
        "md126  resync " in body and "    forecast 1s / 1022.0 MiB · took 1s / 1022.0 MiB" in body
    )
    assert "    kernel counter: this resync wrote 511.0 MiB to sdc1 = 1.00 × its size" in body
    # md127 was running (16.3 % done) when raidman first looked: its record and its forecast
    # are of the rest, the range a RAID-10 resync may write (× the 83.7 % left) and its time;
    # md126 shares sdb..sdd with it, so md126's resync waited until md127's had finished
    # (md.c md_do_sync: resync=DELAYED), and the forecast of md127's rest held
    (line,) = [ln for ln in body.splitlines() if "forecast 4m 31s / 0 B–133.7 GiB" in ln]
    assert line == "    forecast 4m 31s / 0 B–133.7 GiB (from 16% on) · took 4m 31s / 133.7 GiB"
    (md127,) = syncs_json(again, "md127")
    assert md127["forecast"]["from_fraction"] == 27408896 / 167651328
    assert md127["end"] <= js["start"]


def plan_forecast(array: str) -> SyncForecast:
    return SyncForecast(
        array=array, action="resync", speed_kib_s=100_000, speed_why="md's limit",
        duration_s_low=3900.0, duration_s_high=3900.0,
        members=(MemberWrite("sdc1", 256 * MIB, 256 * MIB, 512 * MIB),),
    )  # fmt: skip


def test_the_plans_forecast_is_kept_instead_of_the_models(tmp_path: Path) -> None:
    backend, clock, store, mon = create_raid1(tmp_path)
    clock.advance(1)
    mon.tick()
    assert mon.session.recorder is not None
    mon.session.recorder.expect_forecast("md126", plan_forecast("md126"))
    finish(backend, clock, mon, "md126")
    (js,) = syncs_json(store, "md126")
    assert js["forecast"]["source"] == "plan" and js["forecast"]["duration_s"] == 3900.0
    assert js["forecast_vs_actual"] == (
        "forecast 1h 05m / 256.0 MiB (the plan's) · took 1s / 1022.0 MiB"
    )


def test_a_schema_2_database_is_migrated_and_its_rows_read_without_a_forecast(
    tmp_path: Path,
) -> None:
    p = tmp_path / "state.db"
    conn = sqlite3.connect(p)
    conn.executescript(
        """
        CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
        INSERT INTO meta VALUES ('schema', '2');
        CREATE TABLE snapshots (id INTEGER PRIMARY KEY AUTOINCREMENT, ts REAL NOT NULL,
            serial TEXT NOT NULL, device TEXT NOT NULL, reason TEXT NOT NULL DEFAULT 'periodic',
            sync_id INTEGER, counters TEXT NOT NULL);
        CREATE TABLE sync_events (id INTEGER PRIMARY KEY AUTOINCREMENT, array_name TEXT NOT NULL,
            action TEXT NOT NULL, started_at REAL NOT NULL, ended_at REAL, outcome TEXT,
            members TEXT NOT NULL, array_uuid TEXT, fraction REAL, kernel_writes TEXT);
        INSERT INTO sync_events (array_name, action, started_at, ended_at, outcome, members)
            VALUES ('md0', 'recover', 10, 20, 'finished', '[["sdd1", "sdd", null]]');
        """
    )
    conn.commit()
    conn.close()
    store = SnapshotStore.open(p)
    assert not store.notes
    (old,) = store.syncs_for("md0")
    assert old.forecast is None and old.action == "recover"
    (js,) = syncs_json(store, "md0")
    assert js["forecast"] is None and js["forecast_vs_actual"] is None
    sid = store.start_sync("md0", "check", ["sdd1"], 30.0)
    store.set_sync_forecast(sid, RecordedForecast.of(plan_forecast("md0")))
    ev = store.sync(sid)
    assert ev is not None and ev.forecast is not None and ev.forecast.duration_s == 3900.0
    store.close()
    conn = sqlite3.connect(p)
    assert conn.execute("SELECT value FROM meta WHERE key='schema'").fetchone()[0] == str(
        SCHEMA_VERSION
    )
    conn.close()


def test_a_forecast_out_of_shape_is_none_not_an_error() -> None:
    good = {"duration_s": 60.0, "members": [{"device": "sdb1", "bytes_written": 5}]}
    assert parse_forecast(json.dumps(good)) is not None
    for bad in (
        "not json",
        "[]",
        json.dumps({**good, "duration_s": float("nan")}),
        json.dumps({**good, "duration_s": -1}),
        json.dumps({**good, "members": [{"device": "sdb1", "bytes_written": "5"}]}),
        json.dumps({**good, "members": [{"device": "x" * 1000, "bytes_written": 5}]}),
        json.dumps({**good, "members": [{"device": "sdb1"}] * 5000}),
        "[" * 100_000 + "]" * 100_000,
        "x" * (1 << 20),
    ):
        assert parse_forecast(bad) is None, bad[:40]
    assert parse_forecast(None) is None


def test_an_imsm_raid5_volumes_first_sync_is_forecast_as_a_resync_not_a_rebuild() -> None:
    """mdadm Create.c: no degraded create for external metadata (``st->ss->external == 0``):
    the model's forecast of a new IMSM RAID-5 volume names no rebuilt member (VM, issue 43)."""
    from dataclasses import replace

    from app.wear.forecast import model_forecast

    m = SimulatedBackend.from_scenario("imsm", clock=SimClock.manual()).probe()
    vol = m.array("md125")
    assert vol is not None and vol.is_external
    r5 = replace(vol, level="raid5", layout="left-asymmetric")
    m5 = replace(m, arrays=tuple(r5 if a.name == "md125" else a for a in m.arrays))
    fc = model_forecast(m5, "md125", "resync", None, initial=True)
    assert fc is not None and fc.action == "resync"
    assert "rebuilds its last member" not in fc.why
    assert all(w.bytes_low == 0 for w in fc.members)
