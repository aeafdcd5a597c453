"""``mdadm --detail``'s text for one array."""

from __future__ import annotations

from app.model import levels
from backends.simulated.records import SimArray
from backends.simulated.state import SimState


def md_detail(st: SimState, a: SimArray, path: str) -> str:
    lines = [f"{path}:"]
    if a.level == "container":
        lines += [
            f"           Version : {a.metadata.split(':', 1)[1]}",
            "        Raid Level : container",
            f"     Total Devices : {len(a.members)}",
            "",
            f"              UUID : {a.uuid}",
            f"     Member Arrays : {' '.join('/dev/' + x.name for x in st.arrays.values() if x.container == a.name)}",
            "",
            "    Number   Major   Minor   RaidDevice",
            "",
        ]
        lines += [f"       -       8       0        -        /dev/{m.device}" for m in a.members]
        return "\n".join(lines) + "\n"
    job = a.job
    state = a.array_state
    extra = []
    if a.degraded():
        extra.append("degraded")
    if job is not None:
        extra.append({"recover": "recovering", "resync": "resyncing", "check": "checking",
                      "repair": "repairing", "reshape": "reshaping"}[job.action])  # fmt: skip
    lines += [
        f"           Version : {a.metadata}",
        f"        Raid Level : {a.level}",
        f"        Array Size : {a.size_kib()} ({a.size_kib() / 1048576:.2f} GiB {a.size_kib() * 1024 / 1e9:.2f} GB)",
        f"     Used Dev Size : {a.component_kib} ({a.component_kib / 1048576:.2f} GiB {a.component_kib * 1024 / 1e9:.2f} GB)",
        f"      Raid Devices : {a.raid_disks}",
        f"     Total Devices : {len(a.members)}",
        "       Persistence : Superblock is persistent",
        "",
        f"     Intent Bitmap : {'Internal' if a.bitmap == 'internal' else a.bitmap or 'none'}",
        "",
        f"             State : {', '.join([state, *extra])}",
        f"    Active Devices : {len(a.in_sync_slots())}",
        f"   Working Devices : {sum(1 for m in a.members if 'faulty' not in m.state)}",
        f"    Failed Devices : {sum(1 for m in a.members if 'faulty' in m.state)}",
        f"     Spare Devices : {sum(1 for m in a.members if 'spare' in m.state)}",
        "",
    ]
    if a.level == "raid10":
        kind = {"n": "near", "f": "far", "o": "offset"}[(a.layout or "n2")[0]]
        lines.append(f"            Layout : {kind}={a.copies}")
    elif a.level in levels.PARITY:
        lines.append(f"            Layout : {a.layout}")
    if a.chunk_kib:
        lines.append(f"        Chunk Size : {a.chunk_kib}K")
    lines.append("")
    lines.append(f"Consistency Policy : {'bitmap' if a.bitmap else 'resync'}")
    if job is not None:
        pct = int(100 * job.pos / max(1, job.total))
        label = {"recover": "Rebuild Status", "reshape": "Reshape Status"}.get(
            job.action, "Resync Status"
        )
        lines += ["", f"    {label} : {pct}% complete"]
    lines += [
        "",
        f"              Name : {a.array_name}",
        f"              UUID : {a.uuid.replace('-', '')[:8]}:{a.uuid.replace('-', '')[8:16]}:{a.uuid.replace('-', '')[16:24]}:{a.uuid.replace('-', '')[24:]}",
        "",
        "    Number   Major   Minor   RaidDevice State",
    ]
    for m in sorted(a.members, key=lambda m: (m.slot is None, m.slot or 0, m.desc_nr)):
        if "faulty" in m.state:
            word = "faulty"
        elif "replacement" in m.state or ("spare" in m.state and m.slot is not None):
            word = "spare rebuilding"
        elif "spare" in m.state:
            word = "spare"
        else:
            word = "active sync"
        slot = "-" if m.slot is None else str(m.slot)
        lines.append(
            f"    {m.desc_nr:5d}     8      {m.desc_nr * 16:3d}    {slot:>5}      {word}   /dev/{m.device}"
        )
    return "\n".join(lines) + "\n"
