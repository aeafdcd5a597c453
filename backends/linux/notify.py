"""Run an alert deliverer (the admin's alert program, sendmail) for ``raidman monitor``: an argv
list, never a shell; a fixed environment; stdin given or /dev/null; a time limit, after which
the program is killed. Returns (exit status or None when it could not run or timed out, one
line saying what went wrong)."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping, Sequence

MAX_OUTPUT = 4096


def run_notifier(
    argv: Sequence[str], *, env: Mapping[str, str], stdin: str | None, timeout: float
) -> tuple[int | None, str]:
    try:
        p = subprocess.run(
            list(argv),
            shell=False,
            env=dict(env),
            input=(stdin or "").encode("utf-8", errors="replace") if stdin is not None else None,
            stdin=subprocess.DEVNULL if stdin is None else None,
            capture_output=True,
            timeout=timeout,
            close_fds=True,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None, f"{argv[0]} did not finish within {timeout:g} s (killed)"
    except OSError as e:
        return None, f"{argv[0]}: {e.strerror or e}"
    err = p.stderr[-MAX_OUTPUT:].decode("utf-8", errors="replace").strip().splitlines()
    tail = err[-1] if err else ""
    if p.returncode != 0:
        return p.returncode, f"{argv[0]} exited with status {p.returncode}" + (
            f": {tail}" if tail else ""
        )
    return 0, ""
