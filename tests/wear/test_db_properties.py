"""Database rows as untrusted state, fuzzed (issue 23, Deliver: property tests over database
rows; fixed seeds). A real wear database (``monitor --once`` on the raid6-wd demo) has one cell
of one row set to a value of another type or shape — text in a number column, a blob, a
64-bit overflow, NaN, deeply nested JSON — and ``report --json``'s reading of it (the store, the
syncs, the recorded speeds, the audit) never raises: a bad row costs that row."""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.cli import main
from app.report import full_report_json
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend

EXAMPLES = int(os.environ.get("RAIDMAN_FUZZ_EXAMPLES", "30"))
PROPS = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
TABLES = ("snapshots", "sync_events")
CELLS: tuple[object, ...] = (
    None, "", "x", "yesterday", "²", "1e400", "NaN", b"\x00\xff", 2**63 - 1, -(2**63), -1, 0,
    1e308, float("nan"), float("inf"), 1.5, "[" * 5000 + "]" * 5000, '{"a": ' * 500 + "1" + "}" * 500,
    "[]", "{}", '{"sda": "x"}', '[["x"]]', '{"sda": {"read_bytes": -1}}', "9" * 400,
)  # fmt: skip


@pytest.fixture(scope="module")
def template() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="raidman-db-fuzz-") as d:
        state = Path(d) / "state"
        state.mkdir(mode=0o700)
        old = os.environ.get("RAIDMAN_STATE_DIR")
        os.environ["RAIDMAN_STATE_DIR"] = str(state)
        try:
            assert main(["monitor", "--once", "--demo", "raid6-wd"]) == 0
        finally:
            if old is None:
                del os.environ["RAIDMAN_STATE_DIR"]
            else:
                os.environ["RAIDMAN_STATE_DIR"] = old
        yield state / "state.db"


def _columns(db: Path, table: str) -> list[str]:
    with sqlite3.connect(db) as c:
        cols = [r[1] for r in c.execute(f"PRAGMA table_info({table})") if r[1] != "id"]
    c.close()
    return cols


def test_the_template_has_rows_of_each_kind(template: Path) -> None:
    with sqlite3.connect(template) as c:
        for t in TABLES:
            assert c.execute(f"SELECT count(*) FROM {t}").fetchone()[0] > 0, t
    c.close()


def test_one_bad_cell_costs_at_most_its_row(template: Path) -> None:
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    machine = backend.probe()
    columns = {t: _columns(template, t) for t in TABLES}

    @PROPS
    @given(
        st.sampled_from(TABLES),
        st.integers(0, 1 << 10),
        st.integers(0, 1 << 10),
        st.sampled_from(CELLS),
    )
    def run(table: str, col_pick: int, row_pick: int, value: object) -> None:
        with tempfile.TemporaryDirectory() as d:
            os.chmod(d, 0o700)
            db = Path(d) / "state.db"
            shutil.copy(template, db)
            db.chmod(0o600)
            col = columns[table][col_pick % len(columns[table])]
            try:
                with sqlite3.connect(db) as c:
                    ids = [r[0] for r in c.execute(f"SELECT id FROM {table} ORDER BY id")]
                    c.execute(
                        f"UPDATE {table} SET {col}=? WHERE id=?", (value, ids[row_pick % len(ids)])
                    )
            except sqlite3.IntegrityError:  # a NOT NULL column: SQLite itself refuses the cell
                return
            finally:
                c.close()
            store = SnapshotStore.open(db, attempts=1, retry_delay_s=0)
            try:
                doc = full_report_json(backend, machine, smart=False, store=store)
                json.dumps(doc)
            finally:
                store.close()

    run()
