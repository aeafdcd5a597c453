"""One long-lived ``ssh HOST sh -s`` per host that answers many batches (issue 29).

Started one ssh client per round trip (a probe every 10 s, a sample each second), watching 20
hosts cost 2.44 × watching one: the client's start (exec, config, the ControlMaster handshake)
and Python's ``Popen`` were more than half of raidman's side. A session is started once: its
shell gets ``SESSION_SETUP`` (temporary directory, functions, the host's uname read once) and
then, on the same stdin, one brace group per batch (``BatchSpec.session_script``); the answer of
each ends with its ``E`` record, so the reader knows where it stops without closing anything.

The bounds are those of a one-shot run (``ssh_transport.run_ssh``): the first byte of each
answer (its ``U`` record, written before any work) within ``first_answer_s``, the whole answer
within ``timeout``, at most ``max_bytes``. A session past a bound, or whose shell or connection
went away, is killed (ssh and whatever it started, one process group) and the next batch starts
a new one. The script goes in through non-blocking writes in the same ``selectors`` loop that
reads the answer (a remote that does not read cannot dead-lock us). One batch at a time:
the caller holds a lock (``backends.linux.ssh.SshSource``).
"""

from __future__ import annotations

import contextlib
import os
import selectors
import signal
import subprocess
import time
from collections.abc import Callable, Sequence

from backends.linux.ssh_batch import Batch, BatchStream, FrameError
from backends.linux.ssh_config import ssh_environment
from backends.linux.ssh_transport import _CHUNK, STDERR_KEEP, SshRun

EXIT_WAIT_S = 2.0  # after the answer stream ended: how long ssh may take to exit and say why


