"""Issue 23 item 3: pre-flight runs again right before each step that writes to devices, on a
fresh probe through the backend, with the disk identities the plan recorded; a refusal stops the
run there and is written to the audit log."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from app.backend import CommandResult
from app.model import Filesystem, Machine
from app.plans.audit_log import AuditLog
from app.plans.executor import execute
from app.plans.guards.identity import record_disks
from app.plans.plan import Plan, Step
from tests.plans.fakes import FakeBackend, blank_machine, with_usage

PV0 = ("pvcreate", "/dev/nvme0n1")
PV1 = ("pvcreate", "/dev/nvme1n1")


def _two_pvs() -> Plan:
    return Plan("two PVs", (Step.decode(PV0, "pv 0"), Step.decode(PV1, "pv 1")), kind="filesystem")


def _after_first_step(be: FakeBackend, machine: Machine) -> None:
    """The machine changes while step 1 runs (someone mounts, a disk is swapped)."""

    def r(argv: tuple[str, ...], stdin: str | None) -> CommandResult | None:
        if argv == PV0:
            be.machine = machine
        return None

    be.responders.append(r)


def test_a_device_mounted_after_the_run_began_stops_the_run(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.log")
    be = FakeBackend(blank_machine())
    m = blank_machine()
    mounted = with_usage(
        replace(
            m,
            filesystems=(*m.filesystems, Filesystem("nvme1n1", "ext4", mountpoints=("/data",))),
        )
    )
    _after_first_step(be, mounted)
    rep = execute(_two_pvs(), be, audit=audit)
    assert be.argvs == [PV0]  # step 2 never started
    assert [o.status for o in rep.outcomes] == ["ok", "failed"]
    msg = rep.outcomes[1].message
    assert msg.startswith("refused by pre-flight right before step 2: ")
    assert "nvme1n1" in msg and "/data" in msg
    entries = audit.read_entries()
    assert [e.event for e in entries] == ["started", "executed", "refused"]
    assert "nvme1n1" in entries[-1].reason


def test_another_disk_under_the_same_name_stops_the_run(tmp_path: Path) -> None:
    audit = AuditLog(tmp_path / "audit.log")
    m = blank_machine()
    old = replace(m, disks=tuple(replace(d, serial=f"OLD-{d.name}") for d in m.disks))
    plan = record_disks(_two_pvs(), old)
    assert {d.name: d.serial for d in plan.disks or ()} == {
        "nvme0n1": "OLD-nvme0n1",
        "nvme1n1": "OLD-nvme1n1",
    }
    swapped = replace(
        old,
        disks=tuple(
            replace(d, serial="NEW-1", wwn="eui.0001") if d.name == "nvme1n1" else d
            for d in old.disks
        ),
    )
    be = FakeBackend(old)
    _after_first_step(be, swapped)
    rep = execute(plan, be, audit=audit)
    assert be.argvs == [PV0]
    msg = rep.outcomes[1].message
    # both identities named
    assert "nvme1n1 (serial NEW-1, WWN eui.0001)" in msg and "nvme1n1 (serial OLD-nvme1n1)" in msg
    assert audit.read_entries()[-1].event == "refused"


def test_a_failed_probe_stops_the_run_before_a_device_step(tmp_path: Path) -> None:
    class NoProbe(FakeBackend):
        def probe(self) -> Machine:
            raise OSError("sysfs went away")

    audit = AuditLog(tmp_path / "audit.log")
    be = NoProbe(blank_machine())
    rep = execute(_two_pvs(), be, audit=audit)
    assert be.argvs == [] and not rep.ok
    assert "cannot read the machine's current state: sysfs went away" in rep.outcomes[0].message
    assert [o.status for o in rep.outcomes] == ["failed", "not-run"]


def test_steps_without_devices_do_not_probe(tmp_path: Path) -> None:
    class NoProbe(FakeBackend):
        def probe(self) -> Machine:
            raise AssertionError("probed for a sysctl")

    plan = Plan(
        "limits",
        (Step.decode(("sysctl", "-w", "dev.raid.speed_limit_max=500000"), "max"),),
        kind="sync-limits",
    )
    rep = execute(plan, NoProbe(blank_machine()), audit=AuditLog(tmp_path / "a.log"))
    assert rep.ok


def test_a_created_array_runs_end_to_end_on_the_simulator(tmp_path: Path) -> None:
    """The per-step checks let a whole create-array plan through (the array and LV it makes are
    not re-checked) and its ARRAY line, piped from mdadm --detail --brief, passes the check."""
    from app.plans.builders.create_array import CreateArrayParams, build_create_array
    from app.plans.builders.filesystem import FilesystemParams
    from backends.simulated.backend import SimulatedBackend

    be = SimulatedBackend.from_scenario("blank")
    m = be.probe()
    params = CreateArrayParams(
        level="5",
        devices=("nvme0n1", "nvme1n1", "nvme2n1"),
        name="127",
        update_conf=True,
        filesystem=FilesystemParams(fstype="ext4", lvm=True),
    )
    plan = record_disks(build_create_array(m, params), m)
    rep = execute(plan, be, audit=AuditLog(tmp_path / "a.log"))
    assert rep.ok, rep.summary()
    conf = be.read_text("/etc/mdadm/mdadm.conf") or ""
    assert conf.splitlines()[-1].startswith("ARRAY /dev/md/127 metadata=1.2 ")
