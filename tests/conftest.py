"""Registers the real-kernel VM plugin (fixture ``vm``, marker ``vm``, "VM unavailable" reporting),
and keeps every test's state (snapshot database, audit log, boost records) in its own directory."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest_plugins = ["tests.vm.plugin", "tests.vm.etc_mdadm"]


@pytest.fixture(autouse=True)
def _isolated_state_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    """No test writes to the user's real ~/.local/state/raidman or /var/lib/raidman."""
    d = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(d))
    return d
