from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests import tools
from tests.hosts.sshd import LocalSshd


@pytest.fixture(scope="module")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LocalSshd]:
    server = LocalSshd(tools.sshd(), tmp_path_factory.mktemp("sshd"), aliases=3)
    server.start()
    yield server
    server.stop()


@pytest.fixture
def ssh_env(sshd: LocalSshd, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LocalSshd:
    """hosts.toml in a fresh XDG_CONFIG_HOME naming the server's ssh_config and @fleet."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("RAIDMAN_SSH_CONTROL_DIR", sshd.control_dir)
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    sshd.hosts_toml(tmp_path / "config")
    return sshd
