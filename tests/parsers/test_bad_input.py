"""The raw exceptions fuzzing found (issue 12, "Parsers never raise on bad input"), each pinned:
the parser now raises ParseError (or reads the value as unknown), and the probe turns one bad
file into one note. Inputs are real outputs (cited) with the one change that broke them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.parsers import lsblk, lvm, md_sysfs, mdstat, mountinfo, smartctl_json
from app.parsers.errors import ParseError
from app.parsers.safe import UnexpectedInput, ascii_int, load_json
from tests.corpus import FIXTURES, corpus

SAMPLES = Path(__file__).parent / "samples"


def _rejects(fn, text: str) -> ParseError:  # type: ignore[no-untyped-def]
    with pytest.raises(ParseError) as e:
        fn(text)
    assert not isinstance(e.value, UnexpectedInput), e.value
    return e.value


def test_superscript_digits_are_not_numbers() -> None:
    """ "²".isdigit() is True and int("²") fails: mountinfo ids, md sysfs counts, mdstat slots."""
    assert ascii_int("²") is None and ascii_int("٣") is None and ascii_int(" 12 ") == 12
    line = (SAMPLES / "host_mountinfo.txt").read_text().splitlines()[0]
    _rejects(mountinfo.parse_mountinfo, "²" + line)
    _rejects(md_sysfs.parse_raid_disks, "4²\n")
    _rejects(md_sysfs.parse_int, "²\n")
    text = corpus("pymdstat", "mdstat.03").read_text().replace("sda1[0]", "sda1[²]")
    _rejects(mdstat.parse_mdstat, text)


def test_mdstat_progress_with_two_dots() -> None:
    """pymdstat mdstat.05 with "12.6%" made "1.5.8%": the percent is unknown, the rest is read."""
    text = corpus("pymdstat", "mdstat.05").read_text().replace("12.6%", "1.5.8%")
    (a,) = mdstat.parse_mdstat(text).arrays
    assert a.progress is not None and a.progress.percent is None
    assert a.progress.done_kib == 37043392


@pytest.mark.parametrize("bad", ["NaN", "Infinity", "-Infinity", "9" * 400, "1e400"])
def test_lvm_json_specials_and_huge_sizes(bad: str) -> None:
    """tests/parsers/samples/lvm_fullreport.json with one pv_size replaced by a JSON special or a
    400-digit number (as a bare JSON value and as lvm's usual string)."""
    text = (SAMPLES / "lvm_fullreport.json").read_text()
    doc = json.loads(text)
    pv = doc["report"][0]["pv"][0]
    for value in (bad, None):
        pv["pv_size"] = value if value is not None else bad
        raw = json.dumps(doc)
        if value is not None:
            raw = raw.replace(f'"pv_size": "{bad}"', f'"pv_size": {bad}')
        _rejects(lvm.parse_fullreport, raw)


@pytest.mark.parametrize("depth", [100, 5000, 100_000])
def test_deeply_nested_json(depth: int) -> None:
    """Deep nesting used to end in RecursionError in the lsblk, lvm and smartctl parsers."""
    nested = "[" * depth + "]" * depth
    lsblk_doc = '{"blockdevices": [' + nested + "]}"
    _rejects(lsblk.parse_lsblk, lsblk_doc)
    _rejects(lvm.parse_fullreport, '{"report": [' + nested + "]}")
    r = smartctl_json.reading_from_smartctl_json('{"a": ' + nested + "}", "sda")
    assert not r.available and r.reason and "nested" in r.reason
    with pytest.raises(ParseError, match="nested"):
        load_json(nested, "x")


def test_negative_kernel_values_are_parse_errors() -> None:
    """md sysfs chunk_size -65536 (or any negative count) is not a value."""
    err = _rejects(md_sysfs.parse_int, "-65536\n")
    assert "negative" in str(err)
    _rejects(md_sysfs.parse_int, "9" * 30)


def test_one_bad_sysfs_file_costs_one_note(tmp_path: Path) -> None:
    """tests/fixtures/vm/create-raid5-synced with md0's chunk_size set to -65536: the array is
    still shown (chunk unknown) and there is exactly one note about it."""
    import shutil

    from backends.replay import ReplayBackend

    cap = tmp_path / "cap"
    shutil.copytree(FIXTURES / "vm" / "create-raid5-synced", cap)
    good = ReplayBackend(cap).probe()
    (cap / "files/sys/block/md0/md/chunk_size").write_text("-65536\n")
    m = ReplayBackend(cap).probe()
    (a,) = m.arrays
    assert a.chunk_bytes is None and a.level == good.arrays[0].level
    assert len(a.members) == len(good.arrays[0].members)
    new = [n for n in m.notes if n not in good.notes]
    assert len(new) == 1 and "chunk_size" in new[0].message and "negative" in new[0].message


def test_replay_of_a_file_that_is_not_utf8(tmp_path: Path) -> None:
    """A captured file with bytes that are not UTF-8 (a device name, a label) is read with
    replacement characters instead of failing the whole replay."""
    import shutil

    from backends.replay import ReplayBackend

    cap = tmp_path / "cap"
    shutil.copytree(FIXTURES / "vm" / "create-raid5-synced", cap)
    (cap / "files/sys/block/md0/md/array_state").write_bytes(b"clean\xff\xfe\n")
    m = ReplayBackend(cap).probe()
    assert [a.name for a in m.arrays] == ["md0"]


def test_mdadm_detail_with_a_superscript_in_the_device_table() -> None:
    """jc-mdadm mdadm-query-raid1-ok.out with a device-table number made "²" (found by the
    3000-example fuzz run): ParseError, not ValueError."""
    from app.parsers import mdadm

    text = corpus("jc-mdadm", "mdadm-query-raid1-ok.out").read_text()
    lines = text.splitlines()
    i = max(n for n, ln in enumerate(lines) if "/dev/" in ln and "active sync" in ln)
    tokens = lines[i].split()
    lines[i] = lines[i].replace(f" {tokens[1]} ", " ² ", 1)
    _rejects(mdadm.parse_detail, "\n".join(lines) + "\n")


def test_numbers_beyond_64_bits_in_mdstat() -> None:
    """prometheus-procfs mdstat with md0's block count made 30 digits long."""
    text = (
        corpus("prometheus-procfs", "mdstat")
        .read_text()
        .replace("248896 blocks", "9" * 30 + " blocks")
    )
    _rejects(mdstat.parse_mdstat, text)
