"""SMART readings in a form that does not depend on where they came from (pySMART, smartctl -j, a simulation)."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class SmartAttribute:
    """One ATA SMART attribute row."""

    id: int
    name: str
    value: int | None = None  # normalized (current) value, usually 0..100 or 0..253
    worst: int | None = None
    thresh: int | None = None
    raw: int | None = None  # raw value as an integer, when it is one
    raw_string: str = ""
    prefail: bool | None = None  # the drive flags it pre-fail (its threshold predicts failure)

    @property
    def failing(self) -> bool:
        """At or below its failure threshold now (a threshold of 0 never fails)."""
        return bool(self.thresh) and self.value is not None and self.value <= (self.thresh or 0)


@dataclass(frozen=True, slots=True)
class SelfTest:
    """One entry of a drive's self-test log (ATA or NVMe), newest first in the log."""

    kind: str  # "Short offline", "Extended offline", "Short", "Extended", ...
    status: str  # the drive's words: "Completed without error", "Completed: read failure"
    passed: bool | None  # True completed without error; False failed; None aborted/running
    lifetime_hours: int | None = None  # power-on hours when it ran
    lba_first_error: int | None = None  # where a read failure was found
    remaining_percent: int | None = None  # of a test still running


@dataclass(frozen=True, slots=True)
class SmartLogError:
    """One entry of a drive's error log (ATA summary error log, NVMe error information log)."""

    lifetime_hours: int | None
    text: str  # what the drive says happened ("UNC at LBA = 0x0fc2", "status 0x4004")


@dataclass(frozen=True, slots=True)
class SmartReading:
    device: str  # kernel name of the disk
    available: bool
    reason: str | None = None  # why not available / what went wrong
    protocol: str | None = None  # "ATA", "NVMe", "SCSI"
    model: str | None = None
    serial: str | None = None
    firmware: str | None = None  # smartctl's firmware_version (a cohort's key with the model)
    health: str | None = None  # "PASSED", "FAILED"
    temperature_c: int | None = None
    power_on_hours: int | None = None
    logical_sector: int = 512
    capacity_bytes: int | None = None
    rotational: bool | None = None
    attributes: tuple[SmartAttribute, ...] = ()
    # NVMe health log fields, smartctl JSON names: data_units_written, percentage_used, ...
    nvme: dict[str, int] = field(default_factory=dict, hash=False)
    exit_status: int | None = None  # smartctl's exit status bits
    taken_at: float = 0.0
    # --- added for app.wear (all defaulted) ---
    rotation_rate: int | None = None  # rpm; 0 = solid state; None = not reported
    scsi_gigabytes_written: str | None = (
        None  # scsi_error_counter_log.write.gigabytes_processed (10^9 B, as printed)
    )
    messages: tuple[str, ...] = ()  # smartctl's own messages (errors/warnings), for the reason line
    source: str | None = None  # "pySMART", "smartctl -j", "simulated", ...
    # --- logs (issue 26): None when the log was not read (not "empty") ---
    self_tests: tuple[SelfTest, ...] | None = None  # newest first
    self_test_remaining: int | None = None  # a self-test runs now: percent left
    error_count: int | None = None  # entries the drive counts in its error log (all time)
    errors: tuple[SmartLogError, ...] = ()  # the newest few entries, newest first

    def attribute(self, attr_id: int) -> SmartAttribute | None:
        for a in self.attributes:
            if a.id == attr_id:
                return a
        return None
