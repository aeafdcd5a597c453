"""Issue 39: ``plan assemble --array`` takes the names an admin knows for one array not
assembled -- md127, /dev/md127, /dev/md/127, the superblock's name (whole, or the part after the
host when no other array has it) and the UUID in mdadm's and udev's spellings -- and refuses a
name that fits several arrays or none in one line naming what it matched. On the simulator's
``retire`` scenario (md0 "shelf:0" running; sdc1 carries a superblock not assembled), with the
strays read as the CLI reads them (mdadm --examine through the backend)."""

from __future__ import annotations

import pytest

from app.commands.plan_lifecycle import strays_of
from app.plans.builders.assemble import StrayArray, build_assemble
from app.plans.geometry import PlanError
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock


def _retire(stray_name: str) -> SimulatedBackend:
    be = SimulatedBackend.from_scenario("retire", clock=SimClock.manual())
    uuid, _old = be._state.md_superblocks["sdc1"]
    be._state.md_superblocks["sdc1"] = (uuid, stray_name)
    return be


def _argv(be: SimulatedBackend, name: str) -> tuple[str, ...]:
    m = be.probe()
    (step,) = build_assemble(m, strays_of(m, be), name).steps
    return tuple(step.argv)


def test_every_name_of_a_stopped_md127_plans_the_same_assemble() -> None:
    """The issue's case: md127 stopped in the VM leaves "virtme-ng:127" on its members, and
    'md127' was refused with "no array 'md127' among the superblocks not assembled"."""
    be = _retire("virtme-ng:127")
    m = be.probe()
    (stray,) = strays_of(m, be)
    hexd = "".join(c for c in stray.uuid.lower() if c in "0123456789abcdef")
    assert len(hexd) == 32
    colons = ":".join(hexd[i : i + 8] for i in range(0, 32, 8))
    dashes = f"{hexd[:8]}-{hexd[8:12]}-{hexd[12:16]}-{hexd[16:20]}-{hexd[20:]}"
    want = ("mdadm", "--assemble", "/dev/md/127", f"--uuid={colons}")
    for name in (
        "md127",
        "/dev/md127",
        "/dev/md/127",
        "127",
        "virtme-ng:127",
        " md127 ",
        colons,
        colons.upper(),
        dashes,
        hexd,
    ):
        assert _argv(be, name) == want, name


def test_the_short_name_is_taken_when_no_other_array_has_it() -> None:
    be = _retire("oldhost:backup")
    for name in ("backup", "oldhost:backup", "/dev/md/backup"):
        assert _argv(be, name)[2] == "/dev/md/backup"


def test_a_short_name_two_arrays_share_is_refused_naming_both() -> None:
    m = SimulatedBackend.from_scenario("retire", clock=SimClock.manual()).probe()
    u1 = "11111111:22222222:33333333:44444444"
    u2 = "aaaaaaaa:bbbbbbbb:cccccccc:dddddddd"
    strays = (StrayArray(u1, "oldhost:backup", ("sdc1",)), StrayArray(u2, "newhost:backup"))
    with pytest.raises(PlanError) as e:
        build_assemble(m, strays, "backup")
    msg = str(e.value)
    assert "\n" not in msg
    assert msg == (
        "'backup' names 2 arrays: oldhost:backup (11111111:22222222:33333333:44444444, not "
        "assembled); newhost:backup (aaaaaaaa:bbbbbbbb:cccccccc:dddddddd, not assembled); "
        "give the UUID of the one to assemble"
    )
    # the whole name and either UUID spelling pick one
    (step,) = build_assemble(m, strays, "newhost:backup").steps
    assert step.argv[-1] == f"--uuid={u2}"
    (step,) = build_assemble(m, strays, "11111111-2222-2222-3333-333344444444").steps
    assert step.argv[-1] == f"--uuid={u1}"


def test_a_name_of_a_running_array_is_refused_and_says_it_runs() -> None:
    be = _retire("oldhost:backup")
    m = be.probe()
    (md0,) = m.arrays
    assert md0.array_name == "shelf:0" and md0.uuid
    strays = strays_of(m, be)
    for name in ("md0", "/dev/md0", "/dev/md/0", "shelf:0", md0.uuid):
        with pytest.raises(PlanError, match=r"^'.*' is md0 \(shelf:0, running\): it is assembled"):
            build_assemble(m, strays, name)


def test_a_name_a_running_array_and_a_stray_share_is_ambiguous() -> None:
    """A stray "host:0" and the running md0: 'md0' could mean either."""
    be = _retire("oldhost:0")
    m = be.probe()
    strays = strays_of(m, be)
    with pytest.raises(PlanError) as e:
        build_assemble(m, strays, "md0")
    msg = str(e.value)
    assert msg.startswith("'md0' names 2 arrays: oldhost:0 (") and "not assembled); " in msg
    assert msg.endswith("; md0 (shelf:0, running); give the UUID of the one to assemble")
    assert build_assemble(m, strays, "oldhost:0").steps[0].argv[2] == "/dev/md/0"


def test_an_unknown_name_is_refused_listing_the_arrays_not_assembled() -> None:
    be = _retire("oldhost:backup")
    m = be.probe()
    (stray,) = strays_of(m, be)
    for name in ("nosuch", "md9", "deadbeef", stray.uuid[:8]):
        with pytest.raises(PlanError) as e:
            build_assemble(m, strays_of(m, be), name)
        assert str(e.value) == (
            f"no array {name!r} among the arrays not assembled "
            f"(they are: oldhost:backup ({stray.uuid}, not assembled))"
        )


def test_a_hostile_name_is_shown_escaped_in_the_refusal() -> None:
    m = SimulatedBackend.from_scenario("retire", clock=SimClock.manual()).probe()
    u = "11111111:22222222:33333333:44444444"
    strays = (StrayArray(u, "x\x1b[2J:backup"), StrayArray(u.replace("1", "5"), "y:backup"))
    with pytest.raises(PlanError) as e:
        build_assemble(m, strays, "backup\x1b]0;t\x07")
    with pytest.raises(PlanError) as e2:
        build_assemble(m, strays, "backup")
    for msg in (str(e.value), str(e2.value)):
        assert "\x1b" not in msg and "\x07" not in msg
    assert "x\\x1b[2J:backup" in str(e2.value)
