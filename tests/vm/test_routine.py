"""`raidman monitor`'s routine on a real kernel (issue 27 Done-when): scheduled check windows
with a history, and alerts that reach the admin.

Four 256 MiB NVMe disks, each split in p1 (128 MiB) and p2 (16 MiB): md127 a RAID-5 of the four
p1, md126 a RAID-1 of two p2 (the same disks). ``speed_limit_max`` 2,000 KiB/s: md127's check
(127 MiB per member) needs three windows. raidman.toml (the test's XDG_CONFIG_HOME; read by the
monitor as a trusted file): a window every 2 minutes, 30 s long (``ignore_autocheck``: this
host's /etc/default/mdadm says AUTOCHECK=true, which otherwise leaves the checks to Debian's
cron), the alert program and a mail address behind a sendmail-compatible program
(tests/vm/sendmail_shim.sh) that hands the message to a real SMTP receiver on 127.0.0.1
(tests/vm/smtp_sink.py, started by the test).

The windows are the guest's wall clock, as on a real host; the test does not wait for it: it
sets the guest's clock (``date -s``, the guest's own) to just after a window before the monitor
starts, then to 2 s before the next window's start once the monitor watches, and again once the
monitor has recorded the end of the first window's check (nothing runs across a jump) — two
whole 30 s windows 2 minutes apart on the monitor's clock in about 70 s — and sets it back to
the host's time at the end.

Asserted: the monitor starts md127's check by itself, stops it at the window's end and resumes
it in the next window from where it stopped (``sync_min`` > 0 as the second window begins);
``report --json`` shows one check record with both windows (the second from the first's end)
and its mismatch count; md126 and md127 are never checked at the same moment (every sample of
both arrays' ``sync_action`` in one read); ``--test-alert`` delivers TestMessage to the program
and by mail with the array's state; ``mdadm --fail`` of a member makes the program receive
``Fail`` and ``DegradedArray`` with the array and member within 10 s, and the mail arrives with
the array's state in its body.
"""

from __future__ import annotations

import json
import re
import time
from typing import Any

import pytest

from tests.vm.machine import REPO, VM
from tests.vm.scenarios import FAST_KIB, create_array

pytestmark = pytest.mark.vm
MD5, MD1 = "md127", "md126"
STATE = "/tmp/raidman-routine-state"
CFG = "/tmp/raidman-routine-cfg"
OUT = "/tmp/raidman-routine-out"
PORT = 2525
CHECK_KIB = 2000
WINDOW_S = 30


EVERY_S = 120
ENDED = rf"(?m)^\S+ \S+ {MD5}: check (interrupted|finished|became)[^\n]* after "  # tracker's line
ENV = {"RAIDMAN_STATE_DIR": STATE, "XDG_CONFIG_HOME": CFG}


def _guest_now(vm: VM) -> float:
    now: float = vm.call("time:time")
    return now


def _set_guest_clock(vm: VM, at: float) -> None:
    vm.run(["date", "-u", "-s", f"@{at:.3f}"], check=True)


