"""The batch protocol of ``backends.linux.ssh``: the POSIX ``sh`` script one round trip sends
(``BatchSpec.script()``: reads files, expands globs, lists directories, reads links, runs
commands, all on the remote) and the framing of its answer (``parse_batch``): records of
NUL-terminated fields (``F`` file, ``K`` file text inline, ``A`` absent, ``L`` listing, ``R`` link,
``M`` links of one ``readlink -z``, ``C`` command, ``U`` uname, ``X`` error, ``Z`` body sizes, ``E``
end), then the bodies in the order the records asked for them. No ssh here: the transport is
``backends.linux.ssh_transport``, the ``Source`` that uses both is ``backends.linux.ssh``.

Every argument that reaches the remote shell is ``shlex.quote``d; the globs are our own constants
(checked against ``_GLOB_OK``). The answer is untrusted: one out of shape is a ``FrameError``.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field

from app.parsers.fsinfo import EXT_TYPES
from app.parsers.safe import ascii_int
from backends.base import CommandResult

MAX_FIELDS = 1_000_000  # argv words or link names in one record
_GLOB_OK = re.compile(r"/[A-Za-z0-9/_.*:-]+")

# ---------------------------------------------------------------- the remote script

_SETUP = r"""
export LC_ALL=C LVM_SUPPRESS_FD_WARNINGS=1
umask 077
T=$(mktemp -d 2>/dev/null) && mkdir "$T/b" || { printf 'X\0mktemp failed on the remote\0'; exit 0; }
trap 'rm -rf "$T"' EXIT
"""
_FUNCTIONS = r"""
H() { printf '%s\0' "$@"; }
nb() { i=$((i+1)); f="$T/b/$i"; }
rf() {
  if [ -x "${1%/*}/" ] && [ ! -e "$1" ] && [ ! -L "$1" ]; then H A "$1"; return; fi
  nb
  if cat -- "$1" > "$f" 2> /dev/null; then H F "$1" ok
  else H F "$1" fail; cat -- "$1" 2> "$f" > /dev/null; fi
}
ld() {
  if [ ! -d "$1" ]; then H L "$1" absent ""; return; fi
  if [ ! -r "$1" ] || [ ! -x "$1" ]; then H L "$1" EACCES ""; return; fi
  H L "$1" ok
  for e in "$1"/* "$1"/.[!.]* "$1"/..?*; do
    if [ -e "$e" ] || [ -L "$e" ]; then H "${e##*/}"; fi
  done
  H ""
}
rl() {
  if [ -L "$1" ]; then nb; readlink -- "$1" > "$f" 2> /dev/null; H R "$1" ok
  else H R "$1" none; fi
}
rk() {
  v=; l=
  while IFS= read -r l; do v="$v$l
"; done < "$1"
  v=$v$l
  if [ -n "$v" ]; then H K "$1" "$v"; else rf "$1"; fi
}
rla() {
  for a in "$@"; do shift; if [ -L "$a" ]; then set -- "$@" "$a"; fi; done
  [ "$#" -gt 0 ] || return 0
  nb
  if readlink -z -- "$@" > "$f" 2> /dev/null; then H M "$#" "$@"; return; fi
  rm -f -- "$f"
  for a in "$@"; do rl "$a"; done
}
c() {
  to=$1; si=$2; shift 2
  H C "$#" "$@"
  if [ "$si" = n ]; then : > "$T/i"; else printf '%s' "${si#i}" > "$T/i"; fi
  nb; o=$f; nb
  if command -v timeout > /dev/null 2>&1; then
    timeout "$to" "$@" < "$T/i" > "$o" 2> "$f"; rc=$?
  else
    "$@" < "$T/i" > "$o" 2> "$f"; rc=$?
  fi
  H "$rc"
}
"""
_PRELUDE = (
    _SETUP + _FUNCTIONS + 'i=100000\nH U "$(uname -n)" "$(uname -r)" "$(id -u)" "$(date +%s)"\n'
)
# A persistent session (backends.linux.ssh_session): the set-up and the functions once, then each
# batch as one brace group (stdin from /dev/null: the session's stdin is the next batches) that
# numbers its bodies from the start again and removes them once sent (one rm). The host's uname
# and euid are read once; the clock field stays empty (nothing reads it).
SESSION_SETUP = _SETUP + _FUNCTIONS + "U1=$(uname -n) U2=$(uname -r) U3=$(id -u)\n"
# The records after U and the bodies go to a file sent whole at the end (one cat; the bodies
# removed before it): one write per record straight to ssh was ~70 packets a probe, each a
# wake-up of ssh and of raidman (its Python CPU per probe 2.6 -> 1.5 ms on loopback).
_SESSION_HEAD = '{\ni=100000\nH U "$U1" "$U2" "$U3" ""\n{\n'
# The end of every script: the bodies (file texts, link targets, command output) in the order the
# records above asked for them — their sizes (one wc) and then their bytes (one cat): one process
# per file read instead of three.
_SEND_BODIES = r"""
H Z
set -- "$T"/b/*
if [ -e "$1" ]; then wc -c -- "$@"; H ""; cat -- "$@"
else H ""; fi
H E
"""
_BODIES = _SEND_BODIES + "exit 0\n"
# a session's batch: its records into a file, the bodies removed, then the file sent whole
_SESSION_BODIES = (
    _SEND_BODIES
    + """} > "$T/r"
[ -e "$1" ] && rm -f -- "$@"
cat -- "$T/r"
} < /dev/null
"""
)


def _glob_re(globs: Iterable[str]) -> re.Pattern[str]:
    """Paths a set of globs names (``*`` does not cross ``/``, as in sh)."""
    parts = [re.escape(g).replace(r"\*", "[^/]*") for g in globs]
    return re.compile("^(?:" + "|".join(parts) + r")\Z" if parts else "(?!)")


def _q(s: str) -> str:
    if "\0" in s:
        raise ValueError("a NUL byte cannot be passed to a remote program")
    return shlex.quote(s)


def _glob(pattern: str) -> str:
    if not _GLOB_OK.fullmatch(pattern):
        raise ValueError(f"not a glob raidman sends: {pattern!r}")
    return pattern


def _command_line(argv: Sequence[str], stdin: str | None, timeout: float | None) -> str:
    to = str(max(1, int(timeout))) if timeout else "0"  # timeout 0: no limit (a plan's step)
    si = "n" if stdin is None else _q("i" + stdin)  # n: no stdin; i<text>: this text
    return f"c {to} {si} " + " ".join(_q(a) for a in argv)


# Commands the probe or the audit runs only on some machines: the batch runs them on the same
# condition (a guess that is wrong costs one more round trip, never a wrong answer).
_WHEN = {
    # backends.linux.probe: lvm only when lsblk shows an LVM2_member or lsblk failed
    "lvm": '[ -n "$Lvm" ]',
    # app.rules.inputs: mdadm --detail --scan, mdmonitor only with md arrays
    "md": '[ -n "$MD" ]',
}


def _per_disk(argv: Sequence[str]) -> str:
    """An argv with ``{disk}`` standing for each whole disk's kernel name (``$d`` remotely)."""
    parts = []
    for a in argv:
        if "{disk}" in a:
            pre, post = a.split("{disk}", 1)
            parts.append(f'{_q(pre) if pre else ""}"$d"{_q(post) if post else ""}')
        else:
            parts.append(_q(a))
    return " ".join(parts)


@dataclass
class BatchSpec:
    """What one round trip reads and runs."""

    files: tuple[str, ...] = ()
    file_globs: tuple[str, ...] = ()
    dir_globs: tuple[str, ...] = ()
    link_globs: tuple[str, ...] = ()
    # (argv, stdin, timeout, when): when "" always, else a key of _WHEN
    commands: tuple[tuple[tuple[str, ...], str | None, float | None, str], ...] = ()
    udev_md: bool = False
    fs_info: bool = False
    per_disk: tuple[tuple[str, ...], ...] = ()
    per_disk_timeout: float = 60.0
    extra: list[str] = field(default_factory=list)

    def script(self) -> str:
        """The whole script of one ``ssh HOST sh -s`` run (it exits at the end)."""
        return "\n".join([_PRELUDE, *self._lines(), _BODIES])

    def session_script(self) -> str:
        """This batch for a session that has run ``SESSION_SETUP`` (the shell waits for more)."""
        return "\n".join([_SESSION_HEAD, *self._lines(), _SESSION_BODIES])

    def _lines(self) -> list[str]:
        out: list[str] = []
        for f in self.files:
            out.append(f"rf {_q(f)}")
        for g in self.file_globs:
            # sysfs attributes: read by the shell itself (rk), not one cat each
            # (2> /dev/null: the shell's own word on a file it cannot open; rf tells why)
            out.append(f'for f in {_glob(g)}; do [ -f "$f" ] && rk "$f"; done 2> /dev/null')
        for g in self.dir_globs:
            if "*" in g:
                out.append(f'for f in {_glob(g)}; do [ -d "$f" ] && ld "$f"; done')
            else:
                out.append(f"ld {_q(g)}")
        if self.link_globs:
            # every link of every glob in one readlink (rla)
            out.append("rla " + " ".join(_glob(g) for g in self.link_globs))
        if self.udev_md:
            out.append(
                'for m in /sys/block/md*; do [ -r "$m/dev" ] || continue; '
                'read -r dv < "$m/dev" && rk "/run/udev/data/b$dv"; done 2> /dev/null'
            )
        if any(w == "md" for *_, w in self.commands):
            out.append('MD=; for m in /sys/block/md*; do [ -e "$m" ] && MD=1; break; done')
        for argv, stdin, timeout, when in self.commands:
            line = _command_line(argv, stdin, timeout)
            out.append(f"if {_WHEN[when]}; then {line}; fi" if when in _WHEN else line)
            if when == "lsblk":
                out.append('Lvm=; if [ "$rc" != 0 ] || grep -q LVM2_member "$o"; then Lvm=1; fi')
        if self.fs_info:
            ext = "|".join(EXT_TYPES)
            # the probe's fs_info_argv: tune2fs -l /dev/KNAME, xfs_info MOUNTPOINT (or the device)
            out.append(
                # a loop fed by a file, not a pipe: a pipe's loop is a subshell, and the body
                # numbers it takes would be lost to the shell that sends the bodies
                'lsblk -rn -o KNAME,FSTYPE,MOUNTPOINT > "$T/fs" 2> /dev/null; '
                "while read -r k t m; do case $t in "
                f'{ext}) c 20 n tune2fs -l "/dev/$k";; '
                'xfs) case $m in "") c 20 n xfs_info "/dev/$k";; *\\\\*) ;; '
                '*) c 20 n xfs_info "$m";; esac;; esac; done < "$T/fs"'
            )
        if self.per_disk:
            lines = " ".join(
                f"c {int(self.per_disk_timeout)} n {_per_disk(a)};" for a in self.per_disk
            )
            out.append(
                'for b in /sys/block/*; do [ -e "$b/device" ] || continue; d=${b##*/}; '
                f"{lines} done"
            )
        out.extend(self.extra)
        return out


