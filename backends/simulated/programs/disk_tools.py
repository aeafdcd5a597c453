"""The programs a disk's arrival and departure run, on a simulated disk, in simulated time (each
ends at once, saying what the real one would have taken):

* ``ls -1 /sys/block/D/device`` and ``readlink -f`` of its ``enclosure_device:SLOT`` link (the
  kernel's enclosure class, drivers/misc/enclosure.c ``enclosure_add_links``); the slot's
  attributes are files of the state (``add_enclosure``);
* ``ledctl`` (only where the scenario has ledmon: ``SimState.ledctl``);
* ``hdparm -I`` (its Security section), ``--security-set-pass``, ``--security-erase[-enhanced]``;
* ``nvme id-ctrl -o json``, ``device-self-test ... --wait``, ``sanitize``, ``sanitize-log``,
  ``format --ses``;
* ``sg_sanitize``, ``sg_requests``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence

from backends.simulated import selftest
from backends.simulated.programs.argv import Result
from backends.simulated.programs.devices import busy_reason, resolve
from backends.simulated.records import SimDisk
from backends.simulated.smart import smart_counters
from backends.simulated.state import SimState

ENCLOSURE_HOST = "/sys/devices/pci0000:00/0000:00:17.0/host0/port-0:0/expander-0:0/end_device-0:0:6"
ATTRS = ("locate", "fault", "slot", "status", "type", "active")


def add_enclosure(st: SimState, enclosure: str, slots: dict[str, tuple[str, int]]) -> None:
    """Put the disks ``slots`` (disk -> (component name, slot number)) in the enclosure."""
    for disk, (component, number) in slots.items():
        st.disks[disk].enclosure = (enclosure, component, number)
        base = f"/sys/class/enclosure/{enclosure}/{component}"
        values = {"locate": "0", "fault": "0", "slot": str(number), "status": "OK",
                  "type": "array device", "active": "0"}  # fmt: skip
        for attr in ATTRS:
            st.files[f"{base}/{attr}"] = values[attr] + "\n"


def _device_dir(d: SimDisk) -> list[str]:
    out = ["block", "delete", "device_blocked", "model", "rescan", "state", "timeout", "vendor"]
    if d.enclosure is not None:
        out.append(f"enclosure_device:{d.enclosure[1]}")
    return sorted(out)


def ls(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    paths = [a for a in args if not a.startswith("-")]
    out = ""
    for p in paths:
        parts = p.rstrip("/").split("/")
        if len(parts) == 5 and parts[1:3] == ["sys", "block"] and parts[4] == "device":
            d = st.disks.get(parts[3])
            if d is not None and d.transport != "nvme":
                out += "".join(f"{x}\n" for x in _device_dir(d))
                continue
        return 2, out, f"ls: cannot access '{p}': No such file or directory\n"
    return 0, out, ""


def readlink(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    paths = [a for a in args if not a.startswith("-")]
    out = ""
    for p in paths:
        parts = p.split("/")
        d = st.disks.get(parts[3]) if len(parts) == 6 and parts[1:3] == ["sys", "block"] else None
        if d is None or d.enclosure is None or parts[5] != f"enclosure_device:{d.enclosure[1]}":
            return 1, out, ""
        enc, comp, _ = d.enclosure
        out += f"{ENCLOSURE_HOST}/target0:0:6/{enc}/enclosure/{enc}/{comp}\n"
    return 0, out, ""


def ledctl(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    if not st.ledctl:
        return 127, "", "demo: ledctl: command not found (not simulated)\n"
    if args == ["--version"]:
        return 0, "Intel(R) Enclosure LED Control Application 0.97\n", ""
    for a in args:
        word, _, dev = a.partition("=")
        if word not in ("locate", "locate_off", "normal", "off") or resolve(st, dev) is None:
            return 1, "", f"ledctl: invalid argument '{a}'\n"
        st.files[f"/run/ledctl/{dev.removeprefix('/dev/')}"] = word
    return 0, "", ""


def _disk(st: SimState, path: str) -> SimDisk | None:
    dev = resolve(st, path)
    return st.disks.get(dev) if dev is not None else None


def erase_disk(st: SimState, d: SimDisk) -> None:
    """Every byte of the disk gone: partitions, signatures, superblocks, filesystems."""
    names = [d.name, *(n for n, p in st.partitions.items() if p.disk == d.name)]
    for n in names:
        st.md_superblocks.pop(n, None)
        st.filesystems.pop(n, None)
        st.pvs.pop(n, None)
    for n in names[1:]:
        del st.partitions[n]
    d.partition_table = None
    d.ptuuid = None
    d.signatures.clear()
    st.touch()


def _identify(d: SimDisk) -> str:
    sec = d.ata_password is not None
    mins = max(2, round(d.size_bytes / (d.seq_kib_s * 1024) / 60))

    def state(word: str, on: bool) -> str:
        return f"\t\t{word}\n" if on else f"\tnot\t{word}\n"

    return (
        f"\n/dev/{d.name}:\n\nATA device, with non-removable media\n"
        f"\tModel Number:       {d.model}\n\tSerial Number:      {d.serial}\n"
        "Commands/features:\n\tEnabled\tSupported:\n\t   *\tSMART feature set\n"
        "\t\tSecurity Mode feature set\n"
        "Security: \n\tMaster password revision code = 65534\n\t\tsupported\n"
        + state("enabled", sec)
        + state("locked", False)
        + state("frozen", d.ata_frozen)
        + "\tnot\texpired: security count\n\t\tsupported: enhanced erase\n"
        + (f"\t{mins}min for SECURITY ERASE UNIT. {mins}min for ENHANCED SECURITY ERASE UNIT.\n")
        + "Checksum: correct\n"
    )


def hdparm(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    d = _disk(st, args[-1]) if args else None
    if d is None or d.transport not in ("sata", "ata"):
        return 2, "", f"{args[-1] if args else ''}: No such device or not an ATA disk\n"
    if list(args[:-1]) == ["-I"]:
        return 0, _identify(d), ""
    if len(args) == 5 and args[:2] == ["--user-master", "u"]:
        what, pw = args[2], args[3]
        if d.ata_frozen:
            return 5, "", "SECURITY_SET_PASS: Input/output error\n"  # the drive aborts it
        if what == "--security-set-pass":
            d.ata_password = pw
            return 0, f"security_password: \"{pw}\"\n\n/dev/{d.name}:\n Issuing SECURITY_SET_PASS command, password=\"{pw}\", user=user, mode=high\n", ""  # fmt: skip
        if what in ("--security-erase", "--security-erase-enhanced"):
            if d.ata_password != pw:
                return 5, "", "SECURITY_ERASE: Input/output error\n"
            if busy_reason(st, d.name):
                return 16, "", f"/dev/{d.name}: Device or resource busy\n"
            erase_disk(st, d)
            d.ata_password = None  # a completed erase clears the user password (ATA8-ACS)
            return 0, f"security_password: \"{pw}\"\n\n/dev/{d.name}:\n Issuing {what[2:].upper().replace('-', '_')} command, password=\"{pw}\", user=user\n", ""  # fmt: skip
    return 1, "", "hdparm: option not simulated\n"


def nvme(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    if len(args) < 2:
        return 1, "", "nvme: missing command\n"
    cmd, path, rest = args[0], args[1], list(args[2:])
    d = _disk(st, path)
    if d is None or d.transport != "nvme":
        return 1, "", f"nvme: {path}: No such file or directory\n"
    if cmd == "id-ctrl":
        doc = {"vid": 5197, "sn": d.serial, "mn": d.model, "oacs": 0x17,
               "sanicap": d.nvme_sanicap, "fna": d.nvme_fna, "edstt": 10}  # fmt: skip
        return 0, json.dumps(doc, indent=2) + "\n", ""
    if cmd == "device-self-test" and "--wait" in rest:
        code = next((r.split("=", 1)[1] for r in rest if r.startswith("--self-test-code=")), "")
        test = {"1": "short", "2": "long"}.get(code)
        if test is None or not d.smart.available:
            return 1, "", "NVMe status: Invalid Field in Command\n"
        hours = smart_counters(st, d)["hours"]
        why = selftest.run_to_end(st, d, test, hours)
        if why is not None:
            return 1, "", f"{why}\n"
        took = selftest.duration_s(d, test)
        return 0, f"Device self-test started\nWaiting for self test completion...\n[{'=' * 50}] 100%\nDevice self-test completed ({took / 60:.0f} min in the drive's time)\n", ""  # fmt: skip
    if cmd in ("sanitize", "format"):
        if busy_reason(st, d.name):
            return 1, "", f"nvme {cmd}: {path}: Device or resource busy\n"
        erase_disk(st, d)
        st.files[f"/run/nvme-sanitize/{d.name}"] = "done" if cmd == "sanitize" else "format"
        word = "Sanitize" if cmd == "sanitize" else "Format NVM"
        return 0, f"{word} command successful\n" if cmd == "sanitize" else "Success formatting namespace:1\n", ""  # fmt: skip
    if cmd == "sanitize-log":
        done = st.files.get(f"/run/nvme-sanitize/{d.name}") == "done"
        doc = {re.sub(r"n[0-9]+$", "", d.name): {
            "sprog": 65535, "sstat": 0x101 if done else 0, "cdw10_info": 0,
            "time_over_write": 0, "time_block_erase": 120, "time_crypto_erase": 5}}  # fmt: skip
        return 0, json.dumps(doc, indent=2) + "\n", ""
    return 1, "", f"nvme: {cmd}: not simulated\n"


def sg_sanitize(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    d = _disk(st, args[-1]) if args else None
    if d is None or d.transport not in ("sas", "scsi"):
        return 99, "", "sg_sanitize: SANITIZE not supported\n"
    erase_disk(st, d)
    return 0, "Sanitize in progress ... 100%\n", ""


def sg_requests(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    d = _disk(st, args[-1]) if args else None
    if d is None:
        return 99, "", "sg_requests: device not found\n"
    return 0, "Decode response as sense data:\n Fixed format, current; Sense key: No Sense\n", ""


HANDLERS = {
    "ls": ls,
    "readlink": readlink,
    "ledctl": ledctl,
    "hdparm": hdparm,
    "nvme": nvme,
    "sg_sanitize": sg_sanitize,
    "sg_requests": sg_requests,
}