def _to_window(vm: VM, offset_s: float) -> float:
    """The guest's clock moved forward to ``offset_s`` from the start of the next window
    (negative: before it); returns the new time."""
    now = _guest_now(vm)
    at = (now // EVERY_S + 1) * EVERY_S + offset_s
    while at <= now:
        at += EVERY_S
    _set_guest_clock(vm, at)
    return at


def _alerts(vm: VM) -> list[dict[str, Any]]:
    """What the alert program heard, one file per run: its start time, argc, argv, then the
    RAIDMAN_* environment (a shell script: a Python one took seconds to start under TCG)."""
    got = vm.read_many(vm.glob(f"{OUT}/alerts/*"))
    out = []
    for name, text in got.items():
        lines = (text or "").splitlines()
        if name.endswith(".tmp") or len(lines) < 2 or lines[-1] != "end":
            continue  # still being written
        n = int(lines[1])
        env = dict(x.split("=", 1) for x in lines[2 + n : -1] if "=" in x)
        out.append({"t": float(lines[0]), "argv": lines[2 : 2 + n], "env": env})
    return out


def _mails(vm: VM) -> list[str]:
    paths = vm.glob(f"{OUT}/mail/*.eml")
    got = vm.read_many(paths)
    return [t for t in got.values() if t]


def _setup(vm: VM, disks: list[str]) -> None:
    parts = " ".join(disks)
    vm.sh(
        f"""
        rm -rf {STATE} {CFG} {OUT}
        ip link set lo up 2>/dev/null || true
        mkdir -p {OUT}/mail {OUT}/alerts {CFG}/raidman
        for d in {parts}; do
            parted -s -a none /dev/$d mklabel gpt mkpart a 1MiB 129MiB mkpart b 129MiB 145MiB
            partx -u /dev/$d || true
        done
        udevadm settle || true
        cat > {OUT}/alert <<'EOF'
#!/bin/sh
f={OUT}/alerts/$(date +%s%N)-$$
{{ date +%s.%N; echo $#; for a in "$@"; do echo "$a"; done; env | grep '^RAIDMAN_'; echo end; }} > $f.tmp
mv $f.tmp $f
EOF
        cat > {OUT}/sendmail <<'EOF'
#!/bin/sh
exec /bin/bash {REPO}/tests/vm/sendmail_shim.sh {PORT} "$@"
EOF
        chmod 755 {OUT}/alert {OUT}/sendmail
        cat > {CFG}/raidman/raidman.toml <<'EOF'
[checks]
every = "{EVERY_S // 60}m"
window = "{WINDOW_S}s"
max_age_days = 0.001
ignore_autocheck = true

[alerts]
program = "{OUT}/alert"
mailaddr = "root@localhost"
sendmail = "{OUT}/sendmail"
cooldown = "1s"
timeout = "20s"
EOF
        chmod 600 {CFG}/raidman/raidman.toml
        """
    )


def test_scheduled_windows_resume_and_alerts_arrive(blank_vm: VM) -> None:
    vm = blank_vm
    disks = list(vm.disks(4))
    _setup(vm, disks)
    vm.set_speed_limits(FAST_KIB, FAST_KIB)
    create_array(vm, MD5, "raid5", [f"{d}p1" for d in disks], chunk_kib=64)
    create_array(vm, MD1, "raid1", [f"{d}p2" for d in disks[:2]])
    vm.wait_idle(MD5, 300)
    vm.wait_idle(MD1, 300)
    vm.set_speed_limits(1000, CHECK_KIB)
    sink = vm.spawn_call("tests.vm.smtp_sink:serve", PORT, f"{OUT}/mail")
    # outside any window while the monitor starts (a window begins every EVERY_S s since the
    # epoch, app.routine.schedule.window_at)
    _to_window(vm, WINDOW_S + 1)
    mon = vm.spawn_raidman("monitor", env=ENV)
    try:

        def watching() -> bool:
            st = mon.poll()
            assert st["running"], st
            return "watching" in (st.get("stdout") or "")

        vm.wait_for(watching, 120, "the monitor's first sample", interval=0.5)
        vm.note(f"routine: window 1 opens at guest time {_to_window(vm, -2):.0f}")

        # ---- the windows: sample both arrays in one read, about every second --------------
        paths = [
            f"/sys/block/{MD5}/md/sync_action",
            f"/sys/block/{MD1}/md/sync_action",
            f"/sys/block/{MD5}/md/sync_min",
            f"/sys/block/{MD5}/md/sync_completed",
        ]
        starts: list[int] = []  # md127's sync_min at each start of its check
        both = 0
        seen_md1_check = False
        last5 = "idle"
        stops = 0
        deadline = time.monotonic() + 420
        while time.monotonic() < deadline:
            d = vm.read_many(paths)
            a5 = (d[paths[0]] or "").strip()
            a1 = (d[paths[1]] or "").strip()
            if a5 == "check" and a1 == "check":
                both += 1
            seen_md1_check = seen_md1_check or a1 == "check"
            if a5 == "check" and last5 != "check":
                starts.append(int((d[paths[2]] or "0").strip() or 0))
                vm.note(f"md127 check start #{len(starts)}: sync_min {starts[-1]}, {d[paths[3]]}")
            if a5 != "check" and last5 == "check":
                stops += 1
                vm.note(f"md127 check stop #{stops}: sync_min {(d[paths[2]] or '').strip()}")
                if stops == 1:  # the first window is over: on to 2 s before the next one,
                    # once the monitor has recorded the check's end (a run it still tracks
                    # would be projected over the jump: app.sync.tracker _projected_done)
                    vm.wait_for(
                        lambda: re.search(ENDED, mon.poll().get("stdout") or "") is not None,
                        60,
                        "the monitor's record of the end of the first window's check",
                        interval=0.5,
                    )
                    vm.note(f"routine: window 2 opens at guest time {_to_window(vm, -2):.0f}")
            last5 = a5
            if len(starts) >= 2 and stops >= 2:
                break
            time.sleep(0.7)
        assert len(starts) >= 2 and stops >= 2, (
            starts,
            stops,
            mon.poll().get("stdout", "")[-3000:],
        )
        assert starts[0] == 0 and starts[1] > 0, starts
        assert both == 0, "md126 and md127 were checked at the same time"
        assert seen_md1_check, "md126 (the same disks) was never checked"

        res = vm.raidman("report", "--json", "--no-smart", env=ENV, check=True)
        rep = json.loads(res.stdout)
        (arr,) = [x for x in rep["arrays"] if x["name"] == MD5]
        checks = [c for c in arr["checks"] if not str(c["outcome"]).startswith("not started")]
        vm.note(f"md127 checks: {json.dumps(checks)[:3000]}")
        assert len(checks) == 1, checks
        (c,) = checks
        w = c["windows"]
        assert len(w) >= 2 and c["mismatch_cnt"] is not None, c
        # the second window resumes where md recorded the first as done (md.c md_do_sync: an
        # interrupted requested sync sets resync_min = curr_resync_completed): never past where
        # the first stopped, so nothing is skipped; /proc/mdstat's fresher count (what raidman
        # shows) can be a little further (seen: stopped at 86784, resumed at 81320), and where
        # the last look was behind md's stop (seen 80640, resumed at 81320) the first window's
        # end is raised to where md resumes (app.wear.checks.reached_before)
        assert w[0]["from_sector"] == 0 and 0 < w[1]["from_sector"] <= w[0]["to_sector"], w
        assert all(x["end"] - x["start"] <= WINDOW_S + 5 for x in w[:2]), w
        assert {m["device"] for m in c["members"]} == {f"{d}p1" for d in disks}
        codes = {(f["code"], f["device"]) for f in rep["findings"]}
        assert ("md-never-checked", MD5) not in codes and ("md-never-checked", MD1) not in codes

        # ---- what the windows sent (issue 38): check events only, one percentage ----------
        # a window that ends is no rebuild: CheckStarted/CheckFinished, never Rebuild*; the
        # second window's start says it resumed; the first's end gives the same percentage in
        # the alert, the monitor's log and the record
        ours = [a for a in _alerts(vm) if a["argv"][1:2] == [f"/dev/{MD5}"]]
        vm.note(f"md127 alerts of the windows: {ours}")
        assert not [a for a in ours if a["argv"][0] in ("RebuildStarted", "RebuildFinished")]
        started = [a for a in ours if a["argv"][0] == "CheckStarted"]
        ended = [a for a in ours if a["argv"][0] == "CheckFinished"]
        assert len(started) >= 2 and len(ended) >= 1, ours
        assert started[1]["env"]["RAIDMAN_DETAIL"].startswith(f"check of {MD5} resumed at "), ours
        first = ended[0]["env"]
        assert first["RAIDMAN_OUTCOME"] == "interrupted", first
        pct = first["RAIDMAN_PERCENT"]
        log = mon.poll().get("stdout") or ""
        assert f"{MD5}: check interrupted at {pct}" in log, log[-3000:]
        recs = vm.call("tests.vm.guest_session:records", STATE)
        rec = next(r for r in recs if r["action"] == "check" and r["array"] == MD5)
        assert f"{rec['fraction'] * 100:.1f}%" == pct, recs
        assert re.search(
            rf"{MD5}: check resumes at [0-9.]+% \(sector \d+\): check #1, window 2", log
        )

        # ---- alerts ---------------------------------------------------------------------
        t = vm.raidman("monitor", "--test-alert", env=ENV, timeout=120)
        assert t.returncode == 0, t.stdout + t.stderr
        tests = [a for a in _alerts(vm) if a["argv"][0] == "TestMessage"]
        assert {tuple(a["argv"]) for a in tests} >= {
            ("TestMessage", f"/dev/{MD5}"),
            ("TestMessage", f"/dev/{MD1}"),
        }
        vm.wait_for(
            lambda: any("Subject: TestMessage event on /dev/md127" in m for m in _mails(vm)),
            30,
            "the TestMessage mail",
        )
        mail = next(m for m in _mails(vm) if "Subject: TestMessage event on /dev/md127" in m)
        assert f"{MD5} : active raid5" in mail, mail

        member = f"{disks[3]}p1"
        t0 = _guest_now(vm)  # the alert program's `date` is the guest's clock
        vm.run(["mdadm", f"/dev/{MD5}", "--fail", f"/dev/{member}"], check=True)

        def failed_heard() -> bool:
            got = {tuple(a["argv"]) for a in _alerts(vm) if a["t"] >= t0 - 1}
            return ("Fail", f"/dev/{MD5}", f"/dev/{member}") in got and (
                "DegradedArray",
                f"/dev/{MD5}",
            ) in got

        vm.wait_for(failed_heard, 10, "Fail and DegradedArray at the alert program", interval=0.5)
        heard = [a for a in _alerts(vm) if a["t"] >= t0 - 1]
        vm.note(f"alerts after --fail ({_guest_now(vm) - t0:.1f} s): {heard}")
        fail = next(a for a in heard if a["argv"][0] == "Fail")
        assert fail["env"]["RAIDMAN_COMPONENT"] == f"/dev/{member}"
        vm.wait_for(
            lambda: any("Subject: Fail event on /dev/md127" in m for m in _mails(vm)),
            30,
            "the Fail mail",
        )
        mail = next(m for m in _mails(vm) if "Subject: Fail event on /dev/md127" in m)
        vm.note("Fail mail:\n" + mail[:2000])
        assert f"{MD5} : active raid5" in mail and "(F)" in mail and "degraded 1" in mail, mail
    finally:
        mon.kill()
        out = mon.wait(30)
        vm.note("monitor log:\n" + out.stdout[-4000:])
        sink.kill()
        _set_guest_clock(vm, time.time())  # back to the host's time for the tests after this
        vm.set_speed_limits()
        for md in (MD5, MD1):
            vm.run(["mdadm", "--stop", f"/dev/{md}"])
