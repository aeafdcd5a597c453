"""Guest side of test_md_events_wake.py: ``MdEvents`` watching md's sysfs attributes only
(/proc/mdstat left out, so every wake comes from ``sync_action``, ``array_state``, ``degraded``
or ``sync_completed``) while the array is assembled, checked, idled and stopped."""

from __future__ import annotations

import subprocess
import threading
import time
from typing import Any


def sysfs_wakes(md: str, devices: list[str], timeout_s: float = 20.0) -> dict[str, Any]:
    """Returns each step's guest-monotonic time and the wakes (time, paths) the watcher saw."""
    from backends.linux.events import MD_ATTRS, MdEvents

    ev = MdEvents("/nonexistent/mdstat")  # sysfs only
    wakes: list[tuple[float, tuple[str, ...]]] = []
    stop = threading.Event()
    errors: list[str] = []

    def loop() -> None:
        try:
            while not stop.is_set():
                t0 = time.monotonic()
                woke = ev.wait(timeout_s)
                if woke:
                    wakes.append((time.monotonic(), ev.woke))
                elif time.monotonic() - t0 < 0.05:  # nothing to watch yet: look again soon
                    time.sleep(0.05)
        except Exception as e:  # reported, not hidden
            errors.append(f"{e.__class__.__name__}: {e}")

    def sh(*argv: str) -> None:
        subprocess.run(argv, check=True, capture_output=True, timeout=120)

    def names() -> set[str]:
        while True:
            try:
                return {p.rsplit("/", 1)[1] for p in ev.watched}  # read while it blocks in poll
            except RuntimeError:  # changed size while read: look again
                continue

    def wait_watched(want: set[str], limit: float = 40.0, *, within: bool = False) -> float:
        t0 = time.monotonic()
        while time.monotonic() - t0 < limit:
            now = names()
            if now == want or (within and now <= want):
                return time.monotonic()
            time.sleep(0.05)
        return -1.0

    def action(step: str, what: str) -> None:
        steps[step] = time.monotonic()
        with open(f"/sys/block/{md}/md/sync_action", "w") as f:
            f.write(f"{what}\n")
        time.sleep(3.0)

    steps: dict[str, float] = {}
    sh("mdadm", "--stop", f"/dev/{md}")
    th = threading.Thread(target=loop, daemon=True)
    th.start()
    time.sleep(0.5)
    steps["assemble"] = time.monotonic()
    sh("mdadm", "--assemble", f"/dev/{md}", *(f"/dev/{d}" for d in devices))
    steps["registered"] = wait_watched(set(MD_ATTRS))
    time.sleep(1.0)
    action("check", "check")
    action("idle", "idle")
    steps["stop"] = time.monotonic()
    sh("mdadm", "--stop", f"/dev/{md}")
    # md removes the redundancy attributes; the stopped md127 may stay listed with array_state
    steps["dropped"] = wait_watched({"array_state"}, within=True)
    watched_stopped = sorted(names())
    time.sleep(2.0)
    steps["reassemble"] = time.monotonic()
    sh("mdadm", "--assemble", f"/dev/{md}", *(f"/dev/{d}" for d in devices))
    steps["registered again"] = wait_watched(set(MD_ATTRS))
    time.sleep(1.0)
    action("check again", "check")
    action("idle again", "idle")
    steps["end"] = time.monotonic()
    stop.set()
    # wake the watcher out of its 20 s wait (it would sit out the timer): stopping the array
    # writes array_state; the test reads nothing after "end"
    sh("mdadm", "--stop", f"/dev/{md}")
    th.join(timeout_s + 5)
    ev.close()
    return {
        "steps": steps,
        "wakes": [[t, list(p)] for t, p in wakes],
        "errors": errors,
        "watched_stopped": watched_stopped,
        "timeout_s": timeout_s,
    }
