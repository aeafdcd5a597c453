"""A Footer that fits its width: when the keys do not all fit in one line (80 columns), it goes
compact, uses short labels and leaves out the least important keys (all of them stay bound and
are listed by the help), so the keys that matter are never the ones cut off."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from rich.cells import cell_len
from textual import events
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# an action not named in ``priorities`` ranks here: after the important keys, before dropped ones
DEFAULT_PRIORITY = 50


def _base(action: str) -> str:
    """ "show_tab('sync')" → "show_tab"; "app.quit" → "quit"."""
    return action.split("(", 1)[0].rsplit(".", 1)[-1]


def fit_keys(
    keys: list[tuple[str, str, str]],
    width: int,
    priorities: Mapping[str, int],
) -> set[int]:
    """Indexes of the ``(action, key_display, description)`` entries to show in ``width``
    columns (each takes key + space + description + a margin column): the lowest-priority
    entries go first, later ones before earlier ones among equals. Priority < 0: never shown
    when narrow."""
    cost = [cell_len(k) + 1 + cell_len(d) + 1 if d else cell_len(k) + 1 for _, k, d in keys]
    kept = {
        i for i, (a, _, _) in enumerate(keys) if priorities.get(_base(a), DEFAULT_PRIORITY) >= 0
    }
    order = sorted(kept, key=lambda i: (priorities.get(_base(keys[i][0]), DEFAULT_PRIORITY), -i))
    total = sum(cost[i] for i in kept)
    for i in order:
        if total <= width:
            break
        kept.discard(i)
        total -= cost[i]
    return kept


class KeysFooter(Footer):
    """``short``: action → label used when narrow; ``priorities``: action → rank (higher stays
    longer; negative: left out when narrow). Actions are matched without arguments or
    namespace ("show_tab", "quit")."""

    def __init__(
        self,
        *,
        short: Mapping[str, str],
        priorities: Mapping[str, int],
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.short = dict(short)
        self.priorities = dict(priorities)
        self.narrow = False
        self._width = 0

    @staticmethod
    def _full_width(keys: list[FooterKey]) -> int:
        """Columns the keys take in the normal style (" k " + "description "), the palette
        key with its border and padding."""
        return sum(
            cell_len(k.key_display)
            + cell_len(k.description)
            + 3
            + (2 if k.has_class("-command-palette") else 0)
            for k in keys
        )

    def compose(self) -> Iterable[Widget]:
        widgets = list(super().compose())
        width = self.app.size.width
        keys = [w for w in widgets if isinstance(w, FooterKey)]
        self.narrow = self._full_width(keys) > width
        self.compact = self.narrow
        if not self.narrow:
            yield from widgets
            return
        plain = [w for w in keys if not w.has_class("-command-palette")]
        for w in plain:
            w.description = self.short.get(_base(w.action), w.description)
        entries = [(w.action, w.key_display, w.description) for w in plain]
        shown = fit_keys(entries, width - 1, self.priorities)
        for i, w in enumerate(plain):
            if i in shown:
                yield w
        # the palette key (^p) is left out when narrow: ctrl+p still opens it

    def on_resize(self, event: events.Resize) -> None:
        if event.size.width != self._width:
            self._width = event.size.width
            self.call_after_refresh(self.recompose)
