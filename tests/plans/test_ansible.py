"""``raidman plan ... --format ansible``: the playbook is the same plan as ``--json`` (steps,
preview, digest), and the real ``ansible-playbook -c local`` runs it with pre-flight failures
before any change and a second run that changes nothing.

The host has no disks to spare, so here the storage tools the playbook calls (mdadm, lsblk,
update-initramfs) are small scripts that keep their state in a directory; the real-kernel
run of the same playbook is tests/vm/test_ansible.py."""

from __future__ import annotations

import hashlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from app.cli import main
from app.plans.ansible import playbook
from app.plans.ops import OpError
from app.plans.plan import Plan, Step
from backends.simulated import SimulatedBackend
from tests.tools import ansible_playbook

DEVICES = "nvme0n1,nvme1n1,nvme2n1,nvme3n1"

FAKE = r"""#!{python}
import os, sys
state = os.environ["FAKE_STATE"]
name = os.path.basename(sys.argv[0])
args = sys.argv[1:]
md = os.path.join(state, "md127")
def log(*words):
    with open(os.path.join(state, "log"), "a") as fh:
        fh.write(" ".join(words) + "\n")
if name == "mdadm":
    if args[:1] == ["--create"]:
        if os.path.exists(md):
            sys.exit("mdadm: array /dev/md/127 already exists")
        open(md, "w").close()
        log("mdadm", *args)
    elif args[:2] == ["--detail", "--brief"]:
        if not os.path.exists(md):
            sys.exit("mdadm: cannot open /dev/md/127")
        print("ARRAY /dev/md/127 metadata=1.2 name=127 UUID=3f6a1f2e:0c1d2e3f:4a5b6c7d:8e9f0a1b")
    elif args[:1] == ["--detail"]:
        sys.exit(0 if os.path.exists(md) else 1)
    else:
        sys.exit(2)
elif name == "lsblk":
    # util-linux 2.38's shape: {{"blockdevices": [{{name, type, size, mountpoint, children?}}]}}
    import json
    assert args[:4] == ["--json", "--bytes", "--output", "NAME,TYPE,SIZE,MOUNTPOINT"], args
    size = int(os.environ.get("FAKE_SIZE", "1000204886016"))
    devs = []
    for path in args[4:]:
        dev = os.path.basename(path)
        mounted = os.environ.get("FAKE_MOUNTED") == dev
        d = {{"name": dev, "type": "disk", "size": size, "mountpoint": "/srv" if mounted else None}}
        if os.environ.get("FAKE_HELD") == dev:  # a partition of it in another array
            d["children"] = [{{"name": dev + "p1", "type": "part", "size": size, "mountpoint": None,
                "children": [{{"name": "md9", "type": "raid1", "size": size, "mountpoint": None}}]}}]
        if os.path.exists(md):
            d["children"] = [
                {{"name": "md127", "type": "raid10", "size": 4000819544064, "mountpoint": None}}
            ]
        devs.append(d)
    print(json.dumps({{"blockdevices": devs}}, indent=3))
elif name == "update-initramfs":
    log("update-initramfs", *args)
else:
    log(name, *args)
"""


@pytest.fixture
def fakes(tmp_path: Path) -> tuple[Path, Path]:
    bin_dir = tmp_path / "bin"
    state = tmp_path / "state"
    bin_dir.mkdir()
    state.mkdir()
    for name in ("mdadm", "lsblk", "update-initramfs", "mkfs.ext4", "blkid"):
        p = bin_dir / name
        p.write_text(FAKE.format(python=sys.executable))
        p.chmod(0o755)
    return bin_dir, state


def create_plan(tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str, *extra: str) -> str:
    conf = tmp_path / "mdadm.conf"
    rc = main(
        [
            "plan",
            "create-array",
            "--demo",
            "blank",
            "--level",
            "10",
            "--devices",
            DEVICES,
            "--chunk",
            "32K",
            "--layout",
            "n2",
            "--bitmap",
            "none",
            "--name",
            "127",
            "--conf",
            "--initramfs",
            *(["--json"] if fmt == "json" else ["--format", fmt]),
            *extra,
        ]
    )
    assert rc == 0
    # the fakes' mdadm.conf: the plan names the real one (apply and the playbook take no other)
    out = capsys.readouterr().out
    return out if fmt == "json" else out.replace("/etc/mdadm/mdadm.conf", str(conf))


