"""Other machines: ``--host NAME`` (repeatable), ``--host @GROUP`` and the hosts file.

``$XDG_CONFIG_HOME/raidman/hosts.toml`` (``~/.config/raidman/hosts.toml``) must be root's or the
running user's and not group/other-writable (it decides what root runs over ssh), and is still
read as untrusted input: bounded in size and nesting, read with tomllib and checked field by field; anything out of shape is a ``HostsError`` with a
one-line message (the CLI prints it and exits 2)::

    hosts = ["db1", "db2"]             # the machines of @all (with every group's members)
    ssh_config = "~/.ssh/raidman.conf" # optional: ssh -F FILE
    connect_timeout = 8                # optional: seconds (ssh ConnectTimeout)

    [groups]
    fleet = ["db1", "db2", "backup"]   # --host @fleet

A name is what ``ssh`` knows (an alias of ~/.ssh/config, ``user@host``); raidman reaches it with
the system ssh (``backends.linux.ssh``) — nothing is installed on the other machine.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import shlex
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from app import statefiles
from app.backend import Backend
from app.parsers.safe import TomlError, toml_loads
from app.paths import BOOST_FILE, config_dir, host_state_dir
from app.plans.audit_log import AuditLog
from app.statefiles import StateFileError
from app.sync.boost import BoostStore
from backends.linux.ssh import CONNECT_TIMEOUT, HostNameError, SshTarget, check_host_name
from backends.linux.ssh_config import CheckedSshConfig, SshConfigError, load_ssh_config

MAX_HOSTS = 500
MAX_NESTING = 16  # hosts.toml needs 2 ([groups], a list); tomllib recurses once per level


class HostsError(ValueError):
    """The hosts file or a --host value cannot be used; the message is for the user."""


@dataclass(frozen=True)
class HostsFile:
    hosts: tuple[str, ...] = ()
    groups: dict[str, tuple[str, ...]] | None = None
    ssh_config: str | None = None
    connect_timeout: float = CONNECT_TIMEOUT
    checked_config: CheckedSshConfig | None = None  # ssh_config as read and checked


def hosts_file_path() -> Path:
    return config_dir() / "hosts.toml"


def _names(where: str, value: Any) -> tuple[str, ...]:
    if not isinstance(value, list) or len(value) > MAX_HOSTS:
        raise HostsError(f"{where}: not a list of host names")
    out = []
    for v in value:
        try:
            out.append(check_host_name(v))
        except HostNameError as e:
            raise HostsError(f"{where}: {e}") from None
    return tuple(dict.fromkeys(out))


def parse_hosts_file(text: str, where: str = "hosts.toml") -> HostsFile:
    try:
        data = toml_loads(text, max_nesting=MAX_NESTING)
    except TomlError as e:
        raise HostsError(f"{where}: {e}") from None
    unknown = set(data) - {"hosts", "groups", "ssh_config", "connect_timeout"}
    if unknown:
        raise HostsError(f"{where}: unknown key {sorted(unknown)[0]!r}")
    hosts = _names(f"{where}: hosts", data.get("hosts", []))
    groups_raw = data.get("groups", {})
    if not isinstance(groups_raw, dict):
        raise HostsError(f"{where}: [groups] is not a table")
    groups: dict[str, tuple[str, ...]] = {}
    for name, members in groups_raw.items():
        try:
            check_host_name(name)
        except HostNameError:
            raise HostsError(f"{where}: not a group name: {name!r}") from None
        groups[name] = _names(f"{where}: group {name}", members)
    ssh_config = data.get("ssh_config")
    if ssh_config is not None and (not isinstance(ssh_config, str) or not ssh_config):
        raise HostsError(f"{where}: ssh_config is not a file name")
    timeout = data.get("connect_timeout", CONNECT_TIMEOUT)
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= 300:
        raise HostsError(f"{where}: connect_timeout is not a number of seconds (1-300)")
    return HostsFile(
        hosts=hosts,
        groups=groups,
        ssh_config=os.path.expanduser(ssh_config) if ssh_config else None,
        connect_timeout=float(timeout),
    )


def load_hosts_file(path: Path | None = None) -> HostsFile:
    """The hosts file, or an empty one when there is none. It decides what root runs (its
    ``ssh_config`` may hold a ``ProxyCommand``), so it is read as a trusted file
    (:func:`app.statefiles.read_trusted`: a regular file of root or the running user, not
    writable by group or others, never a FIFO waited on), and so is the ``ssh_config`` it names
    (ssh itself does not check a ``-F`` file's owner)."""
    p = path or hosts_file_path()
    try:
        text = statefiles.read_trusted(p, what="hosts file")
    except StateFileError as e:
        raise HostsError(str(e)) from None
    if text is None:
        return HostsFile(groups={})
    hf = parse_hosts_file(text, str(p))
    if hf.ssh_config is not None:
        try:  # read and checked once here; each ssh start uses a private copy of this text
            checked = load_ssh_config(hf.ssh_config)
        except SshConfigError as e:
            raise HostsError(f"{p}: {e}") from None
        hf = dataclasses.replace(hf, checked_config=checked)
    return hf


def resolve_hosts(names: list[str], hf: HostsFile | None = None) -> list[SshTarget]:
    """``--host`` values (``NAME`` or ``@GROUP``; ``@all``) as targets, in order, each once."""
    hf = hf if hf is not None else load_hosts_file()
    groups = hf.groups or {}
    out: list[str] = []
    for n in names:
        if n.startswith("@"):
            g = n[1:]
            if g == "all" and g not in groups:
                members: tuple[str, ...] = hf.hosts + tuple(h for v in groups.values() for h in v)
            elif g in groups:
                members = groups[g]
            else:
                known = ", ".join(sorted(groups)) or "none"
                raise HostsError(f"no group {g!r} in {hosts_file_path()} (groups: {known})")
            out.extend(members)
        else:
            try:
                out.append(check_host_name(n))
            except HostNameError as e:
                raise HostsError(str(e)) from None
    hosts = list(dict.fromkeys(out))
    if not hosts:
        raise HostsError("no hosts to reach")
    return [
        SshTarget(
            h,
            ssh_config=hf.ssh_config,
            checked_config=hf.checked_config,
            connect_timeout=hf.connect_timeout,
        )
        for h in hosts
    ]


def plan_host(plan: str | bytes) -> str | None:
    """The ``host`` a plan file was made for (``raidman plan --host NAME --out``), or None;
    ``plan`` is the file's bytes (as ``apply`` read them) or its path. The file has passed
    ``parse_plan_bytes`` already; a host value out of shape is an error."""
    import json

    from app.plans.plan import MAX_FILE_BYTES

    try:
        data = (
            plan
            if isinstance(plan, bytes)
            else statefiles.read_regular(plan, what="plan file", max_bytes=MAX_FILE_BYTES)
        )
        raw = json.loads(data)
    except (OSError, ValueError, RecursionError, StateFileError):
        return None
    host = raw.get("host") if isinstance(raw, dict) else None
    if host is None:
        return None
    try:
        return check_host_name(host)
    except HostNameError as e:
        raise HostsError(f"the plan's host: {e}") from None


def host_boost_store(host: str) -> BoostStore:
    """The boost records of another machine (``hosts/HOST/boost.json`` in the state directory,
    beside its sync records): a record is restored only through the host it was raised on,
    never on this machine."""
    return BoostStore(host_state_dir(check_host_name(host)) / BOOST_FILE)


class HostAuditLog(AuditLog):
    """The local audit log with the host in each entry's plan name (``title @ host``), and each
    step's start and end also sent to the host's own syslog (``logger -t raidman``, over the
    same ssh connection; a host without logger keeps only the local entry)."""

    def __init__(self, host: str, backend: Backend, path: Path | str | None = None) -> None:
        super().__init__(path)
        self.host = host
        self.backend = backend

    def _titled(self, plan: str) -> str:
        return f"{plan} @ {self.host}"

    def _remote(self, message: str) -> None:
        # the remote log is a courtesy: the local entry is the record
        with contextlib.suppress(Exception):
            self.backend.run(["logger", "-t", "raidman", "--", message], timeout=15)

    def record_start(
        self, *, plan: str, run: str, step: int, argv: Sequence[str], **kw: Any
    ) -> bool:
        ok = super().record_start(plan=self._titled(plan), run=run, step=step, argv=argv, **kw)
        if ok:
            self._remote(f"run {run} step {step} started: {shlex.join(argv)} ({plan})")
        return ok

    def record_finish(
        self, *, plan: str, run: str, step: int, argv: Sequence[str], **kw: Any
    ) -> bool:
        ok = super().record_finish(plan=self._titled(plan), run=run, step=step, argv=argv, **kw)
        self._remote(
            f"run {run} step {step} exit {kw.get('exit_code')}: {shlex.join(argv)} ({plan})"
        )
        return ok

    def record_refusal(self, *, plan: str, reason: str, **kw: Any) -> bool:
        return super().record_refusal(plan=self._titled(plan), reason=reason, **kw)
