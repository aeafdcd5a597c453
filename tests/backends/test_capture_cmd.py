"""`raidman capture DIR` on this host, then replayed: the replay shows what the host showed."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.cli import main
from backends.linux import LinuxBackend
from backends.replay import ReplayBackend


def test_capture_then_replay_matches_live_probe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "cap"
    assert main(["capture", str(out), "--no-smart"]) == 0
    printed = capsys.readouterr().out
    assert f"raidman --replay {out}" in printed
    assert (out / "README").read_text().startswith("raidman capture of ")
    live = LinuxBackend().probe()
    replayed = ReplayBackend(out).probe()
    assert (replayed.host, replayed.kernel) == (live.host, live.kernel)
    assert [d.name for d in replayed.disks] == [d.name for d in live.disks]
    assert [(p.name, p.start_sector) for p in replayed.partitions] == [
        (p.name, p.start_sector) for p in live.partitions
    ]
    assert replayed.edges == live.edges
    assert [a.name for a in replayed.arrays] == [a.name for a in live.arrays]


def test_capture_into_unwritable_place_is_a_message(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    assert main(["capture", str(blocker / "cap")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("raidman capture: cannot write") and "Traceback" not in err


def test_replay_of_missing_dir_is_a_backend_error(tmp_path: Path) -> None:
    from app.backend import BackendError

    with pytest.raises(BackendError, match="not a raidman capture"):
        ReplayBackend(tmp_path / "nothing")


def test_capture_records_what_the_audit_reads(tmp_path: Path) -> None:
    """The replay's audit reads exactly what the live audit read on this host: nothing is
    "not recorded", and the findings and the reasons for what stayed unknown are the same."""
    from app.commands.capture import capture
    from app.rules import audit, gather

    out = tmp_path / "cap"
    capture(out, smart=False)
    live_b = LinuxBackend()
    live = live_b.probe()
    live_in = gather(live_b, live)
    rep_b = ReplayBackend(out)
    rep = rep_b.probe()
    rep_in = gather(rep_b, rep)
    assert not [w for w in rep_in.unknown.values() if "not recorded" in w]
    assert rep_in.unknown == live_in.unknown
    assert (rep_in.schedulers, rep_in.queue_depth, rep_in.write_cache) == (
        live_in.schedulers,
        live_in.queue_depth,
        live_in.write_cache,
    )
    assert [f.code for f in audit(rep, rep_in)] == [f.code for f in audit(live, live_in)]
    # the disks' queue files the audit reads are in the capture
    for d in rep.disks:
        if d.kind == "disk":
            assert rep_b.recorded(f"/sys/block/{d.name}/queue/scheduler")
    assert not rep_b.recorded("/etc/never-read-by-raidman")


@pytest.mark.parametrize(
    ("name", "content"),
    [
        ("meta.json", "[]"),
        ("meta.json", '{"euid": "root"}'),
        ("reads.json", '{"/proc/mdstat": 1}'),
        ("commands.json", '[{"argv": "lsblk"}]'),
        ("commands.json", '[{"argv": ["lsblk"], "returncode": "0"}]'),
        ("listdir.json", '{"/sys/block": "md0"}'),
        ("commands.json", "[[[[["),
    ],
)
def test_capture_out_of_shape_is_a_clear_error(tmp_path: Path, name: str, content: str) -> None:
    """A capture is untrusted input: a malformed index is refused with a message, never a
    traceback later in the probe (tests/fixtures/vm/create-raid5-synced with one index spoiled)."""
    import shutil

    from app.backend import BackendError
    from tests.corpus import FIXTURES

    cap = tmp_path / "cap"
    shutil.copytree(FIXTURES / "vm" / "create-raid5-synced", cap)
    (cap / name).write_text(content)
    with pytest.raises(BackendError, match=name.replace(".", r"\.")):
        ReplayBackend(cap)
