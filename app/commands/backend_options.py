"""The options every command shares for which machine to look at (``--demo [SCENARIO]``,
``--replay DIR``, ``--host NAME``) and the backends they ask for: where the CLI and its
subcommands choose a backend (the TUI is handed the one ``app.cli`` chose)."""

from __future__ import annotations

import argparse
import atexit
import os
import shutil
import sys
import tempfile

from app.backend import Backend, BackendError


def add_backend_options(p: argparse.ArgumentParser, *, top_level: bool = False) -> None:
    """``--demo [SCENARIO]`` / ``--replay DIR``. On subcommands the defaults are suppressed so
    that ``raidman --demo report`` and ``raidman report --demo`` both work."""
    default = None if top_level else argparse.SUPPRESS
    g = p.add_mutually_exclusive_group()
    g.add_argument(
        "--demo",
        nargs="?",
        const="raid10-evo",
        default=default,
        metavar="SCENARIO",
        help="use the simulated backend (default scenario: raid10-evo)",
    )
    g.add_argument(
        "--replay",
        metavar="DIR",
        default=default,
        help="replay a directory written by `raidman capture`",
    )
    g.add_argument(
        "--host",
        action="append",
        default=default,
        metavar="NAME",
        help="another machine over ssh (repeatable; @GROUP from hosts.toml)",
    )


def make_backends(args: argparse.Namespace) -> list[tuple[str | None, Backend]]:
    """(host, backend) per ``--host`` (host None: this machine or --demo/--replay). A bad host
    name or hosts file: a message and exit status 2."""
    if not getattr(args, "host", None):
        return [(None, make_backend(args))]
    from app.hosts import HostsError, resolve_hosts
    from backends.linux import LinuxBackend
    from backends.linux.ssh import SshSource

    try:
        targets = resolve_hosts(args.host)
    except HostsError as e:
        print(f"raidman: {e}", file=sys.stderr)
        raise SystemExit(2) from None
    smart = not getattr(args, "no_smart", False)
    return [(t.host, LinuxBackend(SshSource(t, smart=smart))) for t in targets]


def make_backend(args: argparse.Namespace) -> Backend:
    """The backend the options ask for. Raises SystemExit with a message for bad input."""
    if getattr(args, "host", None):
        backends = make_backends(args)
        if len(backends) != 1:
            print("raidman: this command works on one host at a time", file=sys.stderr)
            raise SystemExit(2)
        return backends[0][1]
    if getattr(args, "demo", None):
        from backends.simulated import SimulatedBackend, scenario_names

        if args.demo not in scenario_names():
            raise SystemExit(
                f"raidman: unknown scenario {args.demo!r}; choose one of: {', '.join(scenario_names())}"
            )
        isolate_demo_state()
        return SimulatedBackend.from_scenario(args.demo)
    if getattr(args, "replay", None):
        from backends.replay import ReplayBackend

        try:
            backend = ReplayBackend(args.replay)
        except BackendError as e:
            raise SystemExit(f"raidman: {e}") from None
        isolate_demo_state()  # a capture's disks are not this machine's: not in its records
        return backend
    from backends.linux import LinuxBackend

    return LinuxBackend()


def isolate_demo_state() -> None:
    """A demo (or a replay) must not write its made-up (or captured) disks into the real
    snapshot database, audit log or boost records: give it a state directory of its own
    (unless one is set explicitly)."""
    if not os.environ.get("RAIDMAN_STATE_DIR"):
        made = tempfile.mkdtemp(prefix="raidman-demo-")
        os.environ["RAIDMAN_STATE_DIR"] = made
        # gone again when the demo ends (after the TUI's threads: atexit runs once they joined)
        atexit.register(shutil.rmtree, made, ignore_errors=True)
