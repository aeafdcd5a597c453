"""The audit log: one JSON object per line for every step the executor ran (and every refusal).

Where: ``$RAIDMAN_STATE_DIR/audit.log`` when that is set (tests), ``/var/log/raidman/audit.log`` for
root, else ``$XDG_STATE_HOME/raidman/audit.log`` (``~/.local/state/raidman/audit.log``).

Entry fields: ``ts`` (unix seconds, wall clock), ``time`` (ISO 8601 UTC), ``user``, ``event``
(``"executed"`` for a step that ran, ``"refused"`` for a plan the executor would not run),
``plan`` (title), ``argv``, ``stdin_from`` (when piped), ``exit_code``, ``duration_s``,
``forced`` (pre-flight warning codes the user forced past), ``reason`` (refusals).
A dry run writes nothing: nothing was attempted.
"""

from __future__ import annotations

import contextlib
import getpass
import json
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any


def default_path() -> Path:
    env = os.environ.get("RAIDMAN_STATE_DIR")
    if env:
        return Path(env) / "audit.log"
    if os.geteuid() == 0:
        return Path("/var/log/raidman/audit.log")
    xdg = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(xdg) / "raidman" / "audit.log"


def _user() -> str:
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry, no env: still log something
        return str(os.getuid())


@dataclass(frozen=True, slots=True)
class AuditEntry:
    ts: float
    user: str
    event: str  # "executed" | "refused"
    plan: str
    argv: tuple[str, ...] = ()
    exit_code: int | None = None
    duration_s: float | None = None
    forced: tuple[str, ...] = ()
    reason: str = ""
    stdin_from: tuple[str, ...] | None = None

    @property
    def time_iso(self) -> str:
        return datetime.fromtimestamp(self.ts, UTC).isoformat(timespec="seconds")

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
        if self.reason:
            d["reason"] = self.reason
        if self.stdin_from is not None:
            d["stdin_from"] = list(self.stdin_from)
        return d

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> AuditEntry:
        sf = d.get("stdin_from")
        return cls(
            ts=float(d.get("ts", 0.0)),
            user=str(d.get("user", "")),
            event=str(d.get("event", "")),
            plan=str(d.get("plan", "")),
            argv=tuple(str(a) for a in d.get("argv") or ()),
            exit_code=d.get("exit_code"),
            duration_s=d.get("duration_s"),
            forced=tuple(str(f) for f in d.get("forced") or ()),
            reason=str(d.get("reason", "")),
            stdin_from=tuple(str(a) for a in sf) if isinstance(sf, list) else None,
        )


class AuditLog:
    """Append-only JSON-lines file. Write failures never break a run: they are reported back."""

    def __init__(self, path: Path | str | None = None) -> None:
        self.path = Path(path) if path is not None else default_path()
        self.last_error: str | None = None

    def _append(self, entry: AuditEntry) -> None:
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as f:
                f.write(json.dumps(entry.to_json(), sort_keys=True) + "\n")
            self.last_error = None
        except OSError as e:
            self.last_error = f"audit log {self.path}: {e.strerror or e}"

    def record_step(
        self,
        *,
        plan: str,
        argv: Sequence[str],
        exit_code: int,
        duration_s: float,
        forced: Sequence[str] = (),
        stdin_from: Sequence[str] | None = None,
    ) -> None:
        self._append(
            AuditEntry(
                ts=time.time(),
                user=_user(),
                event="executed",
                plan=plan,
                argv=tuple(argv),
                exit_code=exit_code,
                duration_s=duration_s,
                forced=tuple(forced),
                stdin_from=tuple(stdin_from) if stdin_from is not None else None,
            )
        )

    def record_refusal(self, *, plan: str, reason: str, forced: Sequence[str] = ()) -> None:
        self._append(
            AuditEntry(
                ts=time.time(),
                user=_user(),
                event="refused",
                plan=plan,
                reason=reason,
                forced=tuple(forced),
            )
        )

    def read_entries(self, limit: int | None = None) -> list[AuditEntry]:
        """Entries oldest first (the last ``limit`` when given); unreadable lines are skipped."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except OSError:
            return []
        out: list[AuditEntry] = []
        for line in text.splitlines():
            if not line.strip():
                continue
            with contextlib.suppress(ValueError, TypeError, AttributeError):
                out.append(AuditEntry.from_json(json.loads(line)))
        return out[-limit:] if limit else out


def read_entries(path: Path | str | None = None, limit: int | None = None) -> list[AuditEntry]:
    return AuditLog(path).read_entries(limit)
