"""SMART of one disk through pySMART, with every smartctl call routed through the backend's ``run``.

pySMART (the design card's choice) starts smartctl itself through ``Smartctl.generic_call``. The
subclass :class:`RunSmartctl` overrides that one method so that each argv list goes through the
backend's ``run`` (argv, never a shell), which keeps ``raidman capture`` / replay working and lets
tests serve recorded outputs.

pySMART 1.4 parses ``smartctl --all`` text. When it yields no usable data (unknown interface, SCSI,
a parse failure, a device smartctl cannot open), this falls back to ``smartctl -j -a /dev/X``
through the same ``run`` and :func:`app.parsers.smartctl_json.reading_from_smartctl_json`, whose
messages give the reason ("Unable to detect device type" on virtio/loop devices).
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from app.model.smart import SelfTest, SmartAttribute, SmartReading
from app.parsers.smartctl_json import (
    EXIT_CMDLINE,
    EXIT_COMMAND_FAILED,
    EXIT_OPEN_FAILED,
    power_on_hours_from_attribute,
    reading_from_smartctl_json,
)
from app.parsers.smartctl_logs import self_test_from_text
from backends.base import CommandResult
from backends.linux.source import NOT_FOUND

RunFn = Callable[..., CommandResult]

NOT_INSTALLED = "smartctl not installed (apt install smartmontools)"
NOT_RECORDED = "smartctl output not recorded in this capture"
SMARTCTL_TIMEOUT = 60.0

try:  # pySMART is a declared dependency; a broken install must not break the backend
    from pySMART import Device as _PySmartDevice
    from pySMART.interface import AtaAttributes, NvmeAttributes
    from pySMART.smartctl import Smartctl as _Smartctl
except Exception:  # pragma: no cover - only without pySMART
    _PySmartDevice = None
    AtaAttributes = NvmeAttributes = None
    _Smartctl = object


# pySMART NvmeAttributes field -> smartctl JSON name in nvme_smart_health_information_log
_NVME_FIELDS = {
    "criticalWarning": "critical_warning",
    "temperature": "temperature",
    "availableSpare": "available_spare",
    "availableSpareThreshold": "available_spare_threshold",
    "percentageUsed": "percentage_used",
    "dataUnitsRead": "data_units_read",
    "dataUnitsWritten": "data_units_written",
    "hostReadCommands": "host_reads",
    "hostWriteCommands": "host_writes",
    "controllerBusyTime": "controller_busy_time",
    "powerCycles": "power_cycles",
    "powerOnHours": "power_on_hours",
    "unsafeShutdowns": "unsafe_shutdowns",
    "integrityErrors": "media_errors",
    "errorEntries": "num_err_log_entries",
    "warningTemperatureTime": "warning_temp_time",
    "criticalTemperatureTime": "critical_comp_time",
}


class RunSmartctl(_Smartctl):
    """pySMART's Smartctl with every call going through ``run``; remembers what happened."""

    def __init__(self, run: RunFn, *, timeout: float = SMARTCTL_TIMEOUT) -> None:
        super().__init__(smartctl_path="smartctl", options=[])
        self._run = run
        self._timeout = timeout
        self.results: list[CommandResult] = []

    def generic_call(self, params: list[str], pass_options: bool = False) -> tuple[list[str], int]:
        argv = ["smartctl", *(self.options if pass_options else []), *params]
        res = self._run(argv, timeout=self._timeout)
        self.results.append(res)
        return res.stdout.splitlines(), res.returncode

    @property
    def missing(self) -> bool:
        """smartctl could not be started (not on PATH, or not in a replayed capture)."""
        return any(r.returncode == NOT_FOUND for r in self.results)

    def all_result(self) -> CommandResult | None:
        for r in reversed(self.results):
            if "--all" in r.argv or "--info" in r.argv:
                return r
        return None


def _int(v: Any) -> int | None:
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, int):
        return v
    try:
        return int(str(v).strip())
    except ValueError:
        return None


