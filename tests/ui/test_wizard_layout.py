"""Issue 11, "wizard forms a person can fill in": every field of every wizard can be scrolled
into view and then lies inside the screen with a usable width, at 80×24 and 200×60 (the second
input of a two-field row used to get zero width, the VG input was cut); device pickers list
eligible devices with IEC size, medium and model, and ineligible ones disabled with the reason."""

from __future__ import annotations

from typing import Any

import pytest
from textual.widget import Widget
from textual.widgets import Button, Checkbox, Input, Select, SelectionList

from app.ui.app import RaidmanApp
from app.ui.screens.wizards import (
    MEMBER_ACTIONS,
    SYNC_ACTIONS,
    CreateArrayWizard,
    DevicePicker,
    FilesystemWizard,
    MemberWizard,
    SyncWizard,
)
from app.ui.screens.wizards.sync_actions import action_choices
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import wait_ready

FIELDS = (Input, Select, SelectionList, Checkbox, Button)
WIZARD_KEYS = {"n": CreateArrayWizard, "a": MemberWizard, "t": SyncWizard, "v": FilesystemWizard}
SIZES = ((80, 24), (200, 60))


def _app(scenario: str) -> RaidmanApp:
    backend = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())
    return RaidmanApp(backend, probe_interval=0, sample_interval=0)


async def _every_field_visible(pilot: Any, screen: Any) -> int:
    width, height = screen.size
    checked = 0
    for w in screen.query("*"):
        if not isinstance(w, FIELDS) or not w.display:
            continue
        if any(not a.display for a in w.ancestors if isinstance(a, Widget)):
            continue
        w.scroll_visible(animate=False, immediate=True)
        await pilot.pause()
        r = w.region
        assert r.width >= 8, f"{w!r}: width {r.width} at {width}x{height}"
        assert r.x >= 0 and r.right <= width, f"{w!r}: {r} outside {width} columns"
        assert r.y >= 0 and r.bottom <= height, f"{w!r}: {r} outside {height} rows"
        checked += 1
    return checked


@pytest.mark.parametrize(("width", "height"), SIZES, ids=[f"{w}x{h}" for w, h in SIZES])
@pytest.mark.parametrize("key", sorted(WIZARD_KEYS))
async def test_every_field_inside_the_screen(key: str, width: int, height: int) -> None:
    app = _app("raid10-evo")
    async with app.run_test(size=(width, height)) as pilot:
        await wait_ready(pilot)
        await pilot.press(key)
        await pilot.pause()
        wiz = app.screen
        assert isinstance(wiz, WIZARD_KEYS[key])
        n = await _every_field_visible(pilot, wiz)
        assert n >= 4  # at least: a choice, a second field, Preview and Back
        if isinstance(wiz, MemberWizard):  # no action yet: every field shown, the old grow row too
            assert wiz.query_one("#mb-count", Input).region.width > 8
        # the fields each action shows (member and sync wizards hide what an action ignores)
        for action_id, actions in (("#mb-action", MEMBER_ACTIONS), ("#sy-action", SYNC_ACTIONS)):
            if not wiz.query(action_id):
                continue
            for _, value in actions:
                if isinstance(wiz, SyncWizard) and value not in dict(
                    (v, k) for k, v in action_choices(wiz.machine, wiz.array)
                ):
                    continue  # not offered for this array (busy: no check; RAID-10: no cache)
                wiz.query_one(action_id, Select).value = value
                await pilot.pause()
                assert await _every_field_visible(pilot, wiz) >= 4, value
        if isinstance(wiz, FilesystemWizard):  # the LVM fields (VG, LV, size) once LVM is on
            wiz.query_one("#fs-lvm", Checkbox).value = True
            await pilot.pause()
            assert wiz.query_one("#fs-size", Input).display
            assert await _every_field_visible(pilot, wiz) >= 8


