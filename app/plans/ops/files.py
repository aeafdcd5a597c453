"""Operations on system files and services: the steps of a whole-file edit (compare, back up,
copy, write, verify, rename), an ARRAY line appended to mdadm.conf, the settings files kept at
boot, the check schedule's drop-in, systemd units and the initramfs.

Which file each may touch comes from ``app.plans.ops.system_files``; whether the steps of one
edit come in a safe order and the new text is the old one changed only as raidman changes it
is a plan-level guard (``app.plans.guards.file_edits``)."""

from __future__ import annotations

from dataclasses import dataclass

from app.plans.ops.base import MD_DEV, Op, OpError, shown
from app.plans.ops.system_files import (
    BACKUP_NAME,
    DROPIN,
    DROPIN_DIR,
    EDITED,
    FSTAB,
    MDADM_CONF,
    MONITOR_SERVICE,
    PERSIST_BY_PATH,
    new_name,
    text_problem,
    write_target_problem,
)
from app.plans.shapes import array_line_problem

UNITS = {
    ("enable", "fstrim.timer"),
    ("enable", "mdmonitor.service"),
    ("daemon-reload", ""),
    ("try-restart", MONITOR_SERVICE),
}


def _edited(path: str, what: str) -> None:
    if path not in EDITED:
        raise OpError(f"{what}: {shown(path)} is not a file raidman edits")


