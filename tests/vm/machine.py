"""The host side of the real-kernel harness: boot a QEMU guest with virtme-ng, talk to its agent.

One :class:`VM` per pytest session (see ``tests/vm/plugin.py``). The guest runs this machine's own
filesystem read-only over 9p (so it sees this repository and its venv at the same paths), a
Debian kernel with md/dm/nvme, and:

* ``nvme_count`` NVMe disks (serials ``N0``.. ``N<n-1>``, QEMU ids ``nvme0``..), each on its own
  PCIe root port so that ``device_del`` hot-unplugs it and :meth:`VM.plug_nvme` puts it back;
* one virtio-blk disk (serial ``V0``, id ``virtio0``) with ``physical_block_size=4096`` and
  ``opt_io_size=33553920`` (the USB-bridge topology);
* a virtio-serial port to the guest agent (``tests/vm/agent.py``) and a QMP socket.

Kernel names are resolved from serials in the guest (``vm.nvme["N0"] -> "nvme0n1"``): never
assume an order.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from backends.base import CommandResult

REPO = Path(__file__).resolve().parents[2]
AGENT = Path(__file__).resolve().with_name("agent.py")
GUEST_RESET = Path(__file__).resolve().with_name("guest_reset.py")
FIXTURES_VM = REPO / "tests" / "fixtures" / "vm"

MiB = 1024 * 1024


NO_FLUSH = "cache.no-flush=on"


class VMUnavailable(Exception):
    """The VM cannot be started on this machine (missing kernel, qemu, vng, ...)."""


class VMError(Exception):
    """The VM or its agent misbehaved (died, timed out, protocol error)."""


class GuestCommandError(AssertionError):
    """A checked guest command failed; the message carries its argv, exit code and output."""

    def __init__(self, result: CommandResult) -> None:
        self.result = result
        super().__init__(
            f"guest command failed (rc={result.returncode}, {result.duration_s:.2f} s): "
            f"{shlex.join(result.argv)}\n--- stdout ---\n{result.stdout[-4000:]}"
            f"\n--- stderr ---\n{result.stderr[-4000:]}"
        )


@dataclass(frozen=True)
class VMConfig:
    kernel: str
    vng: str
    qemu: str
    nvme_count: int = 6
    nvme_size: int = 256 * MiB
    virtio_size: int = 512 * MiB
    virtio_physical_block_size: int = 4096
    virtio_opt_io_size: int = 33553920
    memory: str = "1G"
    # one vCPU: under TCG a second one cost ~70 % more host CPU for the same tests (measured:
    # test_geometry + test_levels 272 s of QEMU CPU with 2 vCPUs, 160 s with 1; boot + preload
    # 63 s and 33 s) and took no less wall time
    cpus: int = 1
    kvm: bool = False
    boot_timeout: float = 600.0


def _kernel_release(kernel: str) -> str:
    name = Path(kernel).name
    return name.split("vmlinuz-", 1)[1] if "vmlinuz-" in name else ""


def find_config() -> VMConfig:
    """What this machine can boot, or :class:`VMUnavailable` saying what is missing.

    Environment: ``RAIDMAN_VM_KERNEL`` (a vmlinuz path), ``RAIDMAN_VM_KVM=1`` (use KVM),
    ``RAIDMAN_VM_MEMORY``, ``RAIDMAN_VM_CPUS``.
    """
    problems: list[str] = []
    kernel = os.environ.get("RAIDMAN_VM_KERNEL")
    if not kernel:
        candidates = sorted(Path("/boot").glob("vmlinuz-*"))
        kernel = str(candidates[-1]) if candidates else ""
    if not kernel or not Path(kernel).is_file():
        problems.append("no kernel image (/boot/vmlinuz-*: apt-get install linux-image-amd64)")
    elif not os.access(kernel, os.R_OK):
        problems.append(f"kernel image {kernel} is not readable by this user")
    else:
        rel = _kernel_release(kernel)
        if rel and not Path("/lib/modules", rel, "kernel", "drivers", "md").is_dir():
            problems.append(f"no md modules for {rel} under /lib/modules/{rel}")
    qemu = shutil.which("qemu-system-x86_64") or ""
    if not qemu:
        problems.append("qemu-system-x86_64 not found (apt-get install qemu-system-x86)")
    venv_bin = Path(sys.executable).parent
    vng = str(venv_bin / "vng") if (venv_bin / "vng").exists() else (shutil.which("vng") or "")
    if not vng:
        problems.append("vng (virtme-ng) not found (pip install virtme-ng)")
    for tool in ("mdadm", "lvm", "wipefs", "busybox"):
        if not shutil.which(tool, path=os.environ.get("PATH", "") + ":/usr/sbin:/sbin"):
            problems.append(f"{tool} not found (make vm-deps)")
    if problems:
        raise VMUnavailable("; ".join(problems))
    return VMConfig(
        kernel=kernel,
        vng=vng,
        qemu=qemu,
        kvm=os.environ.get("RAIDMAN_VM_KVM") == "1",
        memory=os.environ.get("RAIDMAN_VM_MEMORY", "1G"),
        cpus=int(os.environ.get("RAIDMAN_VM_CPUS", "1")),
    )


@dataclass
class CallRecord:
    """One agent request, for the per-test log and the latency summary."""

    op: str
    what: str
    duration_s: float
    rc: int | None = None


@dataclass
class GuestProcess:
    """A background process in the guest (``vm.spawn``)."""

    vm: VM
    pid: int
    argv: tuple[str, ...]

    def poll(self) -> dict[str, Any]:
        return self.vm.request("poll", pid=self.pid)

    def kill(self, sig: int = signal.SIGTERM) -> int | None:
        rc = self.vm.request("kill", pid=self.pid, signal=int(sig)).get("rc")
        return int(rc) if rc is not None else None

    def wait(self, timeout: float = 120.0) -> CommandResult:
        t0 = time.monotonic()
        while True:
            st = self.poll()
            if not st["running"]:
                return CommandResult(
                    self.argv, int(st["rc"]), st["stdout"], st["stderr"], time.monotonic() - t0
                )
            if time.monotonic() - t0 > timeout:
                self.kill()
                raise VMError(
                    f"guest process {shlex.join(self.argv)} still running after {timeout} s"
                )
            time.sleep(0.2)


class _Qmp:
    """A minimal QMP client over the unix socket. Events are kept in ``events``."""

    def __init__(self, path: Path) -> None:
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(30)
        self.sock.connect(str(path))
        self.file = self.sock.makefile("rwb")
        self.events: list[dict[str, Any]] = []
        self.lock = threading.Lock()
        self._read()  # greeting
        self.execute("qmp_capabilities")

    def _read(self) -> dict[str, Any]:
        line = self.file.readline()
        if not line:
            raise VMError("QMP connection closed")
        msg: dict[str, Any] = json.loads(line)
        return msg

    def execute(self, cmd: str, **arguments: Any) -> Any:
        with self.lock:
            msg: dict[str, Any] = {"execute": cmd}
            if arguments:
                msg["arguments"] = arguments
            self.file.write(json.dumps(msg).encode() + b"\n")
            self.file.flush()
            while True:
                resp = self._read()
                if "event" in resp:
                    self.events.append(resp)
                    continue
                if "error" in resp:
                    raise VMError(f"QMP {cmd} {arguments}: {resp['error']}")
                return resp.get("return")

    def wait_event(
        self, name: str, timeout: float, match: Callable[[dict[str, Any]], bool] | None = None
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                for i, ev in enumerate(self.events):
                    if ev["event"] == name and (match is None or match(ev)):
                        return self.events.pop(i)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise VMError(f"QMP event {name} not seen within {timeout} s")
                self.sock.settimeout(left)
                try:
                    ev = self._read()
                except TimeoutError:
                    continue
                finally:
                    self.sock.settimeout(30)
                if "event" in ev:
                    self.events.append(ev)

    def close(self) -> None:
        with contextlib.suppress(OSError):
            self.file.close()
            self.sock.close()


@dataclass
class VM:
    """A booted guest. Create with :meth:`VM.boot`; every method blocks until the guest answered."""

    workdir: Path
    config: VMConfig
    proc: subprocess.Popen[bytes] | None = None
    boot_s: float = 0.0
    boot_cpu_s: float = 0.0  # host CPU seconds of QEMU (and vng) until the guest was ready
    ready_at: float = 0.0  # time.monotonic() when the guest was ready (booted + preloaded)
    calls: list[CallRecord] = field(default_factory=list)
    nvme: dict[str, str] = field(default_factory=dict)  # serial -> kernel name (nvme0n1)
    virtio: str = ""  # kernel name of the virtio disk (vda)
    unplugged: set[str] = field(default_factory=set)  # serials currently unplugged
    notes: list[str] = field(default_factory=list)  # shown in the terminal summary
    default_limits: tuple[int, int] = (1000, 200000)
    _sock: socket.socket | None = None
    _buf: bytes = b""
    _next_id: int = 1
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _qmp: _Qmp | None = None

    # ---- paths -------------------------------------------------------------------------
    @property
    def console_log(self) -> Path:
        return self.workdir / "console.log"

    @property
    def agent_sock(self) -> Path:
        return self.workdir / "agent.sock"

    @property
    def qmp_sock(self) -> Path:
        return self.workdir / "qmp.sock"

    @property
    def captures(self) -> Path:
        """Writable from the guest (``--rwdir``): ``raidman capture`` writes here."""
        return self.workdir / "captures"

    def nvme_image(self, serial: str) -> Path:
        return self.workdir / f"{serial.lower()}.img"

    # ---- boot / shutdown ---------------------------------------------------------------
    def qemu_opts(self) -> list[str]:
        """The guest's disks, agent channel and QMP socket. The disks' images are scratch, so
        the guest's flushes are not passed on to the host (``cache.no-flush``): md's
        superblock and bitmap writes flush often, and each became a host fsync. Twice an
        emulated NVMe stopped completing I/O ("nvme nvme0: I/O 7 QID 1 timeout, aborting",
        during a reshape; the test and every later one on that guest lost), both times with
        the host's disk busy: a host fsync stalled behind other I/O is the likely cause, not
        a proven one (QEMU 7.2's shadow doorbells are the other suspect)."""
        c = self.config
        opts: list[str] = []
        for i in range(c.nvme_count):
            s = f"N{i}"
            opts += [
                "-device",
                f"pcie-root-port,id=rp{i},bus=pcie.0,chassis={i + 1},slot={i + 1}",
                "-blockdev",
                f"driver=raw,node-name=n{i},{NO_FLUSH},file.driver=file,"
                f"file.filename={self.nvme_image(s)},file.{NO_FLUSH}",
                "-device",
                f"nvme,drive=n{i},serial={s},id=nvme{i},bus=rp{i}",
            ]
        opts += [
            "-blockdev",
            f"driver=raw,node-name=v0,{NO_FLUSH},file.driver=file,"
            f"file.filename={self.workdir / 'v0.img'},file.{NO_FLUSH}",
            "-device",
            f"virtio-blk-pci,drive=v0,id=virtio0,serial=V0,"
            f"physical_block_size={c.virtio_physical_block_size},opt_io_size={c.virtio_opt_io_size}",
            "-chardev",
            f"socket,id=agent,path={self.agent_sock},server=on,wait=off",
            "-device",
            "virtio-serial-pci",
            "-device",
            "virtserialport,chardev=agent,name=raidman.agent",
            "-qmp",
            f"unix:{self.qmp_sock},server=on,wait=off",
        ]
        return opts

    def vng_argv(self) -> list[str]:
        c = self.config
        argv = [c.vng, "--run", c.kernel]
        if not c.kvm:
            argv.append("--disable-kvm")
        argv += [
            "--memory",
            c.memory,
            "--cpus",
            str(c.cpus),
            "--verbose",
            "--rwdir",
            str(self.workdir),
            "--cwd",
            str(REPO),
            f"--qemu-opts={shlex.join(self.qemu_opts())}",
            "--exec",
            f"{sys.executable} {AGENT}",
        ]
        return argv

    @classmethod
    def boot(cls, workdir: Path, config: VMConfig) -> VM:
        vm = cls(workdir=workdir, config=config)
        vm._start()
        return vm

    def _start(self) -> None:
        c = self.config
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.captures.mkdir(exist_ok=True)
        for i in range(c.nvme_count):
            with open(self.nvme_image(f"N{i}"), "wb") as f:
                f.truncate(c.nvme_size)
        with open(self.workdir / "v0.img", "wb") as f:
            f.truncate(c.virtio_size)
        env = dict(os.environ)
        env["PATH"] = f"{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}"
        t0 = time.monotonic()
        with open(self.console_log, "wb") as log:
            log.write(f"$ {shlex.join(self.vng_argv())}\n".encode())
            log.flush()
            self.proc = subprocess.Popen(
                self.vng_argv(),
                stdin=subprocess.DEVNULL,
                stdout=log,
                stderr=subprocess.STDOUT,
                cwd=self.workdir,
                env=env,
                start_new_session=True,
            )
        try:
            self._connect_agent(t0 + c.boot_timeout)
            self.boot_s = time.monotonic() - t0
            self._qmp = _Qmp(self.qmp_sock)
            self._after_boot()
            self.ready_at = time.monotonic()
            self.boot_cpu_s = self.host_cpu_s()
        except BaseException:
            self.close()
            raise

    def _alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def _connect_agent(self, deadline: float) -> None:
        while not self.agent_sock.exists():
            if not self._alive():
                raise VMError(f"vng exited before QEMU started:\n{self.console_tail()}")
            if time.monotonic() > deadline:
                raise VMError("QEMU did not create the agent socket")
            time.sleep(0.1)
        self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self._sock.connect(str(self.agent_sock))
        # Ping until the agent answers; answers to earlier pings are dropped by id.
        while True:
            if not self._alive():
                raise VMError(f"the VM exited during boot:\n{self.console_tail()}")
            if time.monotonic() > deadline:
                raise VMError(
                    f"guest agent did not answer within {self.config.boot_timeout} s:\n"
                    f"{self.console_tail()}"
                )
            with contextlib.suppress(TimeoutError):
                self.request("ping", _timeout=3.0)
                return

    def _after_boot(self) -> None:
        # md and dm are modules: load them now so /proc/sys/dev/raid exists from the start
        self.run(
            ["modprobe", "-a", "md_mod", "raid0", "raid1", "raid10", "raid456", "dm_mod"],
            timeout=120,
            check=True,
        )
        self.refresh_disks()
        # backends.linux.smart brings pySMART (with chardet, humanfriendly, psutil): imported
        # lazily by raidman, ~3 s of TCG in every forked call that reads SMART (a report: 10 s)
        mods = ["tests.vm.guest", "tests.vm.guest_reset", "backends.linux", "app.cli"]
        mods += ["backends.linux.smart"]
        mods += [
            f"app.commands.{p.stem}" for p in sorted((REPO / "app" / "commands").glob("[a-z]*.py"))
        ]
        t0 = time.monotonic()
        for mod, err in self.preload(*[m for m in mods if self.has_module(m)]).items():
            self.note(f"guest preload of {mod} failed: {err}")
        self.note(f"timing: guest preload of raidman modules: {time.monotonic() - t0:.1f} s")
        lim = self.read_many(
            ["/proc/sys/dev/raid/speed_limit_min", "/proc/sys/dev/raid/speed_limit_max"]
        )
        vals = [int((v or "0").strip() or 0) for v in lim.values()]
        if all(vals):
            self.default_limits = (vals[0], vals[1])

    def close(self) -> None:
        """Shut the guest down (agent shutdown, then kill the process group if needed)."""
        if self._sock is not None and self._alive():
            with contextlib.suppress(Exception):
                self.request("shutdown", _timeout=10.0)
        if self._qmp is not None:
            self._qmp.close()
            self._qmp = None
        if self._sock is not None:
            with contextlib.suppress(OSError):
                self._sock.close()
            self._sock = None
        if self.proc is not None:
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        for img in self.workdir.glob("*.img"):  # written disks are GBs: keep only logs/captures
            with contextlib.suppress(OSError):
                img.unlink()

    def host_cpu_s(self) -> float:
        """Host CPU seconds (user + system) used so far by the guest's processes: QEMU and the
        vng wrappers, i.e. every live process in the session ``vng`` leads. Under TCG this is
        the guest's whole cost: a guest waiting on md costs little, Python in the guest a lot."""
        if self.proc is None:
            return 0.0
        ticks = 0
        for stat in Path("/proc").glob("[0-9]*/stat"):
            try:
                text = stat.read_text()
            except OSError:
                continue
            fields = text[text.rindex(")") + 2 :].split()
            if int(fields[3]) == self.proc.pid:  # field 6 of stat: the session id
                ticks += int(fields[11]) + int(fields[12])  # utime, stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def console_tail(self, lines: int = 80, since: int = 0) -> str:
        try:
            with open(self.console_log, "rb") as f:
                f.seek(since)
                text = f.read().decode("utf-8", errors="replace")
        except OSError:
            return "(no console log)"
        return "\n".join(text.splitlines()[-lines:])

    def console_offset(self) -> int:
        try:
            return self.console_log.stat().st_size
        except OSError:
            return 0

    # ---- the agent ---------------------------------------------------------------------
    def request(
        self, op: str, _timeout: float = 300.0, _what: str = "", **fields: Any
    ) -> dict[str, Any]:
        """Send one request to the agent and return its answer (raises :class:`VMError`)."""
        if self._sock is None:
            raise VMError("the VM is not running")
        with self._lock:
            rid = self._next_id
            self._next_id += 1
            t0 = time.monotonic()
            self._sock.sendall(json.dumps({"id": rid, "op": op, **fields}).encode() + b"\n")
            deadline = t0 + _timeout
            while True:
                while b"\n" not in self._buf:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        raise TimeoutError(f"agent {op} not answered within {_timeout} s")
                    if op != "shutdown" and not self._alive():
                        raise VMError(f"the VM died:\n{self.console_tail()}")
                    self._sock.settimeout(min(left, 1.0))
                    try:
                        chunk = self._sock.recv(1 << 20)
                    except TimeoutError:
                        continue
                    if not chunk:
                        raise VMError(f"agent connection closed:\n{self.console_tail()}")
                    self._buf += chunk
                line, self._buf = self._buf.split(b"\n", 1)
                resp: dict[str, Any] = json.loads(line)
                if resp.get("id") == rid:
                    break
        dt = time.monotonic() - t0
        self.calls.append(CallRecord(op, _what or op, dt, resp.get("rc")))
        if "error" in resp:
            raise VMError(f"agent {op} failed in the guest:\n{resp['error']}")
        return resp

    def run(
        self,
        argv: Sequence[str],
        *,
        stdin: str | None = None,
        timeout: float = 300.0,
        check: bool = False,
        cwd: str | None = None,
        env: dict[str, str] | None = None,
    ) -> CommandResult:
        """Run an argv in the guest (as root). ``check=True`` raises :class:`GuestCommandError`."""
        argv = tuple(str(a) for a in argv)
        resp = self.request(
            "run",
            _timeout=timeout + 60,
            _what=shlex.join(argv)[:200],
            argv=list(argv),
            stdin=stdin,
            timeout=timeout,
            cwd=cwd,
            env=env,
        )
        res = CommandResult(
            argv, int(resp["rc"]), resp["stdout"], resp["stderr"], float(resp["duration"])
        )
        if check and not res.ok:
            raise GuestCommandError(res)
        return res

    def sh(self, script: str, *, timeout: float = 300.0, check: bool = True) -> CommandResult:
        """Run a shell script in the guest (``sh -ec``); checked by default."""
        return self.run(["sh", "-ec", script], timeout=timeout, check=check)

    def spawn(self, argv: Sequence[str], *, cwd: str | None = None) -> GuestProcess:
        argv = tuple(str(a) for a in argv)
        pid = int(
            self.request("spawn", _what=shlex.join(argv)[:200], argv=list(argv), cwd=cwd)["pid"]
        )
        return GuestProcess(self, pid, argv)

    def spawn_call(
        self,
        target: str,
        *args: Any,
        env: dict[str, str] | None = None,
        cwd: str | None = str(REPO),
        **kwargs: Any,
    ) -> GuestProcess:
        """``"package.module:function"`` in the background, in a fork of the pre-loaded agent
        (``call`` without waiting; ``spawn`` without a fresh interpreter). ``poll``/``wait``
        give the function's exit code (its SystemExit code, 0 when it returns) and output."""
        what = ("call", target, *map(str, args))
        pid = int(
            self.request(
                "spawn_call",
                _what=shlex.join(what)[:200],
                target=target,
                args=list(args),
                kwargs=kwargs,
                cwd=cwd,
                env=env,
            )["pid"]
        )
        return GuestProcess(self, pid, what)

    def spawn_raidman(self, *args: str, env: dict[str, str] | None = None) -> GuestProcess:
        """``raidman ARGS`` (``app.cli:main``) in the background, in a fork of the agent: a
        ``raidman monitor`` that costs no interpreter start-up."""
        proc = self.spawn_call("app.cli:main", list(args), env=env)
        return GuestProcess(self, proc.pid, ("raidman", *args))

    def read_many(
        self, paths: Sequence[str] = (), globs: Sequence[str] = ()
    ) -> dict[str, str | None]:
        """Read many small files in ONE agent request (one moment): {path: text or None}."""
        data: dict[str, str | None] = self.request("read", paths=list(paths), globs=list(globs))[
            "data"
        ]
        return data

    def try_read(self, path: str) -> str | None:
        return self.read_many([path])[path]

    def read(self, path: str) -> str:
        text = self.try_read(path)
        if text is None:
            raise FileNotFoundError(f"guest:{path}")
        return text

    def glob(self, *patterns: str) -> list[str]:
        paths: list[str] = self.request("glob", patterns=list(patterns))["paths"]
        return paths

    def write(self, path: str, data: str) -> None:
        self.request("write", path=path, data=data)

    def python(self, code: str, *, timeout: float = 300.0) -> str:
        """Run Python code in the guest with the venv's interpreter, from the repo; returns stdout."""
        return self.run(
            [sys.executable, "-c", code], timeout=timeout, cwd=str(REPO), check=True
        ).stdout

    def call_result(
        self,
        target: str,
        *args: Any,
        timeout: float = 300.0,
        env: dict[str, str] | None = None,
        **kwargs: Any,
    ) -> tuple[CommandResult, Any]:
        """``module:function(*args, **kwargs)`` in the guest, in a fork of the agent (modules
        pre-loaded at boot: no interpreter start-up). Returns (result, function's value)."""
        resp = self.request(
            "call",
            _timeout=timeout + 60,
            _what=f"call {target}{list(args)!r}"[:200],
            target=target,
            args=list(args),
            kwargs=kwargs,
            cwd=str(REPO),
            env=env,
            timeout=timeout,
        )
        stderr = resp["stderr"] + (resp.get("exception") or "")
        res = CommandResult(
            ("call", target, *map(str, args)),
            int(resp["rc"]),
            resp["stdout"],
            stderr,
            float(resp["duration"]),
        )
        return res, resp.get("value")

    def call(self, target: str, *args: Any, timeout: float = 300.0, **kwargs: Any) -> Any:
        """``"package.module:function"`` run in the guest against the real kernel, with JSON
        arguments; returns its JSON-serialisable value. Raises :class:`GuestCommandError`."""
        res, value = self.call_result(target, *args, timeout=timeout, **kwargs)
        if not res.ok:
            raise GuestCommandError(res)
        return value

    def raidman(
        self,
        *args: str,
        timeout: float = 300.0,
        check: bool = False,
        fresh: bool = False,
        env: dict[str, str] | None = None,
    ) -> CommandResult:
        """``raidman ARGS`` (``app.cli:main``) in the guest, from the repo, on the real Linux
        backend, with ``env`` added to the environment. ``fresh=True`` starts a new interpreter
        (``python -m app.cli``) instead of forking the pre-loaded agent: under TCG that costs
        ~30 s of host CPU, so only where the fresh start is what is tested."""
        if fresh:
            return self.run(
                [sys.executable, "-m", "app.cli", *args],
                timeout=timeout,
                cwd=str(REPO),
                check=check,
                env=env,
            )
        res, value = self.call_result("app.cli:main", list(args), timeout=timeout, env=env)
        if res.ok and isinstance(value, int):
            res = CommandResult(("raidman", *args), value, res.stdout, res.stderr, res.duration_s)
        else:
            res = CommandResult(
                ("raidman", *args), res.returncode, res.stdout, res.stderr, res.duration_s
            )
        if check and not res.ok:
            raise GuestCommandError(res)
        return res

    def preload(self, *modules: str) -> dict[str, str]:
        """Import ``modules`` into the guest agent so later calls fork warm; {module: error}."""
        failed: dict[str, str] = self.request(
            "preload", modules=list(modules), path=str(REPO), _timeout=300
        )["failed"]
        return failed

    def has_module(self, module: str) -> bool:
        """Whether ``module`` exists in the repo (checked on the host: the guest sees the same files)."""
        import importlib.util

        try:
            return importlib.util.find_spec(module) is not None
        except ModuleNotFoundError:
            return False

    def report(self) -> dict[str, Any]:
        """``raidman report --json`` in the guest. Raises :class:`ModelUnavailable` until it exists."""
        if not self.has_module("app.commands.report"):
            raise ModelUnavailable("`raidman report` (app/commands/report.py) does not exist yet")
        out = self.raidman("report", "--json", check=True).stdout
        data: dict[str, Any] = json.loads(out)
        return data

    def probe_json(self) -> dict[str, Any]:
        """``dataclasses.asdict(LinuxBackend().probe())`` computed in the guest.

        Raises :class:`ModelUnavailable` while ``backends.linux`` does not exist."""
        if not self.has_module("backends.linux"):
            raise ModelUnavailable("backends.linux (the real Linux backend) does not exist yet")
        data: dict[str, Any] = self.call("tests.vm.guest:probe_asdict")
        return data

    def capture(self, name: str, *, smart: bool = True, needed: bool = False) -> Path | None:
        """``raidman capture`` into ``<workdir>/captures/<name>`` in the guest, copied to
        ``tests/fixtures/vm/<name>``, when ``RAIDMAN_VM_UPDATE_FIXTURES=1`` (refreshing the
        fixtures the replay tests read) or when the test reads the capture itself (``needed``).
        Otherwise nothing runs: under TCG a capture with SMART takes ~15 s, and a state's
        capture is only ever read as a fixture.

        Returns the capture's host path, or None (with a note in the summary) when not made
        or while ``raidman capture`` does not exist."""
        update = os.environ.get("RAIDMAN_VM_UPDATE_FIXTURES") == "1"
        if not (update or needed):
            return None
        if not self.has_module("app.commands.capture"):
            self.note(
                f"capture {name!r} skipped: `raidman capture` (app/commands/capture.py) does not exist yet"
            )
            return None
        dest = self.captures / name
        if dest.exists():
            shutil.rmtree(dest)
        t0 = time.monotonic()
        self.raidman("capture", str(dest), *([] if smart else ["--no-smart"]), check=True)
        self.note(f"timing: capture {name}: {time.monotonic() - t0:.1f} s")
        if update:
            fixture = FIXTURES_VM / name
            if fixture.exists():
                shutil.rmtree(fixture)
            shutil.copytree(dest, fixture)
            self.note(f"fixture updated: {fixture.relative_to(REPO)}")
        return dest

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def dmesg(self, lines: int | None = 60) -> str:
        out = self.run(["dmesg"], timeout=30).stdout
        return "\n".join(out.splitlines()[-lines:]) if lines else out

    def dmesg_clear(self) -> None:
        self.run(["dmesg", "-C"], timeout=30, check=True)

    # ---- QMP and disks -----------------------------------------------------------------
    def qmp(self, cmd: str, **arguments: Any) -> Any:
        if self._qmp is None:
            raise VMError("no QMP connection")
        t0 = time.monotonic()
        try:
            return self._qmp.execute(cmd, **arguments)
        finally:
            self.calls.append(CallRecord("qmp", cmd, time.monotonic() - t0))

    def refresh_disks(self) -> None:
        """Re-resolve serial -> kernel name for every disk now present in the guest."""
        data = self.read_many(globs=["/sys/block/nvme*/device/serial", "/sys/block/vd*/serial"])
        self.nvme = {}
        for path, text in data.items():
            name = path.split("/")[3]
            serial = (text or "").strip()
            if name.startswith("nvme"):
                self.nvme[serial] = name
            elif serial == "V0":
                self.virtio = name

    def disks(self, n: int) -> list[str]:
        """Kernel names of the first ``n`` NVMe disks by serial (N0, N1, ...)."""
        out = []
        for i in range(self.config.nvme_count):
            s = f"N{i}"
            if s in self.nvme:
                out.append(self.nvme[s])
            if len(out) == n:
                return out
        raise VMError(f"only {len(out)} NVMe disks present, {n} wanted")

    def serial_of(self, kernel_name: str) -> str:
        for s, n in self.nvme.items():
            if n == kernel_name:
                return s
        raise KeyError(kernel_name)

    def unplug_nvme(self, serial: str, timeout: float = 120.0) -> None:
        """Hot-unplug an NVMe disk (QMP ``device_del``) and wait until QEMU and the guest let go."""
        i = int(serial[1:])
        name = self.nvme.get(serial)
        self.qmp("device_del", id=f"nvme{i}")
        self.unplugged.add(serial)
        assert self._qmp is not None
        self._qmp.wait_event(
            "DEVICE_DELETED", timeout, lambda e: e["data"].get("device") == f"nvme{i}"
        )
        if name:
            self.wait_for(
                lambda: self.try_read(f"/sys/block/{name}/size") is None, timeout, f"{name} gone"
            )
        self.refresh_disks()

    def plug_nvme(self, serial: str, timeout: float = 120.0) -> str:
        """Put an unplugged NVMe disk back (same image, id and root port); returns its kernel name."""
        i = int(serial[1:])
        self.qmp(
            "device_add", driver="nvme", drive=f"n{i}", serial=serial, id=f"nvme{i}", bus=f"rp{i}"
        )
        self.unplugged.discard(serial)

        def present() -> bool:
            self.refresh_disks()
            return serial in self.nvme

        self.wait_for(present, timeout, f"{serial} back in the guest")
        self.run(["udevadm", "settle"], timeout=60)
        return self.nvme[serial]

    # ---- md helpers --------------------------------------------------------------------
    def set_speed_limits(self, min_kib: int | None = None, max_kib: int | None = None) -> None:
        """Global ``dev.raid.speed_limit_min|max`` (KiB/s); None restores the boot value."""
        mn = self.default_limits[0] if min_kib is None else min_kib
        mx = self.default_limits[1] if max_kib is None else max_kib
        self.write("/proc/sys/dev/raid/speed_limit_max", f"{max(mx, mn)}\n")
        self.write("/proc/sys/dev/raid/speed_limit_min", f"{mn}\n")
        self.write("/proc/sys/dev/raid/speed_limit_max", f"{mx}\n")

    def wait_for(
        self,
        pred: Callable[[], bool],
        timeout: float = 120.0,
        what: str = "condition",
        interval: float = 0.2,
    ) -> float:
        """Poll ``pred`` until true; returns the seconds waited, raises TimeoutError."""
        t0 = time.monotonic()
        while not pred():
            if time.monotonic() - t0 > timeout:
                raise TimeoutError(f"{what}: not reached within {timeout} s")
            time.sleep(interval)
        return time.monotonic() - t0

    def sync_action(self, md: str) -> str:
        return (self.try_read(f"/sys/block/{md}/md/sync_action") or "").strip()

    def wait_idle(self, md: str, timeout: float = 600.0) -> float:
        """Wait until the array has no sync activity (also none pending); returns seconds waited."""

        def idle() -> bool:
            d = self.read_many([f"/sys/block/{md}/md/sync_action", "/proc/mdstat"])
            action = (d[f"/sys/block/{md}/md/sync_action"] or "").strip()
            mdstat = d["/proc/mdstat"] or ""
            block = mdstat.split(f"{md} :", 1)[1].split("\n\n", 1)[0] if f"{md} :" in mdstat else ""
            busy = re.search(r"(resync|recovery|reshape|check|repair)\s*=|PENDING|DELAYED", block)
            return action == "idle" and busy is None

        return self.wait_for(idle, timeout, f"{md} idle", interval=0.3)

    def wait_action(self, md: str, actions: Sequence[str], timeout: float = 60.0) -> str:
        """Wait until ``sync_action`` is one of ``actions``; returns it."""
        seen = ""

        def check() -> bool:
            nonlocal seen
            seen = self.sync_action(md)
            return seen in actions

        self.wait_for(check, timeout, f"{md} sync_action in {list(actions)}", interval=0.1)
        return seen

    def reset_disks(self) -> dict[str, Any]:
        """Back to blank disks: unmount, remove LVM, stop all md, wipe every disk, put unplugged
        NVMe disks back, restore the speed limits. Raises if something is left."""
        for serial in sorted(self.unplugged):
            self.plug_nvme(serial)
        t0 = time.monotonic()
        info: dict[str, Any] = self.call("tests.vm.guest_reset:reset", timeout=300)
        self.set_speed_limits()
        self.refresh_disks()
        info["seconds"] = time.monotonic() - t0
        missing = [f"N{i}" for i in range(self.config.nvme_count) if f"N{i}" not in self.nvme]
        if missing:
            raise VMError(f"after reset, NVMe disks missing: {missing}")
        return info

    # ---- statistics --------------------------------------------------------------------
    def latency_summary(self) -> str:
        by_op: dict[str, list[float]] = {}
        for c in self.calls:
            by_op.setdefault(c.op, []).append(c.duration_s)
        parts = []
        for op, ds in sorted(by_op.items()):
            parts.append(
                f"{op}: n={len(ds)} median={statistics.median(ds) * 1000:.0f} ms "
                f"max={max(ds) * 1000:.0f} ms"
            )
        return "; ".join(parts)

    @contextlib.contextmanager
    def timed(self, what: str) -> Iterator[None]:
        t0 = time.monotonic()
        yield
        self.note(f"timing: {what}: {time.monotonic() - t0:.1f} s")


class ModelUnavailable(Exception):
    """raidman's model side (backends.linux / report) is not there yet: skip only the comparison."""
