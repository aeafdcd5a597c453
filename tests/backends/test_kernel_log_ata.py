"""libata's lines are their disk's (app/kernel_log.py, ``Disk.ata_port``): libata's error
handling names the port and link ("ata3: hard resetting link", "ata3.00: failed command: READ
FPDMA QUEUED"), never the disk; the port comes from the disk's sysfs path (the Linux probe reads
the link of /sys/dev/block/MAJ:MIN, which runs through .../ata3/host2/...).

The dmesg text below is libata's own wording (drivers/ata/libata-eh.c ``ata_eh_link_report``:
"exception Emask ... SAct ... SErr ... action", "failed command: %s", "status: { DRDY ERR }",
"error: { UNC }"; libata-core.c "configured for UDMA/133"; libata-sata.c "hard resetting link",
"SATA link up/down"). /work/shared/corpus holds no dmesg sample; seed
002_b31ddd3f173763e4.txt prints two real probe lines ("ata1.00: 488397168 sectors, multi 16:
LBA48 NCQ (depth 31/32)", the same for ata2.00), used in the last test."""

from __future__ import annotations

from dataclasses import replace

from app.kernel_log import KernelLog, kernel_log_json, lines_for, names_for
from app.model import Disk, Machine, Partition
from app.parsers.kernel_log import parse_dmesg
from app.parsers.lsblk import LsblkNode
from backends.linux.probe import ata_port, with_ata_ports
from backends.simulated import SimulatedBackend
from backends.simulated.clock import SimClock

DMESG = """\
[    1.934210] ata1: SATA link up 6.0 Gbps (SStatus 133 SControl 300)
[    1.935512] ata1.00: ATA-9: WDC WD40EFRX-68N32N0, 82.00A82, max UDMA/133
[    1.941113] ata3: SATA link up 6.0 Gbps (SStatus 133 SControl 300)
[    1.951774] ata30: SATA link up 1.5 Gbps (SStatus 113 SControl 300)
[ 7011.254520] ata3.00: exception Emask 0x0 SAct 0x7fffffff SErr 0x0 action 0x0
[ 7011.254526] ata3.00: irq_stat 0x40000008
[ 7011.254531] ata3.00: failed command: READ FPDMA QUEUED
[ 7011.254539] ata3.00: cmd 60/00:00:c8:5e:3b/02:00:1b:00:00/40 tag 0 ncq dma 262144 in
                        res 41/40:00:b0:5f:3b/00:00:1b:00:00/40 Emask 0x409 (media error) <F>
[ 7011.254543] ata3.00: status: { DRDY ERR }
[ 7011.254546] ata3.00: error: { UNC }
[ 7011.256703] ata3.00: configured for UDMA/133
[ 7011.256736] sd 2:0:0:0: [sdc] tag#0 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE
[ 7011.256752] I/O error, dev sdc, sector 456875952 op 0x0:(READ) flags 0x80700 phys_seg 64 prio class 0
[ 7011.256778] ata3: EH complete
[ 8002.118005] ata3: hard resetting link
[ 8002.431970] ata30.00: failed command: WRITE FPDMA QUEUED
"""

GIB = 1 << 30


def _machine(*, ports: bool = True) -> Machine:
    disks = (
        Disk("sda", 4000 * GIB, transport="sata", ata_port="ata1" if ports else None),
        Disk("sdc", 4000 * GIB, transport="sata", ata_port="ata3" if ports else None),
        Disk("sdd", 4000 * GIB, transport="sata", ata_port="ata30" if ports else None),
    )
    parts = (Partition("sdc1", "sdc", 1, 2048, 4000 * GIB - GIB),)
    return Machine(host="h", kernel="k", disks=disks, partitions=parts)


def test_ata_port_lines_are_the_disks_newest_first() -> None:
    log = KernelLog("dmesg", parse_dmesg(DMESG))
    sdc = [ln.text for ln in lines_for(log, names_for(_machine(), "sdc"))]
    assert sdc[0] == "ata3: hard resetting link"
    assert "ata3.00: failed command: READ FPDMA QUEUED" in sdc
    assert "ata3.00: exception Emask 0x0 SAct 0x7fffffff SErr 0x0 action 0x0" in sdc
    assert "ata3.00: error: { UNC }" in sdc
    assert "I/O error, dev sdc, sector 456875952" in " ".join(sdc)  # the block layer names sdc
    assert sdc[-1] == "ata3: SATA link up 6.0 Gbps (SStatus 133 SControl 300)"
    # ata30 is another port (sdd's), ata1 sda's: none of theirs
    assert not [t for t in sdc if t.startswith(("ata30", "ata1"))]
    assert len(sdc) == 12
    sdd = [ln.text for ln in lines_for(log, names_for(_machine(), "sdd"))]
    assert sdd == [
        "ata30.00: failed command: WRITE FPDMA QUEUED",
        "ata30: SATA link up 1.5 Gbps (SStatus 113 SControl 300)",
    ]
    # a partition's section is the partition's own lines: the port is the whole disk's
    assert not [ln for ln in lines_for(log, names_for(_machine(), "sdc1")) if "ata" in ln.text]


