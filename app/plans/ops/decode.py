"""A step's argv (with its stdin or piped producer) back into the operation it renders: the one
place that reads an argv by position. A plan file is decoded here once, when it is read; what
does not decode is refused with the reason (``OpError``), and nothing else in raidman looks at
an argv again. ``decode(op.argv(), op.stdin(), op.stdin_from()) == op`` for every operation
raidman makes (tests/plans/test_ops.py)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

from app.escape import escape_controls
from app.plans.ops import disk_tests, files, lvm_raid, md, sanitize, storage, tunables
from app.plans.ops.base import Op, OpError, shown
from app.plans.ops.system_files import (
    DROPIN_DIR,
    EDITED,
    FSTAB,
    MDADM_CONF,
    PERSIST_BY_PATH,
    new_name,
)

Argv = tuple[str, ...]
_MD_SYSFS = re.compile(r"/sys/block/([^/]+)/md/([a-z_]+)")
_SCHED_SYSFS = re.compile(r"/sys/block/([^/]+)/queue/scheduler")
_CREATE_FLAGS = ("--run", "--assume-clean")
_CREATE_VALUES = (
    "--level",
    "--raid-devices",
    "--spare-devices",
    "--chunk",
    "--layout",
    "--bitmap",
    "--metadata",
    "--name",
)


def _int(text: str, what: str) -> int:
    if not (text.isascii() and text.isdigit()) or len(text) > 20:
        raise OpError(f"{what}: {shown(text)} is not a number")
    return int(text)


def _value(stdin: str | None, what: str) -> str:
    """The one value a sysfs write takes on stdin ("check\\n")."""
    if stdin is None:
        raise OpError(f"{what}: needs its value on stdin")
    if stdin.count("\n") > 1 or (stdin and not stdin.endswith("\n")):
        raise OpError(f"{what}: {shown(stdin)} is not one value")
    return stdin.removesuffix("\n")


def _create(a: Argv) -> Op:
    path = a[0] if a else ""
    opts = [x for x in a[1:] if x.startswith("-")]
    devs = [x for x in a[1:] if not x.startswith("-")]
    if tuple(a[1 : 1 + len(opts)]) != tuple(opts):
        raise OpError("mdadm --create: options must come before the member devices")
    seen: dict[str, str] = {}
    for o in opts:
        k, eq, v = o.partition("=")
        if k in seen:
            raise OpError("mdadm --create: an option is given twice")
        if (k in _CREATE_FLAGS and not eq) or (k in _CREATE_VALUES and eq):
            seen[k] = v
        else:
            raise OpError(f"mdadm --create: option {shown(o)} is not one raidman plans")
    if "--level" not in seen or "--raid-devices" not in seen:
        raise OpError("mdadm --create needs --level and --raid-devices")
    n = _int(seen["--raid-devices"], "mdadm --create: --raid-devices")
    s = _int(seen.get("--spare-devices", "0"), "mdadm --create: --spare-devices")
    if len(devs) != n + s or not devs:
        raise OpError(f"mdadm --create: {len(devs)} devices for --raid-devices={n} + {s} spares")
    order = list(seen)
    return md.CreateArray(
        path=path,
        level=seen["--level"],
        devices=tuple(devs[:n]),
        spares=tuple(devs[n:]),
        chunk=seen.get("--chunk"),
        layout=seen.get("--layout"),
        bitmap=seen.get("--bitmap"),
        metadata=seen.get("--metadata"),
        name=seen.get("--name"),
        run="--run" in seen,
        assume_clean="--assume-clean" in seen,
        run_first="--run" in seen and order.index("--run") < order.index("--level"),
    )


def _grow(a: Argv) -> Op:
    if len(a) < 2:
        raise OpError("mdadm --grow: an array and what to change")
    path, rest = a[0], a[1:]
    if rest[0].startswith("--raid-devices=") and len(rest) <= 2:
        backup = None
        if len(rest) == 2:
            if not rest[1].startswith("--backup-file="):
                raise OpError(f"mdadm --grow: {shown(rest[1])} is not an option raidman plans")
            backup = rest[1].removeprefix("--backup-file=")
        n = _int(rest[0].removeprefix("--raid-devices="), "mdadm --grow: --raid-devices")
        return md.GrowDevices(path, n, backup)
    if rest[0].startswith("--bitmap=") and len(rest) <= 2:
        chunk = None
        if len(rest) == 2:
            m = re.fullmatch(r"--bitmap-chunk=([0-9]{1,9})K", rest[1])
            if m is None:
                raise OpError(f"mdadm --grow: {shown(rest[1])} is not an option raidman plans")
            chunk = int(m.group(1))
        return md.SetBitmap(path, rest[0].removeprefix("--bitmap="), chunk)
    raise OpError(f"mdadm --grow: {shown(' '.join(rest))} is not a change raidman plans")


_MANAGE: dict[str, Callable[[str, str], Op]] = {
    "--add": lambda arr, dev: md.AddMember(arr, dev),
    "--add-spare": lambda arr, dev: md.AddMember(arr, dev, spare=True),
    "--fail": md.FailMember,
    "--remove": md.RemoveMember,
    "--re-add": md.ReAddMember,
}


def _mdadm(a: Argv) -> Op:
    if a[:1] == ("--create",):
        return _create(a[1:])
    if a[:1] == ("--grow",):
        return _grow(a[1:])
    if a == ("--monitor", "--scan", "--oneshot", "--test"):
        return md.TestAlerts()
    if len(a) == 2 and a[0] == "--stop":
        return md.StopArray(a[1])
    if a == ("--assemble", "--scan"):
        return md.Assemble()
    if len(a) == 3 and a[0] == "--assemble":
        if not a[2].startswith("--uuid="):
            raise OpError("mdadm --assemble: MD --uuid=8:8:8:8 hex, or --scan")
        return md.Assemble(a[1], a[2].removeprefix("--uuid="))
    if len(a) >= 2 and a[0] == "--zero-superblock":
        return md.ZeroSuperblock(tuple(a[1:]))
    if len(a) == 3 and a[1] in _MANAGE:
        return _MANAGE[a[1]](a[0], a[2])
    if len(a) == 5 and a[1] == "--replace" and a[3] == "--with":
        return md.ReplaceMember(a[0], a[2], a[4])
    raise OpError("this mdadm command is not one raidman plans")


def _tee(a: Argv, stdin: str | None, stdin_from: Argv | None) -> Op:
    if len(a) == 2 and a[0] == "-a":
        if a[1] not in MDADM_CONF:
            raise OpError(f"tee -a: {shown(a[1])} is not mdadm.conf")
        if stdin_from is not None:
            f = stdin_from
            if len(f) == 4 and f[:3] == ("mdadm", "--detail", "--brief"):
                return files.AppendArrayFromDetail(a[1], f[3])
            raise OpError("mdadm.conf may only be fed from mdadm --detail --brief MD")
        text = stdin or ""
        lines = text.splitlines()
        if len(lines) != 1 or text != lines[0] + "\n":
            raise OpError("mdadm.conf: one line is appended (an ARRAY line, or MAILADDR root)")
        return files.AppendConfLine(a[1], lines[0])
    if stdin_from is not None:
        raise OpError("tee: only mdadm.conf takes a piped input")
    if len(a) != 1:
        raise OpError(f"tee {shown(' '.join(a))}: not a file raidman writes")
    m = _MD_SYSFS.fullmatch(a[0])
    if m is not None:
        md_name, attr = m.groups()
        v = _value(stdin, attr)
        if attr == "sync_action":
            return tunables.SetSyncAction(md_name, v)
        if attr in ("sync_speed_min", "sync_speed_max"):
            bound = "min" if attr.endswith("min") else "max"
            kib = None if v == "system" else _int(v, attr)
            return tunables.SetArraySpeed(md_name, bound, kib)
        if attr == "stripe_cache_size":
            return tunables.SetStripeCache(md_name, _int(v, attr))
        if attr == "sync_min":
            return tunables.SetSyncMin(md_name, _int(v, attr))
        raise OpError(f"tee: md/{shown(attr)} is not an attribute raidman writes")
    m = _SCHED_SYSFS.fullmatch(a[0])
    if m is not None:
        return tunables.SetScheduler(m.group(1), _value(stdin, "scheduler"))
    m = disk_tests.ENCLOSURE_LED.fullmatch(a[0])
    if m is not None:
        v = _value(stdin, m.group(3))
        if v not in ("0", "1"):
            raise OpError(f"tee: an enclosure LED takes 1 or 0, not {shown(v)}")
        return disk_tests.EnclosureLed(m.group(1), m.group(2), m.group(3), v == "1")
    if stdin is None:
        raise OpError(f"tee {shown(a[0])}: needs the whole file on stdin")
    return files.WriteFile(a[0], stdin)


def _sysctl(a: Argv) -> Op:
    m = (
        re.fullmatch(r"dev\.raid\.speed_limit_(min|max)=([0-9]{1,10})", a[1])
        if len(a) == 2
        else None
    )
    if a[:1] != ("-w",) or m is None:
        raise OpError("sysctl: raidman sets only dev.raid.speed_limit_min/max")
    return tunables.SetSystemSpeed("min" if m.group(1) == "min" else "max", int(m.group(2)))


def _mkfs_tail(rest: Argv, what: str) -> tuple[str | None, str]:
    """(label, device) from ``[-L LABEL] DEV``."""
    if len(rest) == 3 and rest[0] == "-L":
        return rest[1], rest[2]
    if len(rest) == 1:
        return None, rest[0]
    raise OpError(f"{what}: the target must be one device path")


def _ext4(a: Argv) -> Op:
    if len(a) < 3 or a[0] != "-b" or not a[1].isdigit():
        raise OpError(
            "mkfs.ext4: not the shape raidman plans (-b SIZE [-E stride=..] [-L LABEL] DEV)"
        )
    rest, stride, width = a[2:], None, None
    if len(rest) >= 2 and rest[0] == "-E":
        stride, width = _stride(rest[1], "mkfs.ext4")
        rest = rest[2:]
    label, dev = _mkfs_tail(rest, "mkfs.ext4")
    return storage.MakeExt4(dev, _int(a[1], "mkfs.ext4 -b"), stride, width, label)


def _stride(text: str, what: str) -> tuple[int, int]:
    m = re.fullmatch(r"stride=([0-9]{1,9}),stripe_width=([0-9]{1,9})", text)
    if m is None:
        raise OpError(f"{what} -E {shown(text)} is not one raidman plans")
    return int(m.group(1)), int(m.group(2))


def _xfs(a: Argv) -> Op:
    rest: Argv = a
    su = sw = ag = None
    if len(rest) >= 2 and rest[0] == "-d":
        m = re.fullmatch(
            r"su=([0-9]{1,9}[kmgKMG]?),sw=([0-9]{1,4})(?:,agcount=([0-9]{1,4}))?", rest[1]
        )
        if m is None:
            raise OpError(f"mkfs.xfs -d {shown(rest[1])} is not one raidman plans")
        su, sw = m.group(1), int(m.group(2))
        ag = int(m.group(3)) if m.group(3) else None
        rest = rest[2:]
    label, dev = _mkfs_tail(rest, "mkfs.xfs")
    return storage.MakeXfs(dev, su, sw, ag, label)


def _pvcreate(a: Argv) -> Op:
    if len(a) == 3 and a[0] == "--dataalignment":
        return storage.PvCreate(a[2], a[1])
    if len(a) == 1:
        return storage.PvCreate(a[0])
    raise OpError("pvcreate: not the shape raidman plans ([--dataalignment SIZE] DEV)")


def _lvcreate(a: Argv) -> Op:
    if len(a) == 6 and a[:2] == ("--yes", "--name") and a[3] in ("--extents", "--size"):
        if a[3] == "--extents":
            return storage.LvCreate(a[5], a[2], extents=a[4])
        return storage.LvCreate(a[5], a[2], size=a[4])
    raise OpError("lvcreate: not the shape raidman plans (--yes --name LV --extents|--size N VG)")


_RATE_FLAGS = ("--minrecoveryrate", "--maxrecoveryrate")


def _kib_rate(v: str, flag: str) -> int:
    """ "512K" -> 512, "0" -> 0 (the forms LvRecoveryRate writes); OpError otherwise."""
    n = v[:-1] if v.endswith("K") else v if v == "0" else ""
    if not (n.isascii() and n.isdigit()) or len(n) > 10:
        raise OpError(f"lvchange {flag}: {v[:20]!r} is not N K (KiB/s) or 0")
    return int(n)


def _lvchange(a: Argv) -> Op:
    if len(a) == 3 and a[0] == "--syncaction":
        vg, lv = lvm_raid.split_lv(a[2], "lvchange --syncaction")
        return lvm_raid.LvSyncAction(vg, lv, a[1])
    if len(a) in (3, 5) and a[0] in _RATE_FLAGS:
        rates: dict[str, int] = {}
        for flag, value in zip(a[:-1:2], a[1:-1:2], strict=True):
            if flag not in _RATE_FLAGS or flag in rates or (rates and flag == _RATE_FLAGS[0]):
                raise OpError("lvchange: --minrecoveryrate N, then --maxrecoveryrate N, then VG/LV")
            rates[flag] = _kib_rate(value, flag)
        vg, lv = lvm_raid.split_lv(a[-1], "lvchange --*recoveryrate")
        return lvm_raid.LvRecoveryRate(
            vg, lv, rates.get("--minrecoveryrate"), rates.get("--maxrecoveryrate")
        )
    raise OpError(
        "lvchange: not the shape raidman plans (--syncaction check|repair VG/LV, "
        "[--minrecoveryrate NK] [--maxrecoveryrate NK] VG/LV)"
    )


def _lvconvert(a: Argv) -> Op:
    if len(a) >= 3 and a[:2] == ("--yes", "--repair"):
        vg, lv = lvm_raid.split_lv(a[2], "lvconvert --repair")
        return lvm_raid.LvRepair(vg, lv, tuple(a[3:]))
    if len(a) >= 4 and a[:2] == ("--yes", "--replace"):
        vg, lv = lvm_raid.split_lv(a[3], "lvconvert --replace")
        return lvm_raid.LvReplace(vg, lv, a[2], tuple(a[4:]))
    raise OpError(
        "lvconvert: not the shape raidman plans (--yes --repair VG/LV [PV...], "
        "--yes --replace PV VG/LV [PV...])"
    )


def _fio(a: Argv) -> Op:
    opts: dict[str, str] = {}
    for x in a:
        k, _, v = x.partition("=")
        if not k.startswith("--") or k[2:] in opts:
            raise OpError("fio: not the benchmark run raidman plans")
        opts[k[2:]] = v
    if opts.get("name") == "raidman-qualify":
        return _fio_surface(opts)
    if opts.get("name") == "raidman-locate":
        return disk_tests.LocateBlink(
            opts.get("filename", ""),
            _int(opts.get("runtime", ""), "fio --runtime"),
            _int(opts.get("thinktime_blocks", ""), "fio --thinktime_blocks"),
        )
    fixed = {"name": "raidman", "direct": "1", "ioengine": "psync", "group_reporting": ""}
    fixed["output-format"] = "json"
    wanted = {*fixed, "filename", "rw", "bs", "numjobs", "size"}
    if set(opts) - {"runtime"} != wanted or any(opts[k] != v for k, v in fixed.items()):
        raise OpError("fio: not the benchmark run raidman plans")
    op = storage.Fio(
        opts["filename"],
        opts["rw"],
        opts["bs"],
        _int(opts["numjobs"], "fio --numjobs"),
        opts["size"],
        _int(opts["runtime"], "fio --runtime") if "runtime" in opts else None,
    )
    if op.argv()[1:] != a:
        raise OpError("fio: not the benchmark run raidman plans (its options in raidman's order)")
    return op


def _fio_surface(opts: dict[str, str]) -> Op:
    """The qualify's zone: ``--offset=BYTES --size=BYTES``."""
    return disk_tests.SurfaceTest(
        opts.get("filename", ""),
        _int(opts.get("offset", ""), "fio --offset"),
        _int(opts.get("size", ""), "fio --size"),
    )


