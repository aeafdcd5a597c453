"""ARRAY lines of mdadm.conf and ``mdadm --detail --scan`` (the few fields the audit needs).

Format (mdadm.conf(5))::

    DEVICE partitions
    ARRAY /dev/md/raid10 metadata=1.2 name=host:raid10 UUID=3aaf6c4e:4e6fe9d5:9bb0d6a3:2f6c1d0e
    ARRAY /dev/md0 level=raid1 num-devices=2
       UUID=...            <- a line starting with white space continues the previous one
    ARRAY metadata=imsm UUID=...          (a container: no device name)
    ARRAY /dev/md/vol0 container=/dev/md/imsm0 member=0 UUID=...

This is a local reader until ``app.parsers.mdadm.parse_scan`` exists; the record has the same
field names (devname, uuid, name, metadata, container, member).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class MdConfArray:
    devname: str | None
    uuid: str | None = None
    name: str | None = None
    metadata: str | None = None
    container: str | None = None
    member: str | None = None
    line: str = ""  # the ARRAY entry as one line (continuations joined)


def norm_uuid(uuid: str | None) -> str | None:
    """Compare md UUIDs across their spellings (mdadm ``a:b:c:d``, sysfs/blkid ``a-b-...``)."""
    if not uuid:
        return None
    u = uuid.replace(":", "").replace("-", "").strip().lower()
    return u or None


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


def parse_array_lines(text: str) -> tuple[MdConfArray, ...]:
    """Every ARRAY entry of mdadm.conf or ``mdadm --detail --scan`` output. Never raises."""
    entries: list[list[str]] = []
    current: list[str] | None = None
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].rstrip()
        if not line.strip():
            continue
        if raw[:1].isspace():
            if current is not None:
                current.extend(line.split())
            continue
        words = line.split()
        if words[0].upper() == "ARRAY":
            current = words[1:]
            entries.append(current)
        else:
            current = None
    out: list[MdConfArray] = []
    for words in entries:
        devname: str | None = None
        kv: dict[str, str] = {}
        for w in words:
            if "=" in w:
                k, _, v = w.partition("=")
                kv[k.lower()] = v
            elif devname is None and w != "<ignore>":
                devname = w
        out.append(
            MdConfArray(
                devname=devname,
                uuid=kv.get("uuid"),
                name=kv.get("name"),
                metadata=kv.get("metadata"),
                container=kv.get("container"),
                member=kv.get("member"),
                line="ARRAY " + " ".join(words),
            )
        )
    return tuple(out)
