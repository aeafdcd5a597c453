"""``fio`` and ``blkdiscard`` for the simulation: plausible figures from the disks' speed model.

fio prints the JSON document raidman parses (``--output-format=json``, one job under
``--group_reporting``). The figures follow the simulated disks' sequential speed (``seq_kib_s``)
and a small model of what a request costs:

* one disk: a request of ``bs`` bytes takes a fixed latency (HDD: a seek; SSD/NVMe: tens of µs)
  plus ``bs`` at the sequential speed; ``numjobs`` requests in flight overlap up to the disk's
  parallelism (an HDD none, an SSD several);
* an md array: a request reaches ``min(data members, ceil(bs / chunk))`` members at once (the
  chunk decides how many disks one request keeps busy); parallel jobs spread over members;
  a mirror's write goes to every copy, a parity write below a full stripe reads first.
Deterministic (no noise), so tests can assert the shape.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence

from app.model import levels
from backends.simulated.programs.argv import Result
from backends.simulated.programs.devices import busy_reason
from backends.simulated.state import SimState

_LATENCY_S = {"hdd": 0.008, "ssd": 0.00008, "nvme": 0.00002}
_PARALLEL = {"hdd": 1, "ssd": 4, "nvme": 8}


def _size(text: str) -> int | None:
    t = text.strip().lower()
    mult = {"k": 1024, "m": 1 << 20, "g": 1 << 30}.get(t[-1:], 1)
    digits = t[:-1] if t[-1:] in "kmg" else t
    return int(digits) * mult if digits.isdigit() else None


def _kind(st: SimState, disk: str) -> str:
    d = st.disks.get(disk)
    if d is None or d.rotational:
        return "hdd"
    return "nvme" if disk.startswith("nvme") else "ssd"


def _disk_rate(st: SimState, disk: str, bs: int, jobs: int) -> float:
    """Bytes/s of one disk for requests of ``bs`` with ``jobs`` in flight."""
    d = st.disks.get(disk)
    seq = (d.seq_kib_s if d is not None else 500_000) * 1024
    kind = _kind(st, disk)
    per_request = _LATENCY_S[kind] + bs / seq
    return min(seq, bs / per_request * min(jobs, _PARALLEL[kind]))


def _array_rate(st: SimState, md: str, rw: str, bs: int, jobs: int) -> float | None:
    a = st.arrays.get(md)
    if a is None:
        return None
    members = [m.device for m in a.members if m.slot is not None]
    if not members:
        return None
    disk = members[0]
    level = a.level
    n = len(members)
    chunk = (a.chunk_kib or 512) * 1024
    data = (levels.data_disks(level, n, a.layout) or 1) if level in levels.STRIPED else 1
    write = "write" in rw
    if level == "raid1":
        spread = 1 if write else min(n, jobs)
        member_bs = bs
    else:
        per_request = min(data, max(1, math.ceil(bs / chunk)))
        spread = min(data, per_request * jobs)
        member_bs = max(4096, bs // per_request)  # a member's share of one request, merged
    rate = _disk_rate(st, disk, member_bs, per_member(spread, jobs)) * spread
    if write and level in levels.PARITY and bs < chunk * data:
        rate /= 2  # read-modify-write below a full stripe
    return rate


def per_member(spread: int, jobs: int) -> int:
    """Requests in flight on one member: the jobs spread over the members they reach."""
    return max(1, jobs // max(1, spread))


def _side(rate: float, io: int, lat_ms: float, *, p99: float | None = None) -> dict[str, object]:
    """One direction of a job as fio's JSON has it (times in ms and ns, as fio 3.33 prints)."""
    p = p99 if p99 is not None else lat_ms * 1.15
    return {
        "bw_bytes": int(rate),
        "iops": rate / (1 << 20),
        "io_bytes": io,
        "runtime": int(io / rate * 1000) if rate else 0,
        "clat_ns": {
            "min": int(lat_ms * 0.8e6),
            "max": int(max(p, lat_ms) * 2.5e6),
            "mean": lat_ms * 1e6,
            "percentile": {"50.000000": int(lat_ms * 1e6), "99.000000": int(p * 1e6)},
        },
    }


def _doc(name: str, opts: dict[str, str], read: object, write: object, error: int = 0) -> str:
    job = {"jobname": name, "error": error, "job options": {k: v for k, v in opts.items() if v},
           "read": read, "write": write}  # fmt: skip
    return json.dumps({"fio version": "fio-3.33 (simulated)", "jobs": [job]}) + "\n"


