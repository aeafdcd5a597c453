"""Every sync recorded, none invented (issue 38), by ``raidman monitor`` as shipped on a real
kernel: its wear database, its log and what its alert program receives.

(a) ``mdadm --fail`` of a member of a RAID-10 without spare: md says "recover" for a moment
    (md_sync_action while MD_RECOVERY_NEEDED is set) and md_check_recovery finds nothing to
    rebuild: no record, no RebuildStarted. Then the member removed, 4 MiB written to the array,
    the member re-added: the bitmap recovery (held until the monitor has seen it, then well
    under a second) is recorded once with the kernel's bytes for the member (±10 % or 1 MiB),
    one RebuildStarted.
(b) two arrays on partitions of the same disks, the second DELAYED behind the first (md.c
    md_do_sync "delaying resync of md126 until md127 has finished"): ``report --json`` shows
    ``waits_for`` during the wait; one record per array, each with its own partitions only.
(c) a scheduled check in two windows — CheckStarted / CheckFinished only, one check record
    continued, the same percentage in the log, the alert and the record — is asserted in
    test_routine.py, whose windows are the guest's clock moved on (not two minutes waited).

Each test starts from ``blank_vm`` and sets up what it needs (no order between them).
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from tests.vm.kernel import sectors_written
from tests.vm.machine import VM, GuestProcess
from tests.vm.scenarios import FAST_KIB, HOLD_KIB, create_array

pytestmark = pytest.mark.vm
STATE = "/tmp/raidman-syncrec-state"
CFG = "/tmp/raidman-syncrec-cfg"
OUT = "/tmp/raidman-syncrec-out"
MIB = 1 << 20


ENV = {"RAIDMAN_STATE_DIR": STATE, "XDG_CONFIG_HOME": CFG}


def _monitor(vm: VM, checks: str) -> GuestProcess:
    """raidman.toml with ``checks`` and an alert program that writes one file per event (a
    shell script: Python takes seconds to start under TCG); the monitor started and looking."""
    vm.sh(
        f"""
        rm -rf {STATE} {CFG} {OUT}
        mkdir -p {OUT}/alerts {CFG}/raidman
        cat > {OUT}/alert <<'EOF'
