"""Parsers never raise on bad input: every parser either returns or raises its ParseError,
for mutated real inputs (tests/parsers/fuzzing.py says which, from which corpus folders).

Reproducible in CI: derandomized, a bounded number of examples, no hypothesis deadline (2 shared
cores); instead each input has a budget of CPU time (``fuzzing.within_budget``: 1 s, ~100x what
a linear parser takes on the mutations' 40,000-character runs), so a super-linear parser fails
here (issue 37: xfs_info took ~54 s on one such line). RAIDMAN_FUZZ_EXAMPLES raises the count
for a long local run.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from app.parsers import (
    dmsetup,
    lsblk,
    lvm,
    lvm_raid,
    lvmconfig,
    md_sysfs,
    mdadm,
    mdstat,
    mountinfo,
    smartctl_json,
    swaps,
    tune2fs,
    xfs_info,
)
from app.parsers.errors import ParseError
from app.parsers.mdadm_bitmap import parse_examine_bitmap
from app.parsers.mdadm_superblock import parse_superblock
from app.parsers.meminfo import mem_available_bytes
from app.parsers.safe import UnexpectedInput
from tests.parsers.fuzzing import mutated, mutated_json, sysfs_values, within_budget

EXAMPLES = int(os.environ.get("RAIDMAN_FUZZ_EXAMPLES", "50"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # no shrinking: an input over the CPU budget is reported as found (shrinking re-runs a
    # quadratic parser on 40,000-character inputs for many minutes)
    phases=(Phase.explicit, Phase.reuse, Phase.generate),
)


def _only_parse_error(fn: Callable[[str], Any], text: str) -> Any:
    """The parser returns or raises ParseError, and not the safety net's UnexpectedInput (which
    keeps a raw exception from escaping but means the parser did not foresee this input); and it
    does so within the per-input budget (``within_budget``)."""
    with within_budget(text):
        try:
            return fn(text)
        except UnexpectedInput:
            raise
        except ParseError:
            return None


def _mdstat_model(text: str) -> Any:
    return mdstat.mdstat_to_arrays(mdstat.parse_mdstat(text))


def _mdadm_export(text: str) -> Any:
    return mdadm.export_view(mdadm.parse_detail_export(text))


TEXT_PARSERS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "mdstat": ("mdstat", _mdstat_model),
    "mdadm --detail": ("mdadm-detail", mdadm.parse_detail),
    "mdadm --examine": ("mdadm-examine", mdadm.parse_examine),
    "mdadm --detail --export": ("mdadm-export", _mdadm_export),
    "mdadm --detail --scan": ("mdadm-detail", mdadm.parse_scan),
    "mountinfo": ("mountinfo", mountinfo.parse_mountinfo),
    "tune2fs -l": ("tune2fs", tune2fs.parse_tune2fs),
    "xfs_info": ("xfs_info", xfs_info.parse_xfs_info),
    "lvmconfig": ("lvmconfig", lvmconfig.parse_lvmconfig),
    "/proc/swaps": ("swaps", swaps.parse_swaps),
    "dmsetup table": ("dmsetup", dmsetup.parse_crypt_table),
    "dmsetup status --target raid": ("dmsetup-raid", lvm_raid.parse_raid_status),
}

JSON_PARSERS: dict[str, tuple[str, Callable[[str], Any]]] = {
    "lsblk --json": ("lsblk", lsblk.parse_lsblk),
    "lvm fullreport": ("lvm", lvm.parse_fullreport),
    "lvs --reportformat json": ("lvm", lvm.parse_lvs),
    "pvs --reportformat json": ("lvm", lvm.parse_pvs),
    "vgs --reportformat json": ("lvm", lvm.parse_vgs),
}


@pytest.mark.parametrize("name", list(TEXT_PARSERS))
def test_text_parser_returns_or_raises_parse_error(name: str) -> None:
    kind, fn = TEXT_PARSERS[name]

    @FUZZ
    @given(mutated(kind))
    def run(text: str) -> None:
        _only_parse_error(fn, text)

    run()


@pytest.mark.parametrize("name", list(JSON_PARSERS))
def test_json_parser_returns_or_raises_parse_error(name: str) -> None:
    kind, fn = JSON_PARSERS[name]

    @FUZZ
    @given(mutated_json(kind))
    def run(text: str) -> None:
        _only_parse_error(fn, text)

    run()


@FUZZ
@given(mutated_json("smartctl"))
def test_smartctl_json_never_raises(text: str) -> None:
    """reading_from_smartctl_json promises no exception at all: bad JSON is a reading with a
    reason."""
    with within_budget(text):
        r = smartctl_json.reading_from_smartctl_json(text, "sda", now=0.0)
    assert r.device == "sda"
    if not r.available:
        assert r.reason


MD_SYSFS: dict[str, Callable[[str], Any]] = {
    "parse_int": md_sysfs.parse_int,
    "parse_raid_disks": md_sysfs.parse_raid_disks,
    "parse_speed_limit": md_sysfs.parse_speed_limit,
    "parse_local_speed_limit": md_sysfs.parse_local_speed_limit,
    "parse_sync_completed": md_sysfs.parse_sync_completed,
    "parse_dev_state": md_sysfs.parse_dev_state,
    "parse_slot": md_sysfs.parse_slot,
    "parse_bitmap_location": md_sysfs.parse_bitmap_location,
    "parse_external_member": md_sysfs.parse_external_member,
    "parse_metadata_version": md_sysfs.parse_metadata_version,
    "layout_name raid5": lambda t: md_sysfs.layout_name("raid5", t),
    "layout_name raid10": lambda t: md_sysfs.layout_name("raid10", t),
}


@pytest.mark.parametrize("name", list(MD_SYSFS))
def test_md_sysfs_returns_or_raises_parse_error(name: str) -> None:
    fn = MD_SYSFS[name]

    @FUZZ
    @given(sysfs_values())
    def run(text: str) -> None:
        _only_parse_error(fn, text)

    run()


@FUZZ
@given(st.text(max_size=200))
def test_any_text_at_all(text: str) -> None:
    """Not even real-looking: arbitrary text through every parser."""
    for _kind, fn in [*TEXT_PARSERS.values(), *JSON_PARSERS.values()]:
        _only_parse_error(fn, text)
    _only_parse_error(parse_examine_bitmap, text)
    _only_parse_error(lambda t: parse_superblock("sda", t, t), text)
    _only_parse_error(lambda t: parse_superblock("sda", None, t), text)
    mem_available_bytes(text)  # promises no exception: None for anything but MemAvailable
    smartctl_json.reading_from_smartctl_json(text, "sda")
