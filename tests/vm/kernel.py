"""The kernel's own view of md and LVM (read in the guest), and comparisons with raidman's model.

The parsing here is deliberately independent of ``app.parsers`` / ``backends.linux``: it is
the yardstick raidman's model is measured against. Raw sysfs text is read in ONE agent request
(``vm.read_many``) or, for "the same moment" as a probe, by ``tests.vm.guest:bracketed_probe``
in the same guest process just before and just after ``LinuxBackend().probe()``.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from tests.vm.machine import VM, CallRecord, ModelUnavailable

MD_ATTRS = (
    "level",
    "raid_disks",
    "chunk_size",
    "layout",
    "array_state",
    "degraded",
    "sync_action",
    "sync_completed",
    "sync_speed",
    "sync_speed_min",
    "sync_speed_max",
    "mismatch_cnt",
    "metadata_version",
    "reshape_position",
    "component_size",
    "bitmap/location",
    "consistency_policy",
    "stripe_cache_size",
    "last_sync_action",
)
MEMBER_ATTRS = ("state", "slot", "offset", "size", "errors", "recovery_start")


def md_paths(md: str) -> tuple[list[str], list[str]]:
    """(paths, globs) that :meth:`KernelMd.parse` needs for array ``md``."""
    base = f"/sys/block/{md}"
    paths = [f"{base}/size", "/proc/mdstat"] + [f"{base}/md/{a}" for a in MD_ATTRS]
    globs = [f"{base}/md/dev-*/{a}" for a in MEMBER_ATTRS]
    return paths, globs


def _int(text: str | None) -> int | None:
    if text is None:
        return None
    t = text.strip().split(" ", 1)[0]  # raid_disks reads "4 (3)" during a reshape
    return int(t) if t.lstrip("-").isdigit() else None


@dataclass(frozen=True)
class KernelMember:
    device: str
    state: frozenset[str]
    slot: int | None
    offset: int | None
    size_kib: int | None
    errors: int | None
    recovery_start: int | None


@dataclass(frozen=True)
class KernelMd:
    """One md array exactly as sysfs shows it (text stripped, numbers as ints)."""

    name: str
    raw: dict[str, str | None]
    members: dict[str, KernelMember] = field(default_factory=dict)
    mdstat: str = ""

    @classmethod
    def parse(cls, md: str, data: dict[str, str | None]) -> KernelMd:
        base = f"/sys/block/{md}/md/"
        raw = {a: (data.get(base + a) or "").strip() or None for a in MD_ATTRS}
        raw["size"] = (data.get(f"/sys/block/{md}/size") or "").strip() or None
        members: dict[str, KernelMember] = {}
        devs = sorted({p[len(base) :].split("/")[0] for p in data if p.startswith(base + "dev-")})
        for d in devs:

            def attr(a: str, d: str = d) -> str | None:
                v = data.get(f"{base}{d}/{a}")
                return v.strip() if v is not None else None

            state = attr("state")
            if state is None:  # vanished between glob and read
                continue
            members[d[4:]] = KernelMember(
                device=d[4:],
                state=frozenset(s for s in state.split(",") if s),
                slot=_int(attr("slot")),
                offset=_int(attr("offset")),
                size_kib=_int(attr("size")),
                errors=_int(attr("errors")),
                recovery_start=_int(attr("recovery_start")),
            )
        return cls(md, raw, members, data.get("/proc/mdstat") or "")

    # ---- typed accessors -------------------------------------------------------------
    def get(self, attr: str) -> str | None:
        return self.raw.get(attr)

    def num(self, attr: str) -> int | None:
        return _int(self.raw.get(attr))

    @property
    def level(self) -> str | None:
        return self.get("level")

    @property
    def sync_action(self) -> str | None:
        return self.get("sync_action")

    @property
    def completed(self) -> tuple[int, int] | None:
        """(done, total) sectors from sync_completed, None for "none"/"delayed"/"pending"; done
        is /proc/mdstat's count where it is ahead for the same total, as raidman shows it:
        sysfs prints curr_resync_completed, which md_do_sync moves only every 1/16 of the span,
        5 minutes or at resync_max, mdstat prints curr_resync less what is in flight (md.c
        status_resync). Both only grow during a sync, so a bracket of two reads stays one."""
        t = self.get("sync_completed") or ""
        if "/" not in t:
            return None
        a, b = t.split("/", 1)
        done, total = int(a), int(b)
        m = re.search(r"\((\d+)/(\d+)\)", self.mdstat_block)  # "(36992/522240)" KiB
        if m and int(m.group(2)) * 2 == total:
            done = max(done, int(m.group(1)) * 2)
        return done, total

    @property
    def degraded(self) -> int:
        return self.num("degraded") or 0

    @property
    def size_bytes(self) -> int | None:
        s = self.num("size")
        return s * 512 if s is not None else None

    def in_sync(self) -> set[str]:
        return {d for d, m in self.members.items() if "in_sync" in m.state}

    def with_state(self, flag: str) -> set[str]:
        return {d for d, m in self.members.items() if flag in m.state}

    @property
    def mdstat_block(self) -> str:
        """This array's paragraph of /proc/mdstat."""
        for block in self.mdstat.split("\n\n"):
            for line in block.splitlines():
                if line.startswith(f"{self.name} :"):
                    return block[block.index(line) :]
        return ""


