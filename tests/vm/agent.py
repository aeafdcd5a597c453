"""The guest agent: runs inside the QEMU guest (started by ``vng --exec``), serves the host.

Channel: the virtio-serial port ``/dev/virtio-ports/raidman.agent`` (a unix socket on the host).
Protocol: one JSON object per line each way. Every request carries an ``id`` that the response
echoes, so the host can drop answers to stale pings sent before the port was open.

Requests (``op``):
  ping                                  -> {pong, uname, uptime}
  run    {argv, stdin?, timeout?, cwd?, env?} -> {rc, stdout, stderr, duration}
  spawn  {argv, cwd?, env?}             -> {pid}          (runs in the background)
  poll   {pid}                          -> {running, rc, stdout, stderr}
  kill   {pid, signal?}                 -> {}
  read   {paths: [...], globs?: [...]}  -> {data: {path: text | null}}   (one moment, no process)
  glob   {patterns: [...]}              -> {paths: [...]}
  write  {path, data}                   -> {}
  preload {modules, path?}              -> {failed: {module: error}}   (import into the agent)
  call   {target "mod:func", args, kwargs, cwd?, env?, timeout?}
                                        -> {rc, value, exception, stdout, stderr, duration}
                                           (in a fork of the pre-loaded agent: no start-up cost)
  spawn_call {target, args, kwargs, cwd?, env?} -> {pid}   (``call`` in the background: poll,
                                           kill; rc is the function's SystemExit code)
  shutdown                              -> {} then the agent exits and the VM powers off

Standard library only: it must start with nothing but the interpreter.
"""

from __future__ import annotations

import contextlib
import glob
import importlib
import json
import os
import select
import signal
import subprocess
import sys
import time
import traceback
from typing import Any

PORT = "/dev/virtio-ports/raidman.agent"
SPAWN_DIR = "/tmp/raidman-agent"

_spawned: dict[int, tuple[subprocess.Popen[bytes] | _Forked, str, str]] = {}


def log(msg: str) -> None:
    sys.stderr.write(f"[raidman-agent {time.monotonic():9.3f}] {msg}\n")
    sys.stderr.flush()


def _decode(b: bytes | None) -> str:
    return (b or b"").decode("utf-8", errors="replace")


def _env(extra: dict[str, str] | None) -> dict[str, str]:
    env = dict(os.environ)
    env.setdefault("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin")
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    env["LC_ALL"] = "C.UTF-8"
    # no message catalogues: gettext stops at "C" instead of looking for C.UTF-8's .mo files
    # (argparse asks 78 times per raidman command line: 1.1 s of 9p stats under TCG)
    env["LANGUAGE"] = "C"
    if extra:
        env.update(extra)
    return env


def op_run(req: dict[str, Any]) -> dict[str, Any]:
    argv = [str(a) for a in req["argv"]]
    stdin = req.get("stdin")
    t0 = time.monotonic()
    try:
        p = subprocess.run(
            argv,
            input=stdin.encode() if stdin is not None else None,
            stdin=None if stdin is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=req.get("timeout"),
            cwd=req.get("cwd"),
            env=_env(req.get("env")),
        )
        rc, out, err = p.returncode, _decode(p.stdout), _decode(p.stderr)
    except FileNotFoundError as e:
        rc, out, err = 127, "", str(e)
    except subprocess.TimeoutExpired as e:
        rc = -9
        out = _decode(e.stdout if isinstance(e.stdout, bytes) else None)
        err = _decode(e.stderr if isinstance(e.stderr, bytes) else None)
        err += f"\n[agent] timed out after {req.get('timeout')} s"
    return {"rc": rc, "stdout": out, "stderr": err, "duration": time.monotonic() - t0}


def op_spawn(req: dict[str, Any]) -> dict[str, Any]:
    os.makedirs(SPAWN_DIR, exist_ok=True)
    stamp = f"{time.monotonic_ns()}"
    out_path = os.path.join(SPAWN_DIR, f"{stamp}.out")
    err_path = os.path.join(SPAWN_DIR, f"{stamp}.err")
    with open(out_path, "wb") as out, open(err_path, "wb") as err:
        p = subprocess.Popen(
            [str(a) for a in req["argv"]],
            stdin=subprocess.DEVNULL,
            stdout=out,
            stderr=err,
            cwd=req.get("cwd"),
            env=_env(req.get("env")),
            start_new_session=True,
        )
    _spawned[p.pid] = (p, out_path, err_path)
    return {"pid": p.pid}


