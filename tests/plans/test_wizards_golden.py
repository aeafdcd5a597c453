"""Golden files: the exact argv (plus stdin / pipe and the destructive flag) of each wizard's plan.

Regenerate with ``RAIDMAN_UPDATE_GOLDEN=1 pytest tests/plans/test_wizards_golden.py`` and review
the diff of tests/plans/golden/*.json by hand before committing it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from app.plans.builders.create_array import CreateArrayParams, build_create_array
from app.plans.builders.filesystem import FilesystemParams, build_filesystem
from app.plans.builders.members import build_add, build_fail, build_grow, build_re_add, build_remove
from app.plans.builders.replace import build_replace
from app.plans.builders.sync_actions import (
    build_bitmap,
    build_speed_limits,
    build_stripe_cache,
    build_sync_action,
)
from app.plans.geometry import KIB
from app.plans.plan import Plan
from tests.plans.fakes import array_machine, blank_machine

GOLDEN = Path(__file__).parent / "golden"
NVME4 = ("nvme0n1", "nvme1n1", "nvme2n1", "nvme3n1")


def _degraded() -> Any:
    m = array_machine(bitmap="internal")
    a = m.array("md127")
    assert a is not None
    from dataclasses import replace

    members = tuple(
        replace(x, state=("faulty",), slot=None) if x.device == "nvme1n1" else x for x in a.members
    )
    return replace(m, arrays=(replace(a, members=members, degraded=1), *m.arrays[1:]))


def _removed(bitmap: str | None) -> Any:
    return array_machine(bitmap=bitmap, degraded_member="nvme1n1")


def _create(level: str, n: int, layout: str | None, fstype: str, lvm: bool = False) -> Plan:
    return build_create_array(
        blank_machine(),
        CreateArrayParams(
            level=level,
            devices=NVME4[:n],
            chunk_bytes=32 * KIB,
            layout=layout,
            name="127",
            filesystem=FilesystemParams(fstype=fstype, lvm=lvm, vg="vg127", lv="data"),
        ),
    )


# geometry per level and RAID-10 layout, 32 KiB chunk: mkfs and pvcreate get what the kernel's
# optimal_io_size says (drivers/md/raid10.c raid10_nr_stripes: far/offset and odd counts
# stripe over all members) — app.model.levels
GEOMETRY_CASES: dict[str, Callable[[], Plan]] = {
    "create_raid10_n2_4_32k_lvm_ext4": lambda: _create("10", 4, "n2", "ext4", lvm=True),
    "create_raid10_f2_4_32k_lvm_ext4": lambda: _create("10", 4, "f2", "ext4", lvm=True),
    "create_raid10_o2_4_32k_xfs": lambda: _create("10", 4, "o2", "xfs"),
    "create_raid10_n2_3_32k_xfs": lambda: _create("10", 3, "n2", "xfs"),
    "create_raid10_n2_3_32k_ext4": lambda: _create("10", 3, "n2", "ext4"),
    "create_raid5_4_32k_lvm_ext4": lambda: _create("5", 4, None, "ext4", lvm=True),
    "create_raid6_4_32k_xfs": lambda: _create("6", 4, None, "xfs"),
}

CASES: dict[str, Callable[[], Plan]] = {
    **GEOMETRY_CASES,
    # the key case: RAID-10 n2, 32K, no bitmap, name 127, + conf + initramfs + LVM + ext4
    "create_raid10_n2_32k_lvm_ext4": lambda: build_create_array(
        blank_machine(),
        CreateArrayParams(
            level="10",
            devices=NVME4,
            chunk_bytes=32 * KIB,
            layout="n2",
            bitmap="none",
            name="127",
            update_conf=True,
            update_initramfs=True,
            filesystem=FilesystemParams(fstype="ext4", lvm=True, vg="vg127", lv="data"),
        ),
    ),
    "create_raid5_default_chunk_xfs": lambda: build_create_array(
        blank_machine(),
        CreateArrayParams(
            level="raid5",
            devices=NVME4[:3],
            spares=NVME4[3:],
            name="126",
            filesystem=FilesystemParams(fstype="xfs"),
        ),
    ),
    "create_raid1_no_name": lambda: build_create_array(
        blank_machine(), CreateArrayParams(level="1", devices=NVME4[:2], bitmap="internal")
    ),
    "create_raid0_linear": lambda: build_create_array(
        blank_machine(),
        CreateArrayParams(level="0", devices=NVME4[:2], chunk_bytes=64 * KIB, name="100"),
    ),
    "filesystem_ext4_on_raid5": lambda: build_filesystem(
        array_machine(), "md126", FilesystemParams(fstype="ext4", label="srv")
    ),
    "filesystem_lvm_xfs_on_raid10": lambda: build_filesystem(
        array_machine(),
        "md127",
        FilesystemParams(fstype="xfs", lvm=True, vg="fast", lv="db", lv_size="200G"),
    ),
    "member_add": lambda: build_add(array_machine(), "md127", "nvme4n1"),
    "member_spare": lambda: build_add(array_machine(), "md127", "/dev/nvme4n1", spare=True),
    "member_fail": lambda: build_fail(array_machine(), "md127", "nvme1n1"),
    "member_remove": lambda: build_remove(_degraded(), "md127", "nvme1n1"),
    "member_re_add_bitmap": lambda: build_re_add(_removed("internal"), "md127", "nvme1n1"),
    "member_replace": lambda: build_replace(array_machine(), "md127", "nvme2n1", "nvme4n1"),
    # issue 16: one plan each. Re-add of a working member: fail + remove + --re-add (bitmap) or
    # --add (no bitmap: mdadm refuses --re-add, a full recovery); replace of a faulty member:
    # remove + add (nothing to copy from, so no --replace)
    "member_re_add_active_bitmap": lambda: build_re_add(
        array_machine(bitmap="internal"), "md127", "nvme2n1"
    ),
    "member_re_add_no_bitmap": lambda: build_re_add(array_machine(), "md127", "nvme2n1"),
    "member_replace_faulty": lambda: build_replace(_degraded(), "md127", "nvme1n1", "nvme4n1"),
    "member_replace_fail_remove_add": lambda: build_replace(
        array_machine(), "md127", "nvme2n1", "nvme4n1", method="fail-remove-add"
    ),
    "member_grow_raid5": lambda: build_grow(array_machine(), "md126", 5, add=("nvme4n1",)),
    "sync_check": lambda: build_sync_action(array_machine(), "md127", "check"),
    "sync_idle": lambda: build_sync_action(array_machine(), "md126", "idle"),
    "sync_limits_global": lambda: build_speed_limits(
        array_machine(), min_kib_s=200000, max_kib_s=500000
    ),
    "sync_limits_array": lambda: build_speed_limits(
        array_machine(), min_kib_s=100000, max_kib_s="system", array="md126"
    ),
    "stripe_cache_8192": lambda: build_stripe_cache(array_machine(), "md126", 8192),
    "sync_bitmap_to_file": lambda: build_bitmap(
        array_machine(bitmap="internal"), "md127", "/var/md127_intent"
    ),
}


def golden_view(plan: Plan) -> dict[str, Any]:
    steps = []
    for s in plan.steps:
        d: dict[str, Any] = {"argv": list(s.argv), "destructive": s.destructive}
        if s.stdin is not None:
            d["stdin"] = s.stdin
        if s.stdin_from is not None:
            d["stdin_from"] = list(s.stdin_from)
        steps.append(d)
    # the digest `apply` checks: it changes exactly when the steps, kind or target do
    view = {"kind": plan.kind, "target": plan.target, "steps": steps, "digest": plan.digest}
    # issue 22: what running it means (syncs, bytes per member, redundancy, how it is confirmed)
    assert plan.consequences is not None
    view["consequences"] = plan.consequences.to_json()
    return view


@pytest.mark.parametrize("case", sorted(CASES))
def test_golden(case: str) -> None:
    plan = CASES[case]()
    got = golden_view(plan)
    path = GOLDEN / f"{case}.json"
    if os.environ.get("RAIDMAN_UPDATE_GOLDEN"):
        path.write_text(json.dumps(got, indent=2) + "\n")
    assert path.exists(), f"missing golden {path.name}: run with RAIDMAN_UPDATE_GOLDEN=1"
    assert got == json.loads(path.read_text())
    # every step explains itself in one line
    assert all(s.why and "\n" not in s.why for s in plan.steps)
    # the plan survives JSON (what `raidman plan --json` writes and `apply` reads)
    assert Plan.from_json(json.loads(json.dumps(plan.to_json()))).steps == plan.steps