# ---------------------------------------------------------------- parsing the answer


class FrameError(ValueError):
    """The remote answer is not in the shape the script writes (cut off, or not ours)."""


class _Reader:
    """The answer's fields, read as the bytes come: a field not whole yet suspends the parser
    (a generator: ``yield``) until more arrive, and no byte is looked at twice (issue 37: an
    answer re-parsed whole at each chunk kept ``report --host`` at 100 % of a core for 300 s
    on a host streaming ``A\0E\0``). ``eof``: no more will come (a field cut off is then a
    FrameError)."""

    def __init__(self, data: bytearray | bytes, *, eof: bool) -> None:
        self.data = data
        self.pos = 0
        self.eof = eof

    def done(self) -> bool:
        return self.pos >= len(self.data)

    def field(self, errors: str = "surrogateescape") -> Generator[None, None, str]:
        look = self.pos
        while (end := self.data.find(b"\0", look)) < 0:
            if self.eof:
                raise FrameError("answer cut off")
            look = len(self.data)  # searched already: only what comes next
            yield
        s = bytes(self.data[self.pos : end]).decode("utf-8", errors=errors)
        self.pos = end + 1
        return s

    def number(self, limit: int = MAX_FIELDS) -> Generator[None, None, int]:
        s = yield from self.field()
        v = ascii_int(s)
        if v is None or v > limit:
            raise FrameError(f"expected a count, got {s[:20]!r}")
        return v

    def raw(self, n: int) -> Generator[None, None, str]:
        while self.pos + n > len(self.data):
            if self.eof:
                raise FrameError("answer cut off")
            yield
        b = bytes(self.data[self.pos : self.pos + n])
        self.pos += n
        return b.decode("utf-8", errors="replace")


