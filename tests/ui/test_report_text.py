"""The text ``raidman report`` (issue 11, deliverable 9): each disk's SMART health and bytes
written (with the counter they come from) and the findings, the same facts as ``--json``, for a
cron mail; a 0-byte zram0 is not listed as a disk (issue 16)."""

from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

import pytest

from app.commands import report as report_cmd
from app.format import human_bytes
from app.model import Disk
from app.report import full_report_json, full_report_text, machine_to_text
from app.rules.finding import Finding
from backends.simulated import SimClock, SimulatedBackend
from tests.ui.fake_backend import FakeBackend, build_machine


def _disk_block(text: str, disk: str) -> list[str]:
    lines = text.splitlines()
    i = next(n for n, line in enumerate(lines) if line.startswith(f"  {disk} "))
    return lines[i : i + 2]


@pytest.mark.parametrize("scenario", ["raid10-evo", "raid6-wd", "usb-bridge"])
def test_text_report_has_the_smart_and_findings_of_the_json(scenario: str) -> None:
    backend = SimulatedBackend.from_scenario(scenario, clock=SimClock.manual())
    machine = backend.probe()
    js = full_report_json(backend, machine)
    text = full_report_text(backend, machine)
    for d in js["disks"]:
        smart = d["smart"]
        if smart is None:
            continue
        _, smart_line = _disk_block(text, d["name"])
        if not smart["available"]:
            assert smart_line.strip().startswith("SMART unavailable")
            continue
        assert smart_line.strip().startswith(f"SMART {smart['health']}")
        if smart["bytes_written"] is not None:
            assert f"written {human_bytes(smart['bytes_written'])} (" in smart_line
        if smart["wear_used_percent"] is not None:
            # the drive's own figure, labelled apart from host writes against TBW (issue 41)
            pct = smart["wear_used_percent"]
            assert f"wear reported by the drive: {pct}% of its rated life used" in smart_line
    assert f"Findings ({len(js['findings'])})" in text or (
        not js["findings"] and "Findings: none" in text
    )
    for f in js["findings"]:
        assert f["title"] in text


def test_bytes_written_names_its_counter() -> None:
    """Seed 000's 850 EVO: host writes from attribute 241 in LBAs of 512 bytes."""
    backend = SimulatedBackend.from_scenario("raid10-evo", clock=SimClock.manual())
    text = full_report_text(backend, backend.probe(), findings=False)
    _, line = _disk_block(text, "sda")
    assert "(241 Total_LBAs_Written, LBA×512)" in line
    assert "Findings" not in text


def test_failed_disk_is_visible_in_the_text() -> None:
    """Seed 001's RAID-6: the member that dropped out reports SMART FAILED."""
    backend = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    machine = backend.probe()
    failed = [
        d["name"]
        for d in full_report_json(backend, machine)["disks"]
        if (d["smart"] or {}).get("health") == "FAILED"
    ]
    assert failed
    text = full_report_text(backend, machine)
    for name in failed:
        assert _disk_block(text, name)[1].strip().startswith("SMART FAILED")


def test_zero_byte_zram_is_not_a_disk() -> None:
    m = build_machine()
    m = dataclasses.replace(m, disks=(*m.disks, Disk(name="zram0", size_bytes=0)))
    asked: list[str] = []

    class Backend(FakeBackend):
        def smart(self, disk: str):  # type: ignore[no-untyped-def]
            asked.append(disk)
            return super().smart(disk)

    text = full_report_text(Backend(machine=m), m)
    assert "zram0" not in text
    assert "zram0" not in asked
    assert "nvme0n1" in asked


def test_findings_text_is_escaped() -> None:
    f = Finding("warning", "x", "md0", "evil\x1b[2Jtitle", "line one\nline\x07two")
    text = machine_to_text(build_machine(), findings=[f])
    assert "\x1b" not in text and "\x07" not in text
    assert "[warning] md0: evil\\x1b[2Jtitle" in text
    assert "      line\\x07two" in text


def _args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    report_cmd.add_parser(sub)
    return parser.parse_args(["report", *argv])


def test_cli_text_report_for_cron_mail(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    monkeypatch.setattr(report_cmd, "make_backends", lambda args: [(None, FakeBackend())])
    assert report_cmd.run(_args()) == 0
    out = capsys.readouterr().out
    assert "SMART unavailable: USB bridge blocks SMART" in out
    assert "    SMART PASSED  written: no write counter" in out
    assert "Findings" in out
    assert report_cmd.run(_args("--no-smart", "--no-audit")) == 0
    out = capsys.readouterr().out
    assert "    SMART " not in out and "Findings" not in out


def test_cli_text_report_shows_wear_db_notes(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    d = tmp_path / "state"
    d.mkdir()
    d.chmod(0o777)  # unsafe: the wear database is refused, and the report says so
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(d))
    monkeypatch.setattr(report_cmd, "make_backends", lambda args: [(None, FakeBackend())])
    assert report_cmd.run(_args("--no-smart", "--no-audit")) == 0
    out = capsys.readouterr().out
    assert "[warning] wear: refused state directory" in out
