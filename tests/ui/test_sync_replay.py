"""Pilot: the Sync pane on real kernel states captured in the VM (tests/fixtures/vm), one per
activity: resync, recover, check, reshape and a resync held "pending" on an auto-read-only array.
The expected percent is computed from the capture's own files: md/sync_completed, or /proc/mdstat's
count where it is ahead for the same total (sysfs prints curr_resync_completed, which md_do_sync
moves only every 1/16 of the array; mdstat prints curr_resync less what is in flight)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from app.ui.app import RaidmanApp
from backends.replay import ReplayBackend
from tests.ui.helpers import wait_for, wait_ready
from tests.vm.machine import FIXTURES_VM
from widgets.sync_pane import Line, SyncCard, title_parts

CASES = [
    ("create-raid10-syncing", "resync"),
    ("create-raid5-syncing", "recover"),
    ("raid1-checking", "check"),
    ("raid5-reshaping-3-to-4", "reshape"),
    ("raid10-member-unplugged", "pending"),
]


def _kernel_percent(capture: Path, action: str) -> str:
    md = capture / "files" / "sys" / "block" / "md0" / "md"
    if action == "pending":  # held where it stopped: resync_start of the array's resync span
        done = int((md / "resync_start").read_text())
        total = int((capture / "files" / "sys" / "block" / "md0" / "size").read_text())
    else:
        done_s, total_s = (md / "sync_completed").read_text().split("/")
        done, total = int(done_s), int(total_s)
        mdstat = (capture / "files" / "proc" / "mdstat").read_text()
        m = re.search(r"\((\d+)/(\d+)\)", mdstat)  # (done/total) in KiB
        if m and int(m.group(2)) * 2 == total:
            done = max(done, int(m.group(1)) * 2)
    return f"{done / total * 100:.1f}%"


@pytest.mark.parametrize(("capture", "action"), CASES, ids=[c for c, _ in CASES])
async def test_sync_card_for_each_captured_activity(capture: str, action: str) -> None:
    path = FIXTURES_VM / capture
    app = RaidmanApp(ReplayBackend(str(path)), probe_interval=0, sample_interval=0)
    async with app.run_test(size=(160, 48)) as pilot:
        await wait_ready(pilot)
        app.show_tab("sync")
        n = app.sample_count
        app.refresh_sample()
        await wait_for(pilot, lambda: app.sample_count > n)
        await wait_for(pilot, lambda: bool(app.main.query("#sync-md0")))
        app.refresh_sample()  # the card is composed now: fill it
        await wait_for(pilot, lambda: app.sample_count > n + 1)
        await pilot.pause()
        card = app.main.query_one("#sync-md0", SyncCard)
        text = "\n".join(line.text for line in card.query(Line))
        word, note = title_parts(action)  # "recovery onto sdf1 (rebuilding onto a member)"
        assert f"md0: {word}" in text and f"({note})" in text
        assert _kernel_percent(path, action) in text
        assert app.backend.read_only_reason  # a replay never changes anything
