"""``wipefs``: list (plain or --json) and erase signatures."""

from __future__ import annotations

import json
from collections.abc import Sequence

from backends.simulated.programs.argv import Result, split_opts
from backends.simulated.programs.devices import busy_reason, resolve, signatures
from backends.simulated.state import SimState


def wipefs(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    flags = {"a": "all", "n": "no-act", "f": "force", "q": "quiet", "J": "json", "all": "all",
             "no-act": "no-act", "force": "force", "quiet": "quiet", "json": "json"}  # fmt: skip
    parsed = split_opts(list(args), {"t": "types", "o": "offset"}, flags)
    if isinstance(parsed, str):
        return 1, "", f"wipefs: {parsed}\n"
    opts, pos = parsed
    keys = {k for k, _ in opts}
    if not pos:
        return 1, "", "wipefs: no device specified\n"
    out = ""
    for p in pos:
        dev = resolve(st, p)
        if dev is None:
            return (
                1,
                out,
                f"wipefs: error: {p}: probing initialization failed: No such file or directory\n",
            )
        sigs = signatures(st, dev)
        if "all" not in keys or "no-act" in keys:
            if "all" in keys:
                for off, typ, _u, _l in sigs:
                    out += f"{p}: {_sig_len(typ)} bytes were erased at offset {off} ({typ}): {_sig_magic(typ)}\n"
            elif sigs and "json" in keys:
                out += _wipefs_json(dev, sigs)
            elif sigs:
                short = dev
                out += (
                    "DEVICE OFFSET TYPE              UUID                                 LABEL\n"
                )
                for off, typ, uuid, label in sigs:
                    out += f"{short:<6} {off:<6} {typ:<17} {uuid:<36} {label}\n"
            continue
        if busy_reason(st, dev) and "force" not in keys:
            return (
                1,
                out,
                f"wipefs: error: {p}: probing initialization failed: Device or resource busy\n",
            )
        for off, typ, _u, _l in sigs:
            out += f"{p}: {_sig_len(typ)} bytes were erased at offset {off} ({typ}): {_sig_magic(typ)}\n"
        st.md_superblocks.pop(dev, None)
        st.filesystems.pop(dev, None)
        st.pvs.pop(dev, None)
        d = st.disks.get(dev)
        if d is not None and d.partition_table:
            d.partition_table = None
            d.ptuuid = None
            for pn in [n for n, p_ in st.partitions.items() if p_.disk == dev]:
                del st.partitions[pn]
            out += f"{p}: calling ioctl to re-read partition table: Success\n"
        st.touch()
    return 0, out, ""


def _wipefs_json(dev: str, sigs: list[tuple[str, str, str, str]]) -> str:
    """``wipefs --json``'s shape (util-linux): one object per signature, empty fields as null;
    with no signatures wipefs prints nothing at all."""
    rows = [
        {"device": dev, "offset": off, "type": typ, "uuid": uuid or None, "label": label or None}
        for off, typ, uuid, label in sigs
    ]
    return json.dumps({"signatures": rows}, indent=3) + "\n"


def _sig_len(typ: str) -> int:
    return {"linux_raid_member": 4, "LVM2_member": 8, "ext4": 2, "xfs": 4, "gpt": 8,
            "PMBR": 2, "vfat": 8, "swap": 10, "isw_raid_member": 32}.get(typ, 4)  # fmt: skip


def _sig_magic(typ: str) -> str:
    return {"linux_raid_member": "fc 4e 2b a9", "LVM2_member": "4c 56 4d 32 20 30 30 31",
            "ext4": "53 ef", "xfs": "58 46 53 42", "gpt": "45 46 49 20 50 41 52 54",
            "PMBR": "55 aa"}.get(typ, "00 00 00 00")  # fmt: skip
