"""Filesystems: ``mkfs.ext4``, ``mkfs.xfs``, ``xfs_info`` and ``tune2fs``."""

from __future__ import annotations

from collections.abc import Sequence

from backends.simulated.programs.argv import Result, parse_size, split_opts
from backends.simulated.programs.devices import io_hints, resolve
from backends.simulated.records import SimFS
from backends.simulated.state import SimState

E2FS_VERSION = "mke2fs 1.47.0 (5-Feb-2023)"


def fs_target_check(st: SimState, p: str, prog: str) -> tuple[str | None, Result | None]:
    dev = resolve(st, p)
    if dev is None:
        return None, (1, "", f"{prog}: The file {p} does not exist and no size was specified.\n")
    fs = st.filesystems.get(dev)
    if fs is not None and fs.mountpoints:
        return None, (1, "", f"{p} is mounted; will not make a filesystem here!\n")
    if any(a.member(dev) is not None for a in st.arrays.values()) or dev in st.pvs:
        return None, (
            1,
            "",
            f"{p} is apparently in use by the system; will not make a filesystem here!\n",
        )
    d = st.disks.get(dev)
    if d is not None and any(p_.disk == dev for p_ in st.partitions.values()):
        return None, (
            1,
            "",
            f"{p} is apparently in use by the system; will not make a filesystem here!\n",
        )
    return dev, None