class SshSession:
    """``argv`` (ssh … HOST sh -s) kept running; ``run`` sends one batch and reads its answer."""

    def __init__(
        self,
        argv: Sequence[str] | Callable[[], Sequence[str]],
        *,
        host: str = "",
        max_bytes: int | None = None,
    ):
        """``argv``: ssh's, or a function giving it at each start (SshTarget.argv: the
        ssh_config's programs checked again before each start)."""
        self._argv = argv
        self.host = host
        self.max_bytes = max_bytes
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = 0  # ssh processes started (one per session)
        self.answered = 0  # batches this session answered in full

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _start(self) -> subprocess.Popen[bytes]:
        self.close()
        argv = list(self._argv() if callable(self._argv) else self._argv)
        p = subprocess.Popen(
            argv,
            env=ssh_environment(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,  # its own process group: a deadline kills a ProxyCommand too
        )
        assert p.stdin is not None
        os.set_blocking(p.stdin.fileno(), False)
        self.proc, self.answered = p, 0
        self.started += 1
        return p

    def run(
        self, setup: bytes, batch: bytes, *, first_answer_s: float, timeout: float | None
    ) -> tuple[SshRun, Batch | None]:
        """Send ``batch`` (preceded by ``setup`` when a new session has to be started) and read
        its answer: the parsed Batch when it came whole, else None and an SshRun saying what
        came (a cut-off answer, ssh's exit status and last words, or ``error`` at a bound).
        Raises OSError (e.g. FileNotFoundError) when ssh cannot be started."""
        p = self.proc if self.alive else None
        if p is None:
            p = self._start()
            batch = setup + batch
        assert p.stdin is not None and p.stdout is not None and p.stderr is not None
        pending = memoryview(batch)
        start = time.monotonic()
        first_by = start + first_answer_s
        end_by = None if timeout is None else start + timeout
        out = bytearray()
        stream = BatchStream(out)
        err = bytearray()
        error: str | None = None
        parsed: Batch | None = None
        eof = False
        sel = selectors.DefaultSelector()
        sel.register(p.stdout, selectors.EVENT_READ)
        sel.register(p.stderr, selectors.EVENT_READ)
        if pending:
            sel.register(p.stdin, selectors.EVENT_WRITE)
        try:
            while parsed is None and not eof and error is None:
                now = time.monotonic()
                deadline = end_by if out else first_by
                if end_by is not None and (deadline is None or end_by < deadline):
                    deadline = end_by
                wait = None if deadline is None else deadline - now
                if wait is not None and wait <= 0:
                    if not out and (end_by is None or first_by <= end_by):
                        error = (
                            f"no answer from {self.host} within {first_answer_s:g} s "
                            "(connect_timeout)"
                        )
                    else:
                        error = f"no answer from {self.host} within {timeout or 0:g} s"
                    break
                for key, _ in sel.select(wait):
                    if key.fileobj is p.stdin:
                        try:
                            n = os.write(p.stdin.fileno(), pending[:_CHUNK])
                        except BlockingIOError:
                            continue
                        except OSError:  # the shell is gone: its answer (or EOF) says why
                            n = len(pending)
                        pending = pending[n:]
                        if not pending:
                            sel.unregister(p.stdin)
                        continue
                    chunk = os.read(key.fd, _CHUNK)
                    if key.fileobj is p.stderr:
                        if not chunk:
                            sel.unregister(p.stderr)
                        else:
                            err += chunk
                            if len(err) > 2 * STDERR_KEEP:
                                del err[:-STDERR_KEEP]
                        continue
                    if not chunk:
                        eof = True
                        break
                    out += chunk
                    if self.max_bytes is not None and len(out) > self.max_bytes:
                        error = (
                            f"answer from {self.host} larger than "
                            f"{self.max_bytes // 2**20} MiB: refused"
                        )
                        break
                    try:  # read as it comes: each byte once, done at its E record
                        parsed = stream.more()
                    except FrameError as e:
                        error = f"answer from {self.host} out of shape: {e}"
                        break
                    if parsed is not None:
                        break
        finally:
            sel.close()
        if parsed is not None:
            self.answered += 1
            return SshRun(0, bytes(out), bytes(err)), parsed
        rc = self._end(p, kill=error is not None, err=err)
        return SshRun(None if error else rc, bytes(out), bytes(err), error), None

    def _end(self, p: subprocess.Popen[bytes], *, kill: bool, err: bytearray) -> int | None:
        """The session is over: kill it (at a bound) or let ssh exit and keep its last words."""
        if kill:
            with contextlib.suppress(OSError):
                os.killpg(p.pid, signal.SIGKILL)
        else:
            assert p.stderr is not None
            end = time.monotonic() + EXIT_WAIT_S
            with contextlib.suppress(OSError, ValueError):
                os.set_blocking(p.stderr.fileno(), False)
                with selectors.DefaultSelector() as sel:
                    sel.register(p.stderr, selectors.EVENT_READ)
                    while (left := end - time.monotonic()) > 0 and sel.select(left):
                        chunk = os.read(p.stderr.fileno(), _CHUNK)
                        if not chunk:
                            break
                        err += chunk[-STDERR_KEEP:]
        try:
            rc: int | None = p.wait(timeout=EXIT_WAIT_S)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(OSError):
                os.killpg(p.pid, signal.SIGKILL)
            rc = p.wait()
        self._close_pipes(p)
        if self.proc is p:
            self.proc = None
        return rc

    @staticmethod
    def _close_pipes(p: subprocess.Popen[bytes]) -> None:
        for pipe in (p.stdin, p.stdout, p.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()

    def close(self) -> None:
        """End the session: its shell reads the end of its stdin, removes its temporary
        directory and exits; ssh follows (killed if it does not within EXIT_WAIT_S)."""
        p, self.proc = self.proc, None
        if p is None:
            return
        if p.poll() is None:
            with contextlib.suppress(OSError):
                assert p.stdin is not None
                p.stdin.close()
            try:
                p.wait(timeout=EXIT_WAIT_S)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(OSError):
                    os.killpg(p.pid, signal.SIGKILL)
                p.wait()
        self._close_pipes(p)
