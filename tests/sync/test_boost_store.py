"""Boost records are untrusted state (issue 11, deliverable 7): only the settings boost raises,
in range; the restore record is on disk before anything is raised; on rotational arrays the
minimum speed is left alone (seed 000 raises it on a RAID-10 of SSDs: "Defaultwerte sorgen meist
für eine sehr geringe Zusatzbelastung zum laufenden Linux-Betrieb")."""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from app.backend import CommandResult
from app.model.live import LiveSample
from app.plans.executor import execute
from app.statefiles import StateFileError
from app.sync.boost import (
    BoostRecord,
    BoostStore,
    due_restores,
    members_rotational,
    plan_boost,
    restore_plan,
)
from backends.simulated import SimClock, SimulatedBackend
from tests.sync.test_boost import KERNEL_DEFAULTS, Files, idle, syncing

GOOD = {
    "array": "md0",
    "action": "recover",
    "started_at": 1.0,
    "previous": {
        "sysctl:dev.raid.speed_limit_max": "200000",
        "sysfs:/sys/block/md0/md/stripe_cache_size": "256",
    },
    "applied": {
        "sysctl:dev.raid.speed_limit_max": "500000",
        "sysfs:/sys/block/md0/md/stripe_cache_size": "8192",
    },
}


def _bad(**changes: object) -> dict[str, object]:
    d = json.loads(json.dumps(GOOD))
    d.update(changes)
    return d


BAD_RECORDS = {
    "core_pattern": _bad(previous={"sysctl:kernel.core_pattern": "|/tmp/x"}),
    "cron": _bad(array="md1", previous={"sysfs:/etc/cron.d/x": "1"}),
    "other array's cache": _bad(previous={"sysfs:/sys/block/md9/md/stripe_cache_size": "256"}),
    "cache too large": _bad(applied={"sysfs:/sys/block/md0/md/stripe_cache_size": "40000"}),
    "cache too small": _bad(previous={"sysfs:/sys/block/md0/md/stripe_cache_size": "16"}),
    "speed zero": _bad(previous={"sysctl:dev.raid.speed_limit_min": "0"}),
    "not a number": _bad(previous={"sysctl:dev.raid.speed_limit_max": "1; reboot"}),
    "not an md name": _bad(array="../../etc"),
    "traversal key": _bad(previous={"sysfs:/sys/block/md0/md/../../../../etc/passwd": "1"}),
    "extra field": _bad(run="sh -c reboot"),
    "not an object": ["md0"],
}


def _plant(path: Path, records: Sequence[object]) -> None:
    path.write_text(json.dumps(list(records)))
    os.chmod(path, 0o600)


@pytest.mark.parametrize("name", sorted(BAD_RECORDS))
def test_record_outside_the_allowlist_is_refused_with_a_note(tmp_path: Path, name: str) -> None:
    p = tmp_path / "boost.json"
    _plant(p, [BAD_RECORDS[name], _bad(array="md5", previous={}, applied={})])
    store = BoostStore(p)
    assert [r.array for r in store.records] == ["md5"]  # the good one is kept
    (note,) = store.notes
    assert "refused boost record #1" in note and "nothing was written" in note
    assert "\n" not in note and "\x1b" not in note


def test_good_record_is_accepted() -> None:
    rec = BoostRecord.from_json(GOOD)
    assert rec.previous["sysfs:/sys/block/md0/md/stripe_cache_size"] == "256"


class RecordingBackend(SimulatedBackend):
    """The simulated backend, logging every command it is asked to run."""

    ran: list[tuple[tuple[str, ...], str | None]]

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        self.ran.append((tuple(argv), stdin))
        return super().run(argv, stdin=stdin, timeout=timeout)


def _recording(scenario: str) -> RecordingBackend:
    sim = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())
    be = RecordingBackend(sim.state, sim.clock, scenario)
    be.ran = []
    return be


