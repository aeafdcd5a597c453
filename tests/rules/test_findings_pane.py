"""FindingsPane in a pilot: sorted worst first, Enter posts Selected with device and fix."""

from __future__ import annotations

from textual.app import App, ComposeResult

from app.rules import audit
from tests.rules.machines import Stack, usb_bridge
from tests.rules.test_rules import healthy_inputs
from widgets.findings import FindingsPane


class PaneApp(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.selected: list[FindingsPane.Selected] = []

    def compose(self) -> ComposeResult:
        yield FindingsPane(id="findings")

    def on_findings_pane_selected(self, message: FindingsPane.Selected) -> None:
        self.selected.append(message)


async def test_pane_sorts_and_posts_selected() -> None:
    m = Stack(
        level="raid5",
        layout="left-symmetric",
        chunk=512 * 1024,
        pe_start=3 << 20,
        bitmap=None,
        stripe_cache=256,
    ).machine()
    findings = list(audit(m, healthy_inputs(m))) + list(audit(usb_bridge()))
    findings.reverse()  # the pane sorts, not the caller
    app = PaneApp()
    async with app.run_test() as pilot:
        pane = app.query_one(FindingsPane)
        pane.set_findings(findings)
        await pilot.pause()
        assert pane.row_count == len(findings)
        sevs = [f.severity for f in pane.findings]
        assert sevs == sorted(sevs, key=["error", "warning", "advice"].index)
        assert sevs[0] == "error"
        # move to the bitmap warning (it has a one-key fix) and press Enter
        idx = next(i for i, f in enumerate(pane.findings) if f.code == "md-no-bitmap")
        pane.focus()
        pane.move_cursor(row=idx)
        await pilot.press("enter")
        await pilot.pause()
        assert len(app.selected) == 1
        msg = app.selected[0]
        assert msg.device == "md0" and msg.finding.code == "md-no-bitmap"
        assert msg.fix is not None and msg.fix.steps[0].argv[0] == "mdadm"
        # refreshing keeps the cursor on the same finding
        pane.set_findings(list(reversed(findings)))
        await pilot.pause()
        assert pane.current is not None and pane.current.code == "md-no-bitmap"


async def test_an_empty_audit_says_so_instead_of_a_bare_header() -> None:
    """issue 16: "an empty Findings table shows only a header"."""
    from textual.widgets import Static

    from widgets.findings import FindingsView

    class ViewApp(App[None]):
        def compose(self) -> ComposeResult:
            yield FindingsView()

    app = ViewApp()
    async with app.run_test() as pilot:
        detail = app.query_one("#finding-detail Static", Static)
        assert "no findings yet" in str(detail.render())
        app.query_one(FindingsPane).set_findings([])
        await pilot.pause()
        shown = str(detail.render())
        assert "No findings" in shown and "nothing to warn about" in shown
        # and a finding arriving later replaces the message
        findings = list(audit(usb_bridge()))
        app.query_one(FindingsPane).set_findings(findings)
        await pilot.pause()
        assert "No findings" not in str(detail.render())
