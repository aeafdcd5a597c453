"""app.report: the JSON shape of `raidman report --json` and its text form (no Textual)."""

from __future__ import annotations

import argparse
import json
from dataclasses import replace

import pytest

from app.commands import report as report_cmd
from app.model import MdArray, MdMember, SyncStatus
from app.report import machine_to_json, machine_to_text
from tests.ui.fake_backend import FakeBackend, build_machine

DISK_KEYS = {
    "name", "model", "serial", "vendor", "wwn", "size_bytes", "logical_sector", "physical_sector",
    "min_io", "optimal_io", "alignment_offset", "rotational", "transport", "kind",
    "discard_granularity", "discard_max_bytes", "scheduler", "removable", "read_only",
    "partition_table", "ptuuid", "ata_port",
}  # fmt: skip
ARRAY_KEYS = {
    "name", "level", "state", "chunk_bytes", "layout", "bitmap", "members", "sync", "size_bytes",
    "raid_disks", "previous_raid_disks", "metadata", "array_name", "uuid", "degraded", "stripe_cache_size", "container",
    "member_index", "consistency_policy", "read_only", "mismatch_cnt", "last_sync_action",
    "speed_min_local", "speed_max_local",
}  # fmt: skip
SYNC_KEYS = {
    "action", "done_sectors", "total_sectors", "speed_kib_s", "eta_s", "min_speed_kib_s",
    "max_speed_kib_s", "reshape_position", "mismatch_cnt", "targets", "at_ceiling", "queued",
}  # fmt: skip
# a sync md holds back (delayed/pending) says what it waits for too (app.wear.waiting)
WAIT_KEYS = {"waits_for", "shares", "starts_in_s", "then_s", "waiting_text"}


def test_top_level_and_disk_shape() -> None:
    out = machine_to_json(build_machine())
    assert set(out) == {
        "host", "kernel", "taken_at", "is_root", "disks", "partitions", "arrays", "lvm",
        "crypts", "filesystems", "edges", "notes",
    }  # fmt: skip
    assert (out["host"], out["kernel"]) == ("evo", "6.1.0-18-amd64")
    assert [d["name"] for d in out["disks"]] == ["nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1", "sda"]
    for d in out["disks"]:
        assert set(d) == DISK_KEYS
    usb = out["disks"][4]
    assert (usb["physical_sector"], usb["min_io"], usb["optimal_io"]) == (4096, 4096, 33553920)
    assert usb["serial"] is None and usb["transport"] == "usb"
    p = out["partitions"][0]
    assert {"name", "parent", "start_sector", "size_bytes"} <= set(p)
    assert (p["name"], p["parent"], p["start_sector"]) == ("nvme0n1p1", "nvme0n1", 2048)
    assert out["notes"] == [
        {
            "source": "smartctl",
            "message": "smartctl not found: SMART unavailable",
            "severity": "warning",
        }
    ]
    assert set(out["lvm"]) == {"pvs", "vgs", "lvs"}
    assert out["lvm"]["pvs"][0]["device"] == "md127" and out["lvm"]["pvs"][0]["vg"] == "vg0"
    assert out["lvm"]["lvs"][0]["kernel_name"] == "dm-0"
    assert out["lvm"]["lvs"][0]["devices"] == ["md127"]
    fs = out["filesystems"][0]
    assert (fs["device"], fs["fstype"], fs["mountpoints"], fs["stride"], fs["stripe_width"]) == (
        "dm-0", "ext4", ["/"], 8, 16,
    )  # fmt: skip
    json.dumps(out)  # everything is JSON-serialisable


def test_array_members_and_sync() -> None:
    out = machine_to_json(build_machine(degraded=True, done_sectors=1000000))
    (a,) = out["arrays"]
    assert set(a) == ARRAY_KEYS
    assert (a["name"], a["level"], a["state"], a["chunk_bytes"], a["layout"], a["bitmap"]) == (
        "md127", "raid10", "active", 32768, "n2", None,
    )  # fmt: skip
    assert a["degraded"] == 1
    assert [(m["device"], m["slot"], m["state"]) for m in a["members"]] == [
        ("nvme0n1p1", 0, ["in_sync"]),
        ("nvme1n1p1", 1, ["in_sync"]),
        ("nvme2n1p1", 2, ["in_sync"]),
        ("nvme3n1p1", 3, ["faulty"]),
    ]
    assert a["members"][3]["role"] == "faulty"
    s = a["sync"]
    assert set(s) == SYNC_KEYS
    total = 976508928 * 2
    assert (s["action"], s["done_sectors"], s["total_sectors"], s["speed_kib_s"]) == (
        "resync", 1000000, total, 677000,
    )  # fmt: skip
    # ETA as the kernel's finish=: remaining KiB / speed
    assert s["eta_s"] == round((total - 1000000) / 2 / 677000)


def test_idle_sync_is_null_and_extra_is_merged() -> None:
    m = build_machine()
    a = m.arrays[0]
    idle = replace(
        m,
        arrays=(
            replace(a, sync=None),
            MdArray(name="md1", level="raid1", sync=SyncStatus(action="idle"),
                    members=(MdMember("sdb1", None, ("spare",)),)),
        ),
    )  # fmt: skip
    out = machine_to_json(idle, extra={"findings": [{"code": "x"}], "smart": {"sda": {}}})
    assert [x["sync"] for x in out["arrays"]] == [None, None]
    assert out["arrays"][1]["members"] == [
        {"device": "sdb1", "slot": None, "state": ["spare"], "role": "spare", "errors": None,
         "data_offset_sectors": None, "size_kib": None, "recovery_start": None}
    ]  # fmt: skip
    assert out["findings"] == [{"code": "x"}]
    assert out["smart"] == {"sda": {}}


