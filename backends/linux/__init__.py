"""The real Linux machine: lsblk, sysfs, /proc, lvm and smartctl, read through a ``Source``."""

from __future__ import annotations

import contextlib
import importlib
import threading
from collections.abc import Iterator, Sequence
from dataclasses import replace

from app.escape import escape_strings
from app.model import Machine
from app.model.live import LiveInterner, LiveSample, MdLive
from app.model.smart import SmartReading
from app.parsers.fsinfo import FsInfo
from backends.base import CommandResult, OutputCallback, emit_output
from backends.linux.dm_raid import RaidLvSampler
from backends.linux.events import MdEvents
from backends.linux.md import fresher_progress, md_names, mdstat_progress, read_live
from backends.linux.probe import probe_with_fs_info
from backends.linux.source import HostSource, Source

__all__ = ["LinuxBackend"]


class LinuxBackend:
    """``backends.base.Backend`` for a Linux machine (or a recording/replay of one)."""

    def __init__(self, source: Source | None = None) -> None:
        self.source: Source = source if source is not None else HostSource()
        self._disk_sectors: dict[str, int] = {}
        self._fs_info: tuple[Machine, dict[str, FsInfo | CommandResult | str]] | None = None
        self._events: MdEvents | None = None
        # what did not move since the last sample is the same object (consumers skip it)
        self._interned = LiveInterner()
        self._raid_lvs = RaidLvSampler()  # the raid LVs' syncs in the sample
        # a source that answers in batches (ssh) holds ONE batch: a probe and a poll must not
        # replace it under each other (the TUI probes and samples from two workers)
        self._batching = threading.Lock() if hasattr(self.source, "prefetch") else None

    @property
    def name(self) -> str:
        return "linux"

    @property
    def read_only_reason(self) -> str | None:
        unreachable = getattr(self.source, "unreachable", None)  # an ssh host not reached
        if isinstance(unreachable, str):
            return f"{getattr(self.source, 'host', 'the host')} not reached"
        return None if self.source.euid() == 0 else "not root"

    @property
    def smart_enabled(self) -> bool:
        return self.source.smart

    def now(self) -> float:
        return self.source.now()

    @contextlib.contextmanager
    def _batch(self, kind: str) -> Iterator[None]:
        """A source that answers in batches (ssh) fetches what a probe/poll reads in one go and
        answers it from that batch until done: one probe or poll at a time (a poll waits for a
        probe's one round trip). A source that reads directly needs no lock."""
        if self._batching is None:
            yield
            return
        with self._batching:
            self.source.prefetch(kind)  # type: ignore[attr-defined]
            yield

    def probe(self) -> Machine:
        with self._batch("probe"):
            m, fs_info = probe_with_fs_info(self.source)
        m = escape_strings(m)  # labels, models, names, host: control characters escaped
        self._disk_sectors = {d.name: d.logical_sector for d in m.disks}
        self._raid_lvs.probed(m.lvs)
        self._fs_info = (m, fs_info)
        return m

    def fs_info(self, machine: Machine) -> dict[str, FsInfo | CommandResult | str] | None:
        """The tune2fs/xfs_info readings the probe that returned ``machine`` made (device ->
        parsed geometry, the failed run, or why the output was unreadable), so the audit reads
        each filesystem once; None for any other machine."""
        if self._fs_info is None or self._fs_info[0] is not machine:
            return None
        return self._fs_info[1]

    def sample(self) -> LiveSample:
        with self._batch("sample"):
            arrays: list[MdLive] = []
            names = md_names(self.source)
            progress = mdstat_progress(self.source.read_text("/proc/mdstat")) if names else {}
            for name in names:
                live, _notes = read_live(self.source, name)
                if live is not None:
                    sync = fresher_progress(live.sync, progress.get(name))
                    arrays.append(live if sync is live.sync else replace(live, sync=sync))
            # the raid LVs' status too before the counters: those of a look that sees a sync
            # ended then hold all it wrote, for an LV as for an array
            lv_status = self._raid_lvs.read(self.source)
            self.source.take_notes()  # a 1 Hz poll reports nothing; the next probe will
            # the time of the counters: read after them (the first read imports psutil: 1.4 s
            # in the VM, and a time taken before it made report --io's rate 2.6 x too low)
            disk_io = self.source.disk_io()
            t = self.source.now()
            lvs = self._raid_lvs.sample(lv_status, t, disk_io)
            return self._interned(
                escape_strings(
                    LiveSample(taken_at=t, arrays=tuple(arrays), disk_io=disk_io, lvs=lvs)
                )
            )

    def wait_event(self, timeout: float) -> bool | None:
        """Block until md reports an event (/proc/mdstat or an array's ``sync_action``,
        ``array_state``, ``degraded``, ``sync_completed``: POLLPRI) or ``timeout`` seconds pass;
        True on an event (``backends.base.EventSource``). A recording or replay has no events:
        None at once."""
        if not isinstance(self.source, HostSource):
            return None
        if self._events is None:
            self._events = MdEvents()
        return self._events.wait(timeout)

    def smart(self, disk: str) -> SmartReading:
        try:
            mod = importlib.import_module("backends.linux.smart")
        except ModuleNotFoundError as e:
            if e.name != "backends.linux.smart":
                raise
            return SmartReading(device=disk, available=False, reason="SMART support not installed")
        reading: SmartReading = mod.read_smart(
            self.run,
            disk,
            logical_sector=self._disk_sectors.get(disk, 512),
            now=self.now(),
        )
        return escape_strings(reading)

    def read_text(self, path: str) -> str | None:
        return self.source.read_text(path)

    def recorded(self, path: str) -> bool:
        """Whether ``read_text(path)`` answers from the system: always, except in a replay."""
        return True

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        return self.source.run(argv, stdin=stdin, timeout=timeout)

    def run_streaming(
        self,
        argv: Sequence[str],
        *,
        on_output: OutputCallback,
        stdin: str | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """The live machine streams each line as it comes; a recording or a replay has the
        output only at the end and hands it over then."""
        if isinstance(self.source, HostSource):
            return self.source.run_streaming(argv, on_output, stdin=stdin, timeout=timeout)
        result = self.source.run(argv, stdin=stdin, timeout=timeout)
        emit_output(result, on_output)
        return result
