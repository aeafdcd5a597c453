"""/proc/mdstat of a SimState, as md.c's md_seq_show() and status_resync() write it."""

from __future__ import annotations

from app.model import levels, md_names
from backends.simulated.records import ReshapeFrom, SimArray
from backends.simulated.state import SimState


def layout_number(a: SimArray, old: ReshapeFrom | None = None) -> int:
    """md/layout's number; of the geometry a reshape leaves where ``old`` is given."""
    level, layout = (old.level, old.layout) if old is not None else (a.level, a.layout)
    if level == "raid10":
        return levels.raid10_layout(layout).number
    if level in levels.PARITY:
        number = md_names.parity_layout_number(level, layout)
        return 2 if number is None else number
    if level == "raid0":  # mdadm 4.2 --create leaves a one-zone RAID-0's layout unset (VM: -1)
        return -1
    return 0


def progress_lines(st: SimState, a: SimArray) -> str:
    job = a.job
    if job is None:
        return ""
    if job.frozen:
        return "      resync=PENDING\n" if job.pos == 0 else ""
    if job.waiting:  # md.c status_resync(): "resync=DELAYED" whatever the action
        return "      resync=DELAYED\n"
    res = int(job.pos)
    maxs = job.total
    per_milli = res * 1000 // maxs if maxs else 0
    x = per_milli // 50
    bar = "[" + "=" * x + ">" + "." * (20 - x) + "]"
    label = {
        "reshape": "reshape",
        "check": "check",
        "resync": "resync",
        "repair": "resync",
        "recover": "recovery",
    }[job.action]
    speed = st.reported_speed(a) or 0
    left_kib = (maxs - res) // 2
    rt = int(left_kib / speed) if speed > 0 else 0
    return (
        f"      {bar}  {label} ={per_milli // 10:3d}.{per_milli % 10}% ({res // 2}/{maxs // 2})"
        f" finish={rt // 60}.{(rt % 60) // 6}min speed={speed}K/sec\n"
    )


def render_array(st: SimState, a: SimArray) -> str:
    parts = []
    for m in reversed(a.members):
        suffix = ""
        if "write_mostly" in m.state:
            suffix += "(W)"
        if "journal" in m.state:  # md.c md_seq_show; a journal has raid_disk 0, so no (S)
            parts.append(f"{m.device}[{m.desc_nr}]{suffix}(J)")
            continue
        if "faulty" in m.state:
            suffix += "(F)"
        elif "replacement" in m.state:
            suffix += "(R)"
        elif a.level == "container" or m.slot is None:
            suffix += "(S)"
        parts.append(f"{m.device}[{m.desc_nr}]{suffix}")
    if a.level == "container":
        head = f"{a.name} : inactive " + " ".join(parts)
        body = f"      {a.size_kib()} blocks super {a.metadata}\n"
        return head + "\n" + body + "\n"
    state = (
        "active" if a.array_state not in ("read-auto", "readonly") else "active (auto-read-only)"
    )
    head = f"{a.name} : {state} {a.level} " + " ".join(parts)
    meta = a.metadata
    if meta.startswith("external:"):
        super_s = f" super {meta}"
    elif meta in ("0.90", "0.9"):
        super_s = ""
    else:
        super_s = f" super {meta}"
    line2 = f"      {a.size_kib()} blocks{super_s}"
    slots = a.in_sync_slots()
    status = "".join("U" if i in slots else "_" for i in range(a.raid_disks))
    counts = f" [{a.raid_disks}/{len(slots)}] [{status}]"
    if a.level == "raid10":
        if a.copies < a.raid_disks or (a.layout or "n")[0] != "n":
            line2 += f" {a.chunk_kib}K chunks"
        kind = (a.layout or "n2")[0]
        word = {"n": "near-copies", "f": "far-copies", "o": "offset-copies"}[kind]
        line2 += f" {a.copies} {word}" + counts
    elif a.level in levels.PARITY:
        line2 += (
            f" level {a.level[4:]}, {a.chunk_kib}k chunk, algorithm {layout_number(a)}" + counts
        )
    elif a.level == "raid1":
        line2 += counts
    elif a.level == "raid0":
        line2 += f" {a.chunk_kib}k chunks"
    elif a.level == "linear":
        line2 += f" {a.chunk_kib}k rounding"
    out = head + "\n" + line2 + "\n" + progress_lines(st, a)
    if a.bitmap == "internal":
        chunk_kib = 65536
        pages = max(1, -(-(a.component_kib // chunk_kib) // 2048))  # 2048 16-bit counters/page
        dirty = 0 if a.job is None else min(pages, 1 + pages // 4)
        out += f"      bitmap: {dirty}/{pages} pages [{dirty * 4}KB], {chunk_kib}KB chunk\n"
    return out + "\n"


def render_mdstat(st: SimState) -> str:
    present = {a.level for a in st.arrays.values()}
    if present & levels.PARITY:
        present |= levels.PARITY  # one module (raid456) registers all three
    pers = [p for p in md_names.MDSTAT_PERSONALITY_ORDER if p in present]
    head = "Personalities : " + "".join(f"[{p}] " for p in pers) + "\n"
    body = "".join(render_array(st, a) for a in sorted_arrays(st))
    return head + body + "unused devices: <none>\n"


def sorted_arrays(st: SimState) -> list[SimArray]:
    # the kernel lists the most recently started array first
    return sorted(st.arrays.values(), key=lambda a: (-a.creation_time, a.name))
