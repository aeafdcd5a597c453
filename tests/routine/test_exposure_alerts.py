"""Events beyond mdadm's and the channels beyond a program and mail (issue 41 item 6): a webhook
and an ntfy topic received by a real HTTP server on 127.0.0.1; DegradedFor, RebuildSlow,
MemberLatency, Heartbeat and CheckFinished's times; quiet hours and the digest; and no demo
ever reaching a channel it did not get on the command line."""

from __future__ import annotations

import http.server
import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path

import pytest

from app.cli import main
from app.model import Disk, Machine, MdArray, MdMember
from app.model.devices import SyncStatus
from app.model.live import DiskIO, LiveSample, MdLive
from app.routine.alerts import Alerter, Targets
from app.routine.config import ConfigError, RoutineConfig, parse_config
from app.routine.digest import Holder, in_span
from app.routine.events import AlertEvent, sync_alerts
from app.routine.exposure import ExposureWatch
from app.sync.tracker import ArrayEvent, FinishedSync
from backends.simulated import SimClock, SimulatedBackend
from tests.routine.rig import Rig, Sent


class Receiver:
    """A real HTTP server on 127.0.0.1 that keeps every POST (path, headers, body)."""

    def __init__(self, status: int = 200) -> None:
        got: list[tuple[str, dict[str, str], bytes]] = []
        self.got = got

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                n = int(self.headers.get("Content-Length") or 0)
                got.append((self.path, dict(self.headers), self.rfile.read(n)))
                self.send_response(status)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: object) -> None:
                return

        self.srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.srv.serve_forever, daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.srv.server_port}{path}"

    def close(self) -> None:
        self.srv.shutdown()
        self.srv.server_close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[tuple[str, ...]]:
    """The notifier (program, sendmail) replaced by a recorder: nothing is run, nothing mailed
    — never a spy through the real program (a real mail went out that way once)."""
    calls: list[tuple[str, ...]] = []

    def spy(
        argv: Sequence[str], *, env: Mapping[str, str], stdin: str | None, timeout: float
    ) -> tuple[int | None, str]:
        calls.append(tuple(argv))
        return 0, ""

    monkeypatch.setattr("app.commands.monitor.run_notifier", spy)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("RAIDMAN_STATE_DIR", str(tmp_path / "state"))
    return calls


def test_a_demos_test_alert_reaches_the_command_lines_webhook_and_no_sendmail(
    tmp_path: Path, receiver: Receiver, sent: list[tuple[str, ...]]
) -> None:
    """issue 41's bar: ``--test-alert --demo raid6-wd`` mails no one (raid6-wd's simulated
    mdadm.conf says MAILADDR root; raidman.toml names a mail address and a webhook too); the
    webhook given on the command line receives JSON naming TestMessage and md0."""
    other = Receiver()
    conf = tmp_path / "cfg" / "raidman" / "raidman.toml"
    conf.parent.mkdir(parents=True)
    conf.write_text(f'[alerts]\nmailaddr = "ops"\nwebhook = "{other.url("/conf")}"\n')
    try:
        rc = main(
            ["monitor", "--test-alert", "--demo", "raid6-wd", "--webhook", receiver.url("/hook")]
        )
    finally:
        other.close()
    assert rc == 0
    assert sent == []  # no sendmail, no program
    assert other.got == []  # the configuration's webhook: not a demo's
    ((path, headers, body),) = receiver.got
    assert path == "/hook" and headers["Content-Type"].startswith("application/json")
    msg = json.loads(body)
    assert (msg["event"], msg["array"], msg["md_device"]) == ("TestMessage", "md0", "/dev/md0")
    assert msg["source"] == "raidman" and msg["critical"] is False


