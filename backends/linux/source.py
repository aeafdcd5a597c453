"""Where the Linux backend's bytes come from: the live system, a recording of it, or a replay.

Every read the backend makes goes through a ``Source``: files (sysfs, /proc, /run/udev),
directory listings, symlinks, program runs, psutil's per-disk counters and the host's identity.
``HostSource`` reads the real machine; ``RecordingSource`` wraps another source and writes each
answer into a directory; ``ReplaySource`` answers from such a directory, and only from it.

Capture directory layout (written by ``RecordingSource``, read by ``ReplaySource``)::

    DIR/meta.json        {"format": 1, "host", "kernel", "time", "uid", "euid"}
    DIR/files/<abs path> every file read, byte for byte ("/sys/block/md127/md/level" ->
                         DIR/files/sys/block/md127/md/level)
    DIR/reads.json       {path: "ok" | "absent" | "EACCES" | "error: ..."} for every read; a path
                         not listed was never read: a replay calls it "not recorded", not absent
    DIR/listdir.json     {path: [names] | null}
    DIR/readlink.json    {path: target | null}
    DIR/commands.json    [{"argv", "stdin", "returncode", "stdout", "stderr", "duration_s"}]
    DIR/disk_io.json     [{"name", "read_bytes", ...}] (psutil.disk_io_counters(perdisk=True))
"""

from __future__ import annotations

import errno
import json
import os
import subprocess
import time
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from app import statefiles
from app.model.devices import ProbeNote
from app.model.live import DiskIO
from app.parsers.errors import ParseError
from app.parsers.safe import load_json
from app.statefiles import StateFileError
from backends.base import NOT_IN_CAPTURE, CommandResult, OutputCallback
from backends.linux.io import read_disk_io
from backends.linux.stream import NOT_FOUND, TIMED_OUT, run_streaming

FORMAT = 1
CAPTURE_DIR = "capture directory"
CAPTURE_FILE = "capture file"
MAX_INDEX_BYTES = 256 << 20  # commands.json of 5,000 disks' smartctl -j -a is ~100 MB
MAX_FILE_BYTES = 16 << 20  # one sysfs/proc file: /proc/self/mountinfo of a big host is ~1 MB


def _note_source(path: str) -> str:
    if path.startswith("/sys/"):
        return "sysfs"
    if path.startswith("/proc/"):
        return "procfs"
    return "files"


