"""The hosts view: the top level of ``raidman --host a --host b`` (or ``--host @group``).

One row per host with its roll-up (``app.fleet.host_line``), the fleet's roll-up in the banner
(``app.fleet.fleet_line``). Bound to the App's ``fleet`` state (each host is probed in a worker
of its own; the results come back as messages). Enter opens the host's full view (the
``MainScreen`` driven by that host's backend and session); ``H`` there comes back here.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from app.fleet import HostStatus, fleet_line, host_line, severity
from widgets.banded_compositor import BandedCompositor

STYLE = {"error": "bold red", "warning": "yellow", "ok": "green", "unknown": "bright_black"}
MARK = {"error": "✖", "warning": "⟳", "ok": "✓", "unknown": "…"}


def _look(t: Text) -> tuple[object, ...]:
    """What a Text shows (Text's own == leaves out its base style)."""
    return (t.plain, str(t.style), tuple(t.spans))


class HostsScreen(Screen[None]):
    TITLE_TEXT = "Hosts"
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("enter", "open_host", "Open", priority=True),
        Binding("r", "refresh_hosts", "Refresh"),
    ]
    DEFAULT_CSS = """
    HostsScreen { layout: vertical; }
    HostsScreen #fleet-banner { height: auto; background: $panel; padding: 0 1; }
    HostsScreen #hosts-table { height: 1fr; }
    HostsScreen #host-detail { height: auto; max-height: 8; padding: 0 1; border-top: solid $panel; }
    """

    def __init__(self) -> None:
        super().__init__()
        self._compositor = BandedCompositor()  # an update renders only the rows that moved
        self._statuses: tuple[HostStatus, ...] = ()
        # what is shown, so that a host's probe that moved nothing repaints nothing
        self._banner: Text | None = None
        self._detail: Text | None = None
        self._cells: dict[str, tuple[Text, ...]] = {}

    def compose(self) -> ComposeResult:
        yield Static("", id="fleet-banner")
        table: DataTable[Text] = DataTable(id="hosts-table", cursor_type="row", zebra_stripes=True)
        yield table
        # the highlighted host's state in full, wrapped: a row is cut to the screen's width
        # (an ssh error is often longer than 80 columns)
        yield Static("", id="host-detail")
        yield Footer()

    def on_mount(self) -> None:
        table = self.query_one("#hosts-table", DataTable)
        table.add_column("", key="mark", width=1)
        table.add_column("host", key="host")
        table.add_column("state", key="state")
        table.focus()
        if hasattr(self.app, "fleet"):
            self.watch(self.app, "fleet", self._show)

    def _state_width(self) -> int:
        """Room for the state column: the screen less the mark and host columns and each
        column's padding (1 cell either side)."""
        hosts = max((len(s.host) for s in self._statuses), default=4)
        return max(12, self.size.width - 1 - max(hosts, 4) - 3 * 2 - 1)

    def on_resize(self) -> None:
        if self._statuses:
            self._show(self._statuses)

    def _show(self, statuses: Sequence[HostStatus]) -> None:
        self._statuses = tuple(statuses)
        banner = Text("raidman", "bold")
        banner.append("  hosts  ", "bold cyan")
        line = fleet_line(statuses)
        worst = max((severity(s) for s in statuses), key=list(STYLE).index, default="unknown")
        calm = all(severity(s) in ("ok", "unknown") for s in statuses)
        banner.append(line, "" if calm else STYLE.get(worst, ""))
        if self._banner is None or _look(banner) != _look(
            self._banner
        ):  # each host's probe lands here: repaint what moved only
            self._banner = banner
            self.query_one("#fleet-banner", Static).update(banner)
        table = self.query_one("#hosts-table", DataTable)
        for s in statuses:
            sev = severity(s)
            state = Text(host_line(s), STYLE[sev] if sev != "ok" else "", no_wrap=True)
            state.truncate(self._state_width(), overflow="ellipsis")
            cells = (Text(MARK[sev], STYLE[sev]), Text(s.host, "bold"), state)
            if s.host in table.rows:
                shown = self._cells.get(s.host, ())
                for i, (key, cell) in enumerate(zip(("mark", "host", "state"), cells, strict=True)):
                    if i >= len(shown) or _look(shown[i]) != _look(cell):
                        table.update_cell(s.host, key, cell, update_width=True)
            else:
                table.add_row(*cells, key=s.host)
            self._cells[s.host] = cells
        self._show_detail()

    def _show_detail(self) -> None:
        host = self.selected_host()
        s = next((x for x in self._statuses if x.host == host), None)
        detail = Text()
        if s is not None:
            sev = severity(s)
            detail.append(f"{s.host}: ", "bold")
            detail.append(host_line(s), STYLE[sev] if sev != "ok" else "")
        if self._detail is None or _look(detail) != _look(self._detail):
            self._detail = detail
            self.query_one("#host-detail", Static).update(detail)

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        self._show_detail()

    def selected_host(self) -> str | None:
        table = self.query_one("#hosts-table", DataTable)
        if not table.row_count:
            return None
        key = table.coordinate_to_cell_key(table.cursor_coordinate).row_key
        return str(key.value) if key.value is not None else None

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()  # a click on a row (Enter is the screen's own key)
        if event.row_key.value is not None:
            self._open(str(event.row_key.value))

    def action_open_host(self) -> None:
        host = self.selected_host()
        if host is not None:
            self._open(host)

    def _open(self, host: str) -> None:
        open_host = getattr(self.app, "open_host", None)
        if open_host is not None:
            open_host(host)

    def action_refresh_hosts(self) -> None:
        refresh = getattr(self.app, "refresh_fleet", None)
        if refresh is not None:
            refresh()
