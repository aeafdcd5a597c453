"""`raidman plan --json` carries the pre-flight refusals (issue 11's machine, replayed)."""

from __future__ import annotations

import json

import pytest

from app.cli import main
from tests.corpus import FIXTURES

DEVHOST = FIXTURES / "preflight" / "devhost-root-on-vda"


def test_plan_json_refuses_the_root_disk_of_the_dev_host(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """tests/fixtures/preflight/devhost-root-on-vda/README: blkid denied, vda holds "/"."""
    rc = main(
        [
            "--replay",
            str(DEVHOST),
            "plan",
            "create-array",
            "--level",
            "1",
            "--devices",
            "vda,zram0",
            "--json",
        ]
    )
    data = json.loads(capsys.readouterr().out)
    assert rc == 3
    refusals = {(r["code"], r["device"]): r["message"] for r in data["preflight"]["refusals"]}
    assert refusals[("mounted", "vda")] == "is mounted on /"
    assert refusals[("boot", "vda")] == "is the system disk (holds /)"
    assert ("empty", "zram0") in refusals
