"""SMART counters -> bytes written and wear used, on the shared corpus.

Corpus folders: ``smartctl_exporter`` (EXPECTED.md: Intel 241/242 are Host_Writes_32MiB; Samsung 177
normalized = remaining, 241 in 512-B LBAs; Micron 5x00 202/246; NVMe data units of 1000×512 B),
``scrutiny`` (EXPECTED.md: "smart-ata-full: 64777770148 LBAs ≈ 33.17 TB written"; wear = 177 normalized),
``netdata`` (EXPECTED.md: WD SA500 241 raw 173833 is not 512-B LBAs; NVMe data_units_written 0).

The expected bytes below were multiplied out by hand from the raw values in the JSON files.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.model.sizes import human_bytes
from app.model.smart import SmartAttribute, SmartReading
from app.model.smart_units import bytes_written, wear_used_percent
from app.parsers.smartctl_json import reading_from_smartctl_json
from tests.corpus import corpus

SAMPLES = Path(__file__).parent.parent / "wear" / "samples"


def _read(folder: str, *parts: str) -> SmartReading:
    return reading_from_smartctl_json(corpus(folder, *parts).read_text(), "sdx")


BYTES = [
    # folder, file, source, unit, raw, bytes (by hand)
    (
        "smartctl_exporter",
        "SAMSUNG_MZ7WD240HAFV-00003_21.json",
        "241 Total_LBAs_Written",
        "LBA×512",
        216456537880,
        110_825_747_394_560,
    ),
    (
        "smartctl_exporter",
        "sat-Intel_730_and_DC_S35x0_3610_3700_Series_SSDs-INTEL_SSDSC2BB016T4-sdf.json",
        "241 Host_Writes_32MiB",
        "32 MiB",
        62594010,
        2_100_306_452_152_320,
    ),
    (
        "smartctl_exporter",
        "sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK3T8TDS-sdc.json",
        "246 Total_LBAs_Written",
        "LBA×512",
        400292112400,
        204_949_561_548_800,
    ),
    (
        "smartctl_exporter",
        "sat-Phison_Driven_SSDs-KINGSTON_SKC400S371T-sda.json",
        "241 Lifetime_Writes_GiB",
        "GiB",
        391741,
        420_628_695_875_584,
    ),
    # Dell S3520: 233/241 are *named* Total_LBAs_Written (quirk -> unknown) but 225 Host_Writes_32MiB
    # carries the same count in a stated unit
    (
        "smartctl_exporter",
        "sat-Dell_Certified_Intel_S3520_Series_SSDs-SSDSCKJB240G7R-sdm.json",
        "225 Host_Writes_32MiB",
        "32 MiB",
        129493,
        4_345_064_062_976,
    ),
    (
        "smartctl_exporter",
        "INTEL_SSDPE2KX080T8_1.json",
        "nvme:data_units_written",
        "512,000 B",
        184919244,
        94_678_652_928_000,
    ),
    (
        "smartctl_exporter",
        "ST3500418AS_11.json",
        "241 Total_LBAs_Written",
        "LBA×512",
        543343366,
        278_191_803_392,
    ),
    (
        "scrutiny",
        "models-testdata/smart-ata-full.json",
        "241 Total_LBAs_Written",
        "LBA×512",
        64777770148,
        33_166_218_315_776,
    ),
    (
        "netdata",
        "smartctl/type-scsi/device-sda.json",
        "scsi:write.gigabytes_processed",
        "10^9 B",
        2811,
        2_811_293_000_000,
    ),
    (
        "netdata",
        "smartctl/type-nvme/device-nvme0.json",
        "nvme:data_units_written",
        "512,000 B",
        0,
        0,
    ),
]


@pytest.mark.parametrize(
    ("folder", "name", "source", "unit", "raw", "expected"), BYTES, ids=[b[1][:40] for b in BYTES]
)
def test_bytes_written_by_hand(
    folder: str, name: str, source: str, unit: str, raw: int, expected: int
) -> None:
    c = bytes_written(_read(folder, *name.split("/")))
    assert c is not None
    assert (c.source, c.unit, c.raw, c.bytes) == (source, unit, raw, expected)


def test_scrutiny_ata_full_is_33_tb() -> None:
    """scrutiny EXPECTED.md: 64777770148 LBAs ≈ 33.17 TB written."""
    c = bytes_written(_read("scrutiny", "models-testdata", "smart-ata-full.json"))
    assert c is not None and c.bytes is not None
    assert round(c.bytes / 1e12, 2) == 33.17
    assert human_bytes(c.bytes, decimal=True) == "33.2 TB"


def test_wd_ssd_241_not_guessed() -> None:
    """netdata device-ssd-sdc.json: WD SA500 241 'Total_LBAs_Written' raw 173833 is not in LBAs
    (EXPECTED.md hint) -> shown raw, bytes unknown, with the reason."""
    c = bytes_written(_read("netdata", "smartctl", "type-sat", "device-ssd-sdc.json"))
    assert c is not None and c.bytes is None and c.raw == 173833 and c.note


WEAR = [
    (
        "smartctl_exporter",
        "sat-Intel_730_and_DC_S35x0_3610_3700_Series_SSDs-INTEL_SSDSC2BB016T4-sdf.json",
        85,
        "233 Media_Wearout_Indicator",
    ),
    ("smartctl_exporter", "SAMSUNG_MZ7WD240HAFV-00003_21.json", 9, "177 Wear_Leveling_Count"),
    ("smartctl_exporter", "SAMSUNG_MZ7WD240HAFV-00003_22.json", 10, "177 Wear_Leveling_Count"),
    (
        "smartctl_exporter",
        "sat-Phison_Driven_SSDs-KINGSTON_SKC400S371T-sda.json",
        26,
        "231 SSD_Life_Left",
    ),
    (
        "smartctl_exporter",
        "sat-Micron_5100_Pro___52x0___5300_SSDs-Micron_5300_MTFDDAK3T8TDS-sdc.json",
        0,
        "202 Percent_Lifetime_Remain",
    ),
    ("smartctl_exporter", "nvme-null-INTEL_SSDPE2KX010T8-nvme1.json", 73, "nvme:percentage_used"),
    ("scrutiny", "models-testdata/smart-ata-full.json", 19, "177 Wear_Leveling_Count"),
    ("scrutiny", "models-testdata/smart-ata-failed-scrutiny.json", 2, "177 Wear_Leveling_Count"),
]


@pytest.mark.parametrize(("folder", "name", "used", "source"), WEAR, ids=[w[1][:40] for w in WEAR])
def test_wear_used(folder: str, name: str, used: int, source: str) -> None:
    w = wear_used_percent(_read(folder, *name.split("/")))
    assert w is not None and (w.used_percent, w.source) == (used, source)


def test_samsung_two_snapshots_delta() -> None:
    """smartctl_exporter EXPECTED.md: MZ7WD240 _21/_22 are two snapshots of one model: 241 raw
    216456537880 -> 218759569150 and 177 normalized 91 -> 90: 1.18 TB written, one wear point."""
    a = _read("smartctl_exporter", "SAMSUNG_MZ7WD240HAFV-00003_21.json")
    b = _read("smartctl_exporter", "SAMSUNG_MZ7WD240HAFV-00003_22.json")
    ca, cb = bytes_written(a), bytes_written(b)
    assert ca and cb and ca.bytes is not None and cb.bytes is not None
    assert cb.bytes - ca.bytes == (218759569150 - 216456537880) * 512 == 1_179_152_010_240
    wa, wb = wear_used_percent(a), wear_used_percent(b)
    assert wa and wb and wb.used_percent - wa.used_percent == 1


_WRITE_NAMES = {"Total_LBAs_Written", "Host_Writes_32MiB", "Lifetime_Writes_GiB"}


def _has_write_counter(doc: dict) -> bool:  # type: ignore[type-arg]
    if "data_units_written" in doc.get("nvme_smart_health_information_log", {}):
        return True
    if "gigabytes_processed" in doc.get("scsi_error_counter_log", {}).get("write", {}):
        return True
    return any(
        a["name"] in _WRITE_NAMES for a in doc.get("ata_smart_attributes", {}).get("table", [])
    )


def test_every_exporter_file_yields_bytes_where_reported() -> None:
    """smartctl_exporter: all 168 files; whenever the JSON has a write counter with a stated unit
    (NVMe data units, SCSI GB processed, an ATA attribute named as such), bytes are known; files
    without any write counter (most HDDs) give None; nothing raises."""
    with_bytes = 0
    for f in sorted(corpus("smartctl_exporter").glob("*.json")):
        doc = json.loads(f.read_text())
        r = reading_from_smartctl_json(doc, "sdx")
        c = bytes_written(r)
        wear_used_percent(r)
        if _has_write_counter(doc):
            assert c is not None and c.bytes is not None and c.bytes >= 0, f.name
            with_bytes += 1
        else:
            assert c is None, f.name
    # EXPECTED.md's table: 55 NVMe + 5 SCSI + 47 ATA rows listing 241 as Total_LBAs_Written /
    # Host_Writes_32MiB / Lifetime_Writes_GiB + 8 Micron rows with 246 Total_LBAs_Written
    assert with_bytes == 55 + 5 + 47 + 8


def test_scrutiny_and_netdata_never_raise() -> None:
    """scrutiny and netdata: every JSON (device reports, scan and info outputs) goes through both."""
    files = list(corpus("scrutiny").rglob("*.json")) + list(
        corpus("netdata", "smartctl").rglob("*.json")
    )
    assert len(files) == 24 + 8
    for f in files:
        r = reading_from_smartctl_json(f.read_text(), "sdx")
        bytes_written(r)
        wear_used_percent(r)


def test_qemu_nvme_64mib_is_132_data_units() -> None:
    """Our VM capture: dd 64 MiB (67,108,864 B = 131,072 sectors) with O_DIRECT to QEMU's NVMe.
    QEMU counts 512-byte units and reports ceil(units / 1000): 131.072 -> 132 data units, i.e.
    67,584,000 B; 128 write commands of 512 KiB (MDTS 128 pages)."""
    d = SAMPLES / "qemu-nvme"
    before = bytes_written(
        reading_from_smartctl_json((d / "nvme-before.json").read_text(), "nvme0n1")
    )
    after = bytes_written(
        reading_from_smartctl_json((d / "nvme-after.json").read_text(), "nvme0n1")
    )
    assert before and after and before.bytes == 0 and after.bytes is not None
    written = 64 * 1024 * 1024
    assert after.bytes - before.bytes == 132 * 512_000
    assert 0 <= after.bytes - written < 512_000  # within one data unit, rounded up


def test_unknown_units_are_not_guessed() -> None:
    r = SmartReading(
        device="sda",
        available=True,
        attributes=(
            SmartAttribute(241, "Host_Writes", value=100, raw=1234),
            SmartAttribute(249, "NAND_Writes_1GiB", value=100, raw=7),
        ),
    )
    c = bytes_written(r)
    # a host counter with unknown unit beats a NAND counter? No: known bytes win within a kind,
    # host always wins over NAND -> the host counter, raw only
    assert c is not None and c.bytes is None and c.raw == 1234 and c.unit == "unknown"
    only_nand = SmartReading(device="sda", available=True, attributes=(r.attributes[1],))
    n = bytes_written(only_nand)
    assert n is not None and n.kind == "nand" and n.bytes == 7 * 1024**3
    gb = SmartReading(
        device="sda", available=True, attributes=(SmartAttribute(241, "Total_Writes_GB", raw=5),)
    )
    g = bytes_written(gb)
    assert g is not None and g.bytes is None and g.raw == 5
    mib = SmartReading(
        device="sda", available=True, attributes=(SmartAttribute(241, "Host_Writes_MiB", raw=3),)
    )
    m = bytes_written(mib)
    assert m is not None and m.bytes == 3 * 1024**2


def test_4k_sector_lbas() -> None:
    r = SmartReading(
        device="sda",
        available=True,
        logical_sector=4096,
        attributes=(SmartAttribute(241, "Total_LBAs_Written", raw=10),),
    )
    c = bytes_written(r)
    assert c is not None and c.bytes == 40960 and c.unit == "LBA×4096"


# ---- bytes written against the model's rated TBW ------------------------------------------------


def test_tbw_used_from_host_lbas_and_the_models_rating() -> None:
    """Samsung's warranty table rates the 850 EVO 500 GB (article 000's drives) 150 TBW."""
    from app.model.smart_units import endurance_used_percent, tbw_used

    r = SmartReading(
        "sda",
        True,
        model="Samsung SSD 850 EVO 500GB",
        attributes=(
            SmartAttribute(177, "Wear_Leveling_Count", 36, 36, 0, 384),
            SmartAttribute(241, "Total_LBAs_Written", 99, 99, 0, 412 * 10**12 // 512),
        ),
    )
    used = tbw_used(r)
    assert used is not None and used.rating.tbw == 150 and used.counter == "241 Total_LBAs_Written"
    assert used.used_percent == 275
    assert used.text == "374.7 TiB written of 150 TBW rated (136.4 TiB) = 275%"  # IEC, issue 39
    assert endurance_used_percent(r) == 275  # larger than Wear_Leveling_Count's 64
    # unknown model: the wear attribute alone, nothing invented
    other = SmartReading("sdb", True, model="Samsung SSD 840 Series", attributes=r.attributes)
    assert tbw_used(other) is None and endurance_used_percent(other) == 64
    # NAND writes are not host writes: no TBW figure from them
    nand = SmartReading(
        "sdc",
        True,
        model="Samsung SSD 850 EVO 500GB",
        attributes=(SmartAttribute(249, "NAND_Writes_1GiB", 100, 100, 0, 5000),),
    )
    assert tbw_used(nand) is None


def test_nvme_percentage_used_is_the_endurance_figure() -> None:
    from app.model.smart_units import endurance_used_percent, tbw_used

    r = SmartReading(
        "nvme0n1",
        True,
        model="Samsung SSD 970 EVO Plus 250GB",
        nvme={"data_units_written": 300 * 10**12 // 512_000, "percentage_used": 7},
    )
    used = tbw_used(r)
    assert used is not None and used.used_percent == 200  # reported in JSON, not the metric
    assert endurance_used_percent(r) == 7
