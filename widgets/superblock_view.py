"""Member superblocks in the detail pane: events against the array's, shown where they decide
something (a member behind, a device outside its array: re-add or add) -- ``app.plans.superblocks``
reads them through the backend in the app's audit worker."""

from __future__ import annotations

from rich.text import Text

from app.escape import escape_controls
from app.model import Machine, MdArray
from app.plans.superblocks import Superblocks, events_text


def behind_any(machine: Machine, a: MdArray, sbs: Superblocks | None) -> bool:
    """Some member's or outside device's superblock is behind the array's events."""
    if sbs is None:
        return False
    ev = sbs.array_events(machine, a.name)
    mine = [sbs.members[m.device] for m in a.members if m.device in sbs.members]
    return bool(sbs.outside.get(a.name)) or any((s.behind(ev) or 0) > 0 for s in mine)


def member_events(machine: Machine, a: MdArray, sbs: Superblocks | None, device: str) -> str:
    """The member table's "superblock" cell: "events 1234 (array 1240: 6 behind)"."""
    sb = sbs.members.get(device) if sbs is not None else None
    return "—" if sb is None or sbs is None else events_text(sb, sbs.array_events(machine, a.name))


def outside_lines(machine: Machine, a: MdArray, sbs: Superblocks | None) -> list[Text]:
    """Devices carrying this array's superblock that it does not list (failed and removed)."""
    if sbs is None:
        return []
    ev = sbs.array_events(machine, a.name)
    out = []
    for sb in sbs.outside.get(a.name, ()):
        t = Text(f"{escape_controls(sb.device)} carries {a.name}'s superblock, not in the array: ")
        t.append(events_text(sb, ev), "yellow")
        role = f" (was {sb.device_role})" if sb.device_role else ""
        t.append(escape_controls(role), "bright_black")
        t.append(
            f" — re-add: raidman plan member re-add --array {a.name} --device ", "bright_black"
        )
        t.append(escape_controls(sb.device), "bright_black")
        out.append(t)
    return out


def stray_lines(sbs: Superblocks | None) -> list[Text]:
    """ "sdc1 carries a superblock of array 3f…: not assembled"."""
    if sbs is None:
        return []
    out = []
    for s in sbs.strays:
        devs = ", ".join(escape_controls(x.device) for x in s.devices)
        name = escape_controls(s.name or "no name")
        t = Text(f"{devs} carries a superblock of array {escape_controls(s.uuid[:8])}… ({name}): ")
        t.append("not assembled", "yellow")
        t.append(f" — raidman plan assemble --array {escape_controls(s.uuid)}", "bright_black")
        out.append(t)
    return out
