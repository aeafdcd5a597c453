"""Issue 22's Done-when on a real kernel: a RAID-10 n2 x4 re-add, the plan's forecast against what
md then wrote to the member (its own /proc/diskstats line: the figure the wear recorder keeps).

(a) without a bitmap the re-add is a full recovery: forecast and written both 1.0 x the member
(+-10 %); (b) with an internal bitmap (4 MiB chunks) and 16 MiB written to the array while the
member was out, the forecast comes from ``mdadm -X`` on an in-sync member (dirty bits x chunk,
x copies / raid_disks: RAID-10's bitmap counts array sectors) and both are <= 0.25 x the member
and within 2x of each other. The arrays are made with --assume-clean (no initial resync to
wait for) and the forecast is made before the re-add starts: nothing races the emulator.
"""

from __future__ import annotations

import json

import pytest

from tests.vm.kernel import read_md, sectors_written
from tests.vm.machine import VM
from tests.vm.scenarios import FAST_KIB, create_array

pytestmark = pytest.mark.vm
MD = "md0"
MEMBER_KIB = 128 * 1024


def _state(vm: VM, name: str) -> dict[str, str]:
    d = f"/tmp/raidman-readd/{name}"
    vm.sh(f"rm -rf {d} && mkdir -p {d} && chmod 700 {d}")
    return {"RAIDMAN_STATE_DIR": d}


def _re_add(vm: VM, bitmap: list[str], write_mib: int, name: str) -> tuple[int, int, int, str]:
    """(forecast bytes to the member, member bytes, bytes md wrote to it, the step's option)."""
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    disks = vm.disks(4)
    create_array(
        vm, MD, "raid10", disks, layout="n2", chunk_kib=64, size_kib=MEMBER_KIB,
        bitmap=bitmap[0], extra=[*bitmap[1:], "--assume-clean"],
    )  # fmt: skip
    vm.wait_idle(MD, timeout=120)
    if bitmap[0] == "internal":
        # mdadm -X counts the bits on disk: md clears them lazily (its bitmap daemon, "5s flush
        # period"), and right after --create all read dirty (measured: 64 of 64) though md's
        # in-memory counters need nothing; a long-running array's bitmap is clean
        def clean() -> bool:
            return ", 0 dirty" in vm.run(["mdadm", "-X", f"/dev/{disks[0]}"]).stdout

        vm.wait_for(clean, timeout=120)
    out = disks[2]
    vm.run(["mdadm", f"/dev/{MD}", "--fail", f"/dev/{out}"], check=True)
    vm.run(["mdadm", f"/dev/{MD}", "--remove", f"/dev/{out}"], check=True)
    if write_mib:
        vm.run(
            ["dd", "if=/dev/urandom", f"of=/dev/{MD}", "bs=1M", f"count={write_mib}",
             "oflag=direct", "status=none"],
            check=True,
        )  # fmt: skip
    x = vm.run(["mdadm", "-X", f"/dev/{disks[0]}"])
    vm.note(
        f"{name}: mdadm -X {disks[0]} rc {x.returncode}: "
        + " | ".join(
            ln.strip() for ln in x.stdout.splitlines() if "Chunksize" in ln or "Bitmap :" in ln
        )
        + x.stderr.strip()[:200]
    )
    env = _state(vm, name)
    args = ["plan", "member", "re-add", "--array", MD, "--device", out, "--json"]
    res, code = vm.call_result("app.cli:main", args, env=env)
    assert res.ok and code in (0, None), res
    plan = json.loads(res.stdout)
    (sync,) = [s for s in plan["consequences"]["syncs"] if s["array"] == MD]
    (w,) = [m for m in sync["members"] if m["device"] == out]
    step = plan["steps"][-1]["argv"][2]
    path = f"{env['RAIDMAN_STATE_DIR']}/plan.json"
    vm.write(path, res.stdout)
    vm.sh(f"chmod 600 {path}")
    before = sectors_written(vm, out)[out]
    word = plan["consequences"].get("at_risk") or plan["target"]  # what the preview asks typed
    res, code = vm.call_result("app.cli:main", ["apply", path, "--yes", "--confirm", word], env=env)
    assert code == 0, res
    vm.wait_idle(MD, timeout=600)
    assert read_md(vm, MD).degraded == 0
    wrote = (sectors_written(vm, out)[out] - before) * 512
    return w["bytes_written_high"], w["member_bytes"], wrote, step


def test_raid10_re_add_without_a_bitmap_is_a_full_recovery(blank_vm: VM) -> None:
    forecast, member, wrote, step = _re_add(blank_vm, ["none"], 0, "none")
    blank_vm.note(
        f"RAID-10 re-add, no bitmap ({step}): forecast {forecast / member:.3f} x member, "
        f"md wrote {wrote / member:.3f} x"
    )
    assert step == "--add"
    assert 0.9 * member <= forecast <= 1.1 * member
    assert 0.9 * member <= wrote <= 1.1 * member


def test_raid10_re_add_with_a_bitmap_resyncs_the_dirty_chunks(blank_vm: VM) -> None:
    forecast, member, wrote, step = _re_add(
        blank_vm, ["internal", "--bitmap-chunk=4M"], 16, "bitmap"
    )
    blank_vm.note(
        f"RAID-10 re-add, bitmap 4 MiB chunks, 16 MiB written while out ({step}): forecast "
        f"{forecast / 2**20:.1f} MiB, md wrote {wrote / 2**20:.1f} MiB of {member / 2**20:.0f} MiB"
    )
    assert step == "--re-add"
    assert 0 < forecast <= 0.25 * member and 0 < wrote <= 0.25 * member
    assert forecast / 2 <= wrote <= forecast * 2
