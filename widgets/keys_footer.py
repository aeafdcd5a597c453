"""A Footer that fits its width: when the keys do not all fit in one line (80 columns), it goes
compact, uses short labels and leaves out the least important keys (all of them stay bound and
are listed by the help), so the keys that matter are never the ones cut off.

Its keys are its own ``FooterEntry`` widgets, built from the screen's active bindings (Textual's
own key widget is private); they look exactly like Textual's footer keys."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import ClassVar

from rich.cells import cell_len
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Footer

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


class FooterEntry(Widget):
    """One key of the footer: " key description " (compact: "key description"); a click
    presses the key. Styled with the footer's theme variables, as Textual's footer keys are."""

    ALLOW_SELECT = False
    COMPONENT_CLASSES: ClassVar[set[str]] = {"footer-entry--key", "footer-entry--description"}
    DEFAULT_CSS = """
    FooterEntry {
        width: auto;
        height: 1;
        text-wrap: nowrap;
        background: $footer-item-background;
        .footer-entry--key {
            color: $footer-key-foreground;
            background: $footer-key-background;
            text-style: bold;
            padding: 0 1;
        }
        .footer-entry--description {
            padding: 0 1 0 0;
            color: $footer-description-foreground;
            background: $footer-description-background;
        }
        &:hover {
            pointer: pointer;
            color: $footer-key-foreground;
            background: $block-hover-background;
        }
        &.-disabled {
            text-style: dim;
        }
        &.-compact {
            .footer-entry--key {
                padding: 0;
            }
            .footer-entry--description {
                padding: 0 0 0 1;
            }
        }
    }
    """

    compact = reactive(True)

    def __init__(
        self,
        binding: Binding,
        key_display: str,
        *,
        enabled: bool = True,
        tooltip: str = "",
        classes: str = "",
    ) -> None:
        self.key = binding.key
        self.key_display = key_display
        self.description = binding.description
        self.action = binding.action
        self.enabled = enabled
        super().__init__(classes=classes if enabled else f"{classes} -disabled")
        self.set_reactive(Widget.shrink, False)
        if tooltip:
            self.tooltip = tooltip

    def render(self) -> Text:
        key_style = self.get_component_rich_style("footer-entry--key")
        description_style = self.get_component_rich_style("footer-entry--description")
        key_pad = self.get_component_styles("footer-entry--key").padding
        desc_pad = self.get_component_styles("footer-entry--description").padding
        if self.description:
            text = Text.assemble(
                (" " * key_pad.left + self.key_display + " " * key_pad.right, key_style),
                (
                    " " * desc_pad.left + self.description + " " * desc_pad.right,
                    description_style,
                ),
            )
        else:
            text = Text.assemble((self.key_display, key_style))
        text.stylize_before(self.rich_style)
        return text

    def on_mouse_down(self) -> None:
        if self.enabled:
            self.app.simulate_key(self.key)
        else:
            self.app.bell()

    def _watch_compact(self, compact: bool) -> None:
        self.set_class(compact, "-compact")


class KeysFooter(Footer):
    """``short``: action → label used when narrow; ``priorities``: action → rank (higher stays
    longer; negative: left out when narrow). Actions are matched without arguments or
    namespace ("show_tab", "quit")."""

    DEFAULT_CSS = """
    KeysFooter {
        &.-compact FooterEntry {
            margin-right: 1;
        }
        &.-compact FooterEntry.-command-palette {
            padding-right: 0;
        }
        FooterEntry.-command-palette {
            dock: right;
            padding-right: 1;
            border-left: vkey $foreground 20%;
        }
    }
    """

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
    def _full_width(keys: list[FooterEntry]) -> int:
        """Columns the keys take in the normal style (" k " + "description "), the palette
        key with its border and padding."""
        return sum(
            cell_len(k.key_display)
            + cell_len(k.description)
            + 3
            + (2 if k.has_class("-command-palette") else 0)
            for k in keys
        )

    def _entries(self) -> list[FooterEntry]:
        """The screen's shown bindings (one per action, the first bound key), then the command
        palette key, as Textual's Footer lists them."""
        active = self.screen.active_bindings
        by_action: dict[str, tuple[Binding, bool, str]] = {}
        for _node, binding, enabled, tooltip in active.values():
            if binding.show:
                by_action.setdefault(binding.action, (binding, enabled, tooltip))
        out = [
            FooterEntry(
                binding, self.app.get_key_display(binding), enabled=enabled, tooltip=tooltip
            ).data_bind(compact=Footer.compact)
            for binding, enabled, tooltip in by_action.values()
        ]
        palette = active.get(self.app.COMMAND_PALETTE_BINDING)
        if palette is not None and self.show_command_palette and self.app.ENABLE_COMMAND_PALETTE:
            _node, binding, enabled, _tooltip = palette
            out.append(
                FooterEntry(
                    binding,
                    self.app.get_key_display(binding),
                    enabled=enabled,
                    tooltip=binding.tooltip or binding.description,
                    classes="-command-palette",
                )
            )
        return out

    def compose(self) -> Iterable[Widget]:
        width = self.app.size.width
        keys = widgets = self._entries()
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
