"""The kernel's log for what is selected (app/kernel_log.py, app/parsers/kernel_log.py): read
through the backend (journalctl -k -o json, else dmesg), bounded, escaped, matched by whole
kernel names; the simulator's md lines follow what md prints (raid5_error's "md/raid:",
raid1_error's "md/raid1:")."""

from __future__ import annotations

import json
from collections.abc import Sequence

import pytest

from app.backend import CommandResult
from app.kernel_log import (
    KernelLog,
    journal_argv,
    kernel_log_json,
    lines_for,
    names_for,
    read_kernel_log,
)
from app.parsers.kernel_log import KernelLine, parse_dmesg, parse_journal_json
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock


def test_journal_json_lines_bounded_and_total() -> None:
    rows = [
        {
            "MESSAGE": f"line {i}",
            "__REALTIME_TIMESTAMP": str(1_700_000_000_000_000 + i),
            "PRIORITY": "6",
        }
        for i in range(50)
    ]
    text = "\n".join(json.dumps(r) for r in rows)
    text += '\nnot json\n{"MESSAGE": 3}\n{"MESSAGE": [104, 105, 255]}\n' + "{" + "x" * 70000 + "\n"
    lines = parse_journal_json(text, limit=10)
    assert len(lines) == 10
    assert lines[0].text == "line 41" and lines[-1].text == "hi\ufffd"  # bytes: replaced
    assert lines[0].at == 1_700_000_000.000041 and lines[0].priority == 6


def test_dmesg_iso_and_monotonic() -> None:
    text = (
        "2026-11-25T13:24:00,123456+00:00 md/raid1:md0: Disk failure on sdb1, disabling device.\n"
        "[   12.500000] nvme nvme0: I/O 12 QID 3 timeout\n"
        "garbage\n"
    )
    a, b = parse_dmesg(text)
    assert a.at is not None and abs(a.at - 1795613040.123456) < 1e-3
    assert b.since_boot == 12.5 and b.at is None


def test_matching_is_by_whole_kernel_names() -> None:
    be = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    m = be.probe()
    log = KernelLog(
        "journalctl -k",
        tuple(
            KernelLine(t)
            for t in (
                "md/raid:md0: Disk failure on sdb1, disabling device.",
                "sd 1:0:0:0: [sdb] tag#0 FAILED Result: hostbyte=DID_OK",
                "I/O error, dev sdbc, sector 1",  # another disk
                "md/raid:md10: something",  # another array
                "sdb1x is not a name",
            )
        ),
    )
    disk = [ln.text for ln in lines_for(log, names_for(m, "sdb"))]
    assert disk == [
        "sd 1:0:0:0: [sdb] tag#0 FAILED Result: hostbyte=DID_OK",  # newest first
        "md/raid:md0: Disk failure on sdb1, disabling device.",
    ]
    arr = [ln.text for ln in lines_for(log, names_for(m, "md0"))]
    assert arr == ["md/raid:md0: Disk failure on sdb1, disabling device."]


class _Runner:
    def __init__(self, answers: dict[str, CommandResult]) -> None:
        self.answers = answers
        self.ran: list[tuple[str, ...]] = []

    def run(self, argv: Sequence[str], **_: object) -> CommandResult:
        self.ran.append(tuple(argv))
        return self.answers.get(argv[0], CommandResult(tuple(argv), 127, "", "not found"))


def test_dmesg_where_there_is_no_journal_and_escaped() -> None:
    r = _Runner(
        {
            "journalctl": CommandResult((), 1, "", "No journal files were found.\n"),
            "dmesg": CommandResult((), 0, "[ 1.0] md0: \x1b]0;pwned\x07 title\n", ""),
        }
    )
    log = read_kernel_log(r)  # type: ignore[arg-type]
    assert r.ran[0] == journal_argv() and r.ran[1][0] == "dmesg"
    assert log.source == "dmesg" and log.note and "No journal files" in log.note
    assert "\x1b" not in log.lines[0].text and "\\x1b" in log.lines[0].text
    none = read_kernel_log(_Runner({}))  # type: ignore[arg-type]
    assert none.source is None and none.note and "not found" in none.note


