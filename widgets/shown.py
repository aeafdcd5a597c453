"""Whether a pane is on show: its tab is the active one (a ``TabbedContent`` hides the others with
``display: none``, on the pane or an ancestor). Panes bound to the App's state redraw only then."""

from __future__ import annotations

from textual.widget import Widget


def shown(widget: Widget) -> bool:
    return all(w.display for w in widget.ancestors_with_self if isinstance(w, Widget))
