"""A session's answer is read as it comes, each byte once (issue 37, lower): the whole answer
was parsed again at every chunk ending in ``E\\0``, so a host streaming ``A\\0E\\0`` kept
``report --host`` at 100 % of a core for 300 s (until the batch timeout)."""

from __future__ import annotations

import sys
import time

from backends.linux.ssh_batch import BatchStream, FrameError, parse_batch
from backends.linux.ssh_session import SshSession

ANSWER = (
    b"U\0node\0rel\0" + b"0\0" + b"1700000000\0"
    b"F\0/proc/mdstat\0ok\0K\0/sys/a\0one\nline\0A\0/sys/b\0"
    b"L\0/dev/md\0ok\0md0\0md1\0\0"
    b"C\0002\0lsblk\0-J\0" + b"0\0"
    b"M\0002\0/dev/md/a\0/dev/md/b\0"
    b"Z\0     5 /t/b/1\n     3 /t/b/2\n     2 /t/b/3\n     8 /t/b/4\n\0"
    b"helloout" + b"er" + b"../md0\0\0"
    b"E\0"
)


def test_the_stream_gives_what_the_whole_answer_gives_in_any_pieces() -> None:
    whole = parse_batch(ANSWER)
    assert whole.complete and whole.files["/proc/mdstat"] == ("ok", "hello")
    for size in (1, 2, 3, 7, 64):
        buf = bytearray()
        stream = BatchStream(buf)
        got = None
        for i in range(0, len(ANSWER), size):
            assert got is None  # nothing before the E record
            buf += ANSWER[i : i + size]
            got = stream.more()
        assert got == whole, size


def test_an_answer_out_of_shape_stops_the_stream_at_once() -> None:
    buf = bytearray(b"Q\0")
    try:
        BatchStream(buf).more()
    except FrameError as e:
        assert "unknown record" in str(e)
    else:
        raise AssertionError("no FrameError")


def test_a_host_streaming_records_without_end_costs_linear_time() -> None:
    """``A\\0E\\0`` repeated (each ``E`` read as an absent file's name): 768 pieces of 4 KiB,
    each read on its own. Parsed again whole at each piece: 6.0 s of CPU for 512 pieces
    (measured), quadratic; read as it comes: 0.6 s, linear. The budget is CPU time of this
    process (the parser runs here): 3 s."""
    prog = (
        "import os, time\n"
        "for _ in range(768):\n"
        "    os.write(1, b'A\\0E\\0' * 1024)\n"
        "    time.sleep(0.0005)\n"
    )
    session = SshSession([sys.executable, "-c", prog], host="stream")
    t0 = time.process_time()
    run, parsed = session.run(b"", b"", first_answer_s=30, timeout=60)
    spent = time.process_time() - t0
    session.close()
    assert parsed is None and len(run.stdout) == 768 * 4096  # never an answer: read to the end
    assert spent < 3.0, f"{spent:.1f} s of CPU for 3 MiB"
