"""The Linux backend on another machine, through the system ``ssh`` — nothing to install there.

``SshSource`` is a ``Source`` (``backends.linux.source``) whose answers come from a host reached
with ``ssh``: BatchMode (never a password prompt), a ControlMaster socket in a private directory
(one TCP/SSH handshake per ControlPersist period) and ConnectTimeout/ServerAlive limits, so an
unreachable host or one that drops is a note after a timeout, never a hang.

One probe is ONE round trip: ``prefetch()`` sends a POSIX ``sh`` script on ssh's stdin (the remote
command is only ``sh -s``) that reads every file the probe reads (globs expanded remotely), lists
the directories, reads the links and runs the commands (lsblk, lvm fullreport, tune2fs/xfs_info per
filesystem, smartctl per disk), and frames each answer as a record of NUL-terminated fields
(``parse_batch``); the bodies (file texts, link targets, command output) are kept in numbered
files on the remote and sent at the end, after their sizes (one ``wc -c``), so a file read costs
one process there. The globbed sysfs attributes (most of a probe's reads: ~60 on a small machine,
hundreds with md arrays) cost none: the shell reads them itself (``rk``, sent inline as a ``K``
record; an empty or unreadable one still goes through ``cat`` for its exact status; a file not
there in a directory we can search is an ``A`` record, without one), and every
link of the link globs is read by one ``readlink -z`` (``M``; one ``readlink`` each where -z is
unknown, as in busybox). Processes, not bytes, are what a probe costs the remote: ~27 a probe
instead of ~100 on a small machine (``benchmarks/bench_hosts.py``). The answers are kept until
the next prefetch; anything the batch did not foresee is fetched with a batch of one (counted in
``round_trips``), and a command that is not known to be read-only (a plan's step) forgets them,
since it may change what they said.

Every argument that reaches the remote shell is ``shlex.quote``d; the globs are our own constants
(checked against ``_GLOB_OK``). Records carry the exact path/argv they answer, so the cache cannot
answer one question with another's reply.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import stat
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.model.live import DiskIO
from app.parsers.fsinfo import EXT_TYPES
from app.parsers.safe import ascii_int
from backends.base import CommandResult
from backends.linux.io import parse_diskstats
from backends.linux.source import NOT_FOUND, TIMED_OUT, _note_source, _Notes
from backends.linux.ssh_transport import run_ssh

CONNECT_TIMEOUT = 8.0
# after ConnectTimeout, how long the key exchange, the login and the remote shell's first record
# (its uname, written before any work) may take: a host silent past this is unreachable
FIRST_ANSWER_GRACE_S = 10.0
# the whole batch (lsblk, lvm, smartctl per disk...) must answer within this; a drop is noticed by
# ServerAliveInterval × ServerAliveCountMax before it
BATCH_TIMEOUT = 300.0
CONTROL_PERSIST = 60
UNREACHABLE = 255
# One round trip's answer: a probe of 5,000 disks is ~10 MB; more is refused, not held.
MAX_ANSWER_BYTES = 64 * 1024 * 1024
MAX_FIELDS = 1_000_000  # argv words or link names in one record

# a host as ssh_config knows it: alias, user@host, host:port is not ssh syntax (use the config)
_HOST_OK = re.compile(
    r"[A-Za-z0-9_][A-Za-z0-9_.@%+\[\]:-]{0,252}"
)  # fullmatch: no trailing newline
_GLOB_OK = re.compile(r"/[A-Za-z0-9/_.*:-]+")

# programs whose run changes nothing: running them does not make the prefetched answers stale
READ_ONLY_PROGRAMS = frozenset(
    {"lsblk", "smartctl", "tune2fs", "xfs_info", "blkid", "cat", "logger", "uname"}
)

# What a probe reads (backends.linux.probe, .md, .usage), as files, globs, listings and links.
PROBE_FILES = ("/proc/mdstat", "/proc/self/mountinfo", "/proc/swaps", "/proc/diskstats")
PROBE_FILE_GLOBS = (
    "/sys/block/*/dev",
    "/sys/block/*/size",
    "/sys/block/md*/md/*",
    "/sys/block/md*/md/dev-*/*",
    "/sys/block/dm-*/dm/name",
    "/sys/block/dm-*/dm/uuid",
    "/sys/class/block/*/dev",
    # the audit's (app.rules.inputs)
    "/sys/block/*/queue/scheduler",
    "/sys/block/*/device/queue_depth",
    "/sys/block/*/queue/write_cache",
    "/sys/block/*/queue/discard_max_bytes",
)
PROBE_DIR_GLOBS = (
    "/sys/block",
    "/sys/block/*",
    "/sys/block/*/holders",
    "/sys/block/*/*/holders",
    "/sys/block/*/slaves",
    "/sys/block/md*/md",
    "/dev/md",
)
PROBE_LINK_GLOBS = ("/dev/md/*", "/sys/dev/block/*", "/dev/mapper/*", "/dev/disk/by-uuid/*")
# a poll (sample): md state and the I/O counters only
SAMPLE_FILES = ("/proc/mdstat", "/proc/diskstats")
SAMPLE_FILE_GLOBS = ("/sys/block/md*/md/*", "/sys/block/md*/md/dev-*/*", "/sys/block/md*/size")
SAMPLE_DIR_GLOBS = ("/sys/block", "/sys/block/md*/md")


class HostNameError(ValueError):
    """A host name that must not reach ssh's command line."""


