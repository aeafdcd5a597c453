"""The host side of the ``raidman_vm`` Ansible connection (tests/vm/ansible_vm/connection):
a unix socket that runs each request's argv in the guest with ``vm.run`` and answers with its
exit code and output, one JSON line each way. The test thread waits on ``ansible-playbook``
meanwhile, so the agent's channel has one user at a time."""

from __future__ import annotations

import contextlib
import json
import socket
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tests.vm.machine import VM

MAX_REQUEST = 16 << 20


def _serve_one(vm: VM, conn: socket.socket, env: dict[str, str], log: list[str]) -> None:
    with conn:
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = conn.recv(1 << 16)
            if not chunk or len(buf) > MAX_REQUEST:
                return
            buf += chunk
        try:
            req: dict[str, Any] = json.loads(buf)
            argv = [str(a) for a in req["argv"]]
            log.append(argv[-1][:200])
            r = vm.run(argv, stdin=req.get("stdin"), timeout=600, env=env)
            reply: dict[str, Any] = {"rc": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
        except Exception as e:  # reported to the plugin, which fails the task with it
            reply = {"error": f"{e.__class__.__name__}: {e}"}
        conn.sendall(json.dumps(reply).encode() + b"\n")


@contextlib.contextmanager
def relay(vm: VM, path: Path, env: dict[str, str]) -> Iterator[list[str]]:
    """Serve ``path`` while the block runs; yields the list of commands run (for a failure's
    message). ``env`` is added to each command's environment in the guest."""
    log: list[str] = []
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(str(path))
    srv.listen(4)
    srv.settimeout(0.2)
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            _serve_one(vm, conn, env, log)

    th = threading.Thread(target=loop, name="ansible-relay", daemon=True)
    th.start()
    try:
        yield log
    finally:
        stop.set()
        th.join(5)
        srv.close()
        path.unlink(missing_ok=True)
