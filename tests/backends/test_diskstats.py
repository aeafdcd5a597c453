"""/proc/diskstats as the sample reads it over ssh (``parse_diskstats``): every line, partitions
included, each device's own counters (issue 22: a sync's record keeps each member partition's
own line, apart from the other partitions of its disk). Lines in the shape Linux 6.1 prints them
(20 fields), with the writes tests/vm/test_wear_partitions.py measured: the RAID-1's 32 MiB on
the first partition, 13,312 B on the second while the RAID-5 recovered another member."""

from __future__ import annotations

from backends.linux.io import parse_diskstats

TEXT = """\
 259       0 nvme0n1 1210 0 98376 180 3134 0 65565 2210 0 1830 2391 0 0 0 0 2 0
 259       2 nvme0n1p1 600 0 40960 90 3104 0 65536 2190 0 1700 2280 0 0 0 0 0 0
 259       3 nvme0n1p2 580 0 53248 85 26 0 26 15 0 120 100 0 0 0 0 0 0
   9       1 md1 10 0 80 0 1024 0 65536 0 0 0 0 0 0 0 0 0 0
"""


def test_each_partition_keeps_its_own_line() -> None:
    io = {d.name: d for d in parse_diskstats(TEXT)}
    assert set(io) == {"nvme0n1", "nvme0n1p1", "nvme0n1p2", "md1"}
    # the RAID-1's 32 MiB went to p1; the RAID-5's recovery only read p2 (13,312 B: superblock)
    assert io["nvme0n1p1"].write_bytes == 65536 * 512 == 32 << 20
    assert io["nvme0n1p2"].write_bytes == 13_312
    assert io["nvme0n1"].write_bytes == 65565 * 512  # the whole disk: both partitions and more
    assert io["nvme0n1p2"].read_bytes == 53248 * 512