def test_without_the_port_the_ata_lines_are_nobodys() -> None:
    """What the mapping adds: the same log, the same disks without their ports."""
    log = KernelLog("dmesg", parse_dmesg(DMESG))
    sdc = [ln.text for ln in lines_for(log, names_for(_machine(ports=False), "sdc"))]
    assert sdc == [
        "I/O error, dev sdc, sector 456875952 op 0x0:(READ) flags 0x80700 phys_seg 64 prio class 0",
        "sd 2:0:0:0: [sdc] tag#0 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_SENSE",
    ]


def test_report_log_names_the_disk_not_the_port() -> None:
    j = kernel_log_json(KernelLog("dmesg", parse_dmesg(DMESG)), _machine())
    by_text = {ln["text"]: ln["devices"] for ln in j["lines"]}
    assert by_text["ata3.00: failed command: READ FPDMA QUEUED"] == ["sdc"]
    assert by_text["ata3: hard resetting link"] == ["sdc"]
    assert by_text["ata30.00: failed command: WRITE FPDMA QUEUED"] == ["sdd"]
    assert by_text["ata1.00: ATA-9: WDC WD40EFRX-68N32N0, 82.00A82, max UDMA/133"] == ["sda"]


def test_the_port_from_the_sysfs_link() -> None:
    """/sys/dev/block/MAJ:MIN links as the kernel makes them (an AHCI port, a port multiplier's
    link, NVMe and USB storage without libata)."""
    ahci = "../../devices/pci0000:00/0000:00:1f.2/ata3/host2/target2:0:0/2:0:0:0/block/sdc"
    pmp = "../../devices/pci0000:00/0000:00:11.0/ata5/link5.1/dev5.1.0/host4/target4:1:0/4:1:0:0/block/sdf"
    nvme = "../../devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1"
    usb = (
        "../../devices/pci0000:00/0000:00:14.0/usb2/2-1/2-1:1.0/host6/target6:0:0/6:0:0:0/block/sdg"
    )
    assert ata_port(ahci) == "ata3"
    assert ata_port(pmp) == "ata5"  # "ata5.01:" lines: the port part
    assert ata_port(nvme) is None and ata_port(usb) is None and ata_port(None) is None

    class _Links:
        def readlink(self, path: str) -> str | None:
            return {"/sys/dev/block/8:32": ahci, "/sys/dev/block/8:96": usb}.get(path)

    disks = (Disk("sdc", GIB), Disk("sdg", GIB), Disk("nvme0n1", GIB))
    nodes = {
        "sdc": LsblkNode("sdc", "sdc", "disk", GIB, maj_min="8:32"),
        "sdg": LsblkNode("sdg", "sdg", "disk", GIB, maj_min="8:96"),
        "nvme0n1": LsblkNode("nvme0n1", "nvme0n1", "disk", GIB, maj_min="259:0"),
    }
    out = with_ata_ports(_Links(), disks, nodes)  # type: ignore[arg-type]
    assert [d.ata_port for d in out] == ["ata3", None, None]


def test_simulated_sata_disks_have_ports_and_sdb_gets_its_ata_lines() -> None:
    """raid6-wd: sdb failed with libata's "ata2.00: exception ... / error: { UNC }" (the
    scenario's kernel lines); its SATA disks are ata1..ata6 in name order."""
    be = SimulatedBackend.from_scenario("raid6-wd", clock=SimClock.manual())
    m = be.probe()
    assert {d.name: d.ata_port for d in m.disks} == {
        f"sd{c}": f"ata{i}" for i, c in enumerate("abcdef", 1)
    }
    from app.kernel_log import read_kernel_log

    sdb = [ln.text for ln in lines_for(read_kernel_log(be), names_for(m, "sdb"))]
    assert "ata2.00: exception Emask 0x0 SAct 0x0 SErr 0x0 action 0x0" in sdb
    assert "ata2.00: error: { UNC }" in sdb
    nvme = SimulatedBackend.from_scenario("blank", clock=SimClock.manual()).probe()
    assert all(d.ata_port is None for d in nvme.disks)  # NVMe is not libata


def test_seed_probe_lines_name_their_disks() -> None:
    """Seed 002_b31ddd3f173763e4.txt (`dmesg | grep NCQ`): "ata1.00: 488397168 sectors, multi
    16: LBA48 NCQ (depth 31/32)" and the same for ata2.00: two SATA disks with NCQ; each line is
    the disk's on that port."""
    text = (
        "[    2.1] ata1.00: 488397168 sectors, multi 16: LBA48 NCQ (depth 31/32)\n"
        "[    2.2] ata2.00: 488397168 sectors, multi 16: LBA48 NCQ (depth 31/32)\n"
    )
    m = _machine()
    m = replace(m, disks=(*m.disks, Disk("sdb", 250 * GIB, ata_port="ata2")))
    j = kernel_log_json(KernelLog("dmesg", parse_dmesg(text)), m)
    assert [ln["devices"] for ln in j["lines"]] == [["sdb"], ["sda"]]