def check_host_name(name: str) -> str:
    """``name`` if it can only be read as a host by ssh (no option, no space, no control)."""
    if not isinstance(name, str) or not _HOST_OK.fullmatch(name):
        raise HostNameError(f"not a host name: {name!r}")
    return name


def control_dir() -> Path:
    """A directory only we can use for the ControlMaster sockets (created 0700, not a symlink,
    ours). ``$RAIDMAN_SSH_CONTROL_DIR`` overrides (socket paths must stay under ~100 bytes)."""
    env = os.environ.get("RAIDMAN_SSH_CONTROL_DIR")
    if env:
        d = Path(env)
        with contextlib.suppress(FileExistsError):
            d.mkdir(mode=0o700)
    else:
        base = os.environ.get("XDG_RUNTIME_DIR") or f"/tmp/raidman-{os.geteuid()}"
        d = Path(base) / "raidman-ssh"
        for p in (d.parent, d):
            with contextlib.suppress(FileExistsError):
                p.mkdir(mode=0o700)
        # a directory someone else made (in /tmp) or can write to could swap the socket under us
        st = d.parent.lstat()
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise OSError(f"{d.parent} is not a directory of ours: not used for ssh sockets")
    st = d.lstat()
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise OSError(f"{d} is not a private directory of ours: not used for ssh sockets")
    return d


@dataclass(frozen=True)
class SshTarget:
    """How to reach one host: the name ssh knows and the options raidman adds."""

    host: str
    ssh_config: str | None = None
    connect_timeout: float = CONNECT_TIMEOUT
    batch_timeout: float = BATCH_TIMEOUT
    control_dir: str | None = None

    def argv(self, remote_command: str = "sh -s") -> list[str]:
        check_host_name(self.host)
        cdir = self.control_dir or str(control_dir())
        argv = ["ssh"]
        if self.ssh_config:
            argv += ["-F", self.ssh_config]
        for opt in (
            "BatchMode=yes",
            "ControlMaster=auto",
            f"ControlPath={cdir}/%C",
            f"ControlPersist={CONTROL_PERSIST}",
            f"ConnectTimeout={max(1, int(self.connect_timeout))}",
            "ServerAliveInterval=5",
            "ServerAliveCountMax=3",
            "LogLevel=ERROR",
        ):
            argv += ["-o", opt]
        return [*argv, "-T", "--", self.host, remote_command]


# ---------------------------------------------------------------- the remote script

