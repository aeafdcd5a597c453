"""/proc/mdstat parser against the shared corpus (prometheus-procfs, pymdstat, libstorage-ng)."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.parsers.errors import ParseError
from app.parsers.mdstat import Mdstat, MdstatArray, mdstat_to_arrays, parse_mdstat
from tests.corpus import corpus


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8")


# ---- prometheus-procfs ---------------------------------------------------------------------

# array: (type, state, active, total, failed, down, spare, blocks, synced, to_be_synced, pct, finish, speed)
PROCFS = {
    "md3": ("raid6", "active", 8, 8, 0, 0, 2, 5853468288, 5853468288, 5853468288, 0, 0, 0),
    "md127": ("raid1", "active", 2, 2, 0, 0, 0, 312319552, 312319552, 312319552, 0, 0, 0),
    "md0": ("raid1", "active", 2, 2, 0, 0, 0, 248896, 248896, 248896, 0, 0, 0),
    "md4": ("raid1", "inactive", 0, 0, 1, 0, 1, 4883648, 4883648, 4883648, 0, 0, 0),
    "md6": ("raid1", "recovering", 1, 2, 1, 1, 1, 195310144, 16775552, 195310144, 8.5, 17, 259783),
    "md8": ("raid1", "resyncing", 2, 2, 0, 0, 2, 195310144, 16775552, 195310144, 8.5, 17, 259783),
    "md201": ("raid1", "checking", 2, 2, 0, 0, 0, 1993728, 114176, 1993728, 5.7, 0.2, 114176),
    "md7": ("raid6", "active", 3, 4, 1, 1, 0, 7813735424, 7813735424, 7813735424, 0, 0, 0),
    "md9": ("raid1", "resyncing", 4, 4, 2, 0, 1, 523968, 0, 523968, 0, 0, 0),
    "md10": ("raid0", "active", 2, 2, 0, 0, 0, 314159265, 314159265, 314159265, 0, 0, 0),
    "md11": ("raid1", "resyncing", 2, 2, 1, 0, 2, 4190208, 0, 4190208, 0, 0, 0),
    "md12": ("raid0", "active", 2, 2, 0, 0, 0, 3886394368, 3886394368, 3886394368, 0, 0, 0),
    "md126": ("raid0", "active", 2, 2, 0, 0, 0, 1855870976, 1855870976, 1855870976, 0, 0, 0),
    "md219": ("unknown", "inactive", 0, 0, 0, 0, 3, 7932, 7932, 7932, 0, 0, 0),
    "md00": ("raid0", "active", 1, 1, 0, 0, 0, 4186624, 4186624, 4186624, 0, 0, 0),
    "md120": ("linear", "active", 2, 2, 0, 0, 0, 2095104, 2095104, 2095104, 0, 0, 0),
    "md101": ("raid0", "active", 3, 3, 0, 0, 0, 322560, 322560, 322560, 0, 0, 0),
    "md42": (
        "raid5",
        "reshaping",
        2,
        3,
        0,
        1,
        1,
        1953381440,
        1096879076,
        1953381440,
        56.1,
        1868.1,
        7640,
    ),
}

PROCFS_MEMBERS = {
    "md3": "sda1/8 sdh1/7 sdg1/6 sdf1/5 sde1/11 sdd1/3 sdc1/10 sdb1/9 sdd1/10/S sdd2/11/S",
    "md127": "sdi2/0 sdj2/1",
    "md0": "sdi1/0 sdj1/1",
    "md4": "sda3/0/F sdb3/1/S",
    "md6": "sdb2/2/F sdc/1/S sda2/0",
    "md8": "sdb1/1 sda1/0 sdc/2/S sde/3/S",
    "md7": "sdb1/0 sde1/3 sdd1/2 sdc1/1/F",
    "md9": "sdc2/2 sdd2/3 sdb2/1 sda2/0 sde/4/F sdf/5/F sdg/6/S",
    "md10": "sda1/0 sdb1/1",
    "md11": "sdb2/0 sdc2/1 sdc3/2/F hda/4/S ssdc2/3/S",
    "md12": "sdc2/0 sdd2/1",
    "md120": "sda1/1 sdb1/0",
    "md126": "sdb/1 sdc/0",
    "md219": "sdb/2/S sdc/1/S sda/0/S",
    "md00": "xvdb/0",
    "md101": "sdb/2 sdd/1 sdc/0",
    "md201": "sda3/0 sdb3/1",
    "md42": "sda1/3/S sdd1/0 sde1/1",
}

_STATE_OF_ACTION = {
    "recovery": "recovering",
    "resync": "resyncing",
    "check": "checking",
    "reshape": "reshaping",
    "repair": "checking",
}


def _procfs_view(a: MdstatArray) -> tuple[object, ...]:
    """The array as procfs's MDStat struct would describe it (conventions from EXPECTED.md)."""
    failed, spare = a.failed_count, a.spare_count
    active: int | None
    total: int | None
    if not a.active:
        active = total = 0
    elif a.raid_disks is None:  # raid0/linear print no [n/m]: procfs counts the members
        active = total = len(a.members) - failed - spare
    else:
        active, total = a.active_disks, a.raid_disks
    assert a.blocks is not None
    p = a.progress
    state = "active" if a.active else "inactive"
    synced = to_sync = a.blocks
    pct: float = 0
    finish: float = 0
    speed: float = 0
    if p is not None:
        state = _STATE_OF_ACTION[p.action]
        if p.waiting is not None:
            synced = 0
        else:
            assert p.done_kib is not None and p.total_kib is not None
            synced, to_sync = p.done_kib, p.total_kib
            pct, finish, speed = p.percent or 0, p.finish_min or 0, p.speed_kib_s or 0
    down = (total - active) if isinstance(total, int) and isinstance(active, int) else 0
    return (
        a.personality or "unknown",
        state,
        active,
        total,
        failed,
        down,
        spare,
        a.blocks,
        synced,
        to_sync,
        pct,
        finish,
        speed,
    )


