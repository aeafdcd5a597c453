"""The rate tables of issue 41, each figure pinned to the source its row cites: the datasheet URE
and workload ratings (app.model.drive_ratings) and Scrutiny's Backblaze-derived failure-rate
bins (app.model.failure_bins), replayed over a Scrutiny-style attribute table from the corpus
(folder ``scrutiny``: EXPECTED.md lists smart-fail2.json's 5 Reallocated_Sector_Ct raw=1975 and
197 Current_Pending_Sector raw=8, smart-ata.json's WD140EDFZ with 5/197/198 all 0)."""

from __future__ import annotations

import re

import pytest

from app.model import drive_ratings, failure_bins
from app.model.drive_ratings import CONSUMER, ENTERPRISE, NEARLINE, drive_rating
from app.model.failure_bins import bin_for, compared_value, evidence
from app.model.smart import SmartAttribute, SmartReading
from app.parsers.smartctl_json import reading_from_smartctl_json
from tests.corpus import corpus


@pytest.mark.parametrize(
    ("model", "family", "ure", "workload"),
    [
        # the issue's own figures: WD Red 180, Red Pro 300, nearline 550; WD Red 1 per 10^14
        ("WDC WD10EFRX-68FYTN0", "WD Red", CONSUMER, 180),
        ("WDC WD40EFAX-68JH4N0", "WD Red", CONSUMER, 180),
        ("WDC WD80EFZX-68UW8N0", "WD Red", CONSUMER, 180),
        ("WDC WD4003FFBX-68MU3N0", "WD Red Pro", None, 300),
        ("WDC WD201KFGX-68BKJN0", "WD Red Pro", None, 300),  # URE not in the cited sheet: unknown
        ("WDC WD4003FRYZ-01F0DB0", "WD Gold", None, 550),
        ("WDC WUH721818ALE6L4", "WD Ultrastar DC", NEARLINE, 550),
        ("ST4000VN008-2DR166", "Seagate IronWolf", CONSUMER, 180),
        ("ST12000NE0008-1ZF101", "Seagate IronWolf Pro", NEARLINE, 300),
        ("ST16000NM001G-2KK103", "Seagate Exos X", NEARLINE, 550),
        ("ST2400MM0129", "Seagate Exos 10E", ENTERPRISE, None),
        ("ST2000DM008-2FR102", "Seagate BarraCuda", CONSUMER, 55),
        ("Samsung SSD 850 EVO 500GB", None, None, None),  # not a hard disk row: unknown
        ("Hitachi HDS721050DLE630", None, None, None),
        (None, None, None, None),
    ],
)
def test_each_model_gets_its_rows_figures_or_unknown(
    model: str | None, family: str | None, ure: float | None, workload: int | None
) -> None:
    r = drive_rating(model)
    if family is None:
        assert r is None
        return
    assert r is not None
    assert (r.family, r.ure_per_bit, r.workload_tb_per_year) == (family, ure, workload)


_EXP = {CONSUMER: "14", NEARLINE: "15", ENTERPRISE: "16"}


@pytest.mark.parametrize("fam", drive_ratings.FAMILIES, ids=lambda f: f.name)
def test_every_rows_figures_are_the_ones_its_source_states(fam: drive_ratings._Family) -> None:
    """A row's URE exponent and workload appear in the source it cites, and a figure the source
    does not state is None (unknown), never a neighbour's."""
    src = fam.source
    if fam.ure is None:
        assert "per bits read" not in src
    else:
        assert re.search(rf"10(\^|E){_EXP[fam.ure]}\b", src), src
    if fam.workload is None:
        assert "TB/yr" not in src
    else:
        assert f"{fam.workload} TB/yr" in src


