"""Guest side of test_md_kinds.py (``vm.call("tests.vm.guest_md_kinds:walk", steps)``): a whole
walk of md commands in ONE guest call (each raidman or agent round trip costs seconds under TCG),
with the kernel's sysfs read right before and right after raidman's probe and sample at every
step. Standard library plus raidman only; every value is JSON-serialisable.
"""

from __future__ import annotations

import dataclasses
import subprocess
import time
from typing import Any

from tests.vm.guest import _read

BASE_MD = "/sys/block/{md}/md"
WAIT_S = 90.0


def _attr(md: str, name: str) -> str:
    try:
        with open(f"{BASE_MD.format(md=md)}/{name}") as f:
            return f.read().strip()
    except OSError:
        return ""


def _wait(md: str, until: str, attr: str = "sync_action") -> float:
    """Until ``md``'s ``attr`` reads ``until`` (sync_action "idle": its sync ended; "reshape":
    it began; level "raid5": mdadm's background half changed the level after a reshape); the
    seconds it took. Raises TimeoutError after WAIT_S."""
    t0 = time.monotonic()
    while _attr(md, attr) != until:
        if time.monotonic() - t0 > WAIT_S:
            raise TimeoutError(f"{md}: {attr} {_attr(md, attr)!r}, not {until!r}")
        time.sleep(0.1)
    return time.monotonic() - t0


def walk(steps: list[dict[str, Any]], specs: dict[str, list[list[str]]]) -> list[dict[str, Any]]:
    """Each step: ``run`` (argvs, each must exit 0), ``write`` ([path, text] pairs), ``wait``
    ([md, value] or [md, value, attr]: until sysfs ``attr``, sync_action by default, reads it) — then, where ``look`` names arrays, their sysfs files (``specs[md]``:
    paths, globs), ``LinuxBackend().probe()``, ``LinuxBackend().sample()``, the files again."""
    from backends.linux import LinuxBackend

    backend = LinuxBackend()
    out: list[dict[str, Any]] = []
    for st in steps:
        t0 = time.monotonic()
        for argv in st.get("run", []):
            r = subprocess.run(argv, capture_output=True, text=True, timeout=120)
            if r.returncode != 0:
                raise RuntimeError(f"{st['name']}: {argv} exited {r.returncode}: {r.stderr}")
        for path, text in st.get("write", []):
            with open(path, "w") as f:
                f.write(text)
        waited = {f"{w[0]} {w[-1]}": _wait(*w) for w in st.get("wait", [])}
        look = st.get("look", [])
        rec: dict[str, Any] = {"name": st["name"], "waited": waited}
        if look:
            rec["before"] = {md: _read(*specs[md]) for md in look}
            machine = backend.probe()
            sample = backend.sample()
            rec["after"] = {md: _read(*specs[md]) for md in look}
            rec["model"] = {a.name: dataclasses.asdict(a) for a in machine.arrays if a.name in look}
            rec["sample"] = {a.name: dataclasses.asdict(a) for a in sample.arrays if a.name in look}
        rec["s"] = time.monotonic() - t0
        out.append(rec)
    return out