@pytest.fixture(scope="module")
def procfs() -> Mdstat:
    return parse_mdstat(_read(corpus("prometheus-procfs", "mdstat")))


def test_procfs_all_arrays_in_order(procfs: Mdstat) -> None:
    """prometheus-procfs: all 18 arrays, in file order, and the personalities line."""
    assert [a.name for a in procfs.arrays] == list(PROCFS)
    assert procfs.personalities == (
        "linear",
        "multipath",
        "raid0",
        "raid1",
        "raid6",
        "raid5",
        "raid4",
        "raid10",
    )
    assert procfs.unused == ()


@pytest.mark.parametrize("name", list(PROCFS))
def test_procfs_array(procfs: Mdstat, name: str) -> None:
    """prometheus-procfs: each array agrees with TestFS_MDStat's expected table."""
    a = procfs.array(name)
    assert a is not None
    assert _procfs_view(a) == PROCFS[name]


@pytest.mark.parametrize("name", list(PROCFS_MEMBERS))
def test_procfs_members(procfs: Mdstat, name: str) -> None:
    """prometheus-procfs: component lists (name, slot, F/S flags) in file order."""
    a = procfs.array(name)
    assert a is not None
    got = ["/".join([m.name, str(m.slot), *sorted(m.flags & {"F", "S"})]) for m in a.members]
    assert got == PROCFS_MEMBERS[name].split()


