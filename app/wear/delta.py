"""What each recorded sync cost each member: bytes written, share of its size, wear points.

Two figures per member: the kernel's count of the member device itself (its own line of
/proc/diskstats: a partition's writes, apart from what another array wrote to other partitions
of the same disk), as a share of the member's own size; and SMART's count of the member's whole
disk (all its partitions: the device counts no finer), as a share of the disk's capacity."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from app.format import duration, human_bytes
from app.wear.records import Snapshot, SyncEvent, SyncMember
from app.wear.snapshots import SnapshotStore

MIB = 1 << 20
ACTION_WORDS = {
    "recover": "rebuild",
    "resync": "resync",
    "check": "check",
    "repair": "repair",
    "reshape": "reshape",
}


@dataclass(frozen=True, slots=True)
class MemberWear:
    member: SyncMember
    bytes_written: int | None  # None: no counter with a known unit, or no snapshot pair
    capacity_bytes: int | None
    wear_points: int | None  # increase of "percent of rated life used"
    start: Snapshot | None
    end: Snapshot | None
    running: bool  # end is "now", the sync has not finished
    # SMART's "before" was read after the sync began (a sync that started within seconds of
    # the watcher, or while its start reads waited for smartctl): ``bytes_written`` counts only
    # from that reading on; ``written_before_start`` is what the kernel's counter says the disk
    # had been written since the sync began until then (None: not known, left uncorrected)
    start_late: bool = False
    written_before_start: int | None = None

    @property
    def corrected_bytes(self) -> int | None:
        """SMART's figure plus, for a late "before", the kernel's count of what came before it."""
        if self.bytes_written is None or (self.start_late and self.written_before_start is None):
            return None if self.start_late else self.bytes_written
        return self.bytes_written + (self.written_before_start or 0)

    @property
    def capacity_share(self) -> float | None:
        """Of the whole sync: SMART's figure, with a late "before" corrected."""
        n = self.corrected_bytes
        if n is None or not self.capacity_bytes:
            return None
        return n / self.capacity_bytes

    @property
    def unit_bytes(self) -> int | None:
        """The SMART counter's step in bytes (NVMe data units: 512,000)."""
        for snap in (self.end, self.start):
            if snap is not None and snap.unit_bytes:
                return snap.unit_bytes
        return None

    @property
    def counter(self) -> str | None:
        """The SMART counter the figure comes from."""
        for snap in (self.end, self.start):
            if snap is not None and snap.counter:
                return snap.counter
        return None


