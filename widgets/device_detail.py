"""The detail pane: every model field of the selected node, sizes human-readable, states coloured."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll

from app.format import (
    array_state_colour,
    duration,
    human_bytes,
    mdstat_map,
    member_colour,
    member_marks,
    percent,
    sectors,
)
from app.model.devices import (
    CryptMapping,
    Disk,
    Filesystem,
    LogicalVolume,
    Machine,
    MdArray,
    MdMember,
    Partition,
    PhysicalVolume,
    SyncStatus,
)
from app.model.risk import risk_inputs
from app.plans.superblocks import Superblocks
from widgets.detail_fields import (
    LabelGrid,
    field_table,
    fmt_value,
    is_compact,
    label_of,
    risk_block,
)
from widgets.raid_lv_detail import raid_detail
from widgets.render_cache import CachedParts, LineDiffStatic
from widgets.superblock_view import behind_any, member_events, outside_lines, stray_lines
from widgets.tree_spec import NodeRef


def _shape_of(obj: object) -> object:
    """What decides how many rows a device's detail has (not the values in them)."""
    if isinstance(obj, MdArray):
        sync = obj.sync
        sync_shape = (
            None
            if sync is None
            else tuple(
                f.name for f in dataclasses.fields(sync) if getattr(sync, f.name) is not None
            )
        )
        return (type(obj), len(obj.members), sync_shape)
    return (type(obj), obj)


# the member table's columns, most needed first: what gives way when the pane is narrow
MEMBER_COLUMNS = ("device", "slot", "role", "superblock", "state", "size", "errors", "data offset")


def members_table(a: MdArray, *, width: int = 0, events: dict[str, str] | None = None) -> Table:
    """The members of an array: every column that fits the pane's ``width`` whole, the ones
    that decide what an admin does next first (device, slot, role, then the superblock's
    events when one is behind, widgets/superblock_view), so nothing is squeezed into "…"
    (at 200×60 the superblock column had squeezed state to "in_sy…"). 0: every column."""
    rows: list[dict[str, str | Text]] = []
    for m in a.members_by_slot:
        role = Text(m.role, member_colour(m))
        marks = member_marks(m)
        if marks:
            role.append(f" {marks}", "bold")
        row: dict[str, str | Text] = {
            "device": m.device,
            "slot": "—" if m.slot is None else str(m.slot),
            "role": role,
            "state": ",".join(m.state) or "—",
            "errors": "—" if m.errors is None else str(m.errors),
            "data offset": sectors(m.data_offset_sectors)
            if m.data_offset_sectors is not None
            else "—",
            "size": human_bytes(m.size_kib * 1024) if m.size_kib is not None else "—",
        }
        if events is not None:
            row["superblock"] = events.get(m.device, "—")
        rows.append(row)
    wanted = [c for c in MEMBER_COLUMNS if c != "superblock" or events is not None]

    def cells(col: str) -> int:  # the column's width with its borders and padding
        return 3 + max([len(col), *(Text(str(r[col])).cell_len for r in rows)])

    keep: list[str] = []
    used = 1
    for col in wanted:
        if width > 0 and len(keep) >= 3 and used + cells(col) > width:
            continue  # does not fit whole: left out (a narrower one after it may fit)
        keep.append(col)
        used += cells(col)
    order = ("device", "slot", "role", "state", "errors", "data offset", "size", "superblock")
    cols = [c for c in order if c in keep]
    t = Table(title="members", title_justify="left", title_style="bold underline", expand=False)
    for col in cols:
        t.add_column(col, no_wrap=True)
    for r in rows:
        t.add_row(*(r[c] for c in cols))
    return t


def sync_block(s: SyncStatus, *, width: int = 0) -> RenderableType:
    """An array's sync, rendered again at every sample: its figures as plain ``Text`` rows
    (``LabelGrid``, never markup), not a Rich table measured each second."""
    colour = "yellow" if s.active else "green"
    compact = is_compact(width)
    rows: list[tuple[str, Text]] = [
        ("action", Text(s.action, colour)),
        ("progress", Text(percent(s.fraction), colour)),
    ]
    if s.done_sectors is not None and s.total_sectors is not None:
        rows.append((
            "done / total",
            Text(
                f"{s.done_sectors:,} / {s.total_sectors:,} sectors "
                f"({human_bytes(s.done_sectors * 512)} / {human_bytes(s.total_sectors * 512)})"
            ),
        ))  # fmt: skip
    rows.append(("speed", fmt_value("speed_kib_s", s.speed_kib_s, compact=compact)))
    rows.append(("ETA", Text(duration(s.eta_s))))
    for name in ("min_speed_kib_s", "max_speed_kib_s", "reshape_position", "mismatch_cnt"):
        v = getattr(s, name)
        if v is not None:
            rows.append((label_of(name), fmt_value(name, v, compact=compact)))
    if s.targets:
        rows.append(("rebuilding", Text(", ".join(s.targets))))
    table = LabelGrid(rows, gap=2)
    frac = s.fraction
    parts: list[RenderableType] = [Text("sync", "bold underline"), table]
    if frac is not None:
        width = 40
        filled = round(frac * width)
        bar = Text("█" * filled, colour)
        bar.append("░" * (width - filled), "bright_black")
        parts.append(bar)
    return Group(*parts)