_PRELUDE = r"""
export LC_ALL=C LVM_SUPPRESS_FD_WARNINGS=1
umask 077
T=$(mktemp -d 2>/dev/null) && mkdir "$T/b" || { printf 'X\0mktemp failed on the remote\0'; exit 0; }
trap 'rm -rf "$T"' EXIT
i=100000
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
H U "$(uname -n)" "$(uname -r)" "$(id -u)" "$(date +%s)"
"""
# The end of every script: the bodies (file texts, link targets, command output) in the order the
# records above asked for them — their sizes (one wc) and then their bytes (one cat): one process
# per file read instead of three.
_BODIES = r"""
H Z
set -- "$T"/b/*
if [ -e "$1" ]; then wc -c -- "$@"; H ""; cat -- "$@"
else H ""; fi
H E
exit 0
"""


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
        out = [_PRELUDE]
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
        out.append(_BODIES)
        return "\n".join(out)


# ---------------------------------------------------------------- parsing the answer


class FrameError(ValueError):
    """The remote answer is not in the shape the script writes (cut off, or not ours)."""


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def done(self) -> bool:
        return self.pos >= len(self.data)

    def field(self, errors: str = "surrogateescape") -> str:
        end = self.data.find(b"\0", self.pos)
        if end < 0:
            raise FrameError("answer cut off")
        s = self.data[self.pos : end].decode("utf-8", errors=errors)
        self.pos = end + 1
        return s

    def number(self, limit: int = MAX_FIELDS) -> int:
        s = self.field()
        v = ascii_int(s)
        if v is None or v > limit:
            raise FrameError(f"expected a count, got {s[:20]!r}")
        return v

    def raw(self, n: int) -> str:
        if self.pos + n > len(self.data):
            raise FrameError("answer cut off")
        b = self.data[self.pos : self.pos + n]
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
    r = _Reader(data)
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

    while not r.done():
        kind = r.field()
        if kind == "F":
            path, status = r.field(), r.field()
            takers.append(file_taker(path, status == "ok"))
        elif kind == "L":
            path, status = r.field(), r.field()
            names: list[str] = []
            if status == "ok":
                while (n := r.field()) != "":
                    names.append(n)
            else:
                r.field()
            b.dirs[path] = (status, tuple(sorted(names)))
        elif kind == "R":
            path, status = r.field(), r.field()
            if status == "ok":
                takers.append(link_taker(path))
            else:
                b.links[path] = None
        elif kind == "A":
            # a file whose directory could be searched and that is not there (no cat for it)
            b.files[r.field()] = ("absent", "")
        elif kind == "K":
            # a small file's text inline (the shell's own read: never empty, never a NUL)
            path = r.field()
            b.files[path] = ("ok", r.field(errors="replace"))
        elif kind == "M":
            count = r.number()
            takers.append(links_taker([r.field() for _ in range(count)]))
        elif kind == "C":
            argc = r.number()
            argv = tuple(r.field() for _ in range(argc))
            rc_text = r.field()
            rc = ascii_int(rc_text)
            if rc is None or rc > 255:
                raise FrameError(f"bad exit status {rc_text[:20]!r}")
            takers.extend(command_taker(argv, rc))
        elif kind == "U":
            node, release, euid, now = r.field(), r.field(), r.field(), r.field()
            b.uname = (node, release)
            b.euid = ascii_int(euid)
            t = ascii_int(now)
            b.now = float(t) if t is not None else None
        elif kind == "X":
            b.error = r.field()
        elif kind == "Z":
            for size, take in zip(_sizes(r.field(), len(takers)), takers, strict=True):
                take(r.raw(size))
            takers = []
        elif kind == "E":
            if takers:
                raise FrameError("answers without their bodies")
            b.complete = True
        else:
            raise FrameError(f"unknown record {kind[:10]!r}")
    return b


# ---------------------------------------------------------------- the source


