"""Issue 11, "no key crashes anything, in any state" and "keys that behave".

Every binding (the App's and every screen's, discovered from their BINDINGS, plus ``?``, tab,
shift+tab and Esc) is pressed in every simulated scenario and on this machine's real (linux)
backend; after each key the app must still run with no exception, and Esc must bring it back
to the main screen. Inside a wizard, preview, dialog or the help, the app-wide letters must not
fire: ``q`` must not quit, ``n``/``a``/``t`` must not stack a second wizard.
"""

from __future__ import annotations

import sys
from typing import Any

import pytest
from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import TabbedContent

from app.ui.app import RaidmanApp
from app.ui.screens.audit_log import AuditLogScreen
from app.ui.screens.help import HelpScreen
from app.ui.screens.main import MainScreen
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import CreateArrayWizard, MemberWizard, SyncWizard
from backends.simulated import SimClock, SimulatedBackend, scenario_names
from tests.ui.helpers import wait_for, wait_ready

DIALOGS: tuple[type[Screen[Any]], ...] = (
    CreateArrayWizard,
    MemberWizard,
    SyncWizard,
    PlanPreviewScreen,
    AuditLogScreen,
    HelpScreen,
)
EXTRA_KEYS = ("question_mark", "tab", "shift+tab", "escape")
QUIT_KEYS = ("q", "ctrl+c")


def _keys(*owners: type[Any]) -> list[str]:
    """Every key bound by the classes' BINDINGS (``Binding("a,b", …)`` gives a and b)."""
    out: list[str] = []
    for owner in owners:
        for b in owner.BINDINGS:
            keys = b.key if isinstance(b, Binding) else b[0]
            out += [k.strip() for k in keys.split(",")]
    return list(dict.fromkeys(out))


def _closing_keys(screen: type[Any]) -> set[str]:
    """Keys a dialog binds to going back itself (Esc, and q/? on the help)."""
    return {
        k.strip()
        for b in screen.BINDINGS
        if isinstance(b, Binding) and b.action in ("close", "cancel")
        for k in b.key.split(",")
    }


def _backend(name: str) -> Any:
    if name == "linux":
        from backends.linux import LinuxBackend

        return LinuxBackend()
    return SimulatedBackend.from_scenario(name, clock=SimClock.manual())


BACKENDS = [*scenario_names(), "linux"]


def _alive(app: RaidmanApp) -> None:
    assert app.is_running, "the app exited"
    assert app._exception is None, f"exception: {app._exception!r}"


async def _back_to_main(pilot: Any, app: RaidmanApp) -> None:
    for _ in range(6):
        if isinstance(app.screen, MainScreen):
            return
        await pilot.press("escape")
        await pilot.pause()
    assert isinstance(app.screen, MainScreen), f"Esc did not go back: {app.screen!r}"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_every_binding_in_every_state(backend: str) -> None:
    if backend == "linux" and not sys.platform.startswith("linux"):
        pytest.skip("the real backend needs Linux")
    app = RaidmanApp(_backend(backend), probe_interval=0, sample_interval=0)
    # q and ctrl+c quit: pressed last
    main_keys = [k for k in _keys(RaidmanApp, MainScreen) if k not in QUIT_KEYS] + list(EXTRA_KEYS)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        for key in main_keys:
            await pilot.press(key)
            await pilot.pause()
            _alive(app)
            opened = app.screen
            if isinstance(opened, DIALOGS):
                # inside: every app-wide and main-screen letter, and the dialog's own keys
                # (but not Esc yet, and no Run: nothing may change the machine here)
                for inner in [*_keys(RaidmanApp, MainScreen), *_keys(type(opened))]:
                    if inner in {"ctrl+r", "ctrl+c"} | _closing_keys(type(opened)):
                        continue
                    if app.screen is not opened:
                        continue
                    await pilot.press(inner)
                    await pilot.pause()
                    _alive(app)
                    assert app.screen is opened or isinstance(app.screen, DIALOGS), (
                        f"{inner!r} inside {type(opened).__name__} left it for {app.screen!r}"
                    )
                    stacked = [s for s in app.screen_stack if isinstance(s, DIALOGS)]
                    assert len(stacked) <= 2, f"{inner!r} stacked {stacked}"
            await _back_to_main(pilot, app)
            _alive(app)
        await pilot.press("q")  # on the main screen q quits, as its footer says
        await pilot.pause()
        assert not app.is_running


@pytest.mark.parametrize("scenario", ["blank", "raid10-evo"])
async def test_wizard_keys_stay_inside(scenario: str) -> None:
    """q, n, a, t inside a wizard: the wizard stays the only dialog; Esc goes back one step."""
    app = RaidmanApp(_backend(scenario), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("n")
        await pilot.pause()
        wiz = app.screen
        assert isinstance(wiz, CreateArrayWizard)
        for key in ("q", "n", "a", "t", "v", "b", "L", "r"):
            await pilot.press(key)
            await pilot.pause()
            assert app.is_running and app.screen is wiz, key
        await pilot.press("escape")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)