def test_ntfy_gets_a_title_a_priority_and_the_detail(
    receiver: Receiver, sent: list[tuple[str, ...]]
) -> None:
    assert (
        main(["monitor", "--test-alert", "--demo", "raid6-wd", "--ntfy", receiver.url("/raid")])
        == 0
    )
    ((path, headers, body),) = receiver.got
    assert path == "/raid"
    assert headers["Title"].startswith("TestMessage on /dev/md0 (")
    assert headers["Priority"] == "default" and body == b"test message for md0"


def test_a_webhook_that_fails_is_said_and_the_test_alert_fails(
    sent: list[tuple[str, ...]], capsys: pytest.CaptureFixture[str]
) -> None:
    bad = Receiver(status=500)
    try:
        rc = main(["monitor", "--test-alert", "--demo", "raid6-wd", "--webhook", bad.url("/x")])
    finally:
        bad.close()
    assert rc == 1
    assert "TestMessage not delivered by webhook: http://127.0.0.1:" in capsys.readouterr().out
    rc = main(["monitor", "--test-alert", "--demo", "raid6-wd", "--webhook", "file:///etc/passwd"])
    assert rc == 2
    assert "--webhook: the URL is not an http:// or https:// URL" in capsys.readouterr().err


def test_urls_and_spans_out_of_shape_are_refused_in_one_line() -> None:
    for text, msg in [
        ('[alerts]\nwebhook = "ftp://x/y"', "alerts.webhook is not an http:// or https:// URL"),
        ('[alerts]\nntfy = "http://[::1"', "alerts.ntfy is not an http:// or https:// URL"),
        ('[alerts]\nquiet = "22:00"', "alerts.quiet is not a span of the day"),
        ('[alerts]\nquiet = "25:00-07:00"', "alerts.quiet is not a time of day"),
        ('[alerts]\ndigest = "soon"', "alerts.digest: 'soon' is not a duration"),
        ("[alerts]\nrebuild_slow = 120", "alerts.rebuild_slow is not between 1 and 99"),
    ]:
        with pytest.raises(ConfigError, match=msg.replace("(", r"\(").replace("[", r"\[")):
            parse_config(text, "raidman.toml")
    cfg = parse_config(
        '[alerts]\nwebhook = "https://h.example/x"\nquiet = "22:30-07:00"\ndigest = "24h"\n'
        'heartbeat = "off"\ndegraded_for = "2h"\nrebuild_slow = 40\nmember_latency = 4\n'
    )
    assert (cfg.webhook, cfg.quiet, cfg.digest_s, cfg.heartbeat_s) == (
        "https://h.example/x",
        ((22, 30), (7, 0)),
        86400.0,
        None,
    )
    assert (cfg.degraded_for_s, cfg.rebuild_slow, cfg.latency_factor) == (7200.0, 0.4, 4.0)


def test_degraded_for_counts_from_mds_failure_line_and_reminds(tmp_path: Path) -> None:
    """raid6-wd's sdb failed 2 h before the scenario opens (the kernel log says so): with
    degraded_for 1h, the first look says 2 h at once, and 1 h later says 3 h."""
    rig = Rig(tmp_path, "raid6-wd", RoutineConfig(check_every_s=0, degraded_for_s=3600.0))
    rig.tick()
    (env,) = rig.delivered("DegradedFor")
    assert env["RAIDMAN_ARRAY"] == "/dev/md0"
    d = env["RAIDMAN_DETAIL"]
    assert d.startswith("md0 has been degraded for 2h 00m (md: 'md/raid:md0: Disk failure on sdb1")
    assert "rebuilding onto sdf1" in d
    rig.run(3540, step=60)
    assert len(rig.said("DegradedFor")) == 1
    rig.run(60, step=60)
    assert "degraded for 3h 00m" in rig.delivered("DegradedFor", 2)[-1]["RAIDMAN_DETAIL"]
    rig.close()


