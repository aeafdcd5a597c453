"""Where the qualify verdicts are kept: one file per disk, named by its serial (or WWN), in the
state directory's ``qualified/`` (another host's: ``hosts/HOST/qualified/``). A file holds the
disk's verdicts, newest last (at most ``KEEP``), so a disk renamed by the kernel is still found
by what identifies it, and a disk qualified twice keeps both.

Every file goes through ``app.statefiles`` (owner and mode checked, never through a symlink,
written atomically); a file that is not a list of verdicts is skipped, never trusted.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from app import statefiles
from app.backend import Backend
from app.model import Machine
from app.paths import host_state_dir, state_dir
from app.plans.executor import ExecutionReport
from app.plans.plan import Plan
from app.plans.qualify_verdict import StepOutput, Verdict, collect, verdict_from_json

DIR = "qualified"
KEEP = 20
MAX_FILES = 2000
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def verdict_dir(host: str | None = None) -> Path:
    return (state_dir() if host is None else host_state_dir(host)) / DIR


def file_key(serial: str | None, wwn: str | None) -> str | None:
    """The file name of a disk's verdicts: its serial, else its WWN (None: neither known)."""
    ident = serial or (f"wwn-{wwn}" if wwn else None)
    if not ident:
        return None
    return _UNSAFE.sub("_", ident)[:120].lstrip(".") or None


def _read(path: Path) -> list[Verdict]:
    try:
        text = statefiles.read_text(path)
    except statefiles.StateFileError:
        return []
    if not text:
        return []
    try:
        raw = json.loads(text)
    except ValueError:
        return []
    out: list[Verdict] = []
    for d in raw if isinstance(raw, list) else []:
        try:
            out.append(verdict_from_json(d))
        except (ValueError, TypeError, KeyError):
            continue
    return out


def history(serial: str | None, wwn: str | None, host: str | None = None) -> list[Verdict]:
    key = file_key(serial, wwn)
    if key is None:
        return []
    return [v for v in _read(verdict_dir(host) / f"{key}.json") if (v.serial, v.wwn) == (serial, wwn)
            or (serial and v.serial == serial)]  # fmt: skip


def latest(serial: str | None, wwn: str | None, host: str | None = None) -> Verdict | None:
    found = history(serial, wwn, host)
    return found[-1] if found else None


def keep(verdict: Verdict, host: str | None = None) -> Path:
    """Append ``verdict`` to its disk's file (StateFileError when it cannot be written)."""
    key = file_key(verdict.serial, verdict.wwn)
    if key is None:
        raise statefiles.StateFileError(
            f"{verdict.device} has neither serial nor WWN: its verdict cannot be kept by identity"
        )
    path = verdict_dir(host) / f"{key}.json"
    old = _read(path)[-(KEEP - 1) :]
    data = [v.to_json() for v in (*old, verdict)]
    statefiles.write_text(path, json.dumps(data, indent=1) + "\n", what="qualify verdict file")
    return path


def every_latest(host: str | None = None) -> list[Verdict]:
    """The newest verdict of every disk kept (for comparing with a disk's model and peers)."""
    d = verdict_dir(host)
    try:
        names = sorted(os.listdir(d))[:MAX_FILES]
    except OSError:
        return []
    out = []
    for n in names:
        if n.endswith(".json"):
            found = _read(d / n)
            if found:
                out.append(found[-1])
    return out


def _peer_verdicts(machine: Machine | None, array: object, host: str | None) -> list[Verdict]:
    if machine is None or not isinstance(array, str):
        return []
    a = machine.array(array)
    out = []
    for m in a.members if a is not None else ():
        for disk in machine.disks_under(m.device) or (m.device,):
            d = machine.disk(disk)
            v = latest(d.serial, d.wwn, host) if d is not None and (d.serial or d.wwn) else None
            if v is not None:
                out.append(v)
    return out


def verdict_of_run(
    plan: Plan, report: ExecutionReport, taken_at: float, machine: Machine | None = None,
    host: str | None = None,
) -> Verdict | None:  # fmt: skip
    """The verdict of a qualify plan that ran (None: nothing ran, or not a qualify plan),
    compared with the kept verdicts of the disk's model and of the array's members it was
    qualified for (``params["for"]``, members read from ``machine``)."""
    if plan.kind != "qualify" or not report.executed:
        return None
    p = plan.params
    disk = {k: p.get(k) for k in ("serial", "wwn", "model", "size_bytes", "rotational")}
    disk["name"] = p.get("device")
    if plan.disks:  # the identity recorded when the plan was made (checked before each step)
        disk["serial"], disk["wwn"] = plan.disks[0].serial, plan.disks[0].wwn
    steps = [
        StepOutput(o.step.op, o.status, o.result.stdout if o.result is not None else "", o.message)
        for o in report.outcomes
    ]
    model = disk.get("model")
    same = [v for v in every_latest(host) if model and v.model == model]
    return collect(
        disk, steps, taken_at, same_model=same, peers=_peer_verdicts(machine, p.get("for"), host)
    )


def keep_run(plan: Plan, report: ExecutionReport, backend: Backend, host: str | None) -> list[str]:
    """After a plan ran: a qualify's verdict judged, kept by serial, and said in lines (the
    CLI's apply and the TUI's preview both show them); [] for any other plan."""
    if plan.kind != "qualify":
        return []
    try:
        machine: Machine | None = backend.probe()
    except Exception:
        machine = None
    verdict = verdict_of_run(plan, report, backend.now(), machine, host)
    if verdict is None:
        return []
    lines = ["verdict:", *(f"  {x}" for x in verdict.lines())]
    try:
        lines.append(f"kept in {keep(verdict, host)}")
    except statefiles.StateFileError as e:
        lines.append(f"the verdict is not kept: {e}")
    return lines