def _surface(st: SimState, opts: dict[str, str]) -> Result:
    """``--verify=crc32c --do_verify=1`` over one zone: written, then read back and checked; in
    simulated time (it ends at once; its figures are what the disk's speed model gives)."""
    from backends.simulated.programs.disk_tools import erase_disk

    dev = opts.get("filename", "").removeprefix("/dev/")
    d = st.disks.get(dev)
    off, size = int(opts.get("offset", "0") or 0), int(opts.get("size", "0") or 0)
    if d is None:
        return 1, "", f"fio: {opts.get('filename')}: No such file or directory\n"
    if busy_reason(st, dev):  # raidman's pre-flight refuses it first; a disk in use stays so
        return 1, "", f"fio: {opts.get('filename')}: Device or resource busy\n"
    if off + size > d.size_bytes:
        return 1, "", "fio: io_size exceeds the device size\n"
    per_ms = (_LATENCY_S[_kind(st, dev)] + (1 << 20) / (d.seq_kib_s * 1024)) * 1000
    slow = d.write_latency_ms
    wrate = (1 << 20) / (slow / 1000) if slow else _disk_rate(st, dev, 1 << 20, 1)
    rrate = _disk_rate(st, dev, 1 << 20, 1)
    erase_disk(st, d)
    bad = d.bad_region
    error = 0
    err = ""
    verified = size
    if bad is not None and bad[0] < off + size and off < bad[1]:
        error = 84  # EILSEQ: fio's verify failure
        verified = max(0, bad[0] - off)
        err = (
            f"verify: bad magic header 0, wanted acca at file {opts.get('filename')} offset "
            f"{max(off, bad[0])}, length 1048576 (requested block: offset={max(off, bad[0])}, "
            "length=1048576)\nfio: pid=4242, err=84/file:io_u.c:2227, func=io_u_sync_complete, "
            "error=Invalid or incomplete multibyte or wide character\n"
        )
    doc = _doc(
        "raidman-qualify",
        opts,
        _side(rrate, verified, per_ms),
        _side(wrate, size, slow or per_ms, p99=slow * 1.1 if slow else None),
        error,
    )
    return (1 if error else 0), doc, err


def _blink(st: SimState, opts: dict[str, str]) -> Result:
    """``--readonly --time_based``: reads in bursts, nothing changes (the LED blinks)."""
    dev = opts.get("filename", "").removeprefix("/dev/")
    if dev not in st.disks:
        return 1, "", f"fio: {opts.get('filename')}: No such file or directory\n"
    secs = int(opts.get("runtime", "30") or 30)
    burst = int(opts.get("thinktime_blocks", "64") or 64)
    rate = _disk_rate(st, dev, 1 << 20, 1)
    read_s = burst * (1 << 20) / rate
    io = int(rate * secs * read_s / (read_s + 0.5))
    none = _side(0.0, 0, 0.0)
    return 0, _doc("raidman-locate", opts, _side(rate, io, (1 << 20) / rate * 1000), none), ""


def fio(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    opts: dict[str, str] = {}
    for a in args:
        k, _, v = a.partition("=")
        opts[k.removeprefix("--")] = v
    if opts.get("name") == "raidman-qualify":
        return _surface(st, opts)
    if opts.get("name") == "raidman-locate":
        return _blink(st, opts)
    target = opts.get("filename", "").removeprefix("/dev/")
    bs = _size(opts.get("bs", "4k")) or 4096
    jobs = int(opts["numjobs"]) if opts.get("numjobs", "").isdigit() else 1
    size = _size(opts.get("size", "64m")) or 1 << 26
    rw = opts.get("rw", "read")
    if target in st.arrays:
        rate = _array_rate(st, target, rw, bs, jobs)
    elif target in st.disks:
        rate = _disk_rate(st, target, bs, jobs)
    else:
        return 1, "", f"fio: {opts.get('filename')}: No such file or directory\n"
    if rate is None:
        return 1, "", f"fio: {target}: not running\n"
    io = size * jobs
    side = {"bw_bytes": int(rate), "iops": rate / bs, "io_bytes": io, "runtime": 0}
    none = {"bw_bytes": 0, "iops": 0.0, "io_bytes": 0, "runtime": 0}
    write = "write" in rw
    doc = {
        "fio version": "fio-3.33 (simulated)",
        "jobs": [
            {
                "jobname": opts.get("name", "raidman"),
                "error": 0,
                "job options": {k: v for k, v in opts.items() if v},
                "read": none if write else side,
                "write": side if write else none,
            }
        ],
    }
    st.touch()
    return 0, json.dumps(doc) + "\n", ""  # one line: the demo paces output lines


def blkdiscard(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    paths = [a for a in args if not a.startswith("-")]
    if "--secure" in args:
        d = st.disks.get(paths[0].removeprefix("/dev/")) if paths else None
        if d is None or d.rotational or d.discard_max_bytes == 0:
            return (
                1,
                "",
                f"blkdiscard: {paths[0] if paths else ''}: BLKSECDISCARD ioctl failed: Operation not supported\n",
            )
    for p in paths:
        dev = p.removeprefix("/dev/")
        if dev not in st.disks and dev not in st.partitions and dev not in st.arrays:
            return 1, "", f"blkdiscard: cannot open {p}: No such file or directory\n"
        if any(a.member(dev) is not None for a in st.arrays.values()):
            return 1, "", f"blkdiscard: cannot open {p}: Device or resource busy\n"
        st.md_superblocks.pop(dev, None)
        st.filesystems.pop(dev, None)
        st.touch()
    return 0, "", ""


HANDLERS = {"fio": fio, "blkdiscard": blkdiscard}
