"""Which devices a plan's argv writes to (:func:`argv_devices`: what pre-flight checks, in every
spelling the argv names them), and the whole plan's problems (:func:`plan_problems`: each step
allowed, its kind known, destroying data only where its kind may) -- over the step rules of
:mod:`app.plans.allowlist`."""

from __future__ import annotations

from dataclasses import dataclass

from app.model import Machine
from app.plans.allowlist import MD_SYSFS, SCHED_SYSFS, int_opt, plan_step_problems
from app.plans.benchmark import parse_fio_argv
from app.plans.destroys import destroys
from app.plans.geometry import normalize_level
from app.plans.kinds import KNOWN_KINDS, NEVER_DESTROY
from app.plans.plan import Plan, escape_controls
from app.plans.preflight import strip_dev


@dataclass(frozen=True, slots=True)
class ArgvDevices:
    """What the argv (not the params) says a plan writes to."""

    overwrites: tuple[
        str, ...
    ] = ()  # kernel names (or /dev paths not on the machine) pre-flight checks
    level: str | None = None
    layout: str | None = None
    raid_devices: int | None = None
    names: frozenset[str] = frozenset()  # every device the argv names, in every spelling
    # written but not overwritten (a re-added member, a replacement already in as a spare):
    # pre-flight checks their health (SMART), not their emptiness
    written: tuple[str, ...] = ()
    array: str | None = None  # the array a member operation works on (kernel name)
    # arrays a step stops (pre-flight: nothing holds them open, app.plans.lifecycle_checks)
    stopped: tuple[str, ...] = ()
    # devices whose signatures a step erases (zero-superblock, wipefs -a): in use by nothing
    # but the arrays stopped before them
    erased: tuple[str, ...] = ()


def _resolve(machine: Machine | None, path: str) -> str:
    """/dev/md/127 → md127, /dev/vg0/data → dm-0 when the machine has them; else the kernel
    name or the path."""
    if machine is not None:
        for a in machine.arrays:
            if path in (a.path, f"/dev/{a.name}"):
                return a.name
        if path.startswith("/dev/md/"):  # the --name: /dev/md/127 of "host:127" is md127
            for a in machine.arrays:
                if a.array_name and a.array_name.rsplit(":", 1)[-1] == path[8:]:
                    return a.name
        for lv in machine.lvs:  # /dev/vg0/data or /dev/mapper/vg0-data → dm-0
            if lv.kernel_name and path in (lv.path, f"/dev/mapper/{lv.dm_name}"):
                return lv.kernel_name
    return strip_dev(path)


def _is_member(machine: Machine | None, array: str, dev: str) -> bool:
    """``dev`` is a member of ``array`` on the machine as it is now (unknown without one)."""
    a = machine.array(array) if machine is not None else None
    return a is not None and a.member(dev) is not None


def argv_devices(plan: Plan, machine: Machine | None = None) -> ArgvDevices:
    overwrites: list[str] = []
    names: set[str] = set()
    level = layout = None
    raid_devices: int | None = None
    created: set[str] = set()  # arrays and LVs the plan itself makes: nothing on them to lose
    written: list[str] = []
    array: str | None = None
    removed: set[tuple[str, str]] = set()  # (array, device) an earlier step removes
    stopped: list[str] = []
    erased: list[str] = []
    made_of: set[str] = set()  # the members of the arrays this plan creates

    def named(p: str) -> None:
        names.update({p, p.rsplit("/", 1)[-1], _resolve(machine, p)})

    for s in plan.steps:
        argv = s.argv
        prog = argv[0]
        for x in (*argv[1:], *(s.stdin_from or ())):
            if x.startswith("/dev/"):
                named(x)
            m = MD_SYSFS.fullmatch(x) or SCHED_SYSFS.fullmatch(x)
            if m is not None:
                names.add(m.group(1))
        if prog == "mdadm" and len(argv) > 2 and argv[1] == "--create":
            opts = [x for x in argv[2:] if x.startswith("-")]
            devs = [x for x in argv[3:] if not x.startswith("-")]
            overwrites += devs
            created.add(argv[2])
            made_of.update(devs)
            for o in opts:
                k, _, v = o.partition("=")
                if k == "--level":
                    level = v
                elif k == "--layout":
                    layout = v
            raid_devices = int_opt(opts, "--raid-devices")
        elif prog == "mdadm" and len(argv) == 4 and argv[2] == "--remove":
            removed.add((_resolve(machine, argv[1]), _resolve(machine, argv[3])))
        elif prog == "mdadm" and len(argv) == 4 and argv[2] in ("--add", "--add-spare"):
            array = _resolve(machine, argv[1])
            dev = _resolve(machine, argv[3])
            if (array, dev) in removed and _is_member(machine, array, dev):
                # a member this plan takes out and puts back (re-add without a bitmap): in use
                # by this very array until then, so its health is checked, not its emptiness
                written.append(argv[3])
            else:
                overwrites.append(argv[3])
        elif prog == "mdadm" and len(argv) == 4 and argv[2] == "--re-add":
            written.append(argv[3])
            array = _resolve(machine, argv[1])
        elif prog == "mdadm" and len(argv) == 6 and argv[2] == "--replace" and argv[4] == "--with":
            written.append(argv[5])
            array = _resolve(machine, argv[1])
        elif prog == "mdadm" and len(argv) == 3 and argv[1] == "--stop":
            if argv[2] not in created:  # the plan's own array (plan benchmark) is not probed yet
                stopped.append(_resolve(machine, argv[2]))
        elif (prog == "mdadm" and argv[1:2] == ("--zero-superblock",)) or prog == "wipefs":
            if not (prog == "mdadm" and set(argv[2:]) <= made_of):  # not its own array's members
                erased.append(_resolve(machine, argv[-1]))
        elif prog == "parted" and len(argv) > 4:
            overwrites.append(argv[4])
        elif prog == "lvcreate" and "--name" in argv[:-2]:
            created.add(f"/dev/{argv[-1]}/{argv[argv.index('--name') + 1]}")
        elif (prog in ("pvcreate", "mkfs.ext4", "mkfs.xfs") and argv[-1] not in created) or (
            prog == "blkdiscard" and argv[-1] not in created
        ):
            overwrites.append(argv[-1])
        elif prog == "fio":
            target = (parse_fio_argv(argv) or {}).get("filename", "")
            if target.startswith("/dev/") and target not in created:
                overwrites.append(target)
    resolved = tuple(dict.fromkeys(_resolve(machine, d) for d in overwrites))
    more = tuple(
        d for d in dict.fromkeys(_resolve(machine, w) for w in written) if d not in resolved
    )
    return ArgvDevices(
        resolved,
        level,
        layout,
        raid_devices,
        frozenset(names),
        more,
        array,
        tuple(dict.fromkeys(stopped)),
        tuple(dict.fromkeys(erased)),
    )


