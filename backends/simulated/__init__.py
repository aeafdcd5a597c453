"""The simulated backend: named scenarios from the source articles, moving with a clock.

``SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())`` gives a machine whose
resync advances when the clock does; ``run()`` changes its state like the real programs would.
See ``backends/simulated/state.py`` for the speed and wear model.
"""

from backends.simulated.backend import SimulatedBackend, scenario_names
from backends.simulated.clock import SimClock

__all__ = ["SimClock", "SimulatedBackend", "scenario_names"]
