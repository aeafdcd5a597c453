"""``raidman`` entry point.

raidman                       the TUI on this machine (read-only unless root)
raidman --demo [SCENARIO]     the TUI on the simulated backend
raidman --replay DIR          the TUI on a captured directory
raidman --host NAME [...]     other machines over ssh (the TUI: several are a hosts view;
                              report/plan/apply; NAME or @GROUP)
raidman report --json         the model as JSON (also with --demo/--replay)
raidman capture DIR           save what the Linux backend reads, for replay
raidman plan WIZARD ...       print a plan without running it
raidman apply PLAN.json       run a saved plan (pre-flight, confirmation)
raidman monitor               headless: record sync events and SMART snapshots
raidman metrics               Prometheus metrics (node_exporter textfile format)
"""

from __future__ import annotations

import argparse
import atexit
import contextlib
import importlib
import os
import sys
import threading
from collections.abc import Sequence
from typing import NoReturn

from app.commands.backend_options import add_backend_options, make_backends
from app.escape import guard_streams

SUBCOMMANDS = ("report", "capture", "plan", "apply", "monitor", "metrics")


def build_parser(command: str | None = None, *, every: bool = True) -> argparse.ArgumentParser:
    """The whole command line. ``every=False``: only ``command``'s own parser is made (its
    module imported); the other subcommands are named with no options, so a ``raidman report``
    does not import the plan, apply and monitor code it will not run (under the VM's TCG that
    import was 1.5 s of every command)."""
    parser = argparse.ArgumentParser(
        prog="raidman", description="The Linux storage stack in a terminal."
    )
    add_backend_options(parser, top_level=True)
    sub = parser.add_subparsers(dest="command")
    for name in SUBCOMMANDS:
        if not every and name != command:
            sub.add_parser(name)
            continue
        try:
            mod = importlib.import_module(f"app.commands.{name}")
        except ModuleNotFoundError as e:
            if e.name != f"app.commands.{name}":
                raise
            continue
        mod.add_parser(sub)
    return parser


class _QuietParser(argparse.ArgumentParser):
    """A parser that says nothing: what it cannot read, the full parser reads and reports."""

    def error(self, message: str) -> NoReturn:
        raise argparse.ArgumentError(None, message)


def named_command(argv: Sequence[str]) -> str | bool | None:
    """The subcommand ``argv`` names, as argparse reads it (the top level's options take their
    values first: ``--host report plan`` is a plan), found with a parser whose subcommands take
    any arguments; False when that is not sure (help asked for, or a top-level error, which the
    full parser then reports)."""
    if any(a in ("-h", "--help") for a in argv):
        return False
    probe = _QuietParser(prog="raidman", add_help=False, exit_on_error=False)
    add_backend_options(probe, top_level=True)
    sub = probe.add_subparsers(dest="command")
    for name in SUBCOMMANDS:
        sub.add_parser(name, add_help=False, exit_on_error=False).add_argument(
            "rest", nargs=argparse.REMAINDER
        )
    try:
        args, _ = probe.parse_known_args(list(argv))
    except (argparse.ArgumentError, SystemExit):
        return False
    command = getattr(args, "command", None)
    return command if command in SUBCOMMANDS else None


def parse_command_line(argv: Sequence[str]) -> argparse.Namespace:
    """``argv`` parsed with the parser of the one subcommand it names (or of none: the TUI)."""
    args = _demo_before_subcommand(list(argv))
    command = named_command(args)
    if command is False:
        return build_parser().parse_args(args)
    assert command is None or isinstance(command, str)
    return build_parser(command, every=False).parse_args(args)


def _demo_before_subcommand(argv: list[str]) -> list[str]:
    """``raidman --demo report``: a bare --demo must not swallow the subcommand as its scenario."""
    out = list(argv)
    for i, a in enumerate(out[:-1]):
        if a == "--demo" and out[i + 1] in SUBCOMMANDS:
            out[i] = "--demo=raid10-evo"
    return out


def main(argv: Sequence[str] | None = None, *, exit_fast: bool = False) -> int:
    """``exit_fast`` (the console script): once the TUI is over, the process ends at once
    (``exit_now``)."""
    args = parse_command_line(sys.argv[1:] if argv is None else argv)
    if args.command:
        mod = importlib.import_module(f"app.commands.{args.command}")
        return int(mod.run(args) or 0)
    if not has_terminal():
        # Textual on a pipe or /dev/null ignored SIGTERM and SIGHUP, spun at ~55 % of a core
        # and wrote 2.3 MB of frames in 22 s (issue 37, item 10): refuse, as `less` does
        why = (
            "raidman: the TUI needs a terminal (its input and its screen, stdin and stderr, "
            "are not one); `raidman report` prints the same facts as text"
        )
        print(why, file=sys.stderr)
        if not _isatty(sys.__stderr__) and _isatty(sys.__stdout__):
            print(why)  # (2>file: where the admin looks)
        return 2
    backends = make_backends(args)
    from app.ui.app import RaidmanApp

    # several hosts: the hosts view first (Enter opens one); one: that machine as today
    host, backend = backends[0]
    hosts = [(str(h), b) for h, b in backends if h is not None]
    tui = RaidmanApp(backend, host=host, hosts=hosts, tune_gc=True)
    tui.run()
    status = tui_exit_status(tui.return_code)
    if exit_fast:
        exit_now(status)
    return status


def exit_now(status: int) -> NoReturn:
    """End the process after the TUI without the interpreter tearing down every object one by
    one: on ``big`` (~170,000 live objects) that took 2.7 s between the TUI's end and the
    process's on a loaded machine, which the admin saw as a slow ``q`` (issue 44). What a
    normal exit does that matters is done first, in its order: threads that are not daemons
    are waited for (a plan step left running by a double ctrl+c), the atexit handlers run (the
    demo's temporary state), the streams are flushed."""
    me = threading.current_thread()
    for t in threading.enumerate():
        if t is not me and not t.daemon:
            t.join()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(status)


def has_terminal() -> bool:
    """Whether the TUI has a terminal: Textual reads keys from stdin and draws on stderr."""
    return _isatty(sys.__stdin__) and _isatty(sys.__stderr__)


def _isatty(stream: object) -> bool:
    try:
        return stream is not None and os.isatty(stream.fileno())  # type: ignore[attr-defined]
    except (OSError, ValueError, AttributeError):
        return False


def tui_exit_status(code: int | None) -> int:
    """The shell's status after the TUI: Textual's own (1 after an uncaught error, whose
    traceback it prints to stderr once the terminal is restored), with one line saying so."""
    if code:
        print(
            f"raidman: the TUI stopped on an unexpected error (exit status {code}); "
            "its traceback is above.",
            file=sys.stderr,
        )
    return code or 0


def entry() -> int:
    """The console script: ``main`` plus the manners of a Unix tool (``| head``, Ctrl-C), and
    no control character on its stdout/stderr (app.escape.guard_streams)."""
    guard_streams()
    try:
        return main(exit_fast=True)
    except BrokenPipeError:
        # The reader went away (``raidman report --json | head``): not an error worth a traceback.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return 0
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(entry())
