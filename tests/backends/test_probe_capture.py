"""The Linux backend replayed over real captures made in a QEMU VM (Debian 6.1 kernel, four NVMe
disks, `raidman capture` inside the guest; see tests/fixtures/captures/*/README).

Every assertion compares the probed model with the raw kernel files / tool outputs stored in
the same capture, i.e. what the kernel said at that moment.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from app.model import Machine
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES

CAPTURES = FIXTURES / "captures"
NAMES = sorted(p.name for p in CAPTURES.iterdir() if (p / "meta.json").is_file())


def test_captures_present() -> None:
    assert {"raid5-raid10-syncing", "raid5-raid10-clean", "raid5-recovering"} <= set(NAMES)


class Raw:
    """The capture's own files, read without any raidman code."""

    def __init__(self, cap: Path) -> None:
        self.cap = cap
        self.listings: dict[str, list[str] | None] = json.loads((cap / "listdir.json").read_text())
        self.commands: list[dict[str, Any]] = json.loads((cap / "commands.json").read_text())
        self.meta = json.loads((cap / "meta.json").read_text())

    def file(self, path: str) -> str:
        return (self.cap / "files" / path.lstrip("/")).read_text().strip()

    def md(self, name: str, attr: str) -> str:
        return self.file(f"/sys/block/{name}/md/{attr}")

    def md_names(self) -> list[str]:
        return [n for n in self.listings["/sys/block"] or [] if n.startswith("md")]

    def members(self, name: str) -> list[str]:
        return [n[4:] for n in self.listings[f"/sys/block/{name}/md"] or [] if n.startswith("dev-")]

    def command(self, program: str) -> dict[str, Any]:
        return next(c for c in self.commands if c["argv"][0] == program)


@pytest.fixture(params=NAMES)
def replay(request: pytest.FixtureRequest) -> tuple[Machine, Raw, ReplayBackend]:
    cap = CAPTURES / request.param
    b = ReplayBackend(cap)
    return b.probe(), Raw(cap), b


def test_identity_and_read_only(replay: tuple[Machine, Raw, ReplayBackend]) -> None:
    m, raw, b = replay
    assert (m.host, m.kernel) == (raw.meta["host"], raw.meta["kernel"])
    assert m.is_root == (raw.meta["euid"] == 0)
    assert m.taken_at == raw.meta["time"] == b.now()
    assert b.read_only_reason is not None and "read-only" in b.read_only_reason
    assert m.mdstat == raw.file("/proc/mdstat") + "\n"
    assert m.notes == ()


def test_arrays_agree_with_sysfs(replay: tuple[Machine, Raw, ReplayBackend]) -> None:
    m, raw, _ = replay
    assert sorted(a.name for a in m.arrays) == sorted(raw.md_names())
    for name in raw.md_names():
        a = m.array(name)
        assert a is not None
        assert a.level == raw.md(name, "level")
        assert a.chunk_bytes == int(raw.md(name, "chunk_size"))
        assert a.raid_disks == int(raw.md(name, "raid_disks"))
        assert a.array_state == raw.md(name, "array_state")
        assert a.degraded == int(raw.md(name, "degraded"))
        assert a.metadata == raw.md(name, "metadata_version")
        assert a.uuid == raw.md(name, "uuid")
        # reported for idle arrays too (issue 15): what the last check/repair counted
        assert a.mismatch_cnt == int(raw.md(name, "mismatch_cnt"))
        assert a.last_sync_action == raw.md(name, "last_sync_action")
        assert a.size_bytes == int(raw.file(f"/sys/block/{name}/size")) * 512
        loc = raw.md(name, "bitmap/location")
        assert a.bitmap == (None if loc == "none" else loc)
        assert sorted(x.device for x in a.members) == sorted(raw.members(name))
        for mem in a.members:
            slot = raw.md(name, f"dev-{mem.device}/slot")
            assert mem.slot == (None if slot == "none" else int(slot))
            assert mem.state == tuple(raw.md(name, f"dev-{mem.device}/state").split(","))
            assert mem.data_offset_sectors == int(raw.md(name, f"dev-{mem.device}/offset"))
            # the edge member -> array exists, and the member is a partition of an NVMe disk
            assert (mem.device, name) in m.edges
            assert m.disks_under(name)
        if a.level == "raid5":
            assert a.layout == {"2": "left-symmetric"}[raw.md(name, "layout")]
            assert a.stripe_cache_size == int(raw.md(name, "stripe_cache_size"))
        if a.level == "raid10":
            n = int(raw.md(name, "layout"))
            assert a.layout == f"n{n & 0xFF}" and (n >> 8) & 0xFF == 1
            assert a.stripe_cache_size is None
        # the name udev recorded (mdadm --name=...) and /dev/md/<name> agree
        assert a.array_name is not None
        assert raw.cap.joinpath("readlink.json").read_text().count(f"../{name}") == 1


