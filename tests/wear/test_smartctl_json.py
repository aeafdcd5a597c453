"""smartctl -j -a -> SmartReading, on the shared corpus and on our own captures.

Corpus folders: ``smartctl_exporter`` (168 real device reports; the helper's per-file table in its
EXPECTED.md), ``scrutiny`` (upstream assertions in EXPECTED.md), ``netdata`` (per-attribute
expectations transcribed from netdata's collector_test.go in EXPECTED.md).
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from app.parsers.smartctl_json import leading_int, reading_from_smartctl_json
from tests.corpus import corpus

SAMPLES = Path(__file__).parent / "samples"


def _exporter_rows() -> dict[str, list[str]]:
    rows: dict[str, list[str]] = {}
    for line in corpus("smartctl_exporter", "EXPECTED.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) >= 8 and cells[0].endswith(".json"):
            rows[cells[0]] = cells
    return rows


def test_every_exporter_file_parses_and_matches_expected_table() -> None:
    """smartctl_exporter: each JSON is in EXPECTED.md's table; protocol, model, smart passed,
    exit status, number of ATA attributes, temperature and power-on hours agree with it."""
    rows = _exporter_rows()
    files = sorted(corpus("smartctl_exporter").glob("*.json"))
    assert len(files) == 168
    assert set(rows) == {f.name for f in files}
    for f in files:
        r = reading_from_smartctl_json(f.read_text(), "sdx")
        _file, protocol, model, passed, exit_s, nattrs, temp, poh = rows[f.name][:8]
        assert r.protocol == protocol, f.name
        assert r.model == model, f.name
        assert r.health == {"True": "PASSED", "False": "FAILED", "None": None}[passed], f.name
        assert r.exit_status == int(exit_s), f.name
        assert len(r.attributes) == (0 if nattrs == "None" else int(nattrs)), f.name
        assert r.temperature_c == (None if temp in ("None", "0") else int(temp)), f.name
        assert r.power_on_hours == (None if poh == "None" else int(poh)), f.name
        assert r.available, f.name


def test_exporter_failing_nvme_keeps_data_and_exit_bits() -> None:
    """smartctl_exporter: nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json is FAILING (passed=false,
    critical_warning 16, exit status 8 = bit 3, a warning): data are kept."""
    r = reading_from_smartctl_json(
        corpus("smartctl_exporter", "nvme-null-SAMSUNG_MZWLL3T2HAJQ-00005-nvme0.json").read_text(),
        "nvme0n1",
    )
    assert r.available and r.health == "FAILED" and r.exit_status == 8
    assert r.nvme["critical_warning"] == 16
    assert r.nvme["data_units_written"] == 147556750


def test_exporter_packed_raw_values() -> None:
    """smartctl_exporter EXPECTED.md: 194 raw.value 176094511130 with raw.string '26 (Min/Max 13/41)'."""
    r = reading_from_smartctl_json(
        corpus("smartctl_exporter", "HGST_HUS724020ALE640_28.json").read_text(), "sda"
    )
    a = r.attribute(194)
    assert a is not None and a.raw == 176094511130 and a.raw_string == "26 (Min/Max 13/41)"
    assert leading_int(a.raw_string) == 26
    assert r.temperature_c == 26


def test_scrutiny_upstream_assertions() -> None:
    """scrutiny EXPECTED.md (smart_test.go / detect_test.go)."""
    ata = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-ata.json").read_text(), "sda"
    )
    assert ata.health == "PASSED" and len(ata.attributes) == 18
    t = ata.attribute(194)
    assert t is not None and t.raw == 163210330144 and t.raw & 0xFF == 32
    assert ata.temperature_c == 32

    fail = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-fail.json").read_text(), "sda"
    )
    assert fail.attributes == () and not fail.available and fail.exit_status == 2
    assert fail.reason is not None and "Open failed" in fail.reason

    fail2 = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-fail2.json").read_text(), "sda"
    )
    assert fail2.health == "FAILED" and len(fail2.attributes) == 17
    a5 = fail2.attribute(5)
    assert a5 is not None and a5.value == 1 and a5.thresh == 5

    nvme = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-nvme.json").read_text(), "nvme0n1"
    )
    assert nvme.health == "PASSED"
    assert nvme.nvme["host_reads"] == 111303174 and nvme.nvme["host_writes"] == 83170961

    failed_scr = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-ata-failed-scrutiny.json").read_text(), "sda"
    )
    assert len(failed_scr.attributes) == 14 and failed_scr.health == "PASSED"

    scsi = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-scsi.json").read_text(), "sda"
    )
    assert scsi.health == "PASSED" and scsi.protocol == "SCSI"

    # "use the leading number of raw.string (this file has no power_on_time block)"
    sat = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-sat.json").read_text(), "sda"
    )
    assert sat.power_on_hours == 2725

    # a RAID volume behind a controller: exit status 4 and no SMART data -> unavailable
    raid = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-raid.json").read_text(), "sdb"
    )
    assert not raid.available and raid.exit_status == 4 and raid.reason


def test_scrutiny_megaraid_exit_4_keeps_table() -> None:
    """scrutiny smart-megaraid0.json: exit status 4 (bit 2) with a full 20-attribute table."""
    r = reading_from_smartctl_json(
        corpus("scrutiny", "models-testdata", "smart-megaraid0.json").read_text(), "sda"
    )
    assert r.available and len(r.attributes) == 20 and r.exit_status == 4
    assert r.reason is not None and "exit status 4" in r.reason


NETDATA_HDD = {
    # id: (normalized, raw.value, decoded) -- netdata EXPECTED.md, type-sat/device-hdd-sda.json
    1: (100, 0, 0),
    2: (148, 48, 48),
    3: (86, 25788088601, 281),
    4: (100, 12, 12),
    5: (100, 0, 0),
    7: (100, 0, 0),
    8: (140, 15, 15),
    9: (99, 8244, 8244),
    10: (100, 0, 0),
    12: (100, 12, 12),
    22: (100, 100, 100),
    192: (100, 360, 360),
    193: (100, 360, 360),
    194: (43, 240519741489, 49),
    196: (100, 0, 0),
    197: (100, 0, 0),
    198: (100, 0, 0),
    199: (100, 0, 0),
}


def test_netdata_hdd_attributes() -> None:
    """netdata type-sat/device-hdd-sda.json: every attribute's normalized/raw/decoded, passed,
    temperature 49, power-on 29678400 s = 8244 h."""
    r = reading_from_smartctl_json(
        corpus("netdata", "smartctl", "type-sat", "device-hdd-sda.json").read_text(), "sda"
    )
    assert r.health == "PASSED" and r.temperature_c == 49 and r.power_on_hours * 3600 == 29678400
    assert {a.id for a in r.attributes} == set(NETDATA_HDD)
    for aid, (norm, raw, decoded) in NETDATA_HDD.items():
        a = r.attribute(aid)
        assert a is not None
        assert (a.value, a.raw, leading_int(a.raw_string)) == (norm, raw, decoded), aid


def test_netdata_ssd_and_nvme_and_scsi() -> None:
    """netdata type-sat/device-ssd-sdc.json, type-nvme/device-nvme{0,1}.json, type-scsi/device-sda.json."""
    ssd = reading_from_smartctl_json(
        corpus("netdata", "smartctl", "type-sat", "device-ssd-sdc.json").read_text(), "sdc"
    )
    assert ssd.temperature_c == 27 and ssd.power_on_hours == 8244
    for aid, norm, raw in [
        (194, 73, 184684970011),
        (230, 4, 4694419309637),
        (233, 100, 65406),
        (241, 253, 173833),
        (242, 253, 76778),
    ]:
        a = ssd.attribute(aid)
        assert a is not None and (a.value, a.raw) == (norm, raw), aid
    a244 = ssd.attribute(244)
    assert a244 is not None and a244.name == "Unknown_Attribute" and a244.raw == 0

    for name, temp, hours, duw in [
        ("device-nvme0.json", 39, 3113, 0),
        ("device-nvme1.json", 36, 4733, 0),
    ]:
        n = reading_from_smartctl_json(
            corpus("netdata", "smartctl", "type-nvme", name).read_text(), "nvme0n1"
        )
        assert n.available and n.health == "PASSED" and n.protocol == "NVMe"
        assert n.temperature_c == temp and n.power_on_hours == hours
        assert n.nvme["data_units_written"] == duw and n.nvme["percentage_used"] == 0
        assert n.rotational is False

    scsi = reading_from_smartctl_json(
        corpus("netdata", "smartctl", "type-scsi", "device-sda.json").read_text(), "sda"
    )
    assert scsi.health == "PASSED" and scsi.temperature_c == 34 and scsi.power_on_hours == 1641
    assert scsi.scsi_gigabytes_written == "2811.293" and scsi.rotational is True


def test_qemu_nvme_capture() -> None:
    """Our capture: smartctl 7.3 -j -a on QEMU's emulated NVMe before/after writing 64 MiB."""
    d = SAMPLES / "qemu-nvme"
    before = reading_from_smartctl_json((d / "nvme-before.json").read_text(), "nvme0n1", now=1.0)
    after = reading_from_smartctl_json((d / "nvme-after.json").read_text(), "nvme0n1", now=2.0)
    assert before.available and after.available
    assert before.serial == after.serial == "N0" and after.model == "QEMU NVMe Ctrl"
    assert after.capacity_bytes == 256 * 1024 * 1024 and after.logical_sector == 512
    assert before.nvme["data_units_written"] == 0
    assert after.nvme["data_units_written"] == 132
    assert after.nvme["host_writes"] - before.nvme["host_writes"] == 128
    assert after.taken_at == 2.0


