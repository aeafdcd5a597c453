"""The simulated ``wipefs --json`` (the create pre-flight's signature check uses it)."""

from __future__ import annotations

import json

from app.plans.guards.preflight import check_signatures
from backends.simulated import SimClock, SimulatedBackend

CREATE10 = [
    "mdadm", "--create", "/dev/md127", "--run", "--level=10", "--raid-devices=4",
    "/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1",
]  # fmt: skip


def test_wipefs_json_lists_signatures_in_util_linux_shape() -> None:
    b = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    # a blank disk: wipefs -J prints nothing at all, and the pre-flight sees no signatures
    r = b.run(["wipefs", "--no-act", "--json", "/dev/nvme0n1"])
    assert (r.returncode, r.stdout, r.stderr) == (0, "", "")
    assert check_signatures(b, "nvme0n1") == []
    assert b.run(CREATE10).returncode == 0
    r = b.run(["wipefs", "-n", "-J", "/dev/nvme0n1"])
    assert r.returncode == 0 and "unrecognized" not in r.stderr
    sigs = json.loads(r.stdout)["signatures"]
    assert [(s["device"], s["offset"], s["type"]) for s in sigs] == [
        ("nvme0n1", "0x1000", "linux_raid_member")
    ]
    assert sigs[0]["uuid"] and set(sigs[0]) == {"device", "offset", "type", "uuid", "label"}
    issues = check_signatures(b, "nvme0n1")
    assert [i.code for i in issues] == ["signatures"]
    assert "linux_raid_member" in issues[0].message and "at 0x1000" in issues[0].message
