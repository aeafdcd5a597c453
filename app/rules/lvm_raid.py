"""LVM RAID LVs' exposure: images sharing a PV (no redundancy in fact), a failed or missing
image (partial / degraded), an image that needs a refresh, mismatches the last check or repair
counted, and lvm.conf's ``raid_fault_policy`` / ``monitoring`` (lvm.conf(5): dmeventd watches a
raid LV only with ``activation/monitoring = 1``; on an image failure it then only logs
(``warn``) or replaces it from free PV space (``allocate``))."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from app.model.devices import LogicalVolume, Machine
from app.plans.builders.lv_raid import build_lv_repair, build_lv_sync
from app.plans.geometry import PlanError
from app.plans.plan import Plan
from app.rules.finding import Finding
from app.rules.inputs import AuditInputs


def _device(lv: LogicalVolume) -> str:
    return lv.kernel_name or f"{lv.vg}/{lv.name}"


def _plan(build: Callable[..., Plan], *args: object) -> tuple[Plan | None, str | None]:
    try:
        return build(*args), None
    except PlanError as e:
        return None, str(e)


def check(machine: Machine, inputs: AuditInputs) -> Iterator[Finding]:
    raid_lvs = [lv for lv in machine.lvs if lv.raid is not None]
    for lv in raid_lvs:
        raid = lv.raid
        assert raid is not None
        full = f"{lv.vg}/{lv.name}"
        seen: dict[str, int] = {}
        for image in raid.images:
            for pv in image.pvs:
                if pv.startswith("["):
                    continue
                if pv in seen and seen[pv] != image.index:
                    yield Finding(
                        "error",
                        "lv-raid-images-share-pv",
                        _device(lv),
                        f"{full}: images {seen[pv]} and {image.index} are both on {pv}",
                        f"{full} ({lv.segtype}) keeps images {seen[pv]} and {image.index} on "
                        f"one PV, {pv}: if {pv} fails both are lost at once, so the LV has "
                        "less redundancy than its layout says. Move one image to a PV holding "
                        f"none of {full} (pvmove -n {full}_rimage_{image.index} {pv} NEW_PV).",
                    )
                seen.setdefault(pv, image.index)
        failed = raid.failed_images
        if raid.partial or failed:
            which = ", ".join(f"image {i.index} ({', '.join(i.pvs)})" for i in failed)
            fix, why = _plan(build_lv_repair, machine, full)
            yield Finding(
                "error",
                "lv-raid-degraded",
                _device(lv),
                f"{full} is degraded: {which or lvm_words(lv)}",
                f"{full} ({lv.segtype}) runs without "
                + (which or "a PV it uses")
                + (f"; lvm says '{raid.health_words}'" if raid.health_words else "")
                + ". Until it is repaired one more failure may lose it. "
                + (
                    "The fix rebuilds each failed image on free space of PVs holding no "
                    "surviving image (lvconvert --repair)."
                    if fix is not None
                    else f"No repair can be planned yet: {why}"
                ),
                fix=fix,
            )
        elif raid.health_bit == "r":
            yield Finding(
                "warning",
                "lv-raid-refresh-needed",
                _device(lv),
                f"{full}: an image failed and came back: refresh needed",
                f"lvm marks {full} 'refresh needed' (lv_attr r): an image had an error and its "
                f"device is back. `lvchange --refresh {full}` reloads it and md resyncs what "
                "changed; if the device fails again, replace it (lvconvert --repair).",
            )
        if raid.integrity_mode == "journal":
            yield from _integrity_journal(machine, lv, full)
        if raid.mismatches and not raid.syncing:
            fix, _ = _plan(build_lv_sync, machine, full, "check")
            yield Finding(
                "warning",
                "lv-raid-mismatches",
                _device(lv),
                f"{full}: the last check counted {raid.mismatches} mismatched sectors",
                f"raid_mismatch_count of {full} is {raid.mismatches} (512-byte sectors that "
                "differ between its images, found by the last check or repair). md cannot tell "
                "which copy is right: look at the disks' SMART and the kernel log, check again "
                "(the fix), and repair (raidman plan lv-sync repair) only once you trust the "
                "data.",
                fix=fix,
            )
    if raid_lvs and inputs.lvm is not None:
        yield from _policy(raid_lvs, inputs)


def _integrity_journal(machine: Machine, lv: LogicalVolume, full: str) -> Iterator[Finding]:
    """--raidintegrity in journal mode (lvm's default) on SSDs: dm-integrity writes each block
    to its journal and then to its place, twice the bytes of what the LV is given."""
    ssds: list[str] = []
    for pv in dict.fromkeys(p for i in (lv.raid.images if lv.raid else ()) for p in i.pvs):
        for d in machine.disks_under(pv) if not pv.startswith("[") else ():
            disk = machine.disk(d)
            if disk is not None and disk.is_ssd and d not in ssds:
                ssds.append(d)
    if not ssds:
        return
    yield Finding(
        "advice",
        "lv-raid-integrity-journal-ssd",
        _device(lv),
        f"{full}: integrity in journal mode writes everything twice to {', '.join(ssds)}",
        f"{full} uses --raidintegrity in journal mode: dm-integrity writes every block to "
        "its journal first and then to its place, so the SSDs under it "
        f"({', '.join(ssds)}) take twice the bytes written to the LV, and writes run at about "
        "half the speed. Bitmap mode writes once; after a crash it recomputes the checksums "
        "of the regions that were being written instead of replaying a journal, so a write "
        "torn by the crash is not detected there. To switch: lvconvert --raidintegrity n "
        f"{full}, then lvconvert --raidintegrity y --raidintegritymode bitmap {full} (both "
        "rewrite the checksums of the whole LV).",
    )


def lvm_words(lv: LogicalVolume) -> str:
    return (lv.raid.health_words if lv.raid else None) or "an image is missing"


def _policy(raid_lvs: list[LogicalVolume], inputs: AuditInputs) -> Iterator[Finding]:
    assert inputs.lvm is not None
    monitoring = inputs.lvm.get_bool("activation/monitoring")
    policy = inputs.lvm.get("activation/raid_fault_policy")
    names = ", ".join(f"{lv.vg}/{lv.name}" for lv in raid_lvs[:5])
    if monitoring is False:
        yield Finding(
            "warning",
            "lvm-raid-unmonitored",
            "",
            "LVM does not watch the raid LVs (activation/monitoring = 0)",
            f"With monitoring off, dmeventd does not watch {names}: a failed image is neither "
            "logged nor replaced by LVM, whatever raid_fault_policy says. Set "
            "activation/monitoring = 1 in lvm.conf (and run lvm2-monitor), or watch them with "
            "raidman monitor.",
        )
    elif policy == "warn":
        yield Finding(
            "advice",
            "lvm-raid-fault-policy-warn",
            "",
            "LVM only logs a failed raid image (raid_fault_policy = warn)",
            f"On an image failure of {names} dmeventd writes a warning to the system log and "
            "nothing else: the LV runs degraded until someone repairs it (lvconvert --repair, "
            "or raidman plan lv-repair). raid_fault_policy = allocate would rebuild it at once "
            "on free PV space; either way, have the warning reach someone.",
        )