@pytest.mark.parametrize(
    "record",
    [
        {**GOOD, "array": "md0", "previous": {"sysctl:kernel.core_pattern": "|/tmp/pwn %p"}},
        {**GOOD, "array": "md0", "previous": {"sysfs:/etc/cron.d/x": "* * * * * root id"}},
    ],
)
def test_planted_record_is_never_restored(tmp_path: Path, record: dict[str, object]) -> None:
    """Issue 11: a planted boost.json made root raidman write core_pattern or cron.d at start.
    The array md0 is gone, so a valid record would be due: the planted one runs nothing."""
    p = tmp_path / "boost.json"
    _plant(p, [record])
    before = p.read_text()
    backend = _recording("raid10-evo")
    store = BoostStore(p)
    assert store.records == () and len(store.notes) == 1
    sample = backend.sample()
    for rec in due_restores(store, sample):
        execute(restore_plan(rec, store), backend)
    assert backend.ran == []
    assert p.read_text() == before  # left for the admin to see


async def test_planted_record_in_the_tui_runs_nothing_and_is_shown(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from app.ui.app import RaidmanApp
    from tests.ui.helpers import wait_for, wait_ready

    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path))
    os.chmod(tmp_path, 0o700)
    _plant(tmp_path / "boost.json", [{**GOOD, "previous": {"sysctl:kernel.core_pattern": "|x"}}])
    backend = _recording("raid10-evo")
    app = RaidmanApp(backend, probe_interval=0, sample_interval=0)
    notes: list[str] = []
    monkeypatch.setattr(app, "notify", lambda msg, **kw: notes.append(str(msg)))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        for _ in range(3):
            n = app.sample_count
            app.refresh_sample()
            await wait_for(pilot, lambda n=n: app.sample_count > n)
        await app.workers.wait_for_complete()
    assert not [argv for argv, _ in backend.ran if argv[0] in ("sysctl", "tee")]
    assert any("refused boost record" in n and "kernel.core_pattern" in n for n in notes)


def test_unsafe_file_is_refused_and_never_written(tmp_path: Path) -> None:
    target = tmp_path / "elsewhere.json"
    target.write_text(json.dumps([GOOD]))
    p = tmp_path / "boost.json"
    p.symlink_to(target)
    store = BoostStore(p)
    assert store.records == ()
    assert "symlink" in store.notes[0]
    with pytest.raises(StateFileError):
        store.begin(BoostRecord.from_json(GOOD))
    assert json.loads(target.read_text()) == [GOOD]


def test_group_writable_state_dir_refused(tmp_path: Path) -> None:
    d = tmp_path / "state"
    d.mkdir()
    _plant(d / "boost.json", [GOOD])
    os.chmod(d, 0o775)
    store = BoostStore(d / "boost.json")
    assert store.records == ()
    assert "writable by group or others" in store.notes[0]


def test_refused_records_survive_a_save(tmp_path: Path) -> None:
    p = tmp_path / "boost.json"
    planted = BAD_RECORDS["core_pattern"]
    _plant(p, [planted])
    store = BoostStore(p)
    store.add(BoostRecord("md3", "resync", 2.0, {"sysctl:dev.raid.speed_limit_max": "1"}))
    assert planted in json.loads(p.read_text())
    assert [r.array for r in BoostStore(p).records] == ["md3"]


def test_store_refuses_to_save_a_record_it_would_refuse_to_load(tmp_path: Path) -> None:
    store = BoostStore(tmp_path / "boost.json")
    with pytest.raises(ValueError):
        store.begin(BoostRecord("md0", "resync", 1.0, {"sysctl:kernel.core_pattern": "x"}))
    assert not (tmp_path / "boost.json").exists()


def test_corrupt_files_moved_aside_never_overwrite_each_other(tmp_path: Path) -> None:
    p = tmp_path / "boost.json"
    for text in ("{one", "{two"):
        p.write_text(text)
        BoostStore(p)
    assert sorted(a.read_text() for a in tmp_path.glob("boost.json.corrupt-*")) == ["{one", "{two"]


