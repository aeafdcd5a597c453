"""One long-lived ssh session per host answers many batches (issue 29, item 4): watching a host
no longer starts an ssh client per probe and per sample. Counted against the real sshd of the
suite (tests/hosts/sshd.py) through an ``ssh`` on PATH that logs each start and runs the real
one; the one-run-per-batch way (``persistent=False``, the fallback) is counted beside it, so this
fails on the old behaviour. The session's own protocol (a batch after another on one shell,
nothing left behind) is checked on a local ``sh -s`` standing in for ssh."""

from __future__ import annotations

import os
import shutil
import threading
from pathlib import Path

import pytest

from backends.linux import LinuxBackend
from backends.linux import ssh as ssh_mod
from backends.linux.source import HostSource
from backends.linux.ssh import SshSource, SshTarget
from tests.hosts.sshd import LocalSshd

PROBES = 4
SAMPLES = 6


def _counting_ssh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    real = shutil.which("ssh")
    assert real is not None
    log = tmp_path / "ssh-starts.log"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "ssh"
    shim.write_text(f'#!/bin/sh\necho "$$" >> {log}\nexec {real} "$@"\n')
    shim.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:{os.environ['PATH']}")
    return log


def _starts(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def _watch(src: SshSource) -> LinuxBackend:
    backend = LinuxBackend(src)
    for _ in range(PROBES):
        assert backend.probe().disks, src.unreachable
        for _ in range(SAMPLES // PROBES + 1):
            backend.sample()
    return backend


@pytest.mark.parametrize("persistent", [True, False], ids=["session", "one-run"])
def test_watching_a_host_starts_one_ssh_not_one_per_probe(
    persistent: bool, ssh_env: LocalSshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _counting_ssh(tmp_path, monkeypatch)
    target = SshTarget(
        "fleet2",
        ssh_config=str(ssh_env.ssh_config),
        connect_timeout=3,
        control_dir=ssh_env.control_dir,
        persistent=persistent,
    )
    src = SshSource(target)
    try:
        backend = _watch(src)
        batches = src.round_trips
        assert batches == PROBES * (1 + SAMPLES // PROBES + 1)
        if persistent:
            assert _starts(log) == 1  # the session's ssh, for every probe and sample
            assert src.ssh_started == 1
        else:
            assert _starts(log) == batches  # the fallback: one ssh client per batch
        # the answers are the machine's, batch after batch on the same shell
        local = LinuxBackend(HostSource()).probe()
        remote = backend.probe()
        assert (remote.disks, remote.arrays) == (local.disks, local.arrays)
        r = src.run(["printf", "%s", "after many"])
        assert (r.returncode, r.stdout) == (0, "after many")
    finally:
        src.close()


def test_a_session_that_went_away_between_batches_is_started_again(
    ssh_env: LocalSshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    log = _counting_ssh(tmp_path, monkeypatch)
    src = SshSource(
        SshTarget(
            "fleet3",
            ssh_config=str(ssh_env.ssh_config),
            connect_timeout=3,
            control_dir=ssh_env.control_dir,
        )
    )
    try:
        backend = LinuxBackend(src)
        assert backend.probe().disks
        session = src._session
        assert session is not None and session.proc is not None
        session.proc.kill()  # the connection dropped while nothing was asked
        session.proc.wait()
        assert backend.probe().disks and src.unreachable is None
        assert _starts(log) == 2 and src.ssh_started == 2
    finally:
        src.close()


def _local_source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SshSource:
    """The session's shell is a local ``sh -s`` (what sshd would start), its TMPDIR ours."""
    monkeypatch.setattr(SshTarget, "argv", lambda self, cmd="sh -s": ["sh", "-s"])
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    return SshSource(SshTarget("local", control_dir=str(tmp_path)))


def test_batches_on_one_shell_leave_nothing_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _local_source(tmp_path, monkeypatch)
    backend = LinuxBackend(src)
    first = backend.probe()
    for i in range(3):
        r = src.run(["sh", "-c", 'printf "%s" "$1"; printf err >&2; exit 3', "sh", f"v{i}"])
        assert (r.returncode, r.stdout, r.stderr) == (3, f"v{i}", "err")
        assert backend.sample().disk_io
    assert backend.probe().disks == first.disks
    temp = [p for p in tmp_path.iterdir() if p.name.startswith("tmp.")]
    assert len(temp) == 1  # the session's one temporary directory
    assert list((temp[0] / "b").iterdir()) == []  # each batch's bodies removed once sent
    assert src.ssh_started == 1 and src.round_trips >= 8
    src.close()
    assert not temp[0].exists()  # the shell read the end of its stdin and cleaned up


def test_a_busy_session_leaves_the_other_batch_to_a_run_of_its_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A sample while a long step holds the session: it is not held up behind it."""
    src = _local_source(tmp_path, monkeypatch)
    monkeypatch.setattr(ssh_mod, "SESSION_WAIT_S", 0.2)
    assert src.run(["true"]).returncode == 0
    slow = threading.Thread(target=src.run, args=(["sleep", "3"],), kwargs={"timeout": 10})
    slow.start()
    try:
        threading.Event().wait(0.5)
        r = src.run(["printf", "quick"])
        assert (r.returncode, r.stdout) == (0, "quick")
        assert r.duration_s < 2.5
    finally:
        slow.join()
    assert src.ssh_started == 1
    src.close()


def test_a_session_past_its_answer_cap_is_killed_and_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    src = _local_source(tmp_path, monkeypatch)
    monkeypatch.setattr(ssh_mod, "MAX_ANSWER_BYTES", 1 << 20)
    assert src.run(["true"]).returncode == 0
    proc = src._session.proc if src._session else None
    r = src.run(["head", "-c", str(4 << 20), "/dev/zero"], timeout=30)
    assert r.returncode == 255 and "larger than 1 MiB" in r.stderr
    assert proc is not None and proc.poll() is not None  # that session is gone
    src.prefetch("sample")  # the next probe starts another
    assert src.unreachable is None and src.ssh_started == 2
    src.close()


def test_the_one_run_fallback_is_what_a_session_that_never_answered_leaves(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A shell that does not answer a batch until its stdin ends (not a POSIX sh reading as it
    goes): the session's first batch times out, then each batch is an ssh run of its own."""
    fake = tmp_path / "fake-ssh"
    fake.write_text('#!/bin/sh\nscript=$(cat)\nprintf "%s\\n" "$script" | sh -s\n')
    fake.chmod(0o755)
    monkeypatch.setattr(SshTarget, "argv", lambda self, cmd="sh -s": [str(fake)])
    monkeypatch.setattr(ssh_mod, "FIRST_ANSWER_GRACE_S", 0.5)
    src = SshSource(SshTarget("odd", connect_timeout=1, control_dir=str(tmp_path)))
    src.prefetch("sample")  # the session's try: no answer within the first-answer bound
    assert src.unreachable and "connect_timeout" in src.unreachable
    src.prefetch("sample")  # the next: one ssh run of its own, which answers
    assert src.unreachable is None, src.unreachable
    r = src.run(["printf", "x"])
    assert (r.returncode, r.stdout) == (0, "x")
    assert src.ssh_started == 1  # the session was not tried again
    src.close()
