"""Every md name <-> number in one place, like mdadm's ``maps.c``: the level names mdadm accepts
(``pers[]``), the RAID-4/5/6 layouts with their numbers and aliases (``r5layout[]``,
``r6layout[]``), the RAID-0 layouts (``r0layout[]``) and the RAID-10 layout number.

Sources:

- Levels: mdadm ``maps.c`` ``pers[]``: "linear", "raid0"/"0"/"stripe", "raid1"/"1"/"mirror",
  "raid4"/"4", "raid5"/"5", "raid6"/"6", "raid10"/"10"; mdadm also reads ``-1`` as linear
  (``LEVEL_LINEAR``). multipath, faulty and container are not md RAID levels raidman manages.
- RAID-4/5/6 layout numbers: the kernel's ``ALGORITHM_*`` (``drivers/md/raid5.h``):
  left-asymmetric 0, right-asymmetric 1, left-symmetric 2, right-symmetric 3, parity-first 4
  (``ALGORITHM_PARITY_0``), parity-last 5 (``ALGORITHM_PARITY_N``), the DDF rotations 8, 9, 10
  (``ALGORITHM_ROTATING_ZERO_RESTART``, ``_N_RESTART``, ``_N_CONTINUE``, RAID-6 only), and the
  RAID-6 layouts that keep Q on the last device 16 … 20 (``ALGORITHM_*_6``). Names and aliases
  as mdadm's ``r5layout[]``/``r6layout[]``: "la", "ra", "ls", "rs", "default" (left-symmetric);
  on RAID-5 the ddf-* names are aliases of 1, 0 and 2.
- RAID-10 layout number (``drivers/md/raid10.c`` ``setup_geo()``; mdadm ``util.c``
  ``parse_layout_10()``): near copies in bits 0-7, far copies in bits 8-15, bit 16 set for
  "offset" (far copies in the next stripe); mdadm's default is 0x102 (n2). So n2 = 0x102,
  f2 = 0x201, o2 = 0x10201.
- RAID-0 layouts (``drivers/md/raid0.c`` ``RAID0_ORIG_LAYOUT`` 1, ``RAID0_ALT_MULTIZONE_LAYOUT``
  2; mdadm ``r0layout[]``).
"""

from __future__ import annotations

# ---- levels (mdadm pers[]) -------------------------------------------------------------------
# every spelling mdadm --level accepts -> the kernel personality name
MDADM_LEVELS: dict[str, str] = {
    "linear": "linear", "-1": "linear",
    "raid0": "raid0", "0": "raid0", "stripe": "raid0",
    "raid1": "raid1", "1": "raid1", "mirror": "raid1",
    "raid4": "raid4", "4": "raid4",
    "raid5": "raid5", "5": "raid5",
    "raid6": "raid6", "6": "raid6",
    "raid10": "raid10", "10": "raid10",
}  # fmt: skip


def level_name(text: str | int | None) -> str | None:
    """The personality name of a level as a person or mdadm spells it: "5", 5, "raid5",
    "RAID5", "RAID-5", "r5" → "raid5"; "mirror" → "raid1"; "stripe" → "raid0"; None when
    it is none of md's levels."""
    if text is None:
        return None
    s = str(text).strip().lower()
    if s in MDADM_LEVELS:
        return MDADM_LEVELS[s]
    for prefix in ("raid-", "raid ", "raid", "r"):
        if s.startswith(prefix) and s[len(prefix) :].isdigit():
            return MDADM_LEVELS.get(s[len(prefix) :])
    return None


def level_number(level: str) -> int | None:
    """raid5 → 5, linear → -1 (``LEVEL_LINEAR``); None for unknown names."""
    name = level_name(level)
    if name is None:
        return None
    return -1 if name == "linear" else int(name[4:])


# ---- RAID-4/5/6 layouts (drivers/md/raid5.h ALGORITHM_*, mdadm r5layout[]/r6layout[]) ------
# number -> the name mdadm prints for it (mdstat "algorithm N", md/layout)
PARITY_LAYOUT_NAMES: dict[int, str] = {
    0: "left-asymmetric",
    1: "right-asymmetric",
    2: "left-symmetric",
    3: "right-symmetric",
    4: "parity-first",
    5: "parity-last",
    8: "ddf-zero-restart",
    9: "ddf-N-restart",
    10: "ddf-N-continue",
    16: "left-asymmetric-6",
    17: "right-asymmetric-6",
    18: "left-symmetric-6",
    19: "right-symmetric-6",
    20: "parity-first-6",
}
DEFAULT_PARITY_LAYOUT = "left-symmetric"  # mdadm r5layout "default"
_SHORT = {"la": 0, "ra": 1, "ls": 2, "rs": 3, "default": 2}

