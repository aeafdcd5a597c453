"""Issue 43: more of md on the real kernel — an array with a write journal, one with PPL, linear,
RAID-0, a level change (RAID-1 → 5) and reshapes (a member added, then the chunk changed) —
with raidman's probe and its 1 Hz sample compared field by field with sysfs read right before
and right after them at every step: level, raid_disks, chunk, degraded, bitmap, consistency
policy (journal/PPL), members' roles and slots, sync action and progress, reshape position.

The whole walk is ONE guest call (tests/vm/guest_md_kinds.py): members are 32 MiB
(``--size=32M``), the reshape is held by md's speed limit while it is looked at and then let
go at full speed, so the walk stays well under two minutes of TCG time."""

from __future__ import annotations

from typing import Any

import pytest

from tests.vm.kernel import KernelMd, md_mismatches, md_paths
from tests.vm.machine import VM
from tests.vm.scenarios import FAST_KIB, HOLD_KIB

pytestmark = pytest.mark.vm

LIMIT_MAX = "/proc/sys/dev/raid/speed_limit_max"
LIMIT_MIN = "/proc/sys/dev/raid/speed_limit_min"


def _create(md: str, *args: str) -> list[str]:
    return ["mdadm", "--create", f"/dev/{md}", "--run", "--metadata=1.2", *args]


def _gone(md: str, devs: list[str]) -> list[list[str]]:
    return [["mdadm", "--stop", f"/dev/{md}"], ["mdadm", "--zero-superblock", *devs]]


def _steps(d: list[str]) -> list[dict[str, Any]]:
    three, two = d[:3], d[:2]
    return [
        {"name": "limits", "write": [(LIMIT_MIN, "1\n"), (LIMIT_MAX, f"{FAST_KIB}\n")]},
        {
            "name": "journal",
            "run": [
                _create("md20", "--level=5", "--raid-devices=3", "--size=32M", "--assume-clean",
                        f"--write-journal={d[3]}", *three),
            ],
            "look": ["md20"],
        },
        {"name": "journal gone", "run": _gone("md20", [*three, d[3]])},
        {
            "name": "ppl",
            "run": [
                _create("md21", "--level=5", "--raid-devices=3", "--size=32M", "--assume-clean",
                        "--consistency-policy=ppl", *three),
            ],
            "look": ["md21"],
        },
        {"name": "ppl gone", "run": _gone("md21", three)},
        {
            "name": "linear",
            "run": [_create("md22", "--level=linear", "--raid-devices=2", *two)],
            "look": ["md22"],
        },
        {"name": "linear gone", "run": _gone("md22", two)},
        {
            "name": "raid0",
            "run": [_create("md23", "--level=0", "--raid-devices=2", "--chunk=64", *two)],
            "look": ["md23"],
        },
        {"name": "raid0 gone", "run": _gone("md23", two)},
        {
            "name": "raid1",
            "run": [
                _create("md24", "--level=1", "--raid-devices=2", "--size=32M", "--assume-clean",
                        "--bitmap=none", *two),
            ],
            "look": ["md24"],
        },
        {"name": "raid1 -> raid5", "run": [["mdadm", "--grow", "/dev/md24", "--level=5"]],
         "look": ["md24"]},
        {
            "name": "reshape 2 -> 3 (held)",
            "write": [(LIMIT_MAX, f"{HOLD_KIB}\n")],
            "run": [["mdadm", "/dev/md24", "--add", d[2]],
                    ["mdadm", "--grow", "/dev/md24", "--raid-devices=3"]],
            "wait": [("md24", "reshape")],
            "look": ["md24"],
        },
        {
            "name": "reshape 2 -> 3 done",
            "write": [(LIMIT_MAX, f"{FAST_KIB}\n")],
            "wait": [("md24", "idle")],
            "look": ["md24"],
        },
        {
            "name": "chunk 64K -> 128K",
            "run": [["mdadm", "--grow", "/dev/md24", "--chunk=128"]],
            "wait": [("md24", "idle")],
            "look": ["md24"],
        },
        {"name": "raid5 gone", "run": _gone("md24", three)},
    ]  # fmt: skip


