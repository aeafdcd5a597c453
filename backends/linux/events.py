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
    """``wait(timeout)`` → True when md reported an event, False on timeout (or no md).

    The file is read to the end only when it has to be (first wait, after an event): an event
    that comes between a timed-out wait and the next one is then still pending, and the next
    wait returns at once instead of losing it."""

    def __init__(self, path: str = MDSTAT) -> None:
        self._path = path
        self._fd: int | None = None
        self._stale = True  # poll_event not yet up to date with the event count

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
            if self._stale:
                # read to the end first: poll then reports only events after this read
                os.lseek(fd, 0, os.SEEK_SET)
                while os.read(fd, 65536):
                    pass
            p = select.poll()
            p.register(fd, select.POLLPRI | select.POLLERR)
            woke = bool(p.poll(max(0.0, timeout) * 1000))
            self._stale = woke
            return woke
        except OSError:
            self.close()
            return False

    def close(self) -> None:
        if self._fd is not None:
            try:
                os.close(self._fd)
            finally:
                self._fd = None
                self._stale = True
