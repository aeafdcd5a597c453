"""The audit's work grows with the machine, not with its square (issue 23, item 12).

At 5,000 simulated disks the audit took 44 s: every disk asked ``arrays_of_disk``, which walked
the stack below every array (11.7 M walks). No timing here (benchmarks/bench_scale.py measures
the seconds); the test counts the steps of the stack walk and the mdadm.conf comparisons.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from app.model.devices import Machine
from app.rules import mdconf
from app.rules.engine import audit
from app.rules.inputs import gather
from backends.simulated.backend import SimulatedBackend
from backends.simulated.clock import SimClock


def _audit_steps(disks: int, monkeypatch: pytest.MonkeyPatch) -> tuple[int, int]:
    backend = SimulatedBackend.big(disks=disks, arrays=disks // 4, clock=SimClock.manual())
    machine = backend.probe()
    inputs = gather(backend, machine)
    walked = [0]
    uuids = [0]
    walk = Machine._walk
    norm = mdconf.norm_uuid

    def counting_walk(name: str, step):  # type: ignore[no-untyped-def]
        def gen() -> Iterator[str]:
            for n in walk(name, step):
                walked[0] += 1
                yield n

        return gen()

    def counting_norm(u: str | None) -> str | None:
        uuids[0] += 1
        return norm(u)

    monkeypatch.setattr(Machine, "_walk", staticmethod(counting_walk))
    monkeypatch.setattr("app.rules.md.norm_uuid", counting_norm)
    findings = audit(machine, inputs)
    assert not [f for f in findings if f.code == "audit-rule-failed"]
    monkeypatch.undo()
    return walked[0], uuids[0]


def test_audit_work_grows_linearly_with_the_disks(monkeypatch: pytest.MonkeyPatch) -> None:
    small_walk, small_uuid = _audit_steps(200, monkeypatch)
    big_walk, big_uuid = _audit_steps(1000, monkeypatch)
    assert small_walk > 0 and small_uuid > 0
    # 5x the disks: linear is 5x; the quadratic walk of today's main was ~25x
    assert big_walk <= 6 * small_walk, (small_walk, big_walk)
    assert big_uuid <= 6 * small_uuid, (small_uuid, big_uuid)


def test_arrays_of_disk_is_the_walk_of_every_array() -> None:
    """The index answers what walking each array's stack answers (order of ``arrays``)."""
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    m = backend.probe()
    for d in m.disks:
        want = tuple(a for a in m.arrays if d.name in m.disks_under(a.name))
        assert m.arrays_of_disk(d.name) == want
    assert m.arrays_of_disk("nonexistent") == ()
    assert any(m.arrays_of_disk(d.name) for d in m.disks)
