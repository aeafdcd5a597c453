"""The one interface through which raidman touches a system: the port the domain owns.

The domain (plans, rules, wear, sync, session, report, metrics) types against this module and
never imports ``backends``; the backends implement it (``backends.base`` re-exports it beside the
helpers only backends use).

Three implementations:

* ``backends.linux.LinuxBackend``        – the real machine (lsblk, sysfs, /proc, lvm, smartctl)
* ``backends.simulated.SimulatedBackend`` – scenarios with a clock, for demos and tests
* ``backends.replay``                    – the Linux backend reading a directory written by ``raidman capture``

Nothing above this layer opens a file under /sys or /proc or starts a process itself.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal, Protocol, runtime_checkable

from app.model import Machine
from app.model.live import LiveSample
from app.model.smart import SmartReading

# a replay's stderr for a command its capture never ran (returncode 127, like a missing program)
NOT_IN_CAPTURE = "not in capture"


@dataclass(frozen=True, slots=True)
class CommandResult:
    """What one argv did. ``returncode`` 127 means the program was not found."""

    argv: tuple[str, ...]
    returncode: int
    stdout: str = ""
    stderr: str = ""
    duration_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.returncode == 0

    @property
    def not_recorded(self) -> bool:
        """A replay never recorded this command (the program may well exist there)."""
        return self.returncode == 127 and NOT_IN_CAPTURE in self.stderr


Stream = Literal["stdout", "stderr"]
# called with each line a running program writes, as it writes it: (which stream, the line
# without its terminator). A progress counter redrawn in place (``\r``, or backspaces as mke2fs
# does) counts as a line of its own.
OutputCallback = Callable[[Stream, str], None]


class BackendError(Exception):
    """A backend could not do what was asked; the message is meant for the user."""


@runtime_checkable
class EventSource(Protocol):
    """Optional beside ``Backend``: a backend that can wake its caller on storage events (md
    array/sync start and end, member changes). A backend without it is polled on a timer only
    (simulated, replay); the timer stays the fallback either way."""

    def wait_event(self, timeout: float) -> bool | None:
        """Block until an event (True) or ``timeout`` seconds (False, also when the event source
        is not there yet: no md loaded); None at once when this backend never has events."""
        ...


@runtime_checkable
class Backend(Protocol):
    """What every backend offers. All methods may block; the UI calls them from workers."""

    @property
    def name(self) -> str:
        """Short description for the header: "linux", "demo: raid10-evo", "replay: DIR"."""
        ...

    @property
    def read_only_reason(self) -> str | None:
        """Why changes cannot be made (not root, replay), or None when they can."""
        ...

    @property
    def smart_enabled(self) -> bool:
        """Whether raidman reads SMART here unasked: False when the user turned it off for a
        host (``--no-smart`` over ssh, where each reading would be a round trip of its own)."""
        ...

    def now(self) -> float:
        """The backend's clock in seconds (wall clock, or the simulation's)."""
        ...

    def probe(self) -> Machine:
        """Read the whole storage stack. Never raises for missing tools or vanished devices:
        those become ``Machine.notes``."""
        ...

    def sample(self) -> LiveSample:
        """The cheap 1 Hz read: md sync state and per-disk I/O counters."""
        ...

    def smart(self, disk: str) -> SmartReading:
        """SMART of one whole disk (kernel name). Unavailable SMART is a reading with a reason."""
        ...

    def read_text(self, path: str) -> str | None:
        """A small system file (sysfs attribute, /etc/mdadm/mdadm.conf, ...) or None if absent."""
        ...

    def run(
        self, argv: Sequence[str], *, stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        """Run one program with an argv list (never a shell). Used by read-only helpers
        (tune2fs -l, xfs_info, mdadm --detail --scan, wipefs --no-act) and by the plan executor."""
        ...

    def run_streaming(
        self,
        argv: Sequence[str],
        *,
        on_output: OutputCallback,
        stdin: str | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """``run``, calling ``on_output`` with each output line while the program runs (from
        the calling thread), for the executor's live progress. The result still holds the whole
        stdout and stderr. A backend that cannot stream calls ``on_output`` at the end."""
        ...