def array_view(
    m: Machine,
    a: MdArray,
    *,
    width: int = 0,
    cache: CachedParts | None = None,
    superblocks: Superblocks | None = None,
) -> RenderableType:
    """An array's Details. With ``cache`` (the pane's), the parts before and after the sync
    block keep their rendered lines while their data is unchanged: a sync moves only its own
    block each second."""
    volumes = tuple(v.name for v in m.arrays if v.container == a.name)
    sync = sync_block(a.sync, width=width) if a.sync is not None else Text("sync: idle", "green")
    risk = (
        cache.value(("risk", risk_inputs(m, a)), lambda: risk_block(m, a))
        if cache is not None
        else risk_block(m, a)
    )
    if risk is not None:  # beside the sync: a running rebuild's window is md's ETA, each second
        sync = Group(sync, risk)
    sb = _superblock_facts(m, a, superblocks)
    if cache is None:
        return Group(*_array_head(m, a, width, sb), sync, *_array_tail(m, a, volumes, width))
    # keyed on what the head shows of the superblocks, not on them: each audit reads them
    # again, and their update times move while nothing shown does
    head_key = ("array-head", width, dataclasses.replace(a, sync=None), sb)
    tail_key = ("array-tail", width, a.name, volumes, m.filesystem(a.name), m.pv(a.name))
    return Group(
        cache.part(head_key, lambda: Group(*_array_head(m, a, width, sb))),
        sync,
        cache.part(tail_key, lambda: Group(*_array_tail(m, a, volumes, width))),
    )


SuperblockFacts = tuple[dict[str, str] | None, tuple[Text, ...]]


def _superblock_facts(m: Machine, a: MdArray, superblocks: Superblocks | None) -> SuperblockFacts:
    """What an array's Details show of its member superblocks: each member's events when one
    is behind (else None: no column), and the devices outside it that carry its superblock."""
    events = None
    if behind_any(m, a, superblocks):
        events = {x.device: member_events(m, a, superblocks, x.device) for x in a.members}
    return events, tuple(outside_lines(m, a, superblocks))


def _array_head(m: Machine, a: MdArray, width: int, sb: SuperblockFacts) -> list[RenderableType]:
    colour = array_state_colour(a)
    head = Text(f"{a.path}  ", "bold")
    head.append(f"{a.level}  {mdstat_map(a)}", colour)
    if a.is_degraded:
        head.append(f"  DEGRADED: {a.degraded} missing", "bold red")
    # an array's own sync speed limits are shown only where it has them ("(local)")
    unset = tuple(n for n in ("speed_min_local", "speed_max_local") if getattr(a, n) is None)
    skip = ("members", "sync", *unset)
    parts: list[RenderableType] = [head, field_table(a, skip=skip, width=width)]
    if is_compact(width) and a.uuid:
        parts.append(Text(f"uuid {a.uuid}", "bright_black", overflow="fold"))
    if a.data_disks and a.chunk_bytes:
        parts.append(
            Text(
                f"data disks {a.data_disks} · full stripe {human_bytes(a.data_disks * a.chunk_bytes)}",
                "bright_black",
            )
        )
    events, outside = sb
    if a.members:
        parts.append(members_table(a, width=width, events=events))
    parts.extend(outside)
    return parts


def _array_tail(
    m: Machine, a: MdArray, volumes: tuple[str, ...], width: int
) -> list[RenderableType]:
    parts: list[RenderableType] = []
    if volumes:
        parts.append(Text(f"volumes: {', '.join(volumes)}"))
    parts.extend(_on_top(m, a.name, width=width))
    return parts


def _on_top(m: Machine, name: str, *, width: int = 0) -> list[RenderableType]:
    out: list[RenderableType] = []
    fs = m.filesystem(name)
    if fs is not None:
        out.append(fs_view(fs, title="filesystem", width=width))
    pv = m.pv(name)
    if pv is not None:
        out.append(field_table(pv, title="LVM physical volume", width=width))
    return out


