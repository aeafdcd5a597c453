"""The named scenarios, with the numbers of the source articles in ../shared/seeds/."""

from __future__ import annotations

from collections.abc import Callable
from fractions import Fraction

from app.model import md_names
from backends.simulated.programs.disk_tools import add_enclosure
from backends.simulated.programs.kernel_log import BOOTED_S
from backends.simulated.records import (
    SEQ_USB,
    SimArray,
    SimDisk,
    SimFS,
    SimIO,
    SimMember,
    SimSmart,
)
from backends.simulated.scenario_lvm_raid import lvm_raid
from backends.simulated.scenario_parts import (
    GIB,
    GPT_BIOS,
    GPT_EFI,
    GPT_LINUX,
    GPT_RAID,
    GPT_SWAP,
    MIB,
    PRO_512_BYTES,
    WD1TB_BYTES,
    add_array,
    add_lvm,
    add_partition,
    evo850,
    finalize,
    mdadm_conf_text,
    members,
    new_state,
    nvme_disk,
    ramp_from_limit,
    running_since,
    wd_red,
)
from backends.simulated.scenario_retire import retire
from backends.simulated.scenario_spare import spare
from backends.simulated.state import SimState

# ---- (a) raid10-evo -------------------------------------------------------------------------
SEED000_FIRST_SPEED = 384214


def raid10_evo(t: float) -> SimState:
    """Seed 000: four 850 EVO, RAID-10 n2 32K chunk, no bitmap, md127, resync at 16.3 %."""
    st = new_state("mytux", t)
    serials = ["S2RBNX0H512473W", "S2RBNX0H512481K", "S2RBNX0H512495T", "S2RBNX0H512502B"]
    # seed 000, Nov. 2016 values as the counters' base
    lbas = [979783261, 1211867704, 995650995, 4121599736]
    component_kib = 167651328 // 2  # array 167651328 blocks (the article's resync line)
    part_sectors = component_kib * 2 + 262144  # 1 MiB multiple: 81989 MiB
    for i, (dn, serial) in enumerate(zip(("sda", "sdb", "sdc", "sdd"), serials, strict=True)):
        st.disks[dn] = evo850(dn, serial, lbas[i])
        st.disks[dn].ptuuid = st.new_uuid(dn)
        p1 = add_partition(
            st,
            dn,
            1,
            2048,
            1048576,
            GPT_EFI if i == 0 else GPT_LINUX,
            "EFI System" if i == 0 else "Linux filesystem",
        )
        add_partition(st, dn, 2, 2048 + 1048576, part_sectors, GPT_RAID, "Linux RAID")
        if i == 0:
            st.filesystems[p1.name] = SimFS(
                p1.name,
                "vfat",
                "7A1B-2C3D",
                512 * MIB,
                mountpoints=("/boot/efi",),
                used_bytes=6 * MIB,
                block_size=512,
            )
    a = add_array(
        st,
        SimArray(
            name="md127",
            level="raid10",
            raid_disks=4,
            members=members(["sda2", "sdb2", "sdc2", "sdd2"]),
            component_kib=component_kib,
            chunk_kib=32,
            layout="n2",
            metadata="1.2",
            array_name="mytux:127",
            bitmap=None,
            array_state="active",
        ),
    )
    # the article's moment: resync = 16.3% (27408896/167651328) at speed=384214K/sec, read
    # just after "echo 500000 > speed_limit_max; echo 200000 > speed_limit_min": md's 30 s
    # speed window still ramps from the default limit's held rate (486124, then 525478 follow)
    ramp_from_limit(st, a, "resync", 27408896 * 2, t, SEED000_FIRST_SPEED, 200000, 500000, 200000)
    lv = add_lvm(st, "md127", "vg_raid", "lv_data", 120 * GIB)
    st.filesystems[lv.kernel_name] = SimFS(
        lv.kernel_name,
        "ext4",
        st.new_uuid("fs"),
        120 * GIB,
        label="data",
        mountpoints=("/srv/data",),
        used_bytes=37 * GIB,
        stride=8,
        stripe_width=16,
        created_at=t - 3600,
    )
    st.events.clear()
    return finalize(st)


