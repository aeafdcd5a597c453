"""A tree label too wide for its pane, shortened where it says least (``squeeze_label``): the
tree shows it (``widgets.storage_tree.StorageTree.render_label``) on narrow terminals, so an
array keeps its state map and sync percent at 80×24 and no part is cut mid-word."""

from __future__ import annotations

import re

from rich.text import Text

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


# a carrier's mark (widgets.tree_spec.carrier_mark: "carries md0, 12 events behind", "carries
# oldhost:backup, not assembled"), then what a narrow pane can spare of it and around it
CARRIER_END = re.compile(r"(?:(?<=behind)|(?<=assembled)|(?<=unknown))(?=  | ·|$)")
CARRIER_WORDS = re.compile(r"carries |(?<=\d) events?(?= behind)")
SIZE_BEFORE_CARRIER = re.compile(r"(?<= )\S+ (?=\S+, (?:\d+ behind|not assembled|events unknown))")


def _squeeze_carrier(label: Text, room: int) -> Text | None:
    """A disk or partition that carries a superblock keeps the array and how far behind (or
    "not assembled"): what follows the mark goes (the type, a disk's tags and model), then the
    words "carries" and "events", then the size. None when the label has no mark."""
    plain = label.plain
    if "carries " not in plain:
        return None
    end = CARRIER_END.search(plain, plain.index("carries "))
    if end is not None:
        label = label[: end.start()]
    label = _cut(label, GAPS, 1)
    for step in (CARRIER_WORDS, SIZE_BEFORE_CARRIER):
        if label.cell_len <= room:
            break
        label = _cut(label, step, 0)
    return label


PART = " · "
# the parts of a label that are the live facts: a sync's percent, speed and ETA
FACT = re.compile(r"\d%|/s$|^ETA ")


def squeeze_label(label: Text, room: int) -> Text:
    """A label too wide for ``room`` columns, shortened where it says least: an array's
    "DEGRADED(n)" goes when its state map shows the hole; its last " · " parts that are no
    live fact go whole (chunk, layout: never a part cut mid-word, "recover 8.2% l"); gaps
    ("  ", " · ") become one space; then the facts from the end (ETA, speed). The first two
    parts stay (name and state map, then the sync % or state); a superblock carrier keeps
    its mark (``_squeeze_carrier``); a label that still does not fit is cut at the end by the
    tree (a disk's model comes last)."""
    if MAP_WITH_HOLE.search(label.plain):
        label = _cut(label, DEGRADED_AFTER_MAP, 0)
    plain = label.plain
    bounds = [i for i in range(len(plain)) if plain.startswith(PART, i)]
    ends: list[int | None] = [None, *reversed(bounds[1:])]
    parts = plain.split(PART)
    # no fact after the end: dropping them loses none (unsqueezed, as long as that fits)
    for k, end in enumerate(ends):
        cand = label if end is None else label[:end]
        if cand.cell_len <= room:
            return cand
        if any(FACT.search(x) for x in parts[len(parts) - 1 - k :]):
            break  # the next cut would drop a fact: squeeze the gaps first
    for end in ends:
        cand = _cut(label if end is None else label[:end], GAPS, 1)
        if cand.cell_len <= room:
            return cand
    return _squeeze_carrier(label, room) or cand
