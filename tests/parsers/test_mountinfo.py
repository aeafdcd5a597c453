"""/proc/self/mountinfo parser: a capture from the dev host plus the kernel documentation's example."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.parsers.errors import ParseError
from app.parsers.mountinfo import mountpoints_by_device, parse_mountinfo, parse_mountinfo_line

SAMPLES = Path(__file__).parent / "samples"


def test_host_capture() -> None:
    """samples/host_mountinfo.txt: every line parses; entries hand-checked against the file."""
    text = (SAMPLES / "host_mountinfo.txt").read_text()
    entries = parse_mountinfo(text)
    assert len(entries) == len([ln for ln in text.splitlines() if ln.strip()])
    by_mp = {e.mountpoint: e for e in entries}
    root = by_mp["/"]
    assert (root.mount_id, root.parent_id, root.major, root.minor) == (27, 1, 254, 0)
    assert (root.fstype, root.source, root.root) == ("ext4", "/dev/vda", "/")
    assert root.options == ("rw", "relatime") and root.optional == ()
    assert root.super_options == ("rw", "discard", "resv_strict", "resuid=65534", "resgid=65534")
    proc = entries[0]
    assert (proc.mount_id, proc.parent_id, proc.mountpoint, proc.fstype, proc.device) == (
        22,
        27,
        "/proc",
        "proc",
        "0:21",
    )
    tools = by_mp["/mnt/sandboxing/model_tools_env/v1/python"]
    assert tools.read_only and tools.options == ("ro", "nosuid", "nodev", "relatime")
    cg = by_mp["/sys/fs/cgroup/systemd"]
    assert cg.super_options == ("rw", "name=systemd")
    assert mountpoints_by_device(entries)["254:0"] == ("/",)


def test_kernel_doc_example_with_optional_field() -> None:
    """Documentation/filesystems/proc.rst example line (optional field master:1)."""
    e = parse_mountinfo_line(
        "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 - ext3 /dev/root rw,errors=continue"
    )
    assert (e.mount_id, e.parent_id, e.major, e.minor, e.root, e.mountpoint) == (
        36,
        35,
        98,
        0,
        "/mnt1",
        "/mnt2",
    )
    assert e.options == ("rw", "noatime") and e.optional == ("master:1",)
    assert (e.fstype, e.source, e.super_options) == ("ext3", "/dev/root", ("rw", "errors=continue"))


def test_escapes_and_multiple_optional_fields() -> None:
    """Octal escapes (space, tab, backslash, newline) in root/mountpoint/source are decoded."""
    line = (
        "101 27 9:127 / /srv/my\\040data\\011x rw,relatime shared:45 master:2 - ext4 "
        "/dev/md127 rw,stripe=16"
    )
    e = parse_mountinfo_line(line)
    assert e.mountpoint == "/srv/my data\tx"
    assert e.optional == ("shared:45", "master:2")
    assert e.device == "9:127" and e.super_options == ("rw", "stripe=16")
    e2 = parse_mountinfo_line("7 1 8:1 /a\\134b /mnt/x\\012y rw - vfat /dev/sda\\0401 rw")
    assert (e2.root, e2.mountpoint, e2.source) == ("/a\\b", "/mnt/x\ny", "/dev/sda 1")


def test_bind_mount_twice_in_mountpoints_by_device() -> None:
    text = (
        "30 27 8:2 / /data rw - xfs /dev/sda2 rw\n"
        "31 27 8:2 /sub /srv rw shared:1 - xfs /dev/sda2 rw\n"
        "\n"
        "32 27 8:2 / /data rw - xfs /dev/sda2 rw\n"
    )
    assert mountpoints_by_device(parse_mountinfo(text)) == {"8:2": ("/data", "/srv")}


@pytest.mark.parametrize(
    "line",
    [
        "36 35 98:0 /mnt1 /mnt2 rw,noatime master:1 ext3 /dev/root rw",  # no separator
        "36 35 98:0 /mnt1 /mnt2 rw - ext3",  # no source
        "x 35 98:0 / /mnt rw - ext3 /dev/root rw",  # non-numeric id
        "36 35 98-0 / /mnt rw - ext3 /dev/root rw",  # bad major:minor
        "36 35 98:0 / - ext3 /dev/root rw",  # fields missing before the separator
    ],
)
def test_malformed_lines_rejected(line: str) -> None:
    with pytest.raises(ParseError):
        parse_mountinfo(line + "\n")