@dataclass(frozen=True, slots=True)
class CompareFile(Op):
    """``cmp PATH -`` with the text the plan was made from: cmp exits 1 when the file changed
    since (a plan saved and applied later, or run twice), and the run stops before anything is
    written."""

    KIND = "file-compare"
    path: str
    text: str

    def __post_init__(self) -> None:
        _edited(self.path, "cmp")
        bad = text_problem(self.text, f"cmp {self.path}")
        if bad is not None:
            raise OpError(bad)

    def argv(self) -> tuple[str, ...]:
        return ("cmp", self.path, "-")

    def stdin(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class BackupFile(Op):
    """``cp -p PATH BACKUP``: the file as it is kept, owner and mode too."""

    KIND = "file-backup"
    path: str
    backup: str

    def __post_init__(self) -> None:
        _edited(self.path, "cp")
        m = BACKUP_NAME.fullmatch(self.backup) if isinstance(self.backup, str) else None
        if m is None or m.group(1) != self.path:
            raise OpError(f"cp: {shown(self.backup)} is not {self.path}'s backup name")

    def argv(self) -> tuple[str, ...]:
        return ("cp", "-p", self.path, self.backup)


@dataclass(frozen=True, slots=True)
class CopyFile(Op):
    """``cp -p PATH PATH.raidman-new``: the copy the new text goes to (owner and mode kept)."""

    KIND = "file-copy"
    path: str

    def __post_init__(self) -> None:
        _edited(self.path, "cp")

    def argv(self) -> tuple[str, ...]:
        return ("cp", "-p", self.path, new_name(self.path))


@dataclass(frozen=True, slots=True)
class WriteFile(Op):
    """``tee PATH`` with the whole text: a copy being edited, a settings file's temporary name,
    the check schedule's drop-in. Never an edited file itself: its new text goes to the copy
    (``ReplaceFile`` renames it over the file, ``OverwriteFile`` copies it into it)."""

    KIND = "file-write"
    path: str
    text: str

    def __post_init__(self) -> None:
        bad = write_target_problem(self.path, self.text) if isinstance(self.path, str) else "?"
        if bad is not None:
            raise OpError(bad)

    def argv(self) -> tuple[str, ...]:
        return ("tee", self.path)

    def stdin(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class VerifyFstab(Op):
    """``findmnt --verify --tab-file PATH.raidman-new``: every line parsed, sources, targets and
    types checked before the new fstab is kept."""

    KIND = "fstab-verify"

    def argv(self) -> tuple[str, ...]:
        return ("findmnt", "--verify", "--tab-file", new_name(FSTAB))


@dataclass(frozen=True, slots=True)
class ReplaceFile(Op):
    """``mv [-f] TEMP PATH``: the new text renamed over the file in one step (a reader sees the
    old file or the new one, never half)."""

    KIND = "file-replace"
    path: str
    force: bool = False  # the settings files' ``mv -f``

    def __post_init__(self) -> None:
        if self.path in PERSIST_BY_PATH:
            if not self.force:
                raise OpError(f"mv: {self.path} is renamed over with -f")
        elif self.path not in EDITED or self.force:
            raise OpError(f"mv: {shown(self.path)} is not a file raidman replaces")

    @property
    def temp(self) -> str:
        f = PERSIST_BY_PATH.get(self.path)
        return f.temp if f is not None else new_name(self.path)

    def argv(self) -> tuple[str, ...]:
        return ("mv", *(("-f",) if self.force else ()), self.temp, self.path)


@dataclass(frozen=True, slots=True)
class OverwriteFile(Op):
    """``cp PATH.raidman-new PATH``: the checked copy written into the file itself, for a file
    that is a mount point (a container's or virtme-ng's bind-mounted /etc/fstab): rename(2)
    onto a mount point fails with EBUSY (fs/namei.c ``vfs_rename``: ``is_local_mountpoint``
    of either dentry). cp opens the file it exists as (O_TRUNC), so the file keeps its inode,
    owner and mode; a reader may see it half-written, which is why the backup comes first."""

    KIND = "file-overwrite"
    path: str

    def __post_init__(self) -> None:
        _edited(self.path, "cp")

    def argv(self) -> tuple[str, ...]:
        return ("cp", new_name(self.path), self.path)


@dataclass(frozen=True, slots=True)
class RemoveCopy(Op):
    """``rm -f PATH.raidman-new``: the checked copy removed once ``OverwriteFile`` has written
    it into the file (a rename leaves no copy behind; a copy written in place would stay)."""

    KIND = "file-copy-remove"
    path: str

    def __post_init__(self) -> None:
        _edited(self.path, "rm")

    def argv(self) -> tuple[str, ...]:
        return ("rm", "-f", new_name(self.path))


@dataclass(frozen=True, slots=True)
class RemoveFile(Op):
    """``rm -f PATH``: a settings file or the check schedule's drop-in."""

    KIND = "file-remove"
    path: str

    def __post_init__(self) -> None:
        if self.path not in PERSIST_BY_PATH and self.path != DROPIN:
            raise OpError(f"rm: {shown(self.path)} is not a file raidman removes")

    def argv(self) -> tuple[str, ...]:
        return ("rm", "-f", self.path)


@dataclass(frozen=True, slots=True)
class MakeDropinDir(Op):
    """``mkdir -p`` the monitor service's drop-in directory."""

    KIND = "mkdir-dropin"

    def argv(self) -> tuple[str, ...]:
        return ("mkdir", "-p", DROPIN_DIR)


@dataclass(frozen=True, slots=True)
class AppendConfLine(Op):
    """``tee -a CONF`` with one line: an ARRAY line as mdadm prints it, or ``MAILADDR root``."""

    KIND = "mdadm-conf-append"
    conf: str
    line: str

    def __post_init__(self) -> None:
        if self.conf not in MDADM_CONF:
            raise OpError(f"tee -a: {shown(self.conf)} is not mdadm.conf")
        if not isinstance(self.line, str) or "\n" in self.line:
            raise OpError("mdadm.conf: one line is appended (an ARRAY line, or MAILADDR root)")
        if self.line != "MAILADDR root":
            bad = array_line_problem(self.line)
            if bad is not None:
                raise OpError(f"mdadm.conf: {bad}")

    def argv(self) -> tuple[str, ...]:
        return ("tee", "-a", self.conf)

    def stdin(self) -> str:
        return self.line + "\n"


@dataclass(frozen=True, slots=True)
class AppendArrayFromDetail(Op):
    """``mdadm --detail --brief ARRAY | tee -a CONF``: the ARRAY line of an array this plan
    creates (its UUID exists only then); what mdadm prints is checked before it is appended
    (``piped_problem``)."""

    KIND = "mdadm-conf-append-detail"
    conf: str
    array_path: str

    def __post_init__(self) -> None:
        if self.conf not in MDADM_CONF:
            raise OpError(f"tee -a: {shown(self.conf)} is not mdadm.conf")
        if MD_DEV.fullmatch(self.array_path or "") is None:
            raise OpError(f"mdadm --detail --brief: {shown(self.array_path)} is not an md path")

    def argv(self) -> tuple[str, ...]:
        return ("tee", "-a", self.conf)

    def stdin_from(self) -> tuple[str, ...]:
        return ("mdadm", "--detail", "--brief", self.array_path)

    def names(self) -> tuple[str, ...]:
        return (self.array_path,)

    @staticmethod
    def piped_problem(text: str) -> str | None:
        """None when ``text`` (what mdadm printed) is ARRAY lines only (an array name from a
        disk's superblock is not trusted to stay on one line)."""
        lines = text.splitlines()
        if not lines:
            return "mdadm.conf: the ARRAY line to append is empty"
        for line in lines:
            bad = array_line_problem(line)
            if bad is not None:
                return f"mdadm.conf: {shown(line)}: {bad}"
        return None


@dataclass(frozen=True, slots=True)
class Systemd(Op):
    """``systemctl enable --now UNIT``, ``systemctl daemon-reload``, ``systemctl try-restart``
    of raidman's monitor."""

    KIND = "systemd"
    action: str
    unit: str = ""

    def __post_init__(self) -> None:
        if (self.action, self.unit) not in UNITS:
            raise OpError(f"systemctl {shown(self.action)} {shown(self.unit)} is not planned")

    def argv(self) -> tuple[str, ...]:
        if self.action == "enable":
            return ("systemctl", "enable", "--now", self.unit)
        if self.action == "daemon-reload":
            return ("systemctl", "daemon-reload")
        return ("systemctl", self.action, self.unit)


@dataclass(frozen=True, slots=True)
class UpdateInitramfs(Op):
    """``update-initramfs -u`` (Debian) or ``dracut -f``: the initramfs carries its own copy of
    mdadm.conf, which assembles the arrays at boot."""

    KIND = "initramfs"
    tool: str = "update-initramfs"

    def __post_init__(self) -> None:
        if self.tool not in ("update-initramfs", "dracut"):
            raise OpError(f"{shown(self.tool)} is not an initramfs tool raidman runs")

    def argv(self) -> tuple[str, ...]:
        return ("update-initramfs", "-u") if self.tool == "update-initramfs" else ("dracut", "-f")
