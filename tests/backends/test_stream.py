"""Running a real program with its output streamed line by line (``backends.linux.stream``, used
by ``LinuxBackend.run_streaming``), the line cutting it shares with the other backends, and the
replay/simulated backends handing the whole output over at the end."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import pytest

from backends.base import LineSplitter, Stream
from backends.linux import LinuxBackend
from backends.linux.source import HostSource
from backends.linux.stream import run_streaming
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock

PY = sys.executable


def test_a_line_arrives_while_the_program_still_runs(tmp_path: Path) -> None:
    """The program writes "first", then waits for a file that only the callback creates on
    seeing "first": without streaming it would time out."""
    flag = tmp_path / "seen"
    code = (
        "import os, sys, time\n"
        "print('first', flush=True)\n"
        f"while not os.path.exists({str(flag)!r}): time.sleep(0.01)\n"
        "print('second'); print('oops', file=sys.stderr)\n"
    )
    got: list[tuple[Stream, str]] = []

    def on_output(stream: Stream, line: str) -> None:
        got.append((stream, line))
        if line == "first":
            flag.touch()

    res = run_streaming([PY, "-c", code], on_output, timeout=20)
    assert res.returncode == 0, res.stderr
    assert got == [("stdout", "first"), ("stdout", "second"), ("stderr", "oops")]
    assert res.stdout == "first\nsecond\n" and res.stderr == "oops\n"


def test_stdin_is_fed_and_backspace_redraws_are_lines() -> None:
    code = (
        "import sys\n"
        "v = sys.stdin.read().strip()\n"
        "sys.stdout.write('Writing inode tables: ' + v + '/128' + '\\b' * 7 + ' 64/128' + '\\b' * 7)\n"
        "sys.stdout.write('done   \\n')\n"
    )
    got: list[str] = []
    res = run_streaming([PY, "-c", code], lambda s, line: got.append(line), stdin="  3\n")
    assert res.ok
    assert got == ["Writing inode tables: 3/128", " 64/128", "done   "]


def test_missing_program_timeout_and_exit_codes() -> None:
    res = run_streaming(["/nonexistent/raidman-no-such-tool"], lambda s, line: None)
    assert res.returncode == 127 and "program not found" in res.stderr
    res = run_streaming(
        [PY, "-c", "import time; time.sleep(30)"], lambda s, line: None, timeout=0.5
    )
    assert res.returncode == 124 and "timed out" in res.stderr
    res = run_streaming([PY, "-c", "raise SystemExit(3)"], lambda s, line: None)
    assert res.returncode == 3


def test_a_raising_listener_does_not_stop_the_read() -> None:
    def bad(stream: Stream, line: str) -> None:
        raise RuntimeError("listener broke")

    res = run_streaming([PY, "-c", "print('a'); print('b')"], bad)
    assert res.ok and res.stdout == "a\nb\n"


def test_linux_backend_on_the_host_streams() -> None:
    got: list[str] = []
    be = LinuxBackend(HostSource())
    res = be.run_streaming([PY, "-c", "print('x')"], on_output=lambda s, line: got.append(line))
    assert res.ok and got == ["x"]


def test_line_splitter_keeps_partial_lines_across_chunks() -> None:
    sp = LineSplitter()
    assert sp.feed("ab") == []
    assert sp.feed("c\r") == ["abc"]
    assert sp.feed("\nd\n\n") == ["d"]  # "\r\n" cut between chunks: no empty line
    assert sp.feed("tail") == []
    assert sp.close() == ["tail"]


def test_simulated_backend_streams_what_the_program_wrote() -> None:
    be = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    got: list[tuple[Stream, str]] = []
    res = be.run_streaming(
        ["systemctl", "is-active", "mdmonitor"], on_output=lambda s, line: got.append((s, line))
    )
    assert res.ok and got == [("stdout", "active")]
    res = be.run_streaming(["nosuchtool"], on_output=lambda s, line: got.append((s, line)))
    assert res.returncode == 127 and got[-1][0] == "stderr"


def test_replay_hands_over_a_recorded_output_and_refuses_the_rest() -> None:
    """A capture (tests/fixtures/captures/raid5-raid10-clean) holds each command's output whole."""
    from backends.replay import ReplayBackend

    be = ReplayBackend(Path(__file__).parents[1] / "fixtures" / "captures" / "raid5-raid10-clean")
    argv = ["smartctl", "-d", "test", "/dev/nvme2n1"]
    got: list[tuple[Stream, str]] = []
    res = be.run_streaming(argv, on_output=lambda s, line: got.append((s, line)))
    assert res.ok and got and got[0] == ("stdout", res.stdout.splitlines()[0])
    assert [line for _, line in got] == [x for x in res.stdout.splitlines() if x.strip()]
    got.clear()
    res = be.run_streaming(
        ["mkfs.ext4", "/dev/md0"], on_output=lambda s, line: got.append((s, line))
    )
    assert res.not_recorded and got == [("stderr", res.stderr.strip())]


@pytest.mark.skipif(shutil.which("mkfs.ext4") is None, reason="e2fsprogs not installed")
def test_real_mke2fs_counters_are_read_through_the_pipe(tmp_path: Path) -> None:
    """mke2fs on a sparse image file (not a device): its "Writing inode tables:  0/32" counters
    come through a pipe and ``StepProgress`` reads them as figures of a phase."""
    from app.plans.progress import StepProgress

    img = tmp_path / "img"
    with img.open("wb") as f:
        f.truncate(1 << 30)
    seen: list[tuple[str, int, int]] = []
    progress = StepProgress()

    def on_output(stream: Stream, line: str) -> None:
        progress.feed(line)
        if progress.counter is not None:
            c = progress.counter
            seen.append((c.label, c.done, c.total))

    argv = [shutil.which("mkfs.ext4") or "", "-F", "-q", "-E", "nodiscard", str(img)]
    assert run_streaming(argv, on_output).ok  # -q: quiet, no counters
    assert seen == []
    res = run_streaming(argv[:2] + argv[3:], on_output)
    assert res.ok, res.stderr
    labels = {label for label, _, _ in seen}
    assert "Writing inode tables" in labels
    assert all(0 <= done <= total == 8 for _, done, total in seen)  # 1 GiB: 8 groups
    assert progress.counter is None  # "done" ended the last phase


def test_simulated_mkfs_writes_counters_like_mke2fs() -> None:
    """The demo's mkfs.ext4 redraws "done/total" per phase with backspaces as mke2fs does (see
    test_real_mke2fs_counters_are_read_through_the_pipe), so the preview's bar has a figure."""
    from app.plans.progress import StepProgress

    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    create = ["mdadm", "--create", "/dev/md/127", "--level=1", "--raid-devices=2", "--run"]
    assert be.run([*create, "/dev/nvme0n1", "/dev/nvme1n1"]).ok
    progress = StepProgress()
    seen: list[tuple[str, int, int]] = []

    def on_output(stream: Stream, line: str) -> None:
        progress.feed(line)
        if progress.counter is not None:
            seen.append((progress.counter.label, progress.counter.done, progress.counter.total))

    assert be.run_streaming(["mkfs.ext4", "/dev/md127"], on_output=on_output).ok
    tables = [d for label, d, t in seen if label == "Writing inode tables"]
    assert tables == sorted(tables) and tables[0] == 0 and len(tables) == 4
    assert {t for _, _, t in seen} == {7452}  # 931.5 GiB / 128 MiB per group
    assert progress.counter is None
