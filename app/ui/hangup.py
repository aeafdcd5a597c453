"""Leave cleanly when the terminal goes away.

An SSH session that drops normally sends SIGHUP; but a terminal can also vanish without one
(SIGHUP ignored by a wrapper such as ``nohup``, a pty whose master was closed, input at EOF).
Textual's input thread then wakes up on the dead descriptor forever, burning a core on the very
server that is rebuilding. ``watch_terminal(app)`` makes the App exit within a second in both
cases: a SIGHUP/SIGTERM handler, and a thread blocked in ``poll()`` on the terminal's descriptor
for POLLHUP/POLLERR/POLLNVAL only (it reads nothing, so it never races Textual for keystrokes,
and it wakes only when the terminal goes: no timer ticking twice a second while all is well).

What must survive the exit (a boost's restore record) is written before anything is raised,
so leaving early loses nothing.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import threading
from collections.abc import Callable
from typing import Any

HARD_EXIT_AFTER_S = 0.8  # the terminal is gone: if Textual's shutdown stalls on it, leave anyway
HARD_EXIT_SIGTERM_S = 3.0  # the terminal may still be there: give Textual time to restore it
_GONE = select.POLLHUP | select.POLLERR | select.POLLNVAL


def terminal_gone(fd: int) -> bool:
    """True when ``fd`` is hung up, in error or closed. Never reads from it."""
    try:
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        events = poller.poll(0)
    except (OSError, ValueError):
        return True
    return any(mask & _GONE for _fd, mask in events)


def wait_until_gone(fd: int) -> None:
    """Block until ``fd`` is hung up, in error or closed. Asks for no event but those (which
    poll() always reports), so input does not wake it, and reads nothing."""
    try:
        poller = select.poll()
        poller.register(fd, 0)
        while not any(mask & _GONE for _fd, mask in poller.poll()):
            pass
    except (OSError, ValueError):
        return


def input_fd() -> int | None:
    """The descriptor Textual reads keys from (stdin), or None when there is none to watch."""
    try:
        fd = sys.__stdin__.fileno() if sys.__stdin__ is not None else None
    except (OSError, ValueError):
        return None
    return fd


def watch_terminal(app: Any, *, on_gone: Callable[[str], None] | None = None) -> None:
    """Install the SIGHUP/SIGTERM handlers and the terminal poll on a running Textual ``app``.

    ``on_gone(reason)`` is called once (on the App's thread) before ``app.exit()``."""
    state = {"done": False}

    def leave(reason: str) -> None:
        if state["done"]:
            return
        state["done"] = True
        if on_gone is not None:
            try:
                on_gone(reason)
            except Exception as e:  # leaving must not fail on a hook
                app.log.error(f"hang-up hook failed: {e!r}")
        code = 129 if reason == "SIGHUP" else 0
        # A shutdown that writes to a hung-up terminal can stall: leave regardless, soon.
        delay = HARD_EXIT_SIGTERM_S if reason == "SIGTERM" else HARD_EXIT_AFTER_S
        timer = threading.Timer(delay, os._exit, args=(code,))
        timer.daemon = True
        timer.start()
        app.exit(return_code=code)

    import asyncio

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGHUP, signal.SIGTERM):
        # not the main thread / no loop: the poll below still catches a dead terminal
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(sig, leave, sig.name)

    fd = input_fd()
    if getattr(app, "is_headless", False) or fd is None or not os.isatty(fd):
        return  # headless (tests, pipes): nothing to watch

    def wait_for_hangup() -> None:
        wait_until_gone(fd)
        with contextlib.suppress(RuntimeError):  # the App is not running any more
            app.call_from_thread(leave, "terminal closed")

    threading.Thread(target=wait_for_hangup, name="terminal-watch", daemon=True).start()
