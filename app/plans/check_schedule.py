"""Plans that install or remove the scheduled checks of ``raidman monitor`` (issue 27): a systemd
drop-in for packaging/raidman-monitor.service setting ``RAIDMAN_CHECK_EVERY`` and
``RAIDMAN_CHECK_WINDOW`` (what ``--check-every``/``--check-window`` take; the monitor reads
them as those flags' defaults), then ``systemctl daemon-reload`` and a restart of the monitor
if it runs. Removing deletes that one file. The allowlist takes exactly these shapes."""

from __future__ import annotations

import re

from app.plans.geometry import PlanError
from app.plans.plan import Plan, Step

SERVICE = "raidman-monitor.service"
DROPIN_DIR = f"/etc/systemd/system/{SERVICE}.d"
DROPIN = f"{DROPIN_DIR}/checks.conf"
EVERY = re.compile(r"monthly|off|[0-9]{1,6}[smhdw]")
WINDOW = re.compile(r"[0-9]{1,6}[smhdw]")
DROPIN_TEXT = re.compile(
    r"\[Service\]\nEnvironment=RAIDMAN_CHECK_EVERY=(monthly|off|[0-9]{1,6}[smhdw])\n"
    r"Environment=RAIDMAN_CHECK_WINDOW=([0-9]{1,6}[smhdw])\n"
)
RELOAD = ("systemctl", "daemon-reload")
RESTART = ("systemctl", "try-restart", SERVICE)
MKDIR = ("mkdir", "-p", DROPIN_DIR)
REMOVE = ("rm", "-f", DROPIN)


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
                ("tee", DROPIN),
                f"run a check of every array {when}, stopped after {window} and resumed in "
                "the next window",
                stdin=dropin_text(every, window),
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
