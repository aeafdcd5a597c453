"""Guest-side helpers for test_sync_watch.py and test_wear.py (``vm.call("tests.vm.guest_sync:NAME")``).

Each one reads the kernel's own files just before and just after the raidman call it brackets, in
the same guest process, and returns raw text (parsed on the host by ``tests.vm.kernel``) next to
what raidman produced. Standard library plus raidman only; every value is JSON-serialisable.
"""

from __future__ import annotations

import contextlib
import dataclasses
import io
import json
import os
import subprocess
import time
from typing import Any

from tests.vm.guest import _read

LIMITS = ("/proc/sys/dev/raid/speed_limit_min", "/proc/sys/dev/raid/speed_limit_max")


def _md(specs: dict[str, list[list[str]]]) -> dict[str, dict[str, str | None]]:
    return {md: _read(p, g) for md, (p, g) in specs.items()}


def _state_dir(state_dir: str | None) -> None:
    if state_dir:
        os.makedirs(state_dir, exist_ok=True)
        os.environ["RAIDMAN_STATE_DIR"] = state_dir


def report_bracket(
    specs: dict[str, list[list[str]]],
    args: list[str],
    state_dir: str | None = None,
    smart_disks: list[str] | None = None,
) -> dict[str, Any]:
    """sysfs (and ``smartctl -j`` of ``smart_disks``), then ``raidman ARGS`` (``app.cli:main``,
    stdout captured), then the same reads again."""
    from app.cli import main

    _state_dir(state_dir)
    smart_before = smartctl_units(smart_disks or [])
    before = _md(specs)
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = main(list(args))
    after = _md(specs)
    smart_after = smartctl_units(smart_disks or [])
    return {
        "before": before,
        "after": after,
        "rc": rc,
        "stdout": out.getvalue(),
        "smart_before": smart_before,
        "smart_after": smart_after,
    }


def track(
    specs: dict[str, list[list[str]]],
    md: str,
    *,
    slow_samples: int = 5,
    fast_max_kib: int | None = None,
    until_s: float = 90.0,
    interval: float = 1.0,
) -> dict[str, Any]:
    """Feed a ``SyncTracker`` with ``LinuxBackend().sample()`` once a second, each sample between
    two sysfs reads. After ``slow_samples`` samples, ``speed_limit_max`` is raised to
    ``fast_max_kib`` (if given) so the sync ends soon; stops once the tracker has recorded the
    end of ``md``'s sync (or after ``until_s``)."""
    from app.sync.tracker import SyncTracker
    from backends.linux import LinuxBackend

    backend = LinuxBackend()
    # what the sample itself read of md's progress: a value between the two brackets may be
    # one the kernel printed only for that instant ("none" while md restarts its sync thread)
    seen: dict[str, str | None] = {}
    watched = {f"/sys/block/{md}/md/sync_completed", f"/sys/block/{md}/md/sync_action"}
    read_text = backend.source.read_text

    def recording_read(path: str) -> str | None:
        text = read_text(path)
        if path in watched:
            seen[path] = text
        return text

    backend.source.read_text = recording_read  # type: ignore[method-assign]
    tracker = SyncTracker()
    rows: list[dict[str, Any]] = []
    t_end = time.monotonic() + until_s
    raised = False
    while time.monotonic() < t_end:
        t0 = time.monotonic()
        before = _md(specs)
        seen.clear()
        sample = backend.sample()
        after = _md(specs)
        events = tracker.update(sample)
        rows.append(
            {
                "before": before,
                "after": after,
                "read": dict(seen),
                "views": [dataclasses.asdict(v) for v in tracker.views() if v.array == md],
                "events": [dataclasses.asdict(e) for e in events],
            }
        )
        if tracker.finished_for(md):
            break
        if fast_max_kib and not raised and len(rows) >= slow_samples:
            with open(LIMITS[1], "w") as f:
                f.write(f"{fast_max_kib}\n")
            raised = True
        time.sleep(max(0.0, interval - (time.monotonic() - t0)))
    return {
        "rows": rows,
        "finished": [dataclasses.asdict(f) for f in tracker.finished_for(md)],
        "final": _md(specs),
    }


def _limits() -> dict[str, str | None]:
    return {p: v.strip() if v is not None else None for p, v in _read(list(LIMITS), []).items()}


def boost(md: str, state_dir: str, min_kib: int, max_kib: int) -> dict[str, Any]:
    """``plan_boost`` + ``execute`` for ``md``'s running sync; the limits before and after, and
    what the BoostStore holds on disk afterwards (re-read by a new store)."""
    from app.plans.audit_log import AuditLog
    from app.plans.executor import execute
    from app.sync.boost import BoostStore, plan_boost
    from backends.linux import LinuxBackend

    _state_dir(state_dir)
    backend = LinuxBackend()
    live = {a.name: a for a in backend.sample().arrays}[md]
    assert live.sync is not None, f"{md} is not syncing"
    store = BoostStore()
    before = _limits()
    stripe_before = _read([f"/sys/block/{md}/md/stripe_cache_size"], [])
    plan, record = plan_boost(
        backend.read_text,
        md,
        live.sync.action,
        level=live.level,
        members=len(live.member_states),
        store=store,
        min_kib=min_kib,
        max_kib=max_kib,
        raise_min=True,  # virtio disks say rotational; the test restores min too, so raise it
    )
    store.begin(record)  # persisted (pending) before anything is raised
    rep = execute(plan, backend, audit=AuditLog())
    store.commit(record)
    after = _limits()
    stripe_after = _read([f"/sys/block/{md}/md/stripe_cache_size"], [])
    reread = BoostStore()
    with open(reread.path) as f:
        on_disk = json.load(f)
    return {
        "action": live.sync.action,
        "before": before,
        "after": after,
        "stripe_before": stripe_before,
        "stripe_after": stripe_after,
        "steps": [list(s.argv) for s in plan.steps],
        "summary": rep.summary(),
        "failed": rep.failed is not None or bool(rep.refused),
        "record": dataclasses.asdict(record),
        "reread": [dataclasses.asdict(r) for r in reread.records],
        "on_disk": on_disk,
        "path": str(reread.path),
    }