def _nvme(a: Argv) -> Op:
    if len(a) == 4 and a[0] == "device-self-test" and a[3] == "--wait":
        code = {"--self-test-code=1": "short", "--self-test-code=2": "long"}.get(a[2])
        if code is None:
            raise OpError("nvme device-self-test: a short (1) or extended (2) test")
        return disk_tests.NvmeSelfTest(a[1], code)
    if len(a) == 3 and a[0] == "sanitize" and a[2].startswith("--sanact="):
        act = {v: k for k, v in sanitize.SANACT.items()}
        n = _int(a[2].removeprefix("--sanact="), "nvme sanitize --sanact")
        if n not in act:
            raise OpError("nvme sanitize: a block (2) or crypto (4) erase")
        return sanitize.NvmeSanitize(a[1], act[n])
    if a[:1] == ("sanitize-log",) and a[2:] == ("--output-format=json",):
        return sanitize.NvmeSanitizeLog(a[1])
    if len(a) == 4 and a[0] == "format" and a[2].startswith("--ses=") and a[3] == "--force":
        ses = {str(v): k for k, v in sanitize.SES.items()}.get(a[2].removeprefix("--ses="))
        if ses is None:
            raise OpError("nvme format: --ses=1 or --ses=2")
        return sanitize.NvmeFormat(a[1], ses)
    raise OpError("nvme: not a command raidman plans")


