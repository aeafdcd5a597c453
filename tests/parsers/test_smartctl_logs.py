"""The self-test and error logs of ``smartctl -j`` (app/parsers/smartctl_logs.py), on real
documents from the corpus (../shared/corpus/scrutiny, its EXPECTED.md) and VM captures."""

from __future__ import annotations

import json
from pathlib import Path

from app.model.smart_tables import last_self_test, self_test_text
from app.parsers.smartctl_json import reading_from_smartctl_json
from app.parsers.smartctl_logs import (
    self_test_from_text,
    self_test_remaining,
    self_test_supported,
    self_test_supported_text,
    verdict,
)
from tests.corpus import corpus

SAMPLES = Path(__file__).parents[1] / "wear" / "samples" / "qemu-nvme"


def _scrutiny(name: str) -> str:
    return corpus("scrutiny", "models-testdata", name).read_text()


def test_failed_extended_test_under_two_passed_short_ones() -> None:
    """scrutiny smart-fail2.json (Hitachi HDS721050DLE630, smart_status failed): the log holds
    two short tests that passed and, older, an extended one that hit a read failure."""
    r = reading_from_smartctl_json(_scrutiny("smart-fail2.json"), "sda")
    assert r.self_tests is not None and len(r.self_tests) >= 3
    failed = r.self_tests[2]
    assert (failed.kind, failed.status, failed.passed) == (
        "Extended offline",
        "Completed: read failure",
        False,
    )
    assert failed.lba_first_error == 104870168
    assert last_self_test(r) == r.self_tests[0] and r.self_tests[0].passed is True
    assert r.error_count == 56 and r.errors and r.errors[0].text
    assert r.self_test_remaining is None
    # the attribute table: Reallocated_Sector_Ct value 1 below its threshold 5, pre-fail
    a5 = r.attribute(5)
    assert a5 is not None and a5.failing and a5.prefail is True


def test_empty_log_is_never_run_and_unread_log_is_unknown() -> None:
    """scrutiny smart-ata-failed-scrutiny.json has an extended self-test log of 0 entries."""
    r = reading_from_smartctl_json(_scrutiny("smart-ata-failed-scrutiny.json"), "sdc")
    assert r.self_tests == ()
    assert self_test_text(r) == "no self-test ever run"
    nvme = reading_from_smartctl_json((SAMPLES / "nvme-after.json").read_text(), "nvme0n1")
    assert nvme.self_tests is None  # smartctl 7.3 -a on QEMU's NVMe: no self-test log at all
    assert self_test_text(nvme) == "self-test log not read"
    assert nvme.error_count == 0  # num_err_log_entries of the health log


def test_running_tests_remaining_percent() -> None:
    """ATA: ata_smart_data.self_test.status value 0xF_ with remaining_percent; NVMe:
    current_self_test_operation != 0 and the completion percent (done, not left)."""
    ata = {"ata_smart_data": {"self_test": {"status": {"value": 249, "remaining_percent": 90}}}}
    assert self_test_remaining(ata) == 90
    idle = {"ata_smart_data": {"self_test": {"status": {"value": 0, "passed": True}}}}
    assert self_test_remaining(idle) is None
    nvme = {
        "nvme_self_test_log": {
            "current_self_test_operation": {"value": 1, "string": "Short self-test in progress"},
            "current_self_test_completion_percent": 30,
            "table": [{"self_test_code": {"value": 1, "string": "Short"},
                       "self_test_result": {"value": 15, "string": "unused"}}],
        }
    }  # fmt: skip
    assert self_test_remaining(nvme) == 70
    r = reading_from_smartctl_json(json.dumps(nvme), "nvme0n1")
    assert r.self_tests == ()  # an unused entry (result 15) is no test
    assert self_test_text(r) == "self-test running, 70% left"


def test_nvme_log_verdicts() -> None:
    doc = {
        "nvme_self_test_log": {
            "current_self_test_operation": {"value": 0},
            "table": [
                {"self_test_code": {"value": 1, "string": "Short"},
                 "self_test_result": {"value": 7, "string": "Completed: failed segment"},
                 "power_on_hours": 90, "lba": 4096},
                {"self_test_code": {"value": 1, "string": "Short"},
                 "self_test_result": {"value": 1, "string": "Aborted: Self-test command"},
                 "power_on_hours": 80},
                {"self_test_code": {"value": 2, "string": "Extended"},
                 "self_test_result": {"value": 0, "string": "Completed without error"},
                 "power_on_hours": 10},
            ],
        },
        "power_on_time": {"hours": 100},
    }  # fmt: skip
    r = reading_from_smartctl_json(json.dumps(doc), "nvme1n1")
    assert r.self_tests is not None
    assert [t.passed for t in r.self_tests] == [False, None, True]
    assert self_test_text(r) == (
        "last self-test (Short) FAILED at LBA 4096 at 90 h (10 h ago): Completed: failed segment"
    )


def test_text_verdicts_as_pysmart_gives_them() -> None:
    assert verdict("Completed without error") is True
    assert verdict("Completed: read failure") is False
    assert verdict("Aborted by host") is None
    assert verdict("Self-test routine in progress") is None
    t = self_test_from_text("Extended offline", "Completed: read failure", "46660", "123456", "90%")
    assert (t.passed, t.lifetime_hours, t.lba_first_error, t.remaining_percent) == (
        False,
        46660,
        123456,
        None,
    )
    running = self_test_from_text("Short offline", "Self-test routine in progress", "1", "-", "60%")
    assert running.remaining_percent == 60 and running.lba_first_error is None


def test_self_test_support() -> None:
    """QEMU 7.2's NVMe controller (VM capture, smartctl 7.3): Optional Admin Commands 0x010a
    (Format NS_Mngmt Drbl_Bf_Cfg) lacks OACS bit 4, Device Self-test; 7.3's JSON does not say."""
    text = (SAMPLES / "nvme-all-after.txt").read_text()
    assert self_test_supported_text(text) is False
    assert (
        self_test_supported_text(
            "Optional Admin Commands (0x0017):   Security Format Frmw_DL Self_Test"
        )
        is True
    )
    assert self_test_supported((SAMPLES / "nvme-after.json").read_text()) is None
    assert self_test_supported('{"nvme_optional_admin_commands": {"self_test": true}}') is True
    assert self_test_supported("not json") is None


def test_hostile_logs_are_bounded() -> None:
    rows = [{"type": {"string": "x" * 10_000}, "status": {"string": "y", "passed": False}}] * 500
    doc = {"ata_smart_self_test_log": {"standard": {"table": rows}}, "ata_smart_attributes": {}}
    r = reading_from_smartctl_json(json.dumps(doc), "sda")
    assert r.self_tests is not None and len(r.self_tests) <= 32
    assert all(len(t.kind) <= 200 for t in r.self_tests)
    bad = {"ata_smart_self_test_log": {"standard": {"table": "nope"}}, "nvme_self_test_log": 3}
    assert reading_from_smartctl_json(json.dumps(bad), "sda").self_tests == ()
