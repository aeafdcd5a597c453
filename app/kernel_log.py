"""The kernel's log for what is selected: the lines that name a disk, its partitions, or an
array and its members, newest first (``raidman report --log``, the TUI's kernel-log section).

Read through the backend (Linux, simulated, replay, ssh): ``journalctl -k -b -o json -n N``
(this boot's kernel messages, the newest N), or ``dmesg --time-format iso`` where there is no
journal. Bounded (N lines, each cut at app.parsers.kernel_log.MAX_TEXT) and escaped here, at
the boundary, as the model's strings are (app/escape.py).

Which lines name a device: the kernel name as a whole word ("md/raid1:md0: Disk failure on
nvme1n1, disabling device." names md0 and nvme1n1; "sd 2:0:0:0: [sdb] ..." names sdb), and for
an NVMe namespace its controller too ("nvme nvme0: I/O 12 QID 3 timeout" names nvme0n1's), and for
a disk on libata its port (``Disk.ata_port``, from sysfs): libata's error handling names the port
and link, never the disk ("ata3: hard resetting link", "ata3.00: failed command: READ FPDMA
QUEUED" are sdc's when sdc's sysfs path runs through .../ata3/; the SCSI address "sd 2:0:0:0"
numbers hosts from 0, so it cannot be read off the port's number).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from app.backend import Backend
from app.escape import escape_controls
from app.model import Machine
from app.parsers.kernel_log import DEFAULT_LIMIT, KernelLine, parse_dmesg, parse_journal_json

JOURNAL_TIMEOUT_S = 20.0
_NVME_NS = re.compile(r"^(nvme[0-9]+)n[0-9]+$")


def journal_argv(limit: int = DEFAULT_LIMIT) -> tuple[str, ...]:
    return ("journalctl", "-k", "-b", "-o", "json", "-n", str(limit), "--no-pager")


DMESG_ARGV = ("dmesg", "--time-format", "iso")


@dataclass(frozen=True, slots=True)
class KernelLog:
    source: str | None  # "journalctl -k", "dmesg"; None when neither could be read
    lines: tuple[KernelLine, ...] = ()  # oldest first
    note: str | None = None  # why it could not be read (or why dmesg instead of the journal)


def _why(argv: tuple[str, ...], rc: int, err: str) -> str:
    if rc == 127:
        return f"{argv[0]}: not found"
    last = next((ln.strip() for ln in reversed(err.splitlines()) if ln.strip()), "")
    return escape_controls(f"{argv[0]}: exit {rc}" + (f": {last[:200]}" if last else ""))


def read_kernel_log(backend: Backend, *, limit: int = DEFAULT_LIMIT) -> KernelLog:
    """This boot's kernel lines, the newest ``limit``. Never raises."""
    notes: list[str] = []
    argv = journal_argv(limit)
    try:
        res = backend.run(argv, timeout=JOURNAL_TIMEOUT_S)
        if res.ok:
            lines = parse_journal_json(res.stdout, limit=limit)
            if lines:
                return KernelLog("journalctl -k", _clean(lines))
            notes.append("journalctl -k: no kernel lines in the journal")
        else:
            notes.append(_why(argv, res.returncode, res.stderr))
        res = backend.run(DMESG_ARGV, timeout=JOURNAL_TIMEOUT_S)
        if res.ok:
            return KernelLog("dmesg", _clean(parse_dmesg(res.stdout, limit=limit)), notes[0])
        notes.append(_why(DMESG_ARGV, res.returncode, res.stderr))
    except Exception as e:  # a backend failure is a note, never a lost report
        notes.append(escape_controls(f"kernel log: {e}"))
    return KernelLog(None, (), "; ".join(notes))


def _clean(lines: Iterable[KernelLine]) -> tuple[KernelLine, ...]:
    return tuple(replace(ln, text=escape_controls(ln.text)) for ln in lines)


def names_for(machine: Machine, name: str) -> frozenset[str]:
    """The kernel names whose lines belong to ``name``'s section: a disk with its partitions
    (and an NVMe namespace's controller), an array with its members, a partition alone."""
    out = {name}
    disk = machine.disk(name)
    if disk is not None:
        out.update(p.name for p in machine.partitions if p.parent == name)
        m = _NVME_NS.match(name)
        if m:
            out.add(m.group(1))
        if disk.ata_port:
            out.add(disk.ata_port)
    a = machine.array(name)
    if a is not None:
        out.update(mem.device for mem in a.members)
    return frozenset(out)


def _pattern(names: Iterable[str]) -> re.Pattern[str] | None:
    alts = sorted({re.escape(n) for n in names if n}, key=len, reverse=True)
    if not alts:
        return None
    return re.compile(rf"(?<![\w.-])({'|'.join(alts)})(?![\w])")


def lines_for(log: KernelLog, names: Iterable[str]) -> tuple[KernelLine, ...]:
    """The lines naming any of ``names``, newest first."""
    pat = _pattern(names)
    if pat is None:
        return ()
    return tuple(ln for ln in reversed(log.lines) if pat.search(ln.text))


