"""``smartctl -j -a`` (JSON) -> :class:`app.model.smart.SmartReading`.

Never raises: anything that is not a usable smartctl JSON document becomes an unavailable reading
with a reason. smartctl's exit status is a bit mask (smartctl(8) "RETURN VALUES"):

* bit 0 (1)  command line did not parse
* bit 1 (2)  device open failed, or the device did not answer IDENTIFY / is in a low-power mode
* bit 2 (4)  some SMART or other ATA command to the disk failed, or a checksum error
* bit 3 (8)  SMART status check returned "DISK FAILING"
* bit 4..7   prefail attribute <= threshold, attribute <= threshold in the past, error log, self-test log

Bits 0 and 1 mean nothing was read: ``available=False``. Bit 2 means *some* command failed: when the
document still carries SMART data (attributes, an NVMe health log or an overall status) the reading is
kept (netdata's collector does the same on its exit-status-4 fixture; scrutiny's megaraid captures
carry a full table with exit status 4) and ``reason`` says what failed; without data it is
unavailable. Bits 3..7 are warnings and stay in ``exit_status``.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from app.model.smart import SmartAttribute, SmartReading
from app.parsers.errors import ParseError
from app.parsers.safe import load_json
from app.parsers.smartctl_logs import error_log, self_test_remaining, self_tests

EXIT_CMDLINE = 1
EXIT_OPEN_FAILED = 2
EXIT_COMMAND_FAILED = 4
EXIT_DISK_FAILING = 8

_LEADING_INT = re.compile(r"\s*([0-9]{1,20})(?![0-9])", re.ASCII)


def _int(v: Any) -> int | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, float) and v.is_integer():
        return int(v)
    if isinstance(v, str):
        m = _LEADING_INT.match(v)
        if m and m.end() == len(v.rstrip()):
            return int(m.group(1))
    return None


def _dict(v: Any) -> dict[str, Any]:
    return v if isinstance(v, dict) else {}


def leading_int(text: str) -> int | None:
    """The first integer of a raw string: "26 (Min/Max 13/41)" -> 26, "47060h+35m+00.858s" -> 47060."""
    m = _LEADING_INT.match(text or "")
    return int(m.group(1)) if m else None


def _messages(doc: Mapping[str, Any]) -> tuple[tuple[str, str], ...]:
    out: list[tuple[str, str]] = []
    for m in _dict(doc.get("smartctl")).get("messages") or []:
        if isinstance(m, dict) and isinstance(m.get("string"), str):
            out.append((str(m.get("severity") or "information"), m["string"]))
    return tuple(out)


def _attributes(doc: Mapping[str, Any]) -> tuple[SmartAttribute, ...]:
    table = _dict(doc.get("ata_smart_attributes")).get("table")
    if not isinstance(table, list):
        return ()
    out: list[SmartAttribute] = []
    for row in table:
        if not isinstance(row, dict):
            continue
        aid = _int(row.get("id"))
        if aid is None:
            continue
        raw = row.get("raw")
        raw_value: int | None = None
        raw_string = ""
        if isinstance(raw, dict):
            raw_value = _int(raw.get("value"))
            raw_string = str(raw.get("string", "")) if raw.get("string") is not None else ""
            if not raw_string and raw_value is not None:
                raw_string = str(raw_value)
        out.append(
            SmartAttribute(
                id=aid,
                name=str(row.get("name") or f"Attribute_{aid}"),
                value=_int(row.get("value")),
                worst=_int(row.get("worst")),
                thresh=_int(row.get("thresh")),
                raw=raw_value,
                raw_string=raw_string,
                prefail=_prefail(row),
            )
        )
    return tuple(out)


def _prefail(row: Mapping[str, Any]) -> bool | None:
    v = _dict(row.get("flags")).get("prefailure")
    return v if isinstance(v, bool) else None


def _nvme_log(doc: Mapping[str, Any]) -> dict[str, int]:
    log = _dict(doc.get("nvme_smart_health_information_log"))
    out: dict[str, int] = {}
    for k, v in log.items():
        iv = _int(v) if not isinstance(v, str) else None
        if iv is not None:
            out[k] = iv
    return out


def _model(doc: Mapping[str, Any]) -> str | None:
    for key in ("model_name", "scsi_model_name"):
        v = doc.get(key)
        if isinstance(v, str) and v.strip():
            return v.strip()
    vendor = doc.get("vendor") or doc.get("scsi_vendor")
    product = doc.get("product") or doc.get("scsi_product")
    parts = [p.strip() for p in (vendor, product) if isinstance(p, str) and p.strip()]
    return " ".join(parts) or None


def _capacity(doc: Mapping[str, Any]) -> int | None:
    cap = _int(_dict(doc.get("user_capacity")).get("bytes"))
    if cap:
        return cap
    total = _int(doc.get("nvme_total_capacity"))
    if total:
        return total
    for ns in doc.get("nvme_namespaces") or []:
        size = _int(_dict(_dict(ns).get("size")).get("bytes"))
        if size:
            return size
    return None


def _logical_sector(doc: Mapping[str, Any]) -> int | None:
    lbs = _int(doc.get("logical_block_size"))
    if lbs:
        return lbs
    for ns in doc.get("nvme_namespaces") or []:
        v = _int(_dict(ns).get("formatted_lba_size"))
        if v:
            return v
    return None


def _power_on_hours(doc: Mapping[str, Any], attrs: tuple[SmartAttribute, ...]) -> int | None:
    h = _int(_dict(doc.get("power_on_time")).get("hours"))
    if h is not None:
        return h
    for a in attrs:
        if a.id == 9:
            return power_on_hours_from_attribute(a)
    return None


def power_on_hours_from_attribute(a: SmartAttribute) -> int | None:
    """ATA attribute 9 in hours, whatever unit its name says (Power_On_Half_Minutes, ...)."""
    n = leading_int(a.raw_string) if a.raw_string else a.raw
    if n is None:
        return None
    name = a.name.lower()
    if "half_min" in name:
        return n // 120
    if "minutes" in name:
        return n // 60
    if "seconds" in name:
        return n // 3600
    return n


def _temperature(doc: Mapping[str, Any], attrs: tuple[SmartAttribute, ...]) -> int | None:
    t = _int(_dict(doc.get("temperature")).get("current"))
    if t is not None and t > 0:
        return t
    nv = _int(_dict(doc.get("nvme_smart_health_information_log")).get("temperature"))
    if nv:
        return nv
    for aid in (194, 190):
        for a in attrs:
            if a.id == aid:
                n = leading_int(a.raw_string) if a.raw_string else a.raw
                if n is not None and 0 < n < 150:
                    return n
    return None


def _reason_from_messages(msgs: tuple[tuple[str, str], ...]) -> str | None:
    errs = [s for sev, s in msgs if sev == "error"]
    if errs:
        return "; ".join(errs)
    if msgs:
        return "; ".join(s for _, s in msgs)
    return None


def reading_from_smartctl_json(
    text_or_dict: str | bytes | Mapping[str, Any], device: str, *, now: float = 0.0
) -> SmartReading:
    """Build a reading from ``smartctl -j`` output (text or already-decoded JSON). Never raises."""
    doc: Any
    if isinstance(text_or_dict, Mapping):
        doc = text_or_dict
    else:
        text = (
            text_or_dict.decode(errors="replace")
            if isinstance(text_or_dict, bytes)
            else str(text_or_dict)
        )
        try:
            doc = load_json(text, "smartctl -j")
        except ParseError as e:
            first = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
            return SmartReading(
                device=device,
                available=False,
                reason=f"smartctl output is not usable JSON ({e}): {first[:120]}"
                if first
                else "smartctl printed nothing",
                taken_at=now,
                source="smartctl -j",
            )
    if not isinstance(doc, Mapping):
        return SmartReading(
            device=device,
            available=False,
            reason="smartctl JSON is not an object",
            taken_at=now,
            source="smartctl -j",
        )
    try:
        return _build(doc, device, now)
    except Exception as e:  # defensive: a hostile document must never crash the UI
        return SmartReading(
            device=device,
            available=False,
            reason=f"could not read smartctl JSON: {e.__class__.__name__}: {e}",
            taken_at=now,
            source="smartctl -j",
        )


def _build(doc: Mapping[str, Any], device: str, now: float) -> SmartReading:
    sc = _dict(doc.get("smartctl"))
    exit_status = _int(sc.get("exit_status"))
    msgs = _messages(doc)
    attrs = _attributes(doc)
    nvme = _nvme_log(doc)
    status = _dict(doc.get("smart_status"))
    passed = status.get("passed")
    health: str | None = None
    if isinstance(passed, bool):
        health = "PASSED" if passed else "FAILED"

    protocol = _dict(doc.get("device")).get("protocol")
    protocol = protocol if isinstance(protocol, str) else None
    if protocol is None and nvme:
        protocol = "NVMe"
    elif protocol is None and attrs:
        protocol = "ATA"

    scsi_w = _dict(_dict(doc.get("scsi_error_counter_log")).get("write")).get("gigabytes_processed")
    scsi_gb = (
        str(scsi_w)
        if isinstance(scsi_w, (str, int, float)) and not isinstance(scsi_w, bool)
        else None
    )

    rpm = _int(doc.get("rotation_rate"))
    rotational: bool | None = None
    if rpm is not None:
        rotational = rpm > 0
    elif protocol == "NVMe":
        rotational = False

    has_data = bool(attrs or nvme or health is not None or scsi_gb is not None)
    support = doc.get("smart_support")
    smart_unsupported = (isinstance(support, bool) and not support) or (
        isinstance(support, dict) and support.get("available") is False
    )

    available = True
    reason: str | None = None
    es = exit_status or 0
    if es & (EXIT_CMDLINE | EXIT_OPEN_FAILED):
        available = False
        detail = _reason_from_messages(msgs)
        if detail and "unable to detect device type" in detail.lower():
            reason = f"no SMART: {detail} (virtual, loop or bridged device)"
        elif detail:
            reason = detail
        elif es & EXIT_CMDLINE:
            reason = f"smartctl did not accept its command line (exit status {es})"
        else:
            reason = f"smartctl could not open the device (exit status {es})"
    elif smart_unsupported and not has_data:
        available = False
        reason = _reason_from_messages(msgs) or "the device has no SMART support"
    elif es & EXIT_COMMAND_FAILED:
        detail = _reason_from_messages(msgs)
        what = f"some SMART command failed (exit status {es})"
        reason = f"{what}: {detail}" if detail else what
        if not has_data:
            available = False
    elif not has_data:
        available = False
        reason = _reason_from_messages(msgs) or "smartctl returned no SMART data"

    lbs = _logical_sector(doc)
    err_count, errs = error_log(doc)
    return SmartReading(
        device=device,
        available=available,
        reason=reason,
        protocol=protocol,
        model=_model(doc),
        serial=(doc.get("serial_number") if isinstance(doc.get("serial_number"), str) else None),
        firmware=(
            doc.get("firmware_version") if isinstance(doc.get("firmware_version"), str) else None
        ),
        health=health,
        temperature_c=_temperature(doc, attrs),
        power_on_hours=_power_on_hours(doc, attrs),
        logical_sector=lbs or 512,
        capacity_bytes=_capacity(doc),
        rotational=rotational,
        attributes=attrs,
        nvme=nvme,
        exit_status=exit_status,
        taken_at=now,
        rotation_rate=rpm,
        scsi_gigabytes_written=scsi_gb,
        messages=tuple(s for _, s in msgs),
        source="smartctl -j",
        self_tests=self_tests(doc),
        self_test_remaining=self_test_remaining(doc),
        error_count=err_count,
        errors=errs,
    )
