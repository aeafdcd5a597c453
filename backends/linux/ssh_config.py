"""The ssh_config hosts.toml names, as every ssh start uses it (issue 37, item 2).

ssh reads a ``-F`` file again at each start and checks nothing about who could have written it.
raidman checked the file once, when hosts.toml was read: another user who could write its
directory renamed a file with a ``ProxyCommand`` over it afterwards, and it ran as root at the
next reconnect. Now:

- the file is read once as a trusted file (``statefiles.read_trusted``: root's or ours, not
  group/other-writable, and so is every directory from / to it) and ssh is given a private copy
  of what was read, in the ControlMaster directory (ours, 0700, in directories no other user can
  write), checked again before each start: what ssh reads is what was checked;
- ``Include`` is refused (ssh would read another file at each start);
- the programs and libraries it has ssh run (``ProxyCommand``, ``LocalCommand``,
  ``KnownHostsCommand``, ``Match exec``, ``XAuthLocation``, ``PKCS11Provider``,
  ``SecurityKeyProvider``) are checked before each start along their whole path
  (``statefiles.check_trusted_path``); a program that cannot be named (``%`` tokens, ``$``) is
  refused. ssh runs such commands through ``$SHELL -c``: ssh gets ``SHELL=/bin/sh``
  (:func:`ssh_environment`).

Not checked: what a checked program itself runs (``ProxyCommand sh -c '...'`` checks /bin/sh),
and the files ssh only reads (``IdentityFile``, known hosts).
"""

from __future__ import annotations

import hashlib
import os
import shlex
import shutil
from dataclasses import dataclass
from pathlib import Path

from app import statefiles
from app.statefiles import StateFileError, check_trusted_path

MAX_BYTES = 256 * 1024
COMMANDS = frozenset({"proxycommand", "localcommand", "knownhostscommand"})
PROGRAMS = frozenset({"xauthlocation"})
LIBRARIES = frozenset({"pkcs11provider", "securitykeyprovider"})
SHELL = "/bin/sh"


class SshConfigError(ValueError):
    """The ssh_config cannot be used (one line for the user)."""


def ssh_environment() -> dict[str, str]:
    """ssh's environment: ours, with ``SHELL=/bin/sh`` (ssh runs a ProxyCommand through
    ``$SHELL -c``: a shell of the invoking user's choosing would run as root)."""
    env = dict(os.environ)
    env["SHELL"] = SHELL
    return env


def _words(line: str) -> list[str]:
    """``Keyword value...`` or ``Keyword=value`` as ssh splits it (quotes kept together)."""
    key, sep, rest = line.partition("=")
    if sep and key.strip() and " " not in key.strip() and "\t" not in key.strip():
        return [key.strip(), *shlex.split(rest, comments=False)]
    return shlex.split(line, comments=False)


def _program(where: str, directive: str, command: str) -> str | None:
    """The program a command line starts (None: ``none``/empty); SshConfigError when it cannot
    be named (so it cannot be checked)."""
    try:
        words = shlex.split(command)
    except ValueError as e:
        raise SshConfigError(f"{where}: {directive}: {e}") from None
    while words and (words[0] == "exec" or ("=" in words[0] and "/" not in words[0])):
        words = words[1:]  # `exec prog`, `VAR=x prog`
    if not words or words[0].lower() == "none":
        return None
    prog = words[0]
    if any(c in prog for c in "%$`\\;|&<>(){}*?[]~"):
        raise SshConfigError(
            f"{where}: {directive} runs {prog[:60]!r}, a program raidman cannot check "
            "(name it by its path)"
        )
    return prog


@dataclass(frozen=True)
class CheckedSshConfig:
    """An ssh_config as read and checked once; :meth:`use` before each ssh start."""

    source: str
    text: str
    programs: tuple[tuple[str, str], ...] = ()  # (directive, program: a path or a name)
    libraries: tuple[tuple[str, str], ...] = ()

    @classmethod
    def from_text(cls, source: str, text: str) -> CheckedSshConfig:
        programs: list[tuple[str, str]] = []
        libraries: list[tuple[str, str]] = []
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.strip()
            if not line or line.startswith("#"):
                continue
            where = f"ssh_config {source}, line {n}"
            try:
                words = _words(line)
            except ValueError as e:
                raise SshConfigError(f"{where}: {e}") from None
            if not words:
                continue
            key, args = words[0].lower(), words[1:]
            # a command is the rest of the line as written (ssh hands it to the shell whole)
            raw = line[len(words[0]) :].lstrip(" \t").removeprefix("=").lstrip(" \t")
            if key == "include":
                raise SshConfigError(
                    f"{where}: Include is not used by raidman (ssh would read that file at "
                    "each start, unchecked): put its lines in this file"
                )
            if key in COMMANDS or key in PROGRAMS:
                prog = _program(where, words[0], raw)
                if prog is not None:
                    programs.append((words[0], prog))
            elif key in LIBRARIES and args and args[0].lower() not in ("none", "internal"):
                libraries.append((words[0], args[0]))
            elif key == "match":
                for i, a in enumerate(args[:-1]):
                    if a.lower() == "exec":
                        prog = _program(where, "Match exec", args[i + 1])
                        if prog is not None:
                            programs.append(("Match exec", prog))
        return cls(source, text, tuple(programs), tuple(libraries))

    def use(self, directory: str | os.PathLike[str]) -> str:
        """Before an ssh start: the programs and libraries checked again, and the path of the
        private copy in ``directory`` (written when missing or not what was read). Raises
        SshConfigError."""
        try:
            for directive, prog in self.programs:
                path = prog if "/" in prog else shutil.which(prog)
                if path is None:
                    raise SshConfigError(
                        f"ssh_config {self.source}: {directive} runs {prog}, not found on PATH"
                    )
                check_trusted_path(os.path.abspath(path), f"{directive} program", executable=True)
            for directive, lib in self.libraries:
                check_trusted_path(lib, f"{directive} library")
            copy = Path(directory) / f"config-{hashlib.sha256(self.text.encode()).hexdigest()[:16]}"
            if statefiles.read_text(copy) != self.text:
                statefiles.write_text(copy, self.text, mode=0o600, what="ssh_config copy")
        except StateFileError as e:
            raise SshConfigError(f"ssh_config {self.source}: {e}") from None
        return str(copy)


def load_ssh_config(path: str) -> CheckedSshConfig:
    """Read ``path`` as a trusted file and check it (SshConfigError: refused, or missing)."""
    try:
        text = statefiles.read_trusted(Path(path), what="ssh_config file", max_bytes=MAX_BYTES)
    except StateFileError as e:
        raise SshConfigError(str(e)) from None
    if text is None:
        raise SshConfigError(f"ssh_config {path} does not exist")
    return CheckedSshConfig.from_text(path, text)


def check_ssh(ssh: str = "ssh") -> None:
    """The ssh that will start is root's or ours along its whole path (PATH may name a
    directory another user can write); FileNotFoundError when there is none."""
    path = shutil.which(ssh)
    if path is None:
        raise FileNotFoundError(ssh)
    try:
        check_trusted_path(os.path.abspath(path), "ssh program", executable=True)
    except StateFileError as e:
        raise SshConfigError(str(e)) from None