def test_the_classes_are_the_issues() -> None:
    assert (CONSUMER, NEARLINE, ENTERPRISE) == (1e-14, 1e-15, 1e-16)
    assert drive_rating("WDC WD10EFRX-68FYTN0").ure_text == "consumer/NAS class: 1 per 10^14 bits"  # type: ignore[union-attr]
    assert drive_rating("WDC WD201KFGX-68BKJN0").ure_text == "unknown"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("attr", "value", "low", "high", "afr"),
    [
        # Scrutiny ata_attribute_metadata.go, ObservedThresholds, as published
        (5, 0, 0, 0, 0.025169175350572493),
        (5, 4, 1, 4, 0.027432608477803388),  # low < 4 <= high: (1, 4], not (4, 16]
        (5, 1816, 1100, 4500, 1.5028253400346423),
        (5, 70000, 17000, 70000, 1.7755385684503124),
        (187, 1, 1, 1, 0.33877621175661743),  # low == high == value wins over (1, 3]
        (187, 2, 1, 3, 0.24064820598237213),
        (188, 100, 0, 100, 0.024893587674442153),
        (188, 101, 100, 13000000000, 0.10044174089362015),
        (197, 24, 16, 40, 0.9564879341127684),
        (198, 1, 0, 2, None),  # checked below: (1, 2] holds 2, not 1
        (198, 2, 1, 2, 0.8135764944275583),
        (199, 1, 0, 1, 0.04068379316116366),
        (199, 23, 16, 35, 0.20878219917249793),
    ],
)
def test_bins_are_scrutinys(attr: int, value: int, low: int, high: int, afr: float | None) -> None:
    b = bin_for(attr, value)
    if afr is None:
        assert b is None or (b[0], b[1]) != (low, high)
        return
    assert b is not None and (b[0], b[1], b[2]) == (low, high, afr)


def test_values_no_bin_holds_are_unknown() -> None:
    """Scrutiny's rule leaves some values out: 199 = 0 (its first bin is (0, 1]), 198 = 1
    (bins (0,0] then (1,2]), anything past the last bin."""
    assert bin_for(199, 0) is None
    assert bin_for(198, 1) is None
    assert bin_for(5, 70001) is None
    assert bin_for(9, 100) is None  # not a binned attribute


def test_188_is_compared_as_scrutiny_transforms_seagates_raw_string() -> None:
    """Scrutiny issue #522: Seagate's "0 0 5" counts 5; a decreasing triple keeps the raw."""
    a = SmartAttribute(188, "Command_Timeout", 100, 100, 0, 21475164165, "0 0 5")
    assert compared_value(a) == 5
    b = SmartAttribute(188, "Command_Timeout", 100, 100, 0, 4295032833, "1 1 0")
    assert compared_value(b) == 4295032833


def test_a_scrutiny_attribute_table_replayed_through_the_bins() -> None:
    """smart-fail2.json (Hitachi HDS721050DLE630, SMART failed): 5 = 1975 falls in (1100,
    4500], 197 = 8 in (6, 16], 198 = 0 in its 0 bin; smart-ata.json (WD140EDFZ): all 0."""
    failed = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-fail2.json").read_text(), "sdx"
    )
    ev = {e.attribute: e for e in evidence(failed)}
    assert (ev[5].value, ev[5].low, ev[5].high, ev[5].afr) == (1975, 1100, 4500, 1.5028253400346423)
    assert (ev[197].value, ev[197].low, ev[197].high) == (8, 6, 16)
    assert ev[197].afr == 0.6108100007493069
    assert (ev[198].value, ev[198].afr) == (0, 0.028675322159886437)
    assert ev[5].bin_text == "bin 1101–4500" and ev[5].afr_text == "150.3 %/yr (126.8–176.8)"
    assert "ObservedThresholds of attribute 5" in ev[5].source
    healthy = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-ata.json").read_text(), "sdx"
    )
    hv = {e.attribute: e for e in evidence(healthy)}
    assert {k: (e.value, e.low) for k, e in hv.items() if k in (5, 197, 198)} == {
        5: (0, 0),
        197: (0, 0),
        198: (0, 0),
    }


def test_the_bins_rise_where_backblaze_saw_failures_rise() -> None:
    """A sanity check of the copied table: each attribute's zero bin is its lowest rate."""
    for attr, bins in failure_bins.BINS.items():
        first = bins[0][2]
        assert all(b[2] >= first * 0.9 for b in bins), attr


def test_an_ssd_reading_without_binned_attributes_has_no_evidence() -> None:
    r = SmartReading("nvme0n1", True, protocol="NVMe", nvme={"media_errors": 0})
    assert evidence(r) == ()
