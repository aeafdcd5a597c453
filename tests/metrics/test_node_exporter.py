"""Debian's prometheus-node-exporter, started here with the textfile collector on the directory
``raidman metrics --textfile-dir`` writes, serves raidman's metrics on /metrics."""

from __future__ import annotations

import subprocess
import time
import urllib.request
from pathlib import Path

from app.cli import main
from tests.tools import free_port, node_exporter


def scrape(url: str, deadline_s: float = 20.0) -> str:
    end = time.monotonic() + deadline_s
    while True:
        try:
            with urllib.request.urlopen(url, timeout=5) as r:
                return str(r.read().decode())
        except OSError:
            if time.monotonic() > end:
                raise
            time.sleep(0.2)


def test_node_exporter_serves_raidman_metrics(tmp_path: Path) -> None:
    d = tmp_path / "textfile"
    d.mkdir()
    assert main(["metrics", "--demo", "raid5-cable", "--textfile-dir", str(d)]) == 0
    port = free_port()
    proc = subprocess.Popen(
        [
            node_exporter(),
            f"--collector.textfile.directory={d}",
            f"--web.listen-address=127.0.0.1:{port}",
            "--collector.disable-defaults",
            "--collector.textfile",
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        body = scrape(f"http://127.0.0.1:{port}/metrics")
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=10)
    lines = body.splitlines()
    # the collector read our file without error and re-serves its series
    assert "node_textfile_scrape_error 0" in lines, err
    assert any(
        ln.startswith("node_textfile_mtime_seconds{file=") and "raidman.prom" in ln for ln in lines
    )
    served = {ln.split("{")[0] for ln in lines if ln.startswith("raidman_")}
    assert {
        "raidman_md_sync_action",
        "raidman_md_sync_completed_bytes",
        "raidman_md_sync_speed_bytes_per_second",
        "raidman_md_sync_remaining_seconds",
        "raidman_md_member_state",
    } <= served
    assert any(
        ln.startswith("raidman_md_sync_action{") and 'action="recover"' in ln and ln.endswith(" 1")
        for ln in lines
    )