_NVME_NAME = re.compile(r"nvme[0-9]+n[0-9]+")
_ATA_ERROR_COUNT = re.compile(r"^ATA Error Count:\s+([0-9]{1,9})", re.MULTILINE)
_SELF_TEST_LOG = re.compile(r"^(SMART Self-test log|Self-test Log \(NVMe Log 0x06\))", re.MULTILINE)


def _pysmart_self_tests(dev: Any, text: str) -> tuple[tuple[SelfTest, ...] | None, int | None]:
    """(the self-test log pySMART read from ``smartctl --all``, percent left of a running test).
    None when the output had no self-test log at all (not the same as an empty one)."""
    tests: list[SelfTest] = []
    remaining: int | None = None
    for t in list(getattr(dev, "tests", None) or [])[:32]:
        if getattr(t, "_format", "") == "nvme" and str(getattr(t, "status", "")) == "Running":
            left = _int(getattr(t, "remain", None))
            remaining = left if left is not None else remaining
            continue
        entry = self_test_from_text(t.type, t.status, t.hours, t.LBA, t.remain)
        if entry.remaining_percent is not None:
            remaining = entry.remaining_percent
        tests.append(entry)
    if getattr(dev, "_test_running", False) and remaining is None:
        progress = _int(getattr(dev, "_test_progress", None))
        remaining = 100 - progress if progress is not None and 0 <= progress <= 100 else None
    if (
        not tests
        and not _SELF_TEST_LOG.search(text)
        and "No self-tests have been logged" not in text
    ):
        return None, remaining
    return tuple(tests), remaining


def _pysmart_error_count(text: str, nvme: dict[str, int]) -> int | None:
    if "num_err_log_entries" in nvme:
        return nvme["num_err_log_entries"]
    m = _ATA_ERROR_COUNT.search(text)
    if m:
        return int(m.group(1))
    return 0 if "No Errors Logged" in text else None


def _from_pysmart(
    dev: Any, disk: str, logical_sector: int, now: float, rc: int | None, text: str = ""
) -> SmartReading | None:
    """A reading from a pySMART Device, or None when it holds no usable SMART data."""
    ifa = dev.if_attributes
    attrs: list[SmartAttribute] = []
    nvme: dict[str, int] = {}
    protocol: str | None = None
    if AtaAttributes is not None and isinstance(ifa, AtaAttributes):
        protocol = "ATA"
        for a in ifa.legacyAttributes:
            if a is None:
                continue
            raw_str = str(a.raw).strip()
            attrs.append(
                SmartAttribute(
                    id=int(a.num),
                    name=str(a.name),
                    value=_int(a.value_str),
                    worst=_int(a._worst),
                    thresh=a.thresh,
                    raw=a.raw_int,
                    raw_string=raw_str,
                    prefail={"pre-fail": True, "old_age": False}.get(str(a.type).lower()),
                )
            )
        if not attrs:
            return None
    elif NvmeAttributes is not None and isinstance(ifa, NvmeAttributes):
        protocol = "NVMe"
        for py_name, json_name in _NVME_FIELDS.items():
            v = _int(getattr(ifa, py_name, None))
            if v is not None:
                nvme[json_name] = v
        if "data_units_written" not in nvme:
            return None
    else:
        return None

    health = {"PASS": "PASSED", "WARN": "PASSED", "FAIL": "FAILED"}.get(str(dev.assessment))
    poh: int | None = nvme.get("power_on_hours")
    if poh is None:
        for a in attrs:
            if a.id == 9:
                poh = power_on_hours_from_attribute(a)
    lss = _int(getattr(dev, "logical_sector_size", None)) or logical_sector
    cap = _int(getattr(dev, "_capacity", None))
    rpm = _int(getattr(dev, "rotation_rate", None))
    is_ssd = getattr(dev, "is_ssd", None)
    rotational: bool | None = None
    if protocol == "NVMe" or is_ssd is True:
        rotational = False
    elif rpm:
        rotational = True
    reason = None
    if rc is not None and rc & EXIT_COMMAND_FAILED:
        reason = f"some SMART command failed (exit status {rc})"
    messages = tuple(str(m) for m in (getattr(dev, "messages", None) or []))
    tests, remaining = _pysmart_self_tests(dev, text)
    return SmartReading(
        device=disk,
        available=True,
        reason=reason,
        protocol=protocol,
        model=dev.model,
        serial=dev.serial or None,
        firmware=fw if isinstance(fw := getattr(dev, "firmware", None), str) and fw else None,
        health=health,
        temperature_c=_int(dev.temperature),
        power_on_hours=poh,
        logical_sector=lss,
        capacity_bytes=cap or None,
        rotational=rotational,
        attributes=tuple(attrs),
        nvme=nvme,
        exit_status=rc,
        taken_at=now,
        rotation_rate=0 if rotational is False and protocol != "NVMe" else rpm,
        messages=messages,
        source="pySMART",
        self_tests=tests,
        self_test_remaining=remaining,
        error_count=_pysmart_error_count(text, nvme),
    )