def _hdparm(a: Argv) -> Op:
    if len(a) == 2 and a[0] == "-I":
        return sanitize.HdparmIdentify(a[1])
    if len(a) == 5 and a[:2] == ("--user-master", "u") and a[3] == sanitize.HDPARM_PASS:
        if a[2] == "--security-set-pass":
            return sanitize.HdparmSetPassword(a[4])
        if a[2] in ("--security-erase", "--security-erase-enhanced"):
            return sanitize.HdparmErase(a[4], a[2].endswith("enhanced"))
    raise OpError("hdparm: not a command raidman plans")


def _parted(a: Argv) -> Op:
    head = ("--script", "--align", "optimal")
    tail = ("mklabel", "gpt", "mkpart", "raid", "1MiB")
    m = re.fullmatch(r"([0-9]{1,3})%", a[9]) if len(a) == 14 else None
    if m is None or a[:3] != head or a[4:9] != tail or a[10:] != ("set", "1", "raid", "on"):
        raise OpError("parted: raidman only writes a GPT with one Linux RAID partition from 1MiB")
    return storage.PartitionDisk(a[3], int(m.group(1)))


def _cp(a: Argv) -> Op:
    if len(a) == 3 and a[0] == "-p" and a[1] in EDITED:
        if a[2] == new_name(a[1]):
            return files.CopyFile(a[1])
        return files.BackupFile(a[1], a[2])
    if len(a) == 2 and a[1] in EDITED and a[0] == new_name(a[1]):
        return files.OverwriteFile(a[1])
    raise OpError(
        "cp: raidman only copies a file it edits to its new copy or its backup, "
        "or its checked copy into it"
    )


