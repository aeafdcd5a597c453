"""hosts.toml decides what root runs over ssh, so it is read as a trusted file (issue 23, items 2
and 10): root's or the running user's, not writable by group or others, never a FIFO waited on,
bounded in nesting; the ``ssh_config`` it names is checked the same way."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from app.hosts import HostsError, load_hosts_file

NOBODY = 65534
root_only = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _write(p: Path, text: str, mode: int = 0o644) -> Path:
    p.write_text(text)
    os.chmod(p, mode)
    return p


@root_only
def test_world_writable_hosts_toml_of_nobody_is_refused(tmp_path: Path) -> None:
    """The reproduced attack: nobody's 0666 hosts.toml pointed ssh_config at a ProxyCommand."""
    evil = _write(tmp_path / "evil.conf", "Host *\n  ProxyCommand touch /tmp/pwned\n")
    f = _write(tmp_path / "hosts.toml", f'hosts = ["db1"]\nssh_config = "{evil}"\n', 0o666)
    os.chown(f, NOBODY, NOBODY)
    with pytest.raises(HostsError, match="owned by uid 65534"):
        load_hosts_file(f)
    os.chown(f, 0, 0)
    with pytest.raises(HostsError, match="writable by group or others"):
        load_hosts_file(f)


@root_only
def test_the_ssh_config_it_names_is_checked_too(tmp_path: Path) -> None:
    evil = _write(tmp_path / "evil.conf", "Host *\n  ProxyCommand touch /tmp/pwned\n")
    os.chown(evil, NOBODY, NOBODY)
    f = _write(tmp_path / "hosts.toml", f'hosts = ["db1"]\nssh_config = "{evil}"\n')
    with pytest.raises(HostsError, match=r"ssh_config file .*owned by uid 65534"):
        load_hosts_file(f)
    os.chown(evil, 0, 0)
    assert load_hosts_file(f).ssh_config == str(evil)


def test_a_fifo_as_hosts_toml_is_refused_without_hanging(tmp_path: Path) -> None:
    f = tmp_path / "hosts.toml"
    os.mkfifo(f)
    out: list[BaseException] = []

    def go() -> None:
        try:
            load_hosts_file(f)
        except HostsError as e:
            out.append(e)

    t = threading.Thread(target=go, daemon=True)
    t.start()
    t.join(5)
    assert not t.is_alive(), "hosts.toml as a FIFO hung"
    assert out and "FIFO" in str(out[0])


def test_deeply_nested_hosts_toml_is_one_line_not_a_traceback(tmp_path: Path) -> None:
    f = _write(tmp_path / "hosts.toml", "hosts = " + "[" * 5000 + "]" * 5000 + "\n")
    with pytest.raises(HostsError, match="nested deeper than"):
        load_hosts_file(f)
    # brackets inside strings and comments are not nesting
    ok = _write(tmp_path / "ok.toml", 'hosts = ["db1"] # [[[[[[[[[[[[[[[[[[[[\n')
    assert load_hosts_file(ok).hosts == ("db1",)
