"""A plan running in the preview: the running step's elapsed time and streamed output show while
it runs (a slow simulated step), mke2fs's counter becomes a bar, the sync an array step started
shows from the live session's view, and the account at the end lists what ran, what failed
(stderr tail) and what did not run."""

from __future__ import annotations

import threading
from collections.abc import Sequence
from pathlib import Path

from rich.text import Text
from textual.app import App
from textual.reactive import reactive
from textual.widgets import ProgressBar, Static

from app.backend import CommandResult, OutputCallback
from app.plans.audit_log import AuditLog
from app.plans.plan import Plan, Step
from app.session import SessionView
from app.sync.tracker import SyncView
from app.ui.screens.plan_preview import PlanPreviewScreen
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock
from tests.plans.fakes import FakeBackend, array_machine
from widgets.plan_view import PlanView


class Host(App[None]):
    view: reactive[SessionView] = reactive(SessionView, always_update=True, init=False)


def _plain(w: Static) -> str:
    c = w.content
    return c.plain if isinstance(c, Text) else str(c)


class SlowSim(SimulatedBackend):
    """The raid10-evo demo whose sync_speed_max write writes a line, a mke2fs-style counter, and
    then waits for the test before it really runs."""

    go: threading.Event
    waiting: threading.Event

    def run_streaming(
        self,
        argv: Sequence[str],
        *,
        on_output: OutputCallback,
        stdin: str | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        if argv[-1].endswith("sync_speed_max"):
            on_output("stdout", "raising the ceiling\x1b[2J")
            on_output("stdout", "Writing inode tables:  32/128")
            self.waiting.set()
            assert self.go.wait(20), "the test never let the step end"
        return super().run_streaming(argv, on_output=on_output, stdin=stdin, timeout=timeout)


def _slow_sim() -> SlowSim:
    be = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    slow = SlowSim(be.state, be.clock, "raid10-evo")
    slow.go, slow.waiting = threading.Event(), threading.Event()
    return slow


PLAN = Plan(
    "tune md127",
    (
        Step.decode(("tee", "/sys/block/md127/md/sync_speed_max"), "ceiling", stdin="200000\n"),
        # md127 is resyncing in raid10-evo: md answers EBUSY to a check
        Step.decode(("tee", "/sys/block/md127/md/sync_action"), "check", stdin="check\n"),
        Step.decode(("tee", "/sys/block/md127/md/sync_speed_min"), "floor", stdin="1000\n"),
    ),
    target="md127",
    kind="sync-action",
    params={"array": "md127"},
)


async def _wait_until(pilot: object, cond: object, tries: int = 100) -> None:
    for _ in range(tries):
        if cond():  # type: ignore[operator]
            return
        await pilot.pause(0.05)  # type: ignore[attr-defined]
    raise AssertionError("condition never met")


async def test_slow_step_shows_elapsed_and_output_before_it_ends(tmp_path: Path) -> None:
    be = _slow_sim()
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PlanPreviewScreen(PLAN, be, audit=AuditLog(tmp_path / "audit.log"))
        await app.push_screen(screen)
        await pilot.pause()
        await pilot.click("#pp-run")
        try:
            await _wait_until(pilot, be.waiting.is_set)
            out = screen.query_one("#pp-output", Static)
            await _wait_until(pilot, lambda: "raising the ceiling" in _plain(out))
            running = screen.query_one("#pp-running", Static)
            assert _plain(running).startswith("▶ step 1/3: tee — ")
            assert _plain(running).endswith(" elapsed")
            assert "\\x1b[2J" in _plain(out)  # the program's text, escaped
            # mke2fs-style counter → a bar with the program's own figure
            bar = screen.query_one("#pp-bar", ProgressBar)
            assert bar.display and (bar.progress, bar.total) == (32, 128)
            assert _plain(screen.query_one("#pp-counter", Static)) == "Writing inode tables: 32/128"
            # the elapsed time ticks while the step still runs
            await _wait_until(pilot, lambda: "1s elapsed" in _plain(running), tries=60)
            assert screen.running and screen.report is None
            plan_view = screen.query_one("#pp-plan", PlanView)
            assert plan_view.statuses == ["running", "pending", "pending"]
        finally:
            be.go.set()
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert screen.report is not None and not screen.running
        result = _plain(screen.query_one("#pp-result", Static)).splitlines()
        assert result[0].startswith("ran     1. printf '%s\\n' 200000 | tee ")
        assert "(exit 0, " in result[0]
        assert result[1].startswith(
            "FAILED  2. printf '%s\\n' check | tee /sys/block/md127/md/sync_action  (exit 1, "
        )
        assert (
            result[2]
            == "        tee exited with 1: tee: /sys/block/md127/md/sync_action: Device or resource busy"
        )
        assert (
            result[3] == "        | tee: /sys/block/md127/md/sync_action: Device or resource busy"
        )
        assert result[4].startswith("not run 3. ")
        assert not screen.query_one("#pp-progress").display  # nothing syncing that the plan set
        assert plan_view.statuses == ["ok", "failed", "not-run"]


async def test_a_check_step_shows_the_arrays_sync_from_the_live_session(tmp_path: Path) -> None:
    be = FakeBackend(array_machine())
    plan = Plan(
        "check md127",
        (Step.decode(("tee", "/sys/block/md127/md/sync_action"), "check", stdin="check\n"),),
        target="md127",
        kind="sync-action",
        params={"array": "md127", "action": "check"},
    )
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = PlanPreviewScreen(plan, be, audit=AuditLog(tmp_path / "audit.log"))
        await app.push_screen(screen)
        await pilot.pause()
        await pilot.click("#pp-run")
        await app.workers.wait_for_complete()
        await pilot.pause()
        sync = screen.query_one("#pp-sync", Static)
        # the session has not seen the check yet: no figure, no bar
        assert not sync.display and not screen.query_one("#pp-sync-bar").display
        gib = 2 * 1024 * 1024  # sectors
        app.view = SessionView(
            syncs=(
                SyncView(
                    array="md127",
                    action="check",
                    done_sectors=gib,
                    total_sectors=4 * gib,
                    speed_kib_s=204800,
                    eta_s=600.0,
                    elapsed_s=30.0,
                    targets=(),
                    speeds=(),
                    min_speed_kib_s=1000,
                    max_speed_kib_s=200000,
                ),
            )
        )
        await pilot.pause()
        assert screen.query_one("#pp-progress").display and sync.display
        assert _plain(sync) == "md127 check 25.0% · 200.0 MiB/s · ETA 10m 00s"
        bar = screen.query_one("#pp-sync-bar", ProgressBar)
        assert bar.display and (bar.progress, bar.total) == (250, 1000)
