"""Issue 40 item 5: every plan kind is reachable from the command palette (and the D / A keys):
searching "stop", "retire", "locate", "self-test" finds the action (``🔎 stop … No matches``
before), and each opens its wizard on the right action."""

from __future__ import annotations

from textual.command import CommandPalette, Hit

from app.ui.app import RaidmanApp
from app.ui.commands import ActionsProvider
from app.ui.screens.wizards import ArrayWizard, DiskWizard, MemberWizard
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_for, wait_ready

KINDS = ("stop", "assemble", "delete", "wipe", "prepare", "mount", "self-test", "benchmark",
         "check schedule", "qualify", "locate", "retire", "replace")  # fmt: skip


def _app() -> RaidmanApp:
    backend = SimulatedBackend.from_scenario("spare", clock=SimClock.manual())
    return RaidmanApp(backend, probe_interval=0, sample_interval=0)


async def test_the_palette_finds_every_plan_kind() -> None:
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        provider = ActionsProvider(app.screen)
        for word in KINDS:
            hits = [h async for h in provider.search(word)]
            assert hits and all(isinstance(h, Hit) for h in hits), word
            best = max(hits, key=lambda h: h.score)
            assert word.split()[0] in str(best.text).lower(), (word, str(best.text))


OPENS = [
    ("stop array", ArrayWizard, "#ar-action", "stop"),
    ("retire", DiskWizard, "#dk-action", "retire"),
    ("locate", DiskWizard, "#dk-action", "locate"),
    ("self-test", DiskWizard, "#dk-action", "smart-test"),
    ("replace a member", MemberWizard, "#mb-action", "replace"),
]


async def test_each_opens_its_wizard_on_its_action() -> None:
    """The best hit of each search opens its wizard on its action; the first one typed into the
    palette itself (typing the others costs seconds and goes through the same hits)."""
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        for i, (words, screen, field, value) in enumerate(OPENS):
            app.go_to("md0")
            await pilot.pause()
            if i == 0:
                await pilot.press("ctrl+p")
                await wait_for(pilot, lambda: isinstance(app.screen, CommandPalette))
                await pilot.press(*words)
                await pilot.pause(0.5)
                await pilot.press("enter")
            else:
                hits = [h async for h in ActionsProvider(app.screen).search(words)]
                best = max(hits, key=lambda h: h.score)
                best.command()
            await wait_for(pilot, lambda s=screen: isinstance(app.screen, s))
            assert app.screen.query_one(field).value == value, words  # type: ignore[attr-defined]
            await pilot.press("escape")
            await wait_for(pilot, lambda s=screen: not isinstance(app.screen, s))


async def test_d_and_a_open_the_disk_and_array_wizards_on_the_tree_s_selection() -> None:
    app = _app()
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        app.go_to("sdc")
        await pilot.pause()
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, DiskWizard))
        assert app.screen.query_one("#dk-device").value == "sdc"  # type: ignore[attr-defined]
        await pilot.press("escape")
        app.go_to("md0")
        await pilot.pause()
        await pilot.press("A")
        await wait_for(pilot, lambda: isinstance(app.screen, ArrayWizard))
        assert app.screen.query_one("#ar-array").value == "md0"  # type: ignore[attr-defined]
