"""The Linux backend over a real ssh (a local OpenSSH server, tests/hosts/sshd.py): one round trip
per probe, hostile names and values reach the other side unchanged and never as shell code, and an
unreachable host is a note after the timeout."""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest

from backends.linux import LinuxBackend
from backends.linux.source import HostSource
from backends.linux.ssh import HostNameError, SshSource, SshTarget, check_host_name
from backends.linux.ssh_batch import BatchSpec, FrameError, parse_batch
from tests.hosts.sshd import LocalSshd

HOSTILE = [
    "a b",
    "$(touch PWNED)",
    "`touch PWNED`",
    'it\'s "quoted"',
    "semi;colon&amp|pipe",
    "new\nline",
    "-rf",
    "star*",
    "tab\there",
    "ünï",
]


def _source(server: LocalSshd, host: str = "fleet1") -> SshSource:
    return SshSource(
        SshTarget(
            host,
            ssh_config=str(server.ssh_config),
            connect_timeout=3,
            control_dir=server.control_dir,
        )
    )


def test_probe_is_one_round_trip_and_equals_the_local_probe(ssh_env: LocalSshd) -> None:
    src = _source(ssh_env)
    remote = LinuxBackend(src).probe()
    assert src.round_trips == 1, src.unreachable
    local = LinuxBackend(HostSource()).probe()
    assert remote.disks == local.disks
    assert remote.arrays == local.arrays
    assert remote.filesystems == local.filesystems
    assert (remote.host, remote.kernel) == (local.host, local.kernel)
    backend = LinuxBackend(src)
    sample = backend.sample()  # a poll (the TUI's 1 Hz): one round trip as well
    assert src.round_trips == 2
    assert {d.name for d in sample.disk_io} == {d.name for d in LinuxBackend().sample().disk_io}


def test_hostile_names_and_values_arrive_unchanged(ssh_env: LocalSshd, tmp_path: Path) -> None:
    d = tmp_path / "hostile"
    d.mkdir()
    for i, name in enumerate(HOSTILE):
        (d / name).write_text(f"{i}:{name}\n")
    src = _source(ssh_env)
    assert src.listdir(str(d)) == tuple(sorted(HOSTILE))
    for i, name in enumerate(HOSTILE):
        assert src.read_text(str(d / name)) == f"{i}:{name}\n"
    for value in HOSTILE:
        r = src.run(["printf", "%s", value])
        assert (r.returncode, r.stdout) == (0, value)
        r = src.run(["cat"], stdin=value)
        assert (r.returncode, r.stdout) == (0, value)
    r = src.run(["sh", "-c", 'printf "%s|" "$@"', "sh", *HOSTILE], stdin="n")
    assert r.stdout == "".join(f"{v}|" for v in HOSTILE)
    assert not any(Path(p, "PWNED").exists() for p in (d, os.path.expanduser("~"), "/"))
    assert src.run(["no-such-program-raidman"]).returncode == 127
    assert src.read_text(str(d / "absent")) is None
    assert src.last_read_status == "absent"


def test_a_host_that_never_answers_is_a_note_after_the_timeout(tmp_path: Path) -> None:
    # a TCP port that accepts but never says a word: ssh waits for the banner
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(5)
        port = listener.getsockname()[1]
        cfg = tmp_path / "ssh_config"
        cfg.write_text(f"Host mute\n  HostName 127.0.0.1\n  Port {port}\n")
        src = SshSource(
            SshTarget(
                "mute",
                ssh_config=str(cfg),
                connect_timeout=2,
                batch_timeout=6,
                control_dir=str(tmp_path),
            )
        )
        t0 = time.monotonic()
        m = LinuxBackend(src).probe()
        took = time.monotonic() - t0
    assert took < 15
    assert src.unreachable
    assert src.round_trips == 1  # no retry per file once the host is known unreachable
    assert any(n.source == "ssh" and n.severity == "error" for n in m.notes)
    assert m.disks == ()


def test_cut_off_or_forged_answers_are_refused() -> None:
    sizes = b"5 /tmp/t/b/100001\n"
    whole = b"F\0/proc/mdstat\0ok\0Z\0" + sizes + b"\0hello" + b"E\0"
    assert parse_batch(whole).files["/proc/mdstat"] == ("ok", "hello")
    assert parse_batch(whole).complete
    with pytest.raises(FrameError):  # cut off in the body
        parse_batch(b"F\0/proc/mdstat\0ok\0Z\0" + sizes + b"\0hel")
    with pytest.raises(FrameError):  # more sizes than answers
        parse_batch(b"Z\0" + sizes + b"\0hello")
    with pytest.raises(FrameError):  # an answer whose body never came
        parse_batch(b"F\0/x\0ok\0E\0")
    with pytest.raises(FrameError):
        parse_batch(b"Q\0")
    assert not parse_batch(b"L\0/x\0absent\0\0").complete


