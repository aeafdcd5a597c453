"""A remote answer is untrusted input: bounded in bytes, its numbers ASCII and in range, and any
shape it is not is a FrameError (a note), never a raw ValueError that ends the probe (issue 23,
items 6 and 7: a "²" in an ssh answer gave "probe failed: invalid literal ...", a 512 MB answer
used 1.08 GB)."""

from __future__ import annotations

import sys
import tracemalloc
from pathlib import Path

import pytest

from backends.linux import LinuxBackend
from backends.linux import ssh as ssh_mod
from backends.linux.ssh import SshSource, SshTarget
from backends.linux.ssh_batch import FrameError, parse_batch
from backends.linux.ssh_transport import run_ssh

SIZES = b"5 /tmp/t/b/100001\n"
BODY = b"F\0/proc/mdstat\0ok\0Z\0" + SIZES + b"\0hello"

BAD_NUMBERS = ["²", "٣", "9" * 5000, "-1", "1.5", ""]


@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_counts_sizes_and_exit_statuses_that_are_not_numbers_are_frame_errors(bad: str) -> None:
    b = bad.encode()
    forged = [
        b"M\0" + b + b"\0/x\0",  # count of links
        b"C\0" + b + b"\0ls\0" + b"0\0",  # argc
        b"C\0001\0ls\0" + b + b"\0",  # exit status
        b"F\0/proc/mdstat\0ok\0Z\0" + b + b" /tmp/t/b/100001\n\0hello",  # body size
    ]
    for data in forged:
        with pytest.raises(FrameError):
            parse_batch(data + b"E\0")


def test_a_count_beyond_any_machine_is_refused_before_reading_it() -> None:
    with pytest.raises(FrameError):
        parse_batch(b"C\0" + b"4000000000" + b"\0")


@pytest.mark.parametrize("bad", BAD_NUMBERS)
def test_an_odd_euid_or_clock_costs_those_fields(bad: str) -> None:
    b = parse_batch(b"U\0node\0release\0" + bad.encode() + b"\0" + bad.encode() + b"\0E\0")
    assert b.complete and b.uname == ("node", "release")
    assert b.euid is None and b.now is None


def test_an_answer_past_the_cap_is_refused_and_not_held() -> None:
    prog = "import sys\nw = sys.stdout.buffer.write\nfor _ in range(64): w(b'x' * (1 << 20))\n"
    tracemalloc.start()
    try:
        r = run_ssh(
            [sys.executable, "-c", prog], b"", first_answer_s=30, timeout=30, max_bytes=4 << 20
        )
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert r.error is not None and "larger than 4 MiB" in r.error
    assert peak < 16 << 20, peak
    r = run_ssh([sys.executable, "-c", "print(input())"], b"hi\n", first_answer_s=30, timeout=30)
    assert (r.returncode, r.stdout.strip(), r.stderr, r.error) == (0, b"hi", b"", None)


@pytest.mark.parametrize("persistent", [True, False], ids=["session", "one-run"])
def test_a_huge_answer_is_a_note_not_the_memory_of_the_machine(
    persistent: bool, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = tmp_path / "fake-ssh.py"
    # it reads a line of the script (a session's stdin stays open) and floods its stdout
    fake.write_text(
        "import sys\nsys.stdin.readline()\nw = sys.stdout.buffer.write\n"
        "for _ in range(32): w(b'F\\0' + b'y' * (1 << 20))\n"
    )
    monkeypatch.setattr(SshTarget, "argv", lambda self, cmd="sh -s": [sys.executable, str(fake)])
    monkeypatch.setattr(ssh_mod, "MAX_ANSWER_BYTES", 2 << 20)
    src = SshSource(SshTarget("big", control_dir=str(tmp_path), persistent=persistent))
    m = LinuxBackend(src).probe()
    assert src.unreachable and "larger than 2 MiB" in src.unreachable
    assert any(n.source == "ssh" and "larger than 2 MiB" in n.message for n in m.notes)
    assert m.disks == ()