def read_md(vm: VM, md: str) -> KernelMd:
    paths, globs = md_paths(md)
    return KernelMd.parse(md, vm.read_many(paths, globs))


def md_names(vm: VM) -> list[str]:
    return sorted(p.rsplit("/", 1)[1] for p in vm.glob("/sys/block/md*"))


@dataclass(frozen=True)
class Bracket:
    """The kernel's state just before and just after raidman's probe, in one guest process."""

    before: dict[str, KernelMd]
    machine: dict[str, Any]  # dataclasses.asdict(Machine)
    after: dict[str, KernelMd]
    probe_s: float

    def array(self, md: str) -> dict[str, Any]:
        for a in self.machine["arrays"]:
            if a["name"] == md:
                return dict(a)
        raise AssertionError(
            f"raidman's model has no array {md}: {[a['name'] for a in self.machine['arrays']]}"
        )


def bracketed_probe(vm: VM, *mds: str) -> Bracket:
    """raidman's model of the guest with the kernel's md state read right before and after.

    Raises :class:`ModelUnavailable` while ``backends.linux`` does not exist."""
    if not vm.has_module("backends.linux"):
        raise ModelUnavailable("backends.linux (the real Linux backend) does not exist yet")
    specs = {md: md_paths(md) for md in mds}
    r = vm.call("tests.vm.guest:bracketed_probe", specs)
    return Bracket(
        before={md: KernelMd.parse(md, r["before"][md]) for md in mds},
        machine=r["machine"],
        after={md: KernelMd.parse(md, r["after"][md]) for md in mds},
        probe_s=float(r["probe_s"]),
    )


# ---- md: model vs kernel -------------------------------------------------------------
STABLE_ATTRS = ("level", "raid_disks", "chunk_size", "array_state", "degraded", "size")


# md flips a running array between "active" and "clean" within milliseconds of each write (the
# safe_mode timer): a read between two kernel reads of "active" may well see "clean".
RUNNING_STATES = frozenset({"active", "clean", "active-idle", "write-pending"})


def same_state(out: list[str], got: str | None, a: str | None, b: str | None) -> None:
    """Append a mismatch unless ``got`` is one of the bracket's array states (or, for a running
    array, any running state)."""
    if got in (a, b):
        return
    if got in RUNNING_STATES and {a, b} <= RUNNING_STATES:
        return
    out.append(f"array_state: raidman {got!r}, kernel {a!r}" + (f"..{b!r}" if a != b else ""))


