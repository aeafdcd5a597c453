"""What a plan may run: operations raidman plans (``app.plans.ops``), in orders it plans them.

A single step is allowed by construction: an operation checks its own fields, and a plan file's
argv is decoded into one once, at the boundary (``app.plans.ops.decode``; ``argv_problem`` asks
it for an argv). What needs more than one step is checked here (``plan_step_problems``), by the
executor before anything runs, by ``apply`` and by ``raidman plan``:

* a benchmark stops and discards only the array it made and zeroes only that array's members (a
  lifecycle plan's stop or zero-superblock of another array is its own kind's); no other plan
  discards an array;
* an edit of a system file (``app.plans.guards.file_edits``): compared first, then backed up,
  then written (as a copy, verified, renamed; or in place), and its new text is the old one
  changed the way raidman changes that file.
"""

from __future__ import annotations

from collections.abc import Sequence

from app.plans import ops
from app.plans.guards.file_edits import file_edit_problems
from app.plans.plan import Plan, Step


def argv_problem(
    argv: Sequence[str], stdin: str | None = None, stdin_from: Sequence[str] | None = None
) -> str | None:
    """None when ``argv`` (with its stdin or producer) is a step raidman plans, else why not."""
    try:
        ops.decode(argv, stdin, stdin_from)
    except ops.OpError as e:
        return str(e)
    return None


def piped_input_problem(step: Step, text: str) -> str | None:
    """None when ``text`` (a producer's output) may be fed to ``step``."""
    if isinstance(step.op, ops.AppendArrayFromDetail):
        return step.op.piped_problem(text)
    return None


def plan_step_problems(plan: Plan) -> list[str]:
    """Why steps of ``plan`` are refused together ("step N: ..."), empty when they are not."""
    out = []
    created: set[str] = set()
    members: set[str] = set()  # of the arrays this plan created
    for i, s in enumerate(plan.steps, 1):
        op = s.op
        if isinstance(op, ops.CreateArray):
            created.add(op.path)
            members.update(op.overwrites())
        if isinstance(op, ops.Discard) and op.is_array:
            if plan.kind != "benchmark":
                out.append(f"step {i}: only a benchmark discards an array (the one it made)")
            elif op.device not in created:
                out.append(f"step {i}: a benchmark discards only the array it made")
        if plan.kind != "benchmark":
            continue
        if isinstance(op, ops.StopArray) and op.array_path not in created:
            out.append(f"step {i}: a benchmark stops only the array it made")
        if isinstance(op, ops.ZeroSuperblock) and not set(op.devices) <= members:
            out.append(f"step {i}: a benchmark zeroes only the members of the array it made")
    out += file_edit_problems(plan)
    return out
