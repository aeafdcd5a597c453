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


MAX_RATE_KIB = 1 << 30  # KiB/s per device: far above any disk, bounded


def _rate(v: int | None, flag: str) -> None:
    if v is None:
        return
    if isinstance(v, bool) or not isinstance(v, int) or not 0 <= v <= MAX_RATE_KIB:
        raise OpError(f"lvchange {flag}: {shown(v)} is not a rate in KiB/s (0 = unset)")


@dataclass(frozen=True, slots=True)
class LvRecoveryRate(Op):
    """``lvchange --minrecoveryrate NK --maxrecoveryrate NK VG/LV``: the LV's own bounds on its
    syncs' rate (KiB/s per device; 0 = unset, md's ``dev.raid.speed_limit_*`` apply), md's
    ``sync_speed_min/max`` of its mddev (dm-raid.c ``parse_raid_params()``). lvm reloads the
    LV's table to set them: a check or repair running then ends (lvm2 issue 184)."""

    KIND = "lvm-recoveryrate"
    vg: str
    lv: str
    min_kib_s: int | None = None  # None: left as it is
    max_kib_s: int | None = None

    def __post_init__(self) -> None:
        _lv(self.vg, self.lv, "lvchange --*recoveryrate")
        _rate(self.min_kib_s, "--minrecoveryrate")
        _rate(self.max_kib_s, "--maxrecoveryrate")
        if self.min_kib_s is None and self.max_kib_s is None:
            raise OpError("lvchange: --minrecoveryrate or --maxrecoveryrate, at least one")

    @property
    def full_name(self) -> str:
        return f"{self.vg}/{self.lv}"

    def argv(self) -> tuple[str, ...]:
        out: list[str] = ["lvchange"]
        if self.min_kib_s is not None:
            out += ["--minrecoveryrate", f"{self.min_kib_s}K" if self.min_kib_s else "0"]
        if self.max_kib_s is not None:
            out += ["--maxrecoveryrate", f"{self.max_kib_s}K" if self.max_kib_s else "0"]
        return (*out, self.full_name)

    def names(self) -> tuple[str, ...]:
        return (f"/dev/{self.full_name}",)


@dataclass(frozen=True, slots=True)
class LvReplace(Op):
    """``lvconvert --yes --replace OLD_PV VG/LV [NEW_PV...]``: the image on OLD_PV is dropped
    from the LV and a new one made on free space of NEW_PV (or any PV of the VG holding no
    image of it), then recovered whole from the others (lvm2 ``lv_raid_replace()``)."""

    KIND = "lvm-replace"
    vg: str
    lv: str
    old_pv: str  # /dev path
    new_pvs: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _lv(self.vg, self.lv, "lvconvert --replace")
        device(self.old_pv, "lvconvert --replace")
        if not isinstance(self.new_pvs, tuple) or len(self.new_pvs) > MAX_PVS:
            raise OpError(f"lvconvert --replace: at most {MAX_PVS} PVs")
        for pv in self.new_pvs:
            device(pv, "lvconvert --replace")
        if len(set(self.new_pvs)) != len(self.new_pvs) or self.old_pv in self.new_pvs:
            raise OpError("lvconvert --replace: a PV named twice")

    @property
    def full_name(self) -> str:
        return f"{self.vg}/{self.lv}"

    def argv(self) -> tuple[str, ...]:
        return ("lvconvert", "--yes", "--replace", self.old_pv, self.full_name, *self.new_pvs)

    def writes(self) -> tuple[str, ...]:
        return self.new_pvs

    def names(self) -> tuple[str, ...]:
        return (f"/dev/{self.full_name}", self.old_pv, *self.new_pvs)


def split_lv(text: str, what: str) -> tuple[str, str]:
    """ "vg/lv" -> ("vg", "lv"); OpError otherwise."""
    vg, sep, lv = text.partition("/") if isinstance(text, str) else ("", "", "")
    if not sep:
        raise OpError(f"{what}: {shown(text)} is not VG/LV")
    _lv(vg, lv, what)
    return vg, lv
