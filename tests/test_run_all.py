"""``make test``'s phase runner (tests/run_all.py): a phase's exit code, wall and CPU time, and
the VM log shown whole once, never interleaved."""

from __future__ import annotations

import sys
import threading
import time
from pathlib import Path

import pytest

from tests.run_all import Phase, _follow, run

BUSY = "import sys, time\nt = time.process_time()\nwhile time.process_time() - t < 0.1: pass\n"


def test_a_phase_keeps_its_first_failure_and_adds_up_wall_and_cpu(tmp_path: Path) -> None:
    p = Phase("x")
    log = open(tmp_path / "log", "wb")  # noqa: SIM115 (closed below)
    try:
        assert run(p, [sys.executable, "-c", BUSY + "sys.exit(3)"], log) == 3
        assert run(p, [sys.executable, "-c", "print('second')"], log) == 0
    finally:
        log.close()
    assert p.rc == 3  # a later success does not hide the failure
    assert p.cpu_s >= 0.1  # the child's CPU, from wait4
    assert p.wall_s >= p.cpu_s - 0.05
    text = (tmp_path / "log").read_text()
    assert "===== x: " in text and "second" in text  # the header and the output, in the log


def test_a_program_that_cannot_start_fails_the_phase(capsys: pytest.CaptureFixture[str]) -> None:
    p = Phase("y")
    assert run(p, ["/nonexistent/program"]) == 127
    assert p.rc == 127 and "cannot run /nonexistent/program" in capsys.readouterr().out


def test_the_vm_log_is_followed_from_its_start_to_its_end(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    path = tmp_path / "vm.log"
    path.write_bytes(b"first\n")
    done = threading.Event()

    def writer() -> None:
        with open(path, "ab") as f:
            for i in range(3):
                time.sleep(0.05)
                f.write(f"line {i}\n".encode())
                f.flush()
        done.set()

    t = threading.Thread(target=writer)
    t.start()
    _follow(path, done, poll_s=0.02)
    t.join()
    assert capsysbinary.readouterr().out == b"first\nline 0\nline 1\nline 2\n"
