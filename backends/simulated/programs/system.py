"""The rest: ``tee`` and ``cat`` on sysfs/procfs/etc, ``sysctl``, ``smartctl``, ``mount``,
``umount``, ``systemctl`` and the programs that only print (``noop``)."""

from __future__ import annotations

import json
from collections.abc import Sequence

from backends.simulated.programs.argv import Handler, Result
from backends.simulated.programs.devices import resolve
from backends.simulated.smart import build_smart, smart_counters
from backends.simulated.state import SimState
from backends.simulated.sysfs import WriteError, read_path, write_path


def tee(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    paths = [a for a in args if not a.startswith("-")]
    append = "-a" in args or "--append" in args
    data = stdin or ""
    if not paths:
        return 0, data, ""
    for p in paths:
        try:
            if append and p.startswith("/etc/"):
                old = read_path(st, p) or ""
                write_path(st, p, old + data)
            else:
                write_path(st, p, data)
        except WriteError as e:
            return 1, data, f"tee: {p}: {e}\n"
    return 0, data, ""


SYSCTL_KEYS = {"dev.raid.speed_limit_min", "dev.raid.speed_limit_max"}


def sysctl(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    quiet_value = "-n" in args
    write = "-w" in args
    rest = [a for a in args if a not in ("-n", "-w", "-q")]
    if not rest:
        return 255, "", "sysctl: no variables specified\n"
    out = ""
    for item in rest:
        key, eq, val = item.partition("=")
        key = key.replace("/", ".")
        if key not in SYSCTL_KEYS:
            return (
                255,
                out,
                f"sysctl: cannot stat /proc/sys/{key.replace('.', '/')}: No such file or directory\n",
            )
        if eq or write:
            if not eq:
                return 255, out, f'sysctl: "{item}" must be of the form name=value\n'
            try:
                write_path(st, f"/proc/sys/{key.replace('.', '/')}", val)
            except WriteError as e:
                return 255, out, f'sysctl: setting key "{key}": {e}\n'
        value = st.speed_limit_min if key.endswith("min") else st.speed_limit_max
        out += f"{value}\n" if quiet_value else f"{key} = {value}\n"
    return 0, out, ""


def smartctl(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    devs = [a for a in args if a.startswith("/dev/")]
    if not devs:
        return 1, "", "smartctl: no device given\n"
    dev = resolve(st, devs[0])
    if dev is None or dev not in st.disks:
        return 2, "", f"Smartctl open device: {devs[0]} failed: No such device\n"
    d = st.disks[dev]
    r = build_smart(st, d)
    as_json = "-j" in args or "--json" in args
    doc: dict[str, object] = {
        "json_format_version": [1, 0],
        "smartctl": {"version": [7, 3], "exit_status": 0},
        "device": {"name": devs[0], "type": "sat" if d.transport != "nvme" else "nvme",
                   "protocol": r.protocol or "ATA"},
        "model_name": d.model,
        "serial_number": d.serial,
        "user_capacity": {"bytes": d.size_bytes},
        "logical_block_size": d.logical,
        "rotation_rate": 7200 if d.rotational else 0,
    }  # fmt: skip
    if not r.available:
        msg = f"{devs[0]}: Unknown USB bridge [0x152d:0x0578 (0x214)]\nPlease specify device type with the -d option."
        doc["smartctl"] = {"version": [7, 3], "exit_status": 1,
                           "messages": [{"string": msg, "severity": "error"}]}  # fmt: skip
        return 1, json.dumps(doc, indent=2) + "\n" if as_json else msg + "\n", ""
    c = smart_counters(st, d)
    doc["smart_status"] = {"passed": r.health == "PASSED"}
    doc["temperature"] = {"current": r.temperature_c}
    doc["power_on_time"] = {"hours": r.power_on_hours}
    if r.protocol == "NVMe":
        doc["nvme_smart_health_information_log"] = dict(r.nvme)
    else:
        doc["ata_smart_attributes"] = {
            "revision": 1,
            "table": [
                {"id": at.id, "name": at.name, "value": at.value, "worst": at.worst,
                 "thresh": at.thresh, "raw": {"value": at.raw, "string": at.raw_string},
                 "flags": {"prefailure": bool(at.prefail)}}
                for at in r.attributes
            ],
        }  # fmt: skip
    del c
    status = 0 if r.health == "PASSED" else 8
    doc["smartctl"] = {"version": [7, 3], "exit_status": status}
    if as_json:
        return status, json.dumps(doc, indent=2) + "\n", ""
    lines = [f"Device Model:     {d.model}", f"Serial Number:    {d.serial}",
             f"SMART overall-health self-assessment test result: {r.health}"]  # fmt: skip
    for at in r.attributes:
        lines.append(
            f"{at.id:3d} {at.name:<23} {at.value:03d}   {at.worst:03d}   {at.thresh:03d}    {at.raw_string}"
        )
    return status, "\n".join(lines) + "\n", ""


def umount(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    for target in (a for a in args if not a.startswith("-")):
        dev = resolve(st, target)
        for fs in st.filesystems.values():
            if fs.device == dev or target in fs.mountpoints:
                if not fs.mountpoints:
                    break
                fs.mountpoints = ()
                st.touch()
                break
        else:
            return 32, "", f"umount: {target}: not mounted.\n"
    return 0, "", ""


def systemctl(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    if len(args) >= 2 and args[0] == "is-active":
        active = {"fstrim.timer", "mdmonitor.service", "mdmonitor", "lvm2-monitor.service"}
        return (0, "active\n", "") if args[1] in active else (3, "inactive\n", "")
    if len(args) >= 2 and args[0] in ("is-enabled",):
        return (0, "enabled\n", "") if args[1] == "fstrim.timer" else (1, "disabled\n", "")
    # try-restart: restart a unit that runs, nothing otherwise; 0 either way (systemctl(1))
    if args and args[0] in ("start", "enable", "restart", "try-restart", "daemon-reload"):
        return 0, "", ""
    return 1, "", f"systemctl: command {' '.join(args)} is not simulated\n"


def cat(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    out = ""
    for p in args:
        t = read_path(st, p)
        if t is None:
            return 1, out, f"cat: {p}: No such file or directory\n"
        out += t
    return 0, out, ""


def noop(message: str = "") -> Handler:
    def run(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
        return 0, message, ""

    return run