async def test_member_wizard_opens_on_the_selected_member_with_no_action() -> None:
    app = _app("raid5-cable")
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        m = app.machine
        assert m is not None
        array = next(a for a in m.arrays if not a.is_container)
        member = array.members[-1].device
        app.go_to(array.name)
        await pilot.pause()
        # the member link under the array, as an admin would select it
        tree = app.storage_tree
        for ref in tree.refs():
            if ref.via == array.name and ref.name == member:
                tree.go_to(ref.key)
                break
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        wiz = app.screen
        assert isinstance(wiz, MemberWizard)
        assert wiz.query_one("#mb-array", Select).value == array.name
        assert wiz.query_one("#mb-action", Select).value is Select.NULL  # no destructive default
        assert app.selected is not None and app.selected.name == member
        assert wiz.query_one("#mb-device", Select).value == member
        await pilot.click("#wz-preview")
        await pilot.pause()
        assert app.screen is wiz  # nothing chosen: no plan, an explanation instead
        assert "choose an action" in str(wiz.query_one("#wz-error").render())


async def test_device_picker_shows_sizes_and_why_not() -> None:
    app = _app("raid10-evo")
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        await pilot.press("n")
        await pilot.pause()
        picker = app.screen.query_one("#ca-devices", DevicePicker)
        lines = {
            str(picker.get_option_at_index(i).value): (
                picker.get_option_at_index(i).prompt,
                picker.get_option_at_index(i).disabled,
            )
            for i in range(picker.option_count)
        }
        members = {m.device for a in app.machine.arrays for m in a.members}  # type: ignore[union-attr]
        assert members
        for dev in members:
            if dev in lines:
                text, disabled = lines[dev]
                assert disabled, dev
                assert "md" in str(text), text  # "member of md127"
        texts = " ".join(str(t) for t, _ in lines.values())
        assert "GiB" in texts or "TiB" in texts  # IEC, as the tree
        assert " GB " not in texts


async def test_member_wizard_on_a_selected_disk_picks_its_member_partition() -> None:
    app = _app("raid5-cable")  # md127 is built from sda1..sdd1
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        assert app.go_to("sdc")
        await pilot.pause()
        await pilot.press("a")
        await pilot.pause()
        wiz = app.screen
        assert isinstance(wiz, MemberWizard)
        assert wiz.query_one("#mb-array", Select).value == "md127"
        assert wiz.query_one("#mb-device", Select).value == "sdc1"


@pytest.mark.parametrize("scenario", ["raid10-evo", "blank", "big"])
async def test_80x24_create_shows_the_spares_list_without_scrolling(scenario: str) -> None:
    """Issue 39: at 80×24 the create wizard's Spares list was below the screen's edge (only
    its label and top border); packed, both lists show rows on the first screen."""
    app = _app(scenario)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("n")
        await pilot.pause(0.3)
        screen = app.screen
        assert isinstance(screen, CreateArrayWizard)
        for wid in ("#ca-devices", "#ca-spares"):
            r = screen.query_one(wid, DevicePicker).region
            assert r.height >= 5 and r.bottom <= 24 - 4, (wid, r)  # above buttons and footer


async def test_the_first_space_ticks_and_ticked_rows_look_different() -> None:
    """Issue 39: after Tab into a device list no row was highlighted (the first Space did
    nothing), and ticked and unticked rows both showed "▐X▌" (told apart by colour only)."""
    from tests.ui.helpers import screen_lines

    app = _app("blank")
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("n")
        await pilot.pause(0.3)
        await pilot.press("tab", "space")
        await pilot.pause(0.1)
        picker = app.screen.query_one("#ca-devices", DevicePicker)
        assert picker.selected == ["nvme0n1"]
        rows = [ln for ln in screen_lines(app) if "nvme" in ln]
        assert "▐X▌ nvme0n1" in rows[0] and "▐ ▌ nvme1n1" in rows[1], rows[:2]
