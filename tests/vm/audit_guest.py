"""Guest-side helpers for ``test_audit.py`` (``vm.call("tests.vm.audit_guest:NAME")``).

They run raidman's own audit (``gather`` + ``audit`` on ``LinuxBackend``) and its own executor in
the guest, against the real kernel. Standard library plus raidman only; JSON in, JSON out.
"""

from __future__ import annotations

import os
from typing import Any


def findings() -> list[dict[str, Any]]:
    """The audit's findings, in the ``report --json`` form plus ``fix_plan``/``fix_destroys_data``."""
    from app.rules.engine import audit
    from app.rules.inputs import gather
    from backends.linux import LinuxBackend

    backend = LinuxBackend()
    machine = backend.probe()
    return [f.to_json(with_plan=True) for f in audit(machine, gather(backend, machine))]


def run_fix(code: str, device: str, path_prefix: str | None = None) -> dict[str, Any]:
    """Audit, take the ONE finding (code, device), run its fix plan through
    ``app.plans.executor.execute`` on ``LinuxBackend``; what each step did.

    ``path_prefix`` is put in front of PATH for the plan's programs (this process is a fork of
    the agent, so the change dies with it)."""
    from app.plans.audit_log import AuditLog
    from app.plans.executor import execute
    from app.rules.engine import audit
    from app.rules.inputs import gather
    from backends.linux import LinuxBackend

    if path_prefix:
        os.environ["PATH"] = f"{path_prefix}:{os.environ.get('PATH', '')}"
    backend = LinuxBackend()
    machine = backend.probe()
    hits = [
        f for f in audit(machine, gather(backend, machine)) if (f.code, f.device) == (code, device)
    ]
    if len(hits) != 1:
        raise AssertionError(f"expected one finding {code} on {device!r}, got {len(hits)}")
    plan = hits[0].fix
    if plan is None:
        raise AssertionError(f"{code} on {device} offers no fix plan")
    rep = execute(plan, backend, audit=AuditLog())
    return {
        "ok": rep.ok,
        "refused": rep.refused,
        "summary": rep.summary(),
        "steps": [
            {
                "argv": list(o.step.argv),
                "status": o.status,
                "exit_code": o.exit_code,
                "message": o.message,
                "stderr": o.stderr,
            }
            for o in rep.outcomes
        ],
    }


def unknown_inputs() -> dict[str, str]:
    """What ``gather`` could not read in the guest, and why."""
    from app.rules.inputs import gather
    from backends.linux import LinuxBackend

    backend = LinuxBackend()
    return dict(gather(backend, backend.probe()).unknown)
