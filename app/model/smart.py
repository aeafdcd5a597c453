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


@dataclass(frozen=True, slots=True)
class SmartReading:
    device: str  # kernel name of the disk
    available: bool
    reason: str | None = None  # why not available / what went wrong
    protocol: str | None = None  # "ATA", "NVMe", "SCSI"
    model: str | None = None
    serial: str | None = None
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

    def attribute(self, attr_id: int) -> SmartAttribute | None:
        for a in self.attributes:
            if a.id == attr_id:
                return a
        return None