# ---- (b) raid5-cable ------------------------------------------------------------------------
RAID5_CABLE_BEFORE = 603302987
RAID5_CABLE_AFTER = 3763859973


def raid5_cable(t: float) -> SimState:
    """Seed 000: RAID-5 of four 850 EVO, no bitmap; sdd's cable came loose, re-added: full
    recovery. sdd's Total_LBAs_Written goes 603,302,987 -> 3,763,859,973 over the recovery."""
    st = new_state("mytux", t)
    serials = ["S2RBNX0H600101A", "S2RBNX0H600118M", "S2RBNX0H600124E", "S2RBNX0H600137R"]
    lbas = [604127952, 846533123, 603302987, RAID5_CABLE_BEFORE]
    component_kib = 449218560  # "ca. 460 GB pro Platte effektiv genutzt", 512K multiple
    for i, dn in enumerate(("sda", "sdb", "sdc", "sdd")):
        d = evo850(dn, serials[i], lbas[i], wlc=4 if dn == "sdd" else 2)
        d.ptuuid = st.new_uuid(dn)
        st.disks[dn] = d
        add_partition(st, dn, 1, 2048, component_kib * 2 + 262144, GPT_RAID, "Linux RAID")
    # The article's counter grew 3,160,556,986 LBAs (1.62 TB) while the recovery wrote the
    # ~460 GB component once: the scenario calibrates sdd's firmware counter to reproduce it.
    delta = RAID5_CABLE_AFTER - RAID5_CABLE_BEFORE
    st.disks["sdd"].smart.lba_count_factor = Fraction(delta * 512, component_kib * 1024)
    st.disks["sdd"].smart.crc_errors = 23  # the loose cable: the link retried corrupted frames
    mem = members(["sda1", "sdb1", "sdc1", "sdd1"])
    mem[3].state = {"spare"}
    a = add_array(
        st,
        SimArray(
            name="md127",
            level="raid5",
            raid_disks=4,
            members=mem,
            component_kib=component_kib,
            chunk_kib=512,
            layout=md_names.DEFAULT_PARITY_LAYOUT,
            array_name="mytux:127",
            bitmap=None,
            array_state="active",
            base_ceiling_kib_s=520000.0,
        ),
    )
    a.members[3].desc_nr = 4
    a.next_desc = 5
    st.start_sync(a, "recover", targets=("sdd1",))
    lv = add_lvm(st, "md127", "vg_ssd", "lv_home", 1000 * GIB)
    st.filesystems[lv.kernel_name] = SimFS(
        lv.kernel_name,
        "ext4",
        st.new_uuid("fs"),
        1000 * GIB,
        mountpoints=("/home",),
        used_bytes=412 * GIB,
        stride=128,
        stripe_width=384,
    )
    st.events.clear()
    st.kernel_lines.extend(_sdd_cable(t - BOOTED_S, t))
    return finalize(st)