def test_sync_agrees_with_sysfs(replay: tuple[Machine, Raw, ReplayBackend]) -> None:
    m, raw, b = replay
    live = {x.name: x for x in b.sample().arrays}
    for name in raw.md_names():
        a = m.array(name)
        assert a is not None
        action, completed = raw.md(name, "sync_action"), raw.md(name, "sync_completed")
        if action == "idle":
            assert a.sync is None and live[name].sync is None
            continue
        assert a.sync is not None
        if completed in ("delayed", "pending"):
            assert a.sync.action == completed
            assert a.sync.done_sectors is None
        else:
            done, total = (int(x) for x in completed.split("/"))
            assert a.sync.action == action
            assert (a.sync.done_sectors, a.sync.total_sectors) == (done, total)
            assert a.sync.speed_kib_s == int(raw.md(name, "sync_speed"))
            assert (a.sync.eta_s or 0) > 0
        assert a.sync.max_speed_kib_s == int(raw.md(name, "sync_speed_max").split()[0])
        # the array's own limit only where md says "(local)" (md.c sync_max_show)
        own = raw.md(name, "sync_speed_max").split()
        assert a.speed_max_local == (int(own[0]) if own[1:] == ["(local)"] else None)
        if action == "recover":
            rebuilding = [d for d in raw.members(name) if raw.md(name, f"dev-{d}/state") == "spare"]
            assert list(a.sync.targets) == rebuilding and rebuilding
            assert {mm.device for mm in a.members if mm.role == "rebuilding"} == set(rebuilding)
        # the 1 Hz sample reads the same files
        assert live[name].sync == a.sync
        assert dict(live[name].member_states) == {x.device: x.state for x in a.members}


def test_disk_io_sample_is_the_recorded_psutil(replay: tuple[Machine, Raw, ReplayBackend]) -> None:
    _, raw, b = replay
    recorded = json.loads((raw.cap / "disk_io.json").read_text())
    s = b.sample()
    assert [d.name for d in s.disk_io] == [d["name"] for d in recorded]
    assert {d.name: d.write_bytes for d in s.disk_io} == {
        d["name"]: d["write_bytes"] for d in recorded
    }


def test_lsblk_graph_and_lvm(replay: tuple[Machine, Raw, ReplayBackend]) -> None:
    m, raw, _ = replay
    lsblk = json.loads(raw.command("lsblk")["stdout"])

    def walk(nodes: list[dict[str, Any]], parent: str | None) -> None:
        for n in nodes:
            if parent is not None:
                assert (parent, n["kname"]) in m.edges
            walk(n.get("children", []), n["kname"])

    walk(lsblk["blockdevices"], None)
    disks = [n for n in lsblk["blockdevices"] if n["type"] == "disk"]
    assert sorted(d.name for d in m.disks if d.kind == "disk") == sorted(d["kname"] for d in disks)

    # LVM: every LV of the fullreport is in the model, on its dm-N, whose parent is its PV (an md)
    report = json.loads(raw.command("lvm")["stdout"])["report"]
    raw_lvs = [(lv["vg_name"], lv["lv_name"]) for r in report for lv in r["lv"]]
    assert sorted((lv.vg, lv.name) for lv in m.lvs) == sorted(raw_lvs) and raw_lvs
    dm_names = {
        n: raw.file(f"/sys/block/{n}/dm/name")
        for n in raw.listings["/sys/block"] or []
        if n.startswith("dm-")
    }
    raw_pvs = {pv["pv_name"].rsplit("/", 1)[-1] for r in report for pv in r["pv"]}
    assert {pv.device for pv in m.pvs} == raw_pvs
    for lv in m.lvs:
        assert lv.kernel_name is not None and dm_names[lv.kernel_name] == lv.dm_name
        (pv,) = raw_pvs
        assert m.parents_of(lv.kernel_name) == (pv,)
        assert m.array(pv) is not None  # LV -> md edge: the VG lives on the RAID-5


def test_filesystems_and_mountpoints(replay: tuple[Machine, Raw, ReplayBackend]) -> None:
    m, raw, _ = replay
    lsblk = json.loads(raw.command("lsblk")["stdout"])
    majmin: dict[str, str] = {}

    def walk(nodes: list[dict[str, Any]]) -> None:
        for n in nodes:
            majmin[n["kname"]] = n["maj:min"]
            walk(n.get("children", []))

    walk(lsblk["blockdevices"])
    mounts: dict[str, list[str]] = {}
    for line in raw.file("/proc/self/mountinfo").splitlines():
        fields = line.split()
        mounts.setdefault(fields[2], []).append(fields[4])
    ext4 = [f for f in m.filesystems if f.fstype == "ext4"]
    assert len(ext4) == 2
    for f in ext4:
        assert f.mountpoints and list(f.mountpoints) == mounts[majmin[f.device]]
        assert f.size_bytes and f.used_bytes is not None
    # one on the LV (dm-N above the RAID-5), one straight on the RAID-10
    kinds = sorted(type(m.device(f.device)).__name__ for f in ext4)
    assert kinds == ["LogicalVolume", "MdArray"]


def test_smart_replays_what_smartctl_said(replay: tuple[Machine, Raw, ReplayBackend]) -> None:
    m, raw, b = replay
    nvme = [d for d in m.disks if d.transport == "nvme"]
    assert len(nvme) == 4
    for d in nvme:
        rec = next(
            c for c in raw.commands if c["argv"] == ["smartctl", "-j", "-a", f"/dev/{d.name}"]
        )
        doc = json.loads(rec["stdout"])
        r = b.smart(d.name)
        assert r.available and r.device == d.name
        assert r.serial == doc["serial_number"] == d.serial
