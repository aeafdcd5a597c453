"""Run one program (argv, never a shell) and hand each output line to a callback as it comes.

For the plan executor's live progress: ``mkfs`` or ``mdadm --grow`` may run for minutes, and the
admin should see what they write while they write it. Both pipes are read with ``selectors`` in
the calling thread (no thread per pipe); stdin, a short value, is written by a small thread so a
program that writes before it reads cannot dead-lock us. The result is the same
``CommandResult`` ``HostSource.run`` returns: 127 for a missing program, 126 for one that cannot
be executed, 124 after ``timeout`` seconds (the program is killed).
"""

from __future__ import annotations

import codecs
import contextlib
import os
import selectors
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence

from backends.base import CommandResult, LineSplitter, OutputCallback, Stream

NOT_FOUND = 127
CANNOT_EXECUTE = 126
TIMED_OUT = 124
_CHUNK = 65536


def _feed_stdin(pipe: object, data: bytes) -> None:
    with contextlib.suppress(OSError, ValueError):
        pipe.write(data)  # type: ignore[attr-defined]
    with contextlib.suppress(OSError, ValueError):
        pipe.close()  # type: ignore[attr-defined]


def run_streaming(
    argv: Sequence[str],
    on_output: OutputCallback,
    *,
    stdin: str | None = None,
    timeout: float | None = None,
    env: Mapping[str, str] | None = None,
) -> CommandResult:
    args = tuple(str(a) for a in argv)
    if not args:
        return CommandResult(args, NOT_FOUND, "", "empty command")
    t0 = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(args),
            stdin=subprocess.PIPE if stdin is not None else subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            shell=False,
            env=dict(env) if env is not None else None,
        )
    except FileNotFoundError:
        return CommandResult(
            args, NOT_FOUND, "", f"{args[0]}: program not found", time.monotonic() - t0
        )
    except OSError as e:
        return CommandResult(
            args, CANNOT_EXECUTE, "", f"{args[0]}: {e.strerror or e}", time.monotonic() - t0
        )
    feeder: threading.Thread | None = None
    if stdin is not None and proc.stdin is not None:
        feeder = threading.Thread(
            target=_feed_stdin, args=(proc.stdin, stdin.encode()), daemon=True
        )
        feeder.start()
    assert proc.stdout is not None and proc.stderr is not None
    out_fd, err_fd = proc.stdout.fileno(), proc.stderr.fileno()
    streams: dict[int, Stream] = {out_fd: "stdout", err_fd: "stderr"}
    decoders = {fd: codecs.getincrementaldecoder("utf-8")("replace") for fd in streams}
    splitters = {fd: LineSplitter() for fd in streams}
    texts: dict[int, list[str]] = {fd: [] for fd in streams}

    def deliver(fd: int, lines: list[str]) -> None:
        for line in lines:
            with contextlib.suppress(Exception):  # a broken listener must not stop the read
                on_output(streams[fd], line)

    def take(fd: int, text: str) -> None:
        texts[fd].append(text)
        deliver(fd, splitters[fd].feed(text))

    deadline = None if timeout is None else t0 + timeout

    def left() -> float | None:
        return None if deadline is None else max(0.0, deadline - time.monotonic())

    timed_out = False
    with selectors.DefaultSelector() as sel:
        for fd in streams:
            sel.register(fd, selectors.EVENT_READ)
        while sel.get_map():
            wait = left()
            if wait == 0.0:
                timed_out = True
                break
            for key, _ in sel.select(wait):
                fd = key.fd
                try:
                    chunk = os.read(fd, _CHUNK)
                except OSError:
                    chunk = b""
                if not chunk:
                    sel.unregister(fd)
                    take(fd, decoders[fd].decode(b"", final=True))
                    continue
                take(fd, decoders[fd].decode(chunk))
    if not timed_out:
        try:
            proc.wait(timeout=left())
        except subprocess.TimeoutExpired:
            timed_out = True
    if timed_out:
        proc.kill()
    rc = proc.wait()
    if feeder is not None:
        feeder.join(timeout=1.0)
    for fd in streams:
        deliver(fd, splitters[fd].close())
    proc.stdout.close()
    proc.stderr.close()
    duration = time.monotonic() - t0
    stdout_text, stderr_text = "".join(texts[out_fd]), "".join(texts[err_fd])
    if timed_out:
        return CommandResult(
            args, TIMED_OUT, stdout_text, f"{args[0]}: timed out after {timeout:g} s", duration
        )
    return CommandResult(args, rc, stdout_text, stderr_text, duration)
