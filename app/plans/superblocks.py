"""Every md superblock the machine carries, read through the backend, against the running arrays.

``mdadm --examine --scan --verbose`` lists each array whose superblock is on some device
(mdadm scans /proc/partitions) with ``devices=`` the devices that carry it; each of those is then
read with ``mdadm --examine --export DEV`` (events, update time, UUIDs) and the plain
``mdadm --examine DEV`` (role, bitmap, recovery offset, bad-block log:
app.parsers.mdadm_superblock). Against the kernel's arrays (``Machine.arrays``):

* a member the kernel lists gets its superblock (``members``);
* a device carrying the UUID of a running array that the kernel does not list is ``outside``
  it (a failed-and-removed member: re-add or add, by how far behind its events are);
* a UUID no running array has is a stray array (``strays``): "not assembled", with the
  assemble plan that would start it (app.plans.builders.lifecycle).

Run at report time (``raidman report``), and in the TUI's workers, never on the UI thread.
Anything unreadable is a note, never an error: ``notes`` says what could not be read.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.backend import Backend
from app.escape import escape_controls
from app.model import Machine
from app.model.superblock import Superblock, array_events
from app.parsers.errors import ParseError
from app.parsers.mdadm import parse_scan
from app.parsers.mdadm_superblock import parse_superblock

EXAMINE_SCAN_ARGV = ("mdadm", "--examine", "--scan", "--verbose")
MAX_DEVICES = 256  # superblocks one read examines at most
TIMEOUT_S = 10


@dataclass(frozen=True, slots=True)
class StrayArray:
    """An array whose superblocks are on disks but which the kernel is not running."""

    uuid: str
    name: str | None
    level: str | None
    devices: tuple[Superblock, ...]

    @property
    def events(self) -> int | None:
        return array_events(self.devices)


@dataclass(frozen=True, slots=True)
class Carried:
    """A device carrying the md superblock of an array the kernel does not run from it: a
    running array's copy outside it (``Superblocks.outside``) or a carrier of an array that is
    not assembled (``Superblocks.strays``). Never free: the tree marks it, the wizards refuse
    it, and a plan that overwrites it names what is lost (app.plans.outcome.lost)."""

    device: str  # kernel name
    array: str  # the running array's name ("md0"), else the superblock's ("oldhost:backup") or UUID
    sb: Superblock
    stray: StrayArray | None = None  # the array not assembled; None: ``array`` is running
    behind: int | None = None  # events behind the running array's members (None: unknown/stray)

    @property
    def assembled(self) -> bool:
        return self.stray is None


@dataclass(frozen=True, slots=True)
class Superblocks:
    members: dict[str, Superblock] = field(default_factory=dict)  # kernel name -> its superblock
    outside: dict[str, tuple[Superblock, ...]] = field(default_factory=dict)  # array -> sbs
    strays: tuple[StrayArray, ...] = ()
    notes: tuple[str, ...] = ()

    def array_events(self, machine: Machine, array: str) -> int | None:
        """The running array's event count: the highest its working members' superblocks say."""
        a = machine.array(array)
        if a is None:
            return None
        return array_events([self.members[m.device] for m in a.members if m.device in self.members])

    def carried(self, machine: Machine, device: str) -> tuple[Carried, ...]:
        """What ``device`` carries of arrays the kernel does not run from it (``Carried``)."""
        return self.carriers(machine).get(device, ())

    def carriers(self, machine: Machine) -> dict[str, tuple[Carried, ...]]:
        """Every device carrying an md superblock of an array it is no active member of:
        kernel name -> what it carries (running arrays first, then those not assembled). A
        device the kernel has made a member since this read is left out."""
        out: dict[str, list[Carried]] = {}
        for array, sbs in self.outside.items():
            a = machine.array(array)
            ev = self.array_events(machine, array)
            for sb in sbs:
                if a is None or a.member(sb.device) is None:
                    out.setdefault(sb.device, []).append(
                        Carried(sb.device, array, sb, behind=sb.behind(ev))
                    )
        for stray in self.strays:
            for sb in stray.devices:
                out.setdefault(sb.device, []).append(
                    Carried(sb.device, stray.name or stray.uuid, sb, stray)
                )
        return {k: tuple(v) for k, v in out.items()}


def hex_uuid(uuid: str | None) -> str:
    """An md UUID in any spelling (8:8:8:8, 8-4-4-4-12) as 32 lowercase hex digits."""
    return "".join(c for c in (uuid or "").lower() if c in "0123456789abcdef")


def examine(backend: Backend, device: str) -> Superblock | str:
    """The superblock of ``device`` (kernel name), or why it could not be read."""
    path = f"/dev/{device}"
    try:
        exp = backend.run(["mdadm", "--examine", "--export", path], timeout=TIMEOUT_S)
        plain = backend.run(["mdadm", "--examine", path], timeout=TIMEOUT_S)
    except Exception as e:  # a backend must not raise; a report never does
        return f"{device}: mdadm --examine failed: {e}"
    if not exp.ok and not plain.ok:
        first = (plain.stderr or exp.stderr).strip().splitlines()[:1]
        return f"{device}: mdadm --examine: {first[0] if first else f'exit {plain.returncode}'}"
    try:
        return parse_superblock(
            device, exp.stdout if exp.ok else None, plain.stdout if plain.ok else None
        )
    except ParseError as e:
        return f"{device}: {e}"


def read_superblocks(machine: Machine, backend: Backend | None) -> Superblocks:
    """Every superblock ``mdadm --examine --scan --verbose`` finds, sorted against ``machine``."""
    if backend is None:
        return Superblocks()
    notes: list[str] = []
    try:
        res = backend.run(list(EXAMINE_SCAN_ARGV), timeout=TIMEOUT_S)
    except Exception as e:
        return Superblocks(notes=(f"mdadm --examine --scan failed: {e}",))
    if not res.ok:
        first = res.stderr.strip().splitlines()[:1]
        why = first[0] if first else f"exit {res.returncode}"
        return Superblocks(notes=(f"mdadm --examine --scan: {why}",))
    try:
        found = parse_scan(res.stdout)
    except ParseError as e:
        return Superblocks(notes=(str(e),))
    running = {hex_uuid(a.uuid): a for a in machine.arrays if a.uuid}
    members: dict[str, Superblock] = {}
    outside: dict[str, list[Superblock]] = {}
    strays: list[StrayArray] = []
    asked = 0
    for entry in found:
        if entry.container or entry.member:
            continue  # IMSM/DDF volumes: their superblock is the container's
        sbs: list[Superblock] = []
        for path in entry.devices:
            if asked >= MAX_DEVICES:
                notes.append(f"more than {MAX_DEVICES} md devices: the rest were not examined")
                break
            name = path.removeprefix("/dev/")
            if not path.startswith("/dev/") or "/" in name:
                continue
            asked += 1
            sb = examine(backend, name)
            if isinstance(sb, str):
                notes.append(sb)
            else:
                sbs.append(sb)
        arr = running.get(hex_uuid(entry.uuid))
        if arr is None:
            if sbs and entry.uuid:
                strays.append(StrayArray(entry.uuid, entry.name, entry.level, tuple(sbs)))
            continue
        for sb in sbs:
            if arr.member(sb.device) is not None:
                members[sb.device] = sb
            else:
                outside.setdefault(arr.name, []).append(sb)
    return Superblocks(
        members,
        {k: tuple(v) for k, v in outside.items()},
        tuple(strays),
        tuple(notes),
    )


def events_text(sb: Superblock, array_events: int | None) -> str:
    """ "events 1234 (array 1240: 6 behind)", "events 1240 (current)", "events unknown"."""
    if sb.events is None:
        return "events unknown"
    behind = sb.behind(array_events)
    if behind is None:
        return f"events {sb.events}"
    if behind == 0:
        return f"events {sb.events} (current)"
    return f"events {sb.events} (array {array_events}: {behind} behind)"


def superblock_json(sb: Superblock, array_events: int | None) -> dict[str, Any]:
    """One superblock as ``report --json`` gives it (text escaped: it comes from the disk)."""
    return {
        "device": sb.device,
        "array_uuid": sb.array_uuid,
        "name": None if sb.name is None else escape_controls(sb.name),
        "level": sb.level,
        "events": sb.events,
        "array_events": array_events,
        "events_behind": sb.behind(array_events),
        "update_time": sb.update_time,
        "device_role": sb.device_role,
        "array_state": sb.array_state,
        "bitmap": sb.bitmap,
        "recovery_offset_sectors": sb.recovery_offset_sectors,
        "bad_blocks": sb.bad_blocks,
        "metadata": sb.metadata,
    }


def add_superblocks_json(report: dict[str, Any], sbs: Superblocks, machine: Machine) -> None:
    """``arrays[].members[].superblock`` (None where unread), ``arrays[].outside`` (devices with
    the array's superblock it does not list: re-add candidates) and ``stray_superblocks``."""
    for a in report.get("arrays", []):
        ev = sbs.array_events(machine, a["name"])
        for m in a.get("members", []):
            sb = sbs.members.get(m["device"])
            m["superblock"] = None if sb is None else superblock_json(sb, ev)
        a["outside"] = [superblock_json(sb, ev) for sb in sbs.outside.get(a["name"], ())]
    report["stray_superblocks"] = [
        {
            "uuid": s.uuid,
            "name": None if s.name is None else escape_controls(s.name),
            "level": s.level,
            "events": s.events,
            "devices": [superblock_json(sb, s.events) for sb in s.devices],
        }
        for s in sbs.strays
    ]
    report.setdefault("notes", []).extend(
        {"source": "mdadm --examine", "message": escape_controls(n), "severity": "info"}
        for n in sbs.notes
    )


def superblock_lines(sbs: Superblocks, machine: Machine) -> list[str]:
    """The report's text: each member's events against its array's, devices outside their
    array, and the arrays not assembled (with the plan that would start them)."""
    out: list[str] = []
    for a in machine.arrays:
        ev = sbs.array_events(machine, a.name)
        for m in a.members_by_slot:
            sb = sbs.members.get(m.device)
            if sb is not None:
                out.append(f"  {a.name} {m.device}: {events_text(sb, ev)}")
        for sb in sbs.outside.get(a.name, ()):
            dev = escape_controls(sb.device)
            out.append(
                f"  {a.name} {dev} (not in the array): {events_text(sb, ev)}"
                f" (raidman plan member re-add --array {a.name} --device {dev})"
            )
    for s in sbs.strays:  # names and UUIDs from the disks: shown escaped
        devs = escape_controls(", ".join(sb.device for sb in s.devices))
        name = escape_controls(s.name or "?")
        uuid = escape_controls(s.uuid)
        out.append(
            f"  {devs} carries a superblock of array {uuid[:8]}… ({name}): not assembled "
            f"(raidman plan assemble --array {uuid})"
        )
    return out
