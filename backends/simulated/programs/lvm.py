"""LVM: ``pvcreate``, ``vgcreate``, ``lvcreate`` and ``lvm config``."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence

from backends.simulated.programs.argv import Result, parse_size, split_opts
from backends.simulated.programs.devices import busy_reason, io_hints, resolve, signatures
from backends.simulated.records import SimLV, SimPV, SimVG
from backends.simulated.state import SimState


def pvcreate(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(list(args), {"dataalignment": "dataalignment", "metadatasize": "metadatasize"},
                        {"f": "force", "y": "yes", "v": "verbose", "q": "quiet"})  # fmt: skip
    if isinstance(parsed, str):
        return 3, "", f"  {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if not pos:
        return 3, "", "  Please enter a physical volume path.\n"
    out = ""
    for p in pos:
        dev = resolve(st, p)
        if dev is None:
            return 5, out, f"  No device found for {p}.\n"
        if dev in st.pvs:
            return (
                5,
                out,
                f'  Can\'t initialize physical volume "{p}" of volume group "{st.pvs[dev].vg}" without -ff\n'
                if st.pvs[dev].vg
                else f'  Physical volume "{p}" already exists\n',
            )
        if busy_reason(st, dev):
            return 5, out, f"  Cannot use {p}: device is in use ({busy_reason(st, dev)})\n"
        sigs = [s for s in signatures(st, dev) if s[1] not in ("PMBR",)]
        if (
            sigs
            and "force" not in od
            and "yes" not in od
            and not (stdin or "").strip().lower().startswith("y")
        ):
            return (
                5,
                f"WARNING: {sigs[0][1]} signature detected on {p} at offset {int(sigs[0][0], 16)}. Wipe it? [y/n]: [n]\n",
                f"  Aborted wiping of {sigs[0][1]}.\n  1 existing signature left on the device.\n",
            )
        st.filesystems.pop(dev, None)
        st.md_superblocks.pop(dev, None)
        align = 1 << 20
        if od.get("dataalignment"):
            align = parse_size(str(od["dataalignment"]), "k") or align
        else:
            _mn, opt = io_hints(st, dev)
            if opt:
                align = math.lcm(align, opt) if (1 << 20) % opt else align
                if opt > (1 << 20):
                    align = opt
        size = st.device_size(dev) or 0
        st.pvs[dev] = SimPV(dev, None, size, st.new_uuid("pv" + dev), pe_start=align)
        st.touch()
        out += f'  Physical volume "{p}" successfully created.\n'
    return 0, out, ""


def vgcreate(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(list(args), {"s": "physicalextentsize", "physicalextentsize": "physicalextentsize"},
                        {"y": "yes", "f": "force", "v": "verbose"})  # fmt: skip
    if isinstance(parsed, str):
        return 3, "", f"  {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if len(pos) < 2:
        return 3, "", "  Please enter a volume group name and physical volumes.\n"
    vg = pos[0]
    if not re.fullmatch(r"[A-Za-z0-9+_.][A-Za-z0-9+_.-]*", vg):
        return 3, "", f'  Volume group name "{vg}" has invalid characters.\n'
    if vg in st.vgs:
        return 5, "", f"  A volume group called {vg} already exists.\n"
    ext = 4 << 20
    if od.get("physicalextentsize"):
        e = parse_size(str(od["physicalextentsize"]), "m")
        if e is None or e < 4096 or e & (e - 1):
            return 3, "", f"  Invalid physical extent size {od['physicalextentsize']}\n"
        ext = e
    devs = []
    out = ""
    for p in pos[1:]:
        dev = resolve(st, p)
        if dev is None:
            return 5, "", f"  No device found for {p}.\n"
        if dev in st.pvs and st.pvs[dev].vg:
            return 5, "", f"  Physical volume '{p}' is already in volume group '{st.pvs[dev].vg}'\n"
        devs.append((p, dev))
    for p, dev in devs:
        if dev not in st.pvs:
            rc, o, perr = pvcreate(st, [p], stdin)
            if rc:
                return rc, out + o, perr
            out += o
    st.vgs[vg] = SimVG(vg, st.new_uuid("vg" + vg), ext)
    for _p, dev in devs:
        st.pvs[dev].vg = vg
    st.touch()
    return 0, out + f'  Volume group "{vg}" successfully created\n', ""


def vg_free_extents(st: SimState, vg: str) -> int:
    v = st.vgs[vg]
    total = sum(
        (pv.size_bytes - pv.pe_start) // v.extent_size for pv in st.pvs.values() if pv.vg == vg
    )
    used = sum(-(-lv.size_bytes // v.extent_size) for lv in st.lvs.values() if lv.vg == vg)
    return total - used


def lvcreate(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(
        list(args),
        {"L": "size", "size": "size", "l": "extents", "extents": "extents", "n": "name",
         "name": "name", "i": "stripes", "stripes": "stripes", "I": "stripesize",
         "stripesize": "stripesize", "type": "type"},
        {"y": "yes", "W": "wipesignatures", "Z": "zero", "a": "activate", "v": "verbose"},
    )  # fmt: skip
    if isinstance(parsed, str):
        return 3, "", f"  {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if not pos:
        return 3, "", "  Please provide a volume group name\n"
    vg = pos[0].split("/")[0]
    if vg not in st.vgs:
        return 5, "", f'  Volume group "{vg}" not found\n  Cannot process volume group {vg}\n'
    name = od.get("name")
    if not name:
        k = 0
        while f"{vg}/lvol{k}" in st.lvs:
            k += 1
        name = f"lvol{k}"
    if f"{vg}/{name}" in st.lvs:
        return 5, "", f'  Logical Volume "{name}" already exists in volume group "{vg}"\n'
    v = st.vgs[vg]
    free = vg_free_extents(st, vg)
    if (od.get("size") is None) == (od.get("extents") is None):
        return 3, "", "  Please specify either size or extents but not both.\n"
    if od.get("size") is not None:
        sz = parse_size(str(od["size"]), "m")
        if sz is None or sz <= 0:
            return 3, "", f"  Invalid argument for --size: {od['size']}\n"
        extents = -(-sz // v.extent_size)
    else:
        text = str(od["extents"])
        m = re.fullmatch(r"(\d+)(?:%(FREE|VG|PVS))?", text, re.IGNORECASE)
        if not m:
            return 3, "", f"  Invalid argument for --extents: {text}\n"
        num = int(m.group(1))
        if m.group(2):
            base = (
                free
                if m.group(2).upper() == "FREE"
                else free
                + sum(-(-lv.size_bytes // v.extent_size) for lv in st.lvs.values() if lv.vg == vg)
            )
            extents = base * num // 100
        else:
            extents = num
    if extents <= 0 or extents > free:
        return (
            5,
            "",
            f'  Volume group "{vg}" has insufficient free space ({free} extents): {extents} required.\n',
        )
    pvs = [pv.device for pv in st.pvs.values() if pv.vg == vg]
    try:
        stripes = int(str(od["stripes"])) if od.get("stripes") else None
    except ValueError:
        return 3, "", f"  Invalid argument for --stripes: {od['stripes']}\n"
    stripe_size = parse_size(str(od["stripesize"]), "k") if od.get("stripesize") else None
    if stripes and stripes > len(pvs):
        return (
            5,
            "",
            f"  Number of stripes ({stripes}) must not exceed number of physical volumes ({len(pvs)})\n",
        )
    devices = tuple(pvs[:stripes]) if stripes else (pvs[0],)
    lv = SimLV(name, vg, extents * v.extent_size, st.next_dm(), st.new_uuid("lv" + name), devices,
               segtype="striped" if stripes and stripes > 1 else "linear", stripes=stripes,
               stripe_size=(stripe_size or 64 * 1024) if stripes else None)  # fmt: skip
    st.lvs[f"{vg}/{name}"] = lv
    st.touch()
    return 0, f'  Logical volume "{name}" created.\n', ""


def lvm_config(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    known = {
        "devices/md_component_detection": "1", "devices/md_chunk_alignment": "1",
        "devices/data_alignment_detection": "1", "devices/data_alignment": "0",
        "devices/data_alignment_offset_detection": "1", "devices/issue_discards": "0",
        "allocation/raid_stripe_all_devices": "0", "activation/raid_region_size": "2048",
        "devices/default_data_alignment": "1", "activation/raid_fault_policy": '"warn"',
        "activation/monitoring": "1",
    }  # fmt: skip
    if not args or args[0] not in ("config", "dumpconfig"):
        return 3, "", f"  lvm: unsupported command in the simulation: {' '.join(args)}\n"
    keys = [a for a in args[1:] if not a.startswith("-") and "/" in a]
    if not keys:
        return 0, "".join(f"{k}={v}\n" for k, v in known.items()), ""
    out = ""
    for k in keys:
        if k not in known:
            return 5, out, f"  Configuration node {k} not found\n"
        out += f"{k.split('/')[-1]}={known[k]}\n"
    return 0, out, ""