def md_mismatches(model: dict[str, Any], before: KernelMd, after: KernelMd) -> list[str]:
    """Where raidman's ``MdArray`` (as a dict) disagrees with sysfs read around the probe.

    Values that changed between ``before`` and ``after`` may match either (or, for sync
    progress, anything in between)."""
    out: list[str] = []

    def either(label: str, got: Any, a: Any, b: Any) -> None:
        if got != a and got != b:
            out.append(f"{label}: raidman {got!r}, kernel {a!r}" + (f"..{b!r}" if a != b else ""))

    either("level", model["level"], before.level, after.level)
    either("raid_disks", model["raid_disks"], before.num("raid_disks"), after.num("raid_disks"))
    if before.level not in ("raid1", "linear"):
        either(
            "chunk_bytes",
            model["chunk_bytes"],
            before.num("chunk_size") or None,
            after.num("chunk_size") or None,
        )
    same_state(out, model["array_state"], before.get("array_state"), after.get("array_state"))
    either("degraded", model["degraded"], before.degraded, after.degraded)
    either("size_bytes", model["size_bytes"], before.size_bytes, after.size_bytes)
    either(
        "metadata", model["metadata"], before.get("metadata_version"), after.get("metadata_version")
    )
    has_bitmap = [k.get("bitmap/location") not in (None, "none") for k in (before, after)]
    either("bitmap present", model["bitmap"] is not None, *has_bitmap)

    # members: device -> (slot, flags)
    got = {m["device"]: (m["slot"], frozenset(m["state"])) for m in model["members"]}
    kb = {d: (m.slot, m.state) for d, m in before.members.items()}
    ka = {d: (m.slot, m.state) for d, m in after.members.items()}
    if got != kb and got != ka:
        out.append(
            f"members: raidman {_fmt(got)}, kernel {_fmt(kb)}"
            + (f" / {_fmt(ka)}" if ka != kb else "")
        )

    # sync: action, and progress within the bracket
    sync = model["sync"]
    actions = {k.sync_action or "idle" for k in (before, after)}  # RAID-0: no sync_action
    got_action = sync["action"] if sync else "idle"
    if got_action not in actions and not (sync is None and actions <= {"idle", "frozen"}):
        # pending/delayed come from sync_completed's word, or (auto-read-only arrays holding
        # their resync) from /proc/mdstat's "resync=PENDING" while sysfs says idle
        words = {k.get("sync_completed") for k in (before, after)}
        held = any(
            k.get("array_state") == "read-auto" and "resync=PENDING" in k.mdstat_block
            for k in (before, after)
        )
        if got_action not in words and not (got_action == "pending" and held):
            out.append(
                f"sync action: raidman {got_action!r}, kernel {sorted(a or '' for a in actions)}"
            )
    if sync and sync.get("done_sectors") is not None:
        cb, ca = before.completed, after.completed
        if cb and ca:
            lo, hi = min(cb[0], ca[0]), max(cb[0], ca[0])
            if not lo <= sync["done_sectors"] <= hi:
                out.append(f"sync done: raidman {sync['done_sectors']}, kernel {lo}..{hi}")
            if sync["total_sectors"] not in (cb[1], ca[1]):
                out.append(f"sync total: raidman {sync['total_sectors']}, kernel {cb[1]}/{ca[1]}")
    return out


def _fmt(members: dict[str, tuple[int | None, frozenset[str]]]) -> str:
    return ", ".join(f"{d}[{s}]{{{','.join(sorted(f))}}}" for d, (s, f) in sorted(members.items()))


def assert_model_matches_kernel(vm: VM, *mds: str, attempts: int = 3) -> Bracket:
    """Probe with raidman in the guest and assert every array in ``mds`` matches sysfs.

    Also asserts the model has exactly the arrays the kernel has. Retries a few times when
    the kernel changed under the probe in a way that makes the bracket ambiguous."""
    last: list[str] = []
    for _ in range(attempts):
        b = bracketed_probe(vm, *mds)
        last = []
        for md in mds:
            last += [f"{md}: {m}" for m in md_mismatches(b.array(md), b.before[md], b.after[md])]
        vm.calls.append(CallRecord("probe", "LinuxBackend().probe() in the guest", b.probe_s))
        if not last:
            kernel_arrays = sorted(p.rsplit("/", 1)[1] for p in vm.glob("/sys/block/md*"))
            model_arrays = sorted(a["name"] for a in b.machine["arrays"])
            assert model_arrays == kernel_arrays, (model_arrays, kernel_arrays)
            return b
    raise AssertionError("raidman's model disagrees with the kernel:\n" + "\n".join(last))


# ---- LVM -----------------------------------------------------------------------------
def lvm_report(vm: VM) -> dict[str, list[dict[str, str]]]:
    """pvs/vgs/lvs as LVM's own JSON (sizes in bytes, no suffix)."""
    out: dict[str, list[dict[str, str]]] = {}
    for cmd, key, cols in (
        ("pvs", "pv", "pv_name,vg_name,pv_size,pv_free,pe_start,pv_uuid"),
        ("vgs", "vg", "vg_name,vg_size,vg_free,vg_extent_size,vg_uuid,pv_count,lv_count"),
        ("lvs", "lv", "lv_name,vg_name,lv_size,segtype,lv_uuid,lv_kernel_minor,devices,stripes"),
    ):
        r = vm.run(
            [cmd, "--reportformat", "json", "--units", "b", "--nosuffix", "-o", cols], check=True
        )
        out[key] = json.loads(r.stdout)["report"][0][key]
    return out


def sectors_written(vm: VM, *disks: str) -> dict[str, int]:
    """Sectors written to each disk since boot (/sys/block/X/stat field 7), in one read."""
    data = vm.read_many([f"/sys/block/{d}/stat" for d in disks])
    return {d: int((data[f"/sys/block/{d}/stat"] or "").split()[6]) for d in disks}
