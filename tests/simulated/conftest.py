from __future__ import annotations

import pytest

from backends.simulated import SimClock, SimulatedBackend


@pytest.fixture
def make():
    def _make(name: str) -> SimulatedBackend:
        return SimulatedBackend.from_scenario(name, clock=SimClock.manual())

    return _make
