"""The TUI wakes on md events (issue 15, point 2): a backend with an event source
(``app.backend.EventSource``, /proc/mdstat POLLPRI on Linux) makes the app sample at once,
long before its timer would; an event while a sample is in flight gives one more sample."""

from __future__ import annotations

import threading

from app.backend import EventSource
from app.model.live import LiveSample
from app.ui.app import RaidmanApp
from tests.test_session import DISKS, ScriptedBackend, Writes, sample
from tests.ui.helpers import wait_for

TIMER_S = 3600.0  # the sample timer never fires during the test


class EventBackend(ScriptedBackend):
    """The scripted machine, with md events fired by the test."""

    def __init__(self, samples: list[LiveSample]) -> None:
        super().__init__(samples)
        self.fire = threading.Event()
        self.waits = 0

    def wait_event(self, timeout: float) -> bool | None:
        self.waits += 1
        woke = self.fire.wait(timeout)
        self.fire.clear()
        return woke


def _samples() -> list[LiveSample]:
    w = Writes()
    return [sample(t, w.add(**{DISKS[0]: t})) for t in range(1, 6)]


async def test_an_md_event_samples_at_once_without_waiting_for_the_timer() -> None:
    backend = EventBackend(_samples())
    assert isinstance(backend, EventSource)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=TIMER_S)  # type: ignore[arg-type]
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.probed is not None and backend.waits > 0)
        assert app.sample_count == 0  # the timer has not fired
        backend.fire.set()
        await wait_for(pilot, lambda: app.sample_count == 1, timeout=3)
        assert app.live is not None and app.live.taken_at == 1
        backend.fire.set()
        await wait_for(pilot, lambda: app.sample_count == 2, timeout=3)
        assert app.view.sample_count == 2


async def test_events_while_a_sample_is_in_flight_make_one_more_sample() -> None:
    backend = EventBackend(_samples())
    app = RaidmanApp(backend, probe_interval=0, sample_interval=TIMER_S)  # type: ignore[arg-type]
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.probed is not None)
        release = threading.Event()
        plain_sample = backend.sample

        def slow_sample() -> LiveSample:
            release.wait(5)
            return plain_sample()

        backend.sample = slow_sample  # type: ignore[method-assign]
        app.refresh_sample()  # one in flight, held
        await pilot.pause(0.05)
        for _ in range(3):  # three events while it is held
            app.refresh_sample(event=True)
        release.set()
        await wait_for(pilot, lambda: app.sample_count == 2, timeout=3)
        await pilot.pause(0.2)
        assert app.sample_count == 2 and backend.i == 2  # one more, not three


async def test_a_backend_without_events_keeps_to_the_timer() -> None:
    backend = ScriptedBackend(_samples())
    assert not isinstance(backend, EventSource)
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0.05)  # type: ignore[arg-type]
    async with app.run_test() as pilot:
        await wait_for(pilot, lambda: app.sample_count >= 2)
        assert not [w for w in app.workers if w.group == "md-events"]
