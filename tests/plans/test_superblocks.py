"""Issue 26 item 3: each member's superblock against its array's events, the devices outside
their array, stray superblocks with their assemble plan -- in ``report --json`` and text, on the
simulator's ``retire`` scenario (sdb1 failed and removed two hours ago; sdc1 from an old array)."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from app.plans.superblocks import read_superblocks
from app.report import full_report_json
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock


def _be() -> SimulatedBackend:
    return SimulatedBackend.from_scenario("retire", clock=SimClock.manual())


def test_a_removed_member_is_behind_and_falls_further_behind() -> None:
    be = _be()
    m = be.probe()
    sbs = read_superblocks(m, be)
    assert set(sbs.members) == {"sda1"}
    (out,) = sbs.outside["md0"]
    now = sbs.array_events(m, "md0")
    assert out.device == "sdb1" and now is not None and out.behind(now) == 12
    be.clock.advance(3600)
    m = be.probe()
    later = read_superblocks(m, be)
    assert later.outside["md0"][0].behind(later.array_events(m, "md0")) == 18


def test_report_json_has_members_superblocks_and_strays() -> None:
    be = _be()
    rep = full_report_json(be, be.probe(), smart=False, findings=False)
    (md0,) = rep["arrays"]
    (member,) = md0["members"]
    sb = member["superblock"]
    assert sb["device"] == "sda1" and sb["events_behind"] == 0
    assert sb["bitmap"] == "internal at 8 sectors from superblock"
    assert sb["device_role"] == "Active device 0" and sb["name"] == "shelf:0"
    (out,) = md0["outside"]
    assert (out["device"], out["events_behind"]) == ("sdb1", 12)
    (stray,) = rep["stray_superblocks"]
    assert stray["name"] == "oldhost:backup"
    assert [d["device"] for d in stray["devices"]] == ["sdc1"]


def test_report_text_and_the_assemble_plan_of_a_stray(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["report", "--demo", "retire", "--no-smart", "--no-audit"]) == 0
    text = capsys.readouterr().out
    assert "md0 sdb1 (not in the array): events 232 (array 244: 12 behind)" in text
    assert "sdc1 carries a superblock of array" in text and "not assembled" in text
    assert (
        main(["plan", "assemble", "--array", "oldhost:backup", "--demo", "retire", "--json"]) == 0
    )
    plan = json.loads(capsys.readouterr().out)
    (step,) = plan["steps"]
    assert step["argv"][:3] == ["mdadm", "--assemble", "/dev/md/backup"]
    assert step["argv"][3].startswith("--uuid=")


def test_a_hostile_superblock_name_is_shown_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    from app.report import full_report_text

    be = _be()
    st = be._state
    uuid, _name = st.md_superblocks["sdc1"]
    st.md_superblocks["sdc1"] = (uuid, "old\x1b[2J\u202ehost:backup")
    text = full_report_text(be, be.probe(), smart=False, findings=False)
    assert "\x1b" not in text and "\u202e" not in text
    assert "old\\x1b[2J\\u202ehost:backup" in text