class SshSource(_Notes):
    """A ``Source`` answering from ``target`` over ssh (see module doc)."""

    def __init__(self, target: SshTarget, *, smart: bool = True) -> None:
        super().__init__()
        self.target = target
        self.smart = smart
        self.round_trips = 0
        self.unreachable: str | None = None
        self._batch = Batch()
        self._covers: tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str]] | None = None
        self._meta: tuple[tuple[str, str], int, float] | None = None
        self.last_read_status = "ok"

    @property
    def host(self) -> str:
        return self.target.host

    # ---- transport

    def _round_trip(self, spec: BatchSpec, timeout: float | None) -> Batch:
        """One ssh run of ``spec``'s script. A failure is a Batch with ``error`` set."""
        self.round_trips += 1
        try:
            argv = self.target.argv()
            script = spec.script()
        except (OSError, ValueError) as e:
            return Batch(error=str(e))
        try:
            p = run_ssh(
                argv,
                script.encode(),
                first_answer_s=self.target.connect_timeout + FIRST_ANSWER_GRACE_S,
                timeout=timeout,
                host=self.host,
                max_bytes=MAX_ANSWER_BYTES,
            )
        except FileNotFoundError:
            return Batch(error="ssh: program not found (install openssh-client)")
        except OSError as e:
            return Batch(error=f"ssh: {e.strerror or e}")
        if p.error is not None:
            return Batch(error=p.error)
        try:
            b = parse_batch(p.stdout)
        except FrameError as e:
            b = Batch(error=f"answer out of shape: {e}")
        if not b.complete and b.error is None:
            err = p.stderr.decode(errors="replace").strip().splitlines()
            msg = err[-1] if err else f"ssh exit {p.returncode}"
            b.error = msg if p.returncode == UNREACHABLE else f"answer cut off: {msg}"
        return b

    def _fetch(self, spec: BatchSpec, timeout: float | None = 0) -> Batch:
        """``timeout`` 0: the batch timeout; None: none (ServerAlive still notices a drop)."""
        if self.unreachable is not None:
            return Batch(error=self.unreachable)
        b = self._round_trip(spec, self.target.batch_timeout if timeout == 0 else timeout)
        if b.error is not None and not b.complete:
            self.unreachable = b.error
            self._note("ssh", f"{self.host}: {b.error}", "error")
        if b.uname is not None and b.euid is not None:
            self._meta = (b.uname, b.euid, b.now or time.time())
        return b

    def probe_spec(self) -> BatchSpec:
        from app.parsers.lsblk import LSBLK_COLUMNS
        from app.rules.inputs import (
            LVM_CONF,
            LVMCONFIG_ARGV,
            MDADM_CONF_PATHS,
            MDADM_SCAN_ARGV,
            MDMONITOR_ARGV,
            audit_argvs,
        )

        audit_when = {LVMCONFIG_ARGV: "lvm", MDADM_SCAN_ARGV: "md", MDMONITOR_ARGV: "md"}
        from backends.linux.probe import LSBLK_TIMEOUT, LVM_FULLREPORT_ARGV, LVM_TIMEOUT, lsblk_argv

        per_disk: tuple[tuple[str, ...], ...] = ()
        if self.smart:
            from backends.linux.smart import smartctl_argvs

            per_disk = tuple(smartctl_argvs("{disk}"))
        return BatchSpec(
            file_globs=PROBE_FILE_GLOBS,
            dir_globs=PROBE_DIR_GLOBS,
            link_globs=PROBE_LINK_GLOBS,
            files=PROBE_FILES + MDADM_CONF_PATHS + (LVM_CONF, "/etc/fstab", "/etc/crypttab"),
            commands=(
                (lsblk_argv(LSBLK_COLUMNS), None, LSBLK_TIMEOUT, "lsblk"),
                (LVM_FULLREPORT_ARGV, None, LVM_TIMEOUT, "lvm"),
                *((a, None, 20.0, audit_when.get(a, "")) for a in audit_argvs()),
            ),
            udev_md=True,
            fs_info=True,
            per_disk=per_disk,
        )

    def prefetch(self, kind: str = "probe") -> None:
        """One round trip that answers a whole probe (or, ``kind="sample"``, a poll). A host that
        was unreachable is tried again here (and only here)."""
        self.unreachable = None
        spec = (
            self.probe_spec()
            if kind == "probe"
            else BatchSpec(
                files=SAMPLE_FILES, file_globs=SAMPLE_FILE_GLOBS, dir_globs=SAMPLE_DIR_GLOBS
            )
        )
        self._batch = self._fetch(spec)
        # what the batch's globs name and it did not list is absent (not one more round trip)
        self._covers = (
            (_glob_re(spec.file_globs), _glob_re(spec.dir_globs), _glob_re(spec.link_globs))
            if self._batch.complete
            else None
        )

    def _covered(self, kind: int, path: str) -> bool:
        return self._covers is not None and bool(self._covers[kind].match(path))

    # ---- Source

    def read_text(self, path: str) -> str | None:
        got = self._batch.files.get(path)
        if got is None and self._covered(0, path):
            got = ("absent", "")
        if got is None and path not in self._batch.files:
            b = self._fetch(BatchSpec(files=(path,)))
            self._batch.files.update(b.files)
            got = b.files.get(path)
        if got is None:
            self.last_read_status = "absent" if self.unreachable is None else "error: unreachable"
            return None
        status, text = got
        self.last_read_status = status
        if status == "ok":
            return text
        if status == "EACCES":
            self._note(_note_source(path), f"permission denied reading {path}")
        elif status.startswith("error: "):
            self._note(_note_source(path), f"cannot read {path}: {status[7:]}")
        return None

    def listdir(self, path: str) -> tuple[str, ...]:
        got = self._batch.dirs.get(path)
        if got is None and self._covered(1, path):
            got = ("absent", ())
        if got is None:
            b = self._fetch(BatchSpec(extra=[f"ld {_q(path)}"]))
            self._batch.dirs.update(b.dirs)
            got = b.dirs.get(path)
        if got is None:
            return ()
        status, names = got
        if status == "EACCES":
            self._note(_note_source(path), f"permission denied listing {path}")
        return names

    def readlink(self, path: str) -> str | None:
        if path in self._batch.links:
            return self._batch.links[path]
        if self._covered(2, path):
            return None
        b = self._fetch(BatchSpec(extra=[f"rl {_q(path)}"]))
        self._batch.links.update(b.links)
        return b.links.get(path)

    def run(
        self, argv: Sequence[str], stdin: str | None = None, timeout: float | None = None
    ) -> CommandResult:
        args = tuple(str(a) for a in argv)
        if not args:
            return CommandResult(args, NOT_FOUND, "", "empty command")
        cached = self._batch.commands.get(args)
        if cached is not None and stdin is None:
            return cached
        if self.unreachable is not None:
            return CommandResult(args, UNREACHABLE, "", f"{self.host}: {self.unreachable}")
        t0 = time.monotonic()
        try:
            line = _command_line(args, stdin, timeout)
        except ValueError as e:
            return CommandResult(args, 126, "", str(e))
        # no limit of our own for a step without one (mkfs of a big device); a dropped host is
        # still noticed by ssh's ServerAlive probes
        wait = timeout + self.target.connect_timeout + 10 if timeout else None
        b = self._fetch(BatchSpec(extra=[line]), timeout=wait)
        if args[0] not in READ_ONLY_PROGRAMS:
            # the machine may have changed: the answers are stale now
            self._batch, self._covers = Batch(), None
        r = b.commands.get(args)
        if r is None:
            why = b.error or "no answer"
            code = TIMED_OUT if "within" in why else UNREACHABLE
            return CommandResult(args, code, "", f"{self.host}: {why}", time.monotonic() - t0)
        return CommandResult(args, r.returncode, r.stdout, r.stderr, time.monotonic() - t0)

    def disk_io(self) -> tuple[DiskIO, ...]:
        text = self.read_text("/proc/diskstats")
        return parse_diskstats(text) if text else ()

    def _ensure_meta(self) -> tuple[tuple[str, str], int, float]:
        if self._meta is None:
            self._fetch(BatchSpec())
        if self._meta is None:
            return (self.host, "?"), -1, time.time()
        return self._meta

    def uname(self) -> tuple[str, str]:
        return self._ensure_meta()[0]

    def euid(self) -> int:
        return self._ensure_meta()[1]

    def now(self) -> float:
        return time.time()
