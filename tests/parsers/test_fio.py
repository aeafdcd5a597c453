"""fio --output-format=json (a real fio 3.33 document in samples/), parsed, never scraped."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from app.parsers.errors import ParseError
from app.parsers.fio import parse_fio_json

SAMPLE = Path(__file__).parent / "samples" / "fio-3.33-randwrite-4k-2jobs.json"


def test_real_fio_document() -> None:
    text = SAMPLE.read_text()
    doc = json.loads(text)["jobs"][0]
    r = parse_fio_json(text)
    assert r.write_bw == doc["write"]["bw_bytes"] > 0 and r.write_iops == doc["write"]["iops"]
    assert r.read_bw == 0 and r.error == 0
    # fio may print a warning line before the document
    assert parse_fio_json("fio: note: both iodepth >= 1 and synchronous I/O engine\n" + text) == r


@pytest.mark.parametrize(
    "text",
    [
        "",
        "no json here",
        '{"jobs": []}',
        '{"jobs": [{"read": {"bw_bytes": "1"}, "write": {"bw_bytes": 1, "iops": 1}}]}',
        '{"jobs": [{"read": {"bw_bytes": -1, "iops": 1}, "write": {"bw_bytes": 1, "iops": 1}}]}',
        '{"jobs": [{"read": {"bw_bytes": NaN, "iops": 1}, "write": {"bw_bytes": 1, "iops": 1}}]}',
        "{" * 5000,
    ],
)
def test_bad_documents_are_parse_errors(text: str) -> None:
    with pytest.raises(ParseError):
        parse_fio_json(text)
