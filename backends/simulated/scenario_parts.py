"""The pieces the simulated scenarios are built from: disks, partitions, arrays, LVM, mdadm.conf,
and a sync placed part-way with md's speed window as the simulator models it."""

from __future__ import annotations

from backends.simulated.programs.kernel_log import sync_started
from backends.simulated.records import (
    SEQ_HDD,
    SEQ_NVME,
    SEQ_SATA_SSD,
    SimArray,
    SimDisk,
    SimLV,
    SimMember,
    SimPartition,
    SimPV,
    SimSmart,
    SimVG,
)
from backends.simulated.state import SimState
from backends.simulated.sysfs import mdadm_conf_line

GPT_LINUX = "0fc63daf-8483-4772-8e79-3d69d8477de4"
GPT_RAID = "a19d880f-05fc-4d3b-a006-743f0f84911e"
GPT_EFI = "c12a7328-f81f-11d2-ba4b-00a0c93ec93b"
GPT_BIOS = "21686148-6449-6e6f-744e-656564454649"
GPT_SWAP = "0657fd6d-a4ab-43c4-84e5-0933c84b4f4f"
GPT_LVM = "e6d6d379-f507-44c2-a23c-238f2a3df928"

EVO_500_BYTES = 500107862016  # 976773168 sectors
WD1TB_BYTES = 1000204886016  # 1953525168 sectors
PRO_512_BYTES = 512110190592  # 1000215216 sectors (seed 003)
NVME_1TB_BYTES = 1000204886016
MIB = 1 << 20
GIB = 1 << 30
KERNEL = "6.1.0-18-amd64"


def new_state(host: str, t: float) -> SimState:
    return SimState(host=host, kernel=KERNEL, t=t, t0=t)


def evo850(
    name: str, serial: str, lbas: int, wlc: int = 4, hours: int = 3100, pro: bool = False
) -> SimDisk:
    return SimDisk(
        name=name,
        size_bytes=EVO_500_BYTES if not pro else PRO_512_BYTES,
        model="Samsung SSD 850 EVO 500GB" if not pro else "Samsung SSD 850 PRO 512GB",
        serial=serial,
        firmware="EMT02B6Q" if not pro else "EXM04B6Q",
        vendor="ATA",
        wwn=f"0x5002538d{sum(map(ord, serial)) * 7919 % 0xFFFFFFF:07x}",
        transport="sata",
        rotational=False,
        seq_kib_s=SEQ_SATA_SSD,
        partition_table="gpt",
        smart=SimSmart(
            "ATA",
            lbas_written=lbas,
            lbas_read=lbas + lbas // 3,
            power_on_hours=hours,
            temperature_c=31,
            wlc_raw=wlc,
            rated_pe=600,
        ),
    )


def wd_red(name: str, serial: str, hours: int) -> SimDisk:
    return SimDisk(
        name=name,
        size_bytes=WD1TB_BYTES,
        model="WDC WD10EFRX-68FYTN0",
        serial=serial,
        firmware="82.00A82",
        vendor="ATA",
        transport="sata",
        rotational=True,
        physical=4096,
        min_io=4096,
        discard_granularity=0,
        discard_max_bytes=0,
        scheduler="bfq",
        seq_kib_s=SEQ_HDD,
        partition_table="gpt",
        smart=SimSmart("ATA", power_on_hours=hours, temperature_c=36),
    )


def nvme_disk(i: int, size: int = NVME_1TB_BYTES) -> SimDisk:
    return SimDisk(
        name=f"nvme{i}n1",
        size_bytes=size,
        model="Samsung SSD 970 EVO Plus 1TB",
        serial=f"S4EWNX0R{512300 + 17 * i}K",
        firmware="2B2QEXM7",
        transport="nvme",
        rotational=False,
        scheduler="none",
        schedulers=("none", "mq-deadline", "kyber", "bfq"),
        seq_kib_s=SEQ_NVME,
        discard_granularity=512,
        smart=SimSmart(
            "NVMe",
            data_units_written=1_203_456 + 1000 * i,
            data_units_read=2_406_912 + 1000 * i,
            percentage_used=1,
            power_on_hours=812 + i,
            temperature_c=38,
            nvme_tbw_per_percent=6 * 10**12,  # 600 TBW rated
        ),
    )