@runtime_checkable
class Source(Protocol):
    """Everything the Linux backend reads. No method raises for absent files or programs."""

    #: whether SMART is read through this source unasked (False: the user said ``--no-smart``)
    smart: bool

    def read_text(self, path: str) -> str | None:
        """The file's text, or None when it is absent/vanished/unreadable (the latter noted)."""
        ...

    def listdir(self, path: str) -> tuple[str, ...]:
        """Sorted entry names; () when the directory is absent or unreadable (the latter noted)."""
        ...

    def readlink(self, path: str) -> str | None:
        """A symlink's target, or None when it is not a symlink / absent."""
        ...

    def run(
        self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        """Run argv (never a shell). 127 when the program is missing, 124 on timeout."""
        ...

    def disk_io(self) -> tuple[DiskIO, ...]:
        """Cumulative per-disk I/O counters."""
        ...

    def uname(self) -> tuple[str, str]:
        """(nodename, kernel release)."""
        ...

    def euid(self) -> int: ...

    def now(self) -> float: ...

    def take_notes(self) -> tuple[ProbeNote, ...]:
        """Notes gathered since the last call (permission denied, odd errors), then forgets them."""
        ...


def _command_env() -> dict[str, str]:
    env = dict(os.environ)
    env["LC_ALL"] = "C"
    env["LVM_SUPPRESS_FD_WARNINGS"] = "1"
    return env


class _Notes:
    def __init__(self) -> None:
        self._notes: list[ProbeNote] = []

    def _note(self, source: str, message: str, severity: str = "warning") -> None:
        note = ProbeNote(source, message, severity)  # type: ignore[arg-type]
        if note not in self._notes:
            self._notes.append(note)

    def take_notes(self) -> tuple[ProbeNote, ...]:
        out = tuple(self._notes)
        self._notes.clear()
        return out


class HostSource(_Notes):
    """The machine raidman runs on."""

    smart = True

    def __init__(self) -> None:
        super().__init__()
        # the last outcome of each read, for RecordingSource: "ok", "absent", "EACCES", "error: ..."
        self.last_read_status = "ok"

    def read_text(self, path: str) -> str | None:
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            self.last_read_status = "absent"
            return None
        except PermissionError:
            self.last_read_status = "EACCES"
            self._note(_note_source(path), f"permission denied reading {path}")
            return None
        except OSError as e:
            if e.errno in (errno.ENODEV, errno.ENXIO, errno.ENOENT):
                self.last_read_status = "absent"
                return None
            self.last_read_status = f"error: {e.strerror or e}"
            self._note(_note_source(path), f"cannot read {path}: {e.strerror or e}")
            return None
        self.last_read_status = "ok"
        return text

    def listdir(self, path: str) -> tuple[str, ...]:
        try:
            return tuple(sorted(os.listdir(path)))
        except (FileNotFoundError, NotADirectoryError):
            return ()
        except PermissionError:
            self._note(_note_source(path), f"permission denied listing {path}")
            return ()
        except OSError as e:
            self._note(_note_source(path), f"cannot list {path}: {e.strerror or e}")
            return ()

    def readlink(self, path: str) -> str | None:
        try:
            return os.readlink(path)
        except OSError:
            return None

    def run(
        self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        args = tuple(str(a) for a in argv)
        if not args:
            return CommandResult(args, NOT_FOUND, "", "empty command")
        env = _command_env()
        t0 = time.monotonic()
        try:
            p = subprocess.run(
                list(args),
                input=stdin,
                capture_output=True,
                text=True,
                timeout=timeout,
                shell=False,
                env=env,
                check=False,
                errors="replace",
            )
        except FileNotFoundError:
            return CommandResult(
                args, NOT_FOUND, "", f"{args[0]}: program not found", time.monotonic() - t0
            )
        except PermissionError as e:
            return CommandResult(args, 126, "", f"{args[0]}: {e.strerror or e}")
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else ""
            return CommandResult(
                args,
                TIMED_OUT,
                out,
                f"{args[0]}: timed out after {timeout:g} s",
                time.monotonic() - t0,
            )
        except OSError as e:
            return CommandResult(args, 126, "", f"{args[0]}: {e.strerror or e}")
        return CommandResult(args, p.returncode, p.stdout, p.stderr, time.monotonic() - t0)

    def run_streaming(
        self,
        argv: Sequence[str],
        on_output: OutputCallback,
        stdin: str | None = None,
        timeout: float | None = None,
    ) -> CommandResult:
        """``run``, with each output line to ``on_output`` as the program writes it."""
        return run_streaming(argv, on_output, stdin=stdin, timeout=timeout, env=_command_env())

    def disk_io(self) -> tuple[DiskIO, ...]:
        return read_disk_io()

    def uname(self) -> tuple[str, str]:
        u = os.uname()
        return u.nodename, u.release

    def euid(self) -> int:
        return os.geteuid()

    def now(self) -> float:
        return time.time()


def _file_in(root: Path, path: str) -> Path:
    """Where an absolute path's copy lives under ``root`` (no escaping it with '..')."""
    parts = [p for p in Path(path).parts if p not in ("/", "", ".", "..")]
    return root.joinpath(*parts)


def _result_to_json(r: CommandResult, stdin: str | None) -> dict[str, Any]:
    return {
        "argv": list(r.argv),
        "stdin": stdin,
        "returncode": r.returncode,
        "stdout": r.stdout,
        "stderr": r.stderr,
        "duration_s": round(r.duration_s, 4),
    }


class RecordingSource(_Notes):
    """Answers from ``inner`` and writes every answer into ``directory`` (see module doc)."""

    def __init__(self, inner: Source, directory: str | os.PathLike[str]) -> None:
        super().__init__()
        self.inner = inner
        self.smart = inner.smart
        self.dir = Path(directory)
        # written as the state files are (app.statefiles: the directories ours and 0700, never
        # through a symlink, each file replaced atomically): root captures into DIR
        statefiles.ensure_dir(self.dir / "files", CAPTURE_DIR)
        self.reads: dict[str, str] = {}
        self.listings: dict[str, list[str] | None] = {}
        self.links: dict[str, str | None] = {}
        self.commands: list[dict[str, Any]] = []
        self.io: list[dict[str, Any]] | None = None
        host, kernel = inner.uname()
        self.meta: dict[str, Any] = {
            "format": FORMAT,
            "host": host,
            "kernel": kernel,
            "time": inner.now(),
            "uid": os.getuid(),
            "euid": inner.euid(),
        }
        self.flush()

    def read_text(self, path: str) -> str | None:
        text = self.inner.read_text(path)
        self._gather()
        if text is None:
            status = getattr(self.inner, "last_read_status", "absent")
            self.reads[path] = "absent" if status == "ok" else status
            return None
        self.reads[path] = "ok"
        statefiles.write_text(
            _file_in(self.dir / "files", path), text, mode=0o644, what=CAPTURE_FILE
        )
        return text

    def listdir(self, path: str) -> tuple[str, ...]:
        names = self.inner.listdir(path)
        self._gather()
        self.listings[path] = list(names) if names else None
        return names

    def readlink(self, path: str) -> str | None:
        target = self.inner.readlink(path)
        self.links[path] = target
        return target

    def run(
        self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        r = self.inner.run(argv, stdin=stdin, timeout=timeout)
        self.commands.append(_result_to_json(r, stdin))
        self.flush()
        return r

    def disk_io(self) -> tuple[DiskIO, ...]:
        counters = self.inner.disk_io()
        self.io = [asdict(c) for c in counters]
        return counters

    def uname(self) -> tuple[str, str]:
        return str(self.meta["host"]), str(self.meta["kernel"])

    def euid(self) -> int:
        return int(self.meta["euid"])

    def now(self) -> float:
        return self.inner.now()

    def _gather(self) -> None:
        for n in self.inner.take_notes():
            self._note(n.source, n.message, n.severity)

    def take_notes(self) -> tuple[ProbeNote, ...]:
        self._gather()
        return super().take_notes()

    def flush(self) -> None:
        """Write the indexes (files are written as they are read)."""

        def dump(name: str, data: object) -> None:
            text = json.dumps(data, indent=1, sort_keys=True) + "\n"
            statefiles.write_text(self.dir / name, text, mode=0o644, what=CAPTURE_FILE)

        dump("meta.json", self.meta)
        dump("reads.json", self.reads)
        dump("listdir.json", self.listings)
        dump("readlink.json", self.links)
        dump("commands.json", self.commands)
        if self.io is not None:
            dump("disk_io.json", self.io)


class CaptureError(Exception):
    """A capture directory is missing or unreadable; the message is meant for the user."""


def _load_json(path: Path, default: Any) -> Any:
    """An index of a capture (untrusted: it may come from another machine): a regular file (a
    FIFO or device planted there is refused, never waited on), at most MAX_INDEX_BYTES, JSON
    nested at most 64 deep, numbers within 64 bits; anything else is a CaptureError naming it."""
    try:
        data = statefiles.read_regular(path, what="capture index", max_bytes=MAX_INDEX_BYTES)
    except FileNotFoundError:
        return default
    except OSError as e:
        raise CaptureError(f"{path}: {e.strerror or e}") from None
    except StateFileError as e:
        raise CaptureError(str(e)) from None
    if len(data) > MAX_INDEX_BYTES:
        raise CaptureError(f"{path}: larger than {MAX_INDEX_BYTES // 2**20} MiB")
    try:
        return load_json(data.decode("utf-8", errors="replace"), str(path))
    except ParseError as e:
        raise CaptureError(str(e)) from None


def _strip_columns(argv: Sequence[str]) -> tuple[str, ...]:
    """argv without the value of ``-o``/``--output`` (for matching a capture made with other columns)."""
    out: list[str] = []
    skip = False
    for a in argv:
        if skip:
            skip = False
            out.append("<columns>")
            continue
        if a in ("-o", "--output", "--options"):
            skip = True
        out.append(a)
    return tuple(out)


class ReplaySource(_Notes):
    """Serves exactly what a ``RecordingSource`` wrote; anything else is absent / not in capture."""

    smart = True

    def __init__(self, directory: str | os.PathLike[str]) -> None:
        super().__init__()
        self.dir = Path(directory)
        if not (self.dir / "meta.json").is_file():
            raise CaptureError(f"{self.dir} is not a raidman capture (no meta.json)")
        self.meta: dict[str, Any] = _load_json(self.dir / "meta.json", {})
        self.reads: dict[str, str] = _load_json(self.dir / "reads.json", {})
        self.listings: dict[str, list[str] | None] = _load_json(self.dir / "listdir.json", {})
        self.links: dict[str, str | None] = _load_json(self.dir / "readlink.json", {})
        self.commands: list[dict[str, Any]] = _load_json(self.dir / "commands.json", [])
        self.io: list[dict[str, Any]] = _load_json(self.dir / "disk_io.json", [])
        self._check_shapes()

    def _check_shapes(self) -> None:
        """A capture is untrusted input: refuse one whose indexes are out of shape."""

        def bad(name: str, what: str) -> CaptureError:
            return CaptureError(f"{self.dir / name}: not a raidman capture index ({what})")

        if not isinstance(self.meta, dict):
            raise bad("meta.json", "not an object")
        for key in ("euid", "uid"):
            if key in self.meta and (
                isinstance(self.meta[key], bool) or not isinstance(self.meta[key], int)
            ):
                raise bad("meta.json", f"{key} is not a number")
        if "time" in self.meta and not isinstance(self.meta["time"], int | float):
            raise bad("meta.json", "time is not a number")
        if not isinstance(self.reads, dict) or not all(
            isinstance(k, str) and isinstance(v, str) for k, v in self.reads.items()
        ):
            raise bad("reads.json", "not an object of path -> status")
        if not isinstance(self.listings, dict) or not all(
            v is None or (isinstance(v, list) and all(isinstance(n, str) for n in v))
            for v in self.listings.values()
        ):
            raise bad("listdir.json", "not an object of path -> names")
        if not isinstance(self.links, dict) or not all(
            v is None or isinstance(v, str) for v in self.links.values()
        ):
            raise bad("readlink.json", "not an object of path -> target")
        if not isinstance(self.io, list):
            raise bad("disk_io.json", "not a list")
        if not isinstance(self.commands, list):
            raise bad("commands.json", "not a list")
        for c in self.commands:
            ok = (
                isinstance(c, dict)
                and isinstance(c.get("argv"), list)
                and all(isinstance(a, str) for a in c["argv"])
                and isinstance(c.get("returncode", 0), int)
                and isinstance(c.get("stdout", ""), str)
                and isinstance(c.get("stderr", ""), str)
                and (c.get("stdin") is None or isinstance(c.get("stdin"), str))
                and isinstance(c.get("duration_s", 0.0), int | float)
            )
            if not ok:
                raise bad("commands.json", "an entry is not {argv, returncode, stdout, ...}")

    def read_text(self, path: str) -> str | None:
        status = self.reads.get(path, "ok")
        if status == "EACCES":
            self._note(_note_source(path), f"permission denied reading {path}")
            return None
        if status.startswith("error: "):
            self._note(_note_source(path), f"cannot read {path}: {status[7:]}")
            return None
        f = _file_in(self.dir / "files", path)
        parts = f.relative_to(self.dir / "files").parts
        if not parts:
            return None
        try:  # a FIFO, device or symlink (of a directory too) planted in a capture is refused
            data = statefiles.read_beneath(
                self.dir / "files", parts, what="capture file", max_bytes=MAX_FILE_BYTES
            )
        except (FileNotFoundError, NotADirectoryError, IsADirectoryError):
            return None  # (a directory of the copy was never a file read)
        except StateFileError as e:
            self._note(_note_source(path), str(e))
            return None
        except OSError as e:
            self._note(_note_source(path), f"cannot read {f}: {e.strerror or e}")
            return None
        if len(data) > MAX_FILE_BYTES:
            self._note(
                _note_source(path), f"refused capture file {f}: larger than {MAX_FILE_BYTES} bytes"
            )
            return None
        return data.decode("utf-8", errors="replace")

    def recorded(self, path: str) -> bool:
        """Whether the capture holds an answer for ``path`` (a read — an absent file read is
        recorded as absent —, a listing or a link); a path it never read is unknown, not absent."""
        return (
            path in self.reads
            or path in self.listings
            or path in self.links
            or _file_in(self.dir / "files", path).is_file()
        )

    def listdir(self, path: str) -> tuple[str, ...]:
        names = self.listings.get(path)
        return tuple(names) if names else ()

    def readlink(self, path: str) -> str | None:
        return self.links.get(path)

    def run(
        self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        args = tuple(str(a) for a in argv)
        loose: dict[str, Any] | None = None
        for c in self.commands:
            rec = tuple(c.get("argv", ()))
            if rec == args and c.get("stdin") == stdin:
                return self._result(args, c)
            if loose is None and _strip_columns(rec) == _strip_columns(args) and rec != args:
                loose = c
        if loose is not None:
            return self._result(args, loose)
        name = args[0] if args else ""
        return CommandResult(args, NOT_FOUND, "", f"{name}: {NOT_IN_CAPTURE} {self.dir}")

    @staticmethod
    def _result(args: tuple[str, ...], c: dict[str, Any]) -> CommandResult:
        return CommandResult(
            args,
            int(c.get("returncode", NOT_FOUND)),
            str(c.get("stdout", "")),
            str(c.get("stderr", "")),
            float(c.get("duration_s", 0.0)),
        )

    def disk_io(self) -> tuple[DiskIO, ...]:
        out = []
        for d in self.io:
            try:
                out.append(DiskIO(**d))
            except (TypeError, ValueError):
                continue
        return tuple(out)

    def uname(self) -> tuple[str, str]:
        return str(self.meta.get("host", "?")), str(self.meta.get("kernel", "?"))

    def euid(self) -> int:
        return int(self.meta.get("euid", self.meta.get("uid", 0)))

    def now(self) -> float:
        return float(self.meta.get("time", 0.0))