class _Forked:
    """A forked child of the agent (``spawn_call``), with the part of Popen that poll and kill
    use."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.returncode: int | None = None

    def poll(self) -> int | None:
        if self.returncode is None:
            done, status = os.waitpid(self.pid, os.WNOHANG)
            if done:
                self.returncode = os.waitstatus_to_exitcode(status)
        return self.returncode

    def wait(self, timeout: float | None = None) -> int:
        deadline = None if timeout is None else time.monotonic() + timeout
        while (rc := self.poll()) is None:
            if deadline is not None and time.monotonic() > deadline:
                raise subprocess.TimeoutExpired(f"pid {self.pid}", timeout or 0.0)
            time.sleep(0.05)
        return rc


def op_spawn_call(req: dict[str, Any]) -> dict[str, Any]:
    """``module:function(*args, **kwargs)`` in the background, in a forked child of the
    pre-loaded agent (its own session, like ``spawn``): a long-running ``raidman monitor``
    without a fresh interpreter's start-up (under TCG: half a minute of CPU for raidman's
    imports over 9p). The exit code is the function's SystemExit code (0 on return)."""
    os.makedirs(SPAWN_DIR, exist_ok=True)
    stamp = f"{time.monotonic_ns()}"
    out_path = os.path.join(SPAWN_DIR, f"{stamp}.out")
    err_path = os.path.join(SPAWN_DIR, f"{stamp}.err")
    for path in (out_path, err_path):  # there before the first poll (the child truncates them)
        with open(path, "wb"):
            pass
    pid = os.fork()
    if pid == 0:  # child
        rc = 1
        try:
            os.setsid()
            rc = int(_run_target(req, out_path, err_path)["rc"])
        except BaseException:
            traceback.print_exc()
        finally:
            with contextlib.suppress(BaseException):
                sys.stdout.flush()
                sys.stderr.flush()
            os._exit(rc if 0 <= rc <= 255 else 1)
    _spawned[pid] = (_Forked(pid), out_path, err_path)
    return {"pid": pid}


def _read_file(path: str) -> str:
    with open(path, "rb") as f:
        return _decode(f.read())


def op_poll(req: dict[str, Any]) -> dict[str, Any]:
    p, out_path, err_path = _spawned[int(req["pid"])]
    rc = p.poll()
    return {
        "running": rc is None,
        "rc": rc,
        "stdout": _read_file(out_path),
        "stderr": _read_file(err_path),
    }


def op_kill(req: dict[str, Any]) -> dict[str, Any]:
    p, _, _ = _spawned[int(req["pid"])]
    if p.poll() is None:
        os.killpg(p.pid, int(req.get("signal", signal.SIGTERM)))
        try:
            p.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(p.pid, signal.SIGKILL)
            p.wait()
    return {"rc": p.returncode}


def op_read(req: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, str | None] = {}
    paths = list(req.get("paths", ()))
    for pattern in req.get("globs", ()):
        paths.extend(sorted(glob.glob(pattern)))
    for path in paths:
        try:
            data[path] = _read_file(path)
        except OSError:
            data[path] = None
    return {"data": data}


def op_glob(req: dict[str, Any]) -> dict[str, Any]:
    paths: list[str] = []
    for pattern in req["patterns"]:
        paths.extend(sorted(glob.glob(pattern)))
    return {"paths": paths}


def op_write(req: dict[str, Any]) -> dict[str, Any]:
    with open(req["path"], "w") as f:
        f.write(req["data"])
    return {}


def op_ping(req: dict[str, Any]) -> dict[str, Any]:
    with open("/proc/uptime") as f:
        uptime = float(f.read().split()[0])
    return {"pong": True, "uname": list(os.uname()), "uptime": uptime, "python": sys.executable}


def op_preload(req: dict[str, Any]) -> dict[str, Any]:
    """Import modules into the agent so that ``call`` children start warm (no interpreter
    start-up, no imports over 9p under TCG: seconds per call)."""
    path = req.get("path")
    if path and path not in sys.path:
        sys.path.insert(0, path)
    failed: dict[str, str] = {}
    for mod in req.get("modules", ()):
        try:
            importlib.import_module(mod)
        except Exception as e:
            failed[mod] = f"{type(e).__name__}: {e}"
    return {"failed": failed}