def _compare(rec: dict[str, Any]) -> tuple[dict[str, KernelMd], list[str]]:
    """Mismatches between raidman (probe and sample) and sysfs for each array the step looked at."""
    out: list[str] = []
    kernel: dict[str, KernelMd] = {}
    for md, model in rec["model"].items():
        before = KernelMd.parse(md, rec["before"][md])
        after = KernelMd.parse(md, rec["after"][md])
        kernel[md] = after
        out += [f"probe {m}" for m in md_mismatches(model, before, after)]
        pols = {before.get("consistency_policy"), after.get("consistency_policy")}
        if model["consistency_policy"] not in pols:
            out.append(f"probe consistency_policy {model['consistency_policy']!r}, kernel {pols}")
        live = rec["sample"][md]
        for label, got, want in (
            ("level", live["level"], {before.level, after.level}),
            ("raid_disks", live["raid_disks"], {before.num("raid_disks"), after.num("raid_disks")}),
            ("degraded", live["degraded"], {before.degraded, after.degraded}),
        ):
            if got not in want:
                out.append(f"sample {label} {got!r}, kernel {want}")
        actions = {k.sync_action or "idle" for k in (before, after)}
        action = live["sync"]["action"] if live["sync"] else "idle"
        if action not in actions and not (action == "idle" and actions <= {"idle", "frozen"}):
            out.append(f"sample sync action {action!r}, kernel {actions}")
        if live["sync"] and live["sync"].get("reshape_position") is not None:
            got = live["sync"]["reshape_position"]
            pos = [p for k in (before, after) if (p := k.num("reshape_position")) is not None]
            if len(pos) != 2 or not min(pos) <= got <= max(pos):
                out.append(f"sample reshape_position {got}, kernel {pos}")
    return kernel, out


@pytest.mark.vm
def test_journal_ppl_linear_raid0_level_change_and_reshape_match_sysfs(blank_vm: VM) -> None:
    vm = blank_vm
    if not vm.has_module("backends.linux"):
        pytest.fail("backends.linux is missing in the guest")
    d = [f"/dev/{x}" for x in vm.disks(4)]
    specs = {md: list(md_paths(md)) for md in ("md20", "md21", "md22", "md23", "md24")}
    with vm.timed("md kinds walk (journal, PPL, linear, RAID-0, 1->5, reshapes)"):
        recs = vm.call("tests.vm.guest_md_kinds:walk", _steps(d), specs, timeout=600)
    seen: dict[str, KernelMd] = {}
    problems: list[str] = []
    for rec in recs:
        if "model" not in rec:
            continue
        k, bad = _compare(rec)
        seen[rec["name"]] = next(iter(k.values()))
        problems += [f"{rec['name']}: {b}" for b in bad]
        vm.note(f"{rec['name']}: {rec['s']:.1f} s, waited {rec['waited']}")
    assert problems == [], "\n".join(problems)
    # and the kernel did what each step was for (so the comparisons above are of those states)
    j = seen["journal"]
    assert j.get("consistency_policy") == "journal" and j.with_state("journal") == {d[3][5:]}
    assert seen["ppl"].get("consistency_policy") == "ppl"
    assert seen["linear"].level == "linear" and seen["raid0"].level == "raid0"
    assert seen["raid0"].num("chunk_size") == 64 * 1024
    assert seen["raid1"].level == "raid1" and seen["raid1 -> raid5"].level == "raid5"
    held = seen["reshape 2 -> 3 (held)"]
    assert held.sync_action == "reshape" and held.num("raid_disks") == 3
    done = seen["reshape 2 -> 3 done"]
    assert done.num("raid_disks") == 3 and done.in_sync() == {x[5:] for x in d[:3]}
    assert seen["chunk 64K -> 128K"].num("chunk_size") == 128 * 1024
    assert "md24" not in vm.read("/proc/mdstat")
