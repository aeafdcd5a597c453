"""The kernel's log: ``journalctl -k -o json`` (one JSON object per line) or ``dmesg`` text.

Pure and bounded: at most ``limit`` lines are kept (the newest), each message at most
``MAX_TEXT`` characters; a line that is not the expected shape is skipped, never raised. Text is
kept as the kernel wrote it; callers escape it for display (app/escape.py).

journald fields (systemd.journal-fields(7)): ``MESSAGE`` (a string, or an array of bytes when
it is not valid UTF-8), ``__REALTIME_TIMESTAMP`` (µs since the epoch, a decimal string),
``__MONOTONIC_TIMESTAMP`` (µs since boot), ``PRIORITY`` (syslog level, "0".."7").
dmesg: ``--time-format iso`` prints ``2026-11-25T13:24:00,123456+00:00 text``; plain dmesg
prints ``[  123.456789] text`` (seconds since boot).
"""

from __future__ import annotations

import json
import re
from collections import deque
from dataclasses import dataclass
from datetime import datetime

MAX_TEXT = 500
DEFAULT_LIMIT = 2000
MAX_LINE = 64 * 1024  # a journal export line longer than this is not one of the kernel's


@dataclass(frozen=True, slots=True)
class KernelLine:
    text: str
    at: float | None = None  # wall clock, seconds since the epoch
    since_boot: float | None = None  # seconds
    priority: int | None = None  # 0 emerg .. 7 debug


MAX_MICROSECONDS = 1 << 63  # journald's timestamps are unsigned 64-bit µs; more is no time


def _num(v: object) -> int | None:
    """A journal number (a decimal string, or a JSON integer) within 0..2^63; else None. (A
    JSON integer of 400 digits made ``mono / 1e6`` an OverflowError that cost the whole log,
    issue 37: now that field of that line is unknown.)"""
    if isinstance(v, bool):
        return None
    if isinstance(v, str) and v.isascii() and v.isdigit() and len(v) <= 20:
        v = int(v)
    if isinstance(v, int) and 0 <= v < MAX_MICROSECONDS:
        return v
    return None


def _message(v: object) -> str | None:
    if isinstance(v, str):
        return v[:MAX_TEXT]
    if isinstance(v, list) and all(isinstance(b, int) and 0 <= b < 256 for b in v[:MAX_TEXT]):
        return bytes(v[:MAX_TEXT]).decode("utf-8", errors="replace")
    return None


def parse_journal_json(text: str, *, limit: int = DEFAULT_LIMIT) -> tuple[KernelLine, ...]:
    """``journalctl -k -o json`` lines, oldest first, the newest ``limit`` of them."""
    out: deque[KernelLine] = deque(maxlen=max(1, limit))
    for raw in text.splitlines():
        if not raw.startswith("{") or len(raw) > MAX_LINE:
            continue
        try:
            doc = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(doc, dict):
            continue
        msg = _message(doc.get("MESSAGE"))
        if msg is None:
            continue
        real = _num(doc.get("__REALTIME_TIMESTAMP"))
        mono = _num(doc.get("__MONOTONIC_TIMESTAMP"))
        prio = _num(doc.get("PRIORITY"))
        out.append(
            KernelLine(
                text=msg.rstrip("\n"),
                at=real / 1e6 if real is not None else None,
                since_boot=mono / 1e6 if mono is not None else None,
                priority=prio if prio is not None and prio <= 7 else None,
            )
        )
    return tuple(out)


_ISO = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:[,.](\d{1,9}))?([+-]\d\d:?\d\d) (.*)$")
_MONO = re.compile(r"^\[\s*(\d{1,10})\.(\d{1,9})\] ?(.*)$")
_PRIO = re.compile(r"^<([0-7])>")


def parse_dmesg(text: str, *, limit: int = DEFAULT_LIMIT) -> tuple[KernelLine, ...]:
    """``dmesg --time-format iso`` (or plain ``dmesg``) text, oldest first, the newest
    ``limit`` lines. A line without a time stamp continues the previous message's line."""
    out: deque[KernelLine] = deque(maxlen=max(1, limit))
    for raw in text.splitlines():
        line = raw[: MAX_TEXT + 64]
        prio: int | None = None
        p = _PRIO.match(line)
        if p:
            prio, line = int(p.group(1)), line[p.end() :]
        m = _ISO.match(line)
        if m:
            try:
                tz = m.group(3) if ":" in m.group(3) else f"{m.group(3)[:3]}:{m.group(3)[3:]}"
                at = datetime.fromisoformat(m.group(1) + tz).timestamp()
            except ValueError:
                continue
            frac = m.group(2) or "0"
            out.append(
                KernelLine(m.group(4)[:MAX_TEXT], at + int(frac) / 10 ** len(frac), None, prio)
            )
            continue
        m = _MONO.match(line)
        if m:
            since = int(m.group(1)) + int(m.group(2)) / 10 ** len(m.group(2))
            out.append(KernelLine(m.group(3)[:MAX_TEXT], None, since, prio))
    return tuple(out)
