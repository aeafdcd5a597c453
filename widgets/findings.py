"""FindingsPane: the audit's findings in a table, worst first; selecting one posts
``FindingsPane.Selected`` with the finding (its device and its fix plan, if any)."""

from __future__ import annotations

from collections.abc import Iterable

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import DataTable, Static

from app.plans.plan import Plan
from app.rules.finding import Finding

SEVERITY_STYLE: dict[str, str] = {
    "error": "bold red",
    "warning": "yellow",
    "advice": "cyan",
}
SEVERITY_ICON: dict[str, str] = {"error": "✖", "warning": "▲", "advice": "●"}


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

    def on_mount(self) -> None:
        self.add_column("", key="sev", width=9)
        self.add_column("device", key="device", width=12)
        self.add_column("finding", key="title")
        self.add_column("fix", key="fix", width=8)
        self._fill()

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
        self._fill()
        self._shown = new
        if current is not None:
            for i, f in enumerate(self._findings):
                if f.key == current.key:
                    self.move_cursor(row=i)
                    break
        if self.current is not None:  # show the highlighted one in full straight away
            self.post_message(self.Highlighted(self, self.current))
        else:
            self.post_message(self.Emptied(self))

    @property
    def current(self) -> Finding | None:
        if not self._findings or self.row_count == 0:
            return None
        row = self.cursor_row
        return self._findings[row] if 0 <= row < len(self._findings) else None

    def _fill(self) -> None:
        self.clear()
        for i, f in enumerate(self._findings):
            style = SEVERITY_STYLE[f.severity]
            if f.fix is not None:
                fix = Text("plan", style="green")
            elif f.fix_destroys_data:
                fix = Text("manual", style="dim red")
            else:
                fix = Text("—", style="dim")
            self.add_row(
                Text(f"{SEVERITY_ICON[f.severity]} {f.severity}", style=style),
                Text(f.device or "system"),  # a str cell would be read as markup
                Text(f.title),
                fix,
                key=f"{i}:{f.code}:{f.device}",
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
