#!/bin/sh
out=/tmp/wearcap2
PY=/work/main/.venv/bin/python
ls -l /dev/sd* /dev/nvme* /dev/vd* > $out/devs.txt 2>&1
$PY $out/record.py $out/rec-before.json /dev/nvme0n1 /dev/sda /dev/vda > $out/rec-before.log 2>&1
dd if=/dev/zero of=/dev/nvme0n1 bs=1M count=64 oflag=direct 2> $out/dd-nvme.txt
dd if=/dev/zero of=/dev/sda bs=1M count=16 oflag=direct 2> $out/dd-sda.txt
sync
$PY $out/record.py $out/rec-after.json /dev/nvme0n1 /dev/sda > $out/rec-after.log 2>&1
echo done > $out/done
