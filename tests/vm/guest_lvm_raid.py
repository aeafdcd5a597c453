"""Guest-side helper for test_lvm_raid.py (``vm.call("tests.vm.guest_lvm_raid:NAME")``): the
wear monitor over a raid LV's sync, in one guest process (no interpreter start per look).
Standard library plus raidman only; every value is JSON-serialisable."""

from __future__ import annotations

import time
from typing import Any

from tests.vm.guest_sync import _state_dir

SYSTEM_MIN = "/proc/sys/dev/raid/speed_limit_min"
RELEASE_MIN_KIB = 200000


def _backend() -> Any:
    """The Linux backend without SMART: the records' kernel counters are what these tests
    check, and each smartctl run costs seconds of TCG (VM CPU time is CI's budget)."""
    from app.model.smart import SmartReading
    from backends.linux import LinuxBackend

    class NoSmart(LinuxBackend):
        def smart(self, disk: str) -> SmartReading:
            return SmartReading(device=disk, available=False, reason="not read in this test")

    return NoSmart()


def _diskstats_written(disks: list[str]) -> dict[str, int]:
    """Bytes written per disk now (/proc/diskstats field 10: sectors written)."""
    out: dict[str, int] = {}
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if len(p) > 9 and p[2] in disks:
                out[p[2]] = int(p[9]) * 512
    return out


