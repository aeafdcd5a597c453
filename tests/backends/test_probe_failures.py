"""What the probe does when the machine does not cooperate: missing tools, EACCES, devices
that vanish between listing and reading. Each test edits a copy of a real capture
(tests/fixtures/captures/raid5-raid10-syncing) so the rest of the machine is real."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from app.model import Machine
from app.parsers.lsblk import LSBLK_COLUMNS
from backends.linux import LinuxBackend
from backends.linux.probe import lsblk_argv
from backends.linux.source import NOT_FOUND, ReplaySource
from backends.replay import ReplayBackend
from tests.corpus import FIXTURES

BASE = FIXTURES / "captures" / "raid5-raid10-syncing"


@pytest.fixture
def cap(tmp_path: Path) -> Path:
    dest = tmp_path / "cap"
    shutil.copytree(BASE, dest)
    return dest


def _edit_json(path: Path, fn: Any) -> None:
    data = json.loads(path.read_text())
    fn(data)
    path.write_text(json.dumps(data))


def _set_command(cap: Path, program: str, returncode: int, stderr: str, stdout: str = "") -> None:
    def fn(cmds: list[dict[str, Any]]) -> None:
        for c in cmds:
            if c["argv"][0] == program:
                c.update(returncode=returncode, stdout=stdout, stderr=stderr)

    _edit_json(cap / "commands.json", fn)


def _messages(m: Machine) -> list[str]:
    return [n.message for n in m.notes]


def test_baseline_has_no_notes() -> None:
    m = ReplayBackend(BASE).probe()
    assert m.notes == () and m.lvs and len(m.arrays) == 2


def test_lvm_missing_is_a_note(cap: Path) -> None:
    _set_command(cap, "lvm", NOT_FOUND, "lvm: program not found")
    m = ReplayBackend(cap).probe()
    assert "lvm not installed: LVM layer not shown" in _messages(m)
    assert m.lvs == () and m.vgs == () and m.pvs == ()
    assert len(m.arrays) == 2 and m.disks  # the rest of the stack is still there


def test_lvm_failing_is_a_note(cap: Path) -> None:
    _set_command(cap, "lvm", 5, "  /dev/mapper/control: open failed: Permission denied\n")
    m = ReplayBackend(cap).probe()
    (msg,) = [x for x in _messages(m) if x.startswith("lvm fullreport failed")]
    assert "exit 5" in msg and "Permission denied" in msg


def test_lsblk_missing_is_a_note(cap: Path) -> None:
    _set_command(cap, "lsblk", NOT_FOUND, "lsblk: program not found")
    m = ReplayBackend(cap).probe()
    assert any(x.startswith("lsblk not installed") for x in _messages(m))
    assert m.disks == () and len(m.arrays) == 2  # md from sysfs regardless


def test_lsblk_rejecting_a_column_is_retried_without_it(cap: Path) -> None:
    """An older lsblk without e.g. FSVER: the probe asks again without that column."""
    recorded = json.loads((cap / "commands.json").read_text())
    lsblk = next(c for c in recorded if c["argv"][0] == "lsblk")
    lsblk["stdout"] = lsblk["stdout"]  # the answer of the retry
    lsblk["argv"] = list(lsblk_argv(c for c in LSBLK_COLUMNS if c != "FSVER"))
    rejected = {
        "argv": list(lsblk_argv(LSBLK_COLUMNS)),
        "stdin": None,
        "returncode": 1,
        "stdout": "",
        "stderr": "lsblk: unknown column: FSVER\n",
        "duration_s": 0.0,
    }
    (cap / "commands.json").write_text(json.dumps([rejected, *recorded]))
    src = ReplaySource(cap)
    calls: list[tuple[str, ...]] = []
    real_run = src.run

    def run(argv: Any, stdin: str | None = None, timeout: float | None = None) -> Any:
        calls.append(tuple(argv))
        return real_run(argv, stdin=stdin, timeout=timeout)

    src.run = run  # type: ignore[method-assign]
    m = LinuxBackend(src).probe()
    assert [c for c in calls if c[0] == "lsblk"] == [
        lsblk_argv(LSBLK_COLUMNS),
        lsblk_argv(c for c in LSBLK_COLUMNS if c != "FSVER"),
    ]
    assert "this lsblk has no FSVER column" in _messages(m)
    assert len([d for d in m.disks if d.kind == "disk"]) == 4


def test_permission_denied_is_a_note_not_a_crash(cap: Path) -> None:
    def fn(reads: dict[str, str]) -> None:
        reads["/proc/self/mountinfo"] = "EACCES"
        reads["/sys/block/md127/md/dev-nvme1n1p1/state"] = "EACCES"

    _edit_json(cap / "reads.json", fn)
    m = ReplayBackend(cap).probe()
    msgs = _messages(m)
    assert "permission denied reading /proc/self/mountinfo" in msgs
    assert "permission denied reading /sys/block/md127/md/dev-nvme1n1p1/state" in msgs
    md127 = m.array("md127")
    assert md127 is not None and "nvme1n1p1" not in [x.device for x in md127.members]
    assert len(md127.members) == 3
    # without mountinfo, lsblk's MOUNTPOINTS still give the mountpoints
    assert {mp for f in m.filesystems for mp in f.mountpoints} == {"/tmp/mnt/data", "/tmp/mnt/fast"}


def test_member_vanished_between_listdir_and_read(cap: Path) -> None:
    shutil.rmtree(cap / "files/sys/block/md126/md/dev-nvme2n1p2")
    listing = json.loads((cap / "listdir.json").read_text())["/sys/block/md126/md"]
    assert "dev-nvme2n1p2" in listing  # still listed, as when it vanished mid-probe
    m = ReplayBackend(cap).probe()
    assert "md126: member nvme2n1p2 vanished during the probe: skipped" in _messages(m)
    md126 = m.array("md126")
    assert md126 is not None
    assert sorted(x.device for x in md126.members) == ["nvme0n1p2", "nvme1n1p2", "nvme3n1p2"]
    # the sample skips it the same way, without raising
    live = {x.name: x for x in ReplayBackend(cap).sample().arrays}
    assert "nvme2n1p2" not in dict(live["md126"].member_states)


def test_whole_array_vanished(cap: Path) -> None:
    shutil.rmtree(cap / "files/sys/block/md126/md")
    m = ReplayBackend(cap).probe()
    assert [a.name for a in m.arrays] == ["md127"]
    assert any(x.startswith("md126: no md attributes") for x in _messages(m))


def test_md_sysfs_unreadable_falls_back_to_mdstat(cap: Path) -> None:
    for md in ("md126", "md127"):
        shutil.rmtree(cap / f"files/sys/block/{md}/md")
    m = ReplayBackend(cap).probe()
    assert sorted(a.name for a in m.arrays) == ["md126", "md127"]
    assert "md sysfs unreadable: arrays as /proc/mdstat shows them" in _messages(m)
    md127 = m.array("md127")
    assert md127 is not None and md127.level == "raid5" and md127.chunk_bytes == 65536


def test_garbage_sysfs_value_is_a_note(cap: Path) -> None:
    (cap / "files/sys/block/md127/md/sync_completed").write_text("half done\n")
    m = ReplayBackend(cap).probe()
    assert any("md127: sync_completed" in x for x in _messages(m))
    md127 = m.array("md127")
    assert md127 is not None and md127.sync is not None
    assert md127.sync.action == "recover" and md127.sync.done_sectors is None


def test_an_all_zero_uuid_is_no_uuid(cap: Path) -> None:
    """md shows ``00000000-…`` in md/uuid while mdadm is still creating an array; a monitor
    that probed then filed the resync under it (a fresh-clone VM run, test_session_monitor).
    With udev's MD_UUID also zero (udev ran as early), the array has no UUID yet."""
    md = cap / "files/sys/block/md127/md/uuid"
    md.write_text("00000000-0000-0000-0000-000000000000\n")
    a = ReplayBackend(cap).probe().array("md127")
    assert a is not None and a.uuid == "bb49a2ea:22e496cb:112d8712:d8903475"  # udev's, then
    udev = cap / "files/run/udev/data/b9:127"
    udev.write_text(
        udev.read_text().replace(
            "MD_UUID=bb49a2ea:22e496cb:112d8712:d8903475",
            "MD_UUID=00000000:00000000:00000000:00000000",
        )
    )
    m = ReplayBackend(cap).probe()
    a = m.array("md127")
    assert a is not None and a.uuid is None and m.notes == ()


def test_a_malformed_uuid_is_a_note(cap: Path) -> None:
    (cap / "files/sys/block/md127/md/uuid").write_text("not-a-uuid\n")
    m = ReplayBackend(cap).probe()
    a = m.array("md127")
    assert a is not None and a.uuid == "bb49a2ea:22e496cb:112d8712:d8903475"
    assert any(
        "md127: uuid (/sys/block/md127/md/uuid): " in x and "not an array UUID" in x
        for x in _messages(m)
    )
