"""The simulated ``dmsetup status --target raid`` and ``lvchange --syncaction check|repair``
over the raid LVs' state (backends.simulated.lvm_raid), with lvm's own refusal of a scrub
while another sync runs (lvm2 lvchange.c ``_lvchange_resync``/``lv_raid_message``: "state is
currently")."""

from __future__ import annotations

from collections.abc import Sequence

from app.model.devices import LogicalVolume
from backends.simulated.lvm_raid import IDLE, status_line
from backends.simulated.programs.argv import Result
from backends.simulated.state import SimState


def _lv(st: SimState, key: str) -> LogicalVolume | None:
    sim = st.lvs.get(key)
    if sim is None:
        return None
    return LogicalVolume(sim.name, sim.vg, sim.size_bytes, sim.segtype)


def dmsetup(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    if list(args) != ["status", "--target", "raid"]:
        return 1, "", f"dmsetup: unsupported in the simulation: {' '.join(args)}\n"
    lines = []
    for key, sim in st.lvs.items():
        lv = _lv(st, key)
        if sim.raid is not None and lv is not None:
            lines.append(status_line(lv, sim.raid, st.t))
    return 0, "".join(f"{ln}\n" for ln in lines) or "No devices found\n", ""


def lvchange(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    if len(args) != 3 or args[0] != "--syncaction" or args[1] not in ("check", "repair"):
        return 3, "", f"  lvchange: unsupported in the simulation: {' '.join(args)}\n"
    key = args[2]
    sim = st.lvs.get(key)
    if sim is None:
        return 5, "", f'  Failed to find logical volume "{key}"\n'
    raid = sim.raid
    if raid is None:
        return 5, "", f"  Command on LV {key} uses options that require LV types raid .\n"
    raid.settle(st.t)
    if raid.action != IDLE:
        return (
            5,
            "",
            f'  {key} state is currently "{raid.action}".  Unable to switch to "{args[1]}".\n',
        )
    rate = raid.max_rate_kib_s or st.speed_limit_max
    raid.start(args[1], st.t, max(rate, st.speed_limit_min))
    st.touch()
    return 0, "", ""