# ---- the restore record before anything is raised ----------------------------------------------


def test_begin_persists_a_pending_record_before_the_run(tmp_path: Path) -> None:
    files = Files(KERNEL_DEFAULTS)
    p = tmp_path / "boost.json"
    store = BoostStore(p)
    plan, record = plan_boost(
        files.read, "md0", "recover", level="raid6", members=5, store=store, rotational=False
    )
    store.begin(record)
    # crash right after Run: the steps ran, commit never happened
    for s in plan.steps:
        files.apply(s.argv, s.stdin)
    reopened = BoostStore(p)
    (rec,) = reopened.records
    assert rec.pending
    assert due_restores(reopened, LiveSample(1.0, (syncing("md0", "recover"),))) == []
    (due,) = due_restores(reopened, LiveSample(2.0, (idle("md0"),)))
    for s in restore_plan(due, reopened).steps:
        files.apply(s.argv, s.stdin)
    reopened.forget("md0")
    assert files.values == KERNEL_DEFAULTS
    assert BoostStore(p).records == ()


def test_commit_and_forget(tmp_path: Path) -> None:
    p = tmp_path / "boost.json"
    store = BoostStore(p)
    rec = BoostRecord.from_json(GOOD)
    assert store.begin(rec).pending
    store.commit(rec)
    (kept,) = BoostStore(p).records
    assert not kept.pending and kept.previous == rec.previous
    store.begin(BoostRecord("md1", "resync", 3.0, {"sysctl:dev.raid.speed_limit_max": "9"}))
    store.forget("md1")
    assert [r.array for r in BoostStore(p).records] == ["md0"]


# ---- rotational arrays ------------------------------------------------------------------------


def test_rotational_array_raises_only_max_and_stripe_cache(tmp_path: Path) -> None:
    files = Files(KERNEL_DEFAULTS)
    store = BoostStore(tmp_path / "boost.json")
    plan, record = plan_boost(
        files.read, "md0", "recover", level="raid6", members=5, store=store, rotational=True
    )
    assert [s.argv for s in plan.steps] == [
        ("sysctl", "-w", "dev.raid.speed_limit_max=500000"),
        ("tee", "/sys/block/md0/md/stripe_cache_size"),
    ]
    assert "sysctl:dev.raid.speed_limit_min" not in record.previous
    assert any("starves foreground I/O" in n for n in plan.notes)


def test_rotational_array_raises_min_when_asked(tmp_path: Path) -> None:
    store = BoostStore(tmp_path / "boost.json")
    plan, _ = plan_boost(
        Files(KERNEL_DEFAULTS).read,
        "md0",
        "recover",
        level="raid6",
        members=5,
        store=store,
        rotational=True,
        raise_min=True,
    )
    assert plan.steps[0].argv == ("sysctl", "-w", "dev.raid.speed_limit_min=200000")
    assert any("starved" in n for n in plan.notes)


def test_unknown_media_is_treated_as_rotational(tmp_path: Path) -> None:
    store = BoostStore(tmp_path / "boost.json")
    plan, _ = plan_boost(
        Files(KERNEL_DEFAULTS).read, "md127", "resync", level="raid10", members=4, store=store
    )
    assert [s.argv for s in plan.steps] == [("sysctl", "-w", "dev.raid.speed_limit_max=500000")]
    assert any("not known" in n for n in plan.notes)


def test_members_rotational_from_the_model() -> None:
    wd = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual()).probe()
    evo = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual()).probe()
    (wd_array,) = [a.name for a in wd.arrays]
    (evo_array,) = [a.name for a in evo.arrays]
    assert members_rotational(wd, wd_array) is True  # seed 001: WD 1 TB disks
    assert members_rotational(evo, evo_array) is False  # seed 000: 850 EVO
    assert members_rotational(evo, "md999") is None