def _mv(a: Argv) -> Op:
    if len(a) == 3 and a[0] == "-f" and a[2] in PERSIST_BY_PATH:
        if PERSIST_BY_PATH[a[2]].temp != a[1]:
            raise OpError(f"mv: {shown(a[1])} is not {a[2]}'s temporary name")
        return files.ReplaceFile(a[2], force=True)
    if len(a) == 2 and a[1] in EDITED and a[0] == new_name(a[1]):
        return files.ReplaceFile(a[1])
    raise OpError("mv: raidman only renames its new copies and settings files into place")


def _mkdir(a: Argv) -> Op:
    if len(a) != 2 or a[0] != "-p":
        raise OpError("mkdir: raidman only makes a mount point (-p DIR)")
    return files.MakeDropinDir() if a[1] == DROPIN_DIR else storage.MakeMountPoint(a[1])


def _systemctl(a: Argv) -> Op:
    if len(a) == 3 and a[:2] == ("enable", "--now"):
        return files.Systemd("enable", a[2])
    if a == ("daemon-reload",):
        return files.Systemd("daemon-reload")
    if len(a) == 2:
        return files.Systemd(a[0], a[1])
    raise OpError("systemctl: not a command raidman plans")


def _simple(prog: str, a: Argv) -> Op:
    if prog == "wipefs":
        if len(a) == 2 and a[0] == "-a":
            return storage.Wipe(a[1])
        raise OpError("wipefs: raidman only erases every signature of one device (-a DEV)")
    if prog == "blkdiscard" and len(a) == 1:
        return storage.Discard(a[0])
    if prog == "blkdiscard" and len(a) == 2 and a[0] == "--secure":
        return sanitize.SecureDiscard(a[1])
    if prog == "ledctl" and len(a) == 1 and a[0].startswith(("locate=", "locate_off=")):
        word, _, dev = a[0].partition("=")
        return disk_tests.Ledctl(dev, word == "locate")
    if prog == "sg_sanitize" and len(a) == 3 and a[1] == "--quick" and a[0].startswith("--"):
        return sanitize.SgSanitize(a[2], a[0][2:])
    if prog == "sg_requests" and len(a) == 2 and a[0] == "--progress":
        return sanitize.SgRequests(a[1])
    if prog == "tune2fs" and len(a) == 3 and a[0] == "-E":
        stride, width = _stride(a[1], "tune2fs")
        return storage.TuneExt4Stride(a[2], stride, width)
    if prog == "vgcreate" and len(a) == 2:
        return storage.VgCreate(a[0], a[1])
    if prog == "smartctl" and len(a) == 3 and a[0] == "-t":
        return storage.SmartTest(a[2], a[1])
    if prog == "smartctl" and len(a) == 3 and a[:2] == ("-j", "-a"):
        return disk_tests.SmartReport(a[2])
    if prog == "smartctl" and len(a) == 4 and a[0] == "-t" and a[2] == "-C":
        return disk_tests.CaptiveSelfTest(a[3], a[1])
    if prog == "mount" and len(a) == 4 and a[0] == "-o":
        return storage.Mount(a[2], a[3], a[1])
    if prog == "cmp" and len(a) == 2 and a[1] == "-":
        raise OpError("cmp: needs the text to compare with on stdin")
    if prog == "findmnt" and a == ("--verify", "--tab-file", new_name(FSTAB)):
        return files.VerifyFstab()
    if prog == "rm" and len(a) == 2 and a[0] == "-f":
        edited = next((p for p in EDITED if new_name(p) == a[1]), None)
        return files.RemoveCopy(edited) if edited is not None else files.RemoveFile(a[1])
    if prog == "update-initramfs" and a == ("-u",):
        return files.UpdateInitramfs("update-initramfs")
    if prog == "dracut" and a == ("-f",):
        return files.UpdateInitramfs("dracut")
    raise OpError(f"{prog}: not the command raidman plans")


