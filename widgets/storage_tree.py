"""The storage stack as a tree: Disks, Arrays, Volume groups (and Other).

Every device appears exactly once as a full node; every other mention of it is a *link* leaf
(``NodeRef.target`` set) that ``g``/``enter``/a click jumps to. The tree is built from a flat,
pure ``build_tree_spec(machine)`` so it can be rebuilt on every probe while keeping the cursor
and the expanded nodes (keys are stable: ``dev:md127``, ``vg:vg0``, ``fs:dm-0``, ...).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import ClassVar

from rich.cells import cell_len
from rich.style import Style
from rich.text import Text
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

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

# kind of a node: section, disk, partition, array, container, member (link), pv-link, pv, vg,
# lv, fs, crypt, dev (unknown block device), link (any other link), empty
BADGES: dict[str, tuple[str, str]] = {
    "error": ("✖", "bold red"),
    "warning": ("▲", "bold yellow"),
    "advice": ("●", "bold blue"),
}


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


# ---- the labels that follow the live state (a sample changes only these) -----------------------
def array_label(a: MdArray) -> Text:
    t = Text(a.name, style="bold")
    if a.is_container:
        t.append(f"  container {a.metadata or ''}".rstrip(), array_state_colour(a))
        return t
    t.append(f"  {array_summary(a)}", array_state_colour(a))
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


GAPS = re.compile(r" · |  +")
# "DEGRADED(1)" after a state map that shows the missing member ("[_UUUU]") says it twice
DEGRADED_AFTER_MAP = re.compile(r"(?<=\])\s*(?:· )?DEGRADED\(\d+\)")
MAP_WITH_HOLE = re.compile(r"\[[U_]*_[U_]*\]")


def _cut(label: Text, pattern: re.Pattern[str], keep: int) -> Text:
    """``label`` with each match of ``pattern`` replaced by its first ``keep`` characters (so
    in the match's own style); the other spans kept."""
    out = Text(end="")
    pos = 0
    for m in pattern.finditer(label.plain):
        out.append_text(label[pos : m.start()])
        out.append_text(label[m.start() : m.start() + keep])
        pos = m.end()
    out.append_text(label[pos:])
    return out


def squeeze_label(label: Text, room: int) -> Text:
    """A label too wide for ``room`` columns, shortened where it says least, so its end (an
    array's sync %) is cut later: gaps ("  ", " · ") become one space, then an array's
    "DEGRADED(n)" goes when its state map shows the hole. What still does not fit is cut at
    the end by the tree (a disk's model comes last)."""
    out = _cut(label, GAPS, 1)
    if out.cell_len > room and MAP_WITH_HOLE.search(out.plain):
        out = _cut(out, DEGRADED_AFTER_MAP, 0)
    return out


def live_labels(old: Machine, new: Machine) -> dict[str, Text] | None:
    """The labels that differ between ``old`` and ``new`` when ``new`` is ``old`` with a live
    sample folded in (``merge_live``: the same objects but for the arrays it changed), by node
    key; None when ``new`` differs otherwise (a probe: the whole tree is built again). Keys
    that are not in the tree are simply not found there."""
    if old is new:
        return {}
    for f in fields(Machine):
        if f.name != "arrays" and getattr(old, f.name) is not getattr(new, f.name):
            return None
    if len(old.arrays) != len(new.arrays):
        return None
    out: dict[str, Text] = {}
    for a, b in zip(old.arrays, new.arrays, strict=True):
        if a is b:
            continue
        if a.name != b.name or [m.device for m in a.members] != [m.device for m in b.members]:
            return None
        out[dev_key(b.name)] = array_label(b)
        for mem in b.members:
            out[member_key(b.name, mem.device)] = member_label(b, mem)
            out[member_of_key(mem.device, b.name)] = member_of_label(b, mem.device)
    return out


@dataclass
class _Builder:
    m: Machine
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
        desc = p.type_name or p.label
        if desc:
            t.append(f"  {desc}", "bright_black")
        return t

    def array_label(self, a: MdArray) -> Text:
        return array_label(a)

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
        if lv.stripes and lv.stripes > 1:
            seg += f" ×{lv.stripes}"
        t.append(f"  {seg}", "magenta" if seg.startswith(("raid", "thin", "mirror")) else "")
        if lv.data_percent is not None:
            t.append(f" {lv.data_percent:.1f}%", "yellow" if lv.data_percent >= 80 else "")
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


def build_tree_spec(machine: Machine) -> list[NodeSpec]:
    """The tree as a flat list (parents before children), without any Textual object."""
    return _Builder(machine).build()


def filter_label(text: str, matches: int) -> Text:
    t = Text("⌕ ", "bold magenta")
    t.append(text, "bold")
    t.append(f"  {matches} match{'es' if matches != 1 else ''}", "magenta")
    t.append("  (/ change · esc clear)", "bright_black")
    return t


# words of a tree filter that select by state rather than by text
FILTER_KEYWORDS = ("degraded", "syncing", "finding", "findings")


def spec_matches(
    s: NodeSpec, words: list[str], machine: Machine | None, badges: Mapping[str, str]
) -> bool:
    """Every word matches the node: its label, kernel name, a disk's model or serial, or a
    keyword (``degraded``, ``syncing``, ``finding``)."""
    if s.ref.kind in ("section", "empty"):
        return False
    hay = f"{s.label.plain} {s.ref.name}".lower()
    obj = machine.device(s.ref.name) if machine is not None and s.ref.name else None
    if isinstance(obj, Disk):
        hay += f" {obj.model or ''} {obj.serial or ''}".lower()
    for w in words:
        if w == "degraded":
            if not (s.ref.kind == "array" and isinstance(obj, MdArray) and obj.is_degraded):
                return False
        elif w == "syncing":
            ok = isinstance(obj, MdArray) and obj.sync is not None and obj.sync.active
            if not ok or s.ref.kind != "array":
                return False
        elif w in ("finding", "findings"):
            if s.ref.is_link or s.ref.name not in badges:
                return False
        elif w not in hay:
            return False
    return True


def filter_specs(
    specs: list[NodeSpec], text: str, machine: Machine | None, badges: Mapping[str, str]
) -> tuple[list[NodeSpec], int]:
    """The nodes that match ``text``, with their ancestors (the path to them) and their
    descendants (an array's members, a disk's partitions); and how many matched."""
    words = text.lower().split()
    if not words:
        return specs, 0
    by_key = {sp.ref.key: sp for sp in specs}
    matched = {sp.ref.key for sp in specs if spec_matches(sp, words, machine, badges)}
    below: set[str] = set(matched)  # the matches and everything under them
    for sp in specs:  # parents come before children
        if sp.parent is not None and sp.parent in below:
            below.add(sp.ref.key)
    keep = set(below)
    for key in matched:  # the path down to each match
        parent = by_key[key].parent
        while parent is not None and parent not in keep:
            keep.add(parent)
            parent = by_key[parent].parent
    return [sp for sp in specs if sp.ref.key in keep], len(matched)


# a NodeSelected this soon after a click came from the click (Tree posts it from _on_click)
CLICK_SELECT_S = 0.5


class StorageTree(Tree[NodeRef]):
    """The stack tree. ``update_machine`` after each probe; ``set_badges`` from the audit.

    Children of a collapsed node are not added as ``TreeNode``s until it is expanded: their
    specs wait in ``_kids`` (always current, so live relabels and badges reach them too).
    On machines with more than ``LAZY_DISKS`` disks the disks start collapsed, so a full
    rebuild adds the sections, the disks and the arrays only; ``go_to`` materialises the path
    to any device first.
    """

    LAZY_DISKS: ClassVar[int] = 200  # above this many disks, disks start collapsed
    # class defaults: Tree.__init__ already calls _invalidate
    _batching: bool = False
    _batch_dirty: bool = False

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("g", "jump", "Go to link", show=True),
        Binding("slash", "filter", "Filter", show=True),
        Binding("backspace", "back", "Back", show=True),
        Binding("escape", "clear_filter", "Clear filter", show=True),
    ]
    HISTORY: ClassVar[int] = 50  # jumps remembered for "back"

    DEFAULT_CSS = """
    StorageTree { scrollbar-size-vertical: 1; }
    """

    class Highlighted(Message):
        """The cursor moved to another node (``ref`` None when the tree is empty)."""

        def __init__(self, ref: NodeRef | None) -> None:
            super().__init__()
            self.ref = ref

    def __init__(self, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__("storage", id=id, classes=classes)
        self.show_root = False
        # A click selects; it must not also fold the node away (Tree's auto_expand toggles on
        # every select). The keyboard keeps enter-to-toggle: see on_tree_node_selected.
        self.auto_expand = False
        self._clicked_at = -1.0
        self.guide_depth = 2
        self._by_key: dict[str, TreeNode[NodeRef]] = {}  # materialised nodes only
        self._specs: list[NodeSpec] = []
        self._spec_by_key: dict[str, NodeSpec] = {}
        self._kids: dict[str | None, list[NodeSpec]] = {}  # parent key -> its children's specs
        self._filled: set[str] = set()  # materialised nodes whose children are added too
        self._badges: dict[str, str] = {}
        self._machine: Machine | None = None
        self._lazy = False  # big machine: disks start collapsed
        # expanded state the user chose where it differs from the default (kept by key
        # across rebuilds, also for nodes not materialised at the moment)
        self._open: dict[str, bool] = {}
        self._filter = ""  # what `/` filters the tree by ("" = everything)
        self._highlighted: str | None = None  # the key last announced as Highlighted
        self._moves = 0  # go_to calls so far: a rebuild's deferred restore yields to a newer one
        self._history: list[str] = []  # keys the cursor was on before each jump, newest last

    # ---- public API --------------------------------------------------------------------
    @property
    def keys(self) -> list[str]:
        return [s.ref.key for s in self._specs]

    def refs(self) -> Iterable[NodeRef]:
        return (s.ref for s in self._specs)

    def node_for(self, key: str) -> TreeNode[NodeRef] | None:
        """The ``TreeNode`` of ``key`` if it is materialised (see ``go_to`` / ``reveal``)."""
        return self._by_key.get(key)

    def label_for(self, key: str) -> Text | None:
        """The label (with its badge) of ``key``, materialised or not."""
        spec = self._spec_by_key.get(key)
        return self._decorate(spec) if spec is not None else None

    @property
    def current(self) -> NodeRef | None:
        node = self.cursor_node
        return node.data if node is not None else None

    def update_machine(self, machine: Machine) -> None:
        """Show ``machine``. A live sample folded into the machine shown (``live_labels``):
        only the labels of the arrays it changed are made again. Same structure: labels updated
        in place; otherwise rebuilt, keeping the cursor (by key) and what the user collapsed or
        expanded. Only a label whose text changed is set again (each costs a redraw)."""
        old = self._machine
        # (the same object again: a filter changed, or a caller asks for a rebuild)
        fast = old is not None and old is not machine and not self._filter
        live = live_labels(old, machine) if fast and old is not None else None
        self._machine = machine
        if live is not None:
            for key, label in live.items():
                spec = self._spec_by_key.get(key)
                if spec is None or spec.label == label:
                    continue
                spec.label = label
                node = self._by_key.get(key)
                if node is not None:
                    decorated = self._decorate(spec)
                    if node.label != decorated:
                        node.set_label(decorated)
            return
        specs = build_tree_spec(machine)
        if self._filter:
            specs, n = filter_specs(specs, self._filter, machine, self._badges)
            head = NodeSpec(NodeRef("filter", "section", ""), None, filter_label(self._filter, n))
            specs.insert(0, head)
        old_specs, old_by_key = self._specs, self._spec_by_key
        same = len(old_specs) == len(specs) and all(
            a.ref.key == b.ref.key and a.parent == b.parent
            for a, b in zip(old_specs, specs, strict=True)
        )
        self._set_specs(specs)
        if same and self._by_key:
            by_key = self._by_key
            for s in specs:
                node = by_key.get(s.ref.key)
                if node is None:
                    continue  # pending: materialised from its (new) spec later
                node.data = s.ref
                label = self._decorate(s)
                if node.label != label:  # relabel only what changed (each costs a redraw)
                    node.set_label(label)
            return
        cursor = self.current.key if self.current is not None else None
        self._remember_open(old_by_key)
        self._lazy = len(machine.disks) > self.LAZY_DISKS
        with self._batch():
            self.clear()
            self._by_key = {}
            self._filled = set()
            self._fill_children(None, self.root)
        if cursor is not None and cursor in self._spec_by_key:
            self.call_after_refresh(self._restore_cursor, cursor, self._moves)
        elif cursor is None and specs:
            self.call_after_refresh(self._first_device)

    def set_badges(self, mapping: Mapping[str, str]) -> None:
        """Badges per device kernel name (or VG name): severity "error" / "warning" / "advice".
        Nodes not materialised yet get theirs when they are added."""
        old, self._badges = self._badges, dict(mapping)
        changed = {n for n in old.keys() | self._badges.keys() if old.get(n) != self._badges.get(n)}
        if not changed:
            return
        relabelled = False
        for s in self._specs:
            if s.ref.name in changed:
                node = self._by_key.get(s.ref.key)
                if node is not None:
                    node.set_label(self._decorate(s))
                    relabelled = True
        if relabelled:
            # set_label redraws the node but leaves the tree's virtual width as it was: a badge
            # makes a label 2 cells wider, and the horizontal scrollbar stayed that much short
            # until some later rebuild (whether one came first decided the snapshot's thumb)
            self._invalidate()

    def reveal(self, key: str) -> TreeNode[NodeRef] | None:
        """Materialise and expand the path to ``key``; its node (None: no such key)."""
        if key not in self._spec_by_key:
            return None
        path: list[str] = []
        parent = self._spec_by_key[key].parent
        while parent is not None:
            path.append(parent)
            parent = self._spec_by_key[parent].parent
        with self._batch():
            for anc in reversed(path):
                node = self._by_key[anc]  # its own parent was filled one step before
                if not node.is_expanded:
                    node.expand()
                self._fill(anc)
        return self._by_key[key]

    def go_to(self, key_or_name: str, *, remember: bool = False) -> bool:
        """Move the cursor to the node with that key (or the full node of that kernel name /
        VG name), expanding (and materialising) its ancestors. Returns False when there is no
        such node. ``remember``: a jump the admin made (a link, the palette, the banner): where
        the cursor was goes on the history that ``backspace`` walks back. A jump to a node the
        filter hides clears the filter."""
        key = self._find_key(key_or_name)
        if key is None and remember and self._filter and self._machine is not None:
            self.set_filter("")
            key = self._find_key(key_or_name)
        if key is None:
            return False
        self._moves += 1
        here = self.current
        if remember and here is not None and here.key != key and here.key in self._spec_by_key:
            self._history.append(here.key)
            del self._history[: -self.HISTORY]
        node = self.reveal(key)
        if node is None:
            return False
        self.call_after_refresh(self._settle_cursor, node)
        self.move_cursor(node)
        return True

    def _restore_cursor(self, key: str, moves: int) -> None:
        """After a rebuild: back to where the cursor was, unless it was sent elsewhere since."""
        if moves == self._moves:
            self.go_to(key)

    def _find_key(self, key_or_name: str) -> str | None:
        for key in (key_or_name, dev_key(key_or_name), f"vg:{key_or_name}"):
            if key in self._spec_by_key:
                return key
        return None

    # ---- filter and history ---------------------------------------------------------------
    @property
    def filter_text(self) -> str:
        return self._filter

    def set_filter(self, text: str) -> None:
        """Show only what matches ``text`` (see ``filter_specs``); "" shows everything."""
        text = " ".join(text.split())
        if text == self._filter:
            return
        self._filter = text
        if self._machine is None:
            return
        self.update_machine(self._machine)
        if text:
            self.call_after_refresh(self._first_match)

    def _first_match(self) -> None:
        """The cursor to the first node the filter (as it is now) matches."""
        if not self._filter or self._machine is None:
            return
        words = self._filter.lower().split()
        for sp in self._specs:
            if spec_matches(sp, words, self._machine, self._badges):
                self.go_to(sp.ref.key)
                return

    def action_filter(self) -> None:
        from widgets.tree_filter import TreeFilterScreen

        self.app.push_screen(TreeFilterScreen(self))

    def action_clear_filter(self) -> None:
        self.set_filter("")

    def action_back(self) -> None:
        while self._history:
            key = self._history.pop()
            if self.go_to(key):
                return
        self.notify("no earlier place to go back to", timeout=2)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            return bool(self._filter)
        if action == "back":
            return bool(self._history)
        return True

    def _settle_cursor(self, node: TreeNode[NodeRef]) -> None:
        self.move_cursor(node)
        self.scroll_to_node(node, animate=False)
        # After a rebuild the node can sit on the line the cursor was already on: Tree posts no
        # NodeHighlighted then (cursor_line did not change), yet it is another device.
        ref = node.data
        if ref is not None and ref.key != self._highlighted:
            self._highlighted = ref.key
            self.post_message(self.Highlighted(ref))

    def _first_device(self) -> None:
        """Initial cursor: the first degraded array, else the first syncing one, else the
        first device: what the admin opened raidman for."""
        if self._machine is not None:
            for group in (self._machine.degraded_arrays, self._machine.syncing_arrays):
                for a in group:
                    if self.go_to(a.name):
                        return
        for s in self._specs:
            if s.ref.kind != "section":
                node = self.reveal(s.ref.key)
                if node is not None:
                    self.move_cursor(node)
                return

    def action_jump(self) -> None:
        ref = self.current
        if ref is not None and ref.target is not None:
            self.go_to(ref.target, remember=True)
        elif ref is not None:
            self.notify(f"{ref.name} is not a link", timeout=2)

    # ---- lazy population ----------------------------------------------------------------
    def _set_specs(self, specs: list[NodeSpec]) -> None:
        self._specs = specs
        self._spec_by_key = {s.ref.key: s for s in specs}
        kids: dict[str | None, list[NodeSpec]] = {}
        for s in specs:
            kids.setdefault(s.parent, []).append(s)
        self._kids = kids

    def _starts_open(self, s: NodeSpec) -> bool:
        return bool(self._filter) or not (self._lazy and s.ref.kind == "disk")

    def _is_open(self, s: NodeSpec) -> bool:
        return self._open.get(s.ref.key, self._starts_open(s))

    def _remember_open(self, specs: Mapping[str, NodeSpec]) -> None:
        """Before a rebuild: note the expanded state of every materialised node that differs
        from its default (nodes not materialised keep what was noted before). ``specs``: the
        specs the current nodes were made from."""
        for key, node in self._by_key.items():
            spec = specs.get(key)
            if not node.allow_expand or spec is None:
                continue
            if node.is_expanded == self._starts_open(spec):
                self._open.pop(key, None)
            else:
                self._open[key] = node.is_expanded

    def _fill(self, key: str) -> None:
        """Add the children of the materialised node ``key`` (once)."""
        if key in self._filled:
            return
        node = self._by_key[key]
        with self._batch():
            self._fill_children(key, node)

    def _fill_children(self, key: str | None, parent: TreeNode[NodeRef]) -> None:
        if key is not None:
            self._filled.add(key)
        decorate, by_key = self._decorate, self._by_key
        for s in self._kids.get(key, ()):
            if s.leaf:
                by_key[s.ref.key] = parent.add_leaf(decorate(s), data=s.ref)
                continue
            expand = self._is_open(s)
            by_key[s.ref.key] = node = parent.add(decorate(s), data=s.ref, expand=expand)
            if expand:
                self._fill_children(s.ref.key, node)

    @contextmanager
    def _batch(self) -> Iterator[None]:
        """Invalidate the tree's line cache once for many node additions, not per node."""
        if self._batching:
            yield
            return
        self._batching, self._batch_dirty = True, False
        try:
            yield
        finally:
            self._batching = False
            if self._batch_dirty:
                self._invalidate()

    def _invalidate(self) -> None:
        if self._batching:  # Tree.add / expand / clear call this for every node
            self._batch_dirty = True
            return
        super()._invalidate()

    def get_label_width(self, node: TreeNode[NodeRef]) -> int:
        """As ``Tree.get_label_width`` (toggle icon + label), without rendering the label:
        ``Tree._build`` asks this for every line."""
        width = node.label.cell_len if isinstance(node.label, Text) else cell_len(str(node.label))
        if node.allow_expand:
            width += cell_len(self.ICON_NODE_EXPANDED if node.is_expanded else self.ICON_NODE)
        return width

    def render_label(self, node: TreeNode[NodeRef], base_style: Style, style: Style) -> Text:
        """As ``Tree.render_label``; a label wider than the pane has its gaps squeezed (80
        columns: "md127  raid10 [UUUU] · resync 17.9%" keeps its percent); what still does
        not fit is cut at the end, where the least needed part is (a disk's model)."""
        text = super().render_label(node, base_style, style)
        depth, parent = 0, node.parent
        while parent is not None:
            depth, parent = depth + 1, parent.parent
        guides = max(0, depth - (0 if self.show_root else 1)) * max(2, self.guide_depth)
        room = self.scrollable_content_region.width - guides
        if text.cell_len > room:
            return squeeze_label(text, room)
        return text

    def on_tree_node_expanded(self, event: Tree.NodeExpanded[NodeRef]) -> None:
        ref = event.node.data
        if ref is not None and ref.key in self._by_key and self._by_key[ref.key] is event.node:
            self._fill(ref.key)

    # ---- internals ------------------------------------------------------------------------
    def _decorate(self, s: NodeSpec) -> Text:
        sev = None if s.ref.is_link else self._badges.get(s.ref.name)
        if sev is None and s.ref.kind == "vg":
            sev = self._badges.get(s.ref.name)
        if sev is None or sev not in BADGES:
            return s.label
        glyph, style = BADGES[sev]
        out = Text(f"{glyph} ", style)
        out.append_text(s.label)
        return out

    def on_tree_node_highlighted(self, event: Tree.NodeHighlighted[NodeRef]) -> None:
        event.stop()
        ref = event.node.data
        self._highlighted = ref.key if ref is not None else None
        self.post_message(self.Highlighted(ref))

    def on_click(self, event: events.Click) -> None:
        self._clicked_at = time.monotonic()

    def on_tree_node_selected(self, event: Tree.NodeSelected[NodeRef]) -> None:
        ref = event.node.data
        by_click = time.monotonic() - self._clicked_at < CLICK_SELECT_S
        self._clicked_at = -1.0
        if ref is not None and ref.target is not None:
            event.stop()
            self.go_to(ref.target, remember=True)
            return
        if not by_click and event.node.allow_expand:
            event.node.toggle()
