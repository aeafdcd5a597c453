"""The disk plans as ``raidman plan`` and the TUI's wizards make them: what each needs is read
through the backend here (self-test support, SMART, the enclosure slot, ledctl, erase support,
mdadm.conf, the superblocks, the kept qualify verdicts), then the pure builder makes the plan.
Run from a worker in the TUI (they block on the backend)."""

from __future__ import annotations

from app.backend import Backend
from app.model import Machine
from app.plans.builders.locate import build_locate
from app.plans.builders.mdconf_edit import read_mdadm_conf
from app.plans.builders.qualify import DEFAULT_ZONES, build_qualify
from app.plans.builders.replace import build_replace
from app.plans.builders.retire import build_retire
from app.plans.builders.smart_test import build_smart_test
from app.plans.disk_facts import (
    EnclosureSlot,
    SelfTestSupport,
    ledctl_present,
    read_enclosure_slot,
    read_erase_support,
    read_self_test_support,
    smart_unreadable,
)
from app.plans.geometry import PlanError
from app.plans.guards.eligibility import disk_of
from app.plans.guards.preflight import strip_dev
from app.plans.plan import Plan
from app.plans.qualify_store import every_latest, latest
from app.plans.qualify_verdict import NewDiskCheck, Verdict, compare
from app.plans.superblocks import read_superblocks


def _smart_why(backend: Backend, disk: str) -> str | None:
    try:
        return smart_unreadable(backend.smart(disk))
    except Exception as e:
        return f"SMART could not be read: {e}"


def qualify_plan(
    machine: Machine,
    backend: Backend,
    device: str,
    *,
    zones: int = DEFAULT_ZONES,
    peers_of: str | None = None,
    host: str | None = None,
) -> Plan:
    name = strip_dev(device)
    d = machine.disk(name)
    if d is None:
        return build_qualify(machine, name, SelfTestSupport(None), superblocks=None)  # refuses
    unreadable = _smart_why(backend, name)
    support = (
        read_self_test_support(backend, name)
        if unreadable is None
        else SelfTestSupport(None, why=unreadable)
    )
    same = [v for v in every_latest(host) if d.model and v.model == d.model]
    return build_qualify(
        machine,
        name,
        support,
        superblocks=read_superblocks(machine, backend),
        smart_readable=unreadable is None,
        zones=zones,
        same_model=same,
        peers_of=peers_of,
    )


def smart_test_plan(machine: Machine, backend: Backend, device: str, test: str) -> Plan:
    name = strip_dev(device)
    if machine.disk(name) is None:
        return build_smart_test(machine, name, test)  # refuses with the reason
    unreadable = _smart_why(backend, name)
    support = read_self_test_support(backend, name) if unreadable is None else None
    return build_smart_test(
        machine,
        name,
        test,
        supported=support.supported if support is not None else None,
        unreadable=unreadable,
    )


def slot_of(backend: Backend, machine: Machine, device: str) -> tuple[EnclosureSlot | None, str]:
    disk = disk_of(machine, strip_dev(device))
    if machine.disk(disk) is None:
        return None, f"{disk} is not a disk here"
    return read_enclosure_slot(backend, disk)


def locate_plan(
    machine: Machine, backend: Backend, device: str, *, off: bool = False, seconds: int = 30
) -> Plan:
    slot, why = slot_of(backend, machine, device)
    ledctl = (slot is None or not slot.has_locate) and ledctl_present(backend)
    return build_locate(
        machine, device, slot=slot, slot_why=why, ledctl=ledctl, off=off, seconds=seconds
    )


def retire_plan(machine: Machine, backend: Backend, device: str, *, sanitize: bool = False) -> Plan:
    name = strip_dev(device)
    if machine.disk(name) is None:
        return build_retire(machine, name, superblocks=None)  # refuses with the reason
    return build_retire(
        machine,
        name,
        superblocks=read_superblocks(machine, backend),
        conf=read_mdadm_conf(backend),
        erase=read_erase_support(backend, machine, name),
        sanitize=sanitize,
    )


def new_disk_check(
    machine: Machine, array: str, new: str, override: str | None, host: str | None = None
) -> NewDiskCheck:
    disk = disk_of(machine, strip_dev(new))
    d = machine.disk(disk)
    serial, wwn = (d.serial, d.wwn) if d is not None else (None, None)
    verdict = latest(serial, wwn, host) if (serial or wwn) else None
    a = machine.array(strip_dev(array))
    peers: list[Verdict] = []
    if a is not None:
        for m in a.members:
            pd = machine.disk(disk_of(machine, m.device))
            if pd is not None and pd.name != disk and (pd.serial or pd.wwn):
                v = latest(pd.serial, pd.wwn, host)
                if v is not None:
                    peers.append(v)
    outliers = tuple(compare(verdict, peers, "its future peers")) if verdict and peers else ()
    return NewDiskCheck(
        disk, serial, wwn, verdict, override, tuple(p.device for p in peers), outliers
    )


def replace_plan(
    machine: Machine,
    backend: Backend,
    array: str,
    old: str,
    new: str,
    *,
    method: str = "auto",
    override: str | None = None,
    host: str | None = None,
) -> Plan:
    """The replace with the new disk's verdict checked and the old disk's fault LED lit."""
    if machine.array(strip_dev(array)) is None:
        raise PlanError(f"no md array {strip_dev(array)!r} on this machine")
    check = new_disk_check(machine, array, new, override, host)
    slot, _ = slot_of(backend, machine, old)
    return build_replace(
        machine, array, old, new, method=method, new_disk=check,
        old_slot=slot if slot is not None and slot.has_fault else None,
    )  # fmt: skip
