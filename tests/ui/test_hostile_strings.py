"""Machine data never drives the terminal (issue 23, item 4): a filesystem label with an OSC
sequence changed the terminal's title, an ``ESC[2J`` in a disk model blanked the TUI, and the
TUI's header (host, kernel) and ``report``'s header and LV lines were printed as they came.

A simulated machine carries ESC/CSI, OSC, BEL, ``\\r``, C1 CSI and bidi overrides in a disk
model and serial, a filesystem label and mount point, an LV name, the host name and the kernel
release. ``report``, ``report --json`` and the TUI's rendered screen must show none of those
characters, only their visible escapes.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import unicodedata
from pathlib import Path

import pytest

from app.escape import escape_controls, escape_strings
from app.model.devices import Disk, Machine
from app.report import full_report_json, full_report_text, machine_to_text
from app.ui.app import RaidmanApp
from backends.replay import ReplayBackend
from backends.simulated.backend import SimulatedBackend
from backends.simulated.clock import SimClock
from backends.simulated.scenarios import SCENARIOS
from tests.corpus import FIXTURES
from tests.ui.helpers import screen_lines, wait_for, wait_ready

CLEAR = "\x1b[2J\x1b[H"
TITLE = "\x1b]0;pwned\x07"
BIDI = "\u202egpj.exe"
C1 = "\x9b31m"
CR = "safe\rEVIL"


def hostile_backend() -> SimulatedBackend:
    clock = SimClock.manual()
    st = SCENARIOS["raid10-evo"](clock.now())
    st.host = f"my{TITLE}host"
    st.kernel = f"6.1{CLEAR}{BIDI}"
    disk = st.disks["sda"]
    disk.model = f"Samsung{CLEAR}850"
    disk.serial = f"S{C1}N"
    fs = st.filesystems["dm-0"]
    fs.label = f"data{TITLE}"
    fs.mountpoints = (f"/srv/{CR}",)
    lv = st.lvs["vg_raid/lv_data"]
    lv.name = f"lv{CLEAR}data{BIDI}"
    return SimulatedBackend(st, clock, "hostile")


def controls(text: str) -> list[str]:
    return sorted(
        {
            repr(c)
            for c in text
            if c != "\n" and unicodedata.category(c) in ("Cc", "Cf", "Cs", "Zl", "Zp")
        }
    )


def test_escape_controls_makes_every_control_visible() -> None:
    s = escape_controls(CLEAR + TITLE + BIDI + C1 + CR + "\u2028\ufeff")
    assert controls(s) == []
    assert "\\x1b[2J" in s and "\\u202e" in s and "\\x9b" in s and "\\x0d" in s
    assert escape_controls("plain é 中 text") == "plain é 中 text"
    assert escape_controls("a\nb", keep_newlines=True) == "a\nb"


def test_a_clean_machine_is_returned_as_it_is() -> None:
    m = Machine("host", "6.1", disks=(Disk("sda", 1, model="ok"),))
    assert escape_strings(m) is m
    bad = dataclasses.replace(m, disks=(Disk("sda", 1, model="a\x1bb"),))
    assert escape_strings(bad).disks[0].model == "a\\x1bb"


def test_multi_line_text_is_checked_at_c_speed_and_still_escaped() -> None:
    """/proc/mdstat keeps its newlines and tabs (issue 29: checking its 43 KB on big character
    by character was most of a probe's escaping); a control among them is still shown."""
    mdstat = "Personalities : [raid10]\nmd127 : active raid10 sdd[3]\n\t[==>...]\n" * 500
    assert escape_controls(mdstat, keep_newlines=True, keep_tabs=True) is mdstat
    assert escape_controls(mdstat + "\x1b[2J", keep_newlines=True, keep_tabs=True).endswith(
        "\n\\x1b[2J"
    )
    assert escape_controls("a\tb\n", keep_newlines=True) == "a\\x09b\n"  # tabs not kept


def test_a_frozen_object_found_clean_is_not_walked_again() -> None:
    """The simulator hands out the same 1,000 disks at every probe: one found clean is returned
    at once the next time (issue 29); an object that is not frozen is always walked."""
    from app import escape

    disk = Disk("sda", 1, model="ok")
    m = Machine("host", "6.1", disks=(disk,))
    assert escape_strings(m) is m
    walked: list[object] = []
    original = escape._walk_fields

    def spy(obj: object, names: tuple[str, ...]) -> dict[str, object]:
        walked.append(obj)
        return original(obj, names)

    escape._walk_fields = spy  # type: ignore[assignment]
    try:
        assert escape_strings(Machine("host2", "6.1", disks=(disk,))).disks[0] is disk
    finally:
        escape._walk_fields = original
    assert [type(o).__name__ for o in walked] == ["Machine"]  # its disk not walked again

    @dataclasses.dataclass
    class Loose:
        text: str

    loose = Loose("ok")
    assert escape_strings(loose) is loose
    loose.text = "a\x1bb"  # changed after it was found clean
    assert escape_strings(loose).text == "a\\x1bb"


def test_the_model_from_the_backend_holds_no_control_character() -> None:
    m = hostile_backend().probe()
    text = json.dumps(dataclasses.asdict(m), ensure_ascii=False)
    assert controls(text) == []
    assert m.host == "my\\x1b]0;pwned\\x07host"
    assert any(lv.name.startswith("lv\\x1b[2J") for lv in m.lvs)


def test_report_text_and_json_show_escapes_not_controls() -> None:
    backend = hostile_backend()
    m = backend.probe()
    text = full_report_text(backend, m, store=None)
    assert controls(text) == [], text
    assert "my\\x1b]0;pwned\\x07host" in text.splitlines()[0]
    assert "\\x1b[2J" in text and "\\u202e" in text
    doc = full_report_json(backend, m, store=None)
    as_shown = json.dumps(doc, indent=2, ensure_ascii=False)  # even without \\u escapes
    assert controls(as_shown) == []
    assert controls(json.dumps(doc, indent=2)) == []


def test_report_text_escapes_what_bypasses_the_model() -> None:
    """A Machine built without a backend (a test, a future backend) is still shown escaped."""
    m = Machine(f"h{TITLE}", f"k{CLEAR}", disks=(Disk("sda", 1, model=f"m{BIDI}"),))
    assert controls(machine_to_text(m)) == []


@pytest.mark.parametrize("size", [(120, 40), (80, 24)])
async def test_the_tui_screen_shows_no_control_character(size: tuple[int, int]) -> None:
    app = RaidmanApp(hostile_backend(), probe_interval=0, sample_interval=0)  # type: ignore[arg-type]
    async with app.run_test(size=size) as pilot:
        await wait_ready(pilot)
        seen: list[str] = []
        for target in ("sda", "dm-0", "md0", "sda"):
            app.go_to(target)
            await pilot.pause()
            seen.extend(screen_lines(app))
        await wait_for(pilot, lambda: app.machine is not None)
        screen = "\n".join(seen)
        assert controls(screen) == [], screen
        assert "\\x1b" in screen  # the escapes are shown, not dropped
        assert app.title is None or controls(str(app.title)) == []
        assert controls(str(app.sub_title)) == []


def test_the_linux_probe_escapes_what_lsblk_says(tmp_path: Path) -> None:
    """The same boundary on the Linux backend: a replay whose lsblk gives every device a
    hostile model and label."""
    cap = tmp_path / "cap"
    shutil.copytree(FIXTURES / "captures" / "raid5-raid10-syncing", cap)
    cmds = json.loads((cap / "commands.json").read_text())

    def poison(devs: list[dict[str, object]]) -> None:
        for d in devs:
            d["model"] = f"M{CLEAR}"
            d["label"] = f"L{TITLE}"
            d["serial"] = f"S{BIDI}"
            poison(d.get("children", []))  # type: ignore[arg-type]

    for c in cmds:
        if c["argv"][0] == "lsblk":
            doc = json.loads(c["stdout"])
            poison(doc["blockdevices"])
            c["stdout"] = json.dumps(doc)
    (cap / "commands.json").write_text(json.dumps(cmds))
    m = ReplayBackend(cap).probe()
    assert any(d.model == "M\\x1b[2J\\x1b[H" for d in m.disks)
    assert controls(json.dumps(dataclasses.asdict(m), ensure_ascii=False)) == []
    assert controls(machine_to_text(m)) == []
