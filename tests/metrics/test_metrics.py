"""``raidman metrics`` on the simulated backend: the exposition is valid for Prometheus
(``promtool check metrics``, the real tool) and every figure is the model's, in base units."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from app.cli import main
from app.metrics import (
    Family,
    TextfileError,
    TextfileWriter,
    collect,
    gather_input,
    metrics_text,
    render,
    write_textfile,
)
from app.model.smart_units import bytes_written, wear_used_percent
from app.monitor import WearMonitor
from app.rules.engine import audit
from app.rules.inputs import gather
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend, scenario_names
from tests.metrics.expo import find, one, parse
from tests.tools import promtool


def promtool_check(text: str) -> None:
    res = subprocess.run(
        [promtool(), "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    assert res.returncode == 0, res.stdout + res.stderr
    assert res.stdout.strip() == "" and res.stderr.strip() == "", res.stdout + res.stderr


def frozen(scenario: str) -> SimulatedBackend:
    return SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())


@pytest.mark.parametrize("scenario", [s for s in scenario_names() if s != "big"])
def test_every_scenario_is_valid_for_promtool(scenario: str) -> None:
    text = metrics_text(frozen(scenario), SnapshotStore.open(":memory:"))
    assert "raidman_" in text
    promtool_check(text)
    _samples, types = parse(text)
    assert all(n.startswith("raidman_") for n in types)
    for name, typ in types.items():
        assert (typ == "counter") == name.endswith("_total"), name


def test_raid10_evo_resync_figures_are_the_models() -> None:
    be = frozen("raid10-evo")
    machine = be.probe()
    (a,) = machine.arrays
    s = a.sync
    assert s is not None and s.action == "resync" and s.speed_kib_s
    samples, _ = parse(render(collect(gather_input(be, machine, None))))
    lab = {"array": a.name, "uuid": a.uuid or "", "level": a.level}
    assert one(samples, "raidman_md_sync_completed_bytes", **lab) == s.done_sectors * 512
    assert one(samples, "raidman_md_sync_total_bytes", **lab) == s.total_sectors * 512
    assert one(samples, "raidman_md_sync_speed_bytes_per_second", **lab) == s.speed_kib_s * 1024
    assert one(samples, "raidman_md_sync_remaining_seconds", **lab) == pytest.approx(
        s.eta_s, abs=0.1
    )
    actions = find(samples, "raidman_md_sync_action", **lab)
    assert {dict(k)["action"]: v for k, v in actions.items() if v == 1} == {"resync": 1}
    assert len(actions) >= 7 and sum(actions.values()) == 1
    assert one(samples, "raidman_md_degraded", **lab) == 0
    assert one(samples, "raidman_md_disks_required", **lab) == a.raid_disks == 4
    assert one(samples, "raidman_md_disks", **lab, state="active") == 4
    for mem in a.members:
        states = find(samples, "raidman_md_member_state", array=a.name, member=mem.device)
        assert {dict(k)["state"] for k, v in states.items() if v == 1} == {mem.role}
    for d in machine.disks:
        dl = {"disk": d.name, "serial": d.serial or "", "model": d.model or ""}
        r = be.smart(d.name)
        w = bytes_written(r)
        assert w is not None
        assert one(samples, "raidman_disk_device_written_bytes_total", **dl) == w.bytes
        wear = wear_used_percent(r)
        assert wear is not None and w.bytes is not None and d.model == "Samsung SSD 850 EVO 500GB"
        # the larger of Wear_Leveling_Count and host writes against the 150 TBW Samsung's
        # warranty table rates the 850 EVO 500 GB for (app.model.endurance)
        tbw = round(100 * w.bytes / (150 * 10**12))
        assert one(samples, "raidman_disk_endurance_used_ratio", **dl) == (
            max(wear.used_percent, tbw) / 100
        )
        assert one(samples, "raidman_disk_smart_healthy", **dl) == (r.health == "PASSED")
    io = {d.name: d.write_bytes for d in be.sample().disk_io}
    kern = find(samples, "raidman_disk_kernel_written_bytes_total")
    assert kern and all(io[dict(k)["disk"]] == v for k, v in kern.items())


def test_raid6_degraded_failed_member_failing_disk_and_findings() -> None:
    be = frozen("raid6-wd")
    machine = be.probe()
    (a,) = [x for x in machine.arrays if x.is_degraded]
    samples, _ = parse(metrics_text(be, None))
    lab = {"array": a.name, "uuid": a.uuid or "", "level": a.level}
    assert one(samples, "raidman_md_degraded", **lab) == a.degraded > 0
    faulty = [m for m in a.members if m.role == "faulty"]
    assert one(samples, "raidman_md_disks", **lab, state="failed") == len(faulty)
    failing = {d.name for d in machine.disks if be.smart(d.name).health == "FAILED"}
    zero = {
        dict(k)["disk"] for k, v in find(samples, "raidman_disk_smart_healthy").items() if v == 0
    }
    assert zero == failing
    want = {(f.code, f.severity, f.device) for f in audit(machine, gather(be, machine))}
    got = {
        (dict(k)["code"], dict(k)["severity"], dict(k)["device"])
        for k, v in find(samples, "raidman_finding").items()
        if v == 1
    }
    assert got == want and want
    assert one(samples, "raidman_audit_ran") == 1


def run_recovery_to_the_end(tmp_path: Path) -> tuple[SimulatedBackend, SnapshotStore, str]:
    """Scenario (b), seed 000: the re-added SSD of a RAID-5 is rebuilt in full while the
    monitor records SMART at the sync's start and end."""
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario("raid5-cable", clock=clock)
    store = SnapshotStore.open(tmp_path / "state.db")
    mon = WearMonitor(be, store, interval_s=3600)
    machine = be.probe()
    (array,) = [a for a in machine.arrays if a.sync is not None and a.sync.action == "recover"]
    (target,) = array.sync.targets if array.sync else ()
    mon.tick()
    for _ in range(10_000):
        if be.sample().arrays[0].sync is None:
            break
        clock.advance(60)
        mon.tick()
    mon.tick()
    return be, store, target