def restore(state_dir: str) -> dict[str, Any]:
    """A fresh process (as after raidman was closed): ``due_restores`` from a new sample, then
    ``restore_plan`` + ``execute`` for each; the limits before and after."""
    from app.plans.audit_log import AuditLog
    from app.plans.executor import execute
    from app.sync.boost import BoostStore, due_restores, restore_plan
    from backends.linux import LinuxBackend

    _state_dir(state_dir)
    backend = LinuxBackend()
    store = BoostStore()
    due = due_restores(store, backend.sample())
    before = _limits()
    results = []
    for r in due:
        rep = execute(restore_plan(r, store), backend, audit=AuditLog())
        results.append({"array": r.array, "summary": rep.summary(), "ok": rep.failed is None})
        if rep.failed is None and not rep.refused:
            store.remove(r.array)
    after = _limits()
    return {
        "due": [r.array for r in due],
        "before": before,
        "after": after,
        "results": results,
        "left": [r.array for r in BoostStore().records],
        "stripe": _read([f"/sys/block/{r.array}/md/stripe_cache_size" for r in due], []),
    }


# ---- wear ------------------------------------------------------------------------------------
def smartctl_units(disks: list[str]) -> dict[str, int | None]:
    """NVMe ``data_units_written`` from ``smartctl -j -a`` (its own JSON), per disk."""
    out: dict[str, int | None] = {}
    for d in disks:
        p = subprocess.run(
            ["smartctl", "-j", "-a", f"/dev/{d}"], capture_output=True, text=True, timeout=60
        )
        try:
            log = json.loads(p.stdout)["nvme_smart_health_information_log"]
            out[d] = int(log["data_units_written"])
        except (ValueError, KeyError, TypeError):
            out[d] = None
    return out


def monitor_sync(
    md: str,
    members: list[str],
    state_dir: str,
    *,
    fast_max_kib: int,
    until_s: float = 300.0,
    interval: float = 0.5,
    trigger: list[str] | None = None,
) -> dict[str, Any]:
    """Run a ``WearMonitor`` over ``md``'s sync (running, or started by ``trigger`` after the
    monitor's first tick): tick until it has taken the sync-start snapshots (the sync held slow
    by the caller's limits meanwhile), bracket those snapshots with
    ``smartctl -j`` reads, raise ``speed_limit_max`` to ``fast_max_kib``, tick until the monitor
    has recorded the end, bracket again. Returns smartctl's units at both moments and what
    ``array_wear`` computes from the database."""
    from app.monitor import WearMonitor
    from app.wear.delta import array_wear
    from app.wear.snapshots import SnapshotStore
    from backends.linux import LinuxBackend

    _state_dir(state_dir)
    store = SnapshotStore.open()
    log: list[str] = []
    mon = WearMonitor(LinuxBackend(), store, interval_s=1e9, log=log.append)
    known = len(store.syncs_for(md))
    trace: list[tuple[object, ...]] = []
    t_start = time.monotonic()

    def mark() -> None:
        d = _read([f"/sys/block/{md}/md/sync_action", f"/sys/block/{md}/md/sync_completed"], [])
        trace.append(
            (round(time.monotonic() - t_start, 2), *[(v or "").strip() for v in d.values()])
        )

    # a sync already running is first seen, and its start read, in the first tick: what
    # smartctl reads before it is the lower bound of that read
    before_tick = smartctl_units(members)
    mon.tick()  # the "start" snapshots, as a monitor already running when a sync begins
    before_trigger = smartctl_units(members)
    if trigger:
        subprocess.run(trigger, check=True, capture_output=True, timeout=60)
    mark()
    start_before = smartctl_units(members)
    t_end = time.monotonic() + until_s
    while time.monotonic() < t_end and len(store.syncs_for(md)) <= known:
        mon.tick()
        mark()
        time.sleep(interval)
    start_after = smartctl_units(members)
    mark()
    with open(LIMITS[1], "w") as f:
        f.write(f"{fast_max_kib}\n")
    t0 = time.monotonic()
    while time.monotonic() < t_end and any(s.running for s in store.syncs_for(md)):
        mon.tick()
        time.sleep(interval)
    sync_s = time.monotonic() - t0
    mark()
    end_after = smartctl_units(members)
    wear = []
    for sw in array_wear(store, md):
        wear.append(
            {
                "action": sw.sync.action,
                "running": sw.sync.running,
                "outcome": sw.sync.outcome,
                "lines": sw.lines(),
                "members": {
                    m.member.disk: {
                        "bytes_written": m.bytes_written,
                        "capacity_bytes": m.capacity_bytes,
                        "start": m.start.bytes_written if m.start else None,
                        "start_reason": m.start.reason if m.start else None,
                        "end": m.end.bytes_written if m.end else None,
                    }
                    for m in sw.members
                },
            }
        )
    store.close()
    return {
        "before_tick": before_tick,
        "before_trigger": before_trigger,
        "trace": trace,
        "start_before": start_before,
        "start_after": start_after,
        "end_after": end_after,
        "sync_s": sync_s,
        "wear": wear,
        "log": log,
        "sync_component_kib": _read([f"/sys/block/{md}/md/component_size"], []),
    }
