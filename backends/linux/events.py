"""Waking on md events, as ``mdadm --monitor`` does, plus md's own sysfs attributes.

* ``/proc/mdstat`` is pollable: md bumps its event count on every array start/stop, sync start
  and end, member add/remove/fail (``md_new_event``); a reader that polls for ``POLLPRI`` is woken
  when the count moved since its last read (md.c: ``mdstat_poll``).
* md's attributes ``sync_action``, ``array_state``, ``degraded`` and ``sync_completed`` under
  ``/sys/block/mdX/md/`` notify pollers (``sysfs_notify``): open, read to the end, poll for
  ``POLLPRI|POLLERR``; after a wake, seek(0) and read again to re-arm (kernfs: a file whose event
  count moved since its last read polls ready). ``sync_completed`` moves while a sync runs,
  ``sync_action`` on ``echo check``/``echo idle`` — neither always reaches mdstat's count.

The set of arrays changes: every :meth:`MdEvents.wait` lists ``/sys/block/md*`` first and opens
the attributes of a new array, closes those of a gone one. A file that is not there (a RAID-0,
or an array stopped but still listed, has no ``sync_action``) is tried again at the next
listing; one that fails to read (removed under us: kernfs then polls it ready for ever) is
closed and left alone while that same file (inode) is still there, so a vanished file neither
crashes nor spins, and the one md creates when the array is assembled again is watched. The poller and the listing are
injectable (tests drive the registration with a fake poller: a regular file cannot POLLPRI).
"""

from __future__ import annotations

import contextlib
import os
import select
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from typing import Protocol

MDSTAT = "/proc/mdstat"
SYS_BLOCK = "/sys/block"
MD_ATTRS = ("sync_action", "array_state", "degraded", "sync_completed")
WAKE = select.POLLPRI | select.POLLERR


class Poller(Protocol):
    """What ``select.poll()`` offers and this uses."""

    def register(self, fd: int, eventmask: int = ..., /) -> None: ...
    def unregister(self, fd: int, /) -> None: ...
    def poll(self, timeout: float | None = ..., /) -> list[tuple[int, int]]: ...


def list_md(sys_block: str = SYS_BLOCK) -> tuple[str, ...]:
    """Kernel names of the md devices that have md's attribute directory."""
    try:
        names = os.listdir(sys_block)
    except OSError:
        return ()
    return tuple(
        sorted(n for n in names if n.startswith("md") and os.path.isdir(f"{sys_block}/{n}/md"))
    )


@dataclass
class _Watched:
    fd: int
    array: str | None  # None: /proc/mdstat
    stale: bool = True  # not read since it was opened or woke: read before the next poll


class MdEvents:
    """``wait(timeout)`` → True when md reported an event, False on timeout (or no md).

    A file is read to the end only when it has to be (just opened, after it woke): an event that
    comes between a timed-out wait and the next one is then still pending, and the next wait
    returns at once instead of losing it. ``woke`` holds the paths the last wait woke on."""

    def __init__(
        self,
        path: str = MDSTAT,
        sys_block: str = SYS_BLOCK,
        *,
        arrays: Callable[[], Iterable[str]] | None = None,
        poller: Callable[[], Poller] = select.poll,
        attrs: Sequence[str] = MD_ATTRS,
    ) -> None:
        self._path = path
        self._sys_block = sys_block
        self._arrays = arrays if arrays is not None else (lambda: list_md(sys_block))
        self._new_poller = poller
        self._attrs = tuple(attrs)
        self._poller: Poller | None = None
        self._files: dict[str, _Watched] = {}
        self._by_fd: dict[int, str] = {}
        # path -> inode of a file that failed to read: not reopened while that file is there
        self._broken: dict[str, int] = {}
        self.woke: tuple[str, ...] = ()

    @property
    def watched(self) -> tuple[str, ...]:
        """The paths registered now."""
        return tuple(self._files)

    # ---- registration --------------------------------------------------------------------------
    def _wanted(self) -> dict[str, str | None]:
        want: dict[str, str | None] = {self._path: None}
        try:
            names = list(self._arrays())
        except OSError:
            names = []
        for name in names:
            for attr in self._attrs:
                want[f"{self._sys_block}/{name}/md/{attr}"] = name
        return want

    def _sync(self) -> None:
        """Open and register what the arrays present now have; close what went."""
        want = self._wanted()
        replaced = self._replaced_arrays()
        for path in [p for p, w in self._files.items() if p not in want or w.array in replaced]:
            self._drop(path)  # (a replaced one is opened again below)
        for path, ino in list(self._broken.items()):
            try:
                same = path in want and os.stat(path).st_ino == ino
            except OSError:
                same = False
            if not same:  # gone, or a new file there (the array assembled again): try it
                del self._broken[path]
        for path, array in want.items():
            if path in self._files or path in self._broken:
                continue
            try:
                fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
            except OSError:
                continue  # not there (yet): tried again at the next listing
            if self._poller is None:
                self._poller = self._new_poller()
            try:
                self._poller.register(fd, WAKE)
            except (OSError, ValueError):
                os.close(fd)
                continue
            self._files[path] = _Watched(fd, array)
            self._by_fd[fd] = path

    def _replaced_arrays(self) -> set[str]:
        """Arrays whose sysfs files are now other files than the ones watched: an array stopped
        and created again under its name (mdadm --assemble stops an inactive array first) has
        new nodes, and the old ones' descriptors never wake again. One file per array is
        compared, its ``array_state`` (every array has one; its files come and go together),
        so a wake costs two calls per array, not per file. A file that is merely gone is left
        to the read that fails on it (``_rearm``)."""
        out: set[str] = set()
        for path, w in self._files.items():
            if w.array is None or not path.endswith("/array_state"):
                continue
            try:
                if os.stat(path).st_ino != os.fstat(w.fd).st_ino:
                    out.add(w.array)
            except OSError:
                continue
        return out

    def _drop(self, path: str) -> None:
        w = self._files.pop(path, None)
        if w is None:
            return
        self._by_fd.pop(w.fd, None)
        if self._poller is not None:
            with contextlib.suppress(OSError, KeyError, ValueError):
                self._poller.unregister(w.fd)
        with contextlib.suppress(OSError):
            os.close(w.fd)

    def _rearm(self, path: str, w: _Watched) -> bool:
        """Read ``path`` to the end (poll then reports only events after this read)."""
        try:
            os.lseek(w.fd, 0, os.SEEK_SET)
            while os.read(w.fd, 65536):
                pass
        except OSError:
            try:
                ino = os.fstat(w.fd).st_ino
            except OSError:
                ino = -1
            self._drop(path)
            if w.array is not None:
                self._broken[path] = ino
            return False
        w.stale = False
        return True

    # ---- waiting -------------------------------------------------------------------------------
    def wait(self, timeout: float) -> bool:
        self.woke = ()
        self._sync()
        for path, w in list(self._files.items()):
            if w.stale:
                self._rearm(path, w)
        if not self._files or self._poller is None:
            return False
        try:
            ready = self._poller.poll(max(0.0, timeout) * 1000)
        except OSError:
            self.close()
            return False
        woke: list[str] = []
        for fd, _mask in ready:
            hit = self._by_fd.get(fd)
            if hit is not None:
                self._files[hit].stale = True
                woke.append(hit)
        self.woke = tuple(woke)
        return bool(woke)

    def close(self) -> None:
        for path in list(self._files):
            self._drop(path)
        self._poller = None
        self._broken.clear()
