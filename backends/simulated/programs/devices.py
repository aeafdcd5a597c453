"""Device names and what holds a device, as the simulated programs see them."""

from __future__ import annotations

from app.model import levels
from backends.simulated.state import SimState


def resolve(st: SimState, path: str) -> str | None:
    if not path.startswith("/dev/"):
        return None
    rest = path[5:]
    if rest.startswith("md/"):
        nm = rest[3:]
        for a in st.arrays.values():
            if a.array_name and a.array_name.split(":")[-1] == nm:
                return a.name
        if f"md{nm}" in st.arrays:
            return f"md{nm}"
        return None
    if rest.startswith("mapper/"):
        for lv in st.lvs.values():
            if f"{lv.vg.replace('-', '--')}-{lv.name.replace('-', '--')}" == rest[7:]:
                return lv.kernel_name
        return None
    if rest in st.disks or rest in st.partitions or rest in st.arrays:
        return rest
    if "/" in rest:
        v = st.lvs.get(rest)
        return v.kernel_name if v else None
    found = st.lv_by_kernel(rest)
    return found.kernel_name if found else None


def signatures(st: SimState, dev: str) -> list[tuple[str, str, str, str]]:
    """(offset, type, uuid, label) rows as ``wipefs`` prints them."""
    out: list[tuple[str, str, str, str]] = []
    for a in st.arrays.values():
        if a.member(dev) is not None and not a.metadata.startswith("external:/"):
            if a.metadata.startswith("external:imsm"):
                out.append(("0x0", "isw_raid_member", "", ""))
            else:
                out.append(("0x1000", "linux_raid_member", a.uuid, a.array_name or ""))
            break
    else:
        if dev in st.md_superblocks:
            uuid, label = st.md_superblocks[dev]
            out.append(("0x1000", "linux_raid_member", uuid, label))
    if dev in st.pvs:
        out.append(("0x218", "LVM2_member", st.pvs[dev].uuid, ""))
    fs = st.filesystems.get(dev)
    if fs is not None:
        off = {"ext4": "0x438", "xfs": "0x0", "vfat": "0x36", "swap": "0xff6"}.get(fs.fstype, "0x0")
        out.append((off, fs.fstype, fs.uuid, fs.label or ""))
    d = st.disks.get(dev)
    if d is not None and d.partition_table:
        out.append(("0x200", d.partition_table, d.ptuuid or "", ""))
        out.append(("0x1fe", "PMBR", "", ""))
    return out


def busy_reason(st: SimState, dev: str) -> str | None:
    """Why ``dev`` cannot be used for a new array/PV/filesystem, or None."""
    for a in st.arrays.values():
        if a.member(dev) is not None:
            return f"member of {a.name}"
    if dev in st.pvs:
        return "an LVM physical volume"
    fs = st.filesystems.get(dev)
    if fs is not None and fs.mountpoints:
        return f"mounted on {fs.mountpoints[0]}"
    for p in st.partitions.values():
        if p.disk == dev and busy_reason(st, p.name):
            return f"holds {p.name}"
    if dev in st.arrays:
        for lv in st.lvs.values():
            if dev in lv.devices:
                return "holds an active volume group"
    return None


def io_hints(st: SimState, dev: str) -> tuple[int, int]:
    """(minimum_io_size, optimal_io_size) as the block layer stacks them."""
    if dev in st.disks:
        d = st.disks[dev]
        return d.min_io, d.optimal_io
    if dev in st.partitions:
        return io_hints(st, st.partitions[dev].disk)
    a = st.arrays.get(dev)
    if a is not None:
        chunk = a.chunk_kib * 1024
        opt = levels.optimal_io_bytes(a.level, a.raid_disks, chunk, a.layout)
        if not opt:
            return 512, 0
        return chunk, opt
    lv = st.lv_by_kernel(dev)
    if lv is not None and lv.devices:
        if lv.stripes and lv.stripe_size:
            return lv.stripe_size, lv.stripe_size * lv.stripes
        return io_hints(st, lv.devices[0])
    return 512, 0
