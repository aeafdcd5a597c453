"""Functions that run INSIDE the guest (``vm.call("tests.vm.guest:NAME")``), against the real kernel.

Standard library plus raidman only; each returns something JSON-serialisable.
"""

from __future__ import annotations

import dataclasses
from typing import Any


def probe_asdict() -> dict[str, Any]:
    """raidman's model of the guest: ``dataclasses.asdict(LinuxBackend().probe())``."""
    from backends.linux import LinuxBackend

    machine = LinuxBackend().probe()
    return dataclasses.asdict(machine)


def sample_asdict() -> dict[str, Any]:
    """raidman's 1 Hz sample of the guest: ``dataclasses.asdict(LinuxBackend().sample())``."""
    from backends.linux import LinuxBackend

    return dataclasses.asdict(LinuxBackend().sample())


def _read(paths: list[str], globs: list[str]) -> dict[str, str | None]:
    import glob as _glob

    out: dict[str, str | None] = {}
    for p in paths + [q for g in globs for q in sorted(_glob.glob(g))]:
        try:
            with open(p) as f:
                out[p] = f.read()
        except OSError:
            out[p] = None
    return out


def bracketed_probe(specs: dict[str, list[list[str]]]) -> dict[str, Any]:
    """The raw sysfs text of each array just before and just after raidman's probe.

    ``specs``: {md: [paths, globs]} (from ``tests.vm.kernel.md_paths``)."""
    import time

    from backends.linux import LinuxBackend

    backend = LinuxBackend()
    before = {md: _read(p, g) for md, (p, g) in specs.items()}
    t0 = time.monotonic()
    machine = backend.probe()
    probe_s = time.monotonic() - t0
    after = {md: _read(p, g) for md, (p, g) in specs.items()}
    return {
        "before": before,
        "machine": dataclasses.asdict(machine),
        "after": after,
        "probe_s": probe_s,
    }