async def test_a_on_machine_without_arrays_says_why() -> None:
    app = RaidmanApp(_backend("blank"), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("a")
        await pilot.pause()
        assert isinstance(app.screen, MainScreen)
        assert any("no md arrays" in str(n.message) for n in app._notifications)
        await pilot.press("t")  # sync/tune without arrays: the global speed limits
        await pilot.pause()
        assert isinstance(app.screen, SyncWizard)
        assert app.screen.query_one("#sy-action").value == "limits"  # type: ignore[attr-defined]


async def test_tab_keys_switch_wherever_focus_is() -> None:
    app = RaidmanApp(_backend("raid10-evo"), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        tabs = app.main.query_one(TabbedContent)
        await pilot.press("f")
        await pilot.pause()
        assert tabs.active == "findings"
        # put the focus into the pane (the Findings table), then the letters must still work
        table = app.main.query_one("#findings-view").query("DataTable").first()
        table.focus()
        await pilot.pause()
        for key, tab in (("d", "details"), ("s", "sync"), ("w", "wear"), ("e", "events"),
                         ("m", "mdstat"), ("f", "findings")):  # fmt: skip
            await pilot.press(key)
            await pilot.pause()
            assert tabs.active == tab, (key, tabs.active)


async def test_tab_and_shift_tab_move_between_tree_and_panes() -> None:
    app = RaidmanApp(_backend("raid10-evo"), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        tree = app.storage_tree
        assert app.focused is tree
        seen = []
        for _ in range(3):
            await pilot.press("tab")
            await pilot.pause()
            seen.append(app.focused)
        assert seen[0] is not tree and any(w is not tree for w in seen)
        for _ in range(3):
            await pilot.press("shift+tab")
            await pilot.pause()
        assert app.focused is tree


async def test_help_lists_the_current_screens_keys() -> None:
    app = RaidmanApp(_backend("raid10-evo"), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = " | ".join(f"{k} {w}" for k, w in app.screen.rows)
        for expect in ("n New array", "a Members", "v FS/LVM", "f Findings", "q Quit"):
            assert expect in text, text
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen))
        await pilot.press("n")
        await pilot.pause()
        app.screen.query_one("#ca-level").focus()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        text = " | ".join(f"{k} {w}" for k, w in app.screen.rows)
        assert "Preview plan" in text and "Back" in text
        # no q or n here (a form is not quit by a letter); ctrl+c quits from anywhere
        assert "q Quit" not in text and "New array" not in text, text
        assert "^c Quit" in text, text


@pytest.mark.parametrize("where", ["main", "wizard"])
async def test_ctrl_c_quits_as_in_a_terminal(where: str) -> None:
    """Issue 39: ctrl+c showed a toast ("press q to quit"), and in a form field it copied:
    a terminal user's interrupt quits, from any screen."""
    app = RaidmanApp(_backend("raid10-evo"), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        if where == "wizard":
            await pilot.press("n")
            await wait_for(pilot, lambda: isinstance(app.screen, CreateArrayWizard))
            await pilot.press("tab", "tab", "tab")  # into a text field
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_ctrl_c_asks_while_a_plan_runs() -> None:
    app = RaidmanApp(_backend("raid10-evo"), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("a")
        await wait_for(pilot, lambda: isinstance(app.screen, MemberWizard))
        app.screen.running = True  # type: ignore[attr-defined]  # as a preview while it runs
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.is_running
        assert any("ctrl+c again" in str(n.message) for n in app._notifications)
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert not app.is_running


async def test_r_says_it_probed() -> None:
    """Issue 39: r re-probed without a word: a toast says it, another what it found."""
    app = RaidmanApp(_backend("raid6-wd"), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        before = app.probe_count
        await pilot.press("r")
        await wait_for(pilot, lambda: app.probe_count > before)
        said = [str(n.message) for n in app._notifications]
        assert "probing again…" in said
        assert "probed again: 6 disk(s), 1 array(s)" in said


@pytest.mark.parametrize("after", ["t", "n", "a", "v", "b", "L", "sudo reboot"])
async def test_keys_typed_after_q_open_nothing(after: str) -> None:
    """``q`` and, before the TUI is gone, the next shell command typed ahead: the keys arrive
    in one read while the App tears its screens down. A wizard pushed then crashed on its own
    fields (NoMatches '#sy-action' on SyncWizard, a traceback and exit status 1); now nothing
    opens and the App ends as ``q`` asked."""
    from textual import events

    app = RaidmanApp(_backend("raid10-evo"), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        for k in ["q", *after]:
            app.post_message(events.Key(k, k))  # one burst, as a terminal read delivers them
        await pilot.pause(0.5)
    assert app._exception is None, repr(app._exception)
    assert app.return_code in (0, None)