@dataclass
class Batch:
    """The parsed answers of one round trip."""

    files: dict[str, tuple[str, str]] = field(default_factory=dict)  # path -> (status, text)
    dirs: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    links: dict[str, str | None] = field(default_factory=dict)
    commands: dict[tuple[str, ...], CommandResult] = field(default_factory=dict)
    uname: tuple[str, str] | None = None
    euid: int | None = None
    now: float | None = None
    complete: bool = False
    error: str | None = None


def _file_status(stderr: str) -> str:
    if any(
        s in stderr for s in ("No such file", "Not a directory", "Is a directory", "No such device")
    ):
        return "absent"
    if "Permission denied" in stderr or "Operation not permitted" in stderr:
        return "EACCES"
    msg = stderr.strip().splitlines()[-1] if stderr.strip() else "read failed"
    return "error: " + msg.split(": ")[-1]


def _sizes(text: str, count: int) -> list[int]:
    """Body sizes from ``wc -c`` of the script's own numbered files (never a remote name)."""
    sizes = []
    for line in text.splitlines():
        parts = line.split()
        size = ascii_int(parts[0]) if len(parts) == 2 else None
        if size is None:
            raise FrameError(f"bad size line {line[:40]!r}")
        if parts[1] != "total":
            sizes.append(size)
    if len(sizes) != count:
        raise FrameError(f"{len(sizes)} bodies for {count} answers")
    return sizes


