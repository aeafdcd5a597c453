"""mdadm -X (bitmap.c ExamineBitmap): chunk size and dirty bits, for a re-add's forecast."""

from __future__ import annotations

import pytest

from app.model.sync_model import forecast_sync
from app.parsers.errors import ParseError
from app.parsers.mdadm_bitmap import parse_examine_bitmap

SAMPLE = """\
        Filename : /dev/nvme0n1
           Magic : 6d746962
         Version : 4
            UUID : 5b0f1b8e:3c0e7e51:9f2b6c1a:0d4e2f77
          Events : 42
  Events Cleared : 20
           State : OK
       Chunksize : 4 MB
          Daemon : 5s flush period
      Write Mode : Normal
       Sync Size : 261120 (255.00 MiB 267.39 MB)
          Bitmap : 64 bits (chunks), 5 dirty (7.8%)
"""


def test_dirty_bits_times_chunk() -> None:
    b = parse_examine_bitmap(SAMPLE)
    assert (b.chunk_bytes, b.bits, b.dirty) == (4 << 20, 64, 5)
    assert b.dirty_bytes == 20 << 20
    # what the model makes of it: a re-add writes the dirty chunks only
    f = forecast_sync(
        array="md0", level="raid10", raid_disks=4, layout="n2", action="recover",
        members=[("a", 255 << 20), ("b", 255 << 20), ("c", 255 << 20), ("d", 255 << 20)],
        targets=("b",), bitmap_dirty_bytes=b.dirty_bytes,
    )  # fmt: skip
    assert f.members[1].bytes_high == 20 << 20


@pytest.mark.parametrize(
    "text",
    [
        "",
        "       Chunksize : 4 MB\n",
        "       Chunksize : 4 PB\n          Bitmap : 64 bits (chunks), 5 dirty (7.8%)\n",
        "       Chunksize : 4 MB\n          Bitmap : 4 bits (chunks), 5 dirty (125%)\n",
        "       Chunksize : 0 MB\n          Bitmap : 64 bits (chunks), 5 dirty (7.8%)\n",
    ],
)
def test_anything_else_is_a_parse_error(text: str) -> None:
    with pytest.raises(ParseError):
        parse_examine_bitmap(text)
