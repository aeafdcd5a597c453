"""``journalctl -k -o json`` and ``dmesg --time-format iso`` on the simulator.

The lines are the scenario's own (``SimState.kernel_lines``: what the kernel said before the
scenario opens) and md's words for what happened since (``SimState.events``), as md prints
them: the personalities' error handlers ("md/raid1:md0: Disk failure on sdb1, disabling
device." from raid1_error, raid10_error and raid5_error, whose prefix is "md/raid:" for RAID-4/5/6)
and md_do_sync's start and end ("md: recovery of RAID array md0", "md: md0: recovery done.").
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from datetime import UTC, datetime

from backends.simulated.programs.argv import Result
from backends.simulated.state import SimState

BOOTED_S = 86400.0  # the simulated machine booted a day before its scenario opened
MAX_LINES = 10000
_FAULTY = re.compile(r"^(\S+) faulty, array degraded$")
_STARTED = re.compile(r"^(\w+) started$")
_FINISHED = re.compile(r"^(\w+) finished after")
_INTERRUPTED = re.compile(r"^(\w+) interrupted")
# md_do_sync's desc for each action (md.c: "data-check", "requested-resync", "resync", "recovery")
_DESC = {
    "check": "data-check",
    "repair": "requested-resync",
    "resync": "resync",
    "recover": "recovery",
}


def sync_started(array: str, action: str) -> str:
    """md_do_sync's first line of a sync: "md: recovery of RAID array md0"."""
    return f"md: {_DESC.get(action, action)} of RAID array {array}"


def _prefix(st: SimState, array: str) -> str:
    a = st.arrays.get(array)
    level = a.level if a is not None else ""
    pers = level if level in ("raid1", "raid10") else "raid"
    return f"md/{pers}:{array}"


def _md_lines(st: SimState, t: float, array: str, text: str) -> list[str]:
    if m := _FAULTY.match(text):
        a = st.arrays.get(array)
        left = sum(1 for mem in a.members if "in_sync" in mem.state) if a is not None else 0
        p = _prefix(st, array)
        return [
            f"{p}: Disk failure on {m.group(1)}, disabling device.",
            f"{p}: Operation continuing on {left} devices.",
        ]
    if m := _STARTED.match(text):
        return [sync_started(array, m.group(1))]
    if m := _FINISHED.match(text):
        return [f"md: {array}: {_DESC.get(m.group(1), m.group(1))} done."]
    if m := _INTERRUPTED.match(text):
        return [f"md: {array}: {_DESC.get(m.group(1), m.group(1))} interrupted."]
    return []


def lines(st: SimState) -> list[tuple[float, str]]:
    out = list(st.kernel_lines)
    for t, array, text in st.events[-MAX_LINES:]:
        out.extend((t, ln) for ln in _md_lines(st, t, array, text))
    out.sort(key=lambda x: x[0])
    return out[-MAX_LINES:]


def _limit(args: Sequence[str]) -> int:
    for i, a in enumerate(args):
        if a in ("-n", "--lines") and i + 1 < len(args) and args[i + 1].isdigit():
            return int(args[i + 1])
    return MAX_LINES


def journalctl(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    if "-k" not in args and "--dmesg" not in args:
        return 1, "", "journalctl: the simulation keeps only the kernel's lines (-k)\n"
    boot = st.t - BOOTED_S
    out = []
    for t, text in lines(st)[-_limit(args) :]:
        out.append(
            json.dumps(
                {
                    "__REALTIME_TIMESTAMP": str(int(t * 1e6)),
                    "__MONOTONIC_TIMESTAMP": str(int((t - boot) * 1e6)),
                    "PRIORITY": "2" if "Disk failure" in text else "6",
                    "_TRANSPORT": "kernel",
                    "MESSAGE": text,
                }
            )
        )
    return 0, "".join(f"{ln}\n" for ln in out), ""


def dmesg(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    out = []
    for t, text in lines(st):
        stamp = datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S,%f+00:00")
        out.append(f"{stamp} {text}\n")
    return 0, "".join(out), ""
