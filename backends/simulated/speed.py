"""The simulator's speed model: how a sync moves forward in time on a ``SimState``.

``SyncModel`` is the half of ``SimState`` that moves time (limits, hardware ceilings, the
kernel's reported speed, one sync per disk, crediting I/O, starting and finishing syncs); the
bookkeeping (devices, arrays, LVM, I/O counters) is in :mod:`backends.simulated.state` and its
records (:mod:`backends.simulated.records`, with :class:`SyncJob`).

Speed model (documented here because other modules and the tests rely on it)
----------------------------------------------------------------------------
* Every sync (resync, recover, check, repair, reshape) advances its *progress position* in the
  kernel's unit for that action: array sectors for a RAID-10 resync/check/repair (as
  ``resync_max_sectors`` is the array size there), member sectors otherwise.
* ``speed_limit_min/max`` (or the array's own ``sync_speed_min/max``) bound the *progress* rate,
  the unit ``sync_speed`` shows, for every level (``md_do_sync()``'s ``currspeed``; see
  :mod:`app.model.sync_model`, which this follows). The array has a hardware ceiling (what its
  members sustain for this kind of sync, :func:`app.model.sync_model.hardware_progress_kib_s`).
  A sync runs at the ceiling when that is below the limit; else md holds it at
  :func:`app.model.sync_model.held_rate` of the max limit (a little above it: ``currspeed``
  divides by the mark window + 1 s). Seed 000's 525478 K/sec was read ~12 s after
  ``speed_limit_max`` was raised to 500000 (held rate ~517,500); its 384214 and 486124 on the
  way up from the default 200000.
* md runs one sync at a time on arrays that share a disk (``md_do_sync()``'s
  ``match_mddev_units()`` loop): a later sync waits (``sync_completed`` "delayed", mdstat
  ``resync=DELAYED``) until the earlier one ends or is frozen.
* RAID-4/5/6 ceilings scale with the stripe cache: ``base * scs / (scs + STRIPE_CACHE_HALF)``,
  calibrated on seed 001 (RAID-6 of five WD 1 TB: 25 "MB/s" at 256, 66 at 8192; the article
  reads mdstat's K/sec in thousands, so those are 25000 and 66000 K/sec here).
* The *reported* speed is the kernel's: progress since the oldest of ten marks taken every
  three seconds (a 27-30 s window) divided by the time since that mark. After the limits are
  raised it therefore ramps up over ~30 s, which reproduces seed 000's 384214 -> 486124 -> 525478.
* Writes and reads caused by a sync are credited to the member devices by exact integer
  arithmetic on the progress position (see ``SyncJob``), so a recovery writes exactly the
  component size to its target.
"""

from __future__ import annotations

import math
from fractions import Fraction
from typing import TYPE_CHECKING

from app.model import levels, md_names, sync_model
from app.model.devices import SECTOR
from backends.simulated.records import SEQ_HDD, ReshapeFrom, SimArray, SimDisk, SyncJob

# --- model constants -----------------------------------------------------------------------
STRIPE_CACHE_HALF = 457.6  # pages; seed 001: f(256)/f(8192) = 25/66
MARK_STEP_S = 3.0  # SYNC_MARK_STEP
SYNC_MARKS = 10
SYNC_ACTIONS = ("resync", "recover", "check", "repair", "reshape")
CHECK_RECOVERY_S = 0.2  # md_check_recovery's look after MD_RECOVERY_NEEDED: a moment

PARITY_EFFICIENCY = Fraction(69686, SEQ_HDD)  # seed 001: base 69686 K/s for 150 MB/s disks


def stripe_cache_factor(pages: int) -> float:
    return pages / (pages + STRIPE_CACHE_HALF)


