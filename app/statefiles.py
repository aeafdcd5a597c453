"""The one way raidman writes a file, appends to one, or reads one it trusts.

raidman often runs as root, so every file it writes or trusts is a way to make root write or read
something. The rules, for state files (boost records, the wear database, the audit log), captures,
``plan --out`` and the metrics textfile alike:

- a symlink is never followed (``O_NOFOLLOW``, ``lstat``), and nothing but a regular file is
  opened: a FIFO or a device is refused, never waited on (opens are ``O_NONBLOCK``, then
  ``fstat``);
- a write goes to a new temporary file (``O_EXCL``) in the same directory, is fsynced and renamed
  over the old file, all relative to one open descriptor of the directory (no path is looked up
  twice, so swapping a directory for a symlink meanwhile changes nothing); an existing file of
  another user is refused, not replaced;
- a state directory (and a capture's) belongs to the running user and is not writable by group or
  others, nor is any directory above it (unless sticky, like /tmp); one raidman creates is 0700.
  A directory the user names for an output (``plan --out``, the textfile collector's) may belong
  to someone else (node_exporter's is prometheus's) but not be world-writable unless sticky;
- a file raidman trusts (hosts.toml, state files) belongs to root or the running user and is not
  writable by group or others; its size is bounded.

What is out of shape raises :class:`StateFileError`, whose message is meant for a note to the
user ("refused ...: ..."): never a traceback.

API:

- ``check_dir(path)`` / ``check_file(path)``: raise ``StateFileError`` if unsafe.
- ``ensure_dir(path)``: create (0700, parents too) if missing, then ``check_dir``.
- ``read_text(path, max_bytes=...)``: a state file's text, or ``None`` if it does not exist.
- ``read_trusted(path, what=...)``: a file raidman acts on (hosts.toml, raidman.toml, an
  ssh_config): root's or ours, not group/other-writable, a regular file, in directories no
  other user can write (``check_trusted_path``); ``None`` if it does not exist.
- ``check_trusted_path(path, what, executable=...)``: the same for a program raidman runs (an
  alert program, sendmail), checked again right before each run.
- ``read_regular(path, what=...)``: any regular file's bytes (a plan file), bounded, never
  blocking on a FIFO.
- ``write_text(path, text, mode=0o600)``: atomic (temp + fsync + rename) in a checked directory;
  ``output=True`` for a directory the user named (see above).
- ``open_append(path)``: a descriptor for appending (the audit log), with the same checks.
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
MAX_TRUSTED_BYTES = 1 << 20  # hosts.toml: 500 hosts are ~20 KB


class StateFileError(Exception):
    """A state file or directory raidman refuses to use; ``str(e)`` is a one-line note."""


def _euid() -> int:
    return os.geteuid()


_WRITABLE = stat.S_IWGRP | stat.S_IWOTH
_OPEN_FLAGS = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC


def _kind(mode: int) -> str:
    for test, name in (
        (stat.S_ISLNK, "a symlink (raidman never follows one)"),
        (stat.S_ISFIFO, "a FIFO"),
        (stat.S_ISCHR, "a character device"),
        (stat.S_ISBLK, "a block device"),
        (stat.S_ISSOCK, "a socket"),
        (stat.S_ISDIR, "a directory"),
    ):
        if test(mode):
            return name
    return "not a regular file"


def _check_stat(
    path: Path | str,
    st: os.stat_result,
    what: str,
    want: int,
    *,
    owners: tuple[int, ...] | None = None,
    group_ok: bool = False,
) -> None:
    """``owners``: the uids allowed (default: the running user's); ``group_ok``: group- or
    other-writable is allowed (an existing file about to be replaced, never written into)."""
    if stat.S_ISLNK(st.st_mode):
        raise StateFileError(f"refused {what} {path}: it is a symlink (raidman never follows one)")
    if stat.S_IFMT(st.st_mode) != want:
        if want == stat.S_IFDIR:
            raise StateFileError(f"refused {what} {path}: not a directory")
        raise StateFileError(f"refused {what} {path}: {_kind(st.st_mode)}, not a regular file")
    euid = _euid()
    if st.st_uid not in (owners or (euid,)):
        by = "root or the running user" if owners and 0 in owners else "the running user"
        raise StateFileError(
            f"refused {what} {path}: owned by uid {st.st_uid}, not by {by} (uid {euid})"
        )
    if st.st_mode & _WRITABLE and not group_ok:
        raise StateFileError(
            f"refused {what} {path}: writable by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):04o}; fix with chmod go-w)"
        )


def check_dir(path: Path, what: str = "state directory") -> None:
    """The state directory must be a real directory of the running user, not group/other-writable,
    and no directory above it may let another user swap it (each is root's or ours, and not
    group/other-writable unless sticky, like /tmp)."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise StateFileError(f"cannot use {what} {path}: {e.strerror}") from e
    _check_stat(path, st, what, stat.S_IFDIR)
    _check_ancestors(path, what)


def _check_ancestors(path: Path, what: str = "state directory") -> None:
    for up in Path(os.path.realpath(path)).parents:
        try:
            st = os.stat(up)
        except OSError:
            continue
        _check_above(path, up, st, what)


def _check_above(path: Path | str, up: Path | str, st: os.stat_result, what: str) -> None:
    """A directory on the way to ``path``: root's or ours, and no one else can rename what is in
    it (not group/other-writable, or sticky as /tmp is)."""
    if st.st_uid not in (0, _euid()):
        raise StateFileError(f"refused {what} {path}: {up} above it belongs to uid {st.st_uid}")
    if st.st_mode & stat.S_ISVTX:
        return
    # a root directory writable by a system group (Ubuntu's /var/log is root:syslog 0775)
    # trusts that group with the whole system already
    system_group = st.st_uid == 0 and st.st_gid < 1000 and not st.st_mode & stat.S_IWOTH
    if st.st_mode & _WRITABLE and not system_group:
        raise StateFileError(
            f"refused {what} {path}: {up} above it is writable by group or others "
            f"(mode {stat.S_IMODE(st.st_mode):04o})"
        )


MAX_LINKS = 40  # the kernel's own limit on symlinks in one lookup (MAXSYMLINKS)


def check_trusted_path(path: Path | str, what: str, *, executable: bool = False) -> str:
    """``path`` if what it names can be trusted to decide what root runs (an alert program,
    sendmail, raidman.toml, hosts.toml, an ssh_config): every directory from / to it is root's
    or ours and not writable by anyone else (sticky excepted), every symlink on the way is
    root's or ours (and followed, the same check going on where it points), and the file is a
    regular file of root or ours, not group/other-writable (and executable, for a program).
    Returns the path with the symlinks resolved; raises ``StateFileError`` (a one-line note).

    Nothing is opened or run here: with no directory on the way writable by another user, what
    is checked cannot be swapped before it is used, so a caller checks right before each use."""
    text = os.fspath(path)
    if not text.startswith("/"):
        raise StateFileError(f"refused {what} {text}: not an absolute path")
    if text.endswith("/"):
        raise StateFileError(f"refused {what} {text}: not a file name")
    todo = [c for c in reversed(text.split("/")) if c and c != "."]
    cur, links = "/", 0
    try:
        _check_above(text, "/", os.stat("/"), what)
        while todo:
            name = todo.pop()
            if name == "..":
                cur = os.path.dirname(cur)  # cur holds no symlink: its parent was checked
                continue
            nxt = os.path.join(cur, name)
            st = os.lstat(nxt)
            if stat.S_ISLNK(st.st_mode):
                links += 1
                if links > MAX_LINKS or st.st_uid not in (0, _euid()):
                    why = "too many symlinks" if links > MAX_LINKS else f"uid {st.st_uid}'s"
                    raise StateFileError(f"refused {what} {text}: {nxt} is {why} symlink")
                target = os.readlink(nxt)
                if target.startswith("/"):
                    cur = "/"
                todo.extend(c for c in reversed(target.split("/")) if c and c != ".")
                continue
            if todo:
                if not stat.S_ISDIR(st.st_mode):
                    raise StateFileError(f"refused {what} {text}: {nxt} is not a directory")
                _check_above(text, nxt, st, what)
                cur = nxt
                continue
            _check_stat(text, st, what, stat.S_IFREG, owners=(0, _euid()))
            if executable and not st.st_mode & 0o111:
                raise StateFileError(f"refused {what} {text}: not executable")
            return nxt
    except OSError as e:
        raise StateFileError(f"cannot use {what} {text}: {e.strerror or e}") from None
    raise StateFileError(f"refused {what} {text}: not a file")


def check_file(path: Path, what: str = "state file") -> None:
    """An existing state file: a regular file (no symlink) of the running user, not g/o-writable."""
    try:
        st = os.lstat(path)
    except OSError as e:
        raise StateFileError(f"cannot use {what} {path}: {e.strerror}") from e
    _check_stat(path, st, what, stat.S_IFREG)


def ensure_dir(path: Path, what: str = "state directory") -> None:
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
            raise StateFileError(f"cannot create {what} {d}: {e.strerror}") from e
    check_dir(path, what)  # and every directory above it


def _open_nofollow(
    path: Path | str, flags: int, what: str, *, mode: int = 0o600, dir_fd: int | None = None
) -> int:
    """``os.open`` with ``O_NOFOLLOW|O_NONBLOCK`` (relative to ``dir_fd``: its name only); the
    symlink it met is a StateFileError naming ``path``."""
    try:
        name = os.path.basename(path) if dir_fd is not None else path
        return os.open(name, flags | _OPEN_FLAGS, mode, dir_fd=dir_fd)
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise StateFileError(
                f"refused {what} {path}: it is a symlink (raidman never follows one)"
            ) from e
        raise


def _open_regular(path: Path | str, what: str) -> int:
    """A read-only descriptor of a regular file: never follows a symlink, never blocks (a FIFO
    opened ``O_NONBLOCK`` returns at once and is then refused by ``fstat``)."""
    fd = _open_nofollow(path, os.O_RDONLY, what)
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise StateFileError(f"refused {what} {path}: {_kind(st.st_mode)}, not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def _read_fd(fd: int, path: Path | str, what: str, max_bytes: int) -> bytes:
    chunks: list[bytes] = []
    size = 0
    while size <= max_bytes:
        chunk = os.read(fd, min(1 << 20, max_bytes + 1 - size))
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    if size > max_bytes:
        raise StateFileError(f"refused {what} {path}: larger than {max_bytes} bytes")
    return b"".join(chunks)


def read_text(path: Path, *, max_bytes: int = MAX_STATE_BYTES) -> str | None:
    """The file's text, or ``None`` if it does not exist. Directory and file are checked first;
    the file is opened with ``O_NOFOLLOW`` and checked again through the open descriptor."""
    if os.path.lexists(path.parent):
        check_dir(path.parent)
    if not os.path.lexists(path):
        return None
    try:
        fd = _open_regular(path, "state file")
    except FileNotFoundError:
        return None
    except OSError as e:
        raise StateFileError(f"cannot read state file {path}: {e.strerror}") from e
    try:
        _check_stat(path, os.fstat(fd), "state file", stat.S_IFREG)
        data = _read_fd(fd, path, "state file", max_bytes)
    except OSError as e:
        raise StateFileError(f"cannot read state file {path}: {e.strerror}") from e
    finally:
        os.close(fd)
    return data.decode("utf-8", errors="replace")


def read_trusted(
    path: Path, *, what: str = "file", max_bytes: int = MAX_TRUSTED_BYTES
) -> str | None:
    """The text of a file raidman acts on (hosts.toml: its ``ssh_config`` is run by ssh), or
    ``None`` if it does not exist: a regular file (no symlink, FIFO or device; never blocks) of
    root or the running user, not writable by group or others, at most ``max_bytes``, and every
    directory from / to it root's or ours and not writable by others (:func:`check_trusted_path`:
    issue 37, another user renamed a file over a checked ssh_config in their directory)."""
    try:
        fd = _open_regular(path, what)
    except FileNotFoundError:
        return None
    except OSError as e:
        raise StateFileError(f"cannot read {what} {path}: {e.strerror}") from e
    try:
        st = os.fstat(fd)
        _check_stat(path, st, what, stat.S_IFREG, owners=(0, _euid()))
        # and every directory on the way: no one else could have put another file there
        real = os.stat(check_trusted_path(os.path.abspath(path), what))
        if (real.st_dev, real.st_ino) != (st.st_dev, st.st_ino):
            raise StateFileError(f"refused {what} {path}: it changed while it was read")
        data = _read_fd(fd, path, what, max_bytes)
    except OSError as e:
        raise StateFileError(f"cannot read {what} {path}: {e.strerror}") from e
    finally:
        os.close(fd)
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise StateFileError(f"refused {what} {path}: not UTF-8 text (byte {e.start})") from None


def read_regular(path: Path | str, *, what: str = "file", max_bytes: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes of a regular file, whoever owns it (a plan file: checked by
    its own loader, which sees a bigger file as bigger), never blocking on a FIFO or a device.
    Raises ``StateFileError`` or ``OSError`` (e.g. FileNotFoundError)."""
    fd = _open_regular(path, what)
    try:
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)


def read_beneath(
    root: Path, parts: list[str] | tuple[str, ...], *, what: str, max_bytes: int
) -> bytes:
    """Up to ``max_bytes + 1`` bytes of ``root/part/part/...`` (a file inside a capture): each
    directory opened relative to the one before with ``O_NOFOLLOW|O_DIRECTORY``, the file with
    ``O_NOFOLLOW|O_NONBLOCK``: a symlink anywhere below ``root`` is refused, not followed (a
    capture's ``files/etc`` linked to the real /etc read this machine's files, issue 37), a FIFO
    never waited on. Raises FileNotFoundError, IsADirectoryError, StateFileError, OSError."""
    if not parts or any(p in ("", ".", "..") or "/" in p for p in parts):
        raise StateFileError(f"refused {what} {root}/{'/'.join(parts)}: not a plain path")
    fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        for i, part in enumerate(parts[:-1]):
            try:
                nxt = os.open(part, os.O_RDONLY | os.O_DIRECTORY | _OPEN_FLAGS, dir_fd=fd)
            except OSError as e:
                if e.errno in (errno.ELOOP, errno.ENOTDIR):
                    inside = "/".join(parts[: i + 1])
                    raise StateFileError(
                        f"refused {what} {root}/{'/'.join(parts)}: {inside} is "
                        "not a directory (a symlink is never followed)"
                    ) from None
                raise
            os.close(fd)
            fd = nxt
        leaf = _open_nofollow(f"{root}/{'/'.join(parts)}", os.O_RDONLY, what, dir_fd=fd)
    finally:
        os.close(fd)
    try:
        st = os.fstat(leaf)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "a directory", "/".join(parts))
        if not stat.S_ISREG(st.st_mode):
            raise StateFileError(
                f"refused {what} {root}/{'/'.join(parts)}: {_kind(st.st_mode)}, not a regular file"
            )
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0 and (chunk := os.read(leaf, min(left, 1 << 20))):
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(leaf)


def _open_dir(d: Path, what: str, *, output: bool) -> int:
    """One descriptor for the directory every later step is relative to. A state directory is
    created and checked (:func:`ensure_dir`); an output directory must exist, and must not be
    world-writable unless sticky (anyone could then put a file where ours goes)."""
    if not output:
        ensure_dir(d, what.replace("file", "directory"))
    try:
        dfd = os.open(d, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as e:
        if e.errno in (errno.ELOOP, errno.ENOTDIR) and os.path.islink(d):
            raise StateFileError(
                f"refused directory {d}: it is a symlink (raidman never follows one)"
            ) from e
        raise StateFileError(f"cannot write {what} in {d}: {e.strerror}") from e
    try:
        st = os.fstat(dfd)
        if output:
            if st.st_mode & stat.S_IWOTH and not st.st_mode & stat.S_ISVTX:
                raise StateFileError(
                    f"refused directory {d}: writable by everyone "
                    f"(mode {stat.S_IMODE(st.st_mode):04o}); raidman does not write {what}s there"
                )
        else:
            _check_stat(d, st, what.replace("file", "directory"), stat.S_IFDIR)
    except BaseException:
        os.close(dfd)
        raise
    return dfd


def write_text(
    path: Path,
    text: str | bytes,
    *,
    mode: int = 0o600,
    what: str = "state file",
    output: bool = False,
) -> None:
    """Write atomically: a new temporary file in the same (checked) directory, fsync, rename over
    ``path``, each step relative to one descriptor of the directory. An existing ``path`` that is
    not a regular file of the running user (a symlink, a FIFO, another user's file) is refused,
    not replaced. ``output``: ``path``'s directory is one the user named (see the module doc)."""
    path = Path(path)
    data = text.encode("utf-8", errors="backslashreplace") if isinstance(text, str) else text
    name = path.name
    if not name or name in (".", ".."):
        raise StateFileError(f"refused {what} {path}: not a file name")
    dfd = _open_dir(path.parent, what, output=output)
    try:
        try:
            st = os.stat(name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:  # about to be replaced, never written into: its mode does not matter
            _check_stat(path, st, what, stat.S_IFREG, group_ok=output)
        _replace(dfd, path, data, mode, what)
    except OSError as e:
        raise StateFileError(f"cannot write {what} {path}: {e.strerror or e}") from e
    finally:
        os.close(dfd)


def _replace(dfd: int, path: Path, data: bytes, mode: int, what: str) -> None:
    for n in range(100):
        tmp = f".{path.name}.tmp-{os.getpid()}-{n}"
        try:
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
            fd = os.open(tmp, flags, mode, dir_fd=dfd)
            break
        except FileExistsError:
            continue
    else:
        raise StateFileError(f"cannot write {what} {path}: no free temporary name")
    try:
        try:
            os.fchmod(fd, mode)  # the umask does not decide who can read it
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path.name, src_dir_fd=dfd, dst_dir_fd=dfd)
    except BaseException:
        with _quiet():
            os.unlink(tmp, dir_fd=dfd)
        raise
    with _quiet():
        os.fsync(dfd)


def open_append(path: Path, *, what: str = "state file", mode: int = 0o600) -> int:
    """A descriptor to append to ``path`` (created ``mode`` if missing) in a checked state
    directory: ``O_APPEND|O_NOFOLLOW|O_NONBLOCK`` (a FIFO never blocks), then ``fstat``: a
    regular file of root or the running user, not group/other-writable, with one name only (a
    hard link to another file is not appended to). Raises ``StateFileError``."""
    path = Path(path)
    dfd = _open_dir(path.parent, what, output=False)
    try:
        try:
            st = os.stat(path.name, dir_fd=dfd, follow_symlinks=False)
        except FileNotFoundError:
            pass
        else:  # refuse a FIFO or a device before opening it at all
            _check_stat(path, st, what, stat.S_IFREG, owners=(0, _euid()))
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT
        fd = _open_nofollow(path, flags, what, mode=mode, dir_fd=dfd)
    except OSError as e:
        raise StateFileError(f"cannot write {what} {path}: {e.strerror or e}") from e
    finally:
        os.close(dfd)
    try:
        st = os.fstat(fd)
        _check_stat(path, st, what, stat.S_IFREG, owners=(0, _euid()))
        if st.st_nlink != 1:
            raise StateFileError(f"refused {what} {path}: it has {st.st_nlink} hard links")
    except BaseException:
        os.close(fd)
        raise
    return fd


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


def read_owned(path: Path | str, *, what: str = "file", max_bytes: int) -> bytes:
    """Up to ``max_bytes + 1`` bytes of a file raidman acts on with root's rights (a plan file
    ``apply`` runs): a regular file (no symlink, FIFO or device; never blocks) of root or the
    running user, not writable by group or others, in directories no other user can change
    (each root's or ours, not group/other-writable unless sticky). Raises ``StateFileError``
    or ``OSError``."""
    fd = _open_regular(path, what)
    try:
        _check_stat(path, os.fstat(fd), what, stat.S_IFREG, owners=(0, _euid()))
        _check_ancestors(Path(path), what)
        chunks: list[bytes] = []
        left = max_bytes + 1
        while left > 0:
            chunk = os.read(fd, min(left, 1 << 20))
            if not chunk:
                break
            chunks.append(chunk)
            left -= len(chunk)
        return b"".join(chunks)
    finally:
        os.close(fd)
