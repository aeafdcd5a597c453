"""ssh_config checked once, read by every ssh start (issue 37, item 2): hosts.toml's
``ssh_config`` had owner/mode checks, its directory none; another user who could write the
directory renamed a file with a ProxyCommand over it after the check, and it ran as root at the
next reconnect.

Real files of another user (uid 65534, chown: the tests run as root) and the real ssh: the
ProxyCommand of a swapped file never runs; a program the config names that becomes unsafe is
refused at the next start."""

from __future__ import annotations

import os
import socket
from pathlib import Path

import pytest

from app.hosts import HostsError, load_hosts_file, resolve_hosts
from backends.linux.ssh import SshSource
from backends.linux.ssh_config import CheckedSshConfig, SshConfigError
from backends.linux.ssh_transport import run_ssh

NOBODY = 65534
pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="chown to another user needs root")


def _closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = int(s.getsockname()[1])
    s.close()  # nothing listens: ssh's connect is refused at once
    return port


def _setup(tmp_path: Path, config: str) -> tuple[Path, Path]:
    conf_dir = tmp_path / "conf"
    conf_dir.mkdir(mode=0o755)
    cfg = conf_dir / "raidman.ssh"
    cfg.write_text(config)
    cfg.chmod(0o644)
    hosts = tmp_path / "hosts.toml"
    hosts.write_text(f'hosts = ["db1"]\nssh_config = "{cfg}"\nconnect_timeout = 2\n')
    return cfg, hosts


def _ctl(tmp_path: Path) -> str:
    d = tmp_path / "ctl"
    d.mkdir(mode=0o700, exist_ok=True)
    return str(d)


def test_a_directory_another_user_can_write_is_refused(tmp_path: Path) -> None:
    cfg, hosts = _setup(tmp_path, "Host *\n  User root\n")
    os.chown(cfg.parent, NOBODY, NOBODY)
    with pytest.raises(HostsError, match=f"conf above it belongs to uid {NOBODY}"):
        load_hosts_file(hosts)
    os.chown(cfg.parent, 0, 0)
    cfg.parent.chmod(0o777)
    with pytest.raises(HostsError, match="writable by group or others"):
        load_hosts_file(hosts)


def test_a_file_swapped_after_the_check_never_runs_its_proxycommand(tmp_path: Path) -> None:
    marker = tmp_path / "PWNED"
    port = _closed_port()
    cfg, hosts = _setup(tmp_path, f"Host db1\n  HostName 127.0.0.1\n  Port {port}\n")
    (target,) = resolve_hosts(["db1"], load_hosts_file(hosts))
    target = type(target)(**{**target.__dict__, "control_dir": _ctl(tmp_path)})
    # after the check: the file is replaced (as the owner of its directory could)
    evil = cfg.with_name("evil")
    evil.write_text(f"Host *\n  ProxyCommand /usr/bin/touch {marker}\n")
    os.replace(evil, cfg)
    for _ in range(2):  # two starts (a reconnect)
        argv = target.argv()
        config = Path(argv[argv.index("-F") + 1])
        assert config != cfg and config.parent == Path(target.control_dir or "")
        assert "ProxyCommand" not in config.read_text()
        r = run_ssh(argv, b"", first_answer_s=10, timeout=20, host="db1")
        assert r.returncode == 255  # refused by the closed port, not proxied
    assert not marker.exists()


def test_a_program_the_config_runs_is_checked_again_at_each_start(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir(mode=0o755)
    prog = bin_dir / "proxy"
    prog.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
    prog.chmod(0o755)
    _cfg, hosts = _setup(tmp_path, f"Host *\n  ProxyCommand {prog} %h %p\n")
    hf = load_hosts_file(hosts)
    (target,) = resolve_hosts(["db1"], hf)
    target = type(target)(**{**target.__dict__, "control_dir": _ctl(tmp_path)})
    assert target.argv()  # root's, in root's directory: accepted
    prog.chmod(0o777)  # now anyone may rewrite it
    with pytest.raises(SshConfigError, match=f"refused ProxyCommand program {prog}: writable"):
        target.argv()
    prog.chmod(0o755)
    os.chown(bin_dir, NOBODY, NOBODY)  # or its directory is another user's
    src = SshSource(target)
    src.prefetch()
    assert src.unreachable is not None and f"belongs to uid {NOBODY}" in src.unreachable
    assert not marker.exists()


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("Include ~/.ssh/other", "Include is not used by raidman"),
        ("ProxyCommand $HOME/bin/jump %h", "a program raidman cannot check"),
        ('Match exec "~/x"', "a program raidman cannot check"),
    ],
)
def test_what_cannot_be_checked_is_refused(line: str, message: str) -> None:
    with pytest.raises(SshConfigError, match=message):
        CheckedSshConfig.from_text("/etc/x", f"Host *\n  {line}\n")


def test_the_programs_a_config_names_are_found() -> None:
    c = CheckedSshConfig.from_text(
        "/etc/x",
        "Host a\n  ProxyCommand exec ssh -W %h:%p bastion\nHost b\n  ProxyCommand none\n"
        'Match host c exec "test -f /etc/x"\n  LocalCommand=/usr/bin/true\n'
        "  PKCS11Provider /usr/lib/p11.so\n",
    )
    assert c.programs == (
        ("ProxyCommand", "ssh"),
        ("Match exec", "test"),
        ("LocalCommand", "/usr/bin/true"),
    )
    assert c.libraries == (("PKCS11Provider", "/usr/lib/p11.so"),)