def test_simulated_failure_lands_in_the_members_section() -> None:
    """raid6-wd opens with sdb's failure in the log; a member failed later by mdadm --fail
    gets md's Disk failure line (raid5_error: "md/raid:md0: Disk failure on sdc1")."""
    clk = SimClock.manual()
    be = SimulatedBackend.from_scenario("raid6-wd", clock=clk)
    m = be.probe()
    log = read_kernel_log(be)
    assert log.source == "journalctl -k"
    sdb = [ln.text for ln in lines_for(log, names_for(m, "sdb"))]
    assert (
        "I/O error, dev sdb, sector 1234567890 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0"
        in sdb
    )
    clk.advance(5)
    assert be.run(["mdadm", "/dev/md0", "--fail", "/dev/sdc1"]).ok
    log = read_kernel_log(be)
    sdc = lines_for(log, names_for(be.probe(), "sdc1"))
    assert sdc[0].text == "md/raid:md0: Disk failure on sdc1, disabling device."
    j = kernel_log_json(log, m)
    (fail,) = [ln for ln in j["lines"] if "Disk failure on sdc1" in ln["text"]]
    assert fail["devices"] == ["md0", "sdc1"] and fail["priority"] == 2
    assert j["lines"][0]["text"] == "md/raid:md0: Operation continuing on 3 devices."
    assert j["lines"][0]["at"] >= j["lines"][-1]["at"]  # newest first


def test_over_ssh_a_self_test_is_not_a_read_but_the_log_is() -> None:
    """backends/linux/ssh.py drops its prefetched answers after a command that changes the
    machine: smartctl -t starts a self-test (the next smartctl -j -a must be read again)."""
    from backends.linux.ssh import changes_nothing

    assert changes_nothing(("smartctl", "-j", "-a", "/dev/sda"))
    assert not changes_nothing(("smartctl", "-t", "short", "/dev/sda"))
    assert changes_nothing(journal_argv())
    assert changes_nothing(("dmesg", "--time-format", "iso"))
    assert not changes_nothing(("mdadm", "/dev/md0", "--fail", "/dev/sdb1"))


@pytest.mark.parametrize(
    "bad",
    ["1" + "0" * 400, "-5", '"99999999999999999999"', '"٣٣"', "1e400", '"12a"'],
    ids=["400-digit int", "negative", "20 digits", "not ASCII", "1e400", "not a number"],
)
def test_one_bad_timestamp_costs_that_timestamp_not_the_log(bad: str) -> None:
    """A JSON integer of 400 digits in one line's __MONOTONIC_TIMESTAMP made ``mono / 1e6`` an
    OverflowError: the whole kernel log was lost (issue 37). Now that line's time is unknown,
    every line is kept, and its time is shown as what can be shown."""
    from app.kernel_log import when
    from app.parsers.kernel_log import parse_journal_json

    text = "\n".join(
        [
            '{"MESSAGE": "md0: first", "__REALTIME_TIMESTAMP": "1700000000000000"}',
            f'{{"MESSAGE": "md0: odd", "__MONOTONIC_TIMESTAMP": {bad}, '
            f'"__REALTIME_TIMESTAMP": {bad}}}',
            '{"MESSAGE": "md0: last", "__MONOTONIC_TIMESTAMP": "5000000"}',
        ]
    )
    lines = parse_journal_json(text)
    assert [ln.text for ln in lines] == ["md0: first", "md0: odd", "md0: last"]
    assert lines[2].since_boot == 5.0
    for ln in lines:
        assert when(ln.at, ln.since_boot)  # never raises
    assert when(1e300, None) == "?" and when(1e300, 2.5) == "[    2.500000]"


def test_md_sync_span_reads_md_do_sync_lines_between_two_looks() -> None:
    """md.c md_do_sync: "md: %s of RAID array %s" as it starts, "md: %s: %s done." (or
    "interrupted.") as it ends; a bitmap re-add's recovery ran 0.4 s between looks 100 and 105."""
    from app.kernel_log import KernelLog, md_sync_span
    from app.parsers.kernel_log import KernelLine

    log = KernelLog(
        "dmesg",
        (
            KernelLine("md: recovery of RAID array md127", at=40.0),  # an earlier one
            KernelLine("md: md127: recovery done.", at=45.0),
            KernelLine("md/raid10:md127: Disk failure on nvme3n1, disabling device.", at=90.0),
            KernelLine("md: recovery of RAID array md127", at=101.2),
            KernelLine("md: md127: recovery done.", at=101.6),
            KernelLine("md: data-check of RAID array md126", at=102.0),
            KernelLine("md: md126: data-check interrupted.", at=103.0),
        ),
    )
    assert md_sync_span(log, "md127", "recover", 100.0, 105.0) == (101.2, 101.6)
    assert md_sync_span(log, "md126", "check", 100.0, 105.0) == (102.0, 103.0)
    assert md_sync_span(log, "md127", "recover", 60.0, 80.0) is None  # none between those looks
    assert md_sync_span(log, "md12", "recover", 100.0, 105.0) is None  # not md127's
