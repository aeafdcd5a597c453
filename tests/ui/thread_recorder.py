"""A backend wrapper that records the thread of every call that reaches the system (probe,
sample, SMART, file reads, programs run): the TUI must make none of them on its UI thread
(issue 25: a slow disk or an ssh round trip there freezes the screen)."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any

# the Backend methods that do I/O (name, read_only_reason, now, smart_enabled are attributes or
# a clock: never a wait)
IO_CALLS = frozenset({"probe", "sample", "smart", "read_text", "run", "run_streaming"})


@dataclass(frozen=True)
class Call:
    method: str
    first_arg: str  # the device, path or argv, for the failure message
    thread: int  # threading.get_ident()
    on_ui_thread: bool


class ThreadRecordingBackend:
    """Wraps a backend (the simulated one); ``calls`` lists every I/O call with its thread.
    The UI thread is the one that built it (the test's, which runs the App's event loop)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.ui_thread = threading.get_ident()
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if name not in IO_CALLS or not callable(attr):
            return attr

        def recorded(*args: Any, **kwargs: Any) -> Any:
            me = threading.get_ident()
            first = (
                " ".join(args[0])
                if args and isinstance(args[0], list | tuple)
                else args[0]
                if args
                else ""
            )
            with self._lock:
                self.calls.append(Call(name, str(first), me, me == self.ui_thread))
            return attr(*args, **kwargs)

        return recorded

    def mark(self) -> int:
        """Where the calls stand now (``since(mark)`` lists those after it)."""
        with self._lock:
            return len(self.calls)

    def since(self, mark: int) -> list[Call]:
        with self._lock:
            return self.calls[mark:]

    def on_ui_thread(self) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.on_ui_thread]
