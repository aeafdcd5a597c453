"""PlanView: a plan as numbered, copyable command lines with their why, destructive steps in red,
and a live status per step (pending → running → ✓ / ✗ / not run)."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import Static

from app.plans.plan import Plan

_MARK = {
    "pending": ("  ", ""),
    "running": ("▶ ", "bold yellow"),
    "ok": ("✓ ", "bold green"),
    "failed": ("✗ ", "bold red"),
    "not-run": ("– ", "dim"),
}


class PlanView(Static):
    """Renders ``plan``; ``set_status(index, status, detail)`` updates one step."""

    DEFAULT_CSS = """
    PlanView { height: auto; padding: 0 1; }
    """

    def __init__(self, plan: Plan, *, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(id=id, classes=classes)
        self.plan = plan
        self.statuses: list[str] = ["pending"] * len(plan.steps)
        self.details: list[str] = [""] * len(plan.steps)

    def on_mount(self) -> None:
        self.update(self.render_steps())

    def set_status(self, index: int, status: str, detail: str = "") -> None:
        self.statuses[index] = status
        self.details[index] = detail
        self.update(self.render_steps())

    def render_steps(self) -> Table:
        """The plan as shown: a long command line wraps under itself, indented past its number
        (a hanging indent), not back to column 1 where it read as another line."""
        grid = Table.grid(padding=0)
        grid.add_column(no_wrap=True, width=6)
        grid.add_column(overflow="fold")
        for i, step in enumerate(self.plan.steps):
            status = self.statuses[i]
            mark, mstyle = _MARK.get(status, ("  ", ""))
            head = Text(mark, style=mstyle)
            head.append(f"{i + 1:>2}. ", style="bold")
            body = Text(step.shell(), style="bold red" if step.destructive else "bold")
            why = Text("  # " + step.why, style="italic dim")
            if step.destructive:
                why.append("  [DESTROYS DATA]", style="bold red")
            grid.add_row(head, body)
            grid.add_row("", why)
            if self.details[i]:
                for line in self.details[i].rstrip().splitlines():
                    grid.add_row("", Text(f" {line}", "red" if status == "failed" else "dim"))
        return grid

    def status_text(self, index: int) -> str:
        """ "✓ ok", "✗ failed", ... for tests and screen readers."""
        s = self.statuses[index]
        return f"{_MARK[s][0].strip() or '·'} {s}"

    def render_plan(self) -> Text:
        """The same as plain lines (tests and copying)."""
        t = Text()
        for i, step in enumerate(self.plan.steps):
            status = self.statuses[i]
            mark, mstyle = _MARK.get(status, ("  ", ""))
            t.append(mark, style=mstyle)
            t.append(f"{i + 1:>2}. ", style="bold")
            t.append(step.shell(), style="bold red" if step.destructive else "bold")
            t.append("\n")
            t.append("       # " + step.why, style="italic dim")
            if step.destructive:
                t.append("  [DESTROYS DATA]", style="bold red")
            t.append("\n")
            if self.details[i]:
                for line in self.details[i].rstrip().splitlines():
                    t.append(f"       {line}\n", style="red" if status == "failed" else "dim")
        return t
