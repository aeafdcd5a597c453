"""What 80x24 must still show (issue 24 item 5), on the pure renderers: a finding's severity,
device and title fit the ~38-cell pane; the Disks heading keeps name and size whole; a UUID
takes one row; a long plan step wraps under its command, not to column 1."""

from __future__ import annotations

from rich.console import Console

from app.format import middle_ellipsis
from app.plans.plan import Plan, Step
from backends.simulated import SimClock, SimulatedBackend
from widgets.device_detail import render_ref, section_view
from widgets.findings import SEVERITY_WIDTH, finding_columns, short_title, title_lines
from widgets.plan_view import PlanView
from widgets.tree_spec import NodeRef


def _lines(renderable: object, width: int) -> list[str]:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text().rstrip("\n").splitlines()


def _m(scenario: str = "raid6-wd"):  # type: ignore[no-untyped-def]
    return SimulatedBackend.from_scenario(scenario, clock=SimClock.manual()).probe()


def test_findings_columns_fit_the_narrow_pane() -> None:
    from app.rules.finding import Finding

    f = Finding("error", "smart-failed", "sdb", "sdb: SMART health check FAILED", "detail")
    sev, dev, title, fix = finding_columns(38, [f])
    # issue 39: the title was cut to ~16 characters: the device column gives way (the title
    # names the device) and the title wraps onto up to three rows
    assert sev == 1 and dev == 0 and fix == 6  # icon only, no device column, fix kept
    assert title is not None and sev + title + fix + 2 * 3 + 2 == 38
    long = "sdb: SMART attribute 5 Reallocated_Sector_Ct at its threshold"
    rows = title_lines(long, title).split("\n")
    assert " ".join(rows) == long and all(len(r) <= title for r in rows)
    assert short_title(f) == "SMART health check FAILED"
    wide = finding_columns(120, [f])
    assert wide[0] == SEVERITY_WIDTH and wide[1] == 6  # wide: the word and the device too


def test_disks_heading_keeps_name_and_size() -> None:
    lines = _lines(section_view(_m(), "Disks", width=36), 36)
    rows = [x for x in lines if x.strip().startswith("sd")]
    assert len(rows) == 6
    assert all("931.5 GiB" in r for r in rows), rows
    assert "…" not in " ".join(r.split()[0] for r in rows)


def test_uuid_takes_one_row_and_is_said_whole() -> None:
    m = _m()
    (a,) = m.arrays
    assert a.uuid is not None
    text = "\n".join(_lines(render_ref(m, NodeRef(f"dev:{a.name}", "array", a.name), width=38), 38))
    row = next(x for x in text.splitlines() if x.startswith("uuid "))
    assert "…" in row and len(row) <= 38
    assert a.uuid in text.replace("\n", "")  # whole, below the fields
    assert middle_ellipsis("0123456789", 5) == "01…89"


def test_plan_step_wraps_under_its_command() -> None:
    argv = ("mdadm", "--create", "/dev/md/127", "--level=5", "--raid-devices=3", "--chunk=512K",
            "--bitmap=internal", "--metadata=1.2", "--name=127", "--run", "/dev/nvme0n1",
            "/dev/nvme1n1", "/dev/nvme2n1")  # fmt: skip
    plan = Plan("create", (Step.decode(argv, "create it", destructive=True),), target="127")
    lines = _lines(PlanView(plan).render_steps(), 60)
    assert lines[0].startswith("   1. mdadm --create")
    assert len(lines) > 2 and all(x.startswith("      ") for x in lines[1:]), lines


def test_header_never_cuts_the_read_only_reason() -> None:
    """Issue 39: "read-only: nosuchhost not reac…" at 80 columns: the kernel and the backend's
    "@ host" give way first, then the reason takes a line of its own."""
    from app.model.devices import Machine
    from widgets.header_banner import HeaderBanner

    h = HeaderBanner()
    h.machine = Machine(host="nosuchhost", kernel="?")
    h.backend_name = "linux @ nosuchhost"
    h.read_only_reason = "nosuchhost not reached"
    wide = h.title_text(200).plain
    assert (
        wide == "raidman  nosuchhost  ?  [linux @ nosuchhost]   read-only: nosuchhost not reached "
    )
    for width in (60, 78):
        lines = h.title_text(width).plain.split("\n")
        assert all(len(ln) <= width for ln in lines), (width, lines)
        assert "read-only: nosuchhost not reached" in lines[-1]
    assert (
        h.title_text(70).plain
        == "raidman  nosuchhost  [linux]   read-only: nosuchhost not reached "
    )
