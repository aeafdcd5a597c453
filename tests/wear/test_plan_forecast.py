"""The plan's forecast is the one recorded (issue 22, item 5): a plan that starts a sync hands
the forecast of its consequences to whoever records that sync — the live session in the same
process (the TUI), or ``raidman monitor`` in another one through ``expected_forecasts.json``
beside the wear database (``raidman apply``) — so the record says "(the plan's)"."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import app.commands.apply as apply_cmd
import app.commands.plan as plan_cmd
from app.cli import main
from app.model.sync_model import MemberWrite, SyncForecast
from app.monitor import WearMonitor
from app.plans.audit_log import AuditLog
from app.plans.executor import StepEvent, execute
from app.plans.outcome.sync_steps import sync_starting_steps
from app.plans.plan import Plan, parse_plan_bytes
from app.plans.render import current_consequences
from app.wear.expected import EXPECTED_FILE, EXPIRES_S, ExpectedForecasts
from app.wear.forecast import RecordedForecast
from app.wear.report import syncs_json
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend
from tests.wear.test_forecast import finish

MIB = 1 << 20
CREATE = [
    "plan", "create-array", "--level", "1", "--devices", "sdb1,sdc1,sdd1",
    "--bitmap", "none", "--name", "126",
]  # fmt: skip


@pytest.fixture
def watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> tuple[SimulatedBackend, SimClock, SnapshotStore, WearMonitor]:
    """``--demo raid10-evo`` watched by a monitor whose database is in the state directory; the
    CLI's plan and apply run on the same simulated machine."""
    clock = SimClock.manual()
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    state = tmp_path / "state"
    state.mkdir(mode=0o700)
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(state))
    monkeypatch.setattr(plan_cmd, "make_backend", lambda args: backend)
    monkeypatch.setattr(apply_cmd, "make_backend", lambda args: backend)
    store = SnapshotStore.open(state / "state.db")
    mon = WearMonitor(backend, store, interval_s=3600)
    mon.tick()
    clock.advance(1)
    mon.tick()
    return backend, clock, store, mon


def _plan(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, Plan]:
    out = tmp_path / "plan.json"
    assert main([*CREATE, "--json", "--out", str(out)]) == 0
    capsys.readouterr()
    plan, _digest = parse_plan_bytes(out.read_bytes())
    return out, plan


