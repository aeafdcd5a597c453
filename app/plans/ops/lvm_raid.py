"""Operations on an LVM RAID LV (dm-raid): a scrub (``lvchange --syncaction check|repair``,
lvm2 ``lvchange.c`` → dm-raid's "message 0 check|repair", md's ``action_store()``) and the
repair of a failed image onto other PVs (``lvconvert --repair``, lvm2 ``lv_raid_replace()``:
the failed images' sub-LVs are allocated anew on PVs that hold no image of the LV, then
recovered)."""

from __future__ import annotations

from dataclasses import dataclass

from app.plans.ops.base import LVM_NAME, Op, OpError, device, shown

LV_SYNC_ACTIONS = ("check", "repair")
MAX_PVS = 64


def _lv(vg: str, lv: str, what: str) -> None:
    for v, kind in ((vg, "volume group"), (lv, "logical volume")):
        if not isinstance(v, str) or LVM_NAME.fullmatch(v) is None:
            raise OpError(f"{what}: {kind} {shown(v)} is not an LVM name")


@dataclass(frozen=True, slots=True)
class LvSyncAction(Op):
    """``lvchange --syncaction check|repair VG/LV``: md's check (count mismatches) or repair
    (rewrite them) of every image, under the LV's recovery rates."""

    KIND = "lvm-syncaction"
    vg: str
    lv: str
    action: str = "check"

    def __post_init__(self) -> None:
        _lv(self.vg, self.lv, "lvchange --syncaction")
        if self.action not in LV_SYNC_ACTIONS:
            raise OpError(f"lvchange --syncaction: {shown(self.action)} is not check or repair")

    @property
    def full_name(self) -> str:
        return f"{self.vg}/{self.lv}"

    def argv(self) -> tuple[str, ...]:
        return ("lvchange", "--syncaction", self.action, self.full_name)

    def names(self) -> tuple[str, ...]:
        return (f"/dev/{self.full_name}",)


@dataclass(frozen=True, slots=True)
class LvRepair(Op):
    """``lvconvert --yes --repair VG/LV [PV...]``: each failed image rebuilt on free space of
    the PVs named (or any the VG allocates from); the new images are written whole."""

    KIND = "lvm-repair"
    vg: str
    lv: str
    pvs: tuple[str, ...] = ()  # /dev paths of the PVs to allocate from

    def __post_init__(self) -> None:
        _lv(self.vg, self.lv, "lvconvert --repair")
        if not isinstance(self.pvs, tuple) or len(self.pvs) > MAX_PVS:
            raise OpError(f"lvconvert --repair: at most {MAX_PVS} PVs")
        for pv in self.pvs:
            device(pv, "lvconvert --repair")
        if len(set(self.pvs)) != len(self.pvs):
            raise OpError("lvconvert --repair: a PV named twice")

    @property
    def full_name(self) -> str:
        return f"{self.vg}/{self.lv}"

    def argv(self) -> tuple[str, ...]:
        return ("lvconvert", "--yes", "--repair", self.full_name, *self.pvs)

    def writes(self) -> tuple[str, ...]:
        return self.pvs

    def names(self) -> tuple[str, ...]:
        return (f"/dev/{self.full_name}", *self.pvs)


def split_lv(text: str, what: str) -> tuple[str, str]:
    """ "vg/lv" -> ("vg", "lv"); OpError otherwise."""
    vg, sep, lv = text.partition("/") if isinstance(text, str) else ("", "", "")
    if not sep:
        raise OpError(f"{what}: {shown(text)} is not VG/LV")
    _lv(vg, lv, what)
    return vg, lv
