"""`raidman apply` treats a plan file as untrusted input (issue 11, deliverable 5).

* malformed files: exactly one error line on stderr, exit status 2, no traceback, nothing run;
* tampered plans (a program raidman never plans, argv naming other devices than the params, an
  empty or unknown kind, control characters in a ``why``, a stale or missing digest, ...):
  refused with exit status != 0 and NOTHING run — checked end to end in a subprocess on the
  linux backend with logging stub programs (mdadm, sh, touch, tee, ...) first on PATH;
* texts from a plan are shown escaped; the digest is printed and checked.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

import app.commands.apply as apply_cmd
import app.commands.plan as plan_cmd
from app.cli import main
from app.plans.audit_log import read_entries
from app.plans.guards.allowlist import argv_problem
from app.plans.guards.identity import record_disks
from app.plans.plan import MAX_STEPS, Plan, PlanFileError, Step
from app.plans.render import format_plan
from tests.plans.fakes import FakeBackend, array_machine, blank_machine

CREATE = [
    "plan",
    "create-array",
    "--level",
    "1",
    "--devices",
    "nvme0n1,nvme1n1",
    "--name",
    "127",
]


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> FakeBackend:
    be = FakeBackend(blank_machine())
    monkeypatch.setattr(plan_cmd, "make_backend", lambda args: be)
    monkeypatch.setattr(apply_cmd, "make_backend", lambda args: be)
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    return be


def _good_plan(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> dict[str, Any]:
    out = tmp_path / "good.json"
    assert main([*CREATE, "--out", str(out)]) == 0
    capsys.readouterr()
    fake.calls.clear()
    data: dict[str, Any] = json.loads(out.read_text())
    # plan --out writes a digest over the whole plan as written: sha256 over the canonical JSON
    # of every field but the consequences (recomputed, never read) and the digest itself (a
    # plain hash: anyone can recompute it)
    keys = ("title", "kind", "target", "warnings", "notes", "params", "steps", "disks")
    covered = {k: data[k] for k in keys}
    canon = json.dumps(covered, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    assert data["digest"] == "sha256:" + hashlib.sha256(canon.encode()).hexdigest()
    assert [d["name"] for d in data["disks"]] == ["nvme0n1", "nvme1n1"]
    return data


def _resign(d: dict[str, Any]) -> dict[str, Any]:
    """What an attacker who knows the format does: recompute the digest over the edited plan."""
    with contextlib.suppress(PlanFileError):  # the loader refuses it anyway (control chars)
        d["digest"] = Plan.from_json(d).digest
    return d


# ---- malformed files: one line, exit 2 ---------------------------------------------------------

NESTED = "[" * 100_000 + "]" * 100_000
STEP = {"argv": ["mdadm", "/dev/md127", "--fail", "/dev/nvme1n1"], "why": "w"}
MALFORMED: dict[str, bytes] = {
    "not json": b"{not json",
    "empty": b"",
    "only whitespace": b"   \n\t\n",
    "binary": b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00",
    "not utf-8": b'{"title": "\xff\xfe"}',
    "huge": b'{"steps": []}' + b" " * (2 * 1024 * 1024),
    "deeply nested": NESTED.encode(),
    "deeply nested params": json.dumps({"steps": [STEP], "params": {"a": [[[[["x"]]]]]}}).encode(),
    "top-level list": json.dumps([STEP]).encode(),
    "top-level string": b'"mdadm --create"',
    "no steps": json.dumps({"title": "t"}).encode(),
    "steps not a list": json.dumps({"steps": "mdadm --fail"}).encode(),
    "step not an object": json.dumps({"steps": ["mdadm"]}).encode(),
    "argv a string": json.dumps({"steps": [{"argv": "mdadm --fail /dev/sda"}]}).encode(),
    "argv with a number": json.dumps({"steps": [{"argv": ["mdadm", 1]}]}).encode(),
    "argv empty": json.dumps({"steps": [{"argv": []}]}).encode(),
    "argv missing": json.dumps({"steps": [{"why": "w"}]}).encode(),
    "destructive a string": json.dumps({"steps": [{**STEP, "destructive": "no"}]}).encode(),
    "why a number": json.dumps({"steps": [{**STEP, "why": 3}]}).encode(),
    "stdin a list": json.dumps({"steps": [{**STEP, "stdin": ["x"]}]}).encode(),
    "unknown step key": json.dumps({"steps": [{**STEP, "shell": "rm -rf /"}]}).encode(),
    "unknown plan key": json.dumps({"steps": [STEP], "run_as": "root"}).encode(),
    "warnings a string": json.dumps({"steps": [STEP], "warnings": "w"}).encode(),
    "params a list": json.dumps({"steps": [STEP], "params": [1]}).encode(),
    "NaN": b'{"steps": [], "params": {"x": NaN}}',
    "duplicate key": b'{"steps": [], "steps": []}',
    "NUL in a string": json.dumps({"steps": [{**STEP, "why": "a\u0000b"}]}).encode(),
    "lone surrogate": b'{"steps": [{"argv": ["mdadm"], "why": "\\ud800"}]}',
    "too many steps": json.dumps({"steps": [STEP] * (MAX_STEPS + 1)}).encode(),
    "argv too long": json.dumps({"steps": [{"argv": ["mdadm"] * 500}]}).encode(),
    "huge integer": b'{"steps": [], "params": {"n": ' + b"9" * 5000 + b"}}",
    "no steps at all": json.dumps({"steps": []}).encode(),
}


@pytest.mark.parametrize("case", sorted(MALFORMED))
def test_malformed_plan_is_one_line_and_exit_2(
    case: str, fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "plan.json"
    path.write_bytes(MALFORMED[case])
    assert main(["apply", str(path), "--yes", "--confirm", "127"]) == 2
    res = capsys.readouterr()
    lines = res.err.splitlines()
    assert len(lines) == 1, res.err
    assert lines[0].startswith("raidman apply: ")
    assert "Traceback" not in res.err and res.out == ""
    assert len(lines[0]) < 300 and lines[0].isprintable()
    assert fake.calls == [] and read_entries() == []


def test_missing_file_and_directory_are_one_line(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for path in (tmp_path / "nope.json", tmp_path):
        assert main(["apply", str(path)]) == 2
        err = capsys.readouterr().err.splitlines()
        assert len(err) == 1 and err[0].startswith(f"raidman apply: cannot read {path}: ")
    assert fake.calls == []


# ---- tampered plans, in process (the messages) -------------------------------------------------

TAMPER: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "extra touch step": lambda d: _resign(
        {**d, "steps": [*d["steps"], {"argv": ["touch", "/tmp/pwned"], "why": "w"}]}
    ),
    "extra sh step": lambda d: _resign(
        {**d, "steps": [{"argv": ["sh", "-c", "rm -rf /"], "why": "w"}, *d["steps"]]}
    ),
    "argv names other devices than params": lambda d: _resign(
        {
            **d,
            "steps": [
                {
                    **d["steps"][0],
                    "argv": [a.replace("nvme1n1", "sda") for a in d["steps"][0]["argv"]],
                },
                *d["steps"][1:],
            ],
        }
    ),
    "params name other devices than argv": lambda d: _resign(
        {**d, "params": {**d["params"], "devices": ["nvme2n1", "nvme3n1"]}}
    ),
    "empty kind": lambda d: _resign({**d, "kind": ""}),
    "unknown kind": lambda d: _resign({**d, "kind": "custom"}),
    "control characters in a why": lambda d: _resign(
        {**d, "steps": [{**d["steps"][0], "why": "ok\x1b[2J\x1b[H\rall fine"}, *d["steps"][1:]]}
    ),
    "steps edited, digest kept": lambda d: {
        **d,
        "steps": [{**d["steps"][0], "argv": [*d["steps"][0]["argv"][:-1], "/dev/sda"]}],
    },
    "no digest": lambda d: {k: v for k, v in d.items() if k != "digest"},
    "tee to another file": lambda d: _resign(
        {**d, "steps": [{"argv": ["tee", "/etc/shadow"], "why": "w", "stdin": "root::0:0\n"}]}
    ),
    "sysctl outside dev.raid": lambda d: _resign(
        {**d, "steps": [{"argv": ["sysctl", "-w", "kernel.core_pattern=|/tmp/x"], "why": "w"}]}
    ),
    "mdadm with an option raidman never uses": lambda d: _resign(
        {
            **d,
            "steps": [
                {
                    **d["steps"][0],
                    "argv": [*d["steps"][0]["argv"][:3], "--force", *d["steps"][0]["argv"][3:]],
                }
            ],
        }
    ),
    "stripe cache value out of range": lambda d: _resign(
        {
            **d,
            "steps": [
                {
                    "argv": ["tee", "/sys/block/md127/md/stripe_cache_size"],
                    "why": "w",
                    "stdin": "999999\n",
                }
            ],
        }
    ),
    "program by absolute path": lambda d: _resign(
        {**d, "steps": [{**d["steps"][0], "argv": ["/tmp/mdadm", *d["steps"][0]["argv"][1:]]}]}
    ),
}


@pytest.mark.parametrize("case", sorted(TAMPER))
def test_tampered_plan_is_refused_before_anything_runs(
    case: str, fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = TAMPER[case](_good_plan(fake, tmp_path, capsys))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    rc = main(["apply", str(path), "--yes", "--confirm", "127"])
    res = capsys.readouterr()
    assert rc in (2, 3), res
    assert "Traceback" not in res.err and "\x1b" not in res.err + res.out
    assert fake.calls == []  # not even the pre-flight probe: refused before the machine is read
    assert read_entries() == []


def test_the_untampered_plan_runs(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The control for the tamper tests: the same file, unedited, is accepted and runs."""
    good = _good_plan(fake, tmp_path, capsys)
    path = tmp_path / "good.json"
    assert main(["apply", str(path), "--confirm", "127"]) == 0
    assert fake.ran == [tuple(s["argv"]) for s in good["steps"]]
    out = capsys.readouterr().out
    assert f"digest: {good['digest']}" in out