def _via_json(run: RunFn, disk: str, now: float, why: str | None) -> SmartReading:
    res = run(["smartctl", "-j", "-a", f"/dev/{disk}"], timeout=SMARTCTL_TIMEOUT)
    if res.returncode == NOT_FOUND:
        # "not installed" only when smartctl itself is missing; a replay that lacks the call
        # says so instead
        reason = NOT_RECORDED if res.not_recorded else NOT_INSTALLED
        return SmartReading(device=disk, available=False, reason=reason, taken_at=now)
    reading = reading_from_smartctl_json(res.stdout, disk, now=now)
    if reading.exit_status is None and res.returncode:
        # not JSON at all (an old smartctl without -j, a crash): keep the exit status we saw
        reading = replace(reading, exit_status=res.returncode)
    if not reading.available and why:
        reading = replace(reading, reason=f"{reading.reason}; {why}" if reading.reason else why)
    return reading


def read_smart(
    run: RunFn, disk: str, *, logical_sector: int = 512, now: float = 0.0
) -> SmartReading:
    """SMART of ``/dev/<disk>``. Never raises; unavailable SMART is a reading with a reason."""
    why: str | None = None
    if _PySmartDevice is not None:
        sm = RunSmartctl(run)
        dev: Any = None
        # an NVMe namespace (nvmeXnY) is smartctl's "nvme" type: told so, pySMART skips its
        # `smartctl -d test` probe (one smartctl fewer per NVMe disk and sweep; under TCG
        # ~0.3 s of CPU each)
        interface = "nvme" if _NVME_NAME.fullmatch(disk) else None
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                dev = _PySmartDevice(f"/dev/{disk}", interface=interface, smartctl=sm)
        except Exception as e:  # pySMART raises on output it does not expect
            why = f"pySMART: {e.__class__.__name__}: {e}"
        if sm.missing:
            # pySMART's first smartctl did not run: a capture may still hold the JSON
            # (raidman capture always records `smartctl -j -a`), and only the JSON call can
            # tell "not installed" from "not recorded"
            return _via_json(run, disk, now, None)
        if dev is not None and getattr(dev, "smartctl_interface", None):
            res = sm.all_result()
            rc = res.returncode if res is not None else None
            if rc is None or not rc & (EXIT_CMDLINE | EXIT_OPEN_FAILED):
                try:
                    text = res.stdout if res is not None else ""
                    reading = _from_pysmart(dev, disk, logical_sector, now, rc, text)
                except Exception as e:
                    reading = None
                    why = f"pySMART: {e.__class__.__name__}: {e}"
                if reading is not None:
                    return reading
    return _via_json(run, disk, now, why)


def smartctl_argvs(disk: str) -> Sequence[tuple[str, ...]]:
    """The argv lists a read of ``disk`` may run (for ``raidman capture``)."""
    dev = f"/dev/{disk}"
    return (
        ("smartctl", "-d", "test", dev),
        ("smartctl", "-j", "-a", dev),
    )
