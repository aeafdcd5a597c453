"""A real OpenSSH server on 127.0.0.1 for the tests and the benchmark: generated host and user
keys, a known_hosts with the host key (StrictHostKeyChecking stays on) and an ssh_config whose
aliases all lead to it (``fleet1`` … ``fleetN``) — what an admin's ~/.ssh/config would hold."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalSshd:
    def __init__(
        self, sshd: str, directory: Path, aliases: int = 20, *, use_pam: bool = False
    ) -> None:
        # UsePAM yes where the shadow file calls root's account locked (the VM guest's)
        self.use_pam = use_pam
        self.sshd = sshd
        self.dir = directory
        self.aliases = [f"fleet{i}" for i in range(1, aliases + 1)]
        self.port = _free_port()
        self.procs: list[subprocess.Popen[bytes]] = []
        # ControlPath sockets must stay under ~100 bytes: a short directory of its own
        self.control_dir = tempfile.mkdtemp(prefix="rm-ssh-")
        self.ssh_config = self.dir / "ssh_config"
        self.log = self.dir / "sshd.log"
        self.home = self.dir / "home"

    def _keygen(self, name: str) -> Path:
        key = self.dir / name
        subprocess.run(
            ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(key)],
            check=True,
            stdin=subprocess.DEVNULL,
        )
        return key

    def start(self, timeout: float = 15.0) -> None:
        self.home.mkdir(exist_ok=True)
        hostkey = self._keygen("host_key")
        userkey = self._keygen("user_key")
        (self.dir / "authorized_keys").write_text((self.dir / "user_key.pub").read_text())
        host_pub = (self.dir / "host_key.pub").read_text().split()
        # each alias its own loopback address: its own connection and ControlMaster, as
        # different machines would have
        addrs = [f"127.0.0.{i}" for i in range(1, len(self.aliases) + 1)]
        (self.dir / "known_hosts").write_text(
            "".join(f"[{a}]:{self.port} {host_pub[0]} {host_pub[1]}\n" for a in addrs)
        )
        user = (
            os.environ.get("USER")
            or subprocess.run(
                ["id", "-un"], capture_output=True, text=True, check=True
            ).stdout.strip()
        )
        entries = "".join(
            f"Host {a}\n  HostName {ip}\n  Port {self.port}\n"
            for a, ip in zip(self.aliases, addrs, strict=True)
        )
        self.ssh_config.write_text(
            entries + f"Host *\n  User {user}\n  IdentityFile {userkey}\n  IdentitiesOnly yes\n"
            f"  UserKnownHostsFile {self.dir / 'known_hosts'}\n  StrictHostKeyChecking yes\n"
        )
        if os.geteuid() == 0:
            Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)  # privilege separation dir
        # sshd listens on at most 16 sockets: one server per 15 addresses
        for n, i in enumerate(range(0, len(addrs), 15)):
            cfg = self.dir / f"sshd_config.{n}"
            cfg.write_text(
                f"Port {self.port}\n"
                + "".join(f"ListenAddress {a}\n" for a in addrs[i : i + 15])
                + f"HostKey {hostkey}\nPidFile {self.dir / f'sshd.{n}.pid'}\n"
                f"AuthorizedKeysFile {self.dir / 'authorized_keys'}\n"
                "PermitRootLogin prohibit-password\nPasswordAuthentication no\n"
                "KbdInteractiveAuthentication no\nStrictModes no\n"
                f"UsePAM {'yes' if self.use_pam else 'no'}\n"
                "MaxSessions 100\nMaxStartups 100:30:200\n"
                # Debian's bash reads ~/.bashrc for ssh commands: give sessions a home of their
                # own, so this machine's own shell set-up (pyenv...) is not what gets measured
                f"SetEnv HOME={self.home}\n"
            )
            with self.log.open("ab") as log:
                self.procs.append(
                    subprocess.Popen(
                        [self.sshd, "-D", "-e", "-f", str(cfg)],
                        stdout=log,
                        stderr=subprocess.STDOUT,
                        stdin=subprocess.DEVNULL,
                    )
                )
        deadline = time.monotonic() + timeout
        for addr in addrs[::15]:
            self._wait(addr, deadline, timeout)

    def _wait(self, addr: str, deadline: float, timeout: float) -> None:
        while time.monotonic() < deadline:
            if any(p.poll() is not None for p in self.procs):
                raise RuntimeError(f"sshd exited: {self.log.read_text()[-2000:]}")
            try:
                with socket.create_connection((addr, self.port), timeout=1) as s:
                    if s.recv(4).startswith(b"SSH-"):
                        return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"sshd did not answer within {timeout} s")

    def hosts_toml(self, config_home: Path, extra: str = "", connect_timeout: int = 3) -> None:
        d = config_home / "raidman"
        d.mkdir(parents=True, exist_ok=True)
        (d / "hosts.toml").write_text(
            f'ssh_config = "{self.ssh_config}"\nconnect_timeout = {connect_timeout}\n'
            f"[groups]\nfleet = {self.aliases!r}\n".replace("'", '"')
            + extra
        )

    def stop(self) -> None:
        for a in self.aliases:  # the ControlPersist masters
            subprocess.run(
                [
                    "ssh",
                    "-F",
                    str(self.ssh_config),
                    "-o",
                    f"ControlPath={self.control_dir}/%C",
                    "-O",
                    "exit",
                    a,
                ],
                capture_output=True,
                check=False,
                timeout=10,
            )
        for p in self.procs:
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()