def fs_view(fs: Filesystem, title: str | None = None, *, width: int = 0) -> RenderableType:
    parts: list[RenderableType] = [field_table(fs, title=title, width=width)]
    if fs.size_bytes and fs.used_bytes is not None:
        frac = fs.used_bytes / fs.size_bytes
        width = 40
        filled = round(frac * width)
        colour = "red" if frac >= 0.9 else "yellow" if frac >= 0.8 else "green"
        bar = Text("used ", "bold")
        bar.append("█" * filled, colour)
        bar.append("░" * (width - filled), "bright_black")
        bar.append(f" {percent(frac)}")
        parts.append(bar)
    if fs.stride and fs.block_size:
        parts.append(
            Text(
                f"stride {fs.stride} × {human_bytes(fs.block_size)} = {human_bytes(fs.stride * fs.block_size)}"
                + (f", stripe width {fs.stripe_width} blocks" if fs.stripe_width else ""),
                "bright_black",
            )
        )
    return Group(*parts)


def disk_view(m: Machine, d: Disk, *, width: int = 0) -> RenderableType:
    head = Text(f"{d.path}  ", "bold")
    head.append(d.model or "", "cyan")
    if not d.model:
        head.append(d.model_text, "bright_black")
    # the libata port only where there is one (its "ataN.NN:" kernel lines are this disk's)
    skip = ("ata_port",) if d.ata_port is None else ()
    parts: list[RenderableType] = [head, field_table(d, skip=skip, width=width)]
    parts_of = [p.name for p in m.partitions if p.parent == d.name]
    if parts_of:
        parts.append(Text(f"partitions: {', '.join(parts_of)}"))
    arrays = m.arrays_of_disk(d.name)
    if arrays:
        parts.append(Text(f"in arrays: {', '.join(a.name for a in arrays)}"))
    parts.extend(_on_top(m, d.name, width=width))
    return Group(*parts)


def partition_view(m: Machine, p: Partition, *, width: int = 0) -> RenderableType:
    parts: list[RenderableType] = [Text(p.path, "bold"), field_table(p, width=width)]
    parts.append(
        Text(
            f"start {p.start_bytes:,} B ({human_bytes(p.start_bytes)})"
            f" · last sector {p.last_sector:,} (inclusive, as fdisk prints End)",
            "bright_black",
        )
    )
    for a in m.arrays:
        mem = a.member(p.name)
        if mem is not None:
            parts.append(member_view(a, mem, width=width))
    parts.extend(_on_top(m, p.name, width=width))
    return Group(*parts)


def member_view(a: MdArray, mem: MdMember, *, width: int = 0) -> RenderableType:
    t = Text(f"member of {a.name}: ", "bold")
    t.append(f"slot {mem.slot if mem.slot is not None else '—'} ")
    t.append(mem.role, member_colour(mem))
    marks = member_marks(mem)
    if marks:
        t.append(f" {marks}", "bold")
    return Group(t, field_table(mem, width=width))


def vg_view(m: Machine, name: str, *, width: int = 0) -> RenderableType:
    vg = m.vg(name)
    parts: list[RenderableType] = [Text(f"volume group {name}", "bold")]
    if vg is not None:
        parts.append(field_table(vg, width=width))
        if vg.size_bytes:
            parts.append(Text(f"used {percent(1 - vg.free_bytes / vg.size_bytes)}", "bright_black"))
    pvs = [pv for pv in m.pvs if pv.vg == name]
    if pvs:
        t = Table(title="physical volumes", title_justify="left", title_style="bold underline")
        for col in ("device", "size", "free", "pe start", "missing"):
            t.add_column(col, no_wrap=True)
        for pv in pvs:
            t.add_row(
                pv.device,
                human_bytes(pv.size_bytes),
                human_bytes(pv.free_bytes),
                "—" if pv.pe_start is None else f"{pv.pe_start:,} B",
                Text("MISSING", "bold red") if pv.missing else "no",
            )
        parts.append(t)
    lvs = [lv for lv in m.lvs if lv.vg == name]
    if lvs:
        t = Table(title="logical volumes", title_justify="left", title_style="bold underline")
        for col in ("name", "size", "type", "attr", "device"):
            t.add_column(col, no_wrap=True)
        for lv in lvs:
            t.add_row(
                lv.name, human_bytes(lv.size_bytes), lv.segtype, lv.attr, lv.kernel_name or "—"
            )
        parts.append(t)
    return Group(*parts)


