"""The self-test and error logs in ``smartctl -j`` output (``-a``, ``-x``, ``-c -l selftest``).

Pure and total: anything that is not the expected shape is skipped, never raised. The JSON names
are smartmontools' own (ataprint.cpp, nvmeprint.cpp):

* ATA self-test log: ``ata_smart_self_test_log.{extended,standard}.table[]`` with ``type.string``,
  ``status.{string,passed,remaining_percent}``, ``lifetime_hours``, ``lba``;
* a running ATA test: ``ata_smart_data.self_test.status`` with ``value >> 4 == 0xF`` and
  ``remaining_percent``;
* NVMe self-test log: ``nvme_self_test_log.table[]`` with ``self_test_code.string``,
  ``self_test_result.{value,string}`` (0 = completed without error, 1 = aborted by a Device
  Self-test command, 2 = by a reset, 3 = by a namespace removal, 4 = by a format, 5..7 = failed
  segments/unknown, 15 = unused entry), ``power_on_hours``, ``lba``; a running test:
  ``current_self_test_operation.value != 0`` and ``current_self_test_completion_percent`` (done);
* ATA error log: ``ata_smart_error_log.{extended,summary}`` with ``count`` and ``table[]``
  (``lifetime_hours``, ``error_description``); NVMe: ``nvme_error_information_log.table[]``
  (``status_field.string``, ``lba.value``), its count being the health log's
  ``num_err_log_entries``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from app.model.smart import SelfTest, SmartLogError

MAX_ENTRIES = 32  # a log holds 21 (ATA) or 20 (NVMe); more is not a drive's answer
MAX_TEXT = 200
ERRORS_KEPT = 8

# NVMe Device Self-test Log "Self-test Result" (NVMe base spec, Figure "Self-test Result Data")
_NVME_ABORTED = frozenset({1, 2, 3, 4})
_NVME_UNUSED = 15


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or not isinstance(v, int):
        v = _dict(v).get("value")
        if isinstance(v, bool) or not isinstance(v, int):
            return None
    return v if v >= 0 else None


def _text(v: Any) -> str:
    if isinstance(v, dict):
        v = v.get("string")
    return v[:MAX_TEXT] if isinstance(v, str) else ""


def _ata_self_tests(doc: Mapping[str, Any]) -> tuple[SelfTest, ...] | None:
    log = _dict(doc.get("ata_smart_self_test_log"))
    if not log:
        return None
    part = _dict(log.get("extended")) or _dict(log.get("standard"))
    table = part.get("table")
    if not isinstance(table, list):
        return () if part else None
    out: list[SelfTest] = []
    for row in table[:MAX_ENTRIES]:
        if not isinstance(row, dict):
            continue
        status = _dict(row.get("status"))
        passed = status.get("passed")
        value = _int(status.get("value"))
        running = value is not None and value >> 4 == 0xF
        verdict: bool | None = passed if isinstance(passed, bool) and not running else None
        if value is not None and value >> 4 in (1, 2):  # aborted by host / interrupted by reset
            verdict = None
        out.append(
            SelfTest(
                kind=_text(row.get("type")) or "self-test",
                status=_text(status) or "unknown",
                passed=verdict,
                lifetime_hours=_int(row.get("lifetime_hours")),
                lba_first_error=_int(row.get("lba")),
                remaining_percent=_int(status.get("remaining_percent")) if running else None,
            )
        )
    return tuple(out)


def _nvme_self_tests(doc: Mapping[str, Any]) -> tuple[SelfTest, ...] | None:
    log = _dict(doc.get("nvme_self_test_log"))
    if not log:
        return None
    table = log.get("table")
    out: list[SelfTest] = []
    for row in table[:MAX_ENTRIES] if isinstance(table, list) else ():
        if not isinstance(row, dict):
            continue
        result = _int(row.get("self_test_result"))
        if result == _NVME_UNUSED:
            continue
        passed = None if result is None or result in _NVME_ABORTED else result == 0
        out.append(
            SelfTest(
                kind=_text(row.get("self_test_code")) or "self-test",
                status=_text(row.get("self_test_result")) or "unknown",
                passed=passed,
                lifetime_hours=_int(row.get("power_on_hours")),
                lba_first_error=_int(row.get("lba")),
            )
        )
    return tuple(out)


def self_tests(doc: Mapping[str, Any]) -> tuple[SelfTest, ...] | None:
    """The self-test log, newest first; None when the document holds no self-test log."""
    ata = _ata_self_tests(doc)
    return ata if ata is not None else _nvme_self_tests(doc)


def self_test_remaining(doc: Mapping[str, Any]) -> int | None:
    """Percent left of a self-test running now; None when none runs (or it is not said)."""
    status = _dict(_dict(_dict(doc.get("ata_smart_data")).get("self_test")).get("status"))
    value = _int(status.get("value"))
    if value is not None and value >> 4 == 0xF:
        left = _int(status.get("remaining_percent"))
        return min(left, 100) if left is not None else (value & 0xF) * 10
    nvme = _dict(doc.get("nvme_self_test_log"))
    op = _int(nvme.get("current_self_test_operation"))
    if op:
        done = _int(nvme.get("current_self_test_completion_percent"))
        return 100 - min(done, 100) if done is not None else 100
    return None


def error_log(doc: Mapping[str, Any]) -> tuple[int | None, tuple[SmartLogError, ...]]:
    """(entries the drive counts, the newest few of them)."""
    ata = _dict(doc.get("ata_smart_error_log"))
    if ata:
        part = _dict(ata.get("extended")) or _dict(ata.get("summary"))
        table = part.get("table")
        errs = [
            SmartLogError(_int(row.get("lifetime_hours")), _text(row.get("error_description")))
            for row in (table[:ERRORS_KEPT] if isinstance(table, list) else ())
            if isinstance(row, dict)
        ]
        return _int(part.get("count")), tuple(errs)
    count = _int(_dict(doc.get("nvme_smart_health_information_log")).get("num_err_log_entries"))
    table = _dict(doc.get("nvme_error_information_log")).get("table")
    nv: list[SmartLogError] = []
    for row in table[:ERRORS_KEPT] if isinstance(table, list) else ():
        if not isinstance(row, dict):
            continue
        what = _text(row.get("status_field")) or "error"
        lba = _int(row.get("lba"))
        nv.append(SmartLogError(None, f"{what} at LBA {lba}" if lba is not None else what))
    return count, tuple(nv)


def verdict(status: str) -> bool | None:
    """A self-test log entry's status words as passed (True), failed (False) or neither (None:
    aborted, interrupted, running): smartctl's texts for ATA (ataprint.cpp) and NVMe."""
    s = status.strip().lower()
    if s.startswith("completed without error"):
        return True
    if "progress" in s or "running" in s or "abort" in s or "interrupt" in s:
        return None
    if s.startswith(("completed", "fatal", "failed", "unknown failure")) or "failure" in s:
        return False
    return None


