"""The audit log keeps the state-file rules (issue 23, items 5 and 10): it is never written into a
state directory that is otherwise refused, never appended to when another user owns or can write
it, and a FIFO in its place is refused at once instead of hanging ``apply``."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from app.plans.audit_log import AuditLog

NOBODY = 65534


def _refused(log: AuditLog, match: str) -> None:
    assert log.check_writable() is not None
    assert log.last_error is not None and match in log.last_error
    assert not log.record_refusal(plan="p", reason="r")


def test_symlinked_state_dir_is_refused(tmp_path: Path) -> None:
    real = tmp_path / "real"
    real.mkdir(mode=0o700)
    (tmp_path / "state").symlink_to(real)
    _refused(AuditLog(tmp_path / "state" / "audit.log"), "symlink")
    assert list(real.iterdir()) == []


def test_world_writable_state_dir_is_refused(tmp_path: Path) -> None:
    d = tmp_path / "state"
    d.mkdir()
    os.chmod(d, 0o777)
    _refused(AuditLog(d / "audit.log"), "writable by group or others")
    assert not (d / "audit.log").exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")
def test_state_dir_and_log_of_another_user_are_refused(tmp_path: Path) -> None:
    d = tmp_path / "state"
    d.mkdir(mode=0o700)
    os.chown(d, NOBODY, NOBODY)
    _refused(AuditLog(d / "audit.log"), "owned by uid 65534")
    os.chown(d, 0, 0)
    f = d / "audit.log"
    f.write_text("")
    os.chown(f, NOBODY, NOBODY)
    os.chmod(f, 0o666)
    _refused(AuditLog(f), "owned by uid 65534")
    assert f.read_text() == ""


def test_fifo_as_audit_log_is_refused_without_hanging(tmp_path: Path) -> None:
    d = tmp_path / "state"
    d.mkdir(mode=0o700)
    os.mkfifo(d / "audit.log")
    log = AuditLog(d / "audit.log")
    out: list[object] = []
    t = threading.Thread(
        target=lambda: out.append((log.check_writable(), log.read_entries())), daemon=True
    )
    t.start()
    t.join(5)
    assert not t.is_alive(), "apply would hang on the FIFO"
    why, entries = out[0]  # type: ignore[misc]
    assert why is not None and "FIFO" in str(why)
    assert entries == []


def test_a_good_log_still_appends(tmp_path: Path) -> None:
    log = AuditLog(tmp_path / "state" / "audit.log")
    assert log.check_writable() is None
    assert log.record_refusal(plan="p", reason="r")
    assert [e.event for e in log.read_entries()] == ["refused"]
