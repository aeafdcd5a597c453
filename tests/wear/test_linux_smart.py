"""backends.linux.smart.read_smart: pySMART with its smartctl calls served from real captures.

Captures (tests/wear/samples/README.md): ``vm-pysmart/`` recorded every argv pySMART ran inside a
VM (QEMU NVMe, QEMU AHCI disk, virtio disk) with stdout and return code; ``qemu-nvme/`` and ``host/``
hold smartctl text and JSON; the corpus folder ``netdata`` supplies a SCSI JSON report.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path

from app.backend import CommandResult
from app.model.smart_units import bytes_written
from backends.linux.smart import NOT_INSTALLED, read_smart
from tests.corpus import corpus

SAMPLES = Path(__file__).parent / "samples"


class FakeRun:
    """Serves recorded outputs by argv; anything else is "not recorded" (rc 1) and remembered."""

    def __init__(self, table: Mapping[tuple[str, ...], tuple[int, str]]) -> None:
        self.table = dict(table)
        self.calls: list[tuple[str, ...]] = []
        self.unknown: list[tuple[str, ...]] = []

    def __call__(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        key = tuple(argv)
        self.calls.append(key)
        if key not in self.table:
            self.unknown.append(key)
            return CommandResult(key, 1, "", "not recorded")
        rc, out = self.table[key]
        return CommandResult(key, rc, out, "")


def _recorded(name: str, dev: str) -> FakeRun:
    rec = json.loads((SAMPLES / "vm-pysmart" / name).read_text())[dev]
    return FakeRun({tuple(c["argv"]): (c["returncode"], c["stdout"]) for c in rec["calls"]})


def test_nvme_through_pysmart_counts_the_64mib_write() -> None:
    """vm-pysmart: QEMU NVMe before/after dd 64 MiB O_DIRECT: data units 0 -> 132 (QEMU rounds
    131.072 thousand-sector units up), host write commands 0 -> 128 (512 KiB each)."""
    run_b = _recorded("rec-before.json", "/dev/nvme0n1")
    run_a = _recorded("rec-after.json", "/dev/nvme0n1")
    b = read_smart(run_b, "nvme0n1", now=1.0)
    a = read_smart(run_a, "nvme0n1", now=2.0)
    assert run_b.unknown == [] and run_a.unknown == []
    # pySMART ran what the recording holds, no JSON fallback, and no `-d test` for an NVMe
    # namespace: its type is known from its name
    assert run_a.calls == [("smartctl", "-d", "nvme", "--all", "/dev/nvme0n1")]
    assert a.source == "pySMART" and a.available and a.protocol == "NVMe"
    assert (a.model, a.serial, a.health) == ("QEMU NVMe Ctrl", "N0", "PASSED")
    assert a.capacity_bytes == 268_435_456 and a.logical_sector == 512 and a.rotational is False
    assert b.nvme["data_units_written"] == 0 and a.nvme["data_units_written"] == 132
    assert a.nvme["host_writes"] - b.nvme["host_writes"] == 128
    assert a.nvme["percentage_used"] == 0 and a.temperature_c == 50 and a.power_on_hours == 0
    cb, ca = bytes_written(b), bytes_written(a)
    assert cb and ca and ca.bytes is not None and cb.bytes is not None
    assert ca.bytes - cb.bytes == 132 * 512_000 == 67_584_000
    assert ca.bytes - cb.bytes - 64 * 1024 * 1024 == 475_136  # < one data unit of rounding
    assert a.taken_at == 2.0


def test_pysmart_and_json_agree_on_nvme() -> None:
    """The same moment read both ways (pySMART text and smartctl -j) gives the same health log."""
    rec = json.loads((SAMPLES / "vm-pysmart" / "rec-after.json").read_text())["/dev/nvme0n1"]
    via_pysmart = read_smart(_recorded("rec-after.json", "/dev/nvme0n1"), "nvme0n1")
    jcall = next(c for c in rec["calls"] if "-j" in c["argv"])
    only_json = FakeRun(
        {("smartctl", "-j", "-a", "/dev/nvme0n1"): (jcall["returncode"], jcall["stdout"])}
    )
    via_json = read_smart(only_json, "nvme0n1")  # -d test not recorded -> pySMART finds nothing
    assert via_json.source == "smartctl -j"
    for k in (
        "data_units_written",
        "data_units_read",
        "host_writes",
        "host_reads",
        "percentage_used",
        "critical_warning",
        "power_on_hours",
        "unsafe_shutdowns",
        "media_errors",
    ):
        assert via_pysmart.nvme[k] == via_json.nvme[k], k
    assert (
        via_pysmart.serial,
        via_pysmart.model,
        via_pysmart.capacity_bytes,
        via_pysmart.health,
    ) == (via_json.serial, via_json.model, via_json.capacity_bytes, via_json.health)


def test_ata_through_pysmart() -> None:
    """vm-pysmart: QEMU's AHCI disk ("QEMU HARDDISK", smartctl type sat): 7 attributes, no write
    counter (bytes_written None, never guessed), Power_On_Hours 1, 190 raw '31 (Min/Max 31/31)'."""
    run = _recorded("rec-after.json", "/dev/sda")
    r = read_smart(run, "sda", logical_sector=512)
    assert run.unknown == []
    assert r.source == "pySMART" and r.available and r.protocol == "ATA"
    assert (r.model, r.serial, r.health) == ("QEMU HARDDISK", "S0", "PASSED")
    assert [a.id for a in r.attributes] == [1, 3, 4, 5, 9, 12, 190]
    a190 = r.attribute(190)
    assert a190 is not None and a190.raw == 31 and a190.raw_string == "31 (Min/Max 31/31)"
    assert (a190.value, a190.worst, a190.thresh) == (69, 69, 50)
    assert r.power_on_hours == 1 and r.capacity_bytes == 134_217_728
    assert bytes_written(r) is None
    # the JSON of the same moment has the same attribute values
    rec = json.loads((SAMPLES / "vm-pysmart" / "rec-after.json").read_text())["/dev/sda"]
    jcall = next(c for c in rec["calls"] if "-j" in c["argv"])
    via_json = read_smart(
        FakeRun({("smartctl", "-j", "-a", "/dev/sda"): (jcall["returncode"], jcall["stdout"])}),
        "sda",
    )
    assert [(a.id, a.value, a.worst, a.thresh) for a in via_json.attributes] == [
        (a.id, a.value, a.worst, a.thresh) for a in r.attributes
    ]


def test_virtio_has_no_smart() -> None:
    """vm-pysmart: /dev/vda: '-d test' exits 1 ('Unable to detect device type'); the JSON fallback
    gives the reason."""
    run = _recorded("rec-before.json", "/dev/vda")
    r = read_smart(run, "vda")
    assert not r.available and r.reason and "Unable to detect device type" in r.reason
    assert r.exit_status == 1 and run.unknown == []


def test_plain_file_on_host() -> None:
    """host/: smartctl on a file (this host's smartctl 7.3): exit 1 in text and JSON."""
    h = SAMPLES / "host"
    run = FakeRun(
        {
            ("smartctl", "-d", "test", "/dev/blob"): (1, (h / "file-d-test.txt").read_text()),
            ("smartctl", "-j", "-a", "/dev/blob"): (1, (h / "file.json").read_text()),
        }
    )
    r = read_smart(run, "blob")
    assert not r.available and r.reason and "Unable to detect device type" in r.reason


def test_smartctl_missing() -> None:
    def run(argv: Sequence[str], **_: object) -> CommandResult:
        return CommandResult(tuple(argv), 127, "", "smartctl: not found")

    r = read_smart(run, "sda")
    assert not r.available and r.reason == NOT_INSTALLED


def test_scsi_falls_back_to_json() -> None:
    """netdata type-scsi/device-sda.json served as the -j answer: pySMART's SCSI path has no write
    counter, so the JSON parser gives the 2811.293 GB processed."""
    run = FakeRun(
        {
            ("smartctl", "-d", "test", "/dev/sdq"): (
                0,
                "/dev/sdq: Device of type 'scsi' [SCSI] detected\n/dev/sdq: Device of type 'scsi' [SCSI] opened\n",
            ),
            ("smartctl", "-j", "-a", "/dev/sdq"): (
                0,
                corpus("netdata", "smartctl", "type-scsi", "device-sda.json").read_text(),
            ),
        }
    )
    r = read_smart(run, "sdq")
    assert r.source == "smartctl -j" and r.available and r.protocol == "SCSI"
    c = bytes_written(r)
    assert c is not None and c.bytes == 2_811_293_000_000


def test_error_bits_on_all() -> None:
    """The recorded QEMU HARDDISK output with exit status 2 (open failed) is not trusted; with 4
    (some command failed) it is kept with a reason."""
    rec = json.loads((SAMPLES / "vm-pysmart" / "rec-after.json").read_text())["/dev/sda"]
    table = {tuple(c["argv"]): (c["returncode"], c["stdout"]) for c in rec["calls"]}
    all_argv = ("smartctl", "-d", "sat", "--all", "/dev/sda")
    _rc, out = table[all_argv]
    r4 = read_smart(FakeRun({**table, all_argv: (4, out)}), "sda")
    assert r4.available and r4.source == "pySMART" and r4.exit_status == 4 and r4.reason
    failed_json = json.dumps(
        {
            "smartctl": {
                "exit_status": 2,
                "messages": [{"string": "open failed", "severity": "error"}],
            }
        }
    )
    r2 = read_smart(
        FakeRun(
            {**table, all_argv: (2, out), ("smartctl", "-j", "-a", "/dev/sda"): (2, failed_json)}
        ),
        "sda",
    )
    assert not r2.available and r2.reason == "open failed"
