"""AuditLogScreen over a real audit log written through app.plans.audit_log's API."""

from __future__ import annotations

import os
import shlex
from datetime import datetime
from pathlib import Path

import pytest
from rich.text import Text
from textual.app import App
from textual.widgets import DataTable, Static

from app.plans.audit_log import AuditLog, default_path, read_entries
from app.ui.screens.audit_log import AuditLogScreen

MKFS = ("mkfs.ext4", "-L", "my data", "-E", "stride=8,stripe-width=16", "/dev/md127")
CREATE = (
    "mdadm",
    "--create",
    "/dev/md127",
    "--level=10",
    "--raid-devices=4",
    "/dev/nvme0n1",
    "/dev/nvme1n1",
    "/dev/nvme2n1",
    "/dev/nvme3n1",
)
TEE = ("tee", "/sys/block/md127/md/stripe_cache_size")


class Host(App[None]):
    pass


def text(cell: object) -> str:
    return cell.plain if isinstance(cell, Text) else str(cell)


def static_text(screen: AuditLogScreen, id_: str) -> str:
    return text(screen.query_one(f"#{id_}", Static).content)


def step(
    a: AuditLog,
    plan: str,
    argv: tuple[str, ...],
    exit_code: int,
    duration_s: float,
    *,
    run: str,
    forced: tuple[str, ...] = (),
    stdin: str | None = None,
    stdin_from: tuple[str, ...] | None = None,
    stderr: str = "",
) -> None:
    """What the executor writes for one step: "started" before it runs, "executed" after."""
    a.record_start(
        plan=plan, run=run, step=1, argv=argv, forced=forced, stdin=stdin, stdin_from=stdin_from
    )
    a.record_finish(
        plan=plan,
        run=run,
        step=1,
        argv=argv,
        forced=forced,
        exit_code=exit_code,
        duration_s=duration_s,
        stderr=stderr,
        stdin_from=stdin_from,
    )


