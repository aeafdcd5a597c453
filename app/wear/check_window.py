"""One check/repair window as the wear database keeps it (``sync_events.check_window``).

md counts a check's progress in ``md/sync_completed`` ("done / total" sectors) and its findings in
``md/mismatch_cnt``. Kernel facts this record leans on (drivers/md/md.c, ``md_do_sync``):

* a requested sync (check, repair) begins at ``mddev->resync_min`` (``md/sync_min``), so a window
  written ``sync_min`` = where the last one stopped resumes there: its ``from`` is > 0;
* ``resync_mismatches`` is set to 0 as every resync/check/repair begins: a window's
  ``mismatch_cnt`` counts that window only, a check's total is the sum over its windows;
* interrupted (``sync_action`` = idle), a requested sync leaves ``resync_min`` at
  ``curr_resync_completed``; finished, at 0.

A window that resumes where an unfinished one of the same array stopped ``continues`` that one's
record id: the windows of one check are one check record (app.wear.checks).
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass

MAX_JSON = 2048
MAX_SECTORS = 2**63


def _sector(v: object) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v < MAX_SECTORS:
        return None
    return v


@dataclass(frozen=True, slots=True)
class CheckWindow:
    from_sector: int | None = None  # sync_completed as the window began
    to_sector: int | None = None  # the last sync_completed seen while it ran
    total_sectors: int | None = None
    mismatch_cnt: int | None = None  # md/mismatch_cnt as the window ended (or so far)
    continues: int | None = None  # the sync_events id of the check's first window
    skipped: str | None = None  # not started (degraded, syncing, reshaping): why

    def dumps(self) -> str:
        return json.dumps({k: v for k, v in asdict(self).items() if v is not None})

    @property
    def sectors(self) -> int | None:
        """Sectors this window went over."""
        if self.from_sector is None or self.to_sector is None:
            return None
        return max(0, self.to_sector - self.from_sector)


def parse_window(raw: object) -> CheckWindow | None:
    """A stored window, or None: none kept, or out of shape (never raises)."""
    if not isinstance(raw, str) or not raw or len(raw) > MAX_JSON:
        return None
    try:
        d = json.loads(raw)
    except ValueError:
        return None
    if not isinstance(d, dict):
        return None
    skipped = d.get("skipped")
    return CheckWindow(
        from_sector=_sector(d.get("from_sector")),
        to_sector=_sector(d.get("to_sector")),
        total_sectors=_sector(d.get("total_sectors")),
        mismatch_cnt=_sector(d.get("mismatch_cnt")),
        continues=_sector(d.get("continues")),
        skipped=skipped[:200] if isinstance(skipped, str) else None,
    )
