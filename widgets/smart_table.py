"""The whole SMART reading under the Wear tab's summary: the attribute table (failing ones in
red, pre-fail ones bold), the NVMe health log, the self-test log and the error log. The rows
are app.model.smart_tables' (the same as ``raidman report``'s)."""

from __future__ import annotations

from rich.text import Text

from app.format import STATE_COLOURS
from app.model.smart import SmartReading
from app.model.smart_tables import (
    NVME_HEALTH,
    attribute_mark,
    last_self_test,
    self_test_text,
)

MUTED = STATE_COLOURS["muted"]
TESTS_SHOWN = 5


def _n(v: int | None) -> str:
    return "-" if v is None else str(v)


def self_test_style(r: SmartReading) -> str:
    last = last_self_test(r)
    if r.self_test_remaining is not None:
        return STATE_COLOURS["warning"]
    if last is None:
        return MUTED
    return STATE_COLOURS["ok"] if last.passed else f"bold {STATE_COLOURS['error']}"


def smart_logs_text(r: SmartReading) -> Text:
    """Nothing for an unavailable reading (the summary says why)."""
    t = Text(no_wrap=True, overflow="ellipsis")
    if not r.available:
        return t
    t.append(self_test_text(r) + "\n", style=self_test_style(r))
    if r.attributes:
        t.append("\nATA attributes\n", style="bold")
        t.append(
            f"{'ID':>3} {'name':<24} {'value':>5} {'worst':>5} {'thresh':>6}  raw\n", style=MUTED
        )
        for a in r.attributes:
            mark = attribute_mark(a)
            style = (
                f"bold {STATE_COLOURS['error']}" if mark == "FAILING" else ("bold" if mark else "")
            )
            t.append(
                f"{a.id:>3} {a.name[:24]:<24} {_n(a.value):>5} {_n(a.worst):>5} "
                f"{_n(a.thresh):>6}  {(a.raw_string or _n(a.raw))[:24]}",
                style=style,
            )
            if mark:
                t.append(f"  {mark}", style=style)
            t.append("\n")
    health = [(label, r.nvme[k], k) for k, label in NVME_HEALTH if k in r.nvme]
    if health:
        t.append("\nNVMe health log\n", style="bold")
        for label, v, k in health:
            bad = (k in ("critical_warning", "media_errors") and v) or (
                k == "available_spare" and v < r.nvme.get("available_spare_threshold", 0)
            )
            shown = f"{v:#04x}" if k == "critical_warning" else str(v)
            t.append(
                f"{label:<32} {shown}\n", style=f"bold {STATE_COLOURS['error']}" if bad else ""
            )
    if r.self_tests:
        t.append("\nSelf-test log (newest first)\n", style="bold")
        for st in r.self_tests[:TESTS_SHOWN]:
            style = {True: "", False: f"bold {STATE_COLOURS['error']}"}.get(st.passed, MUTED)  # type: ignore[arg-type]
            lba = "" if st.lba_first_error is None else f"  LBA {st.lba_first_error}"
            hours = "" if st.lifetime_hours is None else f"  at {st.lifetime_hours} h"
            t.append(f"{st.kind[:18]:<18} {st.status[:40]}{hours}{lba}\n", style=style)
    if r.error_count is not None:
        style = STATE_COLOURS["warning"] if r.error_count else MUTED
        t.append(
            f"\nError log: {r.error_count} entr{'y' if r.error_count == 1 else 'ies'}\n",
            style=style,
        )
        for e in r.errors[:TESTS_SHOWN]:
            at = "" if e.lifetime_hours is None else f"at {e.lifetime_hours} h: "
            t.append(f"  {at}{e.text}\n", style=MUTED)
    t.rstrip()
    return t