def _reload(
    lv: str, rate_kib: int, tick: Any, looks: int = 6, interval: float = 0.5
) -> dict[str, Any]:
    """A table reload while the LV's sync runs (``lvchange --maxrecoveryrate``: dm-raid
    freezes md, the sync goes on after it), then ``looks`` more looks: the records then."""
    import subprocess

    r = subprocess.run(
        ["lvchange", "--maxrecoveryrate", f"{rate_kib}K", lv],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    for _ in range(looks):
        tick()
        time.sleep(interval)
    return {"rc": r.returncode, "stderr": r.stderr[-300:]}


def _nvme_written() -> dict[str, int]:
    """Bytes written per NVMe namespace now (/proc/diskstats)."""
    out: dict[str, int] = {}
    with open("/proc/diskstats") as f:
        for line in f:
            p = line.split()
            if len(p) > 9 and p[2].startswith("nvme") and "p" not in p[2][4:]:
                out[p[2]] = int(p[9]) * 512
    return out


def record_lv_sync(
    lv: str,
    pvs: list[str],
    state_dir: str,
    *,
    reload_kib: int | None = None,
    until_s: float = 240.0,
    interval: float = 0.5,
) -> dict[str, Any]:
    """A ``WearMonitor`` started while ``lv``'s sync is held by its --maxrecoveryrate: ticks
    until the record has begun, then lets it run by raising md's min above that max (md
    throttles only above its min, md.c md_do_sync; an lvchange of the rate would reload the
    LV's table and stop the resync for a moment) and ticks until the record has ended; with
    ``reload_kib``, an ``lvchange --maxrecoveryrate`` (a reload) before that release.
    Returns the records (``syncs_json``), the monitor's log, a trace of its looks and the PVs'
    written bytes (/proc/diskstats) just before and after the look that began the record, and
    after the one that ended it."""
    from app.monitor import WearMonitor
    from app.wear.report import syncs_json
    from app.wear.snapshots import SnapshotStore

    _state_dir(state_dir)
    store = SnapshotStore.open()
    log: list[str] = []
    mon = WearMonitor(_backend(), store, interval_s=1e9, log=log.append)
    t0 = time.monotonic()
    t_end = t0 + until_s
    began: dict[str, int] = {}
    trace: list[tuple[object, ...]] = []

    def look() -> None:
        mon.tick()
        live = mon.session.view.live
        x = live.live(lv) if live is not None else None
        s = x.sync if x is not None else None
        trace.append(
            (
                round(time.monotonic() - t0, 2),
                s.action if s else "idle",
                s.done_sectors if s else None,
                s.speed_kib_s if s else None,
                "".join("A" if "in_sync" in f else "D" if "faulty" in f else "a"
                        for _d, f in (x.member_states if x else ())),
                _diskstats_written(pvs).get(pvs[-1]),
            )
        )  # fmt: skip

    began_after: dict[str, int] = {}
    while time.monotonic() < t_end and not store.syncs_for(lv):
        began = _diskstats_written(pvs)
        look()
        began_after = _diskstats_written(pvs)
        time.sleep(interval)
    reload = None
    if reload_kib is not None:
        reload = _reload(lv, reload_kib, look)
        reload["records"] = [(r.action, r.running) for r in store.syncs_for(lv)]
    with open(SYSTEM_MIN, "w") as f:
        f.write(f"{RELEASE_MIN_KIB}\n")
    while time.monotonic() < t_end and any(s.running for s in store.syncs_for(lv)):
        look()
        time.sleep(interval)
    ended = _diskstats_written(pvs)
    records = syncs_json(store, lv)
    store.close()
    return {
        "records": records,
        "log": log,
        "began": began,
        "began_after": began_after,
        "ended": ended,
        "trace": trace,
        "reload": reload,
    }


def _lvs(lv: str) -> dict[str, str]:
    import json
    import subprocess

    r = subprocess.run(
        ["lvs", "--reportformat", "json", "-o", "lv_attr,lv_health_status,sync_percent", lv],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    rows = json.loads(r.stdout or "{}").get("report", [{}])[0].get("lv", [{}])
    return dict(rows[0]) if rows else {"stderr": r.stderr}


def fail_and_repair(
    lv: str,
    filler: str,
    state_dir: str,
    reload_kib: int,
    *,
    until_s: float = 240.0,
    interval: float = 0.5,
) -> dict[str, Any]:
    """``lv`` (a raid1 LV held by its --maxrecoveryrate) has lost a PV (hot-unplugged by the
    host): what the probe and the tree say; ``plan lv-repair`` while ``filler`` takes the only
    other PV's space (refused), and once it is removed (its plan); then that plan's step run
    under a ``WearMonitor``, md's min raised above the LV's max once the recovery's record has
    begun, the monitor ticking until it has ended; between, once the repair command is done,
    an ``lvchange --maxrecoveryrate reload_kib`` (one more table reload)."""
    import subprocess

    from app.monitor import WearMonitor
    from app.plans.builders.lv_raid import build_lv_repair
    from app.plans.geometry import PlanError
    from app.wear.report import syncs_json
    from app.wear.snapshots import SnapshotStore
    from backends.linux import LinuxBackend
    from widgets.tree_spec import build_tree_spec

    vg, _, name = lv.partition("/")
    out: dict[str, Any] = {}
    # a write: md_error() on the image whose device is gone (dm-raid then says "D")
    subprocess.run(
        ["dd", "if=/dev/zero", f"of=/dev/{lv}", "bs=64K", "count=4", "oflag=direct"],
        capture_output=True, timeout=60,
    )  # fmt: skip
    out["lvs_failed"] = _lvs(lv)
    m = LinuxBackend().probe()
    x = m.lv(vg, name)
    out["raid"] = x.raid.to_json() if x is not None and x.raid is not None else None
    specs = build_tree_spec(m)
    out["tree"] = [
        s.label.plain
        for s in specs
        if (s.ref.kind == "lv" and s.label.plain.startswith(f"{name} "))
        or s.ref.key.startswith(f"rimage:{lv}:")
    ]
    try:
        build_lv_repair(m, lv)
        out["refused"] = None
    except PlanError as e:
        out["refused"] = str(e)
    r = subprocess.run(["lvremove", "-y", filler], capture_output=True, text=True, timeout=60)
    out["lvremove"] = (r.returncode, r.stderr[-500:])
    _state_dir(state_dir)
    store = SnapshotStore.open()
    log: list[str] = []
    mon = WearMonitor(_backend(), store, interval_s=1e9, log=log.append)
    mon.tick()  # the first look: before the repair; its probe is the plan's
    probed = mon.session.view.probed
    assert probed is not None
    plan = build_lv_repair(probed, lv)
    out["plan"] = [list(s.argv) for s in plan.steps]
    cons = plan.consequences
    out["plan_syncs"] = [f.action for f in cons.syncs] if cons is not None else None
    t_end = time.monotonic() + until_s
    (argv,) = out["plan"]
    t0 = time.monotonic()
    trace: list[tuple[object, ...]] = []

    def look() -> None:
        w0 = _nvme_written()
        mon.tick()
        live = mon.session.view.live
        x = live.live(lv) if live is not None else None
        s = x.sync if x is not None else None
        recs = store.syncs_for(lv)
        trace.append(
            (
                round(time.monotonic() - t0, 2),
                s.action if s else "idle",
                s.done_sectors if s else None,
                "".join("A" if "in_sync" in f else "D" if "faulty" in f else "a"
                        for _d, f in (x.member_states if x else ())),
                x.degraded if x else None,
                w0,
                _nvme_written(),
                [(r.action, r.running, [m.device for m in r.members], dict(r.kernel_start))
                 for r in recs],
            )
        )  # fmt: skip

    repair = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    while time.monotonic() < t_end and not store.syncs_for(lv):
        look()
        time.sleep(interval)
    while repair.poll() is None and time.monotonic() < t_end:  # its own reloads done
        look()
        time.sleep(interval)
    # one more reload while it recovers (each showed "frozen" with the new image "a")
    out["reload"] = _reload(lv, reload_kib, look)
    out["reload"]["records"] = [(r.action, r.running) for r in store.syncs_for(lv)]
    with open(SYSTEM_MIN, "w") as f:
        f.write(f"{RELEASE_MIN_KIB}\n")
    while time.monotonic() < t_end and (
        repair.poll() is None or any(s.running for s in store.syncs_for(lv))
    ):
        look()
        time.sleep(interval)
    out["trace"] = trace
    rout, rerr = repair.communicate(timeout=60)
    out["repair"] = (repair.returncode, rout[-500:], rerr[-500:])
    out["lvs_after"] = _lvs(lv)
    out["records"] = syncs_json(store, lv)
    out["log"] = log
    store.close()
    return out