def test_procfs_details(procfs: Mdstat) -> None:
    """prometheus-procfs: super, chunk, layout, read-only flags and bitmap lines."""
    md3 = procfs.array("md3")
    assert md3 is not None and md3.super == "1.2" and md3.chunk_bytes == 64 * 1024
    assert md3.algorithm == 2 and md3.layout == "left-symmetric" and md3.status == "UUUUUUUU"
    md127 = procfs.array("md127")
    assert md127 is not None and md127.super is None
    md11 = procfs.array("md11")
    assert md11 is not None and md11.read_only == "auto-read-only"
    assert md11.progress is not None and md11.progress.waiting == "PENDING"
    md9 = procfs.array("md9")
    assert md9 is not None and md9.progress is not None and md9.progress.waiting == "DELAYED"
    md101 = procfs.array("md101")
    assert md101 is not None and md101.read_only == "read-only"
    md126 = procfs.array("md126")
    assert md126 is not None and md126.container == ("md127", 0)
    md219 = procfs.array("md219")
    assert md219 is not None and md219.is_container and md219.personality is None
    md120 = procfs.array("md120")
    assert md120 is not None and md120.rounding_bytes == 0
    md7 = procfs.array("md7")
    assert md7 is not None and md7.bitmap is not None
    assert (md7.bitmap.pages_used, md7.bitmap.pages_total, md7.bitmap.chunk_bytes) == (
        0,
        30,
        65536 * 1024,
    )
    md42 = procfs.array("md42")
    assert md42 is not None and md42.bitmap is not None and md42.bitmap.pages_used == 4
    assert md42.progress is not None and md42.progress.action == "reshape"


PROCFS_INVALID = {
    "invalid personality and state": (
        "Personalities : [invalid]\nmd3 : invalid\n      314159265 blocks 64k chunks\n\n"
    ),
    "blank line before blocks": (
        "Personalities : [raid1]\nmd1 : active raid1 sdi2[0] sdj2[1]\n\n"
        "      312319552 blocks [2/2] [UU]\n"
    ),
    "unknown member flag": (
        "Personalities : [raid1]\nmd1 : active raid1 sdi2[0] sdj2[1](Z)\n"
        "      312319552 blocks [2/2] [UU]\n"
    ),
    "non-numeric slot": (
        "Personalities : [raid1]\nmd1 : active raid1 sdi2[0] sdj2[X]\n"
        "      312319552 blocks [2/2] [UU]\n"
    ),
}


@pytest.mark.parametrize("case", list(PROCFS_INVALID))
def test_procfs_invalid_inputs_rejected(case: str) -> None:
    """prometheus-procfs TestInvalidMdstat: the four described invalid inputs raise ParseError."""
    with pytest.raises(ParseError):
        parse_mdstat(PROCFS_INVALID[case])


def test_valid_variants_of_invalid_inputs_parse() -> None:
    """The invalid inputs above minus their defect parse (so the rejection is about the defect)."""
    ok = "Personalities : [raid1]\nmd1 : active raid1 sdi2[0] sdj2[1](W)\n      312319552 blocks [2/2] [UU]\n"
    m = parse_mdstat(ok)
    assert [x.flags for x in m.arrays[0].members] == [frozenset(), frozenset({"W"})]


# ---- pymdstat ------------------------------------------------------------------------------

