"""Where raidman keeps its state: one place for the snapshot database, audit log and boost records."""

from __future__ import annotations

import os
from pathlib import Path


def state_dir() -> Path:
    """``$RAIDMAN_STATE_DIR`` if set; ``/var/lib/raidman`` for root; else ``$XDG_STATE_HOME/raidman``."""
    env = os.environ.get("RAIDMAN_STATE_DIR")
    if env:
        return Path(env)
    if os.geteuid() == 0:
        return Path("/var/lib/raidman")
    xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(xdg) / "raidman"


def host_state_dir(host: str) -> Path:
    """What raidman keeps here about another machine it watched over ssh (its sync records):
    ``state_dir()/hosts/HOST``. ``host`` has passed ``check_host_name`` (no ``/``, no leading
    dot), so it is one path component."""
    if not host or "/" in host or host.startswith(".") or "\0" in host:
        raise ValueError(f"not a host name: {host!r}")
    return state_dir() / "hosts" / host


BOOST_FILE = "boost.json"
DB_FILE = "state.db"


def state_file(name: str) -> Path:
    """A file in the state directory (open it through :mod:`app.statefiles`, which checks owner
    and mode and never follows a symlink)."""
    return state_dir() / name


def audit_log_path() -> Path:
    """The audit log: ``/var/log/raidman/audit.log`` for root, else ``state_dir()/audit.log``;
    ``$RAIDMAN_STATE_DIR`` overrides both."""
    if os.geteuid() == 0 and not os.environ.get("RAIDMAN_STATE_DIR"):
        return Path("/var/log/raidman/audit.log")
    return state_dir() / "audit.log"


def config_dir() -> Path:
    """raidman's configuration (hosts.toml, raidman.toml): ``$XDG_CONFIG_HOME/raidman``
    (default ``~/.config/raidman``)."""
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "raidman"