class SyncModel:
    """The sync methods of ``SimState`` (a mixin: ``SimState`` holds the fields named here)."""

    if TYPE_CHECKING:
        t: float
        disks: dict[str, SimDisk]
        arrays: dict[str, SimArray]
        speed_limit_min: int
        speed_limit_max: int
        events: list[tuple[float, str, str]]

        def disk_of(self, dev: str) -> str | None: ...
        def add_io(self, dev: str, read: int, write: int) -> None: ...
        def touch(self) -> None: ...
        def next_sync_order(self) -> int: ...

    # ---- sync model ---------------------------------------------------------------------
    def effective_limits(self, a: SimArray) -> tuple[int, int]:
        lo = a.sync_speed_min if a.sync_speed_min is not None else self.speed_limit_min
        hi = a.sync_speed_max if a.sync_speed_max is not None else self.speed_limit_max
        return lo, hi

    def ceiling(self, a: SimArray, action: str) -> float:
        """What the hardware sustains for this sync, in progress KiB/s."""
        if a.base_ceiling_kib_s is not None:
            base = a.base_ceiling_kib_s / (2 if action == "reshape" else 1)
        else:
            seqs = [
                self.disks[d].seq_kib_s
                for m in a.members
                if (d := self.disk_of(m.device)) is not None
            ]
            slowest = min(seqs) if seqs else SEQ_HDD
            member = slowest * PARITY_EFFICIENCY if a.level in levels.PARITY else slowest
            base = sync_model.hardware_progress_kib_s(
                a.level, a.raid_disks, a.layout, action, int(member)
            )
        if a.level in levels.PARITY:
            base *= stripe_cache_factor(a.stripe_cache_size)
        return base

    def rate(self, a: SimArray) -> float:
        """Progress KiB/s of the running sync (0 when frozen, delayed or idle)."""
        job = a.job
        if job is None or job.frozen or job.waiting:
            return 0.0
        _lo, hi = self.effective_limits(a)
        cap = self.ceiling(a, job.action)
        return min(cap, sync_model.held_rate(hi))

    def update_waits(self) -> None:
        """md_do_sync()'s one-sync-per-disk rule: in the order they were asked for, a sync
        whose array shares a disk with one that runs waits (delayed); one that may run now
        starts its speed marks afresh. Sharing a disk is md's match_mddev_units(): a member of
        each on one whole disk."""
        jobs = sorted(
            (a for a in self.arrays.values() if a.job is not None and not a.job.frozen),
            key=lambda a: (a.job.queued if a.job else 0, a.name),
        )
        # the whole disks of the syncs that run (one set, not a check against each)
        busy: set[str] = set()
        for a in jobs:
            job = a.job
            assert job is not None
            disks = sync_model.whole_disks((m.device for m in a.members), self.disk_of)
            wait = not busy.isdisjoint(disks)
            if job.waiting and not wait:
                job.started_at = self.t
                job.hist = [(self.t, job.pos)]
                self.events.append((self.t, a.name, f"{job.action} no longer delayed"))
            job.waiting = wait
            if not wait:
                busy |= disks

    def reported_speed(self, a: SimArray) -> int | None:
        """The kernel's sync_speed: progress since the oldest mark / time since it, KiB/s."""
        job = a.job
        if job is None:
            return None
        if job.frozen:
            return 0
        elapsed = self.t - job.started_at
        k = max(0, math.floor(elapsed / MARK_STEP_S) - (SYNC_MARKS - 1))
        mark_t = job.started_at + MARK_STEP_S * k
        dt = self.t - mark_t
        if dt <= 0:
            return round(self.rate(a))
        db = job.pos - job.pos_at(mark_t, self.t)
        return round(db / 2 / dt)

    def rate_changed(self, a: SimArray) -> None:
        """Record a breakpoint: call after anything that changes an array's rate."""
        job = a.job
        if job is None:
            return
        if job.hist[-1][0] != self.t:
            job.hist.append((self.t, job.pos))
        # keep one breakpoint older than the window
        horizon = self.t - MARK_STEP_S * (SYNC_MARKS + 1)
        while len(job.hist) > 2 and job.hist[1][0] <= horizon:
            job.hist.pop(0)

    def advance_to(self, t: float) -> None:
        if t <= self.t:
            return
        # syncs may end before t, which can start others (queued recovery): loop on events
        guard = 0
        while self.t < t and guard < 10000:
            guard += 1
            nxt = t
            ends: dict[str, float] = {}
            # only arrays with a job move (rate() is 0 without one): on a machine of 250
            # arrays with 16 syncing this is what keeps every read of the simulator cheap
            self.update_waits()
            syncing = [a for a in self.arrays.values() if a.job is not None]
            rates = {a.name: self.rate(a) for a in syncing}
            for a in syncing:
                r = rates[a.name]
                if a.job is not None and r > 0:
                    ends[a.name] = self.t + max(0.0, (a.job.total - a.job.pos) / (2 * r))
                    nxt = min(nxt, ends[a.name])
            dt = nxt - self.t
            finished: list[SimArray] = []
            for a in syncing:
                job = a.job
                if job is None:
                    continue
                r = rates[a.name]
                if r > 0 and dt > 0:
                    job.pos = min(float(job.total), job.pos + 2 * r * dt)
                if a.name in ends and ends[a.name] <= nxt + 1e-9:
                    job.pos = float(job.total)
                if job.pos >= job.total:
                    finished.append(a)
            self.t = nxt
            for a in syncing:
                if a.job is not None:
                    self.credit(a)
                    self.rate_changed_if_long(a)
            for a in finished:
                self.finish_sync(a)
            if not finished and nxt >= t:
                break
        self.t = t

    def rate_changed_if_long(self, a: SimArray) -> None:
        """Keep the history bounded during long advances (rate is constant in between)."""
        job = a.job
        if job is None:
            return
        horizon = self.t - MARK_STEP_S * (SYNC_MARKS + 1)
        while len(job.hist) > 2 and job.hist[1][0] <= horizon:
            job.hist.pop(0)

    def credit(self, a: SimArray) -> None:
        job = a.job
        if job is None:
            return
        new = int(job.pos)
        old = job.credited
        if new <= old:
            return
        for dev, (rw, ww) in job.weights.items():
            r = (new * SECTOR * rw.numerator) // rw.denominator - (
                old * SECTOR * rw.numerator
            ) // rw.denominator
            w = (new * SECTOR * ww.numerator) // ww.denominator - (
                old * SECTOR * ww.numerator
            ) // ww.denominator
            self.add_io(dev, r, w)
        job.credited = new
        for m in a.members:
            if m.device in job.targets and m.recovery_start is not None:
                m.recovery_start = new

    def start_sync(
        self,
        a: SimArray,
        action: str,
        *,
        pos: float = 0.0,
        targets: tuple[str, ...] = (),
        reshape: ReshapeFrom | None = None,
        partial_fraction: Fraction | None = None,
    ) -> None:
        """Begin a sync; ``partial_fraction`` (bitmap re-add) scales the target's writes."""
        if action == "reshape":
            total = a.component_kib * 2
        elif a.level == "raid10" and action in ("resync", "check", "repair"):
            total = a.size_kib() * 2
        else:
            total = a.component_kib * 2
        if partial_fraction is not None:
            total = max(8, int(total * partial_fraction))
        job = SyncJob(
            action=action,
            total=total,
            pos=pos,
            started_at=self.t,
            hist=[(self.t, pos)],
            targets=targets,
            credited=int(pos),
            reshape=reshape,
            queued=self.next_sync_order(),
        )
        job.weights = self.sync_weights(a, action, targets)
        if action in ("check", "repair"):
            job.mismatches = a.mismatch_sectors_on_check
        a.job = job
        a.last_sync_action = md_names.last_sync_word(action)  # as md_do_sync sets it, at once
        a.array_state = "active" if action != "check" else a.array_state
        for m in a.members:
            if m.device in targets:
                m.recovery_start = int(pos)
        self.events.append((self.t, a.name, f"{action} started"))
        self.touch()

    def sync_weights(
        self, a: SimArray, action: str, targets: tuple[str, ...]
    ) -> dict[str, tuple[Fraction, Fraction]]:
        """Member bytes read/written per progress byte, for each member taking part."""
        active = sorted(
            (m for m in a.members if m.slot is not None and "faulty" not in m.state),
            key=lambda m: m.slot if m.slot is not None else 0,
        )
        sources = [m for m in active if m.device not in targets and "in_sync" in m.state]
        w: dict[str, tuple[Fraction, Fraction]] = {}
        zero = Fraction(0)
        one = Fraction(1)
        n = a.raid_disks
        if action == "recover":
            for t in targets:
                w[t] = (zero, one)
            if a.level in ("raid1", "raid10"):
                if sources:
                    src = sources[0]
                    if a.level == "raid10":
                        tslots = [m.slot for m in a.members if m.device in targets]
                        partners = [
                            m
                            for m in sources
                            if tslots
                            and m.slot is not None
                            and m.slot // a.copies == (tslots[0] or 0) // a.copies
                        ]
                        if partners:
                            src = partners[0]
                    w[src.device] = (one, zero)
            else:
                for m in sources:
                    w[m.device] = (one, zero)
            return w
        if action == "reshape":
            for m in active:
                w[m.device] = (one, one)
            return w
        if a.level == "raid10":
            per = Fraction(a.copies, n)  # member sectors per array sector, per member
            for m in active:
                first_copy = n % a.copies != 0 or (m.slot or 0) % a.copies == 0
                if action == "check" or action == "repair":
                    w[m.device] = (per, zero)
                elif n % a.copies != 0:
                    w[m.device] = (
                        per / a.copies,
                        per * (a.copies - 1) / a.copies * a.resync_write_fraction,
                    )
                elif first_copy:
                    w[m.device] = (per, zero)
                else:
                    w[m.device] = (zero, per * a.resync_write_fraction)
            return w
        if a.level == "raid1":
            for i, m in enumerate(active):
                if action in ("check", "repair") or i == 0:
                    w[m.device] = (one, zero)
                else:
                    w[m.device] = (zero, one * a.resync_write_fraction)
            return w
        if a.level in levels.PARITY:
            parity = levels.LEVELS[a.level].parity
            for m in active:
                if action in ("check", "repair"):
                    w[m.device] = (one, zero)
                else:  # resync: read the data blocks, write the parity
                    w[m.device] = (Fraction(n - parity, n), Fraction(parity, n))
            return w
        return w

    def finish_sync(self, a: SimArray) -> None:
        job = a.job
        if job is None:
            return
        self.credit(a)
        action = job.action
        if action in ("check", "repair"):
            a.mismatch_cnt = job.mismatches
            a.sync_min = 0
        elif action == "resync":
            a.mismatch_cnt = 0
        if action == "recover":
            for m in a.members:
                if m.device in job.targets and "faulty" not in m.state:
                    m.state.discard("spare")
                    m.state.add("in_sync")
                    m.recovery_start = None
            # a replacement done: the replaced member goes faulty
            for m in a.members:
                if "want_replacement" in m.state:
                    m.state = {"faulty"}
                    m.slot = None
            for m in a.members:
                if "replacement" in m.state:
                    m.state.discard("replacement")
        if action == "reshape" and job.reshape is not None:
            self.end_reshape(a, job.reshape)
        dur = self.t - job.started_at
        a.history.append(
            {
                "action": action,
                "start": job.started_at,
                "end": self.t,
                "duration_s": dur,
                "mismatch_cnt": a.mismatch_cnt,
            }
        )
        a.job = None
        a.array_state = "clean"
        self.events.append((self.t, a.name, f"{action} finished after {dur:.0f}s"))
        self.touch()
        self.maybe_start_recovery(a)

    def end_reshape(self, a: SimArray, old: ReshapeFrom) -> None:
        """What md and mdadm do when a reshape ends: the new size (raid5.c end_reshape), the
        devices it wrote in sync, and for RAID-6 -> 5 the level changed with the last slot
        freed as a spare (raid5.c raid5_takeover_raid6; seen in the VM: tests/fixtures/
        md_kinds/walk.json "raid6 -> raid5 done")."""
        old_kib = SimArray(a.name, old.level, old.raid_disks, [], a.component_kib).size_kib()
        for m in a.members:
            if m.slot is not None and "spare" in m.state and "faulty" not in m.state:
                m.state.discard("spare")
                m.state.add("in_sync")
                m.recovery_start = None
        if old.level_after is not None:
            a.level = old.level_after
            a.raid_disks -= 1
            a.layout = (a.layout or "").removesuffix("-6") or None  # left-symmetric-6 -> -symmetric
            for m in a.members:
                if m.slot == a.raid_disks:
                    m.slot = None
                    m.state = {"spare"}
        a.job = None  # size_kib: the new geometry from here
        self.events.append((self.t, a.name, f"array size {old_kib} -> {a.size_kib()} KiB"))

    def maybe_start_recovery(self, a: SimArray) -> None:
        """If the array is degraded and has a spare, md starts a recovery onto it."""
        if a.job is not None or not a.redundant() or a.level == "container":
            return
        missing = sorted(set(range(a.raid_disks)) - set(a.slots()))
        spares = [m for m in a.members if m.slot is None and m.state == {"spare"}]
        rebuilding = [
            m
            for m in a.members
            if m.slot is not None and "spare" in m.state and "faulty" not in m.state
        ]
        targets: list[str] = [m.device for m in rebuilding]
        for slot in missing:
            if not spares:
                break
            sp = spares.pop(0)
            sp.slot = slot
            sp.recovery_start = 0
            targets.append(sp.device)
        if targets and a.degraded() > 0 and a.degraded() <= self.max_failures(a):
            self.start_sync(a, "recover", targets=tuple(targets))

    def note_recovery_needed(self, a: SimArray) -> None:
        """A member failed or a device was added: md sets MD_RECOVERY_NEEDED, and
        md_sync_action() reads "recover" (no other sync bit set) until md_check_recovery()
        runs on the md thread. When it finds nothing to rebuild (remove_and_add_spares: no
        spare) it clears the bits and md_do_sync never runs: for ``CHECK_RECOVERY_S`` the
        array shows a "recover" with no target, as the VM does after ``mdadm --fail`` on a
        RAID-10 without spare (app.model.sync_model.md_sync)."""
        if a.job is None and a.redundant() and a.level != "container":
            a.recovery_needed_until = self.t + CHECK_RECOVERY_S

    @staticmethod
    def max_failures(a: SimArray) -> int:
        if a.level == "raid10":  # as many as one per mirror set (the simulator's best case)
            return a.raid_disks // max(1, a.copies)
        return levels.failures_survived(a.level, a.raid_disks, a.layout)