# file -> personalities, [(array, status, type, available, used, config, "name:slot ...")]
PYMDSTAT: dict[
    str, tuple[str, list[tuple[str, str, str | None, int | None, int | None, str | None, str]]]
] = {
    "mdstat.01": ("", []),
    "mdstat.02": (
        "raid1 raid6 raid5 raid4",
        [("md_d0", "active", "raid5", 5, 5, "UUUUU", "sde1:0 sdf1:4 sdb1:5 sdd1:2 sdc1:1")],
    ),
    "mdstat.03": (
        "raid6 raid5 raid4",
        [("md0", "active", "raid5", 4, 3, "UUU_", "sda1:0 sdd1:2 sdb1:1")],
    ),
    "mdstat.04": (
        "raid1 raid6 raid5 raid4",
        [
            ("md1", "active", "raid1", 2, 2, "UU", "sdb2:1 sda2:0"),
            ("md2", "active", "raid1", 2, 2, "UU", "sdb3:1 sda3:0"),
            (
                "md3",
                "active",
                "raid5",
                10,
                10,
                "UUUUUUUUUU",
                "sdl1:9 sdk1:8 sdj1:7 sdi1:6 sdh1:5 sdg1:4 sdf1:3 sde1:2 sdd1:1 sdc1:0",
            ),
            ("md0", "active", "raid1", 2, 2, "UU", "sdb1:1 sda1:0"),
        ],
    ),
    "mdstat.05": (
        "raid1 raid6 raid5 raid4",
        [("md127", "active", "raid5", 6, 5, "UUUUU_", "sdh1:6 sdg1:4 sdf1:3 sde1:2 sdd1:1 sdc1:0")],
    ),
    "mdstat.06": (
        "linear raid0 raid1 raid5 raid4 raid6",
        [
            (
                "md0",
                "active",
                "raid6",
                7,
                7,
                "UUUUUUU",
                "sdf1:0 sde1:1 sdd1:2 sdc1:3 sdb1:4 sda1:5 hdb1:6",
            )
        ],
    ),
    "mdstat.07": (
        "raid1",
        [("md1", "active", "raid1", 6, 4, "_UUUU_", "sde1:6 sdg1:1 sdb1:4 sdd1:3 sdc1:2")],
    ),
    "mdstat.08": ("raid5", [("md0", "inactive", "raid5", 4, 4, "UUUU", "sdd1:3 sdc1:2 sda1:0")]),
    "mdstat.09": (
        "linear multipath raid0 raid1 raid6 raid5 raid4 raid10",
        [
            ("md0", "active", "raid1", 2, 2, "UU", "sdf1:1 sde1:0"),
            ("md1", "active", "raid1", 2, 2, "UU", "sdf2:1 sde2:0"),
            # upstream asserts only {sdb:0} (a pymdstat limitation); the file lists all four
            ("md2", "inactive", None, None, None, None, "sdb:0 sdc:2 sdd:3 sda:1"),
        ],
    ),
    "mdstat.10": (
        "raid0 raid1 linear multipath raid6 raid5 raid4 raid10",
        [
            ("md129", "active", "raid1", 2, 2, "UU", "sda3:0 sdd3:1"),
            ("md128", "active", "raid1", 2, 2, "UU", "sda2:0 sdd2:1"),
            ("md125", "active", "raid0", None, None, None, "sdg:4 sdc:1 sdf:3 sdh:5 sde:2 sdb:0"),
            ("md126", "active", "raid0", None, None, None, "nvme0n1:0 nvme1n1:1"),
        ],
    ),
}


@pytest.mark.parametrize("fname", list(PYMDSTAT))
def test_pymdstat_asserted(fname: str) -> None:
    """pymdstat unitest.py: personalities and per-array status/type/available/used/config/components."""
    m = parse_mdstat(_read(corpus("pymdstat", fname)))
    pers, arrays = PYMDSTAT[fname]
    assert m.personalities == tuple(pers.split())
    got = [
        (
            a.name,
            "active" if a.active else "inactive",
            a.personality,
            a.raid_disks,
            a.active_disks,
            a.status,
            " ".join(f"{x.name}:{x.slot}" for x in a.members),
        )
        for a in m.arrays
    ]
    assert got == arrays


@pytest.mark.parametrize("n", range(1, 17))
def test_pymdstat_every_file_parses(n: int) -> None:
    """pymdstat: all 16 files parse (incl. trailing spaces, NBSP, no indentation, no 'unused')."""
    m = parse_mdstat(_read(corpus("pymdstat", f"mdstat.{n:02d}")))
    for a in m.arrays:
        assert a.blocks is not None and a.blocks > 0
        assert a.members


