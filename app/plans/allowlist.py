"""What a plan may run: the programs raidman itself plans, in the argument shapes it emits.

Every argv built by the wizards (app/plans/wizards), the audit rules' fixes (app/rules) and boost
(app/sync/boost.py) matches one shape below; anything else — another program, another option,
a write to a file that is not an md tunable / ``dev.raid.*`` sysctl / mdadm.conf — is refused
before anything runs. The executor checks every plan with ``step_problem``; ``apply`` adds
``plan_problems`` (known kind, argv and params naming the same devices, target named by the argv).

Writes raidman plans (and nothing else):
  * ``sysctl -w dev.raid.speed_limit_min|max=N``
  * ``tee /sys/block/mdX/md/{sync_action,sync_speed_min,sync_speed_max,stripe_cache_size,
    sync_min}``
    with a value of the right form on stdin;
  * ``tee /sys/block/DISK/queue/scheduler`` with a scheduler name (the audit's scheduler fix);
  * ``smartctl -t short|long /dev/DISK`` (a self-test inside the drive; nothing written);
  * ``tee -a /etc/mdadm/mdadm.conf`` (or ``/etc/mdadm.conf``) with one ARRAY line, or piped from
    ``mdadm --detail --brief MD``;
  * the files that make settings permanent (app.plans.persist): ``tee`` of a whole file of
    raidman's line shapes to its temporary name, ``mv -f`` of that name onto the file, ``rm -f``
    of the file;
  * mdadm.conf without its stale ARRAY entries (app.plans.mdconf_edit): ``cp -p`` to its backup
    and its new copy, ``cmp`` of the backup with the text the plan was made from, ``tee`` of the
    new copy (that text less whole ARRAY entries: ``plan_step_problems``), ``mv`` into place.

Devices that pre-flight must check come from the argv (``argv_devices``), never from ``params``.
Whether a step destroys data and the name typed to confirm come from the argv too
(``app.plans.destroys``, used by ``Plan`` itself); ``kind`` decides nothing about confirmation,
and a kind whose plans never destroy data (``NEVER_DESTROY``) with a step that does is refused.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from app.plans import check_schedule, mdconf_edit
from app.plans.benchmark import BLOCKS as BENCH_BLOCKS
from app.plans.benchmark import RW as BENCH_RW
from app.plans.benchmark import fio_argv, parse_fio_argv
from app.plans.lifecycle_shapes import FSTAB_NEW, lifecycle_problem, mdadm_problem
from app.plans.lifecycle_shapes import PROGRAMS as LIFECYCLE_PROGRAMS
from app.plans.persist import BY_PATH, BY_TEMP, content_problem
from app.plans.plan import Plan, Step, escape_controls
from app.plans.shapes import (
    MDADM_CONF,
    array_line_problem,
    created_file_problem,
    speed_limit_ok,
)

_NAME = r"[A-Za-z0-9][A-Za-z0-9._+:-]*"  # a kernel device name (nvme0n1, sda1, md127, dm-0)
_LVM = r"[A-Za-z0-9+_.][A-Za-z0-9+_.-]*"  # LVM's own rule (no leading '-')
DEV = re.compile(rf"/dev/{_NAME}")
MD_DEV = re.compile(r"/dev/md[0-9]+|/dev/md_[A-Za-z0-9_.-]+|/dev/md/[A-Za-z0-9_][A-Za-z0-9_.:-]*")
LV_DEV = re.compile(rf"/dev/({_LVM})/({_LVM})")
FS_DEV = re.compile(
    rf"/dev/{_NAME}|/dev/md/[A-Za-z0-9_][A-Za-z0-9_.:-]*|/dev/(mapper/)?{_LVM}(/{_LVM})?"
)
LVM_NAME = re.compile(_LVM)
MD_SYSFS = re.compile(
    r"/sys/block/(md[0-9]+|md_[A-Za-z0-9_.-]+)/md/"
    r"(sync_action|sync_speed_min|sync_speed_max|stripe_cache_size|sync_min)"
)
SCHED_SYSFS = re.compile(rf"/sys/block/({_NAME})/queue/scheduler")
SCHEDULERS = ("none", "mq-deadline", "bfq", "kyber", "deadline", "cfq", "noop")
SYSCTL = re.compile(r"dev\.raid\.speed_limit_(min|max)=([0-9]{1,10})")
SIZE = re.compile(r"[0-9]{1,12}[KMGTkmgt]?")
STRIDE = re.compile(r"stride=[0-9]{1,9},stripe_width=[0-9]{1,9}")
XFS_D = re.compile(r"su=[0-9]{1,9}[kmgKMG]?,sw=[0-9]{1,4}(?:,agcount=[0-9]{1,4})?")

_CREATE_OPTS = re.compile(
    r"--level=(0|1|4|5|6|10|linear)|--raid-devices=[0-9]{1,3}|--spare-devices=[0-9]{1,3}"
    r"|--chunk=[0-9]{1,9}[KMG]?|--layout=[a-z0-9-]{1,24}|--bitmap=(internal|none)"
    r"|--metadata=(0\.9|0\.90|1\.0|1\.1|1\.2|default)|--name=[A-Za-z0-9_.:-]{1,32}|--run"
    r"|--assume-clean"
)
_MANAGE = ("--add", "--add-spare", "--fail", "--remove", "--re-add")


def _mdadm(argv: tuple[str, ...]) -> str | None:
    a = argv[1:]
    if len(a) >= 2 and a[0] == "--create":
        if not MD_DEV.fullmatch(a[1]):
            return f"mdadm --create: {a[1]!r} is not an md device path"
        opts = [x for x in a[2:] if x.startswith("-")]
        devs = [x for x in a[2:] if not x.startswith("-")]
        if a[2 : 2 + len(opts)] != tuple(opts):
            return "mdadm --create: options must come before the member devices"
        for o in opts:
            if o.startswith("--bitmap=/"):
                file_bad = created_file_problem(o.removeprefix("--bitmap="))
                if file_bad is None:
                    continue
                return f"mdadm --create: bitmap file {file_bad}"
            if not _CREATE_OPTS.fullmatch(o):
                return f"mdadm --create: option {o!r} is not one raidman plans"
        if len({o.split("=", 1)[0] for o in opts}) != len(opts):
            return "mdadm --create: an option is given twice"
        n = int_opt(opts, "--raid-devices")
        s = int_opt(opts, "--spare-devices") or 0
        if n is None or not any(o.startswith("--level=") for o in opts):
            return "mdadm --create needs --level and --raid-devices"
        if len(devs) != n + s or not devs:
            return f"mdadm --create: {len(devs)} devices for --raid-devices={n} + {s} spares"
        bad = [d for d in devs if not DEV.fullmatch(d)]
        if bad:
            return f"mdadm --create: {bad[0]!r} is not a device path"
        if len(set(devs)) != len(devs):
            return "mdadm --create: a device is named twice"
        return None
    if len(a) == 3 and MD_DEV.fullmatch(a[0]) and a[1] in _MANAGE and DEV.fullmatch(a[2]):
        return None
    if (
        len(a) == 5
        and MD_DEV.fullmatch(a[0])
        and a[1] == "--replace"
        and DEV.fullmatch(a[2])
        and a[3] == "--with"
        and DEV.fullmatch(a[4])
        and a[2] != a[4]
    ):
        return None
    if len(a) in (3, 4) and a[0] == "--grow" and MD_DEV.fullmatch(a[1]) and "--bitmap" not in a[2]:
        if not re.fullmatch(r"--raid-devices=[0-9]{1,3}", a[2]):
            return f"mdadm --grow: {a[2]!r} is not an option raidman plans"
        if len(a) == 4 and not (
            a[3].startswith("--backup-file=")
            and created_file_problem(a[3].removeprefix("--backup-file=")) is None
        ):
            return f"mdadm --grow: {a[3]!r} is not an option raidman plans"
        return None
    if a[:2] == ("--grow", "--bitmap=internal") and len(a) == 3 and MD_DEV.fullmatch(a[2]):
        return None
    if len(a) in (3, 4) and a[0] == "--grow" and MD_DEV.fullmatch(a[1]):
        # the bitmap moved or re-chunked (article 001): none, internal or a file, + its chunk
        loc = a[2].removeprefix("--bitmap=") if a[2].startswith("--bitmap=") else None
        if loc is None or not (loc in ("none", "internal") or created_file_problem(loc) is None):
            return f"mdadm --grow: {a[2]!r} is not an option raidman plans"
        if len(a) == 4 and (loc == "none" or not re.fullmatch(r"--bitmap-chunk=[0-9]{1,9}K", a[3])):
            return f"mdadm --grow: {a[3]!r} is not an option raidman plans"
        return None
    if a == ("--monitor", "--scan", "--oneshot", "--test"):
        return None  # sends one test alert per array through mdadm.conf's MAILADDR/PROGRAM
    life = mdadm_problem(a)  # stop, assemble, zero-superblock (app.plans.lifecycle_shapes)
    if life != "":
        return life
    return "this mdadm command is not one raidman plans"


def int_opt(opts: Iterable[str], name: str) -> int | None:
    for o in opts:
        if o.startswith(name + "="):
            return int(o.split("=", 1)[1])
    return None


def _tee(step: Step) -> str | None:
    a = step.argv[1:]
    if len(a) == 1:
        m = MD_SYSFS.fullmatch(a[0])
        if m is not None:
            v = (step.stdin or "").removesuffix("\n")
            if step.stdin_from is not None or step.stdin is None:
                return f"tee {a[0]}: needs its value on stdin"
            attr = m.group(2)
            ok = {
                "sync_action": v in ("check", "repair", "idle", "frozen"),
                "sync_speed_min": v == "system" or speed_limit_ok(v),
                "sync_speed_max": v == "system" or speed_limit_ok(v),
                "stripe_cache_size": v.isascii() and v.isdigit() and 17 <= int(v) <= 32768,
                # where a check resumes (a sector: md.c min_sync_store), app/routine/scheduler.py
                "sync_min": v.isascii() and v.isdigit() and len(v) <= 20,
            }[attr]
            return None if ok else f"{attr}: {escape_controls(v)!r} is not a value raidman writes"
        if SCHED_SYSFS.fullmatch(a[0]):
            v = (step.stdin or "").removesuffix("\n")
            if step.stdin_from is None and v in SCHEDULERS:
                return None
            return f"scheduler: {escape_controls(v)!r} is not a scheduler raidman sets"
    if len(a) == 1 and a[0] in BY_TEMP:
        if step.stdin_from is not None or step.stdin is None:
            return f"tee {a[0]}: needs the whole file on stdin"
        return content_problem(BY_TEMP[a[0]], step.stdin)
    if len(a) == 1 and a[0] == check_schedule.DROPIN:
        if step.stdin_from is None and check_schedule.DROPIN_TEXT.fullmatch(step.stdin or ""):
            return None
        return "the check schedule's drop-in: only the two Environment= lines raidman writes"
    if len(a) == 2 and a[0] == "-a" and a[1] in MDADM_CONF:
        if step.stdin_from is not None:
            f = step.stdin_from
            if len(f) == 4 and f[:3] == ("mdadm", "--detail", "--brief") and MD_DEV.fullmatch(f[3]):
                return None
            return "mdadm.conf may only be fed from mdadm --detail --brief MD"
        text = step.stdin or ""
        lines = text.splitlines()
        if len(lines) != 1 or text != lines[0] + "\n":
            return "mdadm.conf: one line is appended (an ARRAY line, or MAILADDR root)"
        if lines[0] == "MAILADDR root":  # app/rules/alerts.py
            return None
        bad = array_line_problem(lines[0])
        return None if bad is None else f"mdadm.conf: {bad}"
    where = " ".join(a)
    return f"tee writes only md tunables and mdadm.conf, not {escape_controls(where)!r}"


def piped_input_problem(step: Step, text: str) -> str | None:
    """None when ``text`` (a producer's output) may be fed to ``step``: for mdadm.conf, only
    ARRAY lines as mdadm prints them (an array name from a disk's superblock is not trusted)."""
    if step.argv[:2] == ("tee", "-a") and step.argv[2:] and step.argv[2] in MDADM_CONF:
        lines = text.splitlines()
        if not lines:
            return "mdadm.conf: the ARRAY line to append is empty"
        for line in lines:
            bad = array_line_problem(line)
            if bad is not None:
                return f"mdadm.conf: {escape_controls(line)[:120]!r}: {bad}"
    return None


def _mkfs_label_target(rest: tuple[str, ...], label_max: int) -> str | None:
    if len(rest) == 3 and rest[0] == "-L":
        label, rest = rest[1], rest[2:]
        if not label or len(label) > label_max or label.startswith("-"):
            return f"label {label!r} is not one raidman plans"
    if len(rest) != 1 or not FS_DEV.fullmatch(rest[0]) or ".." in rest[0].split("/"):
        return "the target must be one device path"
    return None


def _fio(argv: tuple[str, ...]) -> str | None:
    """Exactly :func:`app.plans.benchmark.fio_argv`'s shape, with values raidman plans."""
    o = parse_fio_argv(argv)
    ok = (
        o is not None
        and set(o) >= {"filename", "rw", "bs", "numjobs", "size"}
        and (DEV.fullmatch(o["filename"]) or MD_DEV.fullmatch(o["filename"])) is not None
        and o["rw"] in BENCH_RW
        and o["bs"] in BENCH_BLOCKS
        and re.fullmatch(r"[1-9][0-9]?", o["numjobs"]) is not None
        and SIZE.fullmatch(o["size"]) is not None
        and argv == fio_argv(o["filename"], o["rw"], o["bs"], int(o["numjobs"]), o["size"])
    )
    return None if ok else "fio: not the benchmark run raidman plans"


def _simple(argv: tuple[str, ...]) -> str | None:
    prog, a = argv[0], argv[1:]
    if prog == "sysctl":
        m = SYSCTL.fullmatch(a[1]) if len(a) == 2 and a[0] == "-w" else None
        if m is not None and speed_limit_ok(m.group(2)):
            return None
        return "sysctl: raidman sets only dev.raid.speed_limit_min/max"
    if prog == "mkfs.ext4":
        if len(a) >= 3 and a[0] == "-b" and a[1] in ("1024", "2048", "4096", "65536"):
            rest = a[2:]
            if len(rest) >= 2 and rest[0] == "-E":
                if not STRIDE.fullmatch(rest[1]):
                    return f"mkfs.ext4 -E {rest[1]!r} is not one raidman plans"
                rest = rest[2:]
            return _mkfs_label_target(rest, 16)
        return "mkfs.ext4: not the shape raidman plans (-b SIZE [-E stride=..] [-L LABEL] DEV)"
    if prog == "mkfs.xfs":
        rest = a
        if len(rest) >= 2 and rest[0] == "-d":
            if not XFS_D.fullmatch(rest[1]):
                return f"mkfs.xfs -d {rest[1]!r} is not one raidman plans"
            rest = rest[2:]
        return _mkfs_label_target(rest, 12)
    if prog == "pvcreate":
        rest = a
        if len(rest) == 3 and rest[0] == "--dataalignment" and SIZE.fullmatch(rest[1]):
            rest = rest[2:]
        if len(rest) == 1 and (MD_DEV.fullmatch(rest[0]) or DEV.fullmatch(rest[0])):
            return None
        return "pvcreate: not the shape raidman plans ([--dataalignment SIZE] DEV)"
    if prog == "vgcreate":
        if (
            len(a) == 2
            and LVM_NAME.fullmatch(a[0])
            and (MD_DEV.fullmatch(a[1]) or DEV.fullmatch(a[1]))
        ):
            return None
        return "vgcreate: not the shape raidman plans (VG DEV)"
    if prog == "lvcreate":
        if (
            len(a) == 6
            and a[:2] == ("--yes", "--name")
            and LVM_NAME.fullmatch(a[2])
            and (
                (
                    a[3] == "--extents"
                    and re.fullmatch(r"[0-9]{1,3}%(FREE|VG|PVS)|[0-9]{1,12}", a[4])
                )
                or (a[3] == "--size" and re.fullmatch(r"[0-9]{1,12}(\.[0-9]+)?[KMGTPkmgtp]?", a[4]))
            )
            and LVM_NAME.fullmatch(a[5])
        ):
            return None
        return "lvcreate: not the shape raidman plans (--yes --name LV --extents|--size N VG)"
    if prog == "tune2fs":
        if len(a) == 3 and a[0] == "-E" and STRIDE.fullmatch(a[1]) and FS_DEV.fullmatch(a[2]):
            return None if ".." not in a[2].split("/") else "tune2fs: not a device path"
        return "tune2fs: raidman only sets -E stride=N,stripe_width=N DEV"
    if prog == "blkdiscard":
        ok = len(a) == 1 and DEV.fullmatch(a[0]) is not None and not MD_DEV.fullmatch(a[0])
        return None if ok else "blkdiscard: raidman discards one whole member device"
    if prog == "fio":
        return _fio(argv)
    if prog == "mv":
        ok = len(a) == 3 and a[0] == "-f" and a[1] in BY_TEMP and BY_TEMP[a[1]].path == a[2]
        ok = ok or lifecycle_problem(argv, None) is None  # the new fstab into place
        return (
            None if ok else f"mv: raidman only moves {FSTAB_NEW} or its settings files into place"
        )
    if prog == "rm":
        ok = (len(a) == 2 and a[0] == "-f" and a[1] in BY_PATH) or argv == check_schedule.REMOVE
        return None if ok else "rm: raidman only removes its own settings files"
    if prog == "smartctl":  # a self-test runs inside the drive; nothing else is planned
        if len(a) == 3 and a[0] == "-t" and a[1] in ("short", "long") and DEV.fullmatch(a[2]):
            return None if ".." not in a[2].split("/") else "smartctl: not a device path"
        return "smartctl: raidman plans only -t short|long /dev/DISK"
    if argv in (("update-initramfs", "-u"), ("dracut", "-f")):
        return None
    if argv == ("systemctl", "enable", "--now", "fstrim.timer"):
        return None
    if argv in (check_schedule.MKDIR, check_schedule.REMOVE, check_schedule.RELOAD):
        return None
    if argv == check_schedule.RESTART:
        return None
    return f"{prog}: not the command raidman plans"


PROGRAMS = (
    "mdadm",
    "tee",
    "sysctl",
    "mkfs.ext4",
    "mkfs.xfs",
    "pvcreate",
    "vgcreate",
    "lvcreate",
    "tune2fs",
    "update-initramfs",
    "dracut",
    "systemctl",
    "rm",  # measure's settings files, and the check schedule's drop-in (app.plans.check_schedule)
    "blkdiscard",
    "fio",
    "smartctl",
    "cmp",  # mdadm.conf's backup against the text a plan was made from (app.plans.mdconf_edit)
    *LIFECYCLE_PROGRAMS,  # with mv: the new fstab's and the settings files' (_simple)
)


def step_problem(step: Step) -> str | None:
    """None when raidman plans steps of this shape, else why the step is refused."""
    prog = step.argv[0]
    if prog not in PROGRAMS:
        return f"{escape_controls(prog)!r} is not a program raidman plans"
    if step.stdin_from is not None and prog != "tee":
        return f"{prog}: only tee takes a piped input"
    if mdconf_edit.names_its_files(step.argv):
        return mdconf_edit.step_problem(step)  # cp/cmp/tee/mv of mdadm.conf's copies
    if prog == "cmp":
        return "cmp: raidman only compares mdadm.conf's backup with the text a plan was made from"
    if prog == "mdadm":
        why = _mdadm(step.argv)
    elif prog == "tee" and step.argv[1:3] == ("-a", FSTAB_NEW):
        why = lifecycle_problem(step.argv, step.stdin) if step.stdin_from is None else "no pipe"
    elif prog == "tee":
        why = _tee(step)
    elif prog in LIFECYCLE_PROGRAMS and prog != "mv" and step.argv != check_schedule.MKDIR:
        # the check schedule's drop-in directory is under /etc, never a mount point: _simple
        why = lifecycle_problem(step.argv, None)
    else:
        why = _simple(step.argv)
    if why is None and prog != "tee" and step.stdin is not None:
        why = f"{prog}: raidman feeds nothing on its stdin"
    return None if why is None else escape_controls(why)


def plan_step_problems(plan: Plan) -> list[str]:
    """Why steps of ``plan`` are refused ("step N: ..."), empty when every step is allowed."""
    out = []
    created: set[str] = set()
    members: set[str] = set()  # of the arrays this plan created
    for i, s in enumerate(plan.steps, 1):
        a = s.argv
        if a[:2] == ("mdadm", "--create") and len(a) > 2 and step_problem(s) is None:
            created.add(a[2])
            members.update(x for x in a[3:] if not x.startswith("-"))
        # the benchmark stops the array it made and zeroes its members' superblocks, never
        # another array's (that is a lifecycle plan's: app.plans.lifecycle_shapes)
        stop = a[:2] == ("mdadm", "--stop")
        if stop and len(a) == 3 and a[2] in created:
            continue
        zero = a[:2] == ("mdadm", "--zero-superblock") and len(a) > 2
        if zero and set(a[2:]) <= members and len(set(a[2:])) == len(a[2:]):
            continue
        if plan.kind == "benchmark" and (stop or zero):
            out.append(f"step {i}: a benchmark stops and zeroes only the array it made")
            continue
        why = step_problem(s)
        if why is not None:
            out.append(f"step {i}: {why}")
    out += mdconf_edit.plan_problems(plan)  # the new mdadm.conf is the old one less stale lines
    return out
