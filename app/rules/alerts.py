"""md failure alerts: mdadm --monitor must know where to send them and must be running.

Article 001 (/work/shared/seeds/001_*.txt): md's monitoring is good — "just put a mail address
into mdadm's config and it mails you when something happens to the array" — and "test it before
relying on it": ``mdadm --monitor -1 -m you@example /dev/md0 -t``. Without MAILADDR (or PROGRAM)
in mdadm.conf, or without the monitor service running, a degraded array stays silent.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model.devices import Machine
from app.plans import ops
from app.plans.plan import Plan, Step
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs

SERVICE = "mdmonitor.service"


def alert_targets(conf_text: str) -> dict[str, str]:
    """MAILADDR / PROGRAM / MAILFROM values from mdadm.conf text (keywords are case-insensitive
    and may be abbreviated to three letters, mdadm.conf(5); continuation lines start with
    blanks)."""
    out: dict[str, str] = {}
    for raw in conf_text.splitlines():
        line = raw.split("#", 1)[0]
        if not line.strip() or line[0].isspace():
            continue
        word, _, rest = line.strip().partition(" ")
        w = word.upper()
        for key in ("MAILADDR", "MAILFROM", "PROGRAM"):  # mdadm's order: first match wins
            if len(w) >= 3 and key.startswith(w):
                if rest.strip():
                    out[key] = rest.strip()
                break
    return out


def _test_step() -> Step:
    return Step(
        ops.TestAlerts(),
        "send one TestMessage alert per array through the configured MAILADDR/PROGRAM "
        "(an alert path nobody has tested may not work when an array degrades)",
    )


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    arrays = [a for a in machine.arrays if a.has_redundancy and not a.is_container]
    if not arrays:
        return
    names = ", ".join(a.name for a in arrays)
    text = inputs.mdadm_conf_text
    configured = inputs.mdadm_conf is not None  # the conf was read (or there is none)
    targets = alert_targets(text) if text is not None else {}
    if configured and not ({"MAILADDR", "PROGRAM"} & targets.keys()):
        where = inputs.mdadm_conf_path or "/etc/mdadm/mdadm.conf"
        yield Finding(
            "warning",
            "md-no-alert-address",
            "",
            "mdadm has nowhere to send failure alerts",
            f"{where} {'has no' if text is not None else 'does not exist, so no'} MAILADDR or "
            f"PROGRAM line: when {names} degrades, mdadm --monitor tells nobody, "
            "and a failed member goes unnoticed until a second failure loses the array. "
            "The fix appends MAILADDR root (local mail to root; "
            "put a real address there) and sends a test alert.",
            Plan(
                "Send md alerts to root and test them",
                (
                    Step(
                        ops.AppendConfLine(where, "MAILADDR root"),
                        f"append MAILADDR root to {where}",
                    ),
                    _test_step(),
                ),
                kind="audit-md-alerts",
                notes=("a local MTA must deliver root's mail (or use PROGRAM with a script)",),
            ),
        )
    state = inputs.mdmonitor
    if state is not None and state != "active":
        yield Finding(
            "warning",
            "md-monitor-inactive",
            "",
            f"The md monitor ({SERVICE}) is {state}",
            f"Nothing watches {names}: {SERVICE} runs mdadm --monitor --scan, which sends "
            "the DegradedArray/Fail alerts (and starts spares shared "
            "between arrays). Enable it and send a test alert.",
            Plan(
                "Start the md monitor and test its alerts",
                (
                    Step(
                        ops.Systemd("enable", SERVICE),
                        "run mdadm --monitor --scan now and at every boot",
                    ),
                    _test_step(),
                ),
                kind="audit-md-monitor",
            ),
        )