@dataclass(frozen=True, slots=True)
class SyncWear:
    sync: SyncEvent
    members: tuple[MemberWear, ...]

    def member(self, device_or_disk: str) -> MemberWear | None:
        for m in self.members:
            if device_or_disk in (m.member.device, m.member.disk):
                return m
        return None

    @property
    def word(self) -> str:
        return ACTION_WORDS.get(self.sync.action, self.sync.action)

    @staticmethod
    def disk_label(m: MemberWear) -> str:
        """The disk SMART counts for, said as the whole disk where the member is a part of it:
        "sdb (whole disk, all its partitions)"."""
        if m.member.device == m.member.disk:
            return m.member.disk
        return f"{m.member.disk} (whole disk, all its partitions)"

    def line(self, m: MemberWear) -> str:
        """ "this rebuild wrote 512 GB to nvme3n1 = 1.0 × its capacity" (SMART: the whole disk)."""
        verb = "has written" if m.running else "wrote"
        disk = self.disk_label(m)
        if m.bytes_written is None:
            why = (
                "no snapshot pair"
                if m.start is None or m.end is None
                else "no write counter in known units"
            )
            return f"this {self.word} {verb} ? to {disk} ({why})"
        if m.running and m.end is not None and m.start is not None and m.end.ts <= m.start.ts:
            # nothing read since the "before": a 0 B here would be a figure nobody measured
            return (
                f"no SMART reading of {disk} since this {self.word} began yet "
                "(SMART is re-read on its own cadence; the kernel's figure is live)"
            )
        if m.start_late and m.written_before_start != 0:
            # (the kernel counted nothing between the sync's start and SMART's "before":
            # SMART's own figure is then the whole of it)
            return self._late_line(m, verb)
        text = f"this {self.word} {verb} {human_bytes(m.bytes_written)} to {disk}"
        share = m.capacity_share
        if share is not None:
            text += f" = {share:.1f} × its capacity"
        if m.wear_points:
            text += f", {m.wear_points} wear point{'s' if m.wear_points != 1 else ''}"
        if self.smart_coarse(m):
            text += (
                f" (the device counts in steps of {m.unit_bytes:,} B, coarser than the "
                f"{human_bytes(self._written(m))} written: the kernel's figure is the exact one)"
            )
        else:
            text += self._whole_disk_note(m)
        return text

    def _whole_disk_note(self, m: MemberWear) -> str:
        """Why SMART's whole-disk figure differs from the member's own count: the disk holds
        other partitions (another array's sync may have written them meanwhile), and SMART's
        figure below the kernel's count of the same disk is its unit and its read times."""
        if m.member.device == m.member.disk or m.bytes_written is None:
            return ""
        disk_k = self.sync.kernel_written(m.member.disk)
        own = self.sync.kernel_written(m.member.device)
        notes = []
        if disk_k is not None and own is not None and disk_k - own > max(MIB, disk_k // 100):
            notes.append(
                f"the kernel counted {human_bytes(disk_k)} to all of {m.member.disk}, "
                f"{human_bytes(own)} of it to {m.member.device} (this array's member): "
                f"the other {human_bytes(disk_k - own)} went to its other partitions"
            )
        n = m.corrected_bytes
        if n is not None and disk_k is not None and n < disk_k:
            why = []
            if m.unit_bytes and m.unit_bytes > 4096:
                why.append(f"SMART counts in steps of {m.unit_bytes:,} B")
            s = self.sync
            if m.start is not None and m.end is not None and s.ended_at is not None:
                why.append(
                    f"its readings were {_offset(m.start.ts - s.started_at)} from the sync's "
                    f"start and {_offset(m.end.ts - s.ended_at)} from its end, the kernel's at "
                    "the looks around them"
                )
            notes.append(
                f"SMART's figure is below the kernel's {human_bytes(disk_k)} for {m.member.disk}"
                + (f": {'; '.join(why)}" if why else "")
            )
        return f" ({'; '.join(notes)})" if notes else ""

    def _late_line(self, m: MemberWear, verb: str) -> str:
        """SMART's "before" was read after the sync began: say so, and what it is made of."""
        assert m.bytes_written is not None and m.start is not None
        after = m.start.ts - self.sync.started_at
        since = (
            f"SMART's before was read {after:.0f} s after the {self.word} began"
            if after > 0
            else f"SMART's before was read after the {self.word} began, before raidman first saw it"
        )
        counted = f"{human_bytes(m.bytes_written)} counted by SMART from then on"
        if m.written_before_start is None:
            return (
                f"this {self.word} {verb} at least {human_bytes(m.bytes_written)} to "
                f"{self.disk_label(m)} ({since}; what it wrote before that is unknown)"
            )
        total = m.bytes_written + m.written_before_start
        text = f"this {self.word} {verb} about {human_bytes(total)} to {self.disk_label(m)}"
        share = m.capacity_share
        if share is not None:
            text += f" = {share:.1f} × its capacity"
        return (
            f"{text} ({since}: {counted} + {human_bytes(m.written_before_start)} the kernel "
            "counted before that reading)"
        )

    def _written(self, m: MemberWear) -> int | None:
        """The amount written to the whole disk (SMART's span), the kernel's figure where known
        (exact), else SMART's."""
        k = self.sync.kernel_written(m.member.disk)
        return k if k is not None else m.bytes_written

    def smart_coarse(self, m: MemberWear) -> bool:
        """The SMART counter's step is larger than what was written: it cannot confirm the
        amount (a sync that wrote a few hundred KB to an NVMe disk: 512,000-byte data units)."""
        n = self._written(m)
        return m.unit_bytes is not None and n is not None and 0 < n < m.unit_bytes

    def actual_bytes(self) -> int | None:
        """What the sync wrote to its members, by the kernel's count of each member device
        (once per device); None where one is not known or is only its disk's."""
        total = 0
        for dev in dict.fromkeys(m.member.device for m in self.members):
            m = next(x for x in self.members if x.member.device == dev)
            n, own = self.sync.member_written(m.member)
            if n is None or not own:
                return None
            total += n
        return total if self.members else None

    def forecast_line(self, now: float | None = None) -> str | None:
        """ "forecast 1h 05m / 256.0 MiB · took 1h 02m / 255.0 MiB" (running: "so far", with
        ``now``; stopped early: "ran ... (outcome)"); None without a forecast."""
        fc = self.sync.forecast
        if fc is None:
            return None
        text = f"forecast {fc.text()}"
        if fc.source == "plan":
            text += " (the plan's)"
        n = self.actual_bytes()
        b = human_bytes(n) if n is not None else "?"
        s = self.sync
        if s.ended_at is not None and s.seen_after:
            # its times are the looks around it, not its own: no duration to compare
            text += f" · ran between two looks / {b} (seen after the fact: {s.seen_after})"
        elif s.ended_at is not None:
            verb = "took" if s.outcome == "finished" else "ran"
            text += f" · {verb} {duration(s.ended_at - s.started_at)} / {b}"
            if s.outcome != "finished":
                text += f" ({s.outcome})"
        elif now is not None:
            text += f" · so far {duration(max(0.0, now - s.started_at))} / {b}"
        else:
            text += f" · so far {b}"
        return text

    def kernel_written(self, m: MemberWear) -> tuple[int | None, int | None, bool]:
        """(the kernel's bytes written to the member, the size they are a share of, whether
        they are the member's own): the member device's own counter and size; for a record made
        before per-member counting, its whole disk's counter and capacity (False)."""
        n, own = self.sync.member_written(m.member)
        if own:
            size = self.sync.member_size(m.member)
            if size is None and m.member.device == m.member.disk:
                size = m.capacity_bytes
        else:
            size = self.sync.capacities.get(m.member.disk) or m.capacity_bytes
        return n, size, own

    def kernel_share(self, m: MemberWear) -> float | None:
        """The kernel's figure as a share of the member's own size (see :meth:`kernel_written`)."""
        n, size, _own = self.kernel_written(m)
        return None if n is None or not size else n / size

    def kernel_line(self, m: MemberWear) -> str | None:
        """The kernel's own count of the member device (/proc/diskstats, exact to the sector),
        said as such: "kernel counter: this rebuild has written 256 MiB to sdd1 so far = 1.00 ×
        its size"; a record from before per-member counting: its whole disk's, said so."""
        n, size, own = self.kernel_written(m)
        if n is None:
            return None
        verb = "has written" if m.running else "wrote"
        where = (
            m.member.device
            if own
            else f"{m.member.disk} (whole disk, all its partitions: recorded before per-member "
            "counts)"
        )
        text = f"kernel counter: this {self.word} {verb} {human_bytes(n)} to {where}"
        if m.running:
            text += " so far"
        if size:
            text += f" = {n / size:.2f} × its {'size' if own else 'capacity'}"
        return text

    def lines(self, now: float | None = None) -> list[str]:
        """The forecast beside what happened (a running sync's time so far with ``now``); per
        member: the kernel's count of the member itself, then SMART's of its whole disk."""
        f = self.forecast_line(now)
        out = [f] if f is not None else []
        seen: set[str] = set()  # a member on several disks (md on md, LVM): its count once
        for m in self.members:
            k = self.kernel_line(m) if m.member.device not in seen else None
            seen.add(m.member.device)
            if k is not None:
                out.append(k)
            out.append("SMART counter: " + self.line(m))
        return out


def _offset(seconds: float) -> str:
    """ "+12 s" (after), "-3 s" (before)."""
    return f"{seconds:+.0f} s"


def _during(sync: SyncEvent, s: Snapshot | None) -> Snapshot | None:
    """``s`` unless it was read only after the sync was over (then it is no "before")."""
    if s is not None and sync.ended_at is not None and s.ts >= sync.ended_at:
        return None
    return s


def _start(store: SnapshotStore, sync: SyncEvent, serial: str) -> Snapshot | None:
    """SMART's "before": the sync's own start read, else the last reading before it began,
    else the first one read while it ran that carries the kernel's counter (a sync that started
    within seconds of the watcher, before its start-up sweep reached the disk)."""
    s = _during(sync, store.sync_snapshot(sync.id, serial, "sync-start"))
    s = s or store.latest_snapshot(serial, at_or_before=sync.started_at)
    if s is None:
        first = _during(sync, store.first_snapshot_after(serial, sync.started_at))
        if first is not None and first.kernel_bytes_written is not None:
            s = first
    return s


def _late(sync: SyncEvent, disk: str, start: Snapshot) -> tuple[bool, int | None]:
    """(whether SMART's "before" was read after the sync began, and then the bytes the kernel
    counted written to ``disk`` from the sync's start up to that reading, or None: unknown).

    ``started_at`` is the first look that saw the sync; md began it somewhere after the look
    before, whose counters are ``kernel_start``. A reading taken in between is judged by its own
    kernel counter: past ``kernel_start``, the sync (or anything else the kernel's window
    counts) had written to the disk before SMART's "before" (VM, a loaded run: SMART 129.5 MB
    of the kernel's 267 MB when such a reading was taken as clean)."""
    k, k0 = start.kernel_bytes_written, sync.kernel_start.get(disk)
    if start.ts <= sync.started_at:
        if k is not None and k0 is not None and k > k0:
            return True, k - k0
        return False, None
    if k is None or k0 is None or k < k0:  # not kept, or the counters went back (a reboot)
        return True, None
    return True, k - k0


def _end(
    store: SnapshotStore, sync: SyncEvent, serial: str, now: Mapping[str, Snapshot] | None
) -> Snapshot | None:
    s = store.sync_snapshot(sync.id, serial, "sync-end")
    if s is not None:
        return s
    if sync.ended_at is not None:
        return store.first_snapshot_after(serial, sync.ended_at)
    if now and serial in now:
        return now[serial]
    latest = store.latest_snapshot(serial)
    return latest if latest is not None and latest.ts >= sync.started_at else None


def sync_wear(
    store: SnapshotStore, sync: SyncEvent, *, now: Mapping[str, Snapshot] | None = None
) -> SyncWear:
    """Per member: counters at the sync's start and at its end (or ``now``/latest while running)."""
    out: list[MemberWear] = []
    for m in sync.members:
        if not m.serial:
            out.append(MemberWear(m, None, None, None, None, None, sync.running))
            continue
        a = _start(store, sync, m.serial)
        b = _end(store, sync, m.serial, now)
        written = wear = None
        cap = None
        if a is not None and b is not None and b.ts >= a.ts:
            if a.bytes_written is not None and b.bytes_written is not None:
                written = max(0, b.bytes_written - a.bytes_written)
            if a.wear_used is not None and b.wear_used is not None:
                wear = b.wear_used - a.wear_used
        for snap in (b, a):
            if snap is not None and snap.capacity_bytes:
                cap = snap.capacity_bytes
                break
        late, before = _late(sync, m.disk, a) if a is not None else (False, None)
        out.append(MemberWear(m, written, cap, wear, a, b, sync.running, late, before))
    return SyncWear(sync, tuple(out))


def array_wear(store: SnapshotStore, array: str, array_uuid: str | None = None) -> list[SyncWear]:
    """The array's recorded syncs (by UUID when known, see ``SnapshotStore.syncs_for``)."""
    return [sync_wear(store, s) for s in store.syncs_for(array, array_uuid)]