def lv_view(m: Machine, lv: LogicalVolume, *, width: int = 0) -> RenderableType:
    parts: list[RenderableType] = [
        Text(f"{lv.path}  ({lv.dm_name})", "bold"),
        field_table(lv, skip=("raid",), width=width),
        *raid_detail(lv),
    ]
    if lv.kernel_name:
        parts.extend(_on_top(m, lv.kernel_name, width=width))
    return Group(*parts)


def _find_lv(m: Machine, name: str) -> LogicalVolume | None:
    for lv in m.lvs:
        if lv.kernel_name == name or f"{lv.vg}/{lv.name}" == name:
            return lv
    return None


def render_ref(
    m: Machine,
    ref: NodeRef,
    *,
    width: int = 0,
    cache: CachedParts | None = None,
    superblocks: Superblocks | None = None,
) -> RenderableType:
    """What the detail pane shows for one tree node, in a pane ``width`` columns wide (0:
    unknown, render everything); ``cache``: see ``array_view``."""
    if ref.kind == "section":
        return section_view(m, ref.name, superblocks, width=width)
    if ref.kind == "vg":
        return vg_view(m, ref.name, width=width)
    if ref.kind == "fs":
        fs = m.filesystem(ref.name)
        return fs_view(fs, title=f"filesystem on {ref.name}", width=width) if fs else Text("gone")
    if ref.kind in ("pv", "pv-link"):
        pv: PhysicalVolume | None = m.pv(ref.name)
        parts: list[RenderableType] = []
        if pv is not None:
            parts.append(field_table(pv, title=f"physical volume {pv.device}", width=width))
            if pv.vg:
                parts.append(vg_view(m, pv.vg, width=width))
        if ref.target:
            parts.append(Text("g / enter: go to the target", "bright_black"))
        return Group(*parts) if parts else Text(ref.name)
    if ref.kind == "member" and ref.via:
        a = m.array(ref.via)
        mem = a.member(ref.name) if a else None
        parts = []
        if a is not None and mem is not None:
            parts.append(member_view(a, mem, width=width))
        target = m.device(ref.name if ref.target != f"dev:{ref.via}" else ref.via)
        if target is not None:
            parts.append(
                Text(
                    f"g / enter: go to {ref.target.removeprefix('dev:') if ref.target else ''}",
                    "bright_black",
                )
            )
        return Group(*parts) if parts else Text(ref.name)
    obj = m.device(ref.name)
    if isinstance(obj, MdArray):
        return array_view(m, obj, width=width, cache=cache, superblocks=superblocks)
    if isinstance(obj, Disk):
        return disk_view(m, obj, width=width)
    if isinstance(obj, Partition):
        return partition_view(m, obj, width=width)
    if isinstance(obj, CryptMapping):
        return Group(
            field_table(obj, title=f"dm-crypt {obj.name}", width=width),
            *_on_top(m, obj.kernel_name, width=width),
        )
    lv = obj if isinstance(obj, LogicalVolume) else _find_lv(m, ref.name)
    if lv is not None:
        return lv_view(m, lv, width=width)
    if ref.target:
        return Text(f"link to {ref.target}; g / enter to go there")
    return Text(f"{ref.name}: no details known", "bright_black")