def _run_target(req: dict[str, Any], out_path: str, err_path: str) -> dict[str, Any]:
    """(In a fork of the agent.) stdout/stderr to the files, stdin from /dev/null, the request's
    cwd and environment, then ``module:function(*args, **kwargs)``: {rc, value}. SystemExit(n)
    becomes rc n (for entry points like ``app.cli:main``)."""
    out = os.open(out_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    err = os.open(err_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(out, 1)
    os.dup2(err, 2)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    if req.get("cwd"):
        os.chdir(req["cwd"])
        if req["cwd"] not in sys.path:
            sys.path.insert(0, req["cwd"])
    os.environ.update(_env(req.get("env")))
    module, _, func = req["target"].partition(":")
    fn = getattr(importlib.import_module(module), func)
    try:
        return {"rc": 0, "value": fn(*req.get("args", ()), **req.get("kwargs", {}))}
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
        if e.code is not None and not isinstance(e.code, int):
            sys.stderr.write(f"{e.code}\n")
        return {"rc": code, "value": None}


def op_call(req: dict[str, Any]) -> dict[str, Any]:
    """``module:function(*args, **kwargs)`` in a forked child of the (pre-loaded) agent.

    The child's stdout/stderr go to files; the JSON result comes back through a pipe.
    SystemExit(n) becomes rc n (for entry points like ``app.cli:main``)."""
    os.makedirs(SPAWN_DIR, exist_ok=True)
    stamp = f"{time.monotonic_ns()}"
    out_path = os.path.join(SPAWN_DIR, f"call-{stamp}.out")
    err_path = os.path.join(SPAWN_DIR, f"call-{stamp}.err")
    rfd, wfd = os.pipe()
    t0 = time.monotonic()
    pid = os.fork()
    if pid == 0:  # child
        status = 0
        try:
            os.close(rfd)
            data = json.dumps(_run_target(req, out_path, err_path), default=str).encode()
        except BaseException:
            traceback.print_exc()
            data = json.dumps(
                {"rc": 1, "value": None, "exception": traceback.format_exc()}
            ).encode()
            status = 1
        try:
            sys.stdout.flush()
            sys.stderr.flush()
            view = memoryview(data)
            while view:
                view = view[os.write(wfd, view) :]
        finally:
            os._exit(status)
    os.close(wfd)
    chunks: list[bytes] = []
    deadline = t0 + float(req.get("timeout") or 600)
    timed_out = False
    while True:
        # wait in the kernel (no polling loop: under TCG every wake-up of this interpreter
        # costs the host real CPU for as long as the call runs)
        ready, _, _ = select.select([rfd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            os.kill(pid, signal.SIGKILL)
            timed_out = True
            break
        chunk = os.read(rfd, 1 << 20)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(rfd)
    os.waitpid(pid, 0)
    try:
        payload = json.loads(b"".join(chunks) or b"{}")
    except ValueError:
        payload = {}
    resp = {
        "rc": -9 if timed_out else int(payload.get("rc", 1)),
        "value": payload.get("value"),
        "exception": payload.get("exception"),
        "stdout": _read_file(out_path),
        "stderr": _read_file(err_path)
        + (f"\n[agent] timed out after {req.get('timeout')} s" if timed_out else ""),
        "duration": time.monotonic() - t0,
    }
    for path in (out_path, err_path):
        with contextlib.suppress(OSError):
            os.unlink(path)
    return resp


OPS = {
    "preload": op_preload,
    "call": op_call,
    "spawn_call": op_spawn_call,
    "ping": op_ping,
    "run": op_run,
    "spawn": op_spawn,
    "poll": op_poll,
    "kill": op_kill,
    "read": op_read,
    "glob": op_glob,
    "write": op_write,
}


def serve(port: str) -> None:
    fd = os.open(port, os.O_RDWR)
    log(f"serving on {port}")
    buf = b""
    while True:
        chunk = os.read(fd, 65536)
        if not chunk:  # host not connected yet (or reconnecting): wait for it
            time.sleep(0.05)
            continue
        buf += chunk
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            if not line.strip():
                continue
            req: dict[str, Any] = {}
            try:
                req = json.loads(line)
                if req.get("op") == "shutdown":
                    _reply(fd, {"id": req.get("id"), "ok": True})
                    log("shutdown requested")
                    return
                resp = OPS[req["op"]](req)
            except Exception:
                resp = {"error": traceback.format_exc()}
            resp["id"] = req.get("id")
            _reply(fd, resp)


def _reply(fd: int, resp: dict[str, Any]) -> None:
    data = (json.dumps(resp) + "\n").encode()
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def main() -> int:
    port = sys.argv[1] if len(sys.argv) > 1 else PORT
    for _ in range(200):
        if os.path.exists(port):
            break
        time.sleep(0.05)
    try:
        serve(port)
    except Exception:
        log("agent crashed:\n" + traceback.format_exc())
        return 1
    for p, _, _ in _spawned.values():
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
    return 0


if __name__ == "__main__":
    sys.exit(main())
