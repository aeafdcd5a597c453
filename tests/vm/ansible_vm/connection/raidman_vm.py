"""Ansible connection plugin ``raidman_vm``: runs the tasks' commands in the VM guest.

The controller (``ansible-playbook``) runs on the host, as it would on an admin's workstation;
each command it would hand to a remote shell (the module, pipelined on stdin, run by the guest's
``/usr/bin/python3``) goes to the test's relay (``tests/vm/ansible_relay.py``, a unix socket
named by ``RAIDMAN_VM_RELAY``), which runs it in the guest through the VM agent and answers with
its exit code and output. Like the ``local``/``docker`` connections, only the transport differs:
the modules, the kernel and the tools they run are the guest's. Under TCG this keeps ansible's
templating and worker forks off the emulated CPU (in the guest: 170 s of QEMU CPU in CI)."""

from __future__ import annotations

import json
import os
import shlex
import socket
from typing import Any

from ansible.errors import AnsibleConnectionFailure
from ansible.plugins.connection import ConnectionBase

DOCUMENTATION = """
    name: raidman_vm
    short_description: run commands in raidman's test VM through its agent
    description:
        - Sends each command to the relay socket named by RAIDMAN_VM_RELAY.
    author: raidman
"""

MAX_REPLY = 64 << 20


class Connection(ConnectionBase):
    transport = "raidman_vm"
    has_pipelining = True

    def _connect(self) -> Connection:
        self._connected = True
        return self

    def _ask(self, request: dict[str, Any]) -> dict[str, Any]:
        path = os.environ.get("RAIDMAN_VM_RELAY", "")
        if not path:
            raise AnsibleConnectionFailure("RAIDMAN_VM_RELAY is not set")
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.connect(path)
            s.sendall(json.dumps(request).encode() + b"\n")
            buf = b""
            while not buf.endswith(b"\n"):
                chunk = s.recv(1 << 16)
                if not chunk:
                    break
                buf += chunk
                if len(buf) > MAX_REPLY:
                    raise AnsibleConnectionFailure("relay reply too large")
        reply: dict[str, Any] = json.loads(buf)
        if "error" in reply:
            raise AnsibleConnectionFailure(f"relay: {reply['error']}")
        return reply

    def exec_command(
        self, cmd: str, in_data: bytes | None = None, sudoable: bool = True
    ) -> tuple[int, bytes, bytes]:
        super().exec_command(cmd, in_data=in_data, sudoable=sudoable)
        r = self._ask(
            {"argv": ["/bin/sh", "-c", cmd], "stdin": None if in_data is None else in_data.decode()}
        )
        return int(r["rc"]), r["stdout"].encode(), r["stderr"].encode()

    def put_file(self, in_path: str, out_path: str) -> None:
        super().put_file(in_path, out_path)
        with open(in_path, encoding="utf-8") as f:
            data = f.read()
        r = self._ask({"argv": ["/bin/sh", "-c", f"cat > {shlex.quote(out_path)}"], "stdin": data})
        if r["rc"] != 0:
            raise AnsibleConnectionFailure(f"put {out_path}: {r['stderr']}")

    def fetch_file(self, in_path: str, out_path: str) -> None:
        super().fetch_file(in_path, out_path)
        r = self._ask({"argv": ["cat", in_path], "stdin": None})
        if r["rc"] != 0:
            raise AnsibleConnectionFailure(f"fetch {in_path}: {r['stderr']}")
        with open(out_path, "w", encoding="utf-8") as f:
            f.write(r["stdout"])

    def close(self) -> None:
        self._connected = False
