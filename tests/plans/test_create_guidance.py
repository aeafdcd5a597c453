"""Create-plan knowledge (issue 28 items 2 and 3): expectations beside numbers and before create,
RAID-10 layout guidance with the model's two-failure counts, member preparation, the write hole,
parity threads, RAID-0 warned."""

from __future__ import annotations

from app.plans.builders.benchmark import BenchmarkResult, Cell, table
from app.plans.builders.create_array import CreateArrayParams, build_create_array
from app.plans.builders.create_guidance import two_failures_survived
from app.plans.builders.expectations import expectations, flags
from backends.simulated import SimulatedBackend

DEVS = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")


def _plan(level: str, devices: tuple[str, ...] = DEVS, **kw: object):  # type: ignore[no-untyped-def]
    m = SimulatedBackend.from_scenario("blank").probe()
    return build_create_array(m, CreateArrayParams(level=level, devices=devices, **kw))  # type: ignore[arg-type]


def test_raid10_layout_guidance_counts_two_failures_from_the_model() -> None:
    """Article 000 (../shared/seeds/000_*.txt, "Zur Bedeutung des Layouts"): near vs far/offset
    (reads vs writes) and "das Offset-Layout weniger gegen Ausfälle gewappnet"; the counts come
    from levels.raid10_copy_sets: on 4 disks n2 survives 4 of 6 two-disk failures, f2/o2 2 of 6."""
    assert two_failures_survived(4, "n2") == (4, 6)
    assert two_failures_survived(4, "f2") == (2, 6) == two_failures_survived(4, "o2")
    notes = "\n".join(_plan("raid10", layout="f2").notes)
    assert "n2 survives 4 of 6, f2 survives 2 of 6, o2 survives 2 of 6; this plan: f2" in notes
    assert "stripe reads over all members" in notes


def test_member_preparation_write_hole_threads_and_raid0() -> None:
    """Article 000 (partitions on 1 MiB, over-provisioning, fstrim before measuring), article 004
    (../shared/seeds/004_*.txt: parity RAID's read-modify-write), RAID-0 "keinerlei Redundanz"."""
    r5 = _plan("raid5")
    text = "\n".join(r5.notes)
    assert "1 MiB boundaries" in text and "7–12 %" in text and "blkdiscard" in text
    assert "write hole" in text and "--consistency-policy=ppl" in text and "--write-journal" in text
    assert "group_thread_cnt" in text and "read-modify-write (4 I/Os" in text
    r6 = "\n".join(_plan("raid6").notes)
    assert "ppl exists for RAID-5 only" in r6 and "6 I/Os" in r6
    r0 = _plan("raid0", DEVS[:2])
    assert any("no redundancy" in w for w in r0.warnings)
    assert not any("no redundancy" in w for w in r5.warnings)
    r10 = "\n".join(_plan("raid10").notes)
    assert "write hole" not in r10 and "raidman plan benchmark" in r10


def test_expectations_per_level() -> None:
    """Article 004: RAID-1 "die Leseperformance beinahe verdoppeln" with the controller reading
    both drives; md reads one mirror per request (raid1.c read_balance), so only with concurrent
    readers. Article 000: RAID-10 doubles only for requests over the chunk ("Erst wenn die
    Datenpaketgröße die Chunk Size (deutlich) übersteigt")."""
    [r1] = expectations("raid1", 2, None, None)
    assert "only with 2 or more concurrent readers" in r1 and "writes stay near one disk" in r1
    [r10] = expectations("raid10", 4, "n2", 32 * 1024)
    assert "requests over 64.0 KiB" in r10


def test_table_flags_n_disks_giving_what_two_give() -> None:
    """Article 004: "Die IOPS-Werte beim Lesen unterscheiden sich zwischen vier und acht SSDs
    jedoch kaum, hier kommt der MegaRAID-Controller an seine Grenzen": a result far below the
    level's ceiling is flagged as a shared limit; one at the ceiling is not."""
    cells = (
        Cell("disk", "write", "1m", 4, 500, 500, 3),
        Cell("65536", "write", "1m", 4, 1000, 1000, 3),
        Cell("disk", "read", "1m", 4, 500, 500, 3),
        Cell("65536", "read", "1m", 4, 1000, 1000, 3),
    )
    r0 = BenchmarkResult(tuple(f"d{i}" for i in range(8)), "0", None, (65536,), cells)
    out = table(r0)
    assert "FLAG (64 KiB): write 1m ×4: 2.00 × one disk where the level can give about 8 ×" in out
    assert "8 disks give what 2 give" in out
    ok = {("write", "1m", 4): 1.95, ("read", "1m", 4): 1.9}
    assert list(flags("raid10", 4, "n2", ok)) == []
