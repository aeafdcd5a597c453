"""Every key on every demo at 80×24 (and 200×60), in tmux, as a person types them; each screen
read back with ``capture-pane -p`` and checked for a fact cut (issue 39). Not a test (it takes
minutes): ``.venv/bin/python -m tests.ui.tmux_walk_all [WIDTHxHEIGHT] [SCENARIO ...]`` prints
one line per screen and a summary; exit 1 when a fact was cut.

What counts as a fact cut on a screen:
- the banner's sync (percent, rate, ETA) where an array syncs;
- a tree line of an array ending inside a word after its sync percent ("recover 8.2% l");
- the mdstat tab's recovery/resync line without its ``finish=`` and ``speed=``;
- a Live row with I/O but no utilisation or latency;
- a Findings row cut with "…";
- the create wizard's Spares list not on screen;
- a traceback, or raidman gone.
"""

from __future__ import annotations

import re
import subprocess
import sys
import time
import uuid

from backends.simulated import scenario_names
from tests.ui.test_tmux_walk import RAIDMAN, _screen, _tmux, _wait

# (keys, what the screen is) in the order a person would try them; "wait:TEXT" waits
# tmux key names: "Escape", "Tab", "?" ("escape" would be typed as six letters)
MAIN_KEYS = ("d", "s", "f", "w", "e", "m", "l", "Escape", "?", "Escape", "/", "s", "d", "/",
             "Escape", "r", "L", "Escape", "Tab", "Tab", "Escape")  # fmt: skip
DIALOGS = (("n", "Create an md array"), ("a", "Member actions"), ("t", "Sync actions"),
           ("v", "Filesystem / LVM"), ("b", ""), ("L", "Audit log"))  # fmt: skip


def problems(screen: str, key: str) -> list[str]:
    out = []
    lines = screen.splitlines()
    if "Traceback" in screen or "RAIDMAN-EXITED" in screen:
        out.append("raidman exited or crashed")
    banner = lines[1] if len(lines) > 1 else ""
    if "SYNCING" in banner or "⟳" in banner:
        rolled = "arrays, slowest" in banner  # many syncs: the slowest one's ETA
        if "ETA" not in banner or not (rolled or re.search(r"\d+\.\d%", banner)):
            out.append(f"banner without percent or ETA: {banner.strip()!r}")
    for i, ln in enumerate(lines):
        tree = ln.split("▕")[0].rstrip(" ▁▂▃▄▅▆▇█▉▊▋▌▍▎▏")  # less the scrollbar's thumb
        m = re.search(r"\b(md\d+) \w+ \[[U_]+\] \w+ \d+\.\d% (\S{1,3})\s*$", tree)
        if m and not re.fullmatch(r"[\d.]+", m.group(2)):
            out.append(f"tree line cut: {tree.strip()!r}")
        if re.search(r"(recovery|resync|check|reshape) =", ln):
            both = " ".join(lines[i : i + 2])
            rest = [x.strip() for x in lines[i + 1 :] if x.strip()]
            if not rest or rest[0].startswith(("esc ", "g ")):
                continue  # the view's last line: the rest of it is below, scrolled (not cut)
            if "finish=" not in both or "speed=" not in both:
                out.append(f"mdstat line cut: {ln.strip()!r}")
        row = re.match(r"^\s+(\w+)\s+(\S+/s)\s+(\S+/s)\s+(\d+)\s+(\S+)\s+(\S+)", ln)
        if row and int(row.group(4)) > 0 and (row.group(5) in ("-", "0%") or row.group(6) == "-"):
            out.append(f"Live row with I/O but no util/latency: {ln.strip()!r}")
        if re.match(r"^.*▕ [✖▲●]  .*…", ln):
            out.append(f"Findings row cut: {ln.strip()!r}")
    if key == "n" and "Create an md array" in screen and "Spares" in screen:
        i = next(i for i, ln in enumerate(lines) if ln.strip() == "Spares")
        if not any("▐" in ln for ln in lines[i + 1 : i + 4]):
            out.append("the Spares list has no row on screen")
    return out


def walk(scenario: str, size: tuple[int, int]) -> list[tuple[str, list[str]]]:
    session = f"raidman-all-{uuid.uuid4().hex[:8]}"
    w, h = size
    cmd = f"env -u COLUMNS -u LINES {RAIDMAN} --demo {scenario}; echo RAIDMAN-EXITED; sleep 30"
    _tmux(session, "new-session", "-d", "-s", session, "-x", str(w), "-y", str(h), cmd)
    seen: list[tuple[str, list[str]]] = []
    try:
        _wait(session, ("▼ Disks", "▼ Arrays"), timeout=60)
        time.sleep(1.5)
        seen.append(("(start)", problems(_screen(session), "")))
        for key in MAIN_KEYS:
            _tmux(session, "send-keys", "-t", session, key)
            time.sleep(1.2)
            seen.append((key, problems(_screen(session), key)))
        for key, title in DIALOGS:
            _tmux(session, "send-keys", "-t", session, key)
            time.sleep(1.5)
            screen = _screen(session)
            if title and title not in screen:
                time.sleep(2)
                screen = _screen(session)
            seen.append((key, problems(screen, key)))
            for _ in range(3):  # back to the main screen
                _tmux(session, "send-keys", "-t", session, "Escape")
                time.sleep(0.4)
        _tmux(session, "send-keys", "-t", session, "q")
        end = time.monotonic() + 15  # a loaded machine takes a while to shut down
        while "RAIDMAN-EXITED" not in _screen(session) and time.monotonic() < end:
            time.sleep(0.5)
        if "RAIDMAN-EXITED" not in _screen(session):
            seen.append(("q", ["q did not quit"]))
    finally:
        subprocess.run(["tmux", "-L", session, "kill-server"], capture_output=True, check=False)
    return seen


def main(argv: list[str]) -> int:
    size = (80, 24)
    if argv and re.fullmatch(r"\d+x\d+", argv[0]):
        size = tuple(int(x) for x in argv[0].split("x"))  # type: ignore[assignment]
        argv = argv[1:]
    names = argv or list(scenario_names())
    screens = cut = 0
    for name in names:
        seen = walk(name, size)
        bad = [(k, p) for k, p in seen if p]
        screens += len(seen)
        cut += sum(len(p) for _, p in bad)
        print(f"{name} {size[0]}x{size[1]}: {len(seen)} screens, {len(bad)} with a fact cut")
        for k, p in bad:
            for x in p:
                print(f"  after {k}: {x}")
    print(f"summary: {len(names)} demos, {screens} screens, {cut} facts cut")
    return 1 if cut else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