def test_rebuild_slow_when_raid6_wd_runs_far_below_its_forecast(tmp_path: Path) -> None:
    """md0's recovery runs at ~25 MB/s (its stripe cache of 256 holds it back) against a
    forecast of md's 200,000 KiB/s limit: said once, after five minutes watched."""
    rig = Rig(tmp_path, "raid6-wd")
    rig.tick()
    rig.run(240, step=30)
    assert rig.said("RebuildSlow") == []
    rig.run(120, step=30)
    (env,) = rig.delivered("RebuildSlow")
    assert env["RAIDMAN_ACTION"] == "recover" and int(env["RAIDMAN_BELOW_PERCENT"]) > 80
    # md's 200,000 KiB/s limit, as md's throttle holds it (app.model.sync_model.HELD_RATIO)
    assert (
        "the recover of md0 ran at 24.4 MiB/s over the last 5m 00s, 88% below its forecast of "
        "202.2 MiB/s (md's limit)" in env["RAIDMAN_DETAIL"]
    )
    assert "its stripe cache is 256 pages" in env["RAIDMAN_DETAIL"]
    rig.run(600, step=60)
    assert len(rig.said("RebuildSlow")) == 1
    rig.close()


def test_heartbeat_every_interval(tmp_path: Path) -> None:
    rig = Rig(tmp_path, "raid6-wd", RoutineConfig(check_every_s=0, heartbeat_s=600.0))
    rig.tick()
    rig.run(540, step=60)
    assert rig.said("Heartbeat") == []
    rig.run(60, step=60)
    (env,) = rig.delivered("Heartbeat")
    assert (
        "raidman monitor on h1 runs: 1 array(s) watched (md0); degraded: md0"
        in env["RAIDMAN_DETAIL"]
    )
    rig.close()


def _io(name: str, count: int, ms: int) -> DiskIO:
    return DiskIO(name, 0, 0, read_count=count, write_count=0, read_time_ms=ms, write_time_ms=0)


def test_member_latency_names_the_outlier_among_its_peers() -> None:
    disks = tuple(Disk(f"sd{c}", 10**12) for c in "abcd")
    members = tuple(MdMember(f"sd{c}", i, ("in_sync",)) for i, c in enumerate("abcd"))
    a = MdArray("md0", "raid5", raid_disks=4, members=members)
    m = Machine("h", "6.1", disks, arrays=(a,), edges=tuple((d.name, "md0") for d in disks))
    sync = SyncStatus("check", 0, 100)
    live = lambda t, ios: LiveSample(t, (MdLive("md0", "active", 0, sync),), ios)  # noqa: E731
    w = ExposureWatch(
        SimulatedBackend.from_scenario("blank", clock=SimClock.manual()),
        degraded_for_s=3600,
        rebuild_slow=0.3,
        latency_factor=3.0,
        heartbeat_s=None,
        start=0.0,
    )
    base = tuple(_io(d.name, 1000, 8000) for d in disks)
    assert w.latency(m, live(100.0, base), 100.0) == []
    # 30 s later: sda..sdc 8 ms per request, sdd 95 ms
    later = tuple(_io(d.name, 2000, 8000 + (95000 if d.name == "sdd" else 8000)) for d in disks)
    (e,) = w.latency(m, live(130.0, later), 130.0)
    assert (e.event, e.array, e.component) == ("MemberLatency", "md0", "sdd")
    assert "sdd (sdd) answers in 95 ms per request" in e.detail and "12 × theirs" in e.detail
    again = tuple(_io(d.name, 3000, 16000 + (190000 if d.name == "sdd" else 8000)) for d in disks)
    assert w.latency(m, live(160.0, again), 160.0) == []  # once per member per sync


def test_check_finished_says_its_time_speed_and_earlier_checks() -> None:
    fin = FinishedSync("md0", "check", 1000.0, 1000.0 + 5 * 3600, 100, 100, 50_000.0, 2, True, True)
    ev = ArrayEvent(fin.ended_at, "sync-ended", "md0", "", action="check", sync=fin)
    (done, mism) = sync_alerts([ev], lambda array, started: [60_000.0, 62_000.0, 58_000.0])
    assert done.event == "CheckFinished" and mism.event == "CheckMismatch"
    assert done.extra["duration_s"] == "18000" and done.extra["speed_kib_s"] == "50000"
    assert done.extra["earlier_median_kib_s"] == "60000"
    assert (
        "mismatch_cnt 2; took 5h 00m at 48.8 MiB/s (its 3 earlier checks: 58.6 MiB/s median, this one 17% slower)"
        in done.detail
    )