def _sdd_cable(boot: float, t: float) -> list[tuple[float, str]]:
    """What the kernel said this boot on raid5-cable (the simulated machine booted
    ``BOOTED_S`` before the scenario opens): sdd's loose cable makes libata reset its link
    (ata4: sdd is the fourth SATA disk; ``ata_eh_link_report()`` / ``sata_link_hardreset()``
    words); sdd1 had dropped out before the reboot, so at assembly md kicks it as non-fresh
    (md.c ``analyze_sbs()``) and raid5 runs on three (raid5.c ``raid5_run()``); ten minutes
    ago the cable was reseated (link down, up again), and sdd1 was added back: the recovery
    line itself comes from ``finalize``, at the sync's start."""
    link_error = [
        "ata4.00: exception Emask 0x10 SAct 0x0 SErr 0x280100 action 0x6 frozen",
        "ata4.00: irq_stat 0x08000000, interface fatal error",
        "ata4: SError: { UnrecovData 10B8B BadCRC }",
        "ata4.00: failed command: READ FPDMA QUEUED",
        "ata4.00: status: { DRDY }",
        "ata4: hard resetting link",
        "ata4: SATA link up 6.0 Gbps (SStatus 133 SControl 300)",
        "ata4.00: configured for UDMA/133",
        "ata4: EH complete",
    ]
    out = [(boot + 2.0, ln) for ln in link_error]
    out += [
        (boot + 4.0, "md: kicking non-fresh sdd1 from array!"),
        *((boot + 4.0, f"md/raid:md127: device {d} operational as raid disk {i}")
          for i, d in enumerate(("sda1", "sdb1", "sdc1"))),
        (boot + 4.0, "md/raid:md127: raid level 5 active with 3 out of 4 devices, algorithm 2"),
        (boot + 4.1, "md127: detected capacity change from 0 to 1379999416320"),
    ]  # fmt: skip
    out += [(boot + 3600.0 + k, ln) for k, ln in enumerate(link_error)]
    out += [
        (t - 600.0, "ata4: SATA link down (SStatus 0 SControl 300)"),
        (t - 590.0, "ata4: SATA link up 6.0 Gbps (SStatus 133 SControl 300)"),
        (t - 590.0, "ata4.00: configured for UDMA/133"),
        (t - 590.0, "sd 3:0:0:0: [sdd] 976773168 512-byte logical blocks: (500 GB/466 GiB)"),
    ]
    return out


# ---- (c) raid6-wd ---------------------------------------------------------------------------
def raid6_wd(t: float) -> SimState:
    """Seed 001: RAID-6 of five WD 1 TB, internal bitmap, stripe_cache_size 256, [_UUUU];
    slot 0's disk failed and md rebuilds onto a spare at ~25 MB/s (66 MB/s with 8192)."""
    st = new_state("homeserver", t)
    names = ["sda", "sdb", "sdc", "sdd", "sde", "sdf"]
    component_kib = 2929683456 // 3  # the article's 2929683456 blocks
    for i, dn in enumerate(names):
        st.disks[dn] = wd_red(dn, f"WD-WCC4J{4170000 + 7919 * i:07d}", 21000 + 13 * i)
        st.disks[dn].ptuuid = st.new_uuid(dn)
        add_partition(st, dn, 1, 2048, component_kib * 2 + 262144, GPT_RAID, "Linux RAID")
    st.disks["sdb"].smart.reallocated = 1816
    st.disks["sdb"].smart.health = "FAILED"
    # the failing disk: its reallocation pool is spent (normalized value below the threshold
    # 10), sectors wait for reallocation, and its last self-test stopped at an unreadable one
    sdb = st.disks["sdb"].smart
    sdb.reallocated_value = 3
    sdb.pending = 24
    sdb.fail_test_at_lba = 1234567890
    sdb.self_tests.insert(0, ("Short offline", "Completed: read failure", -2, 1234567890))
    # the article's mdstat: sda1[1] sdc1[4] sdd1[3] sde1[2], slot 0 (sdb1) missing
    mem = [
        SimMember("sdb1", 0, None, {"faulty"}),
        SimMember("sda1", 1, 1, {"in_sync"}),
        SimMember("sde1", 2, 2, {"in_sync"}),
        SimMember("sdd1", 3, 3, {"in_sync"}),
        SimMember("sdc1", 4, 4, {"in_sync"}),
        SimMember("sdf1", 5, None, {"spare"}),
    ]
    a = add_array(
        st,
        SimArray(
            name="md0",
            level="raid6",
            raid_disks=5,
            members=mem,
            component_kib=component_kib,
            chunk_kib=1024,
            layout=md_names.DEFAULT_PARITY_LAYOUT,
            array_name="homeserver:0",
            bitmap="internal",
            stripe_cache_size=256,
            array_state="active",
            base_ceiling_kib_s=69686.0,  # seed 001 calibration, see state.py
        ),
    )
    st.maybe_start_recovery(a)
    job = a.job
    assert job is not None
    done = int(job.total * 0.082)  # 8.2 % done when the scenario opens
    running_since(st, a, done, t)
    mem[0].failed_at = job.started_at - 1.0  # sdb1 failed, and md took the spare at once
    a.failures.append(mem[0].failed_at)
    st.filesystems["md0"] = SimFS(
        "md0",
        "ext4",
        st.new_uuid("fs"),
        2929683456 * 1024,
        mountpoints=("/srv/share",),
        used_bytes=1900 * GIB,
        stride=256,
        stripe_width=768,
    )
    # a six-bay SAS backplane: the admin finds sdb by its bay (raidman plan locate)
    add_enclosure(st, "0:0:6:0", {dn: (f"Slot {i:02d}", i) for i, dn in enumerate(names)})
    st.events.clear()
    # sdb1 failed and md began the recovery onto the spare at once: when 8.2 % at this rate
    # implies (the Sync card's "began ~53m ago"), not two hours before (that would be 19 %)
    st.kernel_lines.extend(_sdb_failing(job.started_at - 1.0))
    _since_boot(st, names, done * 512, "sdf")
    return finalize(st)


