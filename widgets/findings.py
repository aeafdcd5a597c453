"""FindingsPane: the audit's findings in a table, worst first; selecting one posts
``FindingsPane.Selected`` with the finding (its device and its fix plan, if any)."""

from __future__ import annotations

import textwrap
from collections.abc import Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import ContentSwitcher, DataTable, Static

from app.plans.plan import Plan
from app.rules.finding import Finding

SEVERITY_STYLE: dict[str, str] = {
    "error": "bold red",
    "warning": "yellow",
    "advice": "cyan",
}
SEVERITY_ICON: dict[str, str] = {"error": "✖", "warning": "▲", "advice": "●"}


SEVERITY_WIDTH = 9  # "▲ warning"
FIX_WIDTH = 6  # "manual"
TITLE_AT_LEAST = 24  # below this the severity word gives way to its icon


def short_title(f: Finding) -> str:
    """The title without the "sdb: " it starts with when the device column says it already."""
    head = f"{f.device}: "
    return f.title[len(head) :] if f.device and f.title.startswith(head) else f.title


def finding_columns(width: int, findings: Iterable[Finding]) -> tuple[int, int, int | None, int]:
    """(severity, device, title, fix) column widths for a table ``width`` cells wide (0: not
    laid out yet, the title as long as it is). Every column has one cell of padding each side
    and the vertical scrollbar takes two. Narrow, the severity word gives way to its icon,
    then the device column goes (0: the title names the device, "sdb: SMART …")."""
    devices = [len(f.device or "system") for f in findings]
    dev = max(6, min(12, max(devices, default=6)))
    if width <= 0:
        return (SEVERITY_WIDTH, dev, None, FIX_WIDTH)
    left = width - 2 * 4 - 2 - dev - FIX_WIDTH
    sev = SEVERITY_WIDTH if left - SEVERITY_WIDTH >= TITLE_AT_LEAST else 1
    if left - sev < TITLE_AT_LEAST:
        return (sev, 0, max(8, left - sev + dev + 2), FIX_WIDTH)
    return (sev, dev, max(8, left - sev), FIX_WIDTH)


TITLE_LINES = 3  # a title wraps onto this many rows of its column at most (then "…")


def title_lines(title: str, width: int | None) -> str:
    """A finding's title for its cell: whole on one row where it fits, else wrapped onto up
    to ``TITLE_LINES`` rows (the highlighted finding is shown whole below the table)."""
    if width is None or len(title) <= width:
        return title
    return "\n".join(textwrap.wrap(title, width, max_lines=TITLE_LINES, placeholder=" …"))


