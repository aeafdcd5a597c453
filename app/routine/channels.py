"""What an alert looks like on the HTTP channels of ``raidman monitor`` (app.routine.alerts
delivers it; backends/linux/notify.py ``post_http`` POSTs it):

- **webhook**: one JSON object per alert, ``{"source": "raidman", "host", "time", "time_iso",
  "event", "array", "md_device", "component", "component_path", "detail", "critical",
  "folded", "note", "extra": {...}}``; a digest adds ``"events": [...]`` (the same keys per
  event it holds);
- **ntfy** (ntfy.sh or one's own server): the detail as the text body, the event and array as
  the ``Title`` header, ``Priority`` urgent for a critical event (high for a digest or
  reminder, default otherwise) and ``Tags``.

Header values are ASCII (http.client sends latin-1): anything else becomes "?".
"""

from __future__ import annotations

import json
import time
from typing import Any

from app.routine.events import CRITICAL, AlertEvent

MAX_DETAIL = 4000
MAX_ITEMS = 200


def _event_json(e: AlertEvent) -> dict[str, Any]:
    return {
        "event": e.event,
        "array": e.array,
        "md_device": e.md_device,
        "component": e.component,
        "component_path": e.component_path,
        "detail": e.detail[:MAX_DETAIL],
        "critical": e.event in CRITICAL,
        "extra": dict(e.extra),
    }


def webhook_body(e: AlertEvent, host: str, note: str, folded: int, now: float) -> str:
    """The JSON a webhook receives for ``e``."""
    d: dict[str, Any] = {"source": "raidman", "host": host, "time": now}
    d["time_iso"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))
    d.update(_event_json(e))
    d["folded"] = folded
    d["note"] = note
    if e.items:
        d["events"] = [_event_json(x) for x in e.items[:MAX_ITEMS]]
    return json.dumps(d, ensure_ascii=False)


def _ascii(text: str, limit: int = 200) -> str:
    return "".join(c if " " <= c <= "~" else "?" for c in text[:limit])


def ntfy_request(e: AlertEvent, host: str, note: str) -> tuple[str, dict[str, str]]:
    """The body and headers of ``e``'s POST to an ntfy topic."""
    critical = e.event in CRITICAL
    where = e.md_device or host
    prio = "urgent" if critical else "high" if e.event in ("Digest", "DegradedFor") else "default"
    headers = {
        "Title": _ascii(f"{e.event} on {where} ({host})"),
        "Priority": prio,
        "Tags": "rotating_light" if critical else "floppy_disk",
        "Content-Type": "text/plain; charset=utf-8",
    }
    body = e.detail[:MAX_DETAIL] + (f" ({note})" if note else "")
    return body, headers


def json_headers() -> dict[str, str]:
    return {"Content-Type": "application/json; charset=utf-8", "User-Agent": "raidman-monitor"}
