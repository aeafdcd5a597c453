"""dm-crypt (LUKS) on md: the encrypted data must start on a chunk boundary of the array below.

The LUKS header sits in front of the data; its data offset (``dmsetup table``'s offset, 512-byte
sectors) shifts every block above it. Article 003 (/work/shared/seeds/003_*.txt) walks through
the same question for partitions and LVM under LUKS; on md an offset that is not a multiple of
the chunk splits filesystem blocks and stripes across members.
"""

from __future__ import annotations

from collections.abc import Iterator

from app.model.devices import Machine
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs
from app.rules.stack import array_below, human, striped_geometry


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    for c in machine.crypts:
        t = inputs.crypt_tables.get(c.kernel_name)
        if t is None:
            continue
        offset = t.offset_sectors * 512
        a = array_below(machine, c.backing)
        geo = striped_geometry(a) if a is not None else None
        if geo is None or a is None:
            if offset % 4096 == 0:
                continue
            unit, what = 4096, "4 KiB (the physical sector of modern disks)"
        else:
            if offset % geo[0] == 0:
                continue
            unit, what = geo[0], f"{a.name}'s {human(geo[0])} chunk"
        yield Finding(
            "warning",
            "luks-data-offset",
            c.kernel_name,
            f"{c.name}: LUKS data offset {human(offset)} is not aligned",
            f"The encrypted data of {c.name} ({c.type or 'dm-crypt'}, /dev/{c.kernel_name}) "
            f"starts {offset} bytes into /dev/{c.backing}, not a multiple of {what} "
            f"({offset} mod {unit} = {offset % unit}). Every block above is shifted by that "
            "much. Only re-encrypting or re-creating the LUKS volume with an aligned "
            "--offset/--align-payload moves it; no one-key fix is offered.",
            fix_destroys_data=True,
        )
