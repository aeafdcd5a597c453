"""Guest side of test_engines' Ansible test (``vm.call("tests.vm.guest_ansible:playbook_twice")``).

``ansible-playbook`` is imported once in this process and each run is a fork of it: the same
as starting the ``ansible-playbook`` script (its ``main`` with the same argv), without paying
ansible's imports over 9p under TCG twice (measured: 267 s and 110 s for the two runs as fresh
processes in CI). The modules still run as the ansible controller starts them: a new
interpreter per task, as on a real host."""

from __future__ import annotations

import os
import subprocess
import time
from typing import Any

from tests.vm.guest import _read, run_forked


def playbook_twice(
    argv: list[str], env: dict[str, str], conf_path: str, specs: list[list[str]]
) -> dict[str, Any]:
    """Run ``argv`` (``ansible-playbook …``) twice; between the runs settle udev and read
    ``conf_path`` and the kernel's files ``specs`` ([paths, globs])."""
    os.environ.update(env)
    t0 = time.monotonic()
    import ansible.cli.playbook  # noqa: F401  (reads its configuration from the environment)

    out: dict[str, Any] = {"import_s": time.monotonic() - t0}
    full = dict(os.environ)
    for key in ("first", "second"):
        t0 = time.monotonic()
        rc, stdout, stderr = run_forked("ansible.cli.playbook:main", argv, full, timeout=900)
        out[key] = {"rc": rc, "stdout": stdout, "stderr": stderr, "s": time.monotonic() - t0}
        subprocess.run(["udevadm", "settle"], timeout=60, check=False)
        with open(conf_path, encoding="utf-8") as f:
            out[key]["conf"] = f.read()
        out[key]["md"] = _read(specs[0], specs[1])
    return out
