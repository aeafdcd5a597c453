"""The Linux backend on another machine, through the system ``ssh`` — nothing to install there.

``SshSource`` is a ``Source`` (``backends.linux.source``) whose answers come from a host reached
with ``ssh``: BatchMode (never a password prompt), a ControlMaster socket in a private directory
(one TCP/SSH handshake per ControlPersist period) and ConnectTimeout/ServerAlive limits, so an
unreachable host or one that drops is a note after a timeout, never a hang. The batches go to
ONE long-lived ``ssh HOST sh -s`` per host (``backends.linux.ssh_session``: not an ssh client
started per probe and per sample, issue 29); a batch that finds it busy for SESSION_WAIT_S (a
long plan step) is an ssh run of its own through the ControlMaster, and a session that never
answered its first batch leaves the batches to one run each for SESSION_RETRY_S (the fallback:
what every batch did before).

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

The script and the framing of its answer are ``backends.linux.ssh_batch``; the ssh run itself is
``backends.linux.ssh_transport``. Every argument that reaches the remote shell is
``shlex.quote``d; the globs are our own constants. Records carry the exact path/argv they answer, so the cache cannot
answer one question with another's reply.
"""

from __future__ import annotations

import contextlib
import os
import re
import stat
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from app.model.live import DiskIO
from backends.base import CommandResult
from backends.linux.io import parse_diskstats
from backends.linux.source import NOT_FOUND, TIMED_OUT, _note_source, _Notes
from backends.linux.ssh_batch import (
    SESSION_SETUP,
    Batch,
    BatchSpec,
    FrameError,
    _command_line,
    _glob_re,
    _q,
    parse_batch,
)
from backends.linux.ssh_config import CheckedSshConfig, check_ssh, load_ssh_config
from backends.linux.ssh_session import SshSession
from backends.linux.ssh_transport import SshRun, run_ssh

CONNECT_TIMEOUT = 8.0
# after ConnectTimeout, how long the key exchange, the login and the remote shell's first record
# (its uname, written before any work) may take: a host silent past this is unreachable
FIRST_ANSWER_GRACE_S = 10.0
# the whole batch (lsblk, lvm, smartctl per disk...) must answer within this; a drop is noticed by
# ServerAliveInterval × ServerAliveCountMax before it
BATCH_TIMEOUT = 300.0
CONTROL_PERSIST = 60
# a batch waits this long for the host's session (another batch on it) before an ssh run of its own
SESSION_WAIT_S = 1.0
# a session that did not answer its first batch: one ssh run per batch for this long, then again
SESSION_RETRY_S = 300.0
UNREACHABLE = 255
# One round trip's answer: a probe of 5,000 disks is ~10 MB; more is refused, not held.
MAX_ANSWER_BYTES = 64 * 1024 * 1024

# a host as ssh_config knows it: alias, user@host, host:port is not ssh syntax (use the config)
_HOST_OK = re.compile(
    r"[A-Za-z0-9_][A-Za-z0-9_.@%+\[\]:-]{0,252}"
)  # fullmatch: no trailing newline

# programs whose run changes nothing: running them does not make the prefetched answers stale
READ_ONLY_PROGRAMS = frozenset(
    {
        "lsblk",
        "smartctl",
        "tune2fs",
        "xfs_info",
        "blkid",
        "cat",
        "logger",
        "uname",
        "journalctl",
        "dmesg",
    }
)


def changes_nothing(args: Sequence[str]) -> bool:
    """A read: not one that starts something (``smartctl -t`` starts a self-test)."""
    if tuple(args[:2]) == ("dmsetup", "status"):
        return True  # the raid LVs' part of each sample (backends.linux.dm_raid)
    return args[0] in READ_ONLY_PROGRAMS and not (args[0] == "smartctl" and "-t" in args)


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
SAMPLE_FILES = ("/proc/mdstat", "/proc/diskstats", "/proc/sys/dev/raid/speed_limit_min")
SAMPLE_FILE_GLOBS = ("/sys/block/md*/md/*", "/sys/block/md*/md/dev-*/*", "/sys/block/md*/size")
SAMPLE_DIR_GLOBS = ("/sys/block", "/sys/block/md*/md")


def _start_failure(e: Exception) -> SshRun:
    if isinstance(e, FileNotFoundError):
        why = "ssh: program not found (install openssh-client)"
    elif isinstance(e, OSError):
        why = f"ssh: {e.strerror or e}"
    else:
        why = str(e)
    return SshRun(None, b"", b"", why)


class HostNameError(ValueError):
    """A host name that must not reach ssh's command line."""


def check_host_name(name: str) -> str:
    """``name`` if it can only be read as a host by ssh (no option, no space, no control)."""
    if not isinstance(name, str) or not _HOST_OK.fullmatch(name):
        raise HostNameError(f"not a host name: {name!r}")
    return name


def _no_one_else_above(d: Path) -> None:
    """Every directory above ``d`` is root's or ours, and no one else can rename what is in it
    (not group/other-writable, or sticky as /tmp is): no other user can swap ``d`` and the
    sockets in it for theirs after it was checked (OpenSSH's own rule for a path it trusts,
    safe_path in misc.c). ``d``'s parent is resolved already: no symlink above."""
    euid = os.geteuid()
    for p in d.parents:
        st = p.stat()
        if st.st_uid not in (0, euid) or (st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX):
            raise OSError(f"{p} can be changed by another user: not used for ssh sockets")