def machine_names(machine: Machine) -> frozenset[str]:
    names = {d.name for d in machine.disks}
    names.update(p.name for p in machine.partitions)
    names.update(a.name for a in machine.arrays)
    names.update(m.group(1) for d in machine.disks if (m := _NVME_NS.match(d.name)))
    names.update(ata_ports(machine))
    return frozenset(names)


def ata_ports(machine: Machine) -> dict[str, str]:
    """libata port -> the disk on it ("ata3" -> "sdc")."""
    return {d.ata_port: d.name for d in machine.disks if d.ata_port}


def kernel_log_json(log: KernelLog, machine: Machine) -> dict[str, Any]:
    """``report --log``'s ``kernel_log``: the lines that name a device of the machine, newest
    first, each with the devices it names."""
    pat = _pattern(machine_names(machine))
    ports = ata_ports(machine)  # a port's lines are its disk's
    out = []
    for ln in reversed(log.lines):
        found = sorted({ports.get(n, n) for n in pat.findall(ln.text)}) if pat is not None else []
        if found:
            out.append(
                {
                    "at": ln.at,
                    "since_boot": ln.since_boot,
                    "priority": ln.priority,
                    "text": ln.text,
                    "devices": found,
                }
            )
    return {"source": log.source, "note": log.note, "read": len(log.lines), "lines": out}


def kernel_log_text(log: KernelLog, machine: Machine, *, limit: int = 50) -> list[str]:
    """The text report's section: the newest ``limit`` lines that name a device."""
    j = kernel_log_json(log, machine)
    out = [f"(from {log.source}; {len(j['lines'])} of {j['read']} lines name a device)"]
    if log.note:
        out.append(f"note: {log.note}")
    for ln in j["lines"][:limit]:
        out.append(f"{when(ln['at'], ln['since_boot'])}  {ln['text']}")
    return out


def when(at: float | None, since_boot: float | None) -> str:
    """A line's time: the wall clock (UTC) when known, else seconds since boot."""
    if at is not None:
        import time

        try:
            return time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(at))
        except (OverflowError, ValueError, OSError):  # a time no clock shows: say so
            pass
    if since_boot is not None:
        return f"[{since_boot:12.6f}]"
    return "?"


# md_do_sync's word for each sync in its two lines (md.c: "md: %s of RAID array %s" as it
# starts, "md: %s: %s %s." with "done" or "interrupted" as it ends)
MD_SYNC_WORDS = {
    "check": "data-check",
    "repair": "requested-resync",
    "resync": "resync",
    "recover": "recovery",
    "reshape": "reshape",
}
SPAN_SLACK_S = 2.0  # the kernel's clock and the looks' disagree by this much at most


def md_sync_span(
    log: KernelLog, array: str, action: str, lo: float, hi: float
) -> tuple[float, float] | None:
    """When md ran ``array``'s ``action`` between the looks at ``lo`` and ``hi``, by its own
    lines ("md: recovery of RAID array md127" ... "md: md127: recovery done."): the last start
    and the end after it within the looks; None when the log has no such pair with times."""
    word = MD_SYNC_WORDS.get(action)
    if word is None:
        return None
    began = f"md: {word} of RAID array {array}"
    ended = re.compile(rf"md: {re.escape(array)}: {re.escape(word)} (?:done|interrupted)\.")
    start: float | None = None
    span: tuple[float, float] | None = None
    for ln in log.lines:
        if ln.at is None or not lo - SPAN_SLACK_S <= ln.at <= hi + SPAN_SLACK_S:
            continue
        if ln.text.endswith(began):
            start = ln.at
        elif start is not None and ended.search(ln.text):
            span = (start, max(start, ln.at))
            start = None
    return span


# md's line as a member fails: raid1.c raid1_error(), raid10.c raid10_error(), raid5.c
# raid5_error() print "md/raid1:md0: Disk failure on sdb1, disabling device."
_FAILURE = re.compile(
    r"md/raid\d*:(?P<array>md\w+): Disk failure on (?P<dev>[\w.-]+), disabling device"
)


def degraded_since(log: KernelLog, machine: Machine) -> dict[str, tuple[float, str]]:
    """Each degraded array of ``machine`` -> when md said one of its members that is faulty or
    gone now failed (the earliest such line of this boot still in the log) and that line."""
    degraded = {a.name: a for a in machine.arrays if a.is_degraded}
    out: dict[str, tuple[float, str]] = {}
    for ln in log.lines:
        m = _FAILURE.search(ln.text)
        if m is None or ln.at is None:
            continue
        a = degraded.get(m.group("array"))
        if a is None:
            continue
        mem = a.member(m.group("dev"))
        if (mem is None or mem.role == "faulty") and a.name not in out:
            out[a.name] = (ln.at, ln.text[m.start() :].strip())
    return out
