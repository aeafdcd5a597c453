"""app.model.levels: the one table of RAID-level facts, checked against its sources.

Minimum devices: mdadm Create.c ("at least 4 raid-devices needed for level 6", "at least 2
raid-devices needed for level 4 or 5" for every level >= 4). Optimal I/O: drivers/md/raid10.c
raid10_nr_stripes() — n / near_copies when n divides evenly, else n; far and offset layouts
stripe over all n disks. Article 000 (/work/shared/seeds/000_*.txt) shows the n2 case:
4 SSDs, 32 KiB chunk, tune2fs "RAID stride: 8, RAID stripe width: 16".
"""

from __future__ import annotations

import pytest

from app.model import levels
from app.plans.geometry import Geometry
from backends.simulated.backend import SimulatedBackend
from backends.simulated.clock import SimClock

KIB = 1024


@pytest.mark.parametrize(
    ("level", "n", "layout", "chunks"),
    [
        ("raid0", 3, None, 3),
        ("raid1", 2, None, 1),
        ("raid4", 4, None, 3),
        ("raid5", 4, "left-symmetric", 3),
        ("raid6", 4, "left-symmetric", 2),
        ("raid6", 6, None, 4),
        ("raid10", 4, "n2", 2),  # article 000: stripe width 16 = 8 × 2
        ("raid10", 4, "f2", 4),  # near_copies 1: all 4
        ("raid10", 4, "o2", 4),
        ("raid10", 3, "n2", 3),  # 3 % 2 != 0: all 3
        ("raid10", 6, "n3", 2),
        ("raid10", 5, "n2", 5),
        ("raid10", 8, "n2f2", 4),  # near 2 of 8
        ("raid10", 4, None, 2),  # mdadm's default n2
    ],
)
def test_data_disks_is_the_kernels_optimal_io(
    level: str, n: int, layout: str | None, chunks: int
) -> None:
    assert levels.data_disks(level, n, layout) == chunks
    opt = chunks * 32 * KIB if level in levels.STRIPED else 0  # RAID-1 publishes none
    assert levels.optimal_io_bytes(level, n, 32 * KIB, layout) == opt
    g = Geometry(level, n, 32 * KIB, layout)
    if level in levels.STRIPED:
        assert g.ext4() == (8, 8 * chunks)
        assert g.xfs() == ("32k", chunks)


def test_raid1_and_linear_publish_no_optimal_io() -> None:
    assert levels.optimal_io_bytes("raid1", 2, 0) == 0
    assert levels.optimal_io_bytes("linear", 2, 64 * KIB) == 0
    assert levels.data_disks("linear", 2) is None


@pytest.mark.parametrize(
    ("level", "layout", "minimum"),
    [
        ("raid0", None, 2),
        ("raid1", None, 2),
        ("raid4", None, 2),
        ("raid5", None, 2),  # mdadm accepts a 2-device RAID-5
        ("raid6", None, 4),
        ("raid10", "n2", 2),
        ("raid10", "n3", 3),  # the kernel refuses fewer disks than copies
        ("raid10", "f2", 2),
    ],
)
def test_min_devices_as_mdadm_accepts_them(level: str, layout: str | None, minimum: int) -> None:
    assert levels.min_devices(level, layout) == minimum


def test_layout_names_and_copies() -> None:
    assert levels.raid10_layout("f2") == levels.Raid10Layout(near=1, far=2)
    assert levels.raid10_layout("o3") == levels.Raid10Layout(near=1, far=3, offset=True)
    assert levels.raid10_layout("n2f2").copies == 4
    assert levels.raid10_layout("garbage") == levels.Raid10Layout()
    for name in ("n2", "f2", "o2", "n3", "n2f2"):
        assert levels.raid10_layout(name).name == name


def test_sets_follow_the_table() -> None:
    assert {"raid4", "raid5", "raid6"} == levels.PARITY
    assert {"raid0", "raid4", "raid5", "raid6", "raid10"} == levels.STRIPED
    assert {"raid1", "raid4", "raid5", "raid6", "raid10"} == levels.REDUNDANT
    assert levels.failures_survived("raid10", 4, "n2") == 1
    assert levels.failures_survived("raid6", 6) == 2
    assert levels.failures_survived("raid1", 3) == 2


@pytest.mark.parametrize(
    ("layout", "n", "opt_chunks"), [("n2", 4, 2), ("f2", 4, 4), ("o2", 4, 4), ("n2", 3, 3)]
)
def test_simulator_publishes_the_kernels_io_hints(layout: str, n: int, opt_chunks: int) -> None:
    """The simulated md device's queue/optimal_io_size follows raid10_nr_stripes too."""
    be = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    disks = [d.name for d in be.probe().disks][:n]
    r = be.run(
        (
            "mdadm", "--create", "/dev/md/127", "--level=10", f"--raid-devices={n}",
            f"--layout={layout}", "--chunk=32K", "--bitmap=none", "--run",
            *[f"/dev/{d}" for d in disks],
        )
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    opt = be.read_text("/sys/block/md127/queue/optimal_io_size")
    assert opt is not None and int(opt) == opt_chunks * 32 * KIB
    a = be.probe().array("md127")
    assert a is not None and a.data_disks == opt_chunks


def test_simulated_md_publishes_discard_max_bytes() -> None:
    """md RAID-4/5/6 drops discards unless raid456.devices_handle_discard_safely=Y (article 000:
    fstrim is not passed through RAID-5 "weder im Falle von mdadm-SW-Raid-Arrays ..."); RAID-10
    passes them on. The demo's RAID-5 therefore shows the discard-blocked finding."""
    from app.rules import audit, gather

    be = SimulatedBackend.from_scenario("raid5-cable", clock=SimClock.manual())
    m = be.probe()
    [r5] = [a for a in m.arrays if a.level == "raid5"]
    assert be.read_text(f"/sys/block/{r5.name}/queue/discard_max_bytes") == "0\n"
    codes = {(f.code, f.device) for f in audit(m, gather(be, m))}
    assert ("discard-blocked", r5.name) in codes
    be10 = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    [r10] = be10.probe().arrays
    v = be10.read_text(f"/sys/block/{r10.name}/queue/discard_max_bytes")
    assert v is not None and int(v) > 0
