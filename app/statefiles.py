"""Safe I/O for raidman's state files (boost records, the wear database, their aside copies).

raidman often runs as root, so a state file is a way to make root read or write something. Every
state file and the directory holding it must therefore belong to the running user and must not be
writable by group or others; a symlink is never followed (``O_NOFOLLOW``, ``lstat``); writes go to a
temporary file in the same directory, are fsynced and renamed over the old file. A directory
raidman creates is created 0700. What is out of shape raises :class:`StateFileError`, whose
message is meant for a note to the user ("refused ...: ..."): never a traceback.

API:

- ``check_dir(path)`` / ``check_file(path)``: raise ``StateFileError`` if unsafe.
- ``ensure_dir(path)``: create (0700, parents too) if missing, then ``check_dir``.
- ``read_text(path, max_bytes=...)``: the text, or ``None`` if the file does not exist.
- ``write_text(path, text, mode=0o600)``: atomic (temp + fsync + rename) in a checked directory.
- ``aside_path(path, tag)``: a fresh ``<name>.<tag>-<time>[-N]`` name that exists nowhere yet.
- ``move_aside(path, tag)``: move ``path`` there without ever replacing another file.
"""

from __future__ import annotations

import errno
import os
import stat
import time
from pathlib import Path

MAX_STATE_BYTES = 1 << 20  # a boost record file is a few hundred bytes; refuse a huge one


class StateFileError(Exception):
    """A state file or directory raidman refuses to use; ``str(e)`` is a one-line note."""


def _euid() -> int:
    return os.geteuid()


def _check_stat(path: Path, st: os.stat_result, what: str, want: int) -> None:
    if stat.S_ISLNK(st.st_mode):
        raise StateFileError(f"refused {what} {path}: it is a symlink (raidman never follows one)")
    if stat.S_IFMT(st.st_mode) != want:
        kind = "directory" if want == stat.S_IFDIR else "regular file"
        raise StateFileError(f"refused {what} {path}: not a {kind}")
    euid = _euid()
    if st.st_uid != euid:
        raise StateFileError(
            f"refused {what} {path}: owned by uid {st.st_uid}, not by the running user (uid {euid})"
        )
    if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        raise StateFileError(
            f"refused {what} {path}: writable by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):04o}; fix with chmod go-w)"
        )


def check_dir(path: Path) -> None:
    """The state directory must be a real directory of the running user, not group/other-writable,
    and no directory above it may let another user swap it (each is root's or ours, and not
    group/other-writable unless sticky, like /tmp)."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise StateFileError(f"cannot use state directory {path}: {e.strerror}") from e
    _check_stat(path, st, "state directory", stat.S_IFDIR)
    _check_ancestors(path)


def _check_ancestors(path: Path) -> None:
    euid = _euid()
    for up in Path(os.path.realpath(path)).parents:
        try:
            st = os.stat(up)
        except OSError:
            continue
        if st.st_uid not in (0, euid):
            raise StateFileError(
                f"refused state directory {path}: {up} above it belongs to uid {st.st_uid}"
            )
        if st.st_mode & (stat.S_IWGRP | stat.S_IWOTH) and not st.st_mode & stat.S_ISVTX:
            raise StateFileError(
                f"refused state directory {path}: {up} above it is writable by group or others "
                f"(mode {stat.S_IMODE(st.st_mode):04o})"
            )


def check_file(path: Path) -> None:
    """An existing state file: a regular file (no symlink) of the running user, not g/o-writable."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise StateFileError(f"cannot use state file {path}: {e.strerror}") from e
    _check_stat(path, st, "state file", stat.S_IFREG)


def ensure_dir(path: Path) -> None:
    """Create ``path`` (mode 0700, missing parents too, each 0700: ``os.makedirs`` gives the
    parents it creates the umask's mode) if it does not exist, then check it and those above."""
    missing: list[Path] = []
    p = path
    while not os.path.lexists(p) and p != p.parent:
        missing.append(p)
        p = p.parent
    for d in reversed(missing):
        try:
            os.mkdir(d, 0o700)
        except FileExistsError:
            pass  # made by another process meanwhile: checked below like any other
        except OSError as e:
            raise StateFileError(f"cannot create state directory {d}: {e.strerror}") from e
    check_dir(path)  # and every directory above it


def read_text(path: Path, *, max_bytes: int = MAX_STATE_BYTES) -> str | None:
    """The file's text, or ``None`` if it does not exist. Directory and file are checked first;
    the file is opened with ``O_NOFOLLOW`` and checked again through the open descriptor."""
    if os.path.lexists(path.parent):
        check_dir(path.parent)
    if not os.path.lexists(path):
        return None
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise StateFileError(
                f"refused state file {path}: it is a symlink (raidman never follows one)"
            ) from e
        raise StateFileError(f"cannot read state file {path}: {e.strerror}") from e
    try:
        _check_stat(path, os.fstat(fd), "state file", stat.S_IFREG)
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(max_bytes + 1)
    except OSError as e:
        raise StateFileError(f"cannot read state file {path}: {e.strerror}") from e
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise StateFileError(f"refused state file {path}: larger than {max_bytes} bytes")
    return data.decode("utf-8", errors="replace")


def write_text(path: Path, text: str, *, mode: int = 0o600) -> None:
    """Write atomically: a new temporary file in the same (checked) directory, fsync, rename over
    ``path``. An existing ``path`` that is unsafe (symlink, other owner) is refused, not replaced."""
    ensure_dir(path.parent)
    if os.path.lexists(path):
        check_file(path)
    data = text.encode()
    for n in range(100):
        tmp = path.with_name(f".{path.name}.tmp-{os.getpid()}-{n}")
        try:
            fd = os.open(
                tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, mode
            )
            break
        except FileExistsError:
            continue
        except OSError as e:
            raise StateFileError(f"cannot write state file {path}: {e.strerror}") from e
    else:
        raise StateFileError(f"cannot write state file {path}: no free temporary name")
    try:
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except OSError as e:
        with _quiet():
            os.unlink(tmp)
        raise StateFileError(f"cannot write state file {path}: {e.strerror}") from e
    _fsync_dir(path.parent)


def _fsync_dir(d: Path) -> None:
    with _quiet():
        fd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def aside_path(path: Path, tag: str, *, now: float | None = None) -> Path:
    """``<name>.<tag>-<unix time>``, or with ``-2``, ``-3``... when that name is taken."""
    base = f"{path.name}.{tag}-{int(time.time() if now is None else now)}"
    cand = path.with_name(base)
    n = 1
    while os.path.lexists(cand):
        n += 1
        cand = path.with_name(f"{base}-{n}")
    return cand


def move_aside(path: Path, tag: str, *, now: float | None = None) -> Path:
    """Move ``path`` to a fresh :func:`aside_path`; never replaces an existing file (hard link
    + unlink, which fails instead of overwriting; retried with the next name on a race)."""
    for _ in range(1000):
        dest = aside_path(path, tag, now=now)
        try:
            os.link(path, dest, follow_symlinks=False)
        except FileExistsError:
            continue
        except OSError as e:
            if e.errno not in (errno.EPERM, errno.EOPNOTSUPP, errno.EXDEV):
                raise
            # no hard links here: rename, after checking the name is still free
            if os.path.lexists(dest):
                continue
            os.rename(path, dest)
            return dest
        os.unlink(path)
        return dest
    raise OSError(errno.EEXIST, f"no free name to move {path} aside")


class _quiet:
    def __enter__(self) -> None:
        return None

    def __exit__(self, *exc: object) -> bool:
        return exc[0] is not None and issubclass(exc[0], OSError)  # type: ignore[arg-type]