class FindingsPane(DataTable[Text | str]):
    """A DataTable of findings: severity, device, title, whether a fix plan is offered."""

    DEFAULT_CSS = """
    FindingsPane { height: 1fr; }
    """

    class Selected(Message):
        """The user picked a finding (Enter / click)."""

        def __init__(self, pane: FindingsPane, finding: Finding) -> None:
            super().__init__()
            self.pane = pane
            self.finding = finding

        @property
        def device(self) -> str:
            return self.finding.device

        @property
        def fix(self) -> Plan | None:
            return self.finding.fix

        @property
        def control(self) -> FindingsPane:
            return self.pane

    class Highlighted(Message):
        """The cursor moved onto a finding (for a detail view beside the table)."""

        def __init__(self, pane: FindingsPane, finding: Finding) -> None:
            super().__init__()
            self.pane = pane
            self.finding = finding

        @property
        def control(self) -> FindingsPane:
            return self.pane

    class Emptied(Message):
        """The audit ran and found nothing (the detail beside the table says so)."""

        def __init__(self, pane: FindingsPane) -> None:
            super().__init__()
            self.pane = pane

        @property
        def control(self) -> FindingsPane:
            return self.pane

    def __init__(
        self,
        findings: Iterable[Finding] = (),
        *,
        name: str | None = None,
        id: str | None = None,
        classes: str | None = None,
    ) -> None:
        super().__init__(name=name, id=id, classes=classes, cursor_type="row", zebra_stripes=True)
        self._findings: tuple[Finding, ...] = tuple(sorted(findings, key=Finding.sort_key))
        self._shown: tuple[Finding, ...] | None = None  # the last set_findings shown

    @property
    def findings(self) -> tuple[Finding, ...]:
        return self._findings

    _widths: tuple[int, int, int | None, int] | None = None

    def on_mount(self) -> None:
        self._columns_for(self.width_shown)
        self._fill()

    @property
    def width_shown(self) -> int:
        """The table's width, or the one it will have once its tab is shown: a hidden tab is
        0 wide, and a table filled at 0 was filled again, every row, when the tab came up
        (118 ms for the 1,063 findings of the big demo). The panes of a tab bar are as wide
        as its switcher; a guess that misses costs only that refill (on_resize)."""
        if self.size.width:
            return self.size.width
        switcher = next((a for a in self.ancestors if isinstance(a, ContentSwitcher)), None)
        if switcher is None or not switcher.size.width:
            return self.size.width
        return max(0, switcher.size.width - self.styles.gutter.width)

    def fit_hidden(self) -> None:
        """While the tab is hidden: the columns for the width it will have (the screen was
        resized, or laid out after the findings came)."""
        if not self.size.width and self.columns and self._columns_for(self.width_shown):
            current = self.current
            self._fill()
            self._keep_cursor_on(current)

    def on_resize(self) -> None:
        if self._columns_for(self.size.width):
            current = self.current
            self._fill()
            self._keep_cursor_on(current)

    def _columns_for(self, width: int) -> bool:
        """Columns that fit ``width`` (cells): the finding's title takes what severity, device
        and fix leave, wrapped onto up to three rows (the highlighted one is shown whole
        below). At 80 columns the pane is ~38 wide: the severity is its icon alone and the
        device column gives way to the title, which names the device (titles were cut to 16
        characters). True when the columns changed."""
        widths = finding_columns(width, self._findings)
        if widths == self._widths and self.columns:
            return False
        self._widths = widths
        sev, dev, title, fix = widths
        self.clear(columns=True)
        self.add_column("", key="sev", width=sev)
        if dev:
            self.add_column("device", key="device", width=dev)
        self.add_column("finding", key="title", width=title)
        self.add_column("fix", key="fix", width=fix)
        return True

    def set_findings(self, findings: Iterable[Finding]) -> None:
        """Replace the findings (sorted worst first), keeping the cursor on the same finding
        when it is still there."""
        current = self.current
        new = tuple(sorted(findings, key=Finding.sort_key))
        if new == self._shown:
            return  # the same findings as shown (an audit each minute): no new table
        self._findings = new
        if not self.columns:
            return  # not mounted yet: on_mount fills
        self._columns_for(self.width_shown)  # the device column follows the longest device
        self._fill()
        self._shown = new
        self._keep_cursor_on(current)
        if self.current is not None:  # show the highlighted one in full straight away
            self.post_message(self.Highlighted(self, self.current))
        else:
            self.post_message(self.Emptied(self))

    def _keep_cursor_on(self, current: Finding | None) -> None:
        if current is not None:
            for i, f in enumerate(self._findings):
                if f.key == current.key:
                    self.move_cursor(row=i)
                    break

    @property
    def current(self) -> Finding | None:
        if not self._findings or self.row_count == 0:
            return None
        row = self.cursor_row
        return self._findings[row] if 0 <= row < len(self._findings) else None

    def _fill(self) -> None:
        self.clear()
        sev_w, dev_w, title_w, _ = self._widths or finding_columns(0, self._findings)
        for i, f in enumerate(self._findings):
            style = SEVERITY_STYLE[f.severity]
            if f.fix is not None:
                fix = Text("plan", style="green")
            elif f.fix_destroys_data:
                fix = Text("manual", style="dim red")
            else:
                fix = Text("—", style="dim")
            icon = SEVERITY_ICON[f.severity]
            title = Text(title_lines(short_title(f) if dev_w else f.title, title_w))
            cells = [
                Text(icon if sev_w < SEVERITY_WIDTH else f"{icon} {f.severity}", style=style),
                *([Text(f.device or "system")] if dev_w else []),  # a str cell: markup
                title,
                fix,
            ]
            self.add_row(
                *cells, key=f"{i}:{f.code}:{f.device}", height=len(title.plain.split("\n"))
            )

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        f = self._at(event.cursor_row)
        if f is not None:
            self.post_message(self.Selected(self, f))

    def on_data_table_row_highlighted(self, event: DataTable.RowHighlighted) -> None:
        event.stop()
        f = self._at(event.cursor_row)
        if f is not None:
            self.post_message(self.Highlighted(self, f))

    def _at(self, row: int) -> Finding | None:
        return self._findings[row] if 0 <= row < len(self._findings) else None


NO_FINDINGS = Text.assemble(
    ("✔ No findings. ", "bold green"),
    "The audit found nothing to warn about in alignment, geometry, md tuning, queues or SSD "
    "settings. It runs again every minute and after every change raidman makes.",
)


def finding_text(f: Finding) -> Text:
    """A finding in full: what, on which device, the numbers behind it, and what to do."""
    t = Text()
    t.append(f"{SEVERITY_ICON[f.severity]} {f.title}\n", style=SEVERITY_STYLE[f.severity] + " bold")
    t.append(f"{f.device or 'system'} · {f.code}\n\n", style="bright_black")
    t.append(f.detail.rstrip() + "\n")
    if f.fix is not None:
        t.append("\nFix (enter: preview, confirm, run):\n", style="bold green")
        for step in f.fix.steps:
            t.append(f"  {step.shell()}\n", style="green")
    elif f.fix_destroys_data:
        t.append("\nNo one-key fix: fixing this destroys data (see above).\n", style="bold red")
    return t


class FindingsView(Vertical):
    """The findings table and, under it, the highlighted finding in full."""

    DEFAULT_CSS = """
    FindingsView > FindingsPane { height: 1fr; min-height: 5; }
    FindingsView > #finding-detail { height: auto; max-height: 50%; padding: 0 1;
                                     border-top: solid $primary-darken-2; }
    """

    def compose(self) -> ComposeResult:
        yield FindingsPane(id="findings-pane")
        with VerticalScroll(id="finding-detail"):
            yield Static(Text("no findings yet (the audit runs after the first probe)", "dim"))

    def on_mount(self) -> None:
        if hasattr(type(self.app), "findings"):  # bound to the shown host's (RaidmanApp)
            self.watch(self.app, "findings", self._found, init=False)
            if self.app.findings:  # type: ignore[attr-defined]  # a host reopened: at once
                self._found(self.app.findings)  # type: ignore[attr-defined]

    def _found(self, findings: tuple[Finding, ...]) -> None:
        self.query_one(FindingsPane).set_findings(findings)

    def on_findings_pane_emptied(self, event: FindingsPane.Emptied) -> None:
        self.query_one("#finding-detail Static", Static).update(NO_FINDINGS)

    def on_findings_pane_highlighted(self, event: FindingsPane.Highlighted) -> None:
        self.query_one("#finding-detail Static", Static).update(finding_text(event.finding))
