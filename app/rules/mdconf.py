"""ARRAY lines of mdadm.conf and ``mdadm --detail --scan`` (the few fields the audit needs).

Format (mdadm.conf(5))::

    DEVICE partitions
    ARRAY /dev/md/raid10 metadata=1.2 name=host:raid10 UUID=3aaf6c4e:4e6fe9d5:9bb0d6a3:2f6c1d0e
    ARRAY /dev/md0 level=raid1 num-devices=2
       UUID=...            <- a line starting with white space continues the previous one
    ARRAY metadata=imsm UUID=...          (a container: no device name)
    ARRAY /dev/md/vol0 container=/dev/md/imsm0 member=0 UUID=...

Parsing is ``app.parsers.mdadm.parse_scan``'s; this module adds what the audit compares with.
"""

from __future__ import annotations

from app.plans.builders.mdconf_edit import norm_uuid

__all__ = ["devname_kernel", "norm_uuid"]


def devname_kernel(devname: str | None) -> str | None:
    """The kernel name an ARRAY device name pins down, if it pins one: /dev/md0 -> md0,
    /dev/md/3 -> md3, /dev/md3 -> md3; /dev/md/raid10 -> None (any mdN may carry that link)."""
    if not devname:
        return None
    if devname.startswith("/dev/md/"):
        rest = devname[len("/dev/md/") :]
        return f"md{rest}" if rest.isdigit() else None
    if devname.startswith("/dev/md") and devname[len("/dev/md") :].isdigit():
        return devname[len("/dev/") :]
    return None
