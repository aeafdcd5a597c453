"""``mdadm`` manage mode: --fail, --remove, --add, --re-add, --replace ... --with."""

from __future__ import annotations

from backends.simulated.bitmap import dirty_fraction
from backends.simulated.programs.argv import Result
from backends.simulated.programs.devices import busy_reason, resolve
from backends.simulated.programs.mdadm_detail import md_detail
from backends.simulated.records import SimArray, SimMember
from backends.simulated.state import SimState


def md_manage(st: SimState, args: list[str]) -> Result:
    target: str | None = None
    op: str | None = None
    out, err = "", ""
    short = {"-f": "fail", "-r": "remove", "-a": "add", "--fail": "fail", "--remove": "remove",
             "--add": "add", "--re-add": "re-add", "--replace": "replace", "--with": "with",
             "--add-spare": "add-spare", "--set-faulty": "fail"}  # fmt: skip
    replace_src: list[str] = []
    for tok in args:
        if tok in ("--manage", "-q", "--quiet", "-v", "--verbose", "--run", "-R"):
            continue
        if tok in short:
            op = short[tok]
            continue
        if tok.startswith("-"):
            return 2, out, err + f"mdadm: unrecognized option '{tok}'\n"
        if target is None:
            dev = resolve(st, tok)
            if dev is None or dev not in st.arrays:
                return 1, out, err + f"mdadm: error opening {tok}: No such file or directory\n"
            target = dev
            continue
        if op is None:
            return 2, out, err + f"mdadm: No action given for {tok} in --manage mode\n"
        a = st.arrays[target]
        rc, o, e = manage_one(st, a, op, tok, replace_src)
        out += o
        err += e
        if rc:
            return rc, out, err
    if target is None:
        return 2, out, "mdadm: No devices given.\n"
    if op is None:
        return 0, md_detail(st, st.arrays[target], f"/dev/{target}"), ""
    return 0, out, err


def manage_one(st: SimState, a: SimArray, op: str, tok: str, replace_src: list[str]) -> Result:
    md = f"/dev/{a.name}"
    if op == "remove" and tok in ("failed", "detached"):
        gone = [m for m in a.members if "faulty" in m.state]
        for g in gone:
            a.members.remove(g)
            a.removed[g.device] = (st.t, g.desc_nr)
        st.touch()
        return 0, "", "".join(f"mdadm: hot removed /dev/{g.device} from {md}\n" for g in gone)
    dev = resolve(st, tok)
    if dev is None:
        return 1, "", f"mdadm: Cannot find {tok}: No such file or directory\n"
    m = a.member(dev)
    if op == "fail":
        if m is None:
            return 1, "", f"mdadm: set device faulty failed for {tok}:  No such device\n"
        if "faulty" in m.state:
            return 0, "", f"mdadm: set {tok} faulty in {md}\n"
        working = "in_sync" in m.state and m.slot is not None
        if working and (not a.redundant() or a.degraded() >= st.max_failures(a)):
            return 1, "", f"mdadm: set device faulty failed for {tok}:  Device or resource busy\n"
        st.advance_to(st.t)
        m.state = {"faulty"}
        m.slot = None
        m.recovery_start = None
        job = a.job
        if job is not None and (dev in job.targets or job.action in ("resync", "check", "repair")):
            a.last_sync_action = job.action
            a.job = None
            st.events.append((st.t, a.name, f"{job.action} interrupted: {dev} failed"))
        st.events.append((st.t, a.name, f"{dev} faulty, array degraded"))
        a.array_state = "clean"
        st.touch()
        st.maybe_start_recovery(a)
        st.note_recovery_needed(a)
        return 0, "", f"mdadm: set {tok} faulty in {md}\n"
    if op == "remove":
        if m is None:
            return 1, "", f"mdadm: hot remove failed for {tok}: No such device or address\n"
        if "faulty" not in m.state and m.slot is not None:
            return 1, "", f"mdadm: hot remove failed for {tok}: Device or resource busy\n"
        a.members.remove(m)
        a.removed[dev] = (st.t, m.desc_nr)
        if a.job is not None and dev in a.job.targets:
            a.job = None
        st.md_superblocks[dev] = (a.uuid, a.array_name or "")
        st.touch()
        return 0, "", f"mdadm: hot removed {tok} from {md}\n"
    if op in ("add", "re-add", "add-spare"):
        if m is not None:
            return 1, "", f"mdadm: Cannot open {tok}: Device or resource busy\n"
        if busy_reason(st, dev):
            return 1, "", f"mdadm: Cannot open {tok}: Device or resource busy\n"
        size = st.device_size(dev) or 0
        offset = 262144 if size >= 16 << 30 else 2048
        if (size // 512 - offset) // 2 < a.component_kib:
            return 1, "", f"mdadm: {tok} not large enough to join array\n"
        was = a.removed.get(dev)
        can_readd = was is not None and a.bitmap is not None and op != "add-spare"
        if op == "re-add" and not can_readd:
            return 1, "", f"mdadm: --re-add for {tok} to {md} is not possible\n"
        st.md_superblocks.pop(dev, None)
        st.filesystems.pop(dev, None)
        if can_readd and was is not None and a.degraded() > 0:
            missing = sorted(set(range(a.raid_disks)) - set(a.slots()))
            new = SimMember(dev, was[1], missing[0], {"spare"}, data_offset=offset)
            a.members.append(new)
            del a.removed[dev]
            frac = dirty_fraction(was[0], st.t)
            if a.job is None:
                st.start_sync(a, "recover", targets=(dev,), partial_fraction=frac)
            st.touch()
            return 0, "", f"mdadm: re-added {tok}\n"
        new = SimMember(dev, a.next_desc, None, {"spare"}, data_offset=offset)
        a.next_desc += 1
        a.members.append(new)
        a.removed.pop(dev, None)
        st.touch()
        if op != "add-spare":
            st.maybe_start_recovery(a)
        st.note_recovery_needed(a)
        return 0, "", f"mdadm: added {tok}\n"
    if op == "replace":
        if m is None or "in_sync" not in m.state:
            return 1, "", f"mdadm: {tok} is not an active member of {md}\n"
        replace_src.append(dev)
        m.state.add("want_replacement")
        st.touch()
        return 0, "", f"mdadm: Marked {tok} (device {m.slot} in {md}) for replacement\n"
    if op == "with":
        if not replace_src:
            return 2, "", "mdadm: --with must follow --replace\n"
        src = a.member(replace_src.pop())
        if m is None or m.slot is not None or "spare" not in m.state:
            return 1, "", f"mdadm: {tok} is not a spare in {md}: add it first with --add\n"
        assert src is not None
        m.slot = src.slot
        m.state = {"replacement"}
        if a.job is None:
            st.start_sync(a, "recover", targets=(dev,))
        st.touch()
        return 0, "", f"mdadm: Marked {tok} in {md} as replacement for device {src.slot}\n"
    return 2, "", f"mdadm: unsupported operation {op}\n"
