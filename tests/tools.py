"""The real engines some tests start (promtool, node_exporter, ansible-playbook), found or
missing. `make tool-deps` installs the Debian ones and the test extras install ansible-core.

A missing tool is a skip with the reason (shown by ``-ra``) on a developer's machine, and a
failure under CI (``CI``, ``RAIDMAN_TOOLS_REQUIRED=1`` or ``RAIDMAN_VM_REQUIRED=1``), like the
VM tests: a green CI never hides a tool that was not there."""

from __future__ import annotations

import os
import shutil
import socket
import sys
from pathlib import Path

import pytest


def tools_required() -> bool:
    return any(
        os.environ.get(v, "") not in ("", "0")
        for v in ("CI", "RAIDMAN_TOOLS_REQUIRED", "RAIDMAN_VM_REQUIRED")
    )


def require_tool(name: str, how: str) -> str:
    """The path of ``name`` (the venv's bin first, then PATH), or skip/fail loudly."""
    here = Path(sys.executable).parent / name
    path = str(here) if here.exists() else shutil.which(name)
    if path:
        return path
    msg = f"TOOL MISSING: {name} is not installed ({how})"
    if tools_required():
        pytest.fail(f"{msg}; required under CI", pytrace=False)
    pytest.skip(msg)
    raise AssertionError("unreachable")


def promtool() -> str:
    return require_tool("promtool", "make tool-deps: Debian package prometheus")


def node_exporter() -> str:
    return require_tool(
        "prometheus-node-exporter", "make tool-deps: Debian package prometheus-node-exporter"
    )


def ansible_playbook() -> str:
    return require_tool("ansible-playbook", "pip install -e '.[test]': ansible-core")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def sshd() -> str:
    """OpenSSH's server (in /usr/sbin, often not on a user's PATH)."""
    if Path("/usr/sbin/sshd").exists():
        return "/usr/sbin/sshd"
    return require_tool("sshd", "make tool-deps: Debian package openssh-server")
