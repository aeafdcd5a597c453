"""A silent host is bounded by ``connect_timeout``, not by the batch timeout (issue 23, item 10):
a host that accepts the connection and then says nothing took 300 s whatever connect_timeout
said. Now the first byte of the answer must come within connect_timeout + a grace."""

from __future__ import annotations

import socket
import threading
import time
from pathlib import Path

import pytest

import backends.linux.ssh as ssh_mod
from backends.linux import LinuxBackend
from backends.linux.ssh import SshSource, SshTarget


def _probe(target: SshTarget) -> tuple[float, SshSource, object]:
    src = SshSource(target)
    t0 = time.monotonic()
    m = LinuxBackend(src).probe()
    return time.monotonic() - t0, src, m


def test_an_ssh_that_never_answers_is_cut_at_connect_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ssh itself hangs (a ProxyCommand that never returns, a stuck key exchange)."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fake = bin_dir / "ssh"
    fake.write_text("#!/bin/sh\nexec sleep 600\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    monkeypatch.setattr(ssh_mod, "FIRST_ANSWER_GRACE_S", 1.0, raising=False)
    took, src, m = _probe(
        SshTarget("silent", connect_timeout=1, batch_timeout=60, control_dir=str(tmp_path))
    )
    assert took < 10
    assert src.unreachable and "connect_timeout" in src.unreachable
    assert src.round_trips == 1
    assert m.disks == ()  # type: ignore[attr-defined]


def test_a_host_that_sends_its_banner_then_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ConnectTimeout covers the TCP connect and the banner; this server then stays silent."""
    monkeypatch.setattr(ssh_mod, "FIRST_ANSWER_GRACE_S", 2.0, raising=False)
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(5)
        port = listener.getsockname()[1]
        held: list[socket.socket] = []

        def serve() -> None:
            with __import__("contextlib").suppress(OSError):
                conn, _ = listener.accept()
                held.append(conn)
                conn.sendall(b"SSH-2.0-OpenSSH_9.2\r\n")  # and never another byte

        threading.Thread(target=serve, daemon=True).start()
        cfg = tmp_path / "ssh_config"
        cfg.write_text(
            f"Host mute\n  HostName 127.0.0.1\n  Port {port}\n"
            "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n"
        )
        took, src, _ = _probe(
            SshTarget(
                "mute",
                ssh_config=str(cfg),
                connect_timeout=2,
                batch_timeout=60,
                control_dir=str(tmp_path),
            )
        )
        for c in held:
            c.close()
    assert took < 15
    assert src.unreachable