def add_partition(
    st: SimState,
    disk: str,
    number: int,
    start: int,
    sectors: int,
    type_guid: str = GPT_LINUX,
    type_name: str = "Linux filesystem",
) -> SimPartition:
    sep = "p" if disk[-1].isdigit() else ""
    p = SimPartition(
        name=f"{disk}{sep}{number}",
        disk=disk,
        number=number,
        start=start,
        size_bytes=sectors * 512,
        type_guid=type_guid,
        type_name=type_name,
        uuid=st.new_uuid(f"{disk}{number}"),
    )
    st.partitions[p.name] = p
    return p


def add_array(st: SimState, a: SimArray) -> SimArray:
    a.uuid = a.uuid or st.new_uuid(a.name)
    a.next_desc = max((m.desc_nr for m in a.members), default=-1) + 1
    a.creation_time = st.t - 86400 * (len(st.arrays) + 1)
    st.arrays[a.name] = a
    return a


def members(devs: list[str], offset: int = 262144) -> list[SimMember]:
    return [SimMember(d, i, i, {"in_sync"}, data_offset=offset) for i, d in enumerate(devs)]


def add_lvm(st: SimState, pv_dev: str, vg: str, lv: str, lv_bytes: int) -> SimLV:
    st.pvs[pv_dev] = SimPV(pv_dev, vg, st.device_size(pv_dev) or 0, st.new_uuid("pv"))
    st.vgs[vg] = SimVG(vg, st.new_uuid("vg"))
    v = SimLV(lv, vg, lv_bytes, st.next_dm(), st.new_uuid("lv"), (pv_dev,))
    st.lvs[f"{vg}/{lv}"] = v
    return v


def finalize(st: SimState) -> SimState:
    """The scenario as it opens: mdadm.conf, and md's "md: recovery of RAID array md0" for
    each sync already running, at the time its position and rate imply (the Sync card's
    "began ~53m ago" and the kernel log's line are one moment)."""
    st.mdadm_conf = mdadm_conf_text(st)
    said = {text for _, text in st.kernel_lines}
    for a in st.arrays.values():
        job = a.job
        if job is None or job.waiting or job.action == "reshape":
            continue
        line = sync_started(a.name, job.action)
        if line not in said:
            st.kernel_lines.append((job.started_at, line))
    st.kernel_lines.sort(key=lambda x: x[0])
    st.touch()
    return st


def mdadm_conf_text(st: SimState) -> str:
    lines = [
        "# mdadm.conf",
        "#",
        "# !NB! Run update-initramfs -u after updating this file.",
        "HOMEHOST <system>",
        "MAILADDR root",
        "",
    ]
    lines += [mdadm_conf_line(st, a) for a in st.arrays.values()]
    return "\n".join(lines) + "\n"


def running_since(st: SimState, a: SimArray, done: int, t: float) -> None:
    """``a``'s sync stands at ``done`` progress sectors at ``t``, having run at its current
    rate from when that implies (its start, its speed window and its kernel line agree)."""
    job = a.job
    assert job is not None
    job.started_at = t - done / 2 / st.rate(a) if done else t
    job.hist = [(job.started_at, 0.0)]
    job.pos = float(done)
    job.credited = done


def ramp_from_limit(
    st: SimState,
    a: SimArray,
    action: str,
    done: int,
    t: float,
    shown: int,
    old_max: int,
    new_max: int,
    new_min: int,
) -> None:
    """Start ``action`` on ``a`` so that at ``t`` it stands at ``done`` sectors and md's
    sync_speed shows ``shown``: it ran held at ``old_max`` until the limit was raised to
    ``new_max`` a few seconds before ``t`` (found by bisection on the simulator's own speed
    window, so the figure is the model's, not pasted)."""
    st.speed_limit_max = old_max
    st.start_sync(a, action)
    job = a.job
    assert job is not None
    r1 = st.rate(a)
    st.speed_limit_max, st.speed_limit_min = new_max, new_min
    r2 = st.rate(a)

    def place(tau: float) -> int:
        before = done - 2 * r2 * tau  # sectors done when the limit was raised
        job.started_at = t - tau - before / 2 / r1
        job.hist = [(job.started_at, 0.0), (t - tau, before)]
        job.pos = float(done)
        return st.reported_speed(a) or 0

    lo, hi = 0.0, 30.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if place(mid) < shown:
            lo = mid
        else:
            hi = mid
    place(hi)
    job.credited = done