def test_apply_leaves_the_plans_forecast_for_the_monitor_and_the_record_keeps_it(
    watched: tuple[SimulatedBackend, SimClock, SnapshotStore, WearMonitor],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    backend, clock, store, mon = watched
    out, _ = _plan(tmp_path, capsys)
    shown = json.loads(out.read_text())["consequences"]["syncs"]
    (planned,) = [s for s in shown if s["array"] == "md126"]
    assert main(["apply", str(out), "--confirm", "126"]) == 0, capsys.readouterr()
    expected = tmp_path / "state" / EXPECTED_FILE
    (entry,) = json.loads(expected.read_text())
    assert entry["array"] == "md126"
    # md126 shares sdb..sdd with md127, whose resync runs: md126's waits (resync=DELAYED), so
    # the forecast is kept for that wait too, not only ten minutes
    assert entry["expires_at"] > entry["made_at"] + EXPIRES_S
    finish(backend, clock, mon, "md126")
    (js,) = syncs_json(store, "md126")
    fc = js["forecast"]
    assert fc["source"] == "plan"
    assert fc["duration_s"] == planned["duration_s_low"]
    assert {m["device"]: m["bytes_written"] for m in fc["members"]} == {
        m["device"]: m["bytes_written_high"] for m in planned["members"]
    }
    assert "(the plan's)" in js["forecast_vs_actual"]
    assert json.loads(expected.read_text()) == []  # taken once, then deleted


def test_the_tui_path_hands_the_forecast_to_the_session_before_the_step_runs(
    watched: tuple[SimulatedBackend, SimClock, SnapshotStore, WearMonitor],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What the preview's run worker does (through the app, on the UI thread): the session
    gets each forecast right before the step that starts its sync."""
    backend, clock, store, mon = watched
    _, plan = _plan(tmp_path, capsys)
    machine = backend.probe()
    plan = current_consequences(plan, machine, backend)
    starts = sync_starting_steps(plan, machine)
    assert list(starts) == [0] and [f.array for f in starts[0]] == ["md126"]
    handed: list[int] = []

    def on_event(ev: StepEvent) -> None:
        if ev.kind == "started" and ev.index in starts:
            handed.append(ev.index)
            mon.session.expect_forecasts(starts[ev.index], backend.now())

    report = execute(plan, backend, audit=AuditLog(tmp_path / "audit.log"), on_event=on_event)
    assert report.ok and handed == [0]
    finish(backend, clock, mon, "md126")
    (js,) = syncs_json(store, "md126")
    assert js["forecast"]["source"] == "plan"
    assert js["forecast"]["duration_s"] == starts[0][0].duration_s_low
    # nothing was left in the file: the TUI hands it over in its own process
    assert not (tmp_path / "state" / EXPECTED_FILE).exists()


def test_without_a_plan_the_record_keeps_the_models(
    watched: tuple[SimulatedBackend, SimClock, SnapshotStore, WearMonitor],
) -> None:
    backend, clock, store, mon = watched
    argv = ["mdadm", "--create", "/dev/md126", "--level=1", "--raid-devices=3", "--bitmap=none"]
    assert backend.run([*argv, "--run", "/dev/sdb1", "/dev/sdc1", "/dev/sdd1"]).ok
    finish(backend, clock, mon, "md126")
    (js,) = syncs_json(store, "md126")
    assert js["forecast"]["source"] == "model"


def _fc(array: str = "md126") -> RecordedForecast:
    return RecordedForecast.of(
        SyncForecast(
            array=array, action="resync", speed_kib_s=4000, speed_why="md's limit",
            duration_s_low=60.0, duration_s_high=60.0,
            members=(MemberWrite("sdc1", 256 * MIB, 256 * MIB, 512 * MIB),),
        ),
        "plan",
    )  # fmt: skip


def test_an_expected_forecast_is_taken_once_and_never_after_it_expired(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    ex = ExpectedForecasts(tmp_path)
    ex.put("md126", None, _fc(), 1000.0)
    ex.put("md5", "u-1", _fc("md5"), 1000.0)
    assert ex.take("md127", None, 1001.0) is None
    assert ex.take("md5", "u-2", 1001.0) is None  # another array of that name
    got = ex.take("md126", "any", 1001.0)
    assert got is not None and got.source == "plan" and got.duration_s == 60.0
    assert ex.take("md126", None, 1002.0) is None  # once
    assert ex.take("md5", "u-1", 1000.0 + EXPIRES_S + 1) is None  # expired
    ex.put("md126", None, _fc(), 2000.0, wait_s=3600.0)
    assert ex.take("md126", None, 2000.0 + EXPIRES_S + 1800) is not None  # waits for md127's
    ex.put("md126", None, _fc(), 3000.0)
    ex.withdraw("md126")  # the step failed
    assert ex.take("md126", None, 3001.0) is None


@pytest.mark.parametrize(
    "text",
    [
        "[1, 2",
        '{"array": "md126"}',
        '[{"array": "md126", "made_at": 1000, "expires_at": 1e300, "forecast": "{}"}]',
        '[{"array": "md126", "made_at": 1000, "expires_at": 1100, "forecast": "[]"}]',
        '[{"array": "md\\n126", "made_at": 1000, "expires_at": 1100, "forecast": "{}"}]',
        '[{"array": "md126", "made_at": true, "expires_at": 1100}]',
        "[" + "[" * 500 + "]" * 500 + "]",
    ],
)
def test_an_expected_forecasts_file_out_of_shape_costs_its_entries_never_an_error(
    tmp_path: Path, text: str
) -> None:
    tmp_path.chmod(0o700)
    (tmp_path / EXPECTED_FILE).write_text(text)
    (tmp_path / EXPECTED_FILE).chmod(0o600)
    ex = ExpectedForecasts(tmp_path)
    assert ex.take("md126", None, 1050.0) is None
    assert ex.notes


def test_a_bad_entry_costs_that_entry_only(tmp_path: Path) -> None:
    tmp_path.chmod(0o700)
    ex = ExpectedForecasts(tmp_path)
    ex.put("md126", None, _fc(), 1000.0)
    good = json.loads((tmp_path / EXPECTED_FILE).read_text())
    bad = {"array": "md5", "made_at": "x", "expires_at": 1100, "forecast": "{}"}
    (tmp_path / EXPECTED_FILE).write_text(json.dumps([bad, *good]))
    got = ExpectedForecasts(tmp_path).take("md126", None, 1001.0)
    assert got is not None and got.duration_s == 60.0
