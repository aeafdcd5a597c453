"""Issue 16 point 5, the missing paths, from the key to the preview on the simulated backend:

* ``v``: LVM and/or a filesystem on an existing array, aligned to the array's geometry (the
  numbers come from app.plans.geometry, the same as ``raidman plan filesystem``); an array that
  already carries a filesystem, PV or holder is shown with the reason and refused.
* ``a`` → "replace this member" / "re-add this member": one plan each (fail, remove,
  --replace/--add/--re-add), the bitmap's effect on the cost in the preview's notes.
"""

from __future__ import annotations

from textual.widgets import Checkbox, Input, Select, SelectionList, Static

from app.plans.builders.filesystem import FilesystemParams, build_filesystem
from app.ui.app import RaidmanApp
from app.ui.screens.plan_preview import PlanPreviewScreen
from app.ui.screens.wizards import MEMBER_ACTIONS, FilesystemWizard, MemberWizard
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.helpers import plain, preview_of, wait_for, wait_ready

NVME = ("/dev/nvme0n1", "/dev/nvme1n1", "/dev/nvme2n1", "/dev/nvme3n1")


def _app(backend: SimulatedBackend) -> RaidmanApp:
    return RaidmanApp(backend, probe_interval=0, sample_interval=0)


def _blank_with(level: str, n: int) -> SimulatedBackend:
    """The blank demo with an array made by mdadm (md100) from the first ``n`` NVMe disks."""
    b = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    argv = ["mdadm", "--create", "/dev/md/100", f"--level={level}", f"--raid-devices={n}"]
    if level != "1":
        argv.append("--chunk=32K")
    r = b.run([*argv, "--run", *NVME[:n]])
    assert r.ok, r.stderr
    return b


def _preview_lines(app: RaidmanApp) -> str:
    return " ".join(plain(s, 200) for s in app.screen.query(Static))


async def test_v_puts_lvm_and_xfs_on_the_selected_array_aligned_to_its_geometry() -> None:
    app = _app(_blank_with("5", 4))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        assert app.go_to("md100")
        await pilot.pause()
        await pilot.press("v")
        await pilot.pause()
        wiz = app.screen
        assert isinstance(wiz, FilesystemWizard)
        assert wiz.query_one("#fs-array", Select).value == "md100"  # the tree's selection
        # the geometry it will use: RAID-5 of 4, 32 KiB chunk → 3 data disks, stripe 96 KiB
        info = plain(wiz.query_one("#fs-array-info", Static), 200)
        assert "32 KiB × 3 data disks = stripe 96 KiB" in info, info
        assert "ext4 stride=8,stripe_width=24; XFS su=32k,sw=3" in info, info
        assert not wiz.query_one("#fs-f-lvm").display  # LVM fields only when LVM is on
        wiz.query_one("#fs-lvm", Checkbox).value = True
        await pilot.pause()
        assert wiz.query_one("#fs-f-lvm").display
        wiz.query_one("#fs-vg", Input).value = "fast"
        wiz.query_one("#fs-lv", Input).value = "db"
        wiz.query_one("#fs-size", Input).value = "200G"
        wiz.query_one("#fs-type", Select).value = "xfs"
        await pilot.pause()
        await pilot.press("ctrl+r")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        assert [s.argv for s in prev.plan.steps] == [
            ("pvcreate", "--dataalignment", "96K", "/dev/md100"),
            ("vgcreate", "fast", "/dev/md100"),
            ("lvcreate", "--yes", "--name", "db", "--size", "200G", "fast"),
            ("mkfs.xfs", "-d", "su=32k,sw=3", "/dev/fast/db"),
        ]
        # the same plan as `raidman plan filesystem` builds: one source of the geometry
        assert app.machine is not None
        cli = build_filesystem(
            app.machine,
            "md100",
            FilesystemParams(fstype="xfs", lvm=True, vg="fast", lv="db", lv_size="200G"),
        )
        assert prev.plan.steps == cli.steps
        assert prev.preflight is not None and prev.preflight.refusals == ()


async def test_v_refuses_an_xfs_under_300_mib_on_its_error_line() -> None:
    """mkfs.xfs refuses under 300 MiB ("Filesystem must be larger than 300MB"): the wizard says
    so on its error line, with the size and the limit, and opens no preview."""
    app = _app(_blank_with("5", 4))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        assert app.go_to("md100")
        await pilot.pause()
        await pilot.press("v")
        await pilot.pause()
        wiz = app.screen
        assert isinstance(wiz, FilesystemWizard)
        wiz.query_one("#fs-lvm", Checkbox).value = True
        wiz.query_one("#fs-type", Select).value = "xfs"
        await pilot.pause()
        wiz.query_one("#fs-vg", Input).value = "fast"
        wiz.query_one("#fs-size", Input).value = "200M"
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.screen is wiz
        err = plain(wiz.query_one("#wz-error", Static), 200)
        assert "XFS needs at least 300 MiB: /dev/fast/data would hold at most 200 MiB" in err
        wiz.query_one("#fs-size", Input).value = "300M"
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, PlanPreviewScreen)


