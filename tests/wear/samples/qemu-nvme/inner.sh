#!/bin/sh
# runs inside the VM: SMART before and after writing 64 MiB with O_DIRECT to the QEMU NVMe disk
out=/tmp/wearcap
D=/dev/nvme0n1
smartctl --version > $out/version.txt 2>&1
smartctl -d test $D > $out/nvme-d-test.txt 2>&1; echo $? > $out/nvme-d-test.rc
smartctl -d nvme --all $D > $out/nvme-all-before.txt 2>&1; echo $? > $out/nvme-all-before.rc
smartctl -j -a $D > $out/nvme-before.json 2>&1; echo $? > $out/nvme-before.rc
dd if=/dev/zero of=$D bs=1M count=64 oflag=direct 2> $out/dd.txt
sync
smartctl -d nvme --all $D > $out/nvme-all-after.txt 2>&1; echo $? > $out/nvme-all-after.rc
smartctl -j -a $D > $out/nvme-after.json 2>&1; echo $? > $out/nvme-after.rc
V=$(ls /dev/vd? 2>/dev/null | head -1)
echo "virtio: $V" > $out/virtio-dev.txt
if [ -n "$V" ]; then
  smartctl -d test $V > $out/virtio-d-test.txt 2>&1; echo $? > $out/virtio-d-test.rc
  smartctl -a $V > $out/virtio-a.txt 2>&1; echo $? > $out/virtio-a.rc
  smartctl -j -a $V > $out/virtio.json 2>&1; echo $? > $out/virtio.rc
fi
ls -l /dev/nvme* /dev/vd* > $out/devs.txt 2>&1
echo done > $out/done
