"""Waking on md events: ``/proc/mdstat`` is pollable, as ``mdadm --monitor`` uses it.

md bumps its event count on every array start/stop, sync start/end, member add/remove/fail
(``md_new_event``); a reader of /proc/mdstat that polls for ``POLLPRI`` is woken when the count
moved since its last read (md.c: ``mdstat_poll``).
"""

from __future__ import annotations

import os
import select

MDSTAT = "/proc/mdstat"


class MdEvents:
    """``wait(timeout)`` → True when md reported an event, False on timeout (or no md)."""

    def __init__(self, path: str = MDSTAT) -> None:
        self._path = path
        self._fd: int | None = None

    def _open(self) -> int | None:
        if self._fd is None:
            try:
                self._fd = os.open(self._path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                return None
        return self._fd

    def wait(self, timeout: float) -> bool:
        fd = self._open()
        if fd is None:
            return False
        try:
            # read to the end first: poll then reports only events after this read
            os.lseek(fd, 0, os.SEEK_SET)
            while os.read(fd, 65536):
                pass
            p = select.poll()
            p.register(fd, select.POLLPRI | select.POLLERR)
            return bool(p.poll(max(0.0, timeout) * 1000))
        except OSError:
            self.close()
            return False

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None