async def test_v_shows_an_array_in_use_with_the_reason_and_refuses_it() -> None:
    app = _app(SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual()))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        await pilot.press("v")
        await pilot.pause()
        wiz = app.screen
        assert isinstance(wiz, FilesystemWizard)
        sel = wiz.query_one("#fs-array", Select)
        assert sel.value == "md127"
        label = " ".join(str(p) for p, v in sel._options if v == "md127")
        assert "✗ PV of vg_raid" in label, label
        info = plain(wiz.query_one("#fs-array-info", Static), 200)
        assert "refused: md127: is an LVM physical volume of volume group vg_raid" in info
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert app.screen is wiz  # no plan: the reason instead
        assert "refused: md127: is an LVM physical volume" in plain(wiz.query_one("#wz-error"))


async def test_v_without_arrays_says_why() -> None:
    app = _app(SimulatedBackend.from_scenario("blank", clock=SimClock.manual()))
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_ready(pilot)
        await pilot.press("v")
        await pilot.pause()
        assert not isinstance(app.screen, FilesystemWizard)
        assert app.is_running


async def _member_wizard_on(app: RaidmanApp, pilot: object, member: str) -> MemberWizard:
    assert app.go_to(member)
    await pilot.pause()  # type: ignore[attr-defined]
    await pilot.press("a")  # type: ignore[attr-defined]
    await pilot.pause()  # type: ignore[attr-defined]
    wiz = app.screen
    assert isinstance(wiz, MemberWizard)
    assert wiz.query_one("#mb-action", Select).value is Select.NULL  # nothing destructive chosen
    return wiz


async def test_a_replace_a_working_member_previews_a_hot_replace() -> None:
    b = _blank_with("1", 2)  # RAID-1 of nvme0n1 + nvme1n1; nvme2n1, nvme3n1 free
    app = _app(b)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        wiz = await _member_wizard_on(app, pilot, "nvme0n1")
        assert [v for _, v in MEMBER_ACTIONS][:2] == ["replace", "re-add"]
        assert wiz.query_one("#mb-device", Select).value == "nvme0n1"
        wiz.query_one("#mb-action", Select).value = "replace"
        await pilot.pause()
        picker = wiz.query_one("#mb-new", SelectionList)
        await wait_for(pilot, lambda: wiz.smart is not None)
        picker.select("nvme2n1")
        # nvme2n1 was never qualified (issue 40): its serial typed is the override
        wiz.query_one("#mb-unqualified", Input).value = b.state.disks["nvme2n1"].serial or ""
        await pilot.pause()
        await pilot.press("ctrl+r")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        assert any("was never qualified; used anyway" in w for w in prev.plan.warnings)
        assert [s.argv[2:] for s in prev.plan.steps] == [
            ("--add-spare", "/dev/nvme2n1"),
            ("--replace", "/dev/nvme0n1", "--with", "/dev/nvme2n1"),
        ]
        assert prev.preflight is not None and prev.preflight.refusals == ()
        text = _preview_lines(app)
        assert "redundancy is kept" in text
        assert "does not shorten this" in text  # the bitmap's effect, said in the preview


async def test_a_re_add_of_a_working_member_previews_fail_remove_re_add_with_its_cost() -> None:
    b = _blank_with("1", 2)  # mdadm enables a bitmap on large arrays: re-add is quick
    app = _app(b)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_ready(pilot)
        assert app.machine is not None and app.machine.array("md100").bitmap  # type: ignore[union-attr]
        wiz = await _member_wizard_on(app, pilot, "nvme1n1")
        wiz.query_one("#mb-action", Select).value = "re-add"
        await pilot.pause()
        assert wiz.query_one("#mb-f-member").display  # this member, or one that dropped out
        await pilot.press("ctrl+r")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        assert [s.argv[2:] for s in prev.plan.steps] == [
            ("--fail", "/dev/nvme1n1"),
            ("--remove", "/dev/nvme1n1"),
            ("--re-add", "/dev/nvme1n1"),
        ]
        assert prev.preflight is not None and prev.preflight.refusals == ()
        text = _preview_lines(app)
        assert "only the bitmap chunks written while nvme1n1 was out are resynced" in text


async def test_a_re_add_without_a_bitmap_previews_add_and_the_full_recovery() -> None:
    """raid10-evo's md127 has no bitmap: re-add of sdb2 is fail + remove + --add, and the preview
    says the whole member is written (1.00 × its capacity)."""
    app = _app(SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual()))
    async with app.run_test(size=(200, 60)) as pilot:
        await wait_ready(pilot)
        wiz = await _member_wizard_on(app, pilot, "sdb2")
        wiz.query_one("#mb-action", Select).value = "re-add"
        await pilot.pause()
        await pilot.press("ctrl+r")
        prev = await preview_of(pilot, app)
        assert isinstance(prev, PlanPreviewScreen)
        assert [s.argv[2:] for s in prev.plan.steps] == [
            ("--fail", "/dev/sdb2"),
            ("--remove", "/dev/sdb2"),
            ("--add", "/dev/sdb2"),
        ]
        assert prev.plan.target == "sdb2"  # destructive: the member's name is typed to confirm
        text = _preview_lines(app)
        assert (
            "cost without a write-intent bitmap: a full recovery writing the whole member" in text
        )
        assert "1.00 × its capacity" in text
