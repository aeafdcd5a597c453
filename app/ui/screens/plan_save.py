"""A previewed plan copied or saved: the shell script (for another host, a comment says where it
belongs) and the plan file ``raidman apply`` reads, written where the user types."""

from __future__ import annotations

import os
import time
from pathlib import Path

from app import statefiles
from app.plans.guards.preflight import Preflight
from app.plans.plan import Plan, escape_controls
from app.plans.render import plan_file_text


def default_save_name(plan: Plan, now: float | None = None) -> str:
    kind = "".join(c if c.isalnum() or c in "-_" else "-" for c in plan.kind) or "plan"
    return f"{kind}-{time.strftime('%Y%m%d-%H%M%S', time.localtime(now))}.sh"


def host_script(plan: Plan, host: str | None) -> str:
    """The shell script of ``plan``; for another host, a comment says where it belongs."""
    script = plan.shell_script()
    if host is None:
        return script
    first, _, rest = script.partition("\n")
    return f"{first}\n# for host {escape_controls(host)}: run it there\n{rest}"


def save_plan(
    plan: Plan,
    preflight: Preflight,
    typed: str,
    cwd: str | None = None,
    host: str | None = None,
    backend: str | None = None,
) -> Path:
    """Write ``plan`` to ``typed`` (relative to ``cwd``): ``.sh`` the shell script (0700),
    ``.json`` the plan file (0600, with ``host`` when it was made for another machine and the
    ``backend`` it was made on: ``raidman apply`` refuses it on another one). Raises
    ``statefiles.StateFileError`` / ``ValueError`` with a message for the user; never replaces
    an existing file."""
    name = typed.strip()
    if not name:
        raise ValueError("type a file name ending in .sh or .json")
    path = Path(cwd or os.getcwd()) / os.path.expanduser(name)
    if path.suffix == ".sh":
        text, mode = host_script(plan, host), 0o700
    elif path.suffix == ".json":
        text, mode = plan_file_text(plan, preflight, host=host, backend=backend), 0o600
    else:
        raise ValueError(
            f"{escape_controls(name)}: name it .sh (shell script) or .json (plan file)"
        )
    if os.path.lexists(path):
        raise ValueError(f"{escape_controls(str(path))} exists: type another name")
    statefiles.write_text(path, text, mode=mode)
    return path
