"""``raidman`` entry point.

raidman                       the TUI on this machine (read-only unless root)
raidman --demo [SCENARIO]     the TUI on the simulated backend
raidman --replay DIR          the TUI on a captured directory
raidman report --json         the model as JSON (also with --demo/--replay)
raidman capture DIR           save what the Linux backend reads, for replay
raidman plan WIZARD ...       print a plan without running it
raidman apply PLAN.json       run a saved plan (pre-flight, confirmation)
raidman monitor               headless: record sync events and SMART snapshots
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from backends.base import Backend

SUBCOMMANDS = ("report", "capture", "plan", "apply", "monitor")


def add_backend_options(p: argparse.ArgumentParser) -> None:
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--demo",
        nargs="?",
        const="raid10-evo",
        metavar="SCENARIO",
        help="use the simulated backend (default scenario: raid10-evo)",
    )
    g.add_argument(
        "--replay", metavar="DIR", help="replay a directory written by `raidman capture`"
    )


def make_backend(args: argparse.Namespace) -> Backend:
    """The backend the options ask for. Raises SystemExit with a message for unknown input."""
    if getattr(args, "demo", None):
        from backends.simulated import SimulatedBackend, scenario_names

        if args.demo not in scenario_names():
            raise SystemExit(
                f"raidman: unknown scenario {args.demo!r}; choose one of: {', '.join(scenario_names())}"
            )
        return SimulatedBackend.from_scenario(args.demo)
    if getattr(args, "replay", None):
        from backends.replay import ReplayBackend

        return ReplayBackend(args.replay)
    from backends.linux import LinuxBackend

    return LinuxBackend()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="raidman", description="The Linux storage stack in a terminal."
    )
    add_backend_options(parser)
    sub = parser.add_subparsers(dest="command")
    for name in SUBCOMMANDS:
        try:
            mod = importlib.import_module(f"app.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"app.commands.{name}":
                raise
            continue
        mod.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command:
        mod = importlib.import_module(f"app.commands.{args.command}")
        return int(mod.run(args) or 0)
    backend = make_backend(args)
    from app.ui.app import RaidmanApp

    RaidmanApp(backend).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