def test_text_report_names_every_layer() -> None:
    text = machine_to_text(build_machine(degraded=True))
    assert text.startswith("evo  kernel 6.1.0-18-amd64  (not root)")
    assert "md127    raid10 [UUU_] · DEGRADED(1) · resync 16.3% · n2 · 32K" in text
    assert "slot  3  nvme3n1p1    faulty (F)" in text
    assert "VG vg0" in text and "LV root" in text
    assert "dm-0         ext4   /  used 120.0 GiB" in text
    assert "[warning] smartctl: smartctl not found" in text


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    report_cmd.add_parser(sub)
    return parser.parse_args(["report", *argv])


def test_cli_json_and_text(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(report_cmd, "make_backends", lambda args: [(None, FakeBackend())])
    assert report_cmd.run(_args("--json")) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["arrays"][0]["name"] == "md127"
    assert report_cmd.run(_args()) == 0
    assert "Arrays" in capsys.readouterr().out


def test_cli_probe_failure_is_a_message(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(
        report_cmd, "make_backends", lambda args: [(None, FakeBackend(fail_probe="boom"))]
    )
    assert report_cmd.run(_args("--json")) == 1
    assert "probe failed: boom" in capsys.readouterr().err


def _scenario_json(name: str) -> dict[str, object]:
    from backends.simulated import SimClock, SimulatedBackend

    backend = SimulatedBackend.from_scenario(name, clock=SimClock.manual())
    return machine_to_json(backend.probe())


def test_scenario_raid10_evo_json() -> None:
    """Scenario (a): RAID-10 near-2, 32 KiB chunk, no bitmap, named 127, resyncing."""
    out = _scenario_json("raid10-evo")
    arrays = out["arrays"]
    assert isinstance(arrays, list)
    (a,) = [x for x in arrays if x["name"] == "md127"]
    assert (a["level"], a["layout"], a["chunk_bytes"], a["bitmap"]) == ("raid10", "n2", 32768, None)
    assert len(a["members"]) == 4 and all(m["state"] == ["in_sync"] for m in a["members"])
    assert a["sync"] is not None and a["sync"]["action"] == "resync"
    assert 0 < a["sync"]["done_sectors"] < a["sync"]["total_sectors"]
    json.dumps(out)


@pytest.mark.parametrize(
    "name", ["raid10-evo", "raid5-cable", "raid6-wd", "usb-bridge", "imsm", "blank"]
)
def test_every_scenario_has_the_documented_shape(name: str) -> None:
    out = _scenario_json(name)
    assert {"host", "kernel", "disks", "partitions", "arrays", "lvm", "filesystems"} <= set(out)
    for d in out["disks"]:  # type: ignore[attr-defined]
        assert set(d) == DISK_KEYS
    for a in out["arrays"]:  # type: ignore[attr-defined]
        assert set(a) == ARRAY_KEYS
        waits = a["sync"] is not None and a["sync"]["action"] in ("delayed", "pending")
        assert a["sync"] is None or set(a["sync"]) == SYNC_KEYS | (WAIT_KEYS if waits else set())
    json.loads(json.dumps(out))


def test_at_ceiling_compares_the_progress_rate_with_the_max_limit() -> None:
    """Issue 22: md's limits bound the progress rate (md.c md_do_sync()); a 4-disk RAID-10
    resync at 4,401 KiB/s under speed_limit_max 4,000 (VM) runs at its ceiling: true; far
    below: false; speed or limit unknown (a delayed sync): null."""
    m = build_machine()
    a = m.arrays[0]

    def sync_json(**kw: object) -> object:
        s = SyncStatus(action="resync", done_sectors=1, total_sectors=10, **kw)  # type: ignore[arg-type]
        return machine_to_json(replace(m, arrays=(replace(a, sync=s),)))["arrays"][0]["sync"]

    assert sync_json(speed_kib_s=4401, max_speed_kib_s=4000)["at_ceiling"] is True  # type: ignore[index]
    assert sync_json(speed_kib_s=2200, max_speed_kib_s=4000)["at_ceiling"] is False  # type: ignore[index]
    assert sync_json(speed_kib_s=None, max_speed_kib_s=4000)["at_ceiling"] is None  # type: ignore[index]
    held = replace(
        m,
        arrays=(
            replace(
                a,
                sync=SyncStatus("resync", 1, 10, speed_kib_s=4401, max_speed_kib_s=4000),
            ),
        ),
    )
    assert "at its ceiling (max 3.9 MiB/s)" in machine_to_text(held)
    # the simulated seed 000 resync, still ramping up to its raised 500000: not yet
    (evo,) = _scenario_json("raid10-evo")["arrays"]  # type: ignore[misc]
    assert evo["sync"]["at_ceiling"] is False


def test_raid6_degraded_json() -> None:
    """Scenario (c): RAID-6 of five WD HDDs, internal bitmap, stripe_cache_size 256, degraded."""
    out = _scenario_json("raid6-wd")
    (a,) = out["arrays"]  # type: ignore[misc]
    assert (a["level"], a["bitmap"], a["stripe_cache_size"], a["degraded"]) == (
        "raid6", "internal", 256, 1,
    )  # fmt: skip
    assert any(m["role"] == "faulty" for m in a["members"])