def _log_int(text: object) -> int | None:
    s = str(text).strip().rstrip("%")
    if s.lower().startswith("0x"):
        try:
            return int(s, 16)
        except ValueError:
            return None
    return int(s) if s.isdigit() and len(s) <= 20 else None


def self_test_from_text(
    kind: object, status: object, hours: object, lba: object, remain: object = None
) -> SelfTest:
    """One entry as a text parser (pySMART's TestEntry over ``smartctl --all``) gives it."""
    st = str(status or "")[:MAX_TEXT]
    ok = verdict(st)
    left = _log_int(remain) if remain is not None else None
    return SelfTest(
        kind=str(kind or "self-test")[:MAX_TEXT],
        status=st or "unknown",
        passed=ok,
        lifetime_hours=_log_int(hours) if hours is not None else None,
        lba_first_error=_log_int(lba) if lba is not None else None,
        remaining_percent=left if left and ("progress" in st.lower() or st == "Running") else None,
    )


def self_test_supported(text: str) -> bool | None:
    """``smartctl -j -c``: whether the drive offers self-tests (NVMe: the optional admin
    command "Device Self-test", ``nvme_optional_admin_commands.self_test``; ATA:
    ``ata_smart_data.capabilities.self_tests_supported``); None when it does not say."""
    from app.parsers.errors import ParseError
    from app.parsers.safe import load_json

    try:
        doc = load_json(text, "smartctl -j -c")
    except ParseError:
        return None
    if not isinstance(doc, dict):
        return None
    nvme = _dict(doc.get("nvme_optional_admin_commands"))
    if "self_test" in nvme and isinstance(nvme["self_test"], bool):
        return bool(nvme["self_test"])
    caps = _dict(_dict(doc.get("ata_smart_data")).get("capabilities"))
    v = caps.get("self_tests_supported")
    if isinstance(v, bool):
        return v
    if _dict(doc.get("nvme_self_test_log")) or _dict(doc.get("ata_smart_self_test_log")):
        return True
    return None


_OACS = re.compile(r"^Optional Admin Commands \(0x([0-9a-fA-F]{1,8})\)", re.MULTILINE)
OACS_SELF_TEST = 0x10  # NVMe Identify Controller OACS bit 4: Device Self-test supported


def self_test_supported_text(text: str) -> bool | None:
    """``smartctl -c`` as text, for a smartctl whose JSON does not carry the capability
    (7.3 prints NVMe's OACS only as text: "Optional Admin Commands (0x010a): Format ...")."""
    m = _OACS.search(text or "")
    if m:
        return bool(int(m.group(1), 16) & OACS_SELF_TEST)
    if "No Self-test supported" in text:
        return False
    if "Self-test supported" in text:
        return True
    return None
