"""Find a disk's bay (``raidman plan locate --device D [--off]``): light what can be lit, and say
which it is.

1. the enclosure's own locate LED, where the kernel's enclosure class links the disk to a slot
   (``/sys/class/enclosure/ENC/SLOT/locate``, drivers/misc/enclosure.c
   ``set_component_locate``): "bay 3 of enclosure 0:0:2:0"; ``--off`` clears it and the slot's
   fault LED (lit by a replace);
2. else ledmon's ``ledctl locate=/dev/D`` (SGPIO, NPEM, VMD backplanes the enclosure class does
   not cover);
3. else a bounded read the disk's activity LED shows: ``fio --readonly`` reading in bursts with
   half-second pauses for ``seconds`` (nothing is written: fio refuses writes and trims).
"""

from __future__ import annotations

from app.model import Disk, Machine
from app.plans import ops
from app.plans.disk_facts import EnclosureSlot
from app.plans.geometry import PlanError
from app.plans.guards.preflight import strip_dev
from app.plans.ops.disk_tests import LOCATE_MAX_S
from app.plans.plan import Plan, Step

BURST_MIB = {"nvme": 1024, "ssd": 256, "hdd": 64}  # about half a second of reading at each


def _disk(machine: Machine, device: str) -> Disk:
    name = strip_dev(device)
    part = machine.partition(name)
    d = machine.disk(part.parent if part is not None else name)
    if d is None:
        raise PlanError(f"no disk {name!r} on this machine")
    return d


def burst_for(d: Disk) -> int:
    kind = "nvme" if d.name.startswith("nvme") else "hdd" if d.rotational else "ssd"
    return BURST_MIB[kind]


def build_locate(
    machine: Machine,
    device: str,
    *,
    slot: EnclosureSlot | None,
    slot_why: str = "",
    ledctl: bool = False,
    off: bool = False,
    seconds: int = 30,
) -> Plan:
    d = _disk(machine, device)
    path = f"/dev/{d.name}"
    if not 5 <= seconds <= LOCATE_MAX_S:
        raise PlanError(f"--seconds: from 5 to {LOCATE_MAX_S}")
    ident = d.serial or d.wwn or "no serial"
    notes: list[str] = []
    steps: list[Step] = []
    if slot is not None and slot.has_locate:
        where = slot.describe()
        steps.append(
            Step(
                ops.EnclosureLed(slot.enclosure, slot.component, "locate", not off),
                f"{'clear' if off else 'light'} the locate LED of {where}",
            )
        )
        if off and slot.has_fault:
            steps.append(
                Step(
                    ops.EnclosureLed(slot.enclosure, slot.component, "fault", False),
                    f"clear the fault LED of {where} (a replace lights it on the old disk)",
                )
            )
        title = f"locate {d.name} ({ident}): {where}" + (" — off" if off else "")
    elif ledctl:
        where = "its slot's LED through ledctl (ledmon)"
        if slot_why:
            notes.append(f"no enclosure slot from the kernel: {slot_why}")
        steps.append(
            Step(
                ops.Ledctl(path, not off),
                f"{'stop' if off else 'start'} the locate pattern on {d.name}'s slot",
            )
        )
        title = f"locate {d.name} ({ident}): {where}" + (" — off" if off else "")
    else:
        if off:
            raise PlanError(
                f"nothing to turn off for {d.name}: without an enclosure or ledctl the locate is "
                "a read that ends by itself"
            )
        where = f"no enclosure: blinking the activity LED for {seconds} s"
        if slot_why:
            notes.append(f"no enclosure slot: {slot_why}; ledctl (ledmon) is not installed")
        burst = burst_for(d)
        steps.append(
            Step(
                ops.LocateBlink(path, seconds, burst),
                f"read {burst} MiB, pause half a second, again, for {seconds} s: the activity "
                f"LED of {d.name} blinks (nothing is written)",
            )
        )
        notes.append(
            "the bay whose activity LED blinks on and off about once a second is the one; a disk "
            "that no longer answers stays dark (then it is the bay whose LED does not move while "
            "the others do)"
        )
        title = f"locate {d.name} ({ident}): {where}"
    notes.insert(0, f"{d.name}: {d.model or 'model unknown'}, {ident}; found by: {where}")
    return Plan(
        title=title,
        steps=tuple(steps),
        kind="locate",
        params={"device": d.name, "off": off, "seconds": seconds, "where": where},
        notes=tuple(notes),
    )