def section_view(
    m: Machine, section: str, superblocks: Superblocks | None = None, *, width: int = 0
) -> RenderableType:
    """The table of a tree heading (the Arrays one followed by the arrays whose members'
    superblocks are not assembled). On a narrow pane the columns that name a row (name, size)
    keep their width and the rest give way: at 80 columns the Disks table squeezed name and
    size to "…" for the sake of transport and phys/log."""
    narrow = is_compact(width)
    if section == "Disks":
        cols: tuple[str, ...] = ("name", "size", "type", "model") if narrow else (
            "name", "size", "model", "serial", "transport", "type", "phys/log"
        )  # fmt: skip
        rows: list[dict[str, str | Text]] = []
        for d in m.disks:
            if not d.is_storage:  # as the tree and `raidman report`
                continue
            kind = (
                {True: "HDD", False: "SSD"}.get(d.rotational, "—")
                if d.rotational is not None
                else "—"
            )
            rows.append({
                "name": d.name,
                "size": human_bytes(d.size_bytes),
                "model": d.model or "—",
                "serial": d.serial or "—",
                "transport": d.transport or "—",
                "type": kind,
                "phys/log": f"{d.physical_sector}/{d.logical_sector}",
            })  # fmt: skip
        return section_table("disks", cols, rows, narrow)
    if section == "Arrays":
        cols = ("name", "level", "state", "sync") if narrow else (
            "name", "level", "size", "state", "map", "sync"
        )  # fmt: skip
        rows = []
        for a in m.arrays:
            sync = "—"
            if a.sync is not None and a.sync.active:
                sync = f"{a.sync.action} {percent(a.sync.fraction)}"
            rows.append({
                "name": a.name,
                "level": a.level,
                "size": human_bytes(a.size_bytes),
                "state": Text(a.array_state or "?", array_state_colour(a)),
                "map": mdstat_map(a),
                "sync": sync,
            })  # fmt: skip
        t = section_table("arrays", cols, rows, narrow)
        strays = stray_lines(superblocks)
        return Group(t, *strays) if strays else t
    if section == "Volume groups":
        t = Table(title="volume groups", title_justify="left")
        for col in ("name", "size", "free", "PVs", "LVs"):
            t.add_column(col, no_wrap=True)
        for vg in m.vgs:
            t.add_row(
                vg.name,
                human_bytes(vg.size_bytes),
                human_bytes(vg.free_bytes),
                str(sum(1 for p in m.pvs if p.vg == vg.name)),
                str(sum(1 for lv in m.lvs if lv.vg == vg.name)),
            )
        return t
    return Text(section, "bold")


def section_table(
    title: str, cols: Sequence[str], rows: Sequence[Mapping[str, str | Text]], narrow: bool
) -> Table:
    """A heading's table. On a narrow pane without the box lines (7 cells for 6 columns), and
    every column but the last as wide as its widest cell: the last one gives way."""
    if not narrow:
        t = Table(title=title, title_justify="left")
        for col in cols:
            t.add_column(col, no_wrap=True)
    else:
        t = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, pad_edge=False)
        for i, col in enumerate(cols):
            keep = max([len(col), *(Text(str(r[col])).cell_len for r in rows)])
            t.add_column(col, no_wrap=True, min_width=keep if i < len(cols) - 1 else None)
    for r in rows:
        t.add_row(*(r[c] for c in cols))
    return t


class DeviceDetail(VerticalScroll):
    """Scrollable detail of one node; ``show(machine, ref)`` re-renders."""

    DEFAULT_CSS = """
    DeviceDetail { padding: 0 1; }
    DeviceDetail > Static { width: 100%; }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._body = LineDiffStatic(Text("probing…", "bright_black"), id="detail-body")
        self.ref: NodeRef | None = None
        self._machine: Machine | None = None
        self.superblocks: Superblocks | None = None  # member superblocks (the audit worker's)
        self._cache = CachedParts()  # parts of what is shown, kept while their data is

    def compose(self) -> ComposeResult:
        yield self._body

    def show(self, machine: Machine | None, ref: NodeRef | None, *, force: bool = False) -> None:
        # Skip re-rendering what is already shown: the same node of the same probe with the same
        # live state (a syncing array's object changes every sample, so it still updates).
        key = (
            ref,
            machine.taken_at if machine else None,
            machine.device(ref.name) if machine is not None and ref is not None else None,
            self.size.width,
        )
        if not force and key == getattr(self, "_shown_key", None):
            return
        self._shown_key = key
        self.ref = ref
        self._machine = machine
        if machine is None:
            self._body.update(Text("probing…", "bright_black"))
        elif ref is None:
            self._body.update(Text("select a device in the tree", "bright_black"))
        else:
            # A live update of the same node keeps its shape (same rows, new numbers): repaint
            # without re-laying-out the whole screen once a second. Forced (new superblocks at
            # each audit, every probe of a syncing array): a line diff on screen lays out only
            # when the height changed (a layout every 10 s was a sixth of raid10-evo's CPU).
            shape = (ref, self.size.width, _shape_of(machine.device(ref.name)))
            same_shape = shape == getattr(self, "_shape", None) and (
                not force or self._body.can_diff
            )
            self._shape = shape
            shown = render_ref(
                machine,
                ref,
                width=self.size.width,
                cache=self._cache,
                superblocks=self.superblocks,
            )
            self._cache.done()
            self._body.update(shown, layout=not same_shape)

    def set_superblocks(self, superblocks: Superblocks) -> None:
        """New member superblocks (read through the backend off the UI thread): re-render."""
        if superblocks != self.superblocks:
            self.superblocks = superblocks
            self.show(self._machine, self.ref, force=True)

    def on_resize(self) -> None:
        self.show(self._machine, self.ref, force=True)
