"""``make test``'s pytest stage: the real-kernel tests and the rest side by side (issue 15).

The VM tests spend most of their time in one busy guest vCPU or waiting on the guest (a sync held
slow, a TUI drawn under TCG), so on a 2-core machine the other tests fit beside them: the whole
suite takes about as long as the VM part alone instead of the sum of both.

The VM run streams to the terminal; the other run writes to ``test-unit.log``, which is printed
when both are done. Each run is a full pytest with its own summary; the exit status is the first
failing one's (pytest's 5, "no tests collected", is a failure too). Extra arguments go to both.

Usage: ``python -m tests.run_suite [pytest args...]``
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

LOG = Path("test-unit.log")


def _fmt(seconds: float) -> str:
    m, s = divmod(int(seconds), 60)
    return f"{m}:{s:02d}"


def main(argv: list[str]) -> int:
    py = sys.executable
    t0 = time.monotonic()
    with LOG.open("w") as fh:
        # the non-VM run has no use for pytest's cache: two runs writing it at once would race
        unit = subprocess.Popen(
            [py, "-m", "pytest", "-m", "not vm", "-p", "no:cacheprovider", *argv],
            stdout=fh,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        print(f"run_suite: non-VM tests in the background (pid {unit.pid}, log {LOG})", flush=True)
        try:
            vm_rc = subprocess.call([py, "-m", "pytest", "-m", "vm", *argv])
            t_vm = time.monotonic() - t0
            unit_rc = unit.wait()
        except BaseException:
            os.killpg(unit.pid, signal.SIGTERM)
            raise
    t_all = time.monotonic() - t0
    print(f"\n===== non-VM tests ({LOG}) =====", flush=True)
    sys.stdout.write(LOG.read_text(errors="replace"))
    print(
        f"\nrun_suite: VM tests exit {vm_rc} after {_fmt(t_vm)}; "
        f"non-VM tests exit {unit_rc}; whole suite {_fmt(t_all)}",
        flush=True,
    )
    return vm_rc or unit_rc


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