@pytest.mark.parametrize(
    "name", ["-oProxyCommand=touch /tmp/x", "a b", "", "a\nb", "x;y", "storage1\n", "a:\n"]
)
def test_host_names_that_could_be_options_are_refused(name: str) -> None:
    """Issue 23 item 11: a trailing newline passed the check (``$`` matches before it)."""
    with pytest.raises(HostNameError):
        check_host_name(name)


def test_a_hosts_file_name_with_a_trailing_newline_is_refused() -> None:
    from app.hosts import HostsError, parse_hosts_file

    with pytest.raises(HostsError, match="not a host name"):
        parse_hosts_file('hosts = ["storage1\\n"]')


def test_globs_are_only_ours() -> None:
    with pytest.raises(ValueError):
        BatchSpec(file_globs=("/sys/$(reboot)/*",)).script()


def test_a_remote_command_past_its_timeout_is_124(ssh_env: LocalSshd) -> None:
    src = _source(ssh_env)
    t0 = time.monotonic()
    r = src.run(["sleep", "30"], timeout=1)
    assert r.returncode == 124
    assert time.monotonic() - t0 < 15
    assert src.run(["true"]).returncode == 0  # the host is still there


def test_a_session_that_dies_mid_answer_is_a_note_not_a_hang(ssh_env: LocalSshd) -> None:
    src = _source(ssh_env)
    LinuxBackend(src).probe()
    # the remote shell running our script (the parent of `timeout`, the parent of this sh) goes
    # away half-way, as when the host drops
    r = src.run(["sh", "-c", "kill -9 $(ps -o ppid= -p $PPID); sleep 5"], timeout=20)
    assert r.returncode == 255
    assert src.unreachable and "cut off" in src.unreachable
    notes = src.take_notes()
    assert any(n.source == "ssh" and n.severity == "error" for n in notes)
    t0 = time.monotonic()
    assert src.read_text("/proc/version") is None  # no new attempt until the next probe
    assert time.monotonic() - t0 < 1
    assert LinuxBackend(src).probe().disks  # the next probe reaches it again


def test_a_socket_directory_others_can_write_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    monkeypatch.setenv("RAIDMAN_SSH_CONTROL_DIR", str(shared))
    src = SshSource(SshTarget("fleet1"))
    assert LinuxBackend(src).probe().disks == ()
    assert src.unreachable and "not a private directory" in src.unreachable
    link = tmp_path / "link"
    link.symlink_to(tmp_path / "private")
    (tmp_path / "private").mkdir(mode=0o700)
    monkeypatch.setenv("RAIDMAN_SSH_CONTROL_DIR", str(link))
    assert "not a private directory" in (_unreachable_reason(SshSource(SshTarget("fleet1"))))


