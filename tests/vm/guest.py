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