#!/bin/sh
f={OUT}/alerts/$(date +%s%N)-$$
{{ date +%s.%N; echo $#; for a in "$@"; do echo "$a"; done; env | grep '^RAIDMAN_'; echo end; }} > $f.tmp
mv $f.tmp $f
EOF
        chmod 755 {OUT}/alert
        cat > {CFG}/raidman/raidman.toml <<'EOF'
[checks]
{checks}
ignore_autocheck = true

[alerts]
program = "{OUT}/alert"
cooldown = "1s"
timeout = "20s"
EOF
        chmod 600 {CFG}/raidman/raidman.toml
        """
    )
    mon = vm.spawn_raidman("monitor", env=ENV)  # a fork of the agent: no interpreter start

    def watching() -> bool:
        st = mon.poll()
        assert st["running"], st
        return "watching" in (st.get("stdout") or "")

    vm.wait_for(watching, 120, "the monitor's first sample", interval=0.5)
    return mon


def _alerts(vm: VM) -> list[dict[str, Any]]:
    got = vm.read_many(vm.glob(f"{OUT}/alerts/*"))
    out = []
    for name, text in got.items():
        lines = (text or "").splitlines()
        if name.endswith(".tmp") or len(lines) < 2 or lines[-1] != "end":
            continue
        n = int(lines[1])
        env = dict(x.split("=", 1) for x in lines[2 + n : -1] if "=" in x)
        out.append({"t": float(lines[0]), "argv": lines[2 : 2 + n], "env": env})
    return sorted(out, key=lambda a: a["t"])


def _events(vm: VM, *names: str) -> list[dict[str, Any]]:
    return [a for a in _alerts(vm) if a["argv"][0] in names]


def _records(vm: VM) -> list[dict[str, Any]]:
    r: list[dict[str, Any]] = vm.call("tests.vm.guest_session:records", STATE)
    return r


def _log(mon: GuestProcess) -> str:
    return str(mon.poll().get("stdout") or "")


def _stop(vm: VM, mon: GuestProcess, *mds: str) -> None:
    mon.kill()
    out = mon.wait(30)
    vm.note("monitor log:\n" + out.stdout[-4000:])
    vm.set_speed_limits()
    for md in mds:
        vm.run(["mdadm", "--stop", f"/dev/{md}"])


def test_a_failed_member_without_spare_is_no_rebuild_and_a_readd_is_one(blank_vm: VM) -> None:
    vm = blank_vm
    md = "md127"
    disks = vm.disks(4)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    # a 4 MiB bitmap chunk: 4 MiB written while the member is out dirty a few chunks
    create_array(
        vm, md, "raid10", disks, chunk_kib=64, layout="n2", bitmap="internal",
        extra=["--bitmap-chunk=4M"],
    )  # fmt: skip
    vm.wait_idle(md, 300)
    mon = _monitor(vm, 'every = "off"')
    try:
        n0 = len(_records(vm))
        member = disks[3]
        t0 = time.time()
        vm.run(["mdadm", f"/dev/{md}", "--fail", f"/dev/{member}"], check=True)
        vm.wait_for(
            lambda: any(a["argv"][:3] == ["Fail", f"/dev/{md}", f"/dev/{member}"]
                        for a in _events(vm, "Fail")),
            20, "Fail at the alert program", interval=0.5,
        )  # fmt: skip
        time.sleep(6)  # several looks after md's moment of "recover"
        vm.note(f"after --fail: {_alerts(vm)}")
        assert _events(vm, "RebuildStarted", "RebuildFinished") == []
        assert len(_records(vm)) == n0, _records(vm)
        assert f"{md}: recover" not in _log(mon), _log(mon)[-2000:]

        vm.run(["mdadm", f"/dev/{md}", "--remove", f"/dev/{member}"], check=True)
        vm.run(
            ["dd", "if=/dev/urandom", f"of=/dev/{md}", "bs=1M", "count=4", "oflag=direct"],
            check=True,
        )
        time.sleep(2)  # a look with the member out
        before = sectors_written(vm, member)[member]
        t1 = time.monotonic()
        # held until the monitor has seen it: its first look then comes before more than a few
        # KiB are written (a loaded run's first look came after three quarters of the 2 MiB)
        vm.set_speed_limits(1, HOLD_KIB)
        vm.run(["mdadm", f"/dev/{md}", "--re-add", f"/dev/{member}"], check=True)
        vm.wait_for(lambda: len(_records(vm)) > n0, 60, "the re-add's record begun", interval=0.5)
        vm.set_speed_limits(FAST_KIB, FAST_KIB)
        vm.wait_idle(md, 120)
        vm.note(f"re-add: idle after {time.monotonic() - t1:.1f} s (as the test saw it)")
        kernel = (sectors_written(vm, member)[member] - before) * 512
        vm.note(f"kernel: {kernel} bytes written to {member} by the re-add")
        vm.wait_for(
            lambda: len(_records(vm)) > n0 and _records(vm)[n0]["ended"],
            60, "the re-add's record", interval=1.0,
        )  # fmt: skip
        vm.wait_for(lambda: bool(_events(vm, "RebuildFinished")), 30, "RebuildFinished")
        recs = _records(vm)
        vm.note(f"records: {recs[n0:]}")
        (rec,) = recs[n0:]
        assert (rec["action"], rec["outcome"]) == ("recover", "finished"), rec
        got = rec["written"][member]
        assert kernel > 0 and abs(got - kernel) <= max(kernel // 10, MIB), (got, kernel, rec)
        started = [a for a in _events(vm, "RebuildStarted") if a["t"] >= t0 - 1]
        assert len(started) == 1 and started[0]["argv"][1] == f"/dev/{md}", _alerts(vm)
    finally:
        _stop(vm, mon, md)


def test_a_delayed_sync_waits_and_each_array_keeps_its_own_bytes(blank_vm: VM) -> None:
    vm = blank_vm
    disks = vm.disks(2)
    vm.sh(
        "\n".join(
            f"parted -s -a none /dev/{d} mklabel gpt mkpart a 1MiB 65MiB mkpart b 65MiB 97MiB"
            f" && partx -u /dev/{d} || true"
            for d in disks
        )
        + "\nudevadm settle || true"
    )
    p1 = [f"{d}p1" for d in disks]
    p2 = [f"{d}p2" for d in disks]
    mon = _monitor(vm, 'every = "off"')
    try:
        vm.set_speed_limits(1, HOLD_KIB)  # md127's resync held while the test looks
        create_array(vm, "md127", "raid1", p1)
        create_array(vm, "md126", "raid1", p2)
        vm.wait_for(
            lambda: "DELAYED" in (vm.read("/proc/mdstat") or ""), 30, "md126 resync=DELAYED"
        )
        time.sleep(3)  # looks of the wait
        res = vm.raidman("report", "--json", "--no-smart", "--no-audit", env=ENV, check=True)
        arrays = {a["name"]: a for a in json.loads(res.stdout)["arrays"]}
        vm.note(f"md126 sync while it waits: {arrays['md126']['sync']}")
        s126 = arrays["md126"]["sync"]
        assert s126["action"] == "delayed" and s126["waits_for"] == ["md127"], s126
        assert s126["shares"] == sorted(disks), s126
        assert s126["starts_in_s"] is None or s126["starts_in_s"] > 0, s126
        assert [r["array"] for r in _records(vm)] == ["md127"], _records(vm)
        assert "stuck" not in _log(mon)
        # md127 released by its own limits; md126 then starts under the system's (held) until
        # the monitor has recorded its start: the test never races md126's resync of a second
        # (a loaded CI run recorded 88 % of it: its first look came late)
        for attr, kib in (("sync_speed_max", FAST_KIB), ("sync_speed_min", FAST_KIB)):
            vm.write(f"/sys/block/md127/md/{attr}", f"{kib}\n")
        vm.wait_idle("md127", 300)
        vm.wait_for(lambda: len(_records(vm)) >= 2, 60, "md126's record begun", interval=1.0)
        vm.set_speed_limits(FAST_KIB, FAST_KIB)
        vm.wait_idle("md126", 300)
        vm.wait_for(
            lambda: len(_records(vm)) >= 2 and all(r["ended"] for r in _records(vm)),
            60, "both records ended", interval=1.0,
        )  # fmt: skip
        recs = _records(vm)
        vm.note(f"records: {recs}")
        assert sorted(r["array"] for r in recs) == ["md126", "md127"], recs
        r127 = next(r for r in recs if r["array"] == "md127")
        r126 = next(r for r in recs if r["array"] == "md126")
        assert r126["devices"] == sorted(p2) and r127["devices"] == sorted(p1)
        assert all(r["outcome"] == "finished" for r in recs), recs
        assert r126["started_at"] >= r127["ended_at"] - 2, recs  # from when it really ran
        # a RAID-1 resync writes the second mirror whole, each from its own partitions' counts
        for rec, parts, size in ((r127, p1, 64 * MIB), (r126, p2, 32 * MIB)):
            assert sum(rec["written"][p] for p in parts) >= 0.9 * size, rec
        assert not re.search(r"md126: delayed|became", _log(mon)), _log(mon)[-3000:]
    finally:
        _stop(vm, mon, "md126", "md127")
