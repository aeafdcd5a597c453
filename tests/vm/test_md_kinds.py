"""Issue 43: more of md on the real kernel — an array with a write journal, one with PPL, linear,
RAID-0, level changes (RAID-1 → 5, 5 → 6, 6 → 5) and reshapes (a member added, then the chunk changed) —
with raidman's probe and its 1 Hz sample compared field by field with sysfs read right before
and right after them at every step: level, raid_disks, chunk, degraded, bitmap, consistency
policy (journal/PPL), members' roles and slots, sync action and progress, reshape position.

The whole walk is ONE guest call (tests/vm/guest_md_kinds.py): members are 32 MiB
(``--size=32M``), the reshape is held by md's speed limit while it is looked at and then let
go at full speed, so the walk stays well under two minutes of TCG time. With
``RAIDMAN_MD_KINDS_RECORD=1`` the run writes the kernel's side of every step to
tests/fixtures/md_kinds/walk.json, the golden file the simulated backend is compared with
(tests/simulated/test_md_kinds_sim.py)."""

from __future__ import annotations

import os

import pytest

from tests.vm.kernel import KernelMd, md_paths
from tests.vm.machine import VM
from tests.vm.md_kinds_steps import ARRAYS, compare, record, steps

pytestmark = pytest.mark.vm


@pytest.mark.vm
def test_journal_ppl_linear_raid0_level_change_and_reshape_match_sysfs(blank_vm: VM) -> None:
    vm = blank_vm
    if not vm.has_module("backends.linux"):
        pytest.fail("backends.linux is missing in the guest")
    names = vm.disks(4)
    d = [f"/dev/{x}" for x in names]
    specs = {md: list(md_paths(md)) for md in ARRAYS}
    with vm.timed("md kinds walk (journal, PPL, linear, RAID-0, 1->5, reshapes, 5->6->5)"):
        recs = vm.call("tests.vm.guest_md_kinds:walk", steps(d), specs, timeout=600)
    if os.environ.get("RAIDMAN_MD_KINDS_RECORD") == "1":  # the simulator's golden fixture
        record(recs, names)
    seen: dict[str, KernelMd] = {}
    problems: list[str] = []
    for rec in recs:
        if "model" not in rec:
            continue
        k, bad = compare(rec)
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
    held_chunk = seen["chunk 64K -> 128K (held)"]
    assert held_chunk.sync_action == "reshape" and held_chunk.get("chunk_size") == "131072 (65536)"
    assert seen["chunk 64K -> 128K"].num("chunk_size") == 128 * 1024
    to6 = seen["raid5 -> raid6 (held)"]
    assert to6.level == "raid6" and to6.sync_action == "reshape" and to6.num("raid_disks") == 4
    six = seen["raid5 -> raid6 done"]
    assert six.level == "raid6" and six.in_sync() == {x[5:] for x in d}
    assert seen["raid6 -> raid5 (held)"].sync_action == "reshape"
    back = seen["raid6 -> raid5 done"]
    assert back.level == "raid5" and back.num("raid_disks") == 3 and back.degraded == 0
    assert "md24" not in vm.read("/proc/mdstat")