def test_a_socket_directory_below_one_others_can_change_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Private itself, but another user could rename it away and put theirs (with a socket a
    root ssh would talk to) in its place: refused. Below a sticky directory (/tmp) it is not."""
    shared = tmp_path / "shared"
    shared.mkdir()
    shared.chmod(0o777)
    (shared / "private").mkdir(mode=0o700)
    monkeypatch.setenv("RAIDMAN_SSH_CONTROL_DIR", str(shared / "private"))
    reason = _unreachable_reason(SshSource(SshTarget("fleet1")))
    assert f"{shared} can be changed by another user" in reason
    shared.chmod(0o1777)  # sticky: only the owner of an entry can rename it
    from backends.linux.ssh import control_dir

    assert control_dir() == shared / "private"


def _unreachable_reason(src: SshSource) -> str:
    LinuxBackend(src).probe()
    return src.unreachable or ""


def test_the_batch_runs_a_command_per_filesystem_and_keeps_every_body(tmp_path: Path) -> None:
    """The script itself (run by sh here, as sshd would): tune2fs/xfs_info per filesystem lsblk
    lists, each with its output — the loop must not lose body numbers to a subshell."""
    import subprocess

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    fakes = {
        "lsblk": "printf 'md0 ext4 /srv\\ndm-1 xfs /data\\nsda \\n'",
        "tune2fs": 'echo "tune2fs of $2"',
        "xfs_info": 'echo "xfs_info of $1"; echo oops >&2',
    }
    for name, body in fakes.items():
        (bin_dir / name).write_text(f"#!/bin/sh\n{body}\n")
        (bin_dir / name).chmod(0o755)
    spec = BatchSpec(files=("/proc/version",), fs_info=True, extra=["rf /proc/cmdline"])
    p = subprocess.run(
        ["sh", "-s"],
        input=spec.script().encode(),
        capture_output=True,
        env={"PATH": f"{bin_dir}:/usr/bin:/bin"},
        check=True,
    )
    b = parse_batch(p.stdout)
    assert b.complete
    assert b.commands[("tune2fs", "-l", "/dev/md0")].stdout == "tune2fs of /dev/md0\n"
    xfs = b.commands[("xfs_info", "/data")]
    assert (xfs.stdout, xfs.stderr) == ("xfs_info of /data\n", "oops\n")
    assert b.files["/proc/cmdline"] == ("ok", Path("/proc/cmdline").read_text())


# (text, why): what the shell's own read (rk) must give back byte for byte
AWKWARD_TEXTS = {
    "one": "4096\n",
    "no-newline": "no newline at the end",
    "lines": "a\n  leading and trailing  \n\n\tlast\n",
    "escapes": "back\\slash \\n %s %d -n -e $HOME `x` $(y)\n",
    "empty": "",
    "only-newlines": "\n\n",
    "utf8": "ünï ✓\n",
}
LINK_TARGETS = {"rel": "../../sda1", "spaced": "a target with spaces", "dm": "../dm-0"}


def _shells() -> list[list[str]]:
    import shutil

    found = [[p] for p in ("sh", "dash", "bash") if shutil.which(p)]
    if shutil.which("busybox"):
        found.append(["busybox", "sh"])  # its own readlink: no -z (the one-by-one fallback)
    return found


@pytest.mark.parametrize("shell", _shells(), ids=lambda s: "-".join(s))
def test_files_and_links_read_in_bulk_arrive_exactly(shell: list[str], tmp_path: Path) -> None:
    """Globbed files are read by the shell itself and all links by one ``readlink -z`` (no
    process per file): the answers must still be the exact bytes and targets, and a readlink
    without -z (busybox, or the shim below) falls back to one run per link."""
    import subprocess

    files, links = tmp_path / "f", tmp_path / "l"
    files.mkdir()
    links.mkdir()
    for name, text in AWKWARD_TEXTS.items():
        (files / name).write_text(text, encoding="utf-8")
    for name, target in LINK_TARGETS.items():
        (links / name).symlink_to(target)
    (links / "not-a-link").write_text("x")
    spec = BatchSpec(
        files=(f"{tmp_path}/absent", f"{tmp_path}/absent/below", f"{files}/one/below"),
        file_globs=(f"{files}/*",),
        link_globs=(f"{links}/*",),
    )
    shim = tmp_path / "bin"
    shim.mkdir()
    (shim / "readlink").write_text(
        '#!/bin/sh\nfor a; do [ "$a" = -z ] && exit 1; done\nexec /usr/bin/readlink "$@"\n'
    )
    (shim / "readlink").chmod(0o755)
    for path in ("/usr/sbin:/usr/bin:/sbin:/bin", f"{shim}:/usr/bin:/bin"):
        p = subprocess.run(
            [*shell, "-s"], input=spec.script().encode(), capture_output=True, env={"PATH": path}
        )
        b = parse_batch(p.stdout)
        assert b.complete, p.stderr
        assert b.files == {
            **{str(files / n): ("ok", t) for n, t in AWKWARD_TEXTS.items()},
            # not there: told without a cat (A), or by cat's own word (not a directory)
            **{p: ("absent", "") for p in spec.files},
        }
        assert f"A\0{tmp_path}/absent\0".encode() in p.stdout
        assert b.links == {str(links / n): t for n, t in LINK_TARGETS.items()}
        # every file with text came inline (K), not through a cat of its own
        inline = {str(files / n) for n, t in AWKWARD_TEXTS.items() if t}
        assert {f for f in inline if f"K\0{f}\0".encode() in p.stdout} == inline


def test_bulk_answers_out_of_shape_are_refused() -> None:
    sizes = b"7 /tmp/t/b/100001\n"
    ok = b"M\x002\0/a\0/b\0Z\0" + sizes + b"\0x\0../y\0E\0"
    assert parse_batch(ok).links == {"/a": "x", "/b": "../y"}
    with pytest.raises(FrameError):  # fewer targets than links
        parse_batch(b"M\x002\0/a\0/b\0Z\0" + b"2 /tmp/t/b/100001\n" + b"\0x\0E\0")
    assert parse_batch(b"K\0/sys/x\x004096\n\0E\0").files == {"/sys/x": ("ok", "4096\n")}
    with pytest.raises(FrameError):  # cut off inside the inline text
        parse_batch(b"K\0/sys/x\x004096")
