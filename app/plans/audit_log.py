"""The audit log: one JSON object per line, written BEFORE each step starts and when it ends.

Where: ``app.paths.audit_log_path()`` (``/var/log/raidman/audit.log`` for root, else the state
dir's ``audit.log``; ``$RAIDMAN_STATE_DIR`` overrides both).

How: the file is opened for every entry through :func:`app.statefiles.open_append`
(``O_APPEND|O_NOFOLLOW|O_NONBLOCK``; a symlink, FIFO, device or a file of another user planted at
its place is refused, not followed or waited on; the directory must pass the state directory's
checks), created with mode 0600 in a directory made with mode 0700; each entry is one ``write``. A run that cannot write its log does not start (``check_writable``), and a
step whose "started" entry cannot be written does not start either (the executor's rule).

Entry fields: ``ts`` (unix seconds), ``time`` (ISO 8601 UTC), ``user``, ``event``:
  ``started``  a step is about to run: ``argv``, ``stdin`` (the value fed, when the plan has it),
               ``stdin_from`` (its producer when piped), ``step`` (1-based), ``digest``, ``forced``
  ``executed`` the step ended: ``exit_code``, ``duration_s``, ``stderr_tail`` (last lines), and
               ``stdin`` when it was piped from ``stdin_from`` (the value that was really fed)
  ``refused``  the executor would not run the plan: ``reason``
and ``plan`` (title), ``run`` (one id per execution, pairs "started" with "executed").
A dry run writes nothing: nothing was attempted.

Reading: every line that is not a well-formed entry is returned as an entry with
``event == "corrupt"`` and the line in ``raw``, so the ``L`` screen shows it as such.
"""

from __future__ import annotations

import getpass
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from app import statefiles
from app.paths import audit_log_path
from app.statefiles import StateFileError

STDERR_TAIL_LINES = 20
STDERR_TAIL_CHARS = 4000
MAX_READ_BYTES = 32 * 1024 * 1024
EVENTS = ("started", "executed", "refused")


def default_path() -> Path:
    return audit_log_path()


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry, no env: still log something
        return str(os.getuid())


def stderr_tail(text: str) -> str:
    """The last lines of a program's stderr, bounded."""
    lines = text.rstrip().splitlines()[-STDERR_TAIL_LINES:]
    return "\n".join(lines)[-STDERR_TAIL_CHARS:]


def _opt_str(d: dict[str, Any], key: str) -> str | None:
    v = d.get(key)
    if v is not None and not isinstance(v, str):
        raise ValueError(f"{key}: not a string")
    return v


def _str_tuple(d: dict[str, Any], key: str) -> tuple[str, ...] | None:
    v = d.get(key)
    if v is None:
        return None
    if not isinstance(v, list) or not all(isinstance(x, str) for x in v):
        raise ValueError(f"{key}: not a list of strings")
    return tuple(v)


def _opt_num(d: dict[str, Any], key: str, kind: type) -> Any:
    v = d.get(key)
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, (int, float) if kind is float else int):
        raise ValueError(f"{key}: not a number")
    return kind(v)


@dataclass(frozen=True, slots=True)
class AuditEntry:
    ts: float
    user: str
    event: str  # "started" | "executed" | "refused" | "corrupt"
    plan: str
    argv: tuple[str, ...] = ()
    exit_code: int | None = None
    duration_s: float | None = None
    forced: tuple[str, ...] = ()
    reason: str = ""
    stdin_from: tuple[str, ...] | None = None
    stdin: str | None = None
    stderr_tail: str = ""
    step: int | None = None  # 1-based
    run: str = ""
    digest: str = ""
    raw: str = ""  # corrupt entries: the line as read

    @property
    def corrupt(self) -> bool:
        return self.event == "corrupt"

    @property
    def time_iso(self) -> str:
        try:
            return datetime.fromtimestamp(self.ts, UTC).isoformat(timespec="seconds")
        except (OverflowError, OSError, ValueError):
            return "?"

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "ts": round(self.ts, 3),
            "time": self.time_iso,
            "user": self.user,
            "event": self.event,
            "plan": self.plan,
            "argv": list(self.argv),
            "exit_code": self.exit_code,
            "duration_s": None if self.duration_s is None else round(self.duration_s, 3),
            "forced": list(self.forced),
        }
        for key, value in (
            ("reason", self.reason),
            ("stderr_tail", self.stderr_tail),
            ("run", self.run),
            ("digest", self.digest),
        ):
            if value:
                d[key] = value
        if self.stdin_from is not None:
            d["stdin_from"] = list(self.stdin_from)
        if self.stdin is not None:
            d["stdin"] = self.stdin
        if self.step is not None:
            d["step"] = self.step
        return d

    @classmethod
    def from_json(cls, d: Any) -> AuditEntry:
        """A checked entry; raises ValueError for anything out of shape."""
        if not isinstance(d, dict):
            raise ValueError("not an object")
        event = d.get("event")
        if event not in EVENTS:
            raise ValueError("unknown event")
        ts = _opt_num(d, "ts", float)
        if ts is None:
            raise ValueError("no ts")
        datetime.fromtimestamp(ts, UTC)  # raises for absurd values
        return cls(
            ts=ts,
            user=_opt_str(d, "user") or "",
            event=str(event),
            plan=_opt_str(d, "plan") or "",
            argv=_str_tuple(d, "argv") or (),
            exit_code=_opt_num(d, "exit_code", int),
            duration_s=_opt_num(d, "duration_s", float),
            forced=_str_tuple(d, "forced") or (),
            reason=_opt_str(d, "reason") or "",
            stdin_from=_str_tuple(d, "stdin_from"),
            stdin=_opt_str(d, "stdin"),
            stderr_tail=_opt_str(d, "stderr_tail") or "",
            step=_opt_num(d, "step", int),
            run=_opt_str(d, "run") or "",
            digest=_opt_str(d, "digest") or "",
        )