@pytest.fixture
def log(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AuditLog:
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    a = AuditLog()
    assert a.path == tmp_path / "audit.log" == default_path()
    step(a, "Create RAID-10 md127", CREATE, 0, 1.25, run="r1")
    step(a, "Tune md127", TEE, 0, 0.01, run="r2", stdin_from=("echo", "8192"))
    step(
        a,
        "ext4 on md127",
        MKFS,
        1,
        75.0,
        run="r3",
        forced=("existing-signature",),
        stderr="mkfs.ext4: Device size reported to be zero.\n",
    )
    a.record_refusal(plan="Add nvme4n1 to md127", reason="nvme4n1 is mounted at /srv")
    assert a.last_error is None
    return a


async def test_rows_newest_first_with_shell_lines_and_coloured_exit(log: AuditLog) -> None:
    entries = [e for e in read_entries() if e.event != "started"]
    assert len(read_entries()) == 7 and len(entries) == 4
    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = AuditLogScreen()
        await app.push_screen(screen)
        await pilot.pause()
        assert screen.problem is None
        table = screen.query_one("#al-table", DataTable)
        assert table.display and table.row_count == 4
        rows = [[text(c) for c in table.get_row_at(i)] for i in range(4)]
        # newest first: the refusal, the failed mkfs, the tee, the create
        assert [r[2] for r in rows] == [
            "Add nvme4n1 to md127",
            "ext4 on md127",
            "Tune md127",
            "Create RAID-10 md127",
        ]
        expected_times = [
            datetime.fromtimestamp(e.ts).strftime("%Y-%m-%d %H:%M:%S") for e in entries
        ]
        assert [r[0] for r in rows] == expected_times[::-1]
        assert rows[1][3] == "mkfs.ext4 -L 'my data' -E stride=8,stripe-width=16 /dev/md127"
        assert shlex.split(rows[1][3]) == list(MKFS)
        assert rows[2][3] == "echo 8192 | tee /sys/block/md127/md/stripe_cache_size"
        assert rows[3][3] == shlex.join(CREATE)
        assert rows[0][3] == "nvme4n1 is mounted at /srv"  # a refusal has no command: its reason
        assert [r[4] for r in rows] == ["refused", "1", "0", "0"]
        exit_styles = [str(table.get_row_at(i)[4].style) for i in range(4)]
        assert "yellow" in exit_styles[0] and "red" in exit_styles[1] and "green" in exit_styles[2]
        assert rows[1][5] == "1m 15s" and rows[3][5] == "1.2s"  # as the run screen said it
        assert rows[1][6] == "forced: existing-signature" and rows[3][6] == ""
        assert rows[0][1] == entries[0].user

        # the detail follows the cursor; the top row is the refusal
        detail = static_text(screen, "al-detail")
        assert "reason: nvme4n1 is mounted at /srv" in detail
        await pilot.press("down")
        await pilot.pause()
        detail = static_text(screen, "al-detail")
        assert "$ mkfs.ext4 -L 'my data' -E stride=8,stripe-width=16 /dev/md127" in detail
        assert "exit 1 after 1m 15s" in detail
        assert "mkfs.ext4: Device size reported to be zero." in detail  # the stderr tail
        assert "forced: existing-signature" in detail

        await pilot.press("c")
        await pilot.pause()
        assert app.clipboard == shlex.join(MKFS)

        await pilot.press("escape")
        await pilot.pause()
        assert app.screen is not screen
        assert not screen.is_attached


async def test_reload_picks_up_new_entries(log: AuditLog) -> None:
    app = Host()
    async with app.run_test(size=(100, 24)) as pilot:
        screen = AuditLogScreen(log.path)
        await app.push_screen(screen)
        await pilot.pause()
        table = screen.query_one("#al-table", DataTable)
        assert table.row_count == 4
        step(
            log, "Fail nvme1n1", ("mdadm", "/dev/md127", "--fail", "/dev/nvme1n1"), 0, 0.2, run="r4"
        )
        await pilot.press("r")
        await pilot.pause()
        assert table.row_count == 5
        # 100 columns: time, exit, took and the command; the plan's title is in the detail
        row = [text(c) for c in table.get_row_at(0)]
        assert row[1:] == ["0", "0.2s", "mdadm /dev/md127 --fail /dev/nvme1n1"]
        assert "Fail nvme1n1" in static_text(screen, "al-detail")
        assert static_text(screen, "al-message").startswith("5 entries, newest first")


async def test_missing_log_says_nothing_was_executed(tmp_path: Path) -> None:
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = AuditLogScreen(tmp_path / "audit.log")
        await app.push_screen(screen)
        await pilot.pause()
        msg = static_text(screen, "al-message")
        assert msg.startswith(f"No audit log yet at {tmp_path / 'audit.log'}")
        assert not screen.query_one("#al-table", DataTable).display
        assert not screen.query_one("#al-detail", Static).display
        await pilot.press("c")  # nothing to copy: no crash, a notice
        await pilot.pause()
        assert app.clipboard == ""


async def test_garbage_and_unreadable_logs(tmp_path: Path) -> None:
    junk = tmp_path / "junk.log"
    junk.write_text('not json\n{"half": \n\n', encoding="utf-8")
    unreadable = tmp_path / "dir.log"
    unreadable.mkdir()  # opening a directory fails even for root
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = AuditLogScreen(junk)
        await app.push_screen(screen)
        await pilot.pause()
        assert "2 corrupt" in static_text(screen, "al-message")
        assert [e.event for e in screen.entries] == ["corrupt", "corrupt"]
        await pilot.press("escape")
        await pilot.pause()
        screen2 = AuditLogScreen(unreadable)
        await app.push_screen(screen2)
        await pilot.pause()
        msg = static_text(screen2, "al-message")
        assert msg.startswith(f"Cannot read the audit log {unreadable}: ")
        assert screen2.problem == msg


async def test_corrupt_and_unfinished_entries_are_shown_as_such(log: AuditLog) -> None:
    """Entries of every wrong shape: each one a "corrupt" row with the line as read, no crash;
    a step with a "started" entry but no end is a "no end" row."""
    log.record_start(plan="Grow md127", run="r9", step=1, argv=("mdadm", "--grow", "/dev/md127"))
    bad = [
        "not json",
        '{"half": ',
        "[1, 2, 3]",
        '"a string"',
        '{"event": "executed"}',
        '{"event": "executed", "ts": "yesterday"}',
        '{"event": "executed", "ts": 1e300}',
        '{"event": "executed", "ts": 1, "argv": "rm -rf /"}',
        '{"event": "executed", "ts": 1, "argv": [1, 2]}',
        '{"event": "executed", "ts": 1, "exit_code": "0"}',
        '{"event": "launched", "ts": 1}',
        '{"event": "executed", "ts": 1, "user": {"x": 1}}',
        '{"event": "executed", "ts": 1, "duration_s": [1]}',
        '{"event": "refused", "ts": 1, "reason": null, "forced": "x"}',
        '{"event": "executed", "ts": 1, "plan": "\\u001b[2J\\u001b[Hgone"}',  # escape: fine
    ]
    with log.path.open("ab") as fh:
        for line in bad:
            fh.write(line.encode() + b"\n")
        fh.write(b"\x00\x01\x02 binary \xff\n")  # not even UTF-8
        bad.append("binary")
    app = Host()
    async with app.run_test(size=(120, 30)) as pilot:
        screen = AuditLogScreen(log.path)
        await app.push_screen(screen)
        await pilot.pause()
        table = screen.query_one("#al-table", DataTable)
        corrupt = [e for e in screen.entries if e.corrupt]
        assert len(corrupt) == len(bad) - 1  # the escape sequence line is a valid entry
        assert "15 corrupt" in static_text(screen, "al-message")
        rows = [[text(c) for c in table.get_row_at(i)] for i in range(table.row_count)]
        assert rows[0][2] == "corrupt entry" and rows[0][4] == "corrupt"
        assert rows[0][3] == "\\x00\\x01\\x02 binary \ufffd"  # shown escaped, as read
        shown = next(r for r in rows if "gone" in r[2])
        assert shown[2] == "\\x1b[2J\\x1b[Hgone"  # control characters escaped
        grow = next(r for r in rows if r[2] == "Grow md127")
        assert grow[4] == "no end"
        for _ in range(table.row_count):  # walk every row: the detail never crashes
            await pilot.press("down")
            await pilot.pause()
        assert app.screen is screen and screen.is_attached
        await pilot.press("c")  # a corrupt row has nothing to copy: a notice, no crash
        await pilot.pause()
        assert app.screen is screen


async def test_a_fifo_as_the_audit_log_is_a_message_not_a_hang(tmp_path: Path) -> None:
    """Issue 23, item 10: opening the L screen on a FIFO blocked the TUI for ever."""
    fifo = tmp_path / "audit.log"
    os.mkfifo(fifo)
    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = AuditLogScreen(fifo)
        await app.push_screen(screen)
        await pilot.pause()
        msg = static_text(screen, "al-message")
        assert msg.startswith(f"Cannot read the audit log {fifo}: ") and "FIFO" in msg


async def test_80x24_the_command_wraps_whole(log: AuditLog) -> None:
    """Issue 39: at 80 columns the command was cut at the screen's edge ("mdadm --detail
    --br"): the narrow table has time, exit, took and the command, which wraps, whole."""
    from tests.ui.helpers import screen_lines

    app = Host()
    async with app.run_test(size=(80, 24)) as pilot:
        screen = AuditLogScreen(log.path)
        await app.push_screen(screen)
        await pilot.pause()
        assert "--create" not in static_text(screen, "al-detail")  # the refusal's detail
        shown = " ".join(" ".join(ln.split()) for ln in screen_lines(app))
        assert all(word in shown for word in CREATE), shown  # its row, wrapped, every word
        for ln in screen_lines(app):
            assert len(ln.rstrip()) <= 80