_PROGRAMS: dict[str, Callable[[Argv], Op]] = {
    "mdadm": _mdadm,
    "sysctl": _sysctl,
    "mkfs.ext4": _ext4,
    "mkfs.xfs": _xfs,
    "pvcreate": _pvcreate,
    "lvcreate": _lvcreate,
    "lvchange": _lvchange,
    "lvconvert": _lvconvert,
    "fio": _fio,
    "parted": _parted,
    "cp": _cp,
    "mv": _mv,
    "mkdir": _mkdir,
    "systemctl": _systemctl,
    "nvme": _nvme,
    "hdparm": _hdparm,
}
_OTHERS: tuple[str, ...] = ("tee", "wipefs", "blkdiscard", "tune2fs", "vgcreate", "smartctl")
_OTHERS += ("mount", "cmp", "ledctl", "sg_sanitize", "sg_requests")
PROGRAMS = frozenset((*_PROGRAMS, *_OTHERS, "findmnt", "rm", "update-initramfs", "dracut"))


def decode(
    argv: Sequence[str], stdin: str | None = None, stdin_from: Sequence[str] | None = None
) -> Op:
    """The operation ``argv`` renders (with its stdin or piped producer); OpError when it is not
    one raidman plans, saying why (escaped: the argv is untrusted)."""
    a = tuple(argv)
    prog, rest = (a[0], a[1:]) if a else ("", ())
    if prog not in PROGRAMS:
        raise OpError(f"{escape_controls(prog)!r} is not a program raidman plans")
    producer = tuple(stdin_from) if stdin_from is not None else None
    if producer is not None and prog != "tee":
        raise OpError(f"{prog}: only tee takes a piped input")
    if prog == "tee":
        op = _tee(rest, stdin, producer)
    elif prog == "cmp":
        if len(rest) != 2 or rest[1] != "-" or rest[0] not in EDITED or stdin is None:
            raise OpError("cmp: raidman only compares a file it edits with the planned-from text")
        op = files.CompareFile(rest[0], stdin)
    elif prog in _PROGRAMS:
        op = _PROGRAMS[prog](rest)
    else:
        op = _simple(prog, rest)
    if op.stdin() is None and stdin is not None:
        raise OpError(f"{prog}: raidman feeds nothing on its stdin")
    if op.argv() != a or op.stdin() != stdin or op.stdin_from() != producer:
        # what raidman plans renders back to itself, byte for byte: anything else (an option
        # spelled or ordered otherwise) was not made by raidman
        raise OpError(
            f"{prog}: not in the shape raidman plans ({escape_controls(' '.join(a))[:120]})"
        )
    return op
