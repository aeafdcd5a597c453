"""The Linux backend over a directory written by ``raidman capture``: a real state, replayed.

Read-only: ``run`` answers only the commands the capture recorded (anything else is a
127-like "not in capture" result), so a plan can never act on the machine replaying it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from backends.base import BackendError, CommandResult, OutputCallback, emit_output
from backends.linux import LinuxBackend
from backends.linux.source import CaptureError, ReplaySource

__all__ = ["ReplayBackend"]


class ReplayBackend(LinuxBackend):
    def __init__(self, directory: str | os.PathLike[str]) -> None:
        try:
            source = ReplaySource(directory)
        except CaptureError as e:
            raise BackendError(str(e)) from None
        super().__init__(source)
        self.directory = str(directory)

    @property
    def name(self) -> str:
        return f"replay: {self.directory}"

    def recorded(self, path: str) -> bool:
        """False for a file the capture never read: its content is unknown, not absent."""
        source = self.source
        return source.recorded(path) if isinstance(source, ReplaySource) else True

    @property
    def read_only_reason(self) -> str | None:
        return f"replay of {self.directory}: read-only"

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        # only what was recorded; a write (stdin / tee / sysctl) was never recorded, so it is
        # answered "not in capture" and nothing is touched
        return self.source.run(argv, stdin=stdin, timeout=timeout)

    def run_streaming(
        self,
        argv: Sequence[str],
        *,
        on_output: OutputCallback,
        stdin: str | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        # a capture holds each command's output whole: it is handed over line by line at once
        result = self.run(argv, stdin=stdin, timeout=timeout)
        emit_output(result, on_output)
        return result
