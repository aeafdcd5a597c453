"""``raidman capture DIR``: record what the Linux backend reads, so it can be replayed.

Runs one full probe, one sample and the audit's reads (``app.rules.inputs.gather``: tune2fs,
xfs_info, mdadm.conf, mdadm --detail --scan, lvmconfig, queue files, fstrim.timer) through a
``RecordingSource`` (files, listings, symlinks, command outputs, psutil counters), plus
``smartctl -j -a`` for each disk when smartctl exists. A replay answers only what was recorded;
a file or command it never saw is "not recorded" (unknown), never "absent".
``raidman --replay DIR`` (or ``backends.replay.ReplayBackend(DIR)``) shows it again.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from app import statefiles
from app.statefiles import StateFileError

if TYPE_CHECKING:
    from backends.linux.source import Source

SMARTCTL_TIMEOUT = 60.0


def add_parser(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "capture",
        help="save what the Linux backend reads into DIR, for replay",
        description="Record one probe, one sample and SMART of this machine into DIR "
        "(replay it with `raidman --replay DIR`).",
    )
    p.add_argument("dir", metavar="DIR", help="directory to write (created if missing)")
    p.add_argument("--no-smart", action="store_true", help="do not record smartctl output")


def capture(
    directory: Path, *, smart: bool = True, source: Source | None = None
) -> tuple[int, int, int]:
    """Record ``source`` (default: this host) into ``directory``; returns (files read, commands
    run, notes). Every file is written through :mod:`app.statefiles` (DIR and what is below it
    must be the running user's and not group/other-writable; no symlink is followed, no file of
    another user replaced). Raises OSError or StateFileError."""
    from app.kernel_log import read_kernel_log
    from app.plans.superblocks import read_superblocks
    from app.rules.inputs import gather
    from backends.linux import LinuxBackend
    from backends.linux.source import NOT_FOUND, HostSource, RecordingSource

    rec = RecordingSource(source if source is not None else HostSource(), directory)
    backend = LinuxBackend(rec)
    machine = backend.probe()
    backend.sample()
    gather(backend, machine)  # whatever the audit reads is recorded for the replay's audit
    read_kernel_log(backend)  # journalctl -k (or dmesg): report --log and the TUI's log replay it
    read_superblocks(machine, backend)  # mdadm --examine of every member, for the report's
    if smart:
        for disk in machine.disks:
            if disk.kind != "disk":
                continue
            # whatever backend.smart() runs is recorded, so replay answers it the same way;
            # smartctl -j -a is kept too, as the raw record tests compare against
            backend.smart(disk.name)
            done = {tuple(c["argv"]) for c in rec.commands}
            argv = ("smartctl", "-j", "-a", f"/dev/{disk.name}")
            if argv not in done:
                r = rec.run(argv, timeout=SMARTCTL_TIMEOUT)
                if r.returncode == NOT_FOUND:
                    break
    rec.flush()
    lines = [
        f"raidman capture of {machine.host} (kernel {machine.kernel}), "
        f"{len(machine.disks)} disks, {len(machine.arrays)} md arrays, {len(machine.lvs)} LVs.",
        f"Replay: raidman --replay {directory}",
    ]
    lines += [f"note: [{n.source}] {n.message}" for n in machine.notes]
    statefiles.write_text(
        directory / "README", "\n".join(lines) + "\n", mode=0o644, what="capture file"
    )
    return len(rec.reads), len(rec.commands), len(machine.notes)


def run(args: argparse.Namespace) -> int:
    directory = Path(args.dir)
    try:
        statefiles.ensure_dir(directory, "capture directory")
        files, commands, notes = capture(directory, smart=not args.no_smart)
    except StateFileError as e:
        print(f"raidman capture: cannot write {directory}: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        msg = e.strerror if e.strerror else str(e)
        where = f"{e.filename}: " if e.filename and str(e.filename) != str(directory) else ""
        print(f"raidman capture: cannot write {directory}: {where}{msg}", file=sys.stderr)
        return 1
    print(f"wrote {directory}: {files} files, {commands} commands, {notes} notes")
    print(f"replay with: raidman --replay {directory}")
    return 0
