"""backends.linux.events: waiting for md events on /proc/mdstat and md's sysfs attributes (the
real wake-ups are exercised in the VM by tests/vm/test_md_event_wake.py and
tests/vm/test_session_monitor.py: `raidman monitor` records syncs of a few seconds)."""

from __future__ import annotations

import os
import select
import shutil
import time
from pathlib import Path

import pytest

from backends.linux.events import MD_ATTRS, MdEvents


def test_no_mdstat_is_no_event(tmp_path: Path) -> None:
    t0 = time.monotonic()
    assert MdEvents(str(tmp_path / "absent"), str(tmp_path)).wait(5.0) is False
    assert time.monotonic() - t0 < 1.0  # no md: the caller's timer takes over at once


def test_a_file_without_events_waits_for_the_timeout(tmp_path: Path) -> None:
    f = tmp_path / "mdstat"
    f.write_text("Personalities : [raid1]\nunused devices: <none>\n")
    ev = MdEvents(str(f), str(tmp_path))
    t0 = time.monotonic()
    assert ev.wait(0.2) is False
    assert time.monotonic() - t0 >= 0.15
    ev.close()


def test_a_recording_or_replay_never_has_events() -> None:
    from app.backend import EventSource
    from backends.linux import LinuxBackend

    class Recorded:  # any source but the host's own /proc
        pass

    be = LinuxBackend(Recorded())  # type: ignore[arg-type]
    assert isinstance(be, EventSource)
    t0 = time.monotonic()
    assert be.wait_event(5.0) is None  # None: the caller stops watching, the timer stays
    assert time.monotonic() - t0 < 1.0