def test_pymdstat_unasserted_facts() -> None:
    """pymdstat: the helper-read facts of mdstat.05/.10/.11/.13/.14/.15/.16 (see EXPECTED.md)."""
    p = parse_mdstat(_read(corpus("pymdstat", "mdstat.05"))).arrays[0].progress
    assert p is not None
    assert (p.action, p.percent, p.done_kib, p.total_kib, p.finish_min, p.speed_kib_s) == (
        "recovery",
        12.6,
        37043392,
        292945152,
        127.5,
        33440,
    )
    m10 = parse_mdstat(_read(corpus("pymdstat", "mdstat.10")))
    md128, md125, md126 = m10.array("md128"), m10.array("md125"), m10.array("md126")
    assert md128 is not None and md128.bitmap is not None
    assert (md128.bitmap.pages_used, md128.bitmap.pages_total, md128.bitmap.size_kib) == (1, 1, 4)
    assert md125 is not None and md125.blocks == 2306837760 and md125.chunk_bytes == 128 * 1024
    assert md126 is not None and md126.chunk_bytes == 3072 * 1024
    a11 = parse_mdstat(_read(corpus("pymdstat", "mdstat.11"))).arrays[0]
    assert (a11.active, a11.personality, a11.blocks, a11.spare_count) == (False, None, 6282240, 1)
    a13 = parse_mdstat(_read(corpus("pymdstat", "mdstat.13"))).arrays[0]
    assert a13.progress is not None and a13.progress.action == "reshape"
    assert (a13.raid_disks, a13.active_disks, a13.status, a13.layout) == (
        4,
        3,
        "UU__",
        "parity-last",
    )
    m14 = parse_mdstat(_read(corpus("pymdstat", "mdstat.14")))
    assert m14.personalities == ("raid0",) and m14.arrays[0].chunk_bytes == 256 * 1024
    m15 = parse_mdstat(_read(corpus("pymdstat", "mdstat.15")))
    assert [a.blocks for a in m15.arrays] == [17581481472, 17552612736, 2097088, 2490176]
    a16 = parse_mdstat(_read(corpus("pymdstat", "mdstat.16"))).arrays[0]
    assert a16.blocks == 95705752576 and len(a16.members) == 8 and a16.chunk_bytes == 512 * 1024
    assert a16.bitmap is not None and a16.bitmap.pages_total == 102


# ---- libstorage-ng ---------------------------------------------------------------------------

# file -> [(array, level, super, chunk, size bytes, active, read_only, devices "name(flags)" sorted)]
LIBSTORAGE: dict[str, list[tuple[str, str, str, int | None, int, bool, bool, str]]] = {
    "parse1": [("md0", "raid1", "1.0", None, 8588820480, True, False, "sda1 sdb1")],
    "parse2": [
        ("md125", "raid1", "external:/md127/0", None, 4294967296, True, True, "sda sdb"),
        ("md126", "raid0", "external:/md127/1", 131072, 8579880960, True, False, "sda sdb"),
        ("md127", "container", "external:imsm", None, 5226496, False, False, "sda(S) sdb(S)"),
    ],
    "parse3": [
        ("md125", "raid1", "external:/md127/1", None, 7532445696, True, False, "sda sdb"),
        ("md126", "raid0", "external:/md127/0", 524288, 2047868928, True, False, "sda sdb"),
        ("md127", "container", "external:ddf", None, 67108864, False, False, "sda(S) sdb(S)"),
    ],
    "parse4": [("md0", "raid5", "1.2", 524288, 34326183936, True, False, "sda sdb sdc sdd(F)")],
    "parse5": [("md_test", "raid0", "1.2", 524288, 8192524288, True, False, "sda1 sdb1")],
    "parse6": [("md0", "raid5", "1.2", 524288, 4290772992, True, False, "sdb1(J) sdd1 sde1 sdf1")],
    "parse7": [
        ("md0", "raid10", "1.2", 524288, 103019446272, True, False, "sdb1 sdc1 sdd1 sde1 sdf1 sdg1")
    ],
    "parse_inactive_noncontainer": [
        ("md126", "unknown", "1.0", None, 103772160, False, False, "sde1(S)"),
        ("md127", "raid5", "1.0", 131072, 2145124352, True, False, "sda1 sdb1 sdc1"),
    ],
    "parse_empty1": [],
    "parse_empty2": [],
}


@pytest.mark.parametrize("fname", list(LIBSTORAGE))
def test_libstorage_proc_mdstat(fname: str) -> None:
    """libstorage-ng proc-mdstat: level, metadata, chunk, size = blocks*1024, flags, devices.

    libstorage-ng calls inactive arrays "read-only"; here that is ``array_state == "inactive"``
    and ``read_only`` stays about the (read-only)/(auto-read-only) marks."""
    arrays = mdstat_to_arrays(
        parse_mdstat(_read(corpus("libstorage-ng", "proc-mdstat", f"{fname}.mdstat")))
    )
    got = []
    for a in sorted(arrays, key=lambda x: x.name):
        devs = []
        for m in sorted(a.members, key=lambda x: x.device):
            flag = {"spare": "(S)", "faulty": "(F)", "journal": "(J)"}.get(m.role, "")
            devs.append(m.device + flag)
        got.append(
            (
                a.name,
                a.level,
                a.metadata,
                a.chunk_bytes,
                a.size_bytes,
                a.array_state != "inactive",
                a.read_only,
                " ".join(devs),
            )
        )
    assert got == LIBSTORAGE[fname]


