"""A plan as an Ansible playbook (``raidman plan WIZARD ... --format ansible``).

The same steps as ``--json``, in the same order, each as ``ansible.builtin.command`` with an
``argv:`` list (never a shell), preceded by:

* **pre-flight** tasks that fail before anything changes: each device the plan overwrites exists
  and holds at least the bytes the plan was computed for, is not mounted or a swap and is not
  held by md/device-mapper/LVM (one ``lsblk --json --bytes`` for all of them: it walks /sys
  and mountinfo; then one assert per device, on the controller);
  for member actions, the member is (or is not yet) in the array (``/sys/block/mdX/md/dev-*``);
* an **idempotence guard** per step: a read-only check task (``changed_when: false``) and a
  ``when:`` so that a second run changes nothing (the array exists, the ARRAY line is in
  mdadm.conf, the PV/VG/LV/filesystem is there, the sysfs value is set); the initramfs is rebuilt
  only when an earlier step changed something. When the first destructive step is already done,
  the pre-flight is skipped with it (the devices are members of the array it made).

A plan whose steps the allowlist refuses (``allowlist.plan_step_problems``, what ``apply``
refuses) gets no playbook: ``playbook`` raises ``PlanError``.

Every string that comes from the plan is tagged ``!unsafe`` so Ansible never evaluates a
``{{ }}`` in a device name, label or reason. The YAML is written by hand (JSON-quoted scalars
are valid YAML); no YAML library is needed at run time. Domain only: no Textual.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from app.model import Disk, Machine, Partition
from app.plans import ops
from app.plans.geometry import PlanError
from app.plans.guards.allowlist import plan_step_problems
from app.plans.guards.plan_devices import argv_devices
from app.plans.guards.preflight import Preflight, strip_dev
from app.plans.plan import Plan, Step
from app.plans.render import format_plan


# ---- a tiny YAML writer ---------------------------------------------------------------------
class Unsafe(str):
    """A value from the plan: written as ``!unsafe "..."`` (never templated by Ansible)."""


class Expr(str):
    """A Jinja expression raidman wrote itself (for ``when:``/``that:``): a plain scalar."""


def _scalar(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, Unsafe):
        return "!unsafe " + json.dumps(str(v), ensure_ascii=False)
    if isinstance(v, str):
        return json.dumps(v, ensure_ascii=False)
    raise TypeError(f"cannot write {type(v).__name__} as YAML")


def _yaml(v: Any, indent: int) -> list[str]:
    pad = " " * indent
    out: list[str] = []
    if isinstance(v, dict):
        for k, x in v.items():
            if isinstance(x, dict | list) and x:
                out.append(f"{pad}{k}:")
                out += _yaml(x, indent + 2)
            elif isinstance(x, dict | list):
                out.append(f"{pad}{k}: {'{}' if isinstance(x, dict) else '[]'}")
            else:
                out.append(f"{pad}{k}: {_scalar(x)}")
        return out
    if isinstance(v, list):
        for x in v:
            if isinstance(x, dict | list) and x:
                inner = _yaml(x, indent + 2)
                out.append(f"{pad}- {inner[0].lstrip()}")
                out += inner[1:]
            else:
                out.append(f"{pad}- {_scalar(x)}")
        return out
    return [pad + _scalar(v)]


# ---- guards ---------------------------------------------------------------------------------
@dataclass
class _Guard:
    checks: list[dict[str, Any]] = field(default_factory=list)
    done: str | None = None  # Jinja: true when the step's effect is already there
    run_when: str | None = None  # Jinja: run only when this holds (instead of "not done")
    note: str | None = None


def _cmd(argv: Sequence[str], register: str, **extra: Any) -> dict[str, Any]:
    t: dict[str, Any] = {
        "ansible.builtin.command": {"argv": [Unsafe(a) for a in argv]},
        "register": register,
        "changed_when": False,
        "check_mode": False,
    }
    t.update(extra)
    return t


def _md_sysfs(md_path: str) -> str | None:
    """ "/dev/md127" → "/sys/block/md127/md"; a /dev/md/NAME path has no fixed kernel name."""
    name = strip_dev(md_path)
    return None if "/" in name else f"/sys/block/{name}/md"


def _state_check(r: str, g: _Guard, path: str, dev: str) -> None:
    base = _md_sysfs(path)
    if base is not None:
        g.checks.append(
            _cmd(["cat", f"{base}/dev-{strip_dev(dev)}/state"], f"{r}_check", failed_when=False)
        )


def _guard(i: int, step: Step, vars_: dict[str, Any], changed_before: list[str]) -> _Guard:
    op = step.op
    r = f"raidman_s{i}"
    g = _Guard()
    if isinstance(op, ops.CreateArray):
        g.checks.append(_cmd(["mdadm", "--detail", op.path], f"{r}_check", failed_when=False))
        g.done = f"{r}_check.rc == 0"
    elif isinstance(op, ops.AppendArrayFromDetail):
        g.checks.append(
            _cmd(
                list(op.stdin_from()),
                f"{r}_in",
                failed_when=Expr(f"{r}_in.rc != 0 and not ansible_check_mode"),
            )
        )
        have = _cmd(
            ["grep", "-qxF", "-e", "LINE", op.conf],
            f"{r}_have",
            failed_when=Expr(f"{r}_have.rc > 2"),
        )
        have["ansible.builtin.command"]["argv"][3] = f"{{{{ {r}_in.stdout | trim }}}}"
        g.checks.append(have)
        g.done = f"{r}_have.rc == 0"
    elif isinstance(op, ops.UpdateInitramfs):
        g.run_when = (
            " or ".join(f"{c} is changed" for c in changed_before) if changed_before else "false"
        )
        g.note = "runs only when an earlier step changed something"
    elif isinstance(op, ops.PvCreate):
        g.checks.append(_cmd(["pvs", op.device], f"{r}_check", failed_when=False))
        g.done = f"{r}_check.rc == 0"
    elif isinstance(op, ops.VgCreate):
        g.checks.append(_cmd(["vgs", op.vg], f"{r}_check", failed_when=False))
        g.done = f"{r}_check.rc == 0"
    elif isinstance(op, ops.LvCreate):
        g.checks.append(_cmd(["lvs", f"{op.vg}/{op.name}"], f"{r}_check", failed_when=False))
        g.done = f"{r}_check.rc == 0"
    elif isinstance(op, (ops.MakeExt4, ops.MakeXfs)):
        vars_[f"{r}_fstype"] = Unsafe("ext4" if isinstance(op, ops.MakeExt4) else "xfs")
        blkid = ["blkid", "-p", "-s", "TYPE", "-o", "value", op.device]
        g.checks.append(_cmd(blkid, f"{r}_check", failed_when=False))
        g.done = f"{r}_check.stdout | trim == {r}_fstype"
    elif isinstance(op, (ops.AddMember, ops.ReAddMember, ops.FailMember, ops.RemoveMember)):
        _state_check(r, g, op.array_path, op.device)
        if g.checks and isinstance(op, ops.FailMember):
            g.done = f"{r}_check.rc != 0 or 'faulty' in {r}_check.stdout"
        elif g.checks and isinstance(op, ops.RemoveMember):
            g.done = f"{r}_check.rc != 0"
        elif g.checks:
            g.done = f"{r}_check.rc == 0 and 'faulty' not in {r}_check.stdout"
    elif isinstance(op, ops.ReplaceMember):
        _state_check(r, g, op.array_path, op.old)
        if g.checks:
            g.done = (
                f"{r}_check.rc != 0 or 'faulty' in {r}_check.stdout"
                f" or 'want_replacement' in {r}_check.stdout"
            )
    elif isinstance(op, ops.GrowDevices):
        base = _md_sysfs(op.array_path)
        if base is not None:
            vars_[f"{r}_want"] = Unsafe(str(op.raid_devices))
            g.checks.append(_cmd(["cat", f"{base}/raid_disks"], f"{r}_check", failed_when=False))
            g.done = f"({r}_check.stdout.split() or [''])[0] == {r}_want"
    elif isinstance(op, (ops.SetSyncAction, ops.SetArraySpeed, ops.SetStripeCache, ops.SetSyncMin)):
        vars_[f"{r}_want"] = Unsafe(op.value())
        g.checks.append(_cmd(["cat", op.path], f"{r}_check", failed_when=False))
        g.done = (
            f"{r}_check.rc == 0 and (({r}_check.stdout.split() or [''])[0] == {r}_want"
            f" or ('(' ~ {r}_want ~ ')') in {r}_check.stdout)"
        )
    elif isinstance(op, ops.SetScheduler):
        vars_[f"{r}_want"] = Unsafe(op.scheduler)
        path = f"/sys/block/{op.disk}/queue/scheduler"
        g.checks.append(_cmd(["cat", path], f"{r}_check", failed_when=False))
        g.done = (
            f"{r}_check.rc == 0 and (({r}_check.stdout.split() or [''])[0] == {r}_want"
            f" or ('[' ~ {r}_want ~ ']') in {r}_check.stdout)"
        )
    elif isinstance(op, ops.SetSystemSpeed):
        vars_[f"{r}_want"] = Unsafe(str(op.kib_s))
        g.checks.append(_cmd(["sysctl", "-n", op.key], f"{r}_check", failed_when=False))
        g.done = f"{r}_check.stdout | trim == {r}_want"
    else:
        g.note = "no idempotence check known for this command: it runs on every run"
    return g


# ---- pre-flight -----------------------------------------------------------------------------
def _min_bytes(plan: Plan, machine: Machine, devices: Sequence[str]) -> int | None:
    """The size each overwritten device must at least have: what the plan was computed for."""
    if plan.kind == "create-array":
        sizes = [
            d.size_bytes for n in devices if isinstance(d := machine.device(n), Disk | Partition)
        ]
        return min(sizes) if sizes else None
    array = plan.params.get("array")
    a = machine.array(str(array)) if array else None
    if a is not None:
        kib = [m.size_kib for m in a.members if m.size_kib]
        if kib:
            return max(kib) * 1024
    return None


def _preflight_tasks(
    plan: Plan, machine: Machine, vars_: dict[str, Any], gate: str | None
) -> list[dict[str, Any]]:
    # what the argv overwrites, as pre-flight and apply see it (never the params)
    devices = tuple(strip_dev(d) for d in argv_devices(plan, machine).overwrites)
    need = _min_bytes(plan, machine, devices)
    when = {"when": Expr(f"not ({gate})")} if gate else {}
    out: list[dict[str, Any]] = []
    if devices:
        paths = [f"/dev/{dev}" for dev in devices]
        # one lsblk for every device: each one's size and everything on it (its holders'
        # tree), as JSON. Every command task is a module run on the target (a Python start
        # and, over ssh, a round trip), so one read, then one assert per device (asserts run
        # on the controller)
        out.append(
            {
                "name": Unsafe(f"pre-flight: what sits on {', '.join(paths)} and their sizes"),
                **_cmd(
                    ["lsblk", "--json", "--bytes", "--output", "NAME,TYPE,SIZE,MOUNTPOINT", *paths],
                    "raidman_pf_use",
                ),
                **when,
            }
        )
    for j, (dev, path) in enumerate(zip(devices, [f"/dev/{d}" for d in devices], strict=True)):
        r = f"raidman_pf{j}"
        vars_[f"{r}_dev"] = Unsafe(path)
        vars_[f"{r}_name"] = Unsafe(dev)
        # this device's entry: itself and, nested under "children", all that sits on it
        tree = Expr(
            "{{ (raidman_pf_use.stdout | from_json).blockdevices"
            f" | selectattr('name', 'equalto', {r}_name) | first }}}}"
        )
        size = f"({r}_tree.size | int)"
        in_use = (
            f"{{{{ {r}_dev }}}} is in use (mounted, swap, or held by md/dm/LVM): "
            f"{{{{ {r}_tree | to_json }}}}"
        )
        that = [
            # a mount point (or [SWAP]) anywhere on it: lsblk's "mountpoint" is null otherwise
            Expr(f'{r}_tree | to_json is not search(\'"mountpoint": ?"\')'),
            # anything but partitions on it: an md array, a dm/LVM volume, a crypt mapping
            Expr(
                f'{r}_tree | to_json | regex_findall(\'"type": ?"([^"]*)"\')'
                " | reject('in', ['disk', 'part', 'loop']) | list | length == 0"
            ),
        ]
        fail_msg = in_use
        title = f"pre-flight: {path} is not mounted, not swap, not held"
        if need:
            vars_[f"{r}_min"] = need
            that.insert(0, Expr(f"{size} >= {r}_min | int"))
            fail_msg = (
                f"{{% if {size} < {r}_min | int %}}{{{{ {r}_dev }}}} has "
                f"{{{{ {size} }}}} bytes; the plan needs {{{{ {r}_min }}}}"
                f"{{% else %}}{in_use}{{% endif %}}"
            )
            title = f"pre-flight: {path} holds at least {need} bytes, is not mounted, not swap, not held"
        out.append(
            {
                "name": Unsafe(title),
                "vars": {f"{r}_tree": tree},
                "ansible.builtin.assert": {
                    "that": that,
                    "fail_msg": Expr(fail_msg),
                    "quiet": True,
                },
                **when,
            }
        )
    # member actions: the member must be in the array (fail, remove, replace's old device)
    p = plan.params
    array = machine.array(str(p.get("array"))) if p.get("array") else None
    member = (
        p.get("device") if plan.kind in ("member-fail", "member-remove", "member-re-add") else None
    )
    member = p.get("old") if plan.kind == "member-replace" else member
    if array is not None and member and plan.kind != "member-re-add":
        vars_["raidman_member_state"] = Unsafe(f"/sys/block/{array.name}/md/dev-{member}/state")
        out.append(
            {
                "name": Unsafe(f"pre-flight: {member} is a member of {array.name}"),
                "ansible.builtin.stat": {"path": Expr("{{ raidman_member_state }}")},
                "register": "raidman_pf_member",
                **when,
            }
        )
        out.append(
            {
                "name": Unsafe(f"pre-flight: refuse if {member} is not a member of {array.name}"),
                "ansible.builtin.assert": {
                    "that": [Expr("raidman_pf_member.stat.exists")],
                    "fail_msg": Unsafe(f"{member} is not a member of {array.name} here"),
                    "quiet": True,
                },
                **when,
            }
        )
    return out


# ---- the playbook ---------------------------------------------------------------------------
def playbook(
    plan: Plan,
    machine: Machine,
    preflight: Preflight | None = None,
    *,
    hosts: str = "all",
    become: bool = True,
    digest: str | None = None,
) -> str:
    problems = plan_step_problems(plan)  # the check apply's executor makes: no playbook either
    if problems:
        raise PlanError("not a plan raidman runs: " + "; ".join(problems))
    digest = digest or plan.digest  # the same digest `plan --json` writes and `apply` checks
    vars_: dict[str, Any] = {
        "raidman_plan_title": Unsafe(plan.title),
        "raidman_plan_digest": digest,
    }
    guards: list[_Guard] = []
    changed: list[str] = []
    for i, step in enumerate(plan.steps, 1):
        guards.append(_guard(i, step, vars_, list(changed)))
        changed.append(f"raidman_s{i}")
    first_destructive = next((i for i, s in enumerate(plan.steps) if s.destructive), None)
    gate_idx = first_destructive if first_destructive is not None else 0
    gate = guards[gate_idx].done if plan.steps else None

    tasks: list[dict[str, Any]] = []
    # the gate's own checks run first: they decide whether the pre-flight applies
    if plan.steps:
        for c in guards[gate_idx].checks:
            tasks.append({"name": Unsafe(f"check {gate_idx + 1}: is it done already"), **c})
    tasks += _preflight_tasks(plan, machine, vars_, gate)
    for i, (step, g) in enumerate(zip(plan.steps, guards, strict=True), 1):
        if i - 1 != gate_idx:
            for c in g.checks:
                tasks.append({"name": Unsafe(f"check {i}: is it done already"), **c})
        args: dict[str, Any] = {"argv": [Unsafe(x) for x in step.argv]}
        if step.stdin_from is not None:
            args["stdin"] = Expr(f"{{{{ raidman_s{i}_in.stdout | trim }}}}")
        elif step.stdin is not None:
            args["stdin"] = Unsafe(step.stdin.rstrip("\n"))
        task: dict[str, Any] = {
            "name": Unsafe(f"{i}. {step.why}" + (" [DESTROYS DATA]" if step.destructive else "")),
            "ansible.builtin.command": args,
            "register": f"raidman_s{i}",
        }
        if g.run_when:
            task["when"] = Expr(g.run_when)
        elif g.done:
            task["when"] = Expr(f"not ({g.done})")
        tasks.append(task)

    play = {
        "name": Unsafe(f"raidman: {plan.title}"),
        "hosts": Unsafe(hosts),
        "become": become,
        "gather_facts": False,
        "any_errors_fatal": True,
        "vars": vars_,
        "tasks": tasks,
    }
    head = [
        "# Generated by `raidman plan ... --format ansible`: the same plan as --json.",
        f"# plan digest (sha256 over the steps, kind, target and disks; an integrity check, not a signature): {digest}",
        "# Run: ansible-playbook -i INVENTORY THIS.yml   (--check shows what would change)",
        "#",
    ]
    for line in format_plan(plan, preflight).rstrip("\n").splitlines():
        head.append(f"# {line}".rstrip())
    notes = [f"# step {i}: {g.note}" for i, g in enumerate(guards, 1) if g.note is not None]
    if notes:
        head.append("#")
        head += notes
    return "\n".join([*head, "---", *_yaml([play], 0)]) + "\n"
