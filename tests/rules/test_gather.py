"""gather(): everything through backend.run / read_text, failures become ``unknown``."""

from __future__ import annotations

from app.backend import CommandResult
from app.rules import audit, gather
from app.rules.inputs import LVM_KEYS
from tests.rules.machines import EVO_UUID, DictBackend, Stack, conf_text, sample


def _healthy_backend(ext4: str = "tune2fs-stride8-sw16.txt") -> DictBackend:
    m = Stack().machine()
    files = {"/etc/mdadm/mdadm.conf": conf_text()}
    for d in m.disks:
        files[f"/sys/block/{d.name}/queue/scheduler"] = "none [mq-deadline] kyber bfq\n"
        files[f"/sys/block/{d.name}/device/queue_depth"] = "32\n"
        files[f"/sys/block/{d.name}/queue/write_cache"] = "write back\n"
        files[f"/sys/block/{d.name}/queue/discard_max_bytes"] = "2147450880\n"
    files["/sys/block/md0/queue/discard_max_bytes"] = "2147450880\n"
    files["/sys/block/dm-0/queue/discard_max_bytes"] = "2147450880\n"
    return DictBackend(
        commands={
            ("tune2fs", "-l", "/dev/dm-0"): sample(ext4),
            ("lvmconfig", "--type", "full", *LVM_KEYS): sample("lvmconfig-full-devices.txt"),
            (
                "mdadm",
                "--detail",
                "--scan",
            ): f"ARRAY /dev/md/evo metadata=1.2 name=host:evo UUID={EVO_UUID}\n",
            ("systemctl", "is-active", "fstrim.timer"): "active\n",
            ("systemctl", "is-active", "mdmonitor.service"): "active\n",
        },
        files=files,
    )


def test_gather_reads_everything_and_the_healthy_stack_is_quiet() -> None:
    m = Stack().machine()
    b = _healthy_backend()
    inputs = gather(b, m)
    assert inputs.unknown == {}
    assert inputs.ext4["dm-0"].stride == 8
    assert inputs.schedulers["sda"].current == "mq-deadline"
    assert inputs.schedulers["sda"].available == ("none", "mq-deadline", "kyber", "bfq")
    assert inputs.queue_depth["sdc"] == 32 and inputs.write_cache["sdd"] == "write back"
    assert inputs.discard_max_bytes["md0"] == 2147450880
    assert inputs.mdadm_conf_path == "/etc/mdadm/mdadm.conf"
    assert inputs.fstrim_timer == "active" and inputs.mdmonitor == "active"
    assert all(isinstance(c, tuple) for c in b.calls)  # argv only
    assert not [f for f in audit(m, inputs) if f.severity != "advice"]


def test_gather_wrong_stride_end_to_end() -> None:
    m = Stack().machine()
    fs = audit(m, gather(_healthy_backend("tune2fs-stride16-sw64.txt"), m))
    assert [f.code for f in fs if f.severity == "warning"] == ["ext4-stride-mismatch"]


def test_gather_never_raises_and_records_why() -> None:
    m = Stack(fstype="xfs").machine()
    b = DictBackend(
        commands={
            ("systemctl", "is-active", "fstrim.timer"): CommandResult(
                ("systemctl",), 1, "", "System has not been booted with systemd as init system"
            ),
            ("xfs_info", "/srv"): "garbage\n",
        },
        raise_on=("lvmconfig", "/sys/block/sda"),
    )
    inputs = gather(b, m)
    assert "not been booted with systemd" in inputs.unknown["fstrim.timer"]
    assert "unreadable output" in inputs.unknown["xfs_info:dm-0"]
    assert "OSError" in inputs.unknown["lvmconfig"]
    assert "PermissionError" in inputs.unknown["scheduler:sda"]
    assert "mdadm --detail --scan" in inputs.unknown  # exit 127: not found
    assert inputs.mdadm_conf == ()  # no file at either path: nothing listed
    assert inputs.xfs == {} and inputs.lvm is None and inputs.fstrim_timer is None
    fs = audit(m, inputs)  # rules cope with the holes
    assert not codes_of(fs, "audit-rule-failed")
    assert codes_of(fs, "audit-incomplete")


def test_inactive_timer_exit_3_is_an_answer() -> None:
    m = Stack().machine()
    b = _healthy_backend()
    b.commands[("systemctl", "is-active", "fstrim.timer")] = CommandResult(
        ("systemctl", "is-active", "fstrim.timer"), 3, "inactive\n", ""
    )
    inputs = gather(b, m)
    assert inputs.fstrim_timer == "inactive"
    assert codes_of(audit(m, inputs), "fstrim-timer-inactive")


def codes_of(fs: tuple[object, ...], code: str) -> list[object]:
    return [f for f in fs if getattr(f, "code", None) == code]


def test_lvmconfig_not_installed_is_said_once_plainly() -> None:
    """Issue 39: `report` said "lvmconfig could not be read (lvmconfig not found; lvmconfig not
    found)": the missing tool is tried once and said once."""
    m = Stack().machine()
    b = _healthy_backend()
    del b.commands[("lvmconfig", "--type", "full", *LVM_KEYS)]  # not installed: exit 127
    inputs = gather(b, m)
    assert inputs.unknown["lvmconfig"] == "lvmconfig not found"
    (f,) = [x for x in codes_of(audit(m, inputs), "audit-incomplete") if "LVM" in x.title]
    assert f.detail.count("lvmconfig") == 1 and "was not found" in f.detail