def _params_devices(plan: Plan) -> tuple[str, ...]:
    """What the plan's params claim it overwrites (the devices it was built for)."""
    p = plan.params
    kind = plan.kind
    if kind == "create-array":
        return tuple(str(d) for d in (*(p.get("devices") or ()), *(p.get("spares") or ())))
    if kind == "filesystem":
        return (str(p["array"]),) if p.get("array") else ()
    if kind in ("member-add", "member-spare"):
        return (str(p["device"]),) if p.get("device") else ()
    if kind == "member-grow":
        return tuple(str(d) for d in p.get("add") or ())
    return ()


def plan_problems(plan: Plan, machine: Machine | None = None) -> list[str]:
    """Why a plan read from a file is refused: its steps, kind, devices and target must agree.

    Without ``machine`` (before probing) the checks that need /dev/md/NAME resolved to a kernel
    name are left for the call with the machine; everything else is checked."""
    out = plan_step_problems(plan)
    if not plan.kind:
        out.append("the plan has no 'kind': raidman cannot tell what it checks before running it")
    elif plan.kind not in KNOWN_KINDS:
        out.append(f"'kind' {escape_controls(plan.kind)!r} is not a plan raidman makes")
    if out:
        return out
    if plan.kind in NEVER_DESTROY:
        out += [
            f"step {i}: a {plan.kind} plan never destroys data, but this step does "
            f"({escape_controls(' '.join(s.argv[:2]))} ...)"
            for i, s in enumerate(plan.steps, 1)
            if destroys(s.argv) is not None
        ]
        if out:
            return out
    dev = argv_devices(plan, machine)
    claimed = {strip_dev(d) for d in _params_devices(plan)}
    actual = set(dev.overwrites)
    resolved = machine is not None or not any("/" in d for d in actual)
    must_name = plan.kind in ("create-array", "filesystem", "member-add", "member-spare")
    if resolved and plan.kind != "member-replace" and claimed != actual and (claimed or must_name):
        out.append(
            "the commands write to "
            + (", ".join(sorted(actual)) or "no device")
            + " but the plan's params name "
            + (", ".join(sorted(claimed)) or "none")
        )
    if plan.kind == "create-array" and dev.level is not None:
        want = plan.params.get("level")
        try:
            same = want is None or normalize_level(str(want)) == normalize_level(dev.level)
        except Exception:
            same = False
        if not same:
            out.append(f"the commands create level {dev.level} but the params say {want}")
    if machine is None:
        return [escape_controls(x) for x in out]
    if plan.params.get("array") and plan.kind != "create-array":
        arr = strip_dev(str(plan.params["array"]))
        if arr not in dev.names:
            out.append(f"the params name the array {arr} but the commands do not")
    if plan.target:
        t = plan.target
        if not ({t, strip_dev(t), t.rsplit("/", 1)[-1]} & dev.names):
            out.append(f"the target {t!r} is not a device the commands name")
    elif plan.destructive:
        out.append("a plan that destroys data needs a target to confirm")
    return [escape_controls(x) for x in out]


def resolve_device(machine: Machine | None, path: str) -> str:
    """The kernel name of the array or LV at ``path`` on ``machine`` (/dev/md/127 → md127),
    else the path without /dev/ (for the preview's sync bar of an array a plan created)."""
    return _resolve(machine, path)