def control_dir() -> Path:
    """A directory only we can use for the ControlMaster sockets (created 0700, not a symlink,
    ours, in directories no other user can change). ``$RAIDMAN_SSH_CONTROL_DIR`` overrides
    (socket paths must stay under ~100 bytes)."""
    env = os.environ.get("RAIDMAN_SSH_CONTROL_DIR")
    if env:
        d = Path(os.path.realpath(Path(env).parent)) / Path(env).name
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
    _no_one_else_above(Path(os.path.realpath(d.parent)) / d.name)
    return d


@dataclass(frozen=True)
class SshTarget:
    """How to reach one host: the name ssh knows and the options raidman adds. ``ssh_config``
    (hosts.toml's) as read and checked when hosts.toml was (``checked_config``; read here at
    each start when not given): ssh gets a private copy (backends.linux.ssh_config)."""

    host: str
    ssh_config: str | None = None
    checked_config: CheckedSshConfig | None = field(default=None, compare=False, repr=False)
    connect_timeout: float = CONNECT_TIMEOUT
    batch_timeout: float = BATCH_TIMEOUT
    control_dir: str | None = None
    # one long-lived session answers the batches (ssh_session); False: one ssh run each
    persistent: bool = True

    def argv(self, remote_command: str = "sh -s") -> list[str]:
        check_host_name(self.host)
        cdir = self.control_dir or str(control_dir())
        check_ssh()  # found on PATH: root's or ours along its whole path
        argv = ["ssh"]
        if self.ssh_config:
            checked = self.checked_config or load_ssh_config(self.ssh_config)
            argv += ["-F", checked.use(cdir)]  # the private copy, programs checked again
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
        self._session: SshSession | None = None
        self._session_lock = threading.Lock()
        self._session_off_until = 0.0

    def close(self) -> None:
        """End the host's session (if any); a later batch starts a new one."""
        with self._session_lock:
            if self._session is not None:
                self._session.close()

    @property
    def ssh_started(self) -> int:
        """ssh processes the session started (one-shot runs not counted)."""
        return self._session.started if self._session is not None else 0

    @property
    def host(self) -> str:
        return self.target.host

    # ---- transport

    def _round_trip(self, spec: BatchSpec, timeout: float | None) -> Batch:
        """One batch, through the host's session (``ssh_session``) when it can have it, else
        one ssh run of its own. A failure is a Batch with ``error`` set."""
        self.round_trips += 1
        use_session = self.target.persistent and time.monotonic() >= self._session_off_until
        if use_session and self._session_lock.acquire(timeout=SESSION_WAIT_S):
            try:
                return self._session_trip(spec, timeout)
            finally:
                self._session_lock.release()
        return self._one_shot(spec, timeout)

    def _session_trip(self, spec: BatchSpec, timeout: float | None) -> Batch:
        try:
            if self._session is None:
                self._session = SshSession(
                    self.target.argv, host=self.host, max_bytes=MAX_ANSWER_BYTES
                )
            session = self._session
            script = spec.session_script().encode()
            p, parsed = session.run(
                SESSION_SETUP.encode(),
                script,
                first_answer_s=self.target.connect_timeout + FIRST_ANSWER_GRACE_S,
                timeout=timeout,
            )
        except (OSError, ValueError) as e:
            p, parsed, session = _start_failure(e), None, None
        if parsed is not None:
            return parsed
        if session is None or session.answered == 0:
            # never answered a batch: the next ones go one ssh run each (today's way) for a while
            self._session_off_until = time.monotonic() + SESSION_RETRY_S
        return self._batch_of(p)

    def _one_shot(self, spec: BatchSpec, timeout: float | None) -> Batch:
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
        except OSError as e:
            p = _start_failure(e)
        return self._batch_of(p)

    def _batch_of(self, p: SshRun) -> Batch:
        """The answer of a run that did not come whole through a session."""
        if p.error is not None:
            return Batch(error=p.error)
        try:
            b = parse_batch(p.stdout)
        except FrameError as e:
            b = Batch(error=f"answer out of shape: {e}")
        if not b.complete and b.error is None:
            err = p.stderr.decode(errors="replace").strip().splitlines()
            msg = err[-1] if err else f"ssh exit {p.returncode}"
            # ssh's 255 is its own failure to reach the host, unless the host answered (U)
            reached = p.returncode != UNREACHABLE or b.uname is not None
            b.error = f"answer cut off: {msg}" if reached else msg
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
        from backends.linux.dm_raid import DMSETUP_RAID_ARGV, LVS_SUB_ARGV
        from backends.linux.dm_raid import TIMEOUT as DM_RAID_TIMEOUT
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
                (LVS_SUB_ARGV, None, DM_RAID_TIMEOUT, "lvm"),
                (DMSETUP_RAID_ARGV, None, DM_RAID_TIMEOUT, "lvm"),
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
        if not changes_nothing(args):
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