@pytest.mark.parametrize(
    "path", ["qemu-nvme/virtio.json", "host/file.json", "host/loop.json"], ids=str
)
def test_no_smart_devices(path: str) -> None:
    """Our captures: smartctl on a virtio disk (VM), a plain file and a loop device (host):
    exit status 1, 'Unable to detect device type' -> unavailable with that reason."""
    r = reading_from_smartctl_json((SAMPLES / path).read_text(), "vda")
    assert not r.available and r.exit_status == 1
    assert r.reason is not None and "Unable to detect device type" in r.reason


@pytest.mark.parametrize(
    "junk",
    [
        "",
        "not json",
        "[1, 2]",
        '{"smartctl": "x"}',
        b"\xff\xfe",
        '{"ata_smart_attributes": {"table": [{"id": "x"}, 5, {"id": 9, "raw": {"value": true}}]}}',
    ],
)
def test_garbage_never_raises(junk: str | bytes) -> None:
    r = reading_from_smartctl_json(junk, "sdz")
    assert r.device == "sdz"
    assert not r.available or r.attributes
    assert r.available or r.reason


def test_dict_input_equals_text_input() -> None:
    text = corpus("scrutiny", "models-testdata", "smart-ata-full.json").read_text()
    assert reading_from_smartctl_json(text, "sda") == reading_from_smartctl_json(
        json.loads(text), "sda"
    )


def test_exit_bits_documented() -> None:
    """The exit-status rule on a real document with the bits changed."""
    doc = json.loads(corpus("scrutiny", "models-testdata", "smart-ata-full.json").read_text())
    for status, available in [(0, True), (64, True), (8, True), (4, True), (2, False), (1, False)]:
        doc["smartctl"]["exit_status"] = status
        r = reading_from_smartctl_json(doc, "sda")
        assert r.available is available, status
        assert r.exit_status == status
    assert re.search(
        r"exit status 2",
        reading_from_smartctl_json(doc | {"smartctl": {"exit_status": 2}}, "sda").reason or "",
    )
