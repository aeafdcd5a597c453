"""One ssh run of a batch script, bounded in time twice: the first byte of the answer must come
within ``first_answer_s`` (the connection's deadline: ssh's ConnectTimeout covers the TCP connect
and the banner, not a host that accepts the connection and then says nothing — that took the
whole batch timeout, 300 s, whatever ``connect_timeout`` said), the whole answer within
``timeout``. The script's first record (the host's uname) is written as soon as the remote shell
starts, so a live host answers at once even when its batch runs for minutes.

Both pipes are read with ``selectors`` in the calling thread; the script is fed by a small thread
(a remote that does not read it cannot dead-lock us). On a deadline ssh and whatever it started
(a ProxyCommand) are killed as one process group.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass

from backends.linux.ssh_config import ssh_environment
from backends.linux.stream import _feed_stdin

_CHUNK = 65536
STDERR_KEEP = 64 * 1024  # ssh's last lines say why it failed; a flood of stderr is not kept


@dataclass(frozen=True)
class SshRun:
    returncode: int | None  # None: killed at a deadline (``error`` says which)
    stdout: bytes
    stderr: bytes
    error: str | None = None


def run_ssh(
    argv: Sequence[str],
    script: bytes,
    *,
    first_answer_s: float,
    timeout: float | None,
    host: str = "",
    max_bytes: int | None = None,
) -> SshRun:
    """Run ``argv`` (ssh), feed it ``script``, collect both outputs. Raises OSError (e.g.
    FileNotFoundError) when ssh cannot be started. An answer past ``max_bytes`` is cut there
    and ssh killed (``error`` says so: a 512 MB answer took 1.08 GB); stderr keeps its last
    STDERR_KEEP bytes."""
    p = subprocess.Popen(
        list(argv),
        env=ssh_environment(),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # its own process group: a deadline kills a ProxyCommand too
    )
    assert p.stdin is not None and p.stdout is not None and p.stderr is not None
    threading.Thread(target=_feed_stdin, args=(p.stdin, script), daemon=True).start()
    start = time.monotonic()
    first_by = start + first_answer_s
    end_by = None if timeout is None else start + timeout
    out: list[bytes] = []
    err: list[bytes] = []
    got_answer = False
    got = 0  # bytes of stdout
    error: str | None = None
    sel = selectors.DefaultSelector()
    sel.register(p.stdout, selectors.EVENT_READ, out)
    sel.register(p.stderr, selectors.EVENT_READ, err)
    try:
        while sel.get_map():
            now = time.monotonic()
            deadline = first_by if not got_answer else end_by
            if end_by is not None and (deadline is None or end_by < deadline):
                deadline = end_by
            wait = None if deadline is None else deadline - now
            if wait is not None and wait <= 0:
                if not got_answer and (end_by is None or first_by <= end_by):
                    error = f"no answer from {host} within {first_answer_s:g} s (connect_timeout)"
                else:
                    error = f"no answer from {host} within {timeout or 0:g} s"
                break
            for key, _ in sel.select(wait):
                chunk = os.read(key.fd, _CHUNK)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                key.data.append(chunk)
                if key.data is out:
                    got_answer = True
                    got += len(chunk)
                    if max_bytes is not None and got > max_bytes:
                        error = f"answer from {host} larger than {max_bytes // 2**20} MiB: refused"
                        break
                elif sum(map(len, err)) > 2 * STDERR_KEEP:
                    err[:] = [b"".join(err)[-STDERR_KEEP:]]
            if error is not None:
                break
    finally:
        sel.close()
        if error is not None:
            with contextlib.suppress(OSError):
                os.killpg(p.pid, signal.SIGKILL)
        rc = p.wait()
        for pipe in (p.stdout, p.stderr):
            pipe.close()
    return SshRun(None if error else rc, b"".join(out), b"".join(err), error)