def _corrupt(line: str) -> AuditEntry:
    return AuditEntry(ts=0.0, user="", event="corrupt", plan="", raw=line[:1000])


class AuditLog:
    """Append-only JSON-lines file. ``last_error`` says why the last write failed (else None)."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.last_error: str | None = None

    def _open(self) -> int:
        """The one way raidman appends (:func:`app.statefiles.open_append`): the directory is a
        checked state directory (created 0700), the file is created 0600, a symlink, FIFO,
        device, hard link or a file another user owns or can write is refused."""
        return statefiles.open_append(self.path, what="audit log")

    def _fail(self, e: OSError | StateFileError) -> str:
        if isinstance(e, StateFileError):
            self.last_error = str(e)
            return self.last_error
        why = e.strerror or str(e)
        self.last_error = f"audit log {self.path}: {why}"
        return self.last_error

    def check_writable(self) -> str | None:
        """None when entries can be appended, else why not (also kept in ``last_error``)."""
        try:
            os.close(self._open())
        except (OSError, StateFileError) as e:
            return self._fail(e)
        self.last_error = None
        return None

    def append(self, entry: AuditEntry) -> bool:
        """Append one entry; False (and ``last_error``) when it could not be written."""
        data = (json.dumps(entry.to_json(), sort_keys=True) + "\n").encode("utf-8")
        try:
            fd = self._open()
            try:
                if os.write(fd, data) != len(data):
                    raise OSError(0, "short write")
            finally:
                os.close(fd)
        except (OSError, StateFileError) as e:
            self._fail(e)
            return False
        self.last_error = None
        return True

    def record_start(
        self,
        *,
        plan: str,
        run: str,
        step: int,
        argv: Sequence[str],
        stdin: str | None = None,
        stdin_from: Sequence[str] | None = None,
        forced: Sequence[str] = (),
        digest: str = "",
    ) -> bool:
        return self.append(
            AuditEntry(
                ts=time.time(),
                user=_user(),
                event="started",
                plan=plan,
                argv=tuple(argv),
                forced=tuple(forced),
                stdin=stdin,
                stdin_from=tuple(stdin_from) if stdin_from is not None else None,
                step=step,
                run=run,
                digest=digest,
            )
        )

    def record_finish(
        self,
        *,
        plan: str,
        run: str,
        step: int,
        argv: Sequence[str],
        exit_code: int,
        duration_s: float,
        stderr: str = "",
        stdin: str | None = None,
        stdin_from: Sequence[str] | None = None,
        forced: Sequence[str] = (),
    ) -> bool:
        return self.append(
            AuditEntry(
                ts=time.time(),
                user=_user(),
                event="executed",
                plan=plan,
                argv=tuple(argv),
                exit_code=exit_code,
                duration_s=duration_s,
                forced=tuple(forced),
                stdin=stdin,
                stdin_from=tuple(stdin_from) if stdin_from is not None else None,
                stderr_tail=stderr_tail(stderr),
                step=step,
                run=run,
            )
        )

    def record_refusal(
        self, *, plan: str, reason: str, forced: Sequence[str] = (), run: str = ""
    ) -> bool:
        return self.append(
            AuditEntry(
                ts=time.time(),
                user=_user(),
                event="refused",
                plan=plan,
                reason=reason,
                forced=tuple(forced),
                run=run,
            )
        )

    def read_entries(self, limit: int | None = None) -> list[AuditEntry]:
        """Entries oldest first (the last ``limit`` when given); a line that is not a
        well-formed entry comes back as an entry with ``event == "corrupt"``."""
        try:  # never blocks on a FIFO put in its place
            data = statefiles.read_regular(self.path, what="audit log", max_bytes=MAX_READ_BYTES)
        except (OSError, StateFileError):
            return []
        data = data[:MAX_READ_BYTES]
        out: list[AuditEntry] = []
        for line in data.decode("utf-8", errors="replace").splitlines():
            if not line.strip():
                continue
            try:
                out.append(AuditEntry.from_json(json.loads(line)))
            except (ValueError, TypeError, OverflowError, RecursionError):
                out.append(_corrupt(line))
        return out[-limit:] if limit else out


def read_entries(path: Path | str | None = None, limit: int | None = None) -> list[AuditEntry]:
    return AuditLog(path).read_entries(limit)
