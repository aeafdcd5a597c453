"""Plans that install or remove the scheduled checks of ``raidman monitor`` (issue 27): a systemd
drop-in for packaging/raidman-monitor.service setting ``RAIDMAN_CHECK_EVERY`` and
``RAIDMAN_CHECK_WINDOW`` (what ``--check-every``/``--check-window`` take; the monitor reads
them as those flags' defaults), then ``systemctl daemon-reload`` and a restart of the monitor
if it runs. Removing deletes that one file. The allowlist takes exactly these shapes."""

from __future__ import annotations

import re

from app.plans import ops
from app.plans.geometry import PlanError
from app.plans.ops.system_files import DROPIN, DROPIN_DIR, MONITOR_SERVICE
from app.plans.plan import Plan, Step

SERVICE = MONITOR_SERVICE
EVERY = re.compile(r"monthly|off|[0-9]{1,6}[smhdw]")
WINDOW = re.compile(r"[0-9]{1,6}[smhdw]")
RELOAD = ops.Systemd("daemon-reload")
RESTART = ops.Systemd("try-restart", SERVICE)
MKDIR = ops.MakeDropinDir()
REMOVE = ops.RemoveFile(DROPIN)

__all__ = ["DROPIN", "DROPIN_DIR"]


def dropin_text(every: str, window: str) -> str:
    return (
        f"[Service]\nEnvironment=RAIDMAN_CHECK_EVERY={every}\n"
        f"Environment=RAIDMAN_CHECK_WINDOW={window}\n"
    )


def schedule_plan(every: str = "monthly", window: str = "6h") -> Plan:
    if not EVERY.fullmatch(every):
        raise PlanError(f"--every: {every[:20]!r} is not monthly, off or a duration like 7d")
    if not WINDOW.fullmatch(window):
        raise PlanError(f"--window: {window[:20]!r} is not a duration like 6h")
    when = "monthly, first Sunday 01:00" if every == "monthly" else f"every {every}"
    return Plan(
        title=f"Scheduled checks by raidman monitor: {when}, window {window}",
        steps=(
            Step(MKDIR, "the monitor service's drop-in directory"),
            Step(
                ops.WriteFile(DROPIN, dropin_text(every, window)),
                f"run a check of every array {when}, stopped after {window} and resumed in "
                "the next window",
            ),
            Step(RELOAD, "systemd reads the drop-in"),
            Step(RESTART, "the monitor, if it runs, restarts with the schedule"),
        ),
        kind="check-schedule",
        params={"every": every, "window": window},
    )


def unschedule_plan() -> Plan:
    return Plan(
        title="Remove raidman monitor's check schedule (back to the configuration file's)",
        steps=(
            Step(REMOVE, "the drop-in that set the schedule"),
            Step(RELOAD, "systemd forgets it"),
            Step(RESTART, "the monitor, if it runs, restarts without it"),
        ),
        kind="check-schedule",
        params={"remove": True},
    )
