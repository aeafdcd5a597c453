"""The storage stack as a tree, without any Textual object: Disks, Arrays, Volume groups (and
Other) as a flat list of ``NodeSpec`` (parents before children) from ``build_tree_spec(machine)``;
labels, badges and live relabels (the ``/`` filter: ``widgets.tree_filter``).
``widgets.storage_tree.StorageTree`` shows it.

Every device appears exactly once as a full node; every other mention of it is a *link* leaf
(``NodeRef.target`` set) that ``g``/``enter``/a click jumps to. Keys are stable (``dev:md127``,
``vg:vg0``, ``fs:dm-0``, ...) so the tree can be rebuilt on every probe while keeping the cursor
and the expanded nodes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields

from rich.text import Text

from app.escape import escape_controls
from app.format import (
    array_state_colour,
    array_summary,
    human_bytes,
    member_colour,
    member_marks,
    short_size,
)
from app.model.devices import (
    CryptMapping,
    Disk,
    LogicalVolume,
    Machine,
    MdArray,
    MdMember,
    Partition,
    PhysicalVolume,
)
from app.model.sync_model import wait_of
from app.plans.superblocks import Carried, Superblocks
from app.rules.finding import Finding
from widgets.tree_raid_lv import image_label, raid_label_parts

# kind of a node: section, disk, partition, array, container, member (link), pv-link, pv, vg,
# lv, fs, crypt, dev (unknown block device), link (any other link), empty
BADGES: dict[str, tuple[str, str]] = {
    "error": ("✖", "bold red"),
    "warning": ("▲", "bold yellow"),
    "advice": ("●", "bold blue"),
}
# a disk's short marks after its size, by the finding that sets them: the badge says only "an
# error"; the mark says which (the newest finished SMART self-test failed: app/rules/smart_logs)
MARKS: dict[str, tuple[str, str]] = {"smart-selftest-failed": ("self-test✖", "bold red")}


def disk_marks(findings: Iterable[Finding]) -> dict[str, str]:
    """disk -> the codes of its marks (``MARKS``), for ``StorageTree.set_marks``."""
    out: dict[str, str] = {}
    for f in findings:
        if f.code in MARKS and f.device:
            out[f.device] = f.code
    return out


@dataclass(frozen=True, slots=True)
class NodeRef:
    """What a tree node stands for. ``name`` is the kernel name (or VG name, "vg/lv")."""

    key: str
    kind: str
    name: str
    target: str | None = None  # key of the full node a link jumps to
    via: str | None = None  # for member links: the array the link is about

    @property
    def is_link(self) -> bool:
        return self.target is not None


@dataclass(slots=True)
class NodeSpec:
    ref: NodeRef
    parent: str | None  # parent key, None for top-level sections
    label: Text
    leaf: bool = True


def dev_key(name: str) -> str:
    return f"dev:{name}"


def lv_key(lv: LogicalVolume) -> str:
    return dev_key(lv.kernel_name) if lv.kernel_name else f"lv:{lv.vg}/{lv.name}"


def member_key(array: str, device: str) -> str:
    return f"member:{array}:{device}"


def member_of_key(device: str, array: str) -> str:
    return f"memberof:{device}>{array}"


def carrier_mark(carried: Iterable[Carried]) -> Text:
    """What a disk or partition carries of arrays it is no active member of (the superblocks'
    ``Superblocks.carriers``): ``carries md0, 12 events behind``, ``carries oldhost:backup, not
    assembled``. Never free: a wizard refuses it and a plan that overwrites it names the loss."""
    words: list[str] = []
    for c in carried:
        if not c.assembled:
            state = "not assembled"
        elif c.behind is None:
            state = "events unknown"
        else:
            state = f"{c.behind} event{'s' if c.behind != 1 else ''} behind"
        words.append(f"carries {escape_controls(c.array)}, {state}")  # a stray's name: from disk
    return Text("; ".join(words), "bold yellow")


# ---- the labels that follow the live state (a sample changes only these) -----------------------
def array_label(a: MdArray, machine: Machine | None = None) -> Text:
    t = Text(a.name, style="bold")
    if a.is_container:
        t.append(f"  container {a.metadata or ''}".rstrip(), array_state_colour(a))
        return t
    waits: tuple[str, ...] = ()
    if machine is not None and a.sync is not None and a.sync.action == "delayed":
        # md_do_sync holds it behind a sync on a shared disk: say which (app.model.sync_model)
        waits = wait_of(machine, a.name, [m.device for m in a.members]).arrays
    t.append(f"  {array_summary(a, waits, rate=True)}", array_state_colour(a))
    return t


def member_label(a: MdArray, mem: MdMember) -> Text:
    """A member link under its array: ``◦ sda  slot 0  in_sync``."""
    t = Text("◦ ", "bright_black")
    t.append(mem.device, "bold")
    if a.is_container:  # container members have no role of their own
        t.append("  container member", "bright_black")
        return t
    slot = f"slot {mem.slot}" if mem.slot is not None else "no slot"
    t.append(f"  {slot}  ")
    t.append(mem.role, member_colour(mem))
    marks = member_marks(mem)
    if marks:
        t.append(f" {marks}", "bold")
    return t


def member_of_label(a: MdArray, device: str) -> Text:
    """The link under a device to the array it belongs to: ``→ md127 slot 0  in_sync``."""
    mem = a.member(device)
    t = Text("→ ", "bright_black")
    t.append(a.name, "bold")
    if a.is_container:
        t.append("  container", "bright_black")
    elif mem is not None:
        t.append(f" slot {mem.slot}" if mem.slot is not None else " (no slot)")
        t.append(f"  {mem.role}", member_colour(mem))
        marks = member_marks(mem)
        if marks:
            t.append(f" {marks}", "bold")
    return t


# Machine fields no tree label shows: a probe that differs from the last only in these (and
# in arrays' live state) relabels those arrays instead of building the tree again
NOT_IN_TREE = frozenset({"arrays", "mdstat", "taken_at"})


def live_labels(old: Machine, new: Machine) -> dict[str, Text] | None:
    """The labels that differ between ``old`` and ``new`` when ``new`` is ``old`` with a live
    sample folded in (``merge_live``: the same objects but for the arrays it changed) or a
    probe that found the same stack (equal devices; arrays of the same members whose state may
    have moved), by node key; None when ``new`` differs otherwise (the whole tree is built
    again). Keys that are not in the tree are simply not found there."""
    if old is new:
        return {}
    for f in fields(Machine):
        if f.name not in NOT_IN_TREE:
            x, y = getattr(old, f.name), getattr(new, f.name)
            if x is not y and x != y:
                return None
    if len(old.arrays) != len(new.arrays):
        return None
    out: dict[str, Text] = {}
    for a, b in zip(old.arrays, new.arrays, strict=True):
        if a is b or a == b:
            continue
        if a.name != b.name or [m.device for m in a.members] != [m.device for m in b.members]:
            return None
        out[dev_key(b.name)] = array_label(b, new)
        if a.is_container == b.is_container and a.members == b.members:
            # a member's two labels show its array's name and kind and the member itself:
            # a sync that moved leaves them as they were (big: 16 syncing arrays' members
            # were labelled again each second, a fifth of the tree's time)
            continue
        for mem in b.members:
            out[member_key(b.name, mem.device)] = member_label(b, mem)
            out[member_of_key(mem.device, b.name)] = member_of_label(b, mem.device)
    return out


@dataclass
class _Builder:
    m: Machine
    marks: Mapping[str, str] = field(default_factory=dict)  # disk -> a MARKS code
    # device -> the superblocks it carries of arrays it is no member of (Superblocks.carriers)
    carried: Mapping[str, tuple[Carried, ...]] = field(default_factory=dict)
    specs: list[NodeSpec] = field(default_factory=list)
    placed: set[str] = field(default_factory=set)
    by_key: dict[str, NodeSpec] = field(default_factory=dict)
    # indexes, so that no device scans every partition / array / PV / LV (quadratic on big
    # machines)
    parts: dict[str, list[Partition]] = field(default_factory=dict)
    volumes: dict[str, list[MdArray]] = field(default_factory=dict)  # container -> volumes
    pv_of: dict[str, PhysicalVolume] = field(default_factory=dict)
    pvs_in: dict[str, list[PhysicalVolume]] = field(default_factory=dict)
    lvs_in: dict[str, list[LogicalVolume]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        m = self.m
        for p in sorted(m.partitions, key=lambda p: (p.start_sector, p.name)):
            self.parts.setdefault(p.parent, []).append(p)
        for a in m.arrays:
            if a.container:
                self.volumes.setdefault(a.container, []).append(a)
        for pv in reversed(m.pvs):  # the first PV of a device wins, as Machine.pv
            self.pv_of[pv.device] = pv
        for pv in m.pvs:
            if pv.vg:
                self.pvs_in.setdefault(pv.vg, []).append(pv)
        for lv in m.lvs:
            self.lvs_in.setdefault(lv.vg, []).append(lv)

    def add(self, ref: NodeRef, parent: str | None, label: Text) -> str:
        key = ref.key
        n = 2
        while key in self.by_key:  # links may repeat (same PV twice): keep keys unique
            key = f"{ref.key}#{n}"
            n += 1
        if key != ref.key:
            ref = NodeRef(key, ref.kind, ref.name, ref.target, ref.via)
        spec = NodeSpec(ref, parent, label)
        self.specs.append(spec)
        self.by_key[key] = spec
        if parent is not None:
            self.by_key[parent].leaf = False
        return key

    # ---- labels ---------------------------------------------------------------------
    @staticmethod
    def _name(name: str, style: str = "bold") -> Text:
        return Text(name, style=style)

    def disk_label(self, d: Disk) -> Text:
        t = self._name(d.name)
        t.append(f"  {short_size(d.size_bytes)}", "cyan")
        mark = MARKS.get(self.marks.get(d.name, ""))
        if mark is not None:  # before the tags and the model: what a narrow pane cuts first
            t.append(f"  {mark[0]}", mark[1])
        self.carrier(t, d.name)
        kind = {True: "hdd", False: "ssd"}.get(d.rotational) if d.rotational is not None else None
        tags = " ".join(x for x in (kind, d.transport) if x)
        if tags:
            t.append(f"  {tags}", "bright_black")
        if d.model:  # last: the longest and the least needed when the pane is narrow
            t.append(f"  {d.model}")
        return t

    def part_label(self, p: Partition) -> Text:
        t = self._name(p.name)
        t.append(f"  {short_size(p.size_bytes)}", "cyan")
        self.carrier(t, p.name)
        desc = p.type_name or p.label
        if desc:
            t.append(f"  {desc}", "bright_black")
        return t

    def carrier(self, t: Text, name: str) -> None:
        """The superblocks ``name`` carries, after its size: before the type and the model, what
        a narrow pane cuts first."""
        carried = self.carried.get(name)
        if carried:
            t.append("  ")
            t.append_text(carrier_mark(carried))

    def array_label(self, a: MdArray) -> Text:
        return array_label(a, self.m)

    # ---- structure -------------------------------------------------------------------
    def build(self) -> list[NodeSpec]:
        m = self.m
        self.add(
            NodeRef("section:disks", "section", "Disks"), None, Text("Disks", "bold underline")
        )
        disks = [d for d in m.disks if d.is_storage]  # as `raidman report` lists them
        for d in disks:
            self.device_node(d.name, "section:disks")
        if not disks:
            self.add(NodeRef("empty:disks", "empty", ""), "section:disks", Text("(none)", "dim"))
        if m.arrays:
            self.add(
                NodeRef("section:arrays", "section", "Arrays"),
                None,
                Text("Arrays", "bold underline"),
            )
            names = {a.name for a in m.arrays}
            for a in m.arrays:
                if a.container and a.container in names:
                    continue  # shown under its container
                self.device_node(a.name, "section:arrays")
        vg_names = [vg.name for vg in m.vgs]
        for lv in m.lvs:
            if lv.vg not in vg_names:
                vg_names.append(lv.vg)
        if vg_names:
            self.add(
                NodeRef("section:vgs", "section", "Volume groups"),
                None,
                Text("Volume groups", "bold underline"),
            )
            for name in vg_names:
                self.vg_node(name, "section:vgs")
        self.others()
        return self.specs

    def device_node(self, name: str, parent: str) -> None:
        """A full node for ``name`` and, under it, what sits on it."""
        m = self.m
        key = dev_key(name)
        if key in self.placed:
            self.add(NodeRef(f"link:{parent}>{name}", "link", name, key), parent, Text(f"→ {name}"))
            return
        self.placed.add(key)
        obj = m.device(name)
        if isinstance(obj, Disk):
            self.add(NodeRef(key, "disk", name), parent, self.disk_label(obj))
        elif isinstance(obj, Partition):
            self.add(NodeRef(key, "partition", name), parent, self.part_label(obj))
        elif isinstance(obj, MdArray):
            kind = "container" if obj.is_container else "array"
            self.add(NodeRef(key, kind, name), parent, self.array_label(obj))
            self.array_children(obj, key)
        elif isinstance(obj, CryptMapping):
            t = self._name(name)
            t.append(f"  crypt {obj.name}", "magenta")
            if obj.type:
                t.append(f"  {obj.type}", "bright_black")
            self.add(NodeRef(key, "crypt", name), parent, t)
        elif isinstance(obj, LogicalVolume):  # only reached via VG
            self.add(NodeRef(key, "lv", name), parent, self.lv_label(obj))
        else:
            self.add(NodeRef(key, "dev", name), parent, self._name(name))
        self.stack_children(name, key)

    def array_children(self, a: MdArray, key: str) -> None:
        m = self.m
        for mem in a.members_by_slot:
            target = dev_key(mem.device) if m.device(mem.device) is not None else None
            self.add(
                NodeRef(member_key(a.name, mem.device), "member", mem.device, target, a.name),
                key,
                member_label(a, mem),
            )
        for vol in self.volumes.get(a.name, ()):
            self.device_node(vol.name, key)

    def stack_children(self, name: str, key: str) -> None:
        m = self.m
        for p in self.parts.get(name, ()):
            self.device_node(p.name, key)
        fs = m.filesystem(name)
        if fs is not None:
            self.fs_node(name, key)
        pv = self.pv_of.get(name)
        if pv is not None:
            if pv.vg:
                t = Text("→ ", "bright_black")
                t.append("PV", "cyan")
                t.append(" of ")
                t.append(pv.vg, "bold")
                self.add(NodeRef(f"pvlink:{name}", "pv-link", name, f"vg:{pv.vg}"), key, t)
            else:
                self.add(NodeRef(f"pv:{name}", "pv", name), key, Text("PV (in no VG)", "cyan"))
        for child in m.children_of(name):
            obj = m.device(child)
            if isinstance(obj, Partition) and obj.parent == name:
                continue
            if isinstance(obj, MdArray):
                if obj.container == name:
                    continue  # a volume inside its container: listed by array_children
                self.add(
                    NodeRef(
                        member_of_key(name, obj.name), "member", name, dev_key(obj.name), obj.name
                    ),
                    key,
                    member_of_label(obj, name),
                )
            elif isinstance(obj, LogicalVolume):
                if pv is None:
                    self.add(
                        NodeRef(f"link:{key}>{lv_key(obj)}", "link", obj.name, lv_key(obj)),
                        key,
                        Text(f"→ LV {obj.vg}/{obj.name}"),
                    )
            elif isinstance(obj, CryptMapping) or obj is None:
                self.device_node(child, key)  # a link if it is already placed elsewhere

    def fs_node(self, device: str, parent: str) -> None:
        fs = self.m.filesystem(device)
        if fs is None or f"fs:{device}" in self.placed:
            return
        self.placed.add(f"fs:{device}")
        t = Text(fs.fstype, "bold green" if fs.mounted else "bold")
        if fs.mountpoints:
            t.append(f"  {', '.join(fs.mountpoints)}", "green")
        else:
            t.append("  not mounted", "bright_black")
        if fs.size_bytes:
            used = f"{short_size(fs.used_bytes)}/" if fs.used_bytes is not None else ""
            t.append(f"  {used}{short_size(fs.size_bytes)}", "cyan")
        if fs.label:
            t.append(f"  “{fs.label}”", "bright_black")
        self.add(NodeRef(f"fs:{device}", "fs", device), parent, t)

    def lv_label(self, lv: LogicalVolume) -> Text:
        t = Text(lv.name, "bold" if lv.active else "dim")
        t.append(f"  {short_size(lv.size_bytes)}", "cyan")
        seg = lv.segtype
        if lv.stripes and lv.stripes > 1 and not (lv.raid is not None and lv.raid.images):
            seg += f" ×{lv.stripes}"  # a raid LV's images are its nodes: no count on its line
        t.append(f"  {seg}", "magenta" if seg.startswith(("raid", "thin", "mirror")) else "")
        if lv.data_percent is not None:
            t.append(f" {lv.data_percent:.1f}%", "yellow" if lv.data_percent >= 80 else "")
        raid_label_parts(lv, t)
        if lv.kernel_name:
            t.append(f"  ({lv.kernel_name})", "bright_black")
        elif not lv.active:
            t.append("  inactive", "bright_black")
        return t

    def vg_node(self, name: str, parent: str) -> None:
        m = self.m
        key = f"vg:{name}"
        vg = m.vg(name)
        t = Text(name, "bold")
        if vg is not None:
            t.append(f"  {short_size(vg.size_bytes)}", "cyan")
            t.append(f"  free {human_bytes(vg.free_bytes)}", "bright_black")
        self.placed.add(key)
        self.add(NodeRef(key, "vg", name), parent, t)
        for pv in self.pvs_in.get(name, ()):
            lt = Text("◦ PV ", "bright_black")
            missing = pv.missing or pv.device.startswith("[")
            lt.append(pv.device, "bold red" if missing else "bold")
            lt.append(f"  {short_size(pv.size_bytes)}", "cyan")
            if missing:
                lt.append("  MISSING", "bold red")
            target = dev_key(pv.device) if m.device(pv.device) is not None else None
            self.add(NodeRef(f"vgpv:{name}:{pv.device}", "pv", pv.device, target), key, lt)
        lvs = self.lvs_in.get(name, [])
        visible = [lv for lv in lvs if not lv.hidden]
        placed_lv: set[str] = set()

        def parent_of(lv: LogicalVolume) -> LogicalVolume | None:
            if lv.pool:
                for p in lvs:
                    if p.name == lv.pool:
                        return p
            if lv.hidden:
                bare = lv.name.strip("[]")
                best = None
                for v in lvs:
                    if (
                        v is not lv
                        and bare.startswith(v.name.strip("[]") + "_")
                        and (best is None or len(v.name) > len(best.name))
                    ):
                        best = v
                return best
            return None

        def add_lv(lv: LogicalVolume, parent_key: str) -> None:
            k = lv_key(lv)
            placed_lv.add(lv.name)
            self.placed.add(k)
            self.add(
                NodeRef(k, "lv", lv.kernel_name or f"{lv.vg}/{lv.name}"),
                parent_key,
                self.lv_label(lv),
            )
            for image in lv.raid.images if lv.raid is not None else ():
                pv = image.pvs[0] if len(image.pvs) == 1 else None
                present = pv is not None and m.device(pv) is not None
                self.add(
                    NodeRef(
                        f"rimage:{lv.vg}/{lv.name}:{image.index}",
                        "pv",
                        pv or image.image,
                        dev_key(pv) if present and pv is not None else None,
                    ),
                    k,
                    image_label(image, present or pv is None),
                )
            for sub in lvs:
                if sub.name not in placed_lv and parent_of(sub) is lv:
                    add_lv(sub, k)
            if lv.kernel_name:
                self.stack_children(lv.kernel_name, k)

        for lv in visible:
            if lv.name not in placed_lv and parent_of(lv) is None:
                add_lv(lv, key)
        for lv in lvs:  # anything whose parent was not found
            if lv.name not in placed_lv:
                add_lv(lv, key)

    def others(self) -> None:
        m = self.m
        rest: list[str] = [
            c.kernel_name for c in m.crypts if dev_key(c.kernel_name) not in self.placed
        ]
        loose_fs = [f.device for f in m.filesystems if f"fs:{f.device}" not in self.placed]
        if not rest and not loose_fs:
            return
        self.add(
            NodeRef("section:other", "section", "Other"), None, Text("Other", "bold underline")
        )
        for name in rest:
            self.device_node(name, "section:other")
        for dev in loose_fs:
            if f"fs:{dev}" not in self.placed:
                self.fs_node(dev, "section:other")


def build_tree_spec(
    machine: Machine,
    marks: Mapping[str, str] | None = None,
    superblocks: Superblocks | None = None,
) -> list[NodeSpec]:
    """The tree as a flat list (parents before children), without any Textual object;
    ``marks``: disk -> a ``MARKS`` code (``disk_marks`` of the findings); ``superblocks``: the
    audit's read, whose carriers (``Superblocks.carriers``) each disk or partition names."""
    carried = superblocks.carriers(machine) if superblocks is not None else {}
    return _Builder(machine, dict(marks or {}), carried).build()
