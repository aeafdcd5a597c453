"""SMART self-tests on a simulated disk: started by ``smartctl -t short|long``, running in
simulated time, logged when they end (a read failure where the scenario put one).

Durations follow what drives say in their capabilities: a short test takes about two minutes
(the NVMe base specification bounds a short device self-test to two minutes; ATA drives report
1-2 min as "Short self-test routine recommended polling time"); an extended one reads every
sector, so it lasts about the disk's size over its sequential read rate.
"""

from __future__ import annotations

from typing import Any

from app.model.smart import SelfTest, SmartLogError
from backends.simulated.records import SimDisk
from backends.simulated.state import SimState

SHORT_S = 120.0
KINDS = {  # smartctl -t WORD -> (ATA log words, NVMe log words)
    "short": ("Short offline", "Short"),
    "long": ("Extended offline", "Extended"),
}
READ_FAILURE = "Completed: read failure"
PASSED = "Completed without error"


def duration_s(d: SimDisk, test: str) -> float:
    if test == "short":
        return SHORT_S
    return max(SHORT_S, d.size_bytes / (max(d.seq_kib_s, 1) * 1024))


def _nvme(d: SimDisk) -> bool:
    return d.smart.protocol == "NVMe"


def _hours_at(d: SimDisk, hours_now: int, at: float, now: float) -> int:
    return max(0, hours_now - int((now - at) // 3600))


def settle(st: SimState, d: SimDisk, hours_now: int) -> None:
    """Log the running test once its time is up."""
    s = d.smart
    if s.running_test is None:
        return
    kind, started, dur = s.running_test
    if st.t < started + dur:
        return
    hours = _hours_at(d, hours_now, started + dur, st.t)
    if s.fail_test_at_lba is not None:
        s.self_tests.insert(0, (kind, READ_FAILURE, hours, s.fail_test_at_lba))
    else:
        s.self_tests.insert(0, (kind, PASSED, hours, None))
    del s.self_tests[21:]  # an ATA log keeps 21 entries
    s.running_test = None


def start(st: SimState, d: SimDisk, test: str, hours_now: int) -> str | None:
    """Start a test; the message smartctl prints when it cannot."""
    settle(st, d, hours_now)
    s = d.smart
    if s.running_test is not None:
        left = remaining(st, d)
        return f"Can't start self-test without aborting current test ({left}% remaining)"
    words = KINDS[test][1 if _nvme(d) else 0]
    s.running_test = (words, st.t, duration_s(d, test))
    return None


def run_to_end(st: SimState, d: SimDisk, test: str, hours_now: int) -> str | None:
    """A test the caller waits for (smartctl's captive mode, ``nvme device-self-test --wait``):
    started and, in simulated time, ended at once, logged with its result; the message when it
    cannot start."""
    why = start(st, d, test, hours_now)
    if why is not None:
        return why
    run = d.smart.running_test
    if run is not None:
        d.smart.running_test = (run[0], st.t - run[2], run[2])  # its whole duration is behind
    settle(st, d, hours_now)
    return None


def remaining(st: SimState, d: SimDisk) -> int | None:
    run = d.smart.running_test
    if run is None:
        return None
    _kind, started, dur = run
    done = min(max((st.t - started) / dur, 0.0), 1.0)
    return max(1, round((1 - done) * 100)) if done < 1 else None


def entries(d: SimDisk, hours_now: int) -> tuple[SelfTest, ...]:
    out = []
    for kind, status, hours, lba in d.smart.self_tests:
        # a scenario's entry "N hours ago" is N hours before the scenario began: a drive's log
        # entry keeps the hour it ran at while the power-on hours go on
        h = hours if hours >= 0 else max(0, d.smart.power_on_hours + hours)
        if _nvme(d) and kind.endswith(" offline"):  # NVMe logs say "Short", "Extended"
            kind = kind.removesuffix(" offline")
        out.append(SelfTest(kind, status, status == PASSED, h, lba))
    return tuple(out)


def json_logs(st: SimState, d: SimDisk, hours_now: int) -> dict[str, Any]:
    """The self-test log and the running test as smartctl -j prints them (ataprint.cpp,
    nvmeprint.cpp key names)."""
    left = remaining(st, d)
    tests = entries(d, hours_now)
    if _nvme(d):
        log: dict[str, Any] = {
            "current_self_test_operation": {
                "value": 0 if left is None else 1,
                "string": "No self-test in progress" if left is None else "Self-test in progress",
            },
            "table": [
                {
                    "self_test_code": {"value": 2 if t.kind == "Extended" else 1, "string": t.kind},
                    "self_test_result": {"value": 0 if t.passed else 7, "string": t.status},
                    "power_on_hours": t.lifetime_hours,
                    **({"lba": t.lba_first_error} if t.lba_first_error is not None else {}),
                }
                for t in tests
            ],
        }
        if left is not None:
            log["current_self_test_completion_percent"] = 100 - left
        return {"nvme_self_test_log": log}
    status: dict[str, Any] = (
        {"value": 0, "string": "completed without error", "passed": True}
        if left is None
        else {
            "value": 0xF0 | min(left // 10, 9),
            "string": f"in progress, {left}% remaining",
            "remaining_percent": left,
        }
    )
    return {
        "ata_smart_data": {"self_test": {"status": status}},
        "ata_smart_self_test_log": {
            "standard": {
                "revision": 1,
                "table": [
                    {
                        "type": {"value": 2 if t.kind.startswith("Ext") else 1, "string": t.kind},
                        "status": {
                            "value": 0 if t.passed else 0x79,
                            "string": t.status,
                            "passed": bool(t.passed),
                        },
                        "lifetime_hours": t.lifetime_hours,
                        **({"lba": t.lba_first_error} if t.lba_first_error is not None else {}),
                    }
                    for t in tests
                ],
                "count": len(tests),
                "error_count_total": sum(1 for t in tests if t.passed is False),
            }
        },
        "ata_smart_error_log": {
            "summary": {
                "revision": 1,
                "count": len(errors(d, hours_now)),
                "table": [
                    {
                        "error_number": i,
                        "lifetime_hours": e.lifetime_hours,
                        "error_description": e.text,
                    }
                    for i, e in enumerate(errors(d, hours_now), 1)
                ],
            }
        },
    }


def errors(d: SimDisk, hours_now: int) -> tuple[SmartLogError, ...]:
    """The error log: one uncorrectable read where the scenario put a bad sector."""
    lba = d.smart.fail_test_at_lba
    if lba is None:
        return ()
    return (SmartLogError(max(0, hours_now - 5), f"Error: UNC at LBA = {lba:#010x} = {lba}"),)