# what a home NAS moves in the nine days since boot (/proc/uptime), per disk: the share's
# reads and writes, before the rebuild's own
RAID6_WD_BOOT_READ = 540 * 10**9
RAID6_WD_BOOT_WRITE = 95 * 10**9


def _since_boot(st: SimState, names: list[str], rebuilt: int, target: str) -> None:
    """The kernel's counters of raid6-wd's disks and members at the scenario's start: the
    nine days since boot, and the part of the rebuild already done (every survivor read it,
    the target wrote it; the failed sdb was read until it failed)."""
    for dn in names:
        read = RAID6_WD_BOOT_READ + (rebuilt if dn not in (target, "sdb") else 0)
        write = RAID6_WD_BOOT_WRITE + (rebuilt if dn == target else 0)
        for dev in (dn, f"{dn}1"):
            st.io[dev] = SimIO(read, write, read // 131072, write // 131072)


def _sdb_failing(t: float) -> list[tuple[float, str]]:
    """What the kernel said when raid6-wd's sdb failed: libata's error handling, the block
    layer's I/O error with its sector, md's read error and raid5_error's failure line."""
    return [
        (t, "ata2.00: exception Emask 0x0 SAct 0x0 SErr 0x0 action 0x0"),
        (t, "ata2.00: error: { UNC }"),
        (t + 0.1, "sd 1:0:0:0: [sdb] tag#0 FAILED Result: hostbyte=DID_OK driverbyte=DRIVER_OK"),
        (t + 0.1, "sd 1:0:0:0: [sdb] tag#0 Sense Key : Medium Error [current]"),
        (
            t + 0.1,
            "I/O error, dev sdb, sector 1234567890 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
        ),
        (t + 0.2, "md/raid:md0: read error not correctable (sector 1234305744 on sdb1)."),
        (t + 0.2, "md/raid:md0: Disk failure on sdb1, disabling device."),
        (t + 0.2, "md/raid:md0: Operation continuing on 4 devices."),
    ]


# ---- (d) usb-bridge -------------------------------------------------------------------------
def usb_bridge(t: float) -> SimState:
    """Seed 003: 850 PRO behind a JMicron USB-SATA bridge (512/4096, 4096/33553920, partitions
    at multiples of 65535 sectors) and the same model on internal SATA for contrast."""
    st = new_state("mylux", t)
    sda = evo850("sda", "S250NXAGA01234X", 2211222333, pro=True, wlc=9)
    sda.ptuuid = st.new_uuid("sda")
    st.disks["sda"] = sda
    add_partition(st, "sda", 1, 2048, 65536, GPT_BIOS, "BIOS boot")
    add_partition(st, "sda", 2, 67584, 1245184, GPT_EFI, "EFI System")
    add_partition(st, "sda", 3, 1312768, 35651584, GPT_SWAP, "Linux swap")
    root = add_partition(st, "sda", 4, 36964352, 400 * GIB // 512)
    st.filesystems["sda2"] = SimFS(
        "sda2",
        "vfat",
        "1D2E-3F40",
        608 * MIB,
        mountpoints=("/boot/efi",),
        used_bytes=9 * MIB,
        block_size=512,
    )
    st.filesystems["sda3"] = SimFS(
        "sda3", "swap", st.new_uuid("swap"), 35651584 * 512, mountpoints=("[SWAP]",)
    )
    st.filesystems[root.name] = SimFS(
        root.name, "ext4", st.new_uuid("root"), 400 * GIB, mountpoints=("/",), used_bytes=61 * GIB
    )
    sdh = SimDisk(
        name="sdh",
        size_bytes=PRO_512_BYTES,
        model="Samsung SSD 850 PRO 512GB",
        serial="S250NXAGB05678Y",
        vendor="Samsung",
        transport="usb",
        rotational=False,
        logical=512,
        physical=4096,
        min_io=4096,
        optimal_io=33553920,
        discard_granularity=0,
        discard_max_bytes=0,
        scheduler="mq-deadline",
        seq_kib_s=SEQ_USB,
        removable=False,
        partition_table="gpt",
        ptuuid=st.new_uuid("sdh"),
        smart=SimSmart(
            None,
            available=False,
            reason="USB bridge (JMicron JMS578) does not pass SMART through (try -d sat)",
        ),
    )
    st.disks["sdh"] = sdh
    u = 65535
    add_partition(st, "sdh", 1, u, u, GPT_BIOS, "BIOS boot")
    add_partition(st, "sdh", 2, 2 * u, 1245165, GPT_EFI, "EFI System")
    add_partition(st, "sdh", 3, 21 * u, 35651040, GPT_SWAP, "Linux swap")
    p4 = add_partition(st, "sdh", 4, 565 * u, 6000 * u)
    st.filesystems[p4.name] = SimFS(
        p4.name,
        "ext4",
        st.new_uuid("usbfs"),
        6000 * u * 512,
        mountpoints=("/run/media/backup",),
        used_bytes=88 * GIB,
    )
    return finalize(st)


# ---- (e) imsm -------------------------------------------------------------------------------
WORN_EVO_LBAS = 128 * 10**12 // 512


def imsm(t: float) -> SimState:
    """Intel IMSM (iRST) container md127 with a RAID-1 (md126) and a RAID-0 (md125) volume."""
    st = new_state("mytux", t)
    for i, dn in enumerate(("sda", "sdb")):
        d = evo850(dn, f"S2RBNX0H7000{i}1Q", 700000000 + i * 1234567)
        d.partition_table = None
        st.disks[dn] = d
    # sdb is a worn SSD: 128 TB of host writes (250 billion 512-byte LBAs) against the 150 TBW
    # Samsung rates the 850 EVO 500 GB for (85 %: the smart-tbw warning), about 384 P/E cycles
    # of its 600 on Wear_Leveling_Count
    st.disks["sdb"].smart.lbas_written = WORN_EVO_LBAS
    st.disks["sdb"].smart.wlc_raw = 384
    cont = add_array(
        st,
        SimArray(
            name="md127",
            level="container",
            raid_disks=0,
            members=[
                SimMember("sdb", 1, None, {"spare"}, data_offset=0),
                SimMember("sda", 0, None, {"spare"}, data_offset=0),
            ],
            component_kib=0,
            chunk_kib=0,
            metadata="external:imsm",
            size_override_kib=10402,
        ),
    )
    cont.creation_time = t - 3 * 86400
    v0_kib = 100 * GIB // 1024
    v1_kib = 360 * GIB // 1024
    md126 = add_array(
        st,
        SimArray(
            name="md126",
            level="raid1",
            raid_disks=2,
            members=[
                SimMember("sda", 1, 0, {"in_sync"}, data_offset=0),
                SimMember("sdb", 0, 1, {"in_sync"}, data_offset=0),
            ],
            component_kib=v0_kib,
            chunk_kib=64,
            metadata="external:/md127/0",
            array_name="Volume0",
            container="md127",
            member_index=0,
        ),
    )
    md125 = add_array(
        st,
        SimArray(
            name="md125",
            level="raid0",
            raid_disks=2,
            members=[
                SimMember("sda", 1, 0, {"in_sync"}, data_offset=v0_kib * 2),
                SimMember("sdb", 0, 1, {"in_sync"}, data_offset=v0_kib * 2),
            ],
            component_kib=v1_kib // 2,
            chunk_kib=128,
            metadata="external:/md127/1",
            array_name="Volume1",
            container="md127",
            member_index=1,
        ),
    )
    md126.creation_time = t - 2 * 86400
    md125.creation_time = t - 86400
    st.filesystems["md126"] = SimFS(
        "md126", "ext4", st.new_uuid("fs"), v0_kib * 1024, mountpoints=("/",), used_bytes=23 * GIB
    )
    st.filesystems["md125"] = SimFS(
        "md125",
        "xfs",
        st.new_uuid("fs"),
        v1_kib * 1024,
        mountpoints=("/scratch",),
        used_bytes=120 * GIB,
        sunit_bytes=128 * 1024,
        swidth_bytes=256 * 1024,
    )
    return finalize(st)


# ---- (f) blank ------------------------------------------------------------------------------
def blank(t: float) -> SimState:
    """Four blank 1 TB NVMe disks: the starting point of the create-array wizard."""
    st = new_state("demo", t)
    for i in range(4):
        st.disks[f"nvme{i}n1"] = nvme_disk(i)
    st.mdadm_conf = mdadm_conf_text(st)
    st.touch()
    return st


# ---- (g) big --------------------------------------------------------------------------------
def disk_letters(i: int) -> str:
    s = ""
    i += 1
    while i:
        i, r = divmod(i - 1, 26)
        s = chr(97 + r) + s
    return s


def big(t: float, disks: int = 1000, arrays: int = 250, syncing: int = 16) -> SimState:
    """Many disks and arrays for benchmarks: arrays of ``disks // arrays`` whole disks."""
    st = new_state("bigiron", t)
    names = [f"sd{disk_letters(i)}" for i in range(disks)]
    for i, dn in enumerate(names):
        hdd = i % 2 == 1
        st.disks[dn] = (
            wd_red(dn, f"WD-WX{100000 + i}", 9000 + i)
            if hdd
            else evo850(dn, f"S2RBNX0H{800000 + i}", 500000000 + i)
        )
        st.disks[dn].partition_table = None
    per = max(1, disks // max(1, arrays))
    levels = ["raid6", "raid10", "raid5", "raid1"]
    for k in range(min(arrays, disks // per)):
        devs = names[k * per : (k + 1) * per]
        level = levels[k % 4] if per >= 4 else ("raid1" if per >= 2 else "raid0")
        if level == "raid1" and per > 2:
            devs = devs[:2]
        a = add_array(
            st,
            SimArray(
                name=f"md{k}",
                level=level,
                raid_disks=len(devs),
                members=members(devs),
                component_kib=(WD1TB_BYTES // 1024 - 131072) // 512 * 512 // 2,
                chunk_kib=512,
                # only the levels with a layout have one (RAID-1/0 show none, as mdadm does)
                layout=md_names.default_layout(level),
                array_name=f"bigiron:{k}",
                bitmap="internal",
            ),
        )
        if k < syncing:
            st.start_sync(a, "resync")
            running_since(st, a, k * 1_000_000, t)
    st.events.clear()
    return finalize(st)


SCENARIOS: dict[str, Callable[[float], SimState]] = {
    "raid10-evo": raid10_evo,
    "raid5-cable": raid5_cable,
    "raid6-wd": raid6_wd,
    "usb-bridge": usb_bridge,
    "imsm": imsm,
    "blank": blank,
    "retire": retire,
    "spare": spare,
    "lvm-raid": lvm_raid,
    "big": big,
}