def test_recorded_rebuild_wear_per_member(tmp_path: Path) -> None:
    """000_*.txt: Total_LBAs_Written of the re-added SSD went 603,302,987 → 3,763,859,973."""
    be, store, target = run_recovery_to_the_end(tmp_path)
    text = metrics_text(be, store, findings=False)
    promtool_check(text)
    samples, _ = parse(text)
    written = find(samples, "raidman_sync_written_bytes", action="recover")
    by_member = {dict(k)["member"]: v for k, v in written.items()}
    assert by_member[target] == (3_763_859_973 - 603_302_987) * 512
    assert all(v < by_member[target] / 1000 for m, v in by_member.items() if m != target)
    cap = one(samples, "raidman_sync_member_capacity_bytes", action="recover", member=target)
    assert by_member[target] / cap == pytest.approx(3.2, abs=0.05)
    assert one(samples, "raidman_sync_running", action="recover", member=target) == 0


def test_rules_fire_on_what_raidman_writes(tmp_path: Path) -> None:
    """The packaged rebuild rule, fed with the metrics raidman wrote after the seed-000 rebuild,
    alerts for the rebuilt member and for no other (promtool test rules on generated series)."""
    be, store, target = run_recovery_to_the_end(tmp_path)
    machine = be.probe()
    disk = machine.disks_under(target)[0]
    samples, _ = parse(metrics_text(be, store, findings=False))
    series = []
    for (name, labels), v in samples.items():
        if name in ("raidman_sync_written_bytes", "raidman_sync_member_capacity_bytes"):
            lab = ",".join(f'{k}="{val}"' for k, val in sorted(labels | {("instance", "h1")}))
            series.append(f"      - series: '{name}{{{lab}}}'\n        values: '{int(v)}x3'\n")
    (lab_t,) = [dict(k) for k in find(samples, "raidman_sync_written_bytes", member=target)]
    rules = Path(__file__).parents[2] / "packaging" / "prometheus" / "raidman.rules.yml"
    exp = "".join(f"              {k}: '{v}'\n" for k, v in sorted(lab_t.items()))
    (tmp_path / "t.yml").write_text(
        f"rule_files: ['{rules}']\nevaluation_interval: 1m\ntests:\n  - interval: 1m\n"
        "    input_series:\n" + "".join(series) + "    alert_rule_test:\n"
        "      - eval_time: 1m\n        alertname: RaidmanRebuildWroteTooMuch\n"
        "        exp_alerts:\n          - exp_labels:\n              severity: warning\n"
        "              instance: h1\n" + exp + "            exp_annotations:\n"
        f"              summary: 'h1: the rebuild of md127 wrote 1.618TB to {disk}'\n"
        f"              description: 'More than 1.5 × the capacity of {disk} ({target}) was "
        "written during one rebuild: without a write-intent bitmap every re-add rebuilds the "
        "whole device.'\n"
    )
    assert lab_t["disk"] == disk
    res = subprocess.run(
        [promtool(), "test", "rules", str(tmp_path / "t.yml")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert res.returncode == 0, res.stdout + res.stderr


def test_label_values_are_escaped() -> None:
    f = Family("raidman_test_info", 'odd "labels"\nand a \\ help')
    f.add(1, model='Samsung "EVO"\\850\nPro', serial="")
    text = render([f])
    assert 'model="Samsung \\"EVO\\"\\\\850\\nPro"' in text
    promtool_check(text)
    samples, _ = parse(text)
    assert one(samples, "raidman_test_info", model='Samsung "EVO"\\850\nPro') == 1


def test_unknown_is_absent_not_zero() -> None:
    f = Family("raidman_test_bytes", "x")
    f.add(None, disk="sda")
    assert render([f]) == ""


def test_write_textfile_is_atomic_and_careful(tmp_path: Path) -> None:
    d = tmp_path / "textfile"
    d.mkdir(mode=0o755)
    p = write_textfile(d, "raidman_x 1\n")
    first = p.stat().st_ino
    assert p.name == "raidman.prom" and p.read_text() == "raidman_x 1\n"
    assert stat.S_IMODE(p.stat().st_mode) == 0o644
    write_textfile(d, "raidman_x 2\n")
    assert p.read_text() == "raidman_x 2\n" and p.stat().st_ino != first  # renamed over
    assert sorted(os.listdir(d)) == ["raidman.prom"]  # no temp file left behind

    link = tmp_path / "link"
    link.symlink_to(d)
    with pytest.raises(TextfileError, match="symlink"):
        write_textfile(link, "x\n")
    open_dir = tmp_path / "open"
    open_dir.mkdir()
    open_dir.chmod(0o777)
    with pytest.raises(TextfileError, match="writable by everyone"):
        write_textfile(open_dir, "x\n")
    with pytest.raises(TextfileError):
        write_textfile(tmp_path / "missing", "x\n")


def test_textfile_writer_every_cycle_uses_stored_smart(tmp_path: Path) -> None:
    clock = SimClock.manual()
    be = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    store = SnapshotStore.open(tmp_path / "state.db")
    WearMonitor(be, store).tick()  # the monitor's start snapshot of every disk
    calls: list[str] = []
    real_smart = be.smart

    def counting(disk: str):  # type: ignore[no-untyped-def]
        calls.append(disk)
        return real_smart(disk)

    be.smart = counting  # type: ignore[method-assign]
    d = tmp_path / "tf"
    d.mkdir()
    w = TextfileWriter(be, store, d, every_s=15)
    assert w.tick() == d / "raidman.prom"
    first = (d / "raidman.prom").read_text()
    clock.advance(5)
    assert w.tick() is None  # not yet: at most every 15 s
    clock.advance(15)
    assert w.tick() is not None
    second = (d / "raidman.prom").read_text()
    assert calls == []  # no smartctl from the textfile writer
    s1, _ = parse(first)
    s2, _ = parse(second)
    assert find(s1, "raidman_disk_device_written_bytes_total")  # from the stored snapshots
    done1 = find(s1, "raidman_md_sync_completed_bytes")
    done2 = find(s2, "raidman_md_sync_completed_bytes")
    assert next(iter(done2.values())) > next(iter(done1.values()))  # the resync moved on
    assert one(s1, "raidman_audit_ran") == 1
    promtool_check(second)


def test_cli_metrics_and_monitor_textfile(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["metrics", "--demo", "raid6-wd", "--no-smart"]) == 0
    out = capsys.readouterr().out
    assert "raidman_md_degraded{" in out and "raidman_disk_smart_healthy" not in out
    d = tmp_path / "tf"
    d.mkdir()
    assert main(["metrics", "--demo", "raid6-wd", "--textfile-dir", str(d)]) == 0
    promtool_check((d / "raidman.prom").read_text())
    assert main(["metrics", "--demo", "raid6-wd", "--textfile-dir", str(tmp_path / "no")]) == 1
    assert "raidman metrics:" in capsys.readouterr().err
    (d / "raidman.prom").unlink()
    assert main(["monitor", "--once", "--demo", "raid5-cable", "--textfile-dir", str(d)]) == 0
    samples, _ = parse((d / "raidman.prom").read_text())
    assert one(samples, "raidman_md_sync_action", action="recover") == 1