def test_libstorage_layouts_and_containers() -> None:
    """libstorage-ng proc-mdstat: parity/layout (left-symmetric, n2), container membership, is-container."""
    p4 = mdstat_to_arrays(
        parse_mdstat(_read(corpus("libstorage-ng", "proc-mdstat", "parse4.mdstat")))
    )
    assert p4[0].layout == "left-symmetric"
    p7 = mdstat_to_arrays(
        parse_mdstat(_read(corpus("libstorage-ng", "proc-mdstat", "parse7.mdstat")))
    )
    assert p7[0].layout == "n2" and p7[0].data_disks == 3
    p2 = {
        a.name: a
        for a in mdstat_to_arrays(
            parse_mdstat(_read(corpus("libstorage-ng", "proc-mdstat", "parse2.mdstat")))
        )
    }
    assert (p2["md125"].container, p2["md125"].member_index) == ("md127", 0)
    assert (p2["md126"].container, p2["md126"].member_index) == ("md127", 1)
    assert p2["md127"].is_container and not p2["md126"].is_container
    pin = {
        a.name: a
        for a in mdstat_to_arrays(
            parse_mdstat(
                _read(corpus("libstorage-ng", "proc-mdstat", "parse_inactive_noncontainer.mdstat"))
            )
        )
    }
    assert not pin["md126"].is_container


def test_libstorage_parse_error1_raises() -> None:
    """libstorage-ng proc-mdstat/parse_error1: array line with no blocks line must raise."""
    with pytest.raises(ParseError, match="blocks"):
        parse_mdstat(_read(corpus("libstorage-ng", "proc-mdstat", "parse_error1.mdstat")))


# probe case -> {kernel name: (level, chunk, metadata, "member(flags)" sorted)}
PROBES: dict[str, dict[str, tuple[str, int | None, str | None, str]]] = {
    "md1": {"md0": ("raid5", 524288, "1.2", "sda sdb sdc sdd(S)")},
    "md2": {
        "md0": ("raid0", 524288, "1.0", "md1 md2"),
        "md1": ("raid1", None, "1.0", "sda sdb"),
        "md2": ("raid1", None, "1.0", "sdc sdd"),
    },
    "md3": {
        n: ("raid0", 524288, "1.2", m)
        for n, m in [
            ("md127", "sdb5 sdb6"),
            ("md126", "sdb7 sdb8"),
            ("md_test4", "sdb10 sdb9"),
            ("md_test5", "sdb11 sdb12"),
            ("md0", "sdb1 sdb2"),
            ("md1", "sdb3 sdb4"),
        ]
    },
    "md-imsm1": {
        "md127": ("container", None, "external:imsm", "sdb(S) sdc(S) sdd(S)"),
        "md126": ("raid0", 131072, "external:/md127/0", "sdb sdd"),
        "md125": ("raid1", None, "external:/md127/1", "sdb sdc"),
    },
    "md-ddf1": {
        "md127": ("container", None, "external:ddf", "sdb(S) sdc(S) sdd(S)"),
        "md126": ("raid0", 524288, "external:/md127/0", "sdb sdd"),
        "md125": ("raid1", None, "external:/md127/1", "sdb sdd"),
    },
    "md_plus_lvm1": {
        "md0": ("raid1", None, "1.0", "sdc1 sdd1"),
        "md127": ("raid1", None, "1.0", "sdc2 sdd2"),
    },
}