def test_no_wait_after_a_timeout_rereads_what_an_event_would_mark_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After a timed-out wait the file is not read again (reading marks md's event count as
    seen: an event between two waits would be lost)."""
    f = tmp_path / "mdstat"
    f.write_text("Personalities :\n")
    ev = MdEvents(str(f), str(tmp_path))
    reads: list[int] = []
    real = os.read

    def counting(fd: int, n: int) -> bytes:
        reads.append(fd)
        return real(fd, n)

    monkeypatch.setattr(os, "read", counting)
    ev.wait(0.01)
    first = len(reads)
    ev.wait(0.01)
    ev.wait(0.01)
    ev.close()
    assert first > 0 and len(reads) == first


# ---- md's sysfs attributes: registration, with a fake poller (a regular file cannot POLLPRI) ----
class FakePoller:
    """Records registrations; ``ready`` is what the next poll returns (then cleared)."""

    def __init__(self) -> None:
        self.fds: dict[int, int] = {}
        self.ready: list[int] = []
        self.polls = 0

    def register(self, fd: int, mask: int = 0) -> None:
        self.fds[fd] = mask

    def unregister(self, fd: int) -> None:
        del self.fds[fd]

    def poll(self, timeout: float | None = None) -> list[tuple[int, int]]:
        self.polls += 1
        out = [(fd, select.POLLPRI) for fd in self.ready if fd in self.fds]
        self.ready = []
        return out


def _md(sys_block: Path, name: str, attrs: tuple[str, ...] = MD_ATTRS) -> None:
    (sys_block / name / "md").mkdir(parents=True)
    for a in attrs:
        (sys_block / name / "md" / a).write_text("idle\n")


def _setup(tmp_path: Path) -> tuple[MdEvents, FakePoller, Path, Path]:
    mdstat = tmp_path / "mdstat"
    mdstat.write_text("Personalities : [raid5]\n")
    sysb = tmp_path / "block"
    sysb.mkdir()
    (sysb / "sda").mkdir()  # not md: never watched
    fake = FakePoller()
    ev = MdEvents(str(mdstat), str(sysb), poller=lambda: fake)
    return ev, fake, mdstat, sysb


def _fd(ev: MdEvents, path: Path) -> int:
    return ev._files[str(path)].fd


def test_every_arrays_notifying_attributes_are_watched_with_mdstat(tmp_path: Path) -> None:
    ev, fake, mdstat, sysb = _setup(tmp_path)
    _md(sysb, "md127")
    _md(sysb, "md0", ("array_state",))  # a RAID-0: no sync_action, degraded, sync_completed
    assert ev.wait(0) is False
    expected = {str(mdstat)} | {str(sysb / "md127" / "md" / a) for a in MD_ATTRS}
    expected.add(str(sysb / "md0" / "md" / "array_state"))
    assert set(ev.watched) == expected
    assert len(fake.fds) == len(expected)
    assert all(m == select.POLLPRI | select.POLLERR for m in fake.fds.values())
    ev.close()
    assert fake.fds == {} and ev.watched == ()


def test_a_wake_from_an_attribute_is_an_event_and_rereads_only_that_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ev, fake, _mdstat, sysb = _setup(tmp_path)
    _md(sysb, "md127")
    ev.wait(0)
    action = sysb / "md127" / "md" / "sync_action"
    fake.ready = [_fd(ev, action)]
    assert ev.wait(5.0) is True
    assert ev.woke == (str(action),)
    reads: list[int] = []
    real = os.read

    def counting(fd: int, n: int) -> bytes:
        reads.append(fd)
        return real(fd, n)

    monkeypatch.setattr(os, "read", counting)
    assert ev.wait(0) is False  # re-armed: read again (to the end) before polling
    assert set(reads) == {_fd(ev, action)}
    reads.clear()
    assert ev.wait(0) is False  # nothing woke: nothing read (a pending event stays pending)
    assert reads == []
    ev.close()


def test_arrays_that_appear_and_go_are_registered_and_dropped(tmp_path: Path) -> None:
    ev, fake, mdstat, sysb = _setup(tmp_path)
    assert ev.wait(0) is False
    assert ev.watched == (str(mdstat),)
    _md(sysb, "md127")  # created: md's event wakes mdstat, and the next wait lists it
    fake.ready = [_fd(ev, mdstat)]
    assert ev.wait(0) is True
    ev.wait(0)
    assert len(ev.watched) == 1 + len(MD_ATTRS)
    old = {_fd(ev, sysb / "md127" / "md" / a) for a in MD_ATTRS}
    shutil.rmtree(sysb / "md127")  # stopped: its directory is gone
    assert ev.wait(0) is False
    assert ev.watched == (str(mdstat),)
    assert not old & set(fake.fds)
    _md(sysb, "md127")  # and back (a new array under the old name)
    ev.wait(0)
    assert len(ev.watched) == 1 + len(MD_ATTRS)
    ev.close()


def test_an_array_created_again_under_its_name_is_watched_anew(tmp_path: Path) -> None:
    """md127 stopped and assembled again between two listings (mdadm --assemble stops an
    inactive array first; seen in the VM): the same paths are new sysfs files, and the old
    descriptors would never wake again. The next listing watches the new files."""
    ev, fake, _mdstat, sysb = _setup(tmp_path)
    _md(sysb, "md127")
    ev.wait(0)
    old = {a: os.fstat(_fd(ev, sysb / "md127" / "md" / a)).st_ino for a in MD_ATTRS}
    (sysb / "md127").rename(sysb.parent / "old-md127")  # the old files live on, as open nodes do
    _md(sysb, "md127")
    ev.wait(0)
    for a in MD_ATTRS:
        path = sysb / "md127" / "md" / a
        fd = _fd(ev, path)
        assert fd in fake.fds
        assert os.fstat(fd).st_ino == path.stat().st_ino != old[a]
    assert len(fake.fds) == 1 + len(MD_ATTRS)  # the old descriptors were let go
    ev.close()


def test_a_missing_attribute_is_tried_again_when_it_appears(tmp_path: Path) -> None:
    """An array is listed before its personality adds sync_action & co.: no crash, and they
    are watched once they are there."""
    ev, _fake, _mdstat, sysb = _setup(tmp_path)
    _md(sysb, "md5", ("array_state",))
    ev.wait(0)
    assert str(sysb / "md5" / "md" / "sync_action") not in ev.watched
    (sysb / "md5" / "md" / "sync_action").write_text("resync\n")
    ev.wait(0)
    assert str(sysb / "md5" / "md" / "sync_action") in ev.watched
    ev.close()


def test_an_attribute_that_fails_to_read_is_dropped_and_does_not_spin(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A removed kernfs file polls ready for ever and reads fail (ENODEV): it is closed after
    one wake and not reopened while that file is there; a new file in its place is watched."""
    ev, fake, _mdstat, sysb = _setup(tmp_path)
    _md(sysb, "md127")
    ev.wait(0)
    degraded = sysb / "md127" / "md" / "degraded"
    bad = _fd(ev, degraded)
    fake.ready = [bad]
    assert ev.wait(0) is True
    real = os.read

    def failing(fd: int, n: int) -> bytes:
        if fd == bad:
            raise OSError(19, "No such device")
        return real(fd, n)

    monkeypatch.setattr(os, "read", failing)
    for _ in range(3):
        fake.ready = [bad]  # would be ready again, if it were still registered
        assert ev.wait(0) is False
    assert str(degraded) not in ev.watched and bad not in fake.fds
    assert len(ev.watched) == len(MD_ATTRS)  # mdstat and the three others stay
    monkeypatch.setattr(os, "read", real)
    # the array stopped but still listed: md removed its redundancy attributes ...
    degraded.unlink()
    ev.wait(0)
    assert str(degraded) not in ev.watched
    degraded.write_text("0\n")  # ... and made new ones when it was assembled again
    ev.wait(0)
    assert str(degraded) in ev.watched
    ev.close()


def test_a_listing_that_fails_keeps_mdstat(tmp_path: Path) -> None:
    mdstat = tmp_path / "mdstat"
    mdstat.write_text("x\n")
    fake = FakePoller()
    ev = MdEvents(str(mdstat), str(tmp_path / "no-sys-block"), poller=lambda: fake)
    assert ev.wait(0) is False
    assert ev.watched == (str(mdstat),)
    ev.close()