def test_quiet_hours_span_midnight() -> None:
    quiet = ((22, 0), (7, 0))
    assert in_span(quiet, 23 * 60) and in_span(quiet, 6 * 60 + 59) and not in_span(quiet, 7 * 60)
    assert in_span(((1, 0), (5, 0)), 60) and not in_span(((1, 0), (5, 0)), 5 * 60)


def _at(hour: int) -> float:
    return time.mktime((2026, 3, 2, hour, 0, 0, 0, 0, -1))


def test_quiet_hours_hold_what_is_not_critical_and_send_one_digest() -> None:
    sent = Sent()
    now = [_at(23)]
    alerter = Alerter(
        SimulatedBackend.from_scenario("blank", clock=SimClock.manual()),
        Targets(program="/usr/local/bin/md-alert", source="test"),
        sent,
        log=lambda s: None,
        clock=lambda: now[0],
        holder=Holder(((22, 0), (7, 0)), None, now=now[0]),
    )
    try:
        assert (
            alerter.emit(AlertEvent("CheckFinished", "md0", detail="check of md0 finished")) == []
        )
        assert alerter.emit(AlertEvent("WearHigh", "md0", "sdb1", detail="wrote 2.1 ×")) == []
        jobs = alerter.emit(AlertEvent("Fail", "md0", "sdb1", detail="sdb1 of md0 failed"))
        assert [j.event.event for j in jobs] == ["Fail"]  # critical: at once, at 23:00
        now[0] = _at(6)
        alerter.tick()
        sent.wait(1)
        assert sent.events() == ["Fail"]
        now[0] = _at(7)
        alerter.tick()
        sent.wait(2)
        assert sent.events() == ["Fail", "Digest"]
        env = sent.calls[-1][1]
        assert env["RAIDMAN_DETAIL"].startswith(
            "2 events held since 23:00:00:\n23:00:00 CheckFinished /dev/md0: check of md0 finished"
        )
        assert env["RAIDMAN_COUNT"] == "2"
    finally:
        alerter.close()


def test_a_digest_interval_collects_and_sends_once_per_interval() -> None:
    h = Holder(None, 3600.0, now=0.0)
    assert not h.admit(AlertEvent("CheckStarted", "md0"), 10.0)
    assert h.admit(AlertEvent("DegradedArray", "md0"), 20.0)
    assert h.due(1800.0) is None
    d = h.due(3600.0)
    assert d is not None and d.event == "Digest" and [x.event for x in d.items] == ["CheckStarted"]
    assert h.due(7300.0) is None and h.waiting == 0


def test_a_raid6_wd_demo_sends_nothing_to_the_configurations_webhook(tmp_path: Path) -> None:
    """The configuration's webhook is trusted config: used on the real machine, never by a
    demo (app.commands.monitor.routine_config drops it with the file's program and mail)."""
    import argparse

    from app.commands.monitor import routine_config

    conf = tmp_path / "raidman.toml"
    conf.write_text('[alerts]\nwebhook = "https://h.example/x"\nntfy = "https://n.example/t"\n')
    conf.chmod(0o600)
    args = argparse.Namespace(
        config=str(conf), demo="raid6-wd", replay=None, webhook=None, ntfy=None
    )
    cfg = routine_config(args)
    assert (cfg.webhook, cfg.ntfy, cfg.simulated) == (None, None, True)
    real = routine_config(
        argparse.Namespace(config=str(conf), demo=None, replay=None, webhook=None, ntfy=None)
    )
    assert (real.webhook, real.ntfy) == ("https://h.example/x", "https://n.example/t")