@pytest.mark.parametrize("case", list(PROBES))
def test_libstorage_probe_mdstat(case: str) -> None:
    """libstorage-ng probe/<case>/proc_mdstat: arrays, levels, chunks, metadata, members/spares."""
    arrays = mdstat_to_arrays(
        parse_mdstat(_read(corpus("libstorage-ng", "probe", case, "proc_mdstat")))
    )
    got = {}
    for a in arrays:
        devs = " ".join(
            m.device + ("(S)" if m.role == "spare" else "")
            for m in sorted(a.members, key=lambda x: x.device)
        )
        got[a.name] = (a.level, a.chunk_bytes, a.metadata, devs)
    assert got == PROBES[case]
    if case == "md-ddf1":
        assert next(a for a in arrays if a.name == "md125").read_only
    if case == "md_plus_lvm1":
        assert all(a.bitmap == "internal" for a in arrays)


# ---- mapping into the model ------------------------------------------------------------------


def test_model_mapping_sync_and_flags(procfs: Mdstat) -> None:
    """prometheus-procfs md6/md9/md42 as MdArray: sysfs vocabulary, sectors = KiB*2."""
    arrays = {a.name: a for a in mdstat_to_arrays(procfs)}
    md6 = arrays["md6"]
    assert md6.sync is not None and md6.sync.action == "recover"
    assert (md6.sync.done_sectors, md6.sync.total_sectors, md6.sync.speed_kib_s) == (
        16775552 * 2,
        195310144 * 2,
        259783,
    )
    assert md6.degraded == 1 and md6.is_degraded
    assert [m.role for m in md6.members] == ["faulty", "spare", "in_sync"]
    assert arrays["md9"].sync is not None and arrays["md9"].sync.action == "delayed"
    assert arrays["md11"].sync is not None and arrays["md11"].sync.action == "pending"
    assert arrays["md11"].array_state == "read-auto"
    assert arrays["md101"].array_state == "readonly"
    assert arrays["md42"].sync is not None and arrays["md42"].sync.action == "reshape"
    assert arrays["md219"].level == "container"
    assert arrays["md10"].raid_disks == 2  # raid0: counted from the members
    # md3: descriptor numbers 3,5..11 are not the roles 0..7 of an 8-disk array -> every slot
    # unknown (a number below 8 is no more a role than one above); all 8 are in sync ([UUUUUUUU])
    md3 = arrays["md3"].members
    assert all(m.slot is None for m in md3)
    assert [m.role for m in md3] == ["in_sync"] * 8 + ["spare"] * 2
    # md7 [U_UU]: numbers 0, 3, 2 are exactly the U positions -> slots; sdc1 faulty
    assert [(m.device, m.slot, m.role) for m in arrays["md7"].members] == [
        ("sdb1", 0, "in_sync"),
        ("sde1", 3, "in_sync"),
        ("sdd1", 2, "in_sync"),
        ("sdc1", None, "faulty"),
    ]


def test_member_being_rebuilt_is_not_in_sync() -> None:
    """pymdstat mdstat.05: raid5 [6/5] [UUUUU_] during recovery lists sdh1[6] with no flag; md
    prints no flag for a member rebuilding into a role, and [UUUUU_] has no U for it: it is the
    one being rebuilt (sysfs: state spare, slot 5), the others hold their numbered slots."""
    (a,) = mdstat_to_arrays(parse_mdstat(_read(corpus("pymdstat", "mdstat.05"))))
    assert [(m.device, m.slot, m.role) for m in a.members] == [
        ("sdh1", 5, "rebuilding"),
        ("sdg1", 4, "in_sync"),
        ("sdf1", 3, "in_sync"),
        ("sde1", 2, "in_sync"),
        ("sdd1", 1, "in_sync"),
        ("sdc1", 0, "in_sync"),
    ]
    assert a.members[0].state == ("spare",)