def parse_batch(data: bytes) -> Batch:
    """Raises FrameError on an answer out of shape (the remote is untrusted as any tool output)."""
    gen = _records(_Reader(data, eof=True), whole=True)
    try:
        next(gen)
    except StopIteration as done:
        return done.value
    raise FrameError("answer cut off")  # (a reader at its end never waits)


class BatchStream:
    """:func:`parse_batch` over an answer read piece by piece into ``data`` (the caller's
    buffer): :meth:`more` after each piece is the Batch once its ``E`` record came, else None.
    Raises FrameError as soon as the answer is out of shape."""

    def __init__(self, data: bytearray) -> None:
        self._gen = _records(_Reader(data, eof=False), whole=False)

    def more(self) -> Batch | None:
        try:
            next(self._gen)
        except StopIteration as done:
            return done.value
        return None


def _records(r: _Reader, *, whole: bool) -> Generator[None, None, Batch]:
    """The records of an answer; ``whole``: the answer is all there (parse to its end), else
    the batch is returned at its ``E`` record (a session's shell then waits for the next)."""
    b = Batch()
    # what to do with each body, in the order the script numbered them
    takers: list[Callable[[str], None]] = []

    def file_taker(path: str, ok: bool) -> Callable[[str], None]:
        def take(text: str) -> None:
            b.files[path] = ("ok", text) if ok else (_file_status(text), "")

        return take

    def link_taker(path: str) -> Callable[[str], None]:
        def take(text: str) -> None:
            b.links[path] = text.rstrip("\n") or None

        return take

    def links_taker(paths: list[str]) -> Callable[[str], None]:
        def take(text: str) -> None:
            # readlink -z: one NUL-terminated target per path, in order
            targets = text.split("\0")
            if len(targets) != len(paths) + 1 or targets[-1] != "":
                raise FrameError(f"{len(targets) - 1} link targets for {len(paths)} links")
            for path, target in zip(paths, targets, strict=False):
                b.links[path] = target or None

        return take

    def command_taker(argv: tuple[str, ...], rc: int) -> list[Callable[[str], None]]:
        got: list[str] = []

        def out(text: str) -> None:
            got.append(text)

        def err(text: str) -> None:
            b.commands[argv] = CommandResult(argv, rc, got[0], text, 0.0)

        return [out, err]

    while not (whole and r.done()):
        kind = yield from r.field()
        if kind == "F":
            path = yield from r.field()
            status = yield from r.field()
            takers.append(file_taker(path, status == "ok"))
        elif kind == "L":
            path = yield from r.field()
            status = yield from r.field()
            names: list[str] = []
            if status == "ok":
                while (n := (yield from r.field())) != "":
                    names.append(n)
            else:
                yield from r.field()
            b.dirs[path] = (status, tuple(sorted(names)))
        elif kind == "R":
            path = yield from r.field()
            status = yield from r.field()
            if status == "ok":
                takers.append(link_taker(path))
            else:
                b.links[path] = None
        elif kind == "A":
            # a file whose directory could be searched and that is not there (no cat for it)
            b.files[(yield from r.field())] = ("absent", "")
        elif kind == "K":
            # a small file's text inline (the shell's own read: never empty, never a NUL)
            path = yield from r.field()
            b.files[path] = ("ok", (yield from r.field(errors="replace")))
        elif kind == "M":
            count = yield from r.number()
            targets: list[str] = []
            for _ in range(count):
                targets.append((yield from r.field()))
            takers.append(links_taker(targets))
        elif kind == "C":
            argc = yield from r.number()
            words: list[str] = []
            for _ in range(argc):
                words.append((yield from r.field()))
            argv = tuple(words)
            rc_text = yield from r.field()
            rc = ascii_int(rc_text)
            if rc is None or rc > 255:
                raise FrameError(f"bad exit status {rc_text[:20]!r}")
            takers.extend(command_taker(argv, rc))
        elif kind == "U":
            node = yield from r.field()
            release = yield from r.field()
            euid = yield from r.field()
            now = yield from r.field()
            b.uname = (node, release)
            b.euid = ascii_int(euid)
            t = ascii_int(now)
            b.now = float(t) if t is not None else None
        elif kind == "X":
            b.error = yield from r.field()
        elif kind == "Z":
            sizes = _sizes((yield from r.field()), len(takers))
            for size, take in zip(sizes, takers, strict=True):
                take((yield from r.raw(size)))
            takers = []
        elif kind == "E":
            if takers:
                raise FrameError("answers without their bodies")
            b.complete = True
            if not whole:
                return b
        else:
            raise FrameError(f"unknown record {kind[:10]!r}")
    return b
