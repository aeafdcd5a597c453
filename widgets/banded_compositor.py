"""A compositor whose partial update renders only the screen rows that changed.

Textual's ``Compositor.render_partial_update`` crops to the one rectangle around *all* dirty
regions, and ``_get_renders`` then renders every widget overlapping that rectangle over its
whole height (from the widgets' line caches). On a watched machine the rows that move each
second are few and far apart: the banner (row 1), an array's line in the tree, the sync lines
of the Details pane. Their bounding box is most of the screen, so every container, the tree
and the Details pane went through all their ~60 lines each second to show ~6 changed ones
(raid10-evo at 200×60: 462 lines per update, 18,480 strip filters in 40 s).

Here the dirty regions are grouped into bands of rows (regions whose rows overlap or touch
share a band), each band is rendered on its own, and a widget renders only the band's rows
(``render_lines`` with a crop, which Textual itself uses for a widget its container clips).
Columns are never cut, so the cuts of each line stay Textual's. The update written to the
terminal is the same, byte for byte (tests/ui/test_banded_compositor.py)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import cast

from textual._compositor import ChopsUpdate, Compositor
from textual.geometry import Region
from textual.strip import Strip
from textual.widget import Widget

# clean rows a band may bridge: the Details' sync lines with an unchanged one between them
# (the speed held while the progress and the ETA moved) were two bands, each a pass over the
# widgets and a render of the pane; one band renders the clean row too, written to no one
BAND_GAP = 2


def row_bands(regions: Iterable[Region], gap: int = BAND_GAP) -> list[Region]:
    """The union of each group of regions whose rows overlap or are at most ``gap`` clean rows
    apart, top to bottom; the bands' rows never overlap each other. (Each band costs a pass
    over the widgets under it: the Details' four sync lines are one band, not four. Measured on
    raid10-evo at 200×60, one second's update: Textual's 0.77 ms, four-line bands 1.0 ms,
    these 0.42 ms.) What reaches the terminal is the dirty regions' spans alone, whatever the
    band covers."""
    bands: list[Region] = []
    for r in sorted(regions, key=lambda r: (r.y, r.x)):
        if not r:
            continue
        if bands and r.y <= bands[-1].bottom + gap:
            bands[-1] = bands[-1].union(r)
        else:
            bands.append(r)
    return bands


_NOTHING = Strip([], 0)


class BandedCompositor(Compositor):
    """``Compositor`` whose partial updates render band by band, and only the band's rows; and
    under a band only the widgets that reach a dirty region and whose cells there are not all
    covered by widgets in front of them (issue 44: the tree rendered its rows under the Details'
    band each second, and five containers rendered rows their children cover)."""

    def render_partial_update(self) -> ChopsUpdate | None:
        screen_region = self.size.region
        update_regions = self._dirty_regions.copy()
        self._dirty_regions.clear()
        if not update_regions:
            return None
        spans = list(self._regions_to_spans(update_regions))
        is_rendered_line = {y for y, _, _ in spans}.__contains__
        spans_at: dict[int, list[tuple[int, int]]] = {}
        for y, x1, x2 in spans:
            spans_at.setdefault(y, []).append((x1, x2))
        cuts = self.cuts
        chops: list[dict[int, Strip | None]] = [dict.fromkeys(c[:-1]) for c in cuts]
        drawn = False
        for band in row_bands(update_regions):
            crop = band.intersection(screen_region)
            if not crop:
                continue
            drawn = True
            dirty = [r for r in update_regions if r.y < crop.bottom and r.bottom > crop.y]
            self._fill_band(chops, crop, dirty, spans_at)
        # a chop starting right at a span's end is written as a bare cursor move, whatever it
        # holds (``ChopsUpdate``): it needs no widget rendered for it, only not to be empty
        for y, _, x2 in spans:
            if x2 in chops[y] and chops[y][x2] is None:
                chops[y][x2] = _NOTHING
        if not drawn:  # nothing on screen: as Textual does (every chop empty)
            return ChopsUpdate(
                self._render_chops(Region(), is_rendered_line),
                spans,
                [cut_set[1:] for cut_set in cuts],
            )
        chop_ends = [cut_set[1:] for cut_set in cuts]
        return ChopsUpdate(cast("list[Mapping[int, Strip]]", chops), spans, chop_ends)

    _order: dict[Widget, int] | None = None  # render order of the visible widgets
    _order_of: object = None  # the visible_widgets mapping it was made from

    def _under(self, crop: Region) -> list[Widget]:
        """The visible widgets with a cell on ``crop``'s rows, in render order (front first):
        Textual's own rows of visible widgets (``layers_visible``, made once per layout), not
        every widget on the screen for each band (issue 44: the main screen has about sixty,
        a band one to four rows)."""
        layers = self.layers_visible
        rows = [layers[y] for y in crop.line_range if 0 <= y < len(layers)]
        if len(rows) == 1:
            return [widget for widget, _cropped, _region in rows[0]]
        visible = self.visible_widgets
        if self._order_of is not visible or self._order is None:
            self._order = {widget: i for i, widget in enumerate(visible)}
            self._order_of = visible
        under = {widget for row in rows for widget, _cropped, _region in row}
        return sorted(under, key=self._order.__getitem__)

    def _fill_band(
        self,
        chops: list[dict[int, Strip | None]],
        crop: Region,
        dirty: list[Region],
        spans_at: Mapping[int, list[tuple[int, int]]],
    ) -> None:
        """Textual's ``_render_chops`` for one band, front to back, filling ``chops`` in place.

        What reaches the terminal are the chops that meet a span of the dirty regions on the
        lines ``spans_at`` lists (a chop starting right at a span's end is written as a bare
        cursor move: filled in by ``render_partial_update``), and the first widget drawing a
        chop wins. So a widget is rendered only if it meets a dirty region and some chop it
        would draw there meets a span and is not drawn yet by a widget in front of it:
        skipping the others changes no byte written (tests/ui/test_banded_compositor.py)."""
        cuts = self.cuts
        # the crop's rows across the whole width: a widget's strips keep their columns (the
        # cuts of a line are where widgets begin and end, so a strip must start at one)
        rows = Region(0, crop.y, max(self.size.width, crop.right), crop.height)
        overlaps = crop.overlaps

        def wanted(line: int, first_cut: int, last_cut: int) -> bool:
            """A chop of ``line`` between the cuts is written and not drawn yet."""
            chops_line, line_cuts = chops[line], cuts[line]
            for i, cut in enumerate(line_cuts[:-1]):
                if first_cut <= cut < last_cut and chops_line[cut] is None:
                    end = line_cuts[i + 1]
                    if any(cut < x2 and end > x1 for x1, x2 in spans_at[line]):
                        return True
            return False

        visible = self.visible_widgets
        for widget in self._under(crop):
            region, clip = visible[widget]
            if not overlaps(clip):
                continue
            clip = clip.intersection(rows)
            area = region.intersection(clip)
            x, y, width, height = area
            if not (width and height) or not any(area.overlaps(r) for r in dirty):
                continue
            first_cut, last_cut = area.column_span
            lines = [line for line in area.line_range if line in spans_at]
            if not any(wanted(line, first_cut, last_cut) for line in lines):
                continue  # what it would draw is drawn already or never written
            strips = widget.render_lines(Region(x - region.x, y - region.y, width, height))
            for line, strip in zip(area.line_range, strips, strict=False):
                if line not in spans_at:
                    continue
                chops_line = chops[line]
                final_cuts = [cut for cut in cuts[line] if last_cut >= cut >= first_cut]
                cut_strips = strip.divide([cut - x for cut in final_cuts[1:]])
                for cut, piece in zip(final_cuts, cut_strips, strict=False):
                    if chops_line.get(cut) is None:
                        chops_line[cut] = piece