def test_a_conf_path_apply_would_refuse_gets_no_playbook(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 23 item 11: --conf-path /etc/passwd made a playbook appending to /etc/passwd."""
    argv = ["plan", "create-array", "--demo", "blank", "--level", "1", "--devices"]
    argv += ["nvme0n1,nvme1n1", "--name", "127", "--conf", "--conf-path", "/etc/passwd"]
    assert main([*argv, "--format", "ansible"]) == 3
    res = capsys.readouterr()
    assert res.out == "" and "/etc/passwd" in res.err and "mdadm.conf" in res.err
    # such a step cannot even be made: no operation appends to /etc/passwd
    with pytest.raises(OpError, match=r"'/etc/passwd' is not mdadm\.conf"):
        Step.decode(("tee", "-a", "/etc/passwd"), "w", stdin="root2::0:0::/root:/bin/sh\n")


def run_playbook(
    pb: Path, bin_dir: Path, state: Path, **env: str
) -> subprocess.CompletedProcess[str]:
    e = dict(os.environ)
    e.update(
        PATH=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}",
        FAKE_STATE=str(state),
        ANSIBLE_HOME=str(state.parent / "ansible-home"),
        ANSIBLE_LOCAL_TEMP=str(state.parent / "ansible-tmp"),
        ANSIBLE_NOCOLOR="1",
        ANSIBLE_RETRY_FILES_ENABLED="0",
        **env,
    )
    return subprocess.run(
        [
            ansible_playbook(),
            "-i",
            "localhost,",
            "-c",
            "local",
            "-e",
            f"ansible_python_interpreter={sys.executable}",
            str(pb),
        ],
        env=e,
        capture_output=True,
        text=True,
        timeout=300,
    )


def recap(out: str) -> dict[str, int]:
    m = re.search(r"localhost\s*:\s*(.*)", out.split("PLAY RECAP", 1)[-1])
    assert m, out
    return {k: int(v) for k, v in re.findall(r"(\w+)=(\d+)", m.group(1))}


def test_same_plan_same_preview_same_digest(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = json.loads(create_plan(tmp_path, capsys, "json"))
    text = create_plan(tmp_path, capsys, "text")
    pb = create_plan(tmp_path, capsys, "ansible", "--hosts", "storage", "--no-become")
    keys = ("title", "kind", "target", "warnings", "notes", "params", "steps", "disks")
    covered = {k: data[k] for k in keys}
    canon = json.dumps(covered, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    digest = data["digest"]  # the digest `plan --json` writes and `apply` checks
    assert digest == "sha256:" + hashlib.sha256(canon.encode()).hexdigest()
    assert f"not a signature): {digest}" in pb
    assert f'raidman_plan_digest: "{digest}"' in pb
    preview = text.split("\nnothing was run.")[0].rstrip("\n").splitlines()
    assert all(f"# {line}".rstrip() in pb for line in preview)
    assert 'hosts: !unsafe "storage"' in pb and "become: false" in pb
    # every step's argv, in order, as a command argv list; no shell anywhere
    body = pb.split("\n---\n", 1)[1]
    assert "shell" not in body and "raw:" not in body
    pos = 0
    conf = str(tmp_path / "mdadm.conf")  # create_plan points the playbook at the fakes' file
    for step in data["steps"]:
        argv = [a.replace("/etc/mdadm/mdadm.conf", conf) for a in step["argv"]]
        block = "argv:\n" + "".join(f'          - !unsafe "{a}"\n' for a in argv)
        found = body.find(block, pos)
        assert found > pos, argv
        pos = found
    # pre-flight tasks come before the first change
    assert body.index("pre-flight:") < body.index('"1. create /dev/md/127')


def test_create_array_playbook_runs_once_then_changes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fakes: tuple[Path, Path]
) -> None:
    bin_dir, state = fakes
    pb = tmp_path / "raid10.yml"
    pb.write_text(create_plan(tmp_path, capsys, "ansible", "--no-become"))
    first = run_playbook(pb, bin_dir, state)
    assert first.returncode == 0, first.stdout + first.stderr
    r1 = recap(first.stdout)
    assert r1["changed"] == 3 and r1["failed"] == 0
    log1 = (state / "log").read_text().splitlines()
    assert log1 == [
        "mdadm --create /dev/md/127 --level=10 --raid-devices=4 --chunk=32K --layout=n2 "
        "--bitmap=none --metadata=1.2 --name=127 --run /dev/nvme0n1 /dev/nvme1n1 /dev/nvme2n1 "
        "/dev/nvme3n1",
        "update-initramfs -u",
    ]
    conf = (tmp_path / "mdadm.conf").read_text()
    assert conf.count("ARRAY /dev/md/127 metadata=1.2 name=127 UUID=") == 1

    second = run_playbook(pb, bin_dir, state)
    assert second.returncode == 0, second.stdout + second.stderr
    r2 = recap(second.stdout)
    assert r2["changed"] == 0 and r2["failed"] == 0
    assert (state / "log").read_text().splitlines() == log1
    assert (tmp_path / "mdadm.conf").read_text() == conf


@pytest.mark.parametrize(
    ("env", "why"),
    [
        ({"FAKE_MOUNTED": "nvme2n1"}, "/dev/nvme2n1 is in use"),
        ({"FAKE_HELD": "nvme1n1"}, "/dev/nvme1n1 is in use (mounted, swap, or held by md/dm/LVM)"),
        ({"FAKE_SIZE": "1000"}, "has 1000 bytes; the plan needs 1000204886016"),
    ],
)
def test_preflight_fails_before_any_change(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    fakes: tuple[Path, Path],
    env: dict[str, str],
    why: str,
) -> None:
    bin_dir, state = fakes
    pb = tmp_path / "raid10.yml"
    pb.write_text(create_plan(tmp_path, capsys, "ansible", "--no-become"))
    res = run_playbook(pb, bin_dir, state, **env)
    assert res.returncode != 0
    assert why in res.stdout
    assert not (state / "log").exists()  # nothing ran
    assert not (tmp_path / "mdadm.conf").exists()


def test_plan_strings_are_never_templated(tmp_path: Path, fakes: tuple[Path, Path]) -> None:
    bin_dir, state = fakes
    plan = Plan(
        title="{{ 6 * 7 }}",
        steps=(
            Step.decode(
                ("mkfs.ext4", "-b", "4096", "-L", "{{ 7 * 6 }}", "/dev/nvme0n1"), "{{ 1 }}"
            ),
        ),
    )
    pb = tmp_path / "p.yml"
    pb.write_text(playbook(plan, SimulatedBackend.from_scenario("blank").probe(), become=False))
    res = run_playbook(pb, bin_dir, state)
    assert res.returncode == 0, res.stdout + res.stderr
    assert (state / "log").read_text().splitlines()[
        -1
    ] == "mkfs.ext4 -b 4096 -L {{ 7 * 6 }} /dev/nvme0n1"
    assert plan.digest in pb.read_text()
