"""One sampler pays the comparison: what did not move between two samples is the same object,
so the consumers of the stream (the merge, the alert events, the throughput meter) skip it by
identity (issue 29: pay only for what changed)."""

from __future__ import annotations

from dataclasses import replace

from app.model import SyncStatus
from app.model.live import DiskIO, LiveInterner, LiveSample, MdLive
from app.routine.events import array_events
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES


def _md(name: str, states: tuple[tuple[str, str], ...], sync: SyncStatus | None = None) -> MdLive:
    return MdLive(name=name, array_state="clean", degraded=0, sync=sync, member_states=states)


def _sample(t: float, *arrays: MdLive, io: tuple[DiskIO, ...] = ()) -> LiveSample:
    return LiveSample(taken_at=t, arrays=arrays, disk_io=io)


def test_equal_objects_come_back_as_the_first_and_changed_ones_as_themselves() -> None:
    intern = LiveInterner()
    a0 = _md("md0", (("sda", "in_sync"), ("sdb", "in_sync")))
    b0 = _md("md1", (("sdc", "in_sync"),))
    io0 = (DiskIO("sda", 10, 20), DiskIO("sdb", 1, 2))
    first = intern(_sample(1.0, a0, b0, io=io0))
    assert first.arrays[0] is a0 and first.disk_io[0] is io0[0]

    # built afresh (as the Linux sampler builds every look): md0 and sda equal, md1 and sdb not
    a1 = _md("md0", (("sda", "in_sync"), ("sdb", "in_sync")))
    b1 = _md("md1", (("sdc", "faulty"),))
    io1 = (DiskIO("sda", 10, 20), DiskIO("sdb", 1, 4096))
    second = intern(_sample(2.0, a1, b1, io=io1))
    assert second.taken_at == 2.0
    assert second.arrays[0] is a0 and second.arrays[1] is b1
    assert second.disk_io[0] is io0[0] and second.disk_io[1] is io1[1]
    assert second == _sample(2.0, a1, b1, io=io1)  # nothing but identity changed

    # the events a consumer derives are the same as from the fresh objects
    assert array_events(first, second) == array_events(_sample(1.0, a0, b0), _sample(2.0, a1, b1))
    assert [e.event for e in array_events(first, second)] == ["Fail"]


def test_a_sample_with_nothing_new_in_it_is_handed_back_whole() -> None:
    intern = LiveInterner()
    a = _md("md0", (("sda", "in_sync"),))
    s1 = intern(_sample(1.0, a))
    again = _sample(2.0, a)
    assert intern(again) is again
    moved = intern(_sample(3.0, replace(a, degraded=1)))
    assert moved.arrays[0] is not a and moved.arrays[0].degraded == 1
    assert s1.arrays[0] is a


def test_the_linux_sampler_hands_out_the_same_objects_while_nothing_moves() -> None:
    # a capture of a real kernel (QEMU guest) replayed: two looks at files that do not change
    b = ReplayBackend(FIXTURES / "captures" / "raid5-raid10-syncing")
    s1, s2 = b.sample(), b.sample()
    assert s1.arrays and s1.disk_io
    assert all(x is y for x, y in zip(s1.arrays, s2.arrays, strict=True))
    assert all(x is y for x, y in zip(s1.disk_io, s2.disk_io, strict=True))
