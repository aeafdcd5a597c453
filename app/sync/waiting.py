"""A sync waiting its turn, in words (the facts: app.wear.waiting.sync_wait)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from app.format import duration


@dataclass(frozen=True, slots=True)
class SyncWait:
    array: str
    reason: str  # "delayed" (another array's sync on a shared disk) or "pending" (read-auto)
    action: str | None  # the sync md will run (md/sync_action), when it says
    waits_for: tuple[str, ...]
    shares: tuple[str, ...]  # the whole disks shared with them
    starts_in_s: float | None  # their ETAs (the longest); None: one is unknown
    then_s: float | None  # the sync model's duration of this sync once it runs

    def text(self) -> str:
        """ "waits for md127 (shares sdb, sdc, sdd): starts in about 2m 45s, then about 40s"."""
        if self.reason == "pending":
            return "pending: the array is auto-read-only, its sync starts at the first write"
        if not self.waits_for:
            return "waits for another array's sync on the same disks"
        head = f"waits for {', '.join(self.waits_for)}"
        if self.shares:
            head += f" (shares {', '.join(self.shares)})"
        start = (
            f"starts in about {duration(self.starts_in_s)}"
            if self.starts_in_s is not None
            else "starts when that ends"
        )
        then = f", then about {duration(self.then_s)}" if self.then_s is not None else ""
        return f"{head}: {start}{then}"

    def short_text(self) -> str:
        """The banner's narrow form: "waits for md127, starts in ~2m 45s"."""
        if self.reason == "pending":
            return "pending (auto-read-only)"
        head = f"waits for {', '.join(self.waits_for) or 'another array'}"
        if self.starts_in_s is not None:
            head += f", starts in ~{duration(self.starts_in_s)}"
        return head

    def to_json(self) -> dict[str, Any]:
        return {
            "waits_for": list(self.waits_for),
            "shares": list(self.shares),
            "starts_in_s": self.starts_in_s,
            "then_s": self.then_s,
            "waiting_text": self.text(),
        }