# mdadm r5layout[]: --layout for RAID-4/5 (the ddf-* names are aliases of 1, 0, 2)
R5_LAYOUTS: dict[str, int] = {
    **{PARITY_LAYOUT_NAMES[n]: n for n in range(6)},
    **_SHORT,
    "ddf-zero-restart": 1,
    "ddf-N-restart": 0,
    "ddf-N-continue": 2,
}
# mdadm r6layout[]: --layout for RAID-6 (its own ddf rotations and the -6 layouts)
R6_LAYOUTS: dict[str, int] = {
    **{PARITY_LAYOUT_NAMES[n]: n for n in (0, 1, 2, 3, 4, 5, 8, 9, 10, 16, 17, 18, 19, 20)},
    **_SHORT,
}
# the names a RAID-4/5 layout is written with in full (mdadm r5layout[] without its aliases)
R5_LAYOUT_NAMES: tuple[str, ...] = tuple(n for n in R5_LAYOUTS if n not in _SHORT)


def parity_layouts(level: str) -> dict[str, int]:
    """mdadm's --layout names for a parity level (raid4/raid5: r5layout, raid6: r6layout)."""
    return R6_LAYOUTS if level == "raid6" else R5_LAYOUTS


def parity_layout_number(level: str, name: str | None) -> int | None:
    """--layout name (or alias) → md's number for the level; None where mdadm refuses it."""
    return parity_layouts(level).get(name or "default")


def parity_layout_name(number: int) -> str | None:
    """md's RAID-4/5/6 layout number → its name; None for numbers md does not define."""
    return PARITY_LAYOUT_NAMES.get(number)


# ---- RAID-0 layouts (drivers/md/raid0.c, mdadm r0layout[]) -----------------------------------
RAID0_LAYOUT_NAMES: dict[int, str] = {1: "original", 2: "alternate"}


# ---- RAID-10 layout number (drivers/md/raid10.c setup_geo, mdadm parse_layout_10) -------------
RAID10_OFFSET_BIT = 0x10000
RAID10_DEFAULT_LAYOUT = 0x102  # n2: mdadm_default_layout()


def raid10_encode(near: int, far: int, offset: bool) -> int:
    """(near, far, offset) → md/layout: near | far << 8 | 0x10000 if offset (n2 → 0x102)."""
    return near | (far << 8) | (RAID10_OFFSET_BIT if offset else 0)


def raid10_decode(number: int) -> tuple[int, int, bool] | None:
    """md/layout → (near, far, offset); None where ``setup_geo()`` refuses it (a zero copy
    count, or bits above the offset bit)."""
    if number < 0 or number >> 17:
        return None
    near, far = number & 0xFF, (number >> 8) & 0xFF
    if near == 0 or far == 0:
        return None
    return near, far, bool(number & RAID10_OFFSET_BIT)


def default_layout(level: str) -> str | None:
    """The layout mdadm --create gives when none is asked for (``mdadm_default_layout()``):
    RAID-10 n2 (0x102), RAID-5/6 left-symmetric; None for the other levels."""
    if level == "raid10":
        return "n2"
    if level in ("raid5", "raid6"):
        return DEFAULT_PARITY_LAYOUT
    return None


# ---- sync actions ----------------------------------------------------------------------------
# /proc/mdstat's progress word -> md/sync_action's word for the same sync: md.c
# ``status_resync()`` prints "recovery" where ``action_show()`` (md/sync_action) says "recover";
# the other words are the same in both.
MDSTAT_SYNC_ACTIONS: dict[str, str] = {
    "resync": "resync",
    "recovery": "recover",
    "check": "check",
    "repair": "repair",
    "reshape": "reshape",
}


def last_sync_word(action: str) -> str:
    """md/last_sync_action's word for a sync (md/sync_action's word): ``md_do_sync()`` sets it
    as the sync begins (before it waits its turn), to mdstat's word: "recovery" for recover."""
    return next((k for k, v in MDSTAT_SYNC_ACTIONS.items() if v == action), action)


# The order the simulation's /proc/mdstat lists personalities on its "Personalities :" line
# (the kernel lists them in the order their modules registered, register_md_personality()).
MDSTAT_PERSONALITY_ORDER = ("linear", "raid0", "raid1", "raid10", "raid6", "raid5", "raid4")
