"""``smartctl`` with its self-test options on a simulated disk.

* ``smartctl -t short|long /dev/X`` starts a self-test (backends/simulated/selftest.py) and
  answers as smartctl does ("Testing has begun");
* ``smartctl -j -c [-l selftest] /dev/X`` and ``-l selftest``: the capabilities' self-test
  status and the self-test log, JSON keys as smartctl 7.3 prints them;
* ``-a``/``-x`` (the reading raidman takes): the simulated table plus the self-test and error
  logs; anything else goes to the table-only emulation in programs/system.py.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from backends.simulated import selftest
from backends.simulated.programs.argv import Result
from backends.simulated.programs.devices import resolve
from backends.simulated.programs.system import smartctl as table_only
from backends.simulated.smart import smart_counters
from backends.simulated.state import SimState

EXIT_COMMAND_FAILED = 4  # smartctl(8): "some SMART or other ATA command to the disk failed"


def _test_word(args: Sequence[str]) -> str | None:
    for i, a in enumerate(args):
        if a == "-t" and i + 1 < len(args):
            return args[i + 1]
        if a.startswith("--test="):
            return a.split("=", 1)[1]
    return None


def smartctl(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    devs = [a for a in args if a.startswith("/dev/")]
    dev = resolve(st, devs[0]) if devs else None
    d = st.disks.get(dev) if dev else None
    test = _test_word(args)
    if d is None or not d.smart.available:
        return table_only(st, args, stdin)
    hours = smart_counters(st, d)["hours"]
    if test is not None:
        if test not in selftest.KINDS:
            return 1, "", f"smartctl: unknown self-test {test!r} (short, long)\n"
        captive = "-C" in args or "--captive" in args
        why = (selftest.run_to_end if captive else selftest.start)(st, d, test, hours)
        if why is not None:
            return EXIT_COMMAND_FAILED, f"{why}\n", ""
        if captive:  # smartctl waits in captive mode; atacmds.cpp prints the same lines
            words = "Short" if test == "short" else "Extended"
            return 0, (
                f"=== START OF OFFLINE IMMEDIATE AND SELF-TEST SECTION ===\n"
                f"Sending command: \"Execute SMART {words} self-test routine immediately in captive mode\".\n"
                f"Drive command \"Execute SMART {words} self-test routine immediately in captive mode\" successful.\n"
                f"Testing has begun.\n"
            ), ""  # fmt: skip
        minutes = max(1, round(selftest.duration_s(d, test) / 60))
        words = "Short" if test == "short" else "Extended"
        return 0, (
            f"=== START OF OFFLINE IMMEDIATE AND SELF-TEST SECTION ===\n"
            f"Sending command: \"Execute SMART {words} self-test routine immediately in off-line mode\".\n"
            f"Drive command \"Execute SMART {words} self-test routine immediately in off-line mode\" successful.\n"
            f"Testing has begun.\nPlease wait {minutes} minutes for test to complete.\n"
        ), ""  # fmt: skip
    as_json = "-j" in args or "--json" in args
    wants_log = "-c" in args or "selftest" in args or "-a" in args or "-x" in args
    if not as_json or not wants_log:
        return table_only(st, args, stdin)
    selftest.settle(st, d, hours)
    if "-a" in args or "-x" in args:
        rc, out, err = table_only(st, args, stdin)
        try:
            doc = json.loads(out)
        except ValueError:
            return rc, out, err
    else:
        rc, err = 0, ""
        doc = {
            "json_format_version": [1, 0],
            "smartctl": {"version": [7, 3], "exit_status": 0},
            "device": {"name": devs[0], "protocol": d.smart.protocol or "ATA"},
        }
        if d.smart.protocol == "NVMe":
            doc["nvme_optional_admin_commands"] = {"self_test": True}
        else:
            doc["ata_smart_data"] = {"capabilities": {"self_tests_supported": True}}
    for key, value in selftest.json_logs(st, d, hours).items():
        if isinstance(value, dict) and isinstance(doc.get(key), dict):
            doc[key] = {**doc[key], **value}
        else:
            doc[key] = value
    return rc, json.dumps(doc, indent=2) + "\n", err