def test_member_plan_whose_array_is_not_in_the_argv_is_refused(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fake.machine = array_machine()
    out = tmp_path / "fail.json"
    assert (
        main(
            ["plan", "member", "fail", "--array", "md127", "--device", "nvme1n1", "--out", str(out)]
        )
        == 0
    )
    d = json.loads(out.read_text())
    d["params"]["array"] = "md126"  # the preview and pre-flight would talk about another array
    out.write_text(json.dumps(_resign(d)))
    capsys.readouterr()
    fake.calls.clear()
    assert main(["apply", str(out), "--yes"]) == 3
    assert "the params name the array md126 but the commands do not" in capsys.readouterr().err
    assert fake.calls == []


def test_preflight_devices_come_from_the_argv(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A plan claiming no devices in params (kind filesystem, no 'array') still gets the
    device its commands overwrite checked: here md127, an LVM PV on the current machine."""
    fake.machine = array_machine()
    steps = [Step.decode(("mkfs.ext4", "-b", "4096", "/dev/md127"), "fs", destructive=True)]
    plan = Plan("fs", tuple(steps), target="md127", kind="filesystem", params={"array": "md127"})
    plan = record_disks(plan, fake.machine)
    path = tmp_path / "fs.json"
    path.write_text(json.dumps(plan.to_json()))
    assert main(["apply", str(path), "--confirm", "md127"]) == 3
    res = capsys.readouterr()
    assert "REFUSED md127: is an LVM physical volume" in res.out
    assert fake.ran == []


def test_unwritable_audit_log_refuses_apply(
    fake: FakeBackend,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    _good_plan(fake, tmp_path, capsys)
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the state dir should be")
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(blocker / "state"))
    assert main(["apply", str(tmp_path / "good.json"), "--confirm", "127"]) == 3
    err = capsys.readouterr().err
    assert "the audit log cannot be written" in err and "nothing was run" in err
    assert fake.ran == []


def test_dry_run_is_one_clear_line_and_exit_0(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _good_plan(fake, tmp_path, capsys)
    assert main(["apply", str(tmp_path / "good.json"), "--dry-run"]) == 0
    res = capsys.readouterr()
    assert res.out.count("dry run") == 1 and "dry run: dry run" not in res.out
    assert fake.ran == [] and read_entries() == []


# ---- escaping -----------------------------------------------------------------------------------


def test_control_characters_are_shown_escaped_in_the_cli_text() -> None:
    plan = Plan(
        "title\x1b]0;owned\x07",
        (
            Step.decode(
                ("tee", "/sys/block/md127/md/sync_action"), "one\x1b[2K\rtwo", stdin="check\n"
            ),
            Step.decode(("mdadm", "/dev/md127", "--fail", "/dev/sda"), "why\u202eevil", True),
        ),
        target="md127\x1b[8m",
        warnings=("w\nfake line",),
        notes=("n\x1b[31m",),
    )
    text = format_plan(plan)
    assert "\x1b" not in text and "\r" not in text and "\u202e" not in text and "\x07" not in text
    assert "one\\x1b[2K\\x0dtwo" in text and "why\\u202eevil" in text
    assert "title\\x1b]0;owned\\x07" in text
    assert "warning: w\\x0afake line" in text
    assert f"digest: {plan.digest}" in text
    script = plan.shell_script()
    assert "\x1b" not in script and "\nfake line" not in script


def test_allowlist_accepts_every_shape_raidman_emits() -> None:
    """Every golden plan's steps (the wizards' output) pass the allowlist."""
    from tests.plans.test_wizards_golden import CASES

    for name, build in CASES.items():
        for s in build().steps:
            assert argv_problem(s.argv, s.stdin, s.stdin_from) is None, (name, s.argv)


# ---- end to end: stub programs on PATH, the linux backend, a subprocess ------------------------

STUBS = (
    "mdadm",
    "sh",
    "bash",
    "touch",
    "rm",
    "tee",
    "sysctl",
    "mkfs.ext4",
    "pvcreate",
    "vgcreate",
    "lvcreate",
    "wipefs",
    "dd",
)


@pytest.fixture
def stubs(tmp_path: Path) -> tuple[Path, Path]:
    """A directory of programs that only append their name and argv to a log."""
    d = tmp_path / "bin"
    d.mkdir()
    log = tmp_path / "ran.log"
    for name in STUBS:
        p = d / name
        p.write_text(f'#!/bin/sh\nprintf "%s\\n" "${{0##*/}} $*" >> {log}\nexit 0\n')
        p.chmod(0o755)
    return d, log


def _apply_subprocess(
    plan_path: Path, stub_dir: Path, state: Path, *extra: str
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": str(stub_dir),
        "RAIDMAN_STATE_DIR": str(state),
        "HOME": str(state),
        "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
        "LANG": "C.UTF-8",
    }
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from app.cli import main; sys.exit(main())",
            "apply",
            str(plan_path),
            "--yes",
            "--confirm",
            "127",
            *extra,
        ],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize(
    "case",
    [
        "extra touch step",
        "extra sh step",
        "argv names other devices than params",
        "empty kind",
        "control characters in a why",
        "steps edited, digest kept",
        "tee to another file",
    ],
)
def test_tampered_plan_runs_nothing_end_to_end(
    case: str,
    stubs: tuple[Path, Path],
    fake: FakeBackend,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    stub_dir, ran = stubs
    bad = TAMPER[case](_good_plan(fake, tmp_path, capsys))
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad))
    res = _apply_subprocess(path, stub_dir, tmp_path / "e2e-state")
    assert res.returncode != 0, res
    assert "Traceback" not in res.stderr and "\x1b" not in res.stdout + res.stderr
    assert "refused" in res.stderr
    assert not ran.exists() or ran.read_text() == ""  # NOTHING ran, not even a probe
    assert read_entries(tmp_path / "e2e-state" / "audit.log") == []


def test_malformed_json_runs_nothing_end_to_end(stubs: tuple[Path, Path], tmp_path: Path) -> None:
    stub_dir, ran = stubs
    path = tmp_path / "bad.json"
    path.write_text('{"steps": [{"argv": ["touch", "/tmp/x"]}')
    res = _apply_subprocess(path, stub_dir, tmp_path / "e2e-state")
    assert res.returncode == 2 and len(res.stderr.splitlines()) == 1, res
    assert not ran.exists()


@pytest.mark.skipif(os.geteuid() != 0, reason="the linux backend runs steps only as root")
def test_stubs_do_record_what_a_valid_plan_runs(stubs: tuple[Path, Path], tmp_path: Path) -> None:
    """The control for the end-to-end tests: the same harness records a step that does run."""
    stub_dir, ran = stubs
    plan = Plan(
        "resync speed limits (all arrays)",
        (Step.decode(("sysctl", "-w", "dev.raid.speed_limit_max=123456"), "at most 123456 KiB/s"),),
        kind="sync-limits",
        params={"array": None, "min": None, "max": "123456"},
    )
    path = tmp_path / "limits.json"
    path.write_text(json.dumps(plan.to_json()))
    res = _apply_subprocess(path, stub_dir, tmp_path / "e2e-state")
    assert res.returncode == 0, res
    assert "sysctl -w dev.raid.speed_limit_max=123456" in ran.read_text().splitlines()
    entries = read_entries(tmp_path / "e2e-state" / "audit.log")
    assert [e.event for e in entries] == ["started", "executed"]


# ---- issue 23 item 3: confirmation, disk identity and old files -------------------------------


@pytest.mark.parametrize("kind", ["boost", "create-array"])
def test_a_plan_file_cannot_switch_off_the_typed_confirmation(
    kind: str, fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """An mdadm --create marked non-destructive, with no target (and kind boost), re-signed:
    on the old loader it ran with --yes alone. Whether it destroys data comes from its argv."""
    d = _good_plan(fake, tmp_path, capsys)
    d["steps"] = [{**s, "destructive": False} for s in d["steps"]]
    d = _resign({**d, "kind": kind, "target": ""})
    path = tmp_path / "sneaky.json"
    path.write_text(json.dumps(d))
    plan = Plan.from_json(d)
    assert plan.destructive and plan.target == "127"  # the file's false and "" are overridden
    assert main(["apply", str(path), "--yes"]) == 3
    err = capsys.readouterr().err
    if kind == "boost":
        assert "a boost plan never destroys data, but this step does (md-create of" in err
    else:
        assert "destructive plan: pass --confirm 127" in err
    assert [a for a in fake.ran if a[0] == "mdadm"] == []


def test_the_digest_covers_kind_target_and_disks(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """(A destructive plan's target is derived from its argv: editing it changes nothing.)"""
    good = _good_plan(fake, tmp_path, capsys)
    for edit in (
        {"kind": "member-add"},
        {"disks": good["disks"][:1]},
        {"disks": [{**x, "serial": "other"} for x in good["disks"]]},
    ):
        path = tmp_path / "edited.json"
        path.write_text(json.dumps({**good, **edit}))
        assert main(["apply", str(path), "--confirm", "127"]) == 3
        assert "does not match its digest" in capsys.readouterr().err
    assert fake.calls == []


def test_a_disk_swapped_since_the_plan_was_made_is_refused(
    fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    m = fake.machine
    fake.machine = replace(m, disks=tuple(replace(d, serial=f"S-{d.name}") for d in m.disks))
    _good_plan(fake, tmp_path, capsys)
    fake.machine = replace(
        fake.machine,
        disks=tuple(
            replace(d, serial="S-other") if d.name == "nvme1n1" else d for d in fake.machine.disks
        ),
    )
    assert main(["apply", str(tmp_path / "good.json"), "--confirm", "127"]) == 3
    err = capsys.readouterr().err
    assert "/dev/nvme1n1 is now nvme1n1 (serial S-other)" in err
    assert "made for nvme1n1 (serial S-nvme1n1)" in err
    assert [a for a in fake.ran if a[0] == "mdadm"] == []


def _old_format(d: dict[str, Any]) -> dict[str, Any]:
    """The same plan as an older raidman wrote it: no disks, the digest of the steps only."""
    import hashlib

    d = {k: v for k, v in d.items() if k != "disks"}
    steps = [s.to_json() for s in Plan.from_json(d).steps]
    canon = json.dumps(steps, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    d["digest"] = "sha256:" + hashlib.sha256(canon.encode("utf-8")).hexdigest()
    return d


@pytest.mark.parametrize("destroys", [True, False])
def test_an_older_plan_file_is_refused_with_re_plan(
    destroys: bool, fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 37: the older digest left the title, notes and params out (a file could say one
    thing and do another): such a file is refused, destructive or not, with how to re-plan."""
    if destroys:
        d = _good_plan(fake, tmp_path, capsys)
    else:
        plan = Plan(
            "limits",
            (Step.decode(("sysctl", "-w", "dev.raid.speed_limit_max=500000"), "max"),),
            kind="sync-limits",
            params={"array": None, "min": None, "max": "500000"},
        )
        d = plan.to_json()
    path = tmp_path / "old.json"
    path.write_text(json.dumps(_old_format(d)))
    fake.calls.clear()
    assert main(["apply", str(path), "--yes", "--confirm", "127"]) == 3
    err = capsys.readouterr().err
    assert "made by an older raidman" in err and "re-plan it" in err
    assert fake.calls == []


@pytest.mark.parametrize(
    "edit",
    [
        {"title": "check md127 (harmless)"},
        {"notes": ["nothing is destroyed"]},
        {"warnings": []},
        {"params": {"level": "1", "devices": ["nvme0n1", "nvme1n1"], "note": "x"}},
    ],
    ids=["title", "notes", "warnings", "params"],
)
def test_the_digest_covers_the_words_a_reader_trusts(
    edit: dict[str, Any], fake: FakeBackend, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 37: the title, notes, warnings and params were outside the digest, so a file could
    keep its steps and its digest and tell the reader something else."""
    good = _good_plan(fake, tmp_path, capsys)
    path = tmp_path / "edited.json"
    path.write_text(json.dumps({**good, **edit}))
    fake.calls.clear()
    assert main(["apply", str(path), "--confirm", "127"]) == 3
    assert "does not match its digest" in capsys.readouterr().err
    assert fake.calls == []


@pytest.mark.parametrize("ch", ["\u3164", "\u0336", "\u00a0", "\u200b", "\u202e"])
def test_invisible_characters_in_plan_text_are_refused(ch: str) -> None:
    """Issue 37: a Hangul filler, a combining overlay, a no-break space, a zero-width space or a
    bidi override in a title or a why shows as nothing (or as something else)."""
    from app.plans.plan import PlanFileError

    base = {"title": "t", "kind": "sync-limits", "steps": []}
    with pytest.raises(PlanFileError, match="character"):
        Plan.from_json({**base, "title": f"check{ch}md127"})
    step = {"argv": ["sysctl", "-w", "dev.raid.speed_limit_max=5000"], "why": f"a{ch}b"}
    with pytest.raises(PlanFileError, match="character"):
        Plan.from_json({**base, "steps": [step]})