def _e2fs_counter(label: str, total: int) -> str:
    """A phase as mke2fs writes it (e2fsprogs lib/ext2fs/progress.c): the label, "done/total"
    redrawn in place with backspaces, blanked, then "done"."""
    w = len(str(total))
    back = "\b" * (2 * w + 1)
    steps = sorted({0, total // 4, total // 2, 3 * total // 4})
    redraws = "".join(f"{i:>{w}}/{total:>{w}}{back}" for i in steps)
    return f"{label}: {redraws}{' ' * (2 * w + 1)}{back}done                            \n"


def mkfs_ext4(st: SimState, args: Sequence[str], stdin: str | None, fstype: str = "ext4") -> Result:
    parsed = split_opts(list(args), {"E": "extended", "b": "blocksize", "L": "label", "m": "reserved",
                                     "t": "type", "T": "usage", "O": "features", "i": "inode"},
                        {"F": "force", "q": "quiet", "v": "verbose", "n": "noaction"})  # fmt: skip
    if isinstance(parsed, str):
        return 1, "", f"mke2fs: {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if len(pos) != 1:
        return (
            1,
            "",
            "Usage: mkfs.ext4 [-c|-l filename] [-b block-size] ... device [blocks-count]\n",
        )
    dev, err = fs_target_check(st, pos[0], "mke2fs")
    if err is not None or dev is None:
        return err or (1, "", "")
    bs = 4096
    if od.get("blocksize"):
        try:
            bs = int(str(od["blocksize"]))
        except ValueError:
            return 1, "", f"mke2fs: invalid block size - {od['blocksize']}\n"
        if bs not in (1024, 2048, 4096, 65536):
            return 1, "", f"mke2fs: invalid block size - {bs}\n"
    mn, opt = io_hints(st, dev)
    stride = mn // bs if mn > 512 and mn >= bs else None
    width = opt // bs if opt and opt >= bs else None
    if od.get("extended"):
        for part in str(od["extended"]).split(","):
            k, _, v = part.partition("=")
            if k in ("stride", "stripe_width", "stripe-width"):
                if not v.isdigit():
                    return 1, "", f"\nBad option(s) specified: {part}\n"
                if k == "stride":
                    stride = int(v)
                else:
                    width = int(v)
            elif k not in (
                "lazy_itable_init",
                "lazy_journal_init",
                "nodiscard",
                "discard",
                "root_owner",
            ):
                return 1, "", f"\nBad option(s) specified: {k}\n"
    old = st.filesystems.get(dev)
    if old is not None and "force" not in od and not (stdin or "").strip().lower().startswith("y"):
        return 1, f"{pos[0]} contains a {old.fstype} file system\nProceed anyway? (y,N) ", ""
    if "noaction" in od:
        return 0, "", ""
    size = st.device_size(dev) or 0
    blocks = size // bs
    fs = SimFS(dev, fstype, st.new_uuid("fs" + dev), blocks * bs, label=od.get("label"),
               used_bytes=min(blocks * bs, 16 << 20) + blocks * bs // 64, block_size=bs,
               stride=stride, stripe_width=width, created_at=st.t)  # fmt: skip
    st.filesystems[dev] = fs
    st.md_superblocks.pop(dev, None)
    st.touch()
    out = f"Creating filesystem with {blocks} {bs // 1024}k blocks and {blocks // 4} inodes\n"
    out += f"Filesystem UUID: {fs.uuid}\n"
    if stride or width:
        out = f"Stride={stride or 0} blocks, Stripe width={width or 0} blocks\n" + out
    out = "Discarding device blocks: done\n" + out
    groups = max(1, -(-blocks // (8 * bs)))  # one block group per 8 × block-size blocks
    out += _e2fs_counter("Allocating group tables", groups)
    out += _e2fs_counter("Writing inode tables", groups)
    out += "Creating journal (262144 blocks): done\nWriting superblocks and filesystem accounting information: done\n\n"
    return 0, out if "quiet" not in od else "", f"{E2FS_VERSION}\n" if "quiet" not in od else ""


def mkfs_xfs(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(list(args), {"d": "data", "L": "label", "b": "block", "l": "log",
                                     "m": "meta", "i": "inode", "s": "sector"},
                        {"f": "force", "q": "quiet", "K": "nodiscard"})  # fmt: skip
    if isinstance(parsed, str):
        return 1, "", f"mkfs.xfs: {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if len(pos) != 1:
        return 1, "", "mkfs.xfs: no device name given in argument list\n"
    dev, err = fs_target_check(st, pos[0], "mkfs.xfs")
    if err is not None or dev is None:
        return err or (1, "", "")
    mn, opt = io_hints(st, dev)
    su: int | None = mn if mn > 4096 else None
    sw_bytes: int | None = opt if su and opt else None
    if od.get("data"):
        vals: dict[str, str] = {}
        for part in str(od["data"]).split(","):
            k, _, v = part.partition("=")
            vals[k] = v
        if "su" in vals or "sw" in vals:
            s = parse_size(vals.get("su", ""), "b")
            if s is None or not vals.get("sw", "").isdigit():
                return 1, "", "mkfs.xfs: both data su and data sw options must be specified\n"
            su, sw_bytes = s, s * int(vals["sw"])
    old = st.filesystems.get(dev)
    if old is not None and "force" not in od:
        return (
            1,
            "",
            (
                f"mkfs.xfs: {pos[0]} appears to contain an existing filesystem ({old.fstype}).\n"
                "mkfs.xfs: Use the -f option to force overwrite.\n"
            ),
        )
    size = st.device_size(dev) or 0
    fs = SimFS(dev, "xfs", st.new_uuid("xfs" + dev), size // 4096 * 4096, label=od.get("label"),
               used_bytes=size // 200, block_size=4096, sunit_bytes=su, swidth_bytes=sw_bytes,
               created_at=st.t)  # fmt: skip
    st.filesystems[dev] = fs
    st.touch()
    return 0, xfs_info_text(pos[0], fs), ""


def xfs_info_text(name: str, fs: SimFS) -> str:
    bs = fs.block_size
    blocks = fs.size_bytes // bs
    agcount = max(4, min(64, blocks // (1 << 18) or 4))
    su = (fs.sunit_bytes or 0) // bs
    sw = (fs.swidth_bytes or 0) // bs
    return (
        f"meta-data={name:<22} isize=512    agcount={agcount}, agsize={blocks // agcount} blks\n"
        "         =                       sectsz=512   attr=2, projid32bit=1\n"
        "         =                       crc=1        finobt=1, sparse=1, rmapbt=0\n"
        "         =                       reflink=1    bigtime=1 inobtcount=1 nrext64=0\n"
        f"data     =                       bsize={bs}   blocks={blocks}, imaxpct=25\n"
        f"         =                       sunit={su}    swidth={sw} blks\n"
        "naming   =version 2              bsize=4096   ascii-ci=0, ftype=1\n"
        "log      =internal log           bsize=4096   blocks=16384, version=2\n"
        f"         =                       sectsz=512   sunit={su} blks, lazy-count=1\n"
        "realtime =none                   extsz=4096   blocks=0, rtextents=0\n"
    )


def xfs_info(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    if len(args) != 1:
        return 1, "", "Usage: xfs_info [-V] [-t mtab] [mountpoint|device|file]\n"
    target = args[0]
    dev = resolve(st, target)
    if dev is None:
        for f in st.filesystems.values():
            if target in f.mountpoints:
                dev = f.device
    fs = st.filesystems.get(dev) if dev else None
    if fs is None or fs.fstype != "xfs":
        return (
            1,
            "",
            f"xfs_info: {target} is not a valid XFS filesystem (unexpected SB magic number 0x00000000)\n",
        )
    return 0, xfs_info_text(f"/dev/{dev}", fs), ""


def tune2fs(st: SimState, args: Sequence[str], stdin: str | None) -> Result:
    parsed = split_opts(list(args), {"E": "extended", "L": "label", "m": "reserved", "O": "features"},
                        {"l": "list"})  # fmt: skip
    if isinstance(parsed, str):
        return 1, "", f"tune2fs: {parsed}\n"
    opts, pos = parsed
    od = dict(opts)
    if len(pos) != 1:
        return 1, "", "Usage: tune2fs [-c max_mounts_count] [-e errors_behavior] ... device\n"
    dev = resolve(st, pos[0])
    fs = st.filesystems.get(dev) if dev else None
    head = "tune2fs 1.47.0 (5-Feb-2023)\n"
    if fs is None or fs.fstype not in ("ext2", "ext3", "ext4"):
        return (
            1,
            head,
            (
                f"tune2fs: Bad magic number in super-block while trying to open {pos[0]}\n"
                f"{pos[0]} contains {'a ' + fs.fstype + ' file system' if fs else 'no ext2/3/4 file system'}\n"
            ),
        )
    out = head
    if od.get("extended"):
        for part in str(od["extended"]).split(","):
            k, _, v = part.partition("=")
            if k in ("stride", "stripe_width", "stripe-width") and v.isdigit():
                if k == "stride":
                    fs.stride = int(v)
                    out += f"Setting stride size to {v}\n"
                else:
                    fs.stripe_width = int(v)
                    out += f"Setting stripe width to {v}\n"
            else:
                return (
                    1,
                    out,
                    "\nBad options specified.\n\nExtended options are separated by commas, ...\n",
                )
        st.touch()
    if od.get("label") is not None:
        fs.label = od["label"]
        st.touch()
    if "list" in od:
        out += tune2fs_list(st, fs)
    return 0, out, ""


def tune2fs_list(st: SimState, fs: SimFS) -> str:
    bs = fs.block_size
    blocks = fs.size_bytes // bs
    inodes = blocks // 4
    free = (fs.size_bytes - (fs.used_bytes or 0)) // bs
    rows = [
        ("Filesystem volume name", fs.label or "<none>"),
        ("Last mounted on", fs.mountpoints[0] if fs.mountpoints else "<not available>"),
        ("Filesystem UUID", fs.uuid),
        ("Filesystem magic number", "0xEF53"),
        ("Filesystem revision #", "1 (dynamic)"),
        (
            "Filesystem features",
            "has_journal ext_attr resize_inode dir_index filetype needs_recovery extent 64bit flex_bg sparse_super large_file huge_file dir_nlink extra_isize metadata_csum",
        ),
        ("Filesystem flags", "signed_directory_hash "),
        ("Default mount options", "user_xattr acl"),
        ("Filesystem state", "clean"),
        ("Errors behavior", "Continue"),
        ("Filesystem OS type", "Linux"),
        ("Inode count", str(inodes)),
        ("Block count", str(blocks)),
        ("Reserved block count", str(blocks // 20)),
        ("Free blocks", str(free)),
        ("Free inodes", str(inodes - 11)),
        ("First block", "0"),
        ("Block size", str(bs)),
        ("Fragment size", str(bs)),
        ("Group descriptor size", "64"),
        ("Blocks per group", "32768"),
        ("Inodes per group", "8192"),
    ]
    if fs.stride:
        rows.append(("RAID stride", str(fs.stride)))
    if fs.stripe_width:
        rows.append(("RAID stripe width", str(fs.stripe_width)))
    rows += [
        ("Flex block group size", "16"),
        ("Reserved blocks uid", "0 (user root)"),
        ("Reserved blocks gid", "0 (group root)"),
        ("First inode", "11"),
        ("Inode size", "256"),
        ("Journal inode", "8"),
        ("Default directory hash", "half_md4"),
        ("Journal backup", "inode blocks"),
        ("Checksum type", "crc32c"),
    ]
    return "".join(f"{(k + ':'):<26}{v}\n" for k, v in rows)
