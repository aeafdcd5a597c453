"""The md kinds walk (issue 43) as data: the steps the VM test drives in one guest call
(tests/vm/guest_md_kinds.py:walk) and the simulated backend replays (tests/backends/
test_sim_md_kinds.py), and the reduced per-step sysfs a VM run records as the golden fixture
(``RAIDMAN_MD_KINDS_RECORD=1``: tests/fixtures/md_kinds/walk.json) that the simulator is
compared with field by field. Disks are named by their place in the walk (d0..d3), so the
fixture does not depend on the guest's NVMe names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from app.model.levels import PARITY
from app.model.md_names import parity_layout_name
from tests.vm.kernel import KernelMd, md_mismatches

LIMIT_MAX = "/proc/sys/dev/raid/speed_limit_max"
LIMIT_MIN = "/proc/sys/dev/raid/speed_limit_min"
FAST_KIB = 2_000_000  # "as fast as it goes" (tests/vm/scenarios.py: TCG manages well below)
HOLD_KIB = 20  # holds a reshape running while it is looked at (tests/vm/scenarios.py)
GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "md_kinds" / "walk.json"
ARRAYS = ("md20", "md21", "md22", "md23", "md24")
# what the fixture keeps of each array's sysfs (tests/vm/kernel.py MD_ATTRS)
KEPT = (
    "level", "raid_disks", "chunk_size", "layout", "degraded", "sync_action", "reshape_position",
    "component_size", "size", "bitmap/location", "consistency_policy", "array_state",
)  # fmt: skip


def _create(md: str, *args: str) -> list[str]:
    return ["mdadm", "--create", f"/dev/{md}", "--run", "--metadata=1.2", *args]


def _gone(md: str, devs: list[str]) -> list[list[str]]:
    return [["mdadm", "--stop", f"/dev/{md}"], ["mdadm", "--zero-superblock", *devs]]


def steps(d: list[str]) -> list[dict[str, Any]]:
    """The walk over four disks ``d`` (device paths)."""
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
            "name": "chunk 64K -> 128K (held)",
            "write": [(LIMIT_MAX, f"{HOLD_KIB}\n")],
            "run": [["mdadm", "--grow", "/dev/md24", "--chunk=128"]],
            "wait": [("md24", "reshape")],
            "look": ["md24"],
        },
        {
            "name": "chunk 64K -> 128K",
            "write": [(LIMIT_MAX, f"{FAST_KIB}\n")],
            "wait": [("md24", "idle")],
            "look": ["md24"],
        },
        # 5 -> 6 over a 4th disk and back: mdadm changes the level at once (raid5.c
        # raid6_takeover: left-symmetric-6, Q on the new last device) and restripes to the
        # standard layout; back to RAID-5 it restripes to the -6 layout first and changes the
        # level when that reshape ends (mdadm(8) LEVEL CHANGES), freeing the 4th disk as a
        # spare. The man page asks for --backup-file; mdadm 4.2 moves the data offset
        # instead (Grow.c reshape_array: set_new_data_offset when no backup file is given), as
        # the chunk change above already does.
        {
            "name": "raid5 -> raid6 (held)",
            "write": [(LIMIT_MAX, f"{HOLD_KIB}\n")],
            "run": [["mdadm", "/dev/md24", "--add", d[3]],
                    ["mdadm", "--grow", "/dev/md24", "--level=6", "--raid-devices=4"]],
            "wait": [("md24", "reshape")],
            "look": ["md24"],
        },
        {
            "name": "raid5 -> raid6 done",
            "write": [(LIMIT_MAX, f"{FAST_KIB}\n")],
            "wait": [("md24", "idle")],
            "look": ["md24"],
        },
        {
            "name": "raid6 -> raid5 (held)",
            "write": [(LIMIT_MAX, f"{HOLD_KIB}\n")],
            "run": [["mdadm", "--grow", "/dev/md24", "--level=5", "--raid-devices=3"]],
            "wait": [("md24", "reshape")],
            "look": ["md24"],
        },
        {
            "name": "raid6 -> raid5 done",
            "write": [(LIMIT_MAX, f"{FAST_KIB}\n")],
            "wait": [("md24", "idle"), ("md24", "raid5", "level")],
            "look": ["md24"],
        },
        {"name": "raid5 gone", "run": _gone("md24", d)},
    ]  # fmt: skip


def reduce(k: KernelMd, disks: list[str]) -> dict[str, Any]:
    """What the fixture keeps of one array's sysfs, members named d0..d3 by place in ``disks``
    (kernel names, e.g. nvme0n1)."""
    place = {name: f"d{i}" for i, name in enumerate(disks)}
    return {
        "attrs": {a: k.get(a) for a in KEPT},
        "members": {
            place.get(dev, dev): {"state": sorted(m.state), "slot": m.slot}
            for dev, m in sorted(k.members.items())
        },
    }


def record(recs: list[dict[str, Any]], disks: list[str], path: Path = GOLDEN) -> None:
    """Write the golden fixture from a VM walk's records (``walk``'s return value)."""
    out = []
    for rec in recs:
        looked = {}
        for md in rec.get("model", {}):
            looked[md] = {
                "before": reduce(KernelMd.parse(md, rec["before"][md]), disks),
                "after": reduce(KernelMd.parse(md, rec["after"][md]), disks),
            }
        out.append({"name": rec["name"], "looked": looked})
    path.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")


def load(path: Path = GOLDEN) -> list[dict[str, Any]]:
    data: list[dict[str, Any]] = json.loads(path.read_text())
    return data


def compare(rec: dict[str, Any]) -> tuple[dict[str, KernelMd], list[str]]:
    """Mismatches between raidman (probe and sample) and sysfs for each array a step looked at
    (a record of ``walk``: the guest's, or the simulator's in tests/simulated)."""
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
        if model["level"] in PARITY:  # the new layout while a reshape changes it ("2 (18)")
            lays = {
                parity_layout_name(n) for k in (before, after) if (n := k.num("layout")) is not None
            }
            if model["layout"] not in lays:
                out.append(f"probe layout {model['layout']!r}, kernel {lays}")
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
