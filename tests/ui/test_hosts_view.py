"""Several hosts (``raidman --host a --host b``, issue 14 §3): the TUI's top level is a hosts view
with each host's roll-up and the fleet's in the banner; Enter opens a host's full view, H comes
back; an unreachable host (its probe raises, or never answers) is a note on that host while the
others work; a plan on a host shows the host, runs through its backend, is audited locally with
the host named, and its saved plan file records the host."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from textual.widgets import DataTable, Static

from app.backend import BackendError
from app.fleet import (
    HostStatus,
    finding_text,
    fleet_line,
    host_line,
    others_line,
    worst_finding,
)
from app.hosts import plan_host
from app.model.devices import Machine
from app.paths import DB_FILE, host_state_dir
from app.plans.audit_log import AuditLog
from app.rollup import rollup
from app.rules.finding import Finding
from app.ui.app import RaidmanApp
from app.ui.screens.hosts import HostsScreen
from app.ui.screens.main import MainScreen
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import plain, wait_for
from widgets.header_banner import HeaderBanner


def sim(scenario: str) -> SimulatedBackend:
    return SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())


class Unreachable(SimulatedBackend):
    """A host whose probe fails as an ssh timeout would."""

    def probe(self) -> Machine:
        raise BackendError("no answer from gone within 3 s")


class Hanging(SimulatedBackend):
    """A host whose probe never comes back (until the test lets it go)."""

    release = threading.Event()

    def probe(self) -> Machine:
        self.release.wait(10)
        raise BackendError("let go")


def fleet_app(hosts: list[tuple[str, SimulatedBackend]], **kw: float) -> RaidmanApp:
    return RaidmanApp(hosts[0][1], hosts=hosts, probe_interval=0, sample_interval=0, **kw)


def rows(app: RaidmanApp) -> dict[str, str]:
    table = app.screen.query_one("#hosts-table", DataTable)
    return {
        str(key.value): table.get_row(key)[2].plain  # type: ignore[union-attr]
        for key in table.rows
    }


def banner(app: RaidmanApp) -> str:
    return plain(app.screen.query_one("#fleet-banner", Static))


# ---- the roll-up, UI-free ----------------------------------------------------------------


def test_host_lines_say_degraded_syncing_unreachable_and_the_worst_finding() -> None:
    cable = sim("raid5-cable").probe()  # md127 degraded (and recovering)
    evo = sim("raid10-evo").probe()  # md127 resyncing
    blank = sim("blank").probe()
    deg = host_line(HostStatus("a", cable))
    assert deg.startswith("degraded: md127 (raid5, 1 missing)") and "syncing: md127" in deg
    syncing = host_line(HostStatus("b", evo))
    assert syncing.startswith("syncing: md127 resync") and "ETA" in syncing
    assert host_line(HostStatus("c", blank)) == "no md arrays"
    assert host_line(HostStatus("d")) == "probing…"
    gone = host_line(HostStatus("e", evo, unreachable="no answer\x1b[31m within 3 s"))
    assert gone == "unreachable: no answer\\x1b[31m within 3 s"  # ssh's words, escaped
    f = Finding("error", "smart-failing", "sda", "SMART says the disk is failing", "…")
    advice = Finding("advice", "scheduler", "sdb", "another I/O scheduler", "…")
    with_f = host_line(HostStatus("b", evo, findings=(advice, f)))
    assert with_f.endswith("error: SMART says the disk is failing (sda)")
    line = fleet_line(
        [
            HostStatus("a", cable),
            HostStatus("b", evo),
            HostStatus("c", blank),
            HostStatus("e", evo, unreachable="x"),
        ]
    )
    assert line == "4 hosts · degraded: a · syncing: a, b · unreachable: e"
    assert fleet_line([HostStatus("c", blank)]) == "1 host, all calm"
    others = [HostStatus("a", cable), HostStatus("b", evo), HostStatus("e", unreachable="x")]
    assert others_line(others, "a") == "other hosts: syncing b · unreachable e"
    assert others_line(others[:2], "b") == "other hosts: degraded a · syncing a"
    assert others_line([HostStatus("c", blank), HostStatus("b", evo)], "b") is None


# ---- the hosts view ----------------------------------------------------------------------


async def test_hosts_view_lists_each_host_with_its_rollup_and_the_fleet_in_the_banner() -> None:
    hosts = [("a", sim("raid5-cable")), ("b", sim("raid10-evo")), ("c", sim("blank"))]
    app = fleet_app(hosts)
    async with app.run_test(size=(200, 30)) as pilot:  # wide enough for every whole line
        assert isinstance(app.screen, HostsScreen)
        await wait_for(pilot, lambda: all(s.machine is not None for s in app.fleet))
        # each host audited by its own worker (with its probe): the line names its worst finding
        await wait_for(pilot, lambda: all(s.findings is not None for s in app.fleet))
        await pilot.pause()
        shown = rows(app)
        assert list(shown) == ["a", "b", "c"]
        found = {s.host: s.findings for s in app.fleet}
        for host, backend in hosts:  # each line is that host's own roll-up
            assert shown[host] == host_line(HostStatus(host, backend.probe(), findings=found[host]))
        assert shown["a"].startswith("degraded: md127")
        assert "syncing: md127 resync" in shown["b"]
        b = banner(app)
        assert "3 hosts · degraded: a · syncing: a, b" in b
        assert app.probed is None  # no host open: nothing of the main view runs
        worst = worst_finding(found["a"])
        assert worst is not None and worst.severity != "advice"
        assert shown["a"].endswith(" · " + finding_text(worst))


async def test_enter_opens_a_host_and_H_returns_to_the_hosts_view() -> None:
    a, b = sim("raid10-evo"), sim("raid6-wd")
    app = fleet_app([("a", a), ("b", b)])
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: all(s.machine is not None for s in app.fleet))
        await pilot.press("down", "enter")  # the second row: b
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await wait_for(pilot, lambda: app.machine is not None and app.storage_tree.keys)
        assert app.host == "b" and app.backend is b
        assert app.machine is not None and {x.name for x in app.machine.arrays} == {"md0"}
        header = plain(app.screen.query_one(HeaderBanner))
        assert "@ b" in header and "DEGRADED" in header  # b's own banner
        assert "other hosts: syncing a" in header  # and the trouble elsewhere
        await wait_for(pilot, lambda: app.audit_count > 0)
        await pilot.press("H")
        await wait_for(pilot, lambda: isinstance(app.screen, HostsScreen))
        assert app.host is None and app.idle
        # b's findings came with its audit: its line names the worst one
        (sb,) = [s for s in app.fleet if s.host == "b"]
        assert sb.findings is not None
        # and the other host opens with its own machine
        await pilot.press("up", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await wait_for(pilot, lambda: app.host == "a" and app.machine is not None)
        assert app.machine is not None and {x.name for x in app.machine.arrays} == {"md127"}
        assert rollup(app.machine).syncing and not rollup(app.machine).degraded


async def test_an_unreachable_host_is_a_note_while_the_others_work() -> None:
    hosts = [("a", sim("raid10-evo")), ("gone", Unreachable.from_scenario("blank"))]
    app = fleet_app(hosts)  # type: ignore[arg-type]
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: "gone" in rows(app) and "unreachable" in rows(app)["gone"])
        await wait_for(pilot, lambda: rows(app)["a"].startswith("syncing"))
        assert rows(app)["gone"] == "unreachable: no answer from gone within 3 s"
        assert "unreachable: gone" in banner(app)
        await pilot.press("enter")  # a works
        await wait_for(pilot, lambda: app.host == "a" and app.machine is not None)


LONG_SSH_ERROR = (
    "ssh: connect to host fleet3.example.net port 22: No route to host (kex_exchange_"
    "identification: read: Connection reset by peer; ControlPath /run/user/0/raidman-ssh/x)"
)


class FarAway(SimulatedBackend):
    def probe(self) -> Machine:
        raise BackendError(LONG_SSH_ERROR)


async def test_at_80_columns_a_long_reason_is_cut_in_the_row_and_whole_below() -> None:
    """An ssh error is often longer than 80 columns: its row is cut with an ellipsis to the
    screen's width (no sideways scrolling to see the state), and the highlighted host's state
    is shown in full, wrapped, under the table."""
    hosts = [("fleet3", FarAway.from_scenario("blank")), ("a", sim("raid10-evo"))]
    app = fleet_app(hosts)  # type: ignore[arg-type]
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: "unreachable" in rows(app).get("fleet3", ""))
        await pilot.pause()
        row = rows(app)["fleet3"]
        assert row.endswith("…") and row.startswith("unreachable: ssh: connect to host")
        table = app.screen.query_one("#hosts-table", DataTable)
        assert table.virtual_size.width <= 80, table.virtual_size
        detail = app.screen.query_one("#host-detail", Static)
        text = " ".join(plain(detail, width=78).split())
        assert text == "fleet3: unreachable: " + LONG_SSH_ERROR
        await pilot.press("down")  # the detail follows the highlighted row
        await wait_for(pilot, lambda: plain(detail, width=78).startswith("a: "))


async def test_a_host_that_never_answers_is_unreachable_after_the_timeout() -> None:
    Hanging.release.clear()
    hang = Hanging.from_scenario("blank")
    app = fleet_app([("a", sim("blank")), ("slow", hang)], host_timeout=0.2)  # type: ignore[list-item]
    try:
        async with app.run_test(size=(120, 30)) as pilot:
            await wait_for(pilot, lambda: rows(app)["a"] == "no md arrays")
            assert rows(app)["slow"] == "probing…"
            await pilot.pause(0.3)
            app.refresh_fleet()  # the timer's tick: the probe has been out too long
            await wait_for(pilot, lambda: rows(app)["slow"].startswith("unreachable"))
            assert rows(app)["slow"] == "unreachable: no answer within 0.2 s"
            n = len(app.workers)
            app.refresh_fleet()  # never a second probe of the same host while one is out
            assert len([w for w in app.workers if w.name == "hosts:slow"]) == 1
            assert len(app.workers) <= n + 1
    finally:
        Hanging.release.set()


async def test_a_plan_on_a_host_shows_it_runs_there_is_audited_and_saved_with_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    a, b = sim("blank"), sim("raid6-wd")
    app = fleet_app([("a", a), ("b", b)])
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_for(pilot, lambda: all(s.machine is not None for s in app.fleet))
        app.open_host("b")
        await wait_for(pilot, lambda: app.machine is not None and app.storage_tree.keys)
        app.refresh_sample()
        await wait_for(pilot, lambda: app.sample_count > 0)
        await pilot.press("b")  # boost md0's sync on b
        await wait_for(pilot, lambda: isinstance(app.screen, PlanPreviewScreen))
        preview = app.screen
        assert isinstance(preview, PlanPreviewScreen)
        assert preview.backend is b and preview.host == "b"
        assert plain(preview.query_one("#pp-host", Static)).strip() == "on host b (over ssh)"
        await pilot.press("s")
        await pilot.pause()
        preview.query_one("#pp-save-path").value = "boost.json"  # type: ignore[attr-defined]
        await pilot.press("enter")
        await wait_for(pilot, lambda: preview.saved_path is not None)
        assert plan_host(str(tmp_path / "boost.json")) == "b"
        before = b.read_text("/proc/sys/dev/raid/speed_limit_max")
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: preview.report is not None, timeout=10)
        assert preview.report is not None and preview.report.ok
        assert b.read_text("/proc/sys/dev/raid/speed_limit_max") != before  # ran on b
        assert a.read_text("/proc/sys/dev/raid/speed_limit_max") == before  # not on a
    entries = [e for e in AuditLog().read_entries() if e.plan]
    assert entries and all(e.plan.endswith(" @ b") for e in entries)


async def test_one_host_is_the_main_view_as_before_with_the_host_in_plans() -> None:
    backend = sim("raid10-evo")
    app = RaidmanApp(backend, host="fleet1", probe_interval=0, sample_interval=0)
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: app.machine is not None)
        assert isinstance(app.screen, MainScreen) and not app.hosts
        await pilot.press("H")  # no hosts view to go back to
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert isinstance(app.audit_log(), AuditLog) and app.audit_log().host == "fleet1"  # type: ignore[attr-defined]


class Slow(SimulatedBackend):
    """A host whose probe takes a while, counting how many run at once."""

    def probe(self) -> Machine:
        with LOCK:
            self.running = getattr(self, "running", 0) + 1
            self.most = max(getattr(self, "most", 0), self.running)
            self.probes = getattr(self, "probes", 0) + 1
        try:
            time.sleep(0.3)
            return super().probe()
        finally:
            with LOCK:
                self.running -= 1


LOCK = threading.Lock()


async def test_a_host_is_never_probed_twice_at_once_by_the_view_and_the_hosts_view() -> None:
    slow = Slow.from_scenario("raid10-evo", clock=SimClock.manual())
    app = fleet_app([("a", sim("blank")), ("slow", slow)])
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: getattr(slow, "probes", 0) == 1)
        app.open_host("slow")  # its hosts-view probe is still out: the main probe waits for it
        await wait_for(pilot, lambda: app.probe_count > 0 and app.probed is not None)
        assert slow.most == 1 and slow.probes == 2
        await pilot.press("H")
        await wait_for(pilot, lambda: isinstance(app.screen, HostsScreen))
        app.open_host("slow")
        app.refresh_fleet()  # the open host is left to its own view
        await wait_for(pilot, lambda: "slow" not in app.hosts_watch.busy)
        assert slow.most == 1


async def test_each_hosts_syncs_are_recorded_in_its_own_store_not_this_machines() -> None:
    # two hosts with the same array (name and UUID: a cloned fleet), both resyncing
    a, b = sim("raid10-evo"), sim("raid10-evo")
    app = RaidmanApp(a, hosts=[("a", a), ("b", b)], probe_interval=0, sample_interval=0.2)

    def running(host: str) -> list[str]:
        store = SnapshotStore.open(host_state_dir(host) / DB_FILE)
        try:
            return [f"{e.array}:{e.action}" for e in store.all_syncs()]
        finally:
            store.close()

    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: all(s.machine is not None for s in app.fleet))
        await pilot.press("enter")  # a
        await wait_for(pilot, lambda: app.host == "a" and app.sample_count > 2, timeout=20)
        await wait_for(pilot, lambda: bool(running("a")), timeout=20)
        assert running("b") == []
        await pilot.press("H")
        await wait_for(pilot, lambda: isinstance(app.screen, HostsScreen))
        await pilot.press("down", "enter")  # b
        await wait_for(pilot, lambda: app.host == "b" and bool(running("b")), timeout=20)
        assert len(running("a")) == 1  # a's record stays a's, not doubled by b's sync
    local = SnapshotStore.open()  # this machine's records: none of the hosts' syncs
    try:
        assert local.all_syncs() == []
    finally:
        local.close()


class Counted(SimulatedBackend):
    """A host counting its probes."""

    def probe(self) -> Machine:
        self.probes = getattr(self, "probes", 0) + 1
        return super().probe()


async def test_listed_hosts_are_probed_every_third_interval_and_syncing_ones_every_interval(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Issue 29, item 4: the hosts view watches at a lower rate than an open host; a host whose
    line shows a sync keeps the probe interval (its ETA moves). The hosts view's clock is a
    hand-moved one (the timers' interval is long enough not to fire during the test)."""
    import types

    import app.ui.fleet as fleet_mod

    clock = [1000.0]
    monkeypatch.setattr(fleet_mod, "time", types.SimpleNamespace(monotonic=lambda: clock[0]))
    calm = Counted.from_scenario("blank", clock=SimClock.manual())
    syncing = Counted.from_scenario("raid10-evo", clock=SimClock.manual())
    app = RaidmanApp(
        calm, hosts=[("calm", calm), ("sync", syncing)], probe_interval=600, sample_interval=0
    )
    async with app.run_test(size=(120, 30)) as pilot:
        await wait_for(pilot, lambda: all(s.machine is not None for s in app.fleet))
        assert [s.host for s in app.fleet if s.syncing] == ["sync"]
        for step in range(1, 4):  # three probe intervals later
            clock[0] = 1000.0 + 600 * step
            app.refresh_fleet()
            await wait_for(pilot, lambda: not app.hosts_watch.busy)
        assert (calm.probes, syncing.probes) == (2, 4)