def test_numbers_that_are_not_roles_leave_slots_unknown() -> None:
    """pymdstat mdstat.03: raid5 [4/3] [UUU_] sda1[0] sdd1[2] sdb1[1]: slots as numbered.
    A spare that took over keeps its number (md5 ``nvme2n1[3]`` in role 2): numbers {0, 1, 3}
    against U positions {0, 1, 2} give no slot at all rather than a wrong one."""
    (a,) = mdstat_to_arrays(parse_mdstat(_read(corpus("pymdstat", "mdstat.03"))))
    assert [(m.device, m.slot, m.role) for m in a.members] == [
        ("sda1", 0, "in_sync"),
        ("sdd1", 2, "in_sync"),
        ("sdb1", 1, "in_sync"),
    ]
    text = (
        "Personalities : [raid5]\n"
        "md5 : active raid5 nvme2n1[3] nvme1n1[1] nvme0n1[0]\n"
        "      522240 blocks super 1.2 level 5, 64k chunk, algorithm 2 [3/3] [UUU]\n"
    )
    (md5,) = mdstat_to_arrays(parse_mdstat(text))
    assert [(m.slot, m.role) for m in md5.members] == [(None, "in_sync")] * 3


VM = Path(__file__).resolve().parents[1] / "fixtures" / "vm"


@pytest.mark.parametrize(
    "name",
    sorted(
        p.name
        for p in VM.iterdir()
        if (p / "files" / "proc" / "mdstat").is_file()
        and " : active" in (p / "files" / "proc" / "mdstat").read_text()
    ),
)
def test_mdstat_roles_never_contradict_sysfs(name: str) -> None:
    """tests/fixtures/vm (real 6.1 kernel captures): /proc/mdstat and md/dev-*/slot+state read at
    the same moment. What the mdstat fallback derives is either unknown or what sysfs says,
    e.g. raid5-spare-rebuilding (``nvme3n1[3]`` rebuilding into role 0 while ``nvme2n1[4]`` holds
    role 2) or create-raid5-synced (``nvme3n1[4]`` in role 3)."""
    from backends.replay import ReplayBackend

    cap = VM / name
    live = {a.name: a for a in ReplayBackend(cap).probe().arrays}
    fallback = mdstat_to_arrays(parse_mdstat(_read(cap / "files" / "proc" / "mdstat")))
    checked = 0
    for a in fallback:
        truth = {m.device: m for m in live[a.name].members}
        for m in a.members:
            t = truth[m.device]
            assert m.slot is None or m.slot == t.slot, (a.name, m.device)
            assert m.role == "unknown" or m.role == t.role, (a.name, m.device, m.role, t.role)
            checked += 1
    assert checked


def test_model_mapping_write_mostly_replacement_journal() -> None:
    """Flags (W)(R)(J) map to sysfs words; an (R) member is a replacement."""
    text = (
        "Personalities : [raid1] [raid5]\n"
        "md5 : active raid1 sdc1[2](W)(R) sdb1[1](W) sda1[0]\n"
        "      1048512 blocks super 1.2 [2/2] [UU]\n"
        "      [>....................]  recovery =  1.5% (16000/1048512) finish=1.0min speed=16000K/sec\n"
        "\n"
        "md6 : active raid5 sdd1[3](J) sdc1[2] sdb1[1] sda1[0]\n"
        "      2096128 blocks super 1.2 level 5, 512k chunk, algorithm 2 [3/3] [UUU]\n"
        "unused devices: sde1 sdf1\n"
    )
    m = parse_mdstat(text)
    assert m.unused == ("sde1", "sdf1")
    md5, md6 = mdstat_to_arrays(m)
    assert (
        md5.members[0].state == ("replacement", "write_mostly")
        and md5.members[0].role == "replacement"
    )
    assert md5.members[1].write_mostly and md5.members[1].role == "in_sync"
    assert md6.members[0].state == ("journal",) and md6.members[0].role == "journal"
    assert md6.data_disks == 2


@pytest.mark.parametrize(
    "text",
    [
        "Personalities : raid1\n",
        "md0 active raid1 sda[0]\n      100 blocks\n",
        "md0 : active raid1 sda[0]\n      hello\n",
        "Personalities : [raid1]\nmd0 : active raid1 sda[0]\n      100 blocks [1/1] [U]\ngarbage\n",
    ],
)
def test_malformed_rejected(text: str) -> None:
    with pytest.raises(ParseError):
        parse_mdstat(text)
