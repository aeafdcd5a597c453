"""A sync md holds back (issue 38): ``--demo raid10-evo``, md126 made on sdb1/sdc1/sdd1 while
md127 (sda2..sdd2) resyncs. md.c md_do_sync: "delaying resync of md126 until md127 has finished
(they share one or more physical units)"; the simulator holds it the same way. The wait is
said in the session's view, the banner, the tree and report --json, never as stuck; once md127
ends, md126's sync is recorded once, from when it ran, with its own partitions' bytes."""

from __future__ import annotations

from pathlib import Path

from app.report import machine_to_json
from app.session import Session
from app.wear.snapshots import SnapshotStore
from backends.simulated import SimClock, SimulatedBackend
from widgets.header_banner import banner_text
from widgets.tree_spec import array_label

CREATE = ["mdadm", "--create", "/dev/md126", "--run", "--level=5", "--raid-devices=3",
          "/dev/sdb1", "/dev/sdc1", "/dev/sdd1"]  # fmt: skip


def test_a_delayed_sync_waits_is_said_so_and_recorded_once(tmp_path: Path) -> None:
    clock = SimClock.manual()
    b = SimulatedBackend.from_scenario("raid10-evo", clock=clock)
    store = SnapshotStore.open(tmp_path / "state.db")
    s = Session(store=store, audit_every_s=None, smart_every_s=None)
    s.probed(b.probe(), b.now())
    s.sampled(b.sample())
    r = b.run(CREATE)
    assert r.returncode == 0, r.stderr
    clock.advance(1)
    s.probed(b.probe(), b.now())
    s.sampled(b.sample())
    for _ in range(150):  # 150 s of waiting: a position that does not move is no stall
        clock.advance(1)
        s.sampled(b.sample())
    v = s.view
    (wait,) = [x for x in v.syncs if x.array == "md126"]
    assert wait.waiting and not wait.stalled and wait.wait is not None
    text = wait.wait.text()
    assert text.startswith("waits for md127 (shares sdb, sdc, sdd): starts in about ")
    assert ", then about " in text
    md127 = next(a for a in v.machine.arrays if a.name == "md127")  # type: ignore[union-attr]
    assert md127.sync is not None and md127.sync.eta_s is not None
    assert wait.wait.starts_in_s == md127.sync.eta_s
    # the banner and the tree say it too; no "stuck", no "?"
    waits = {x.array: (x.wait.text(), x.wait.short_text()) for x in v.syncs if x.wait}
    banner = banner_text(v.machine, waits=waits, stalled={})
    assert banner is not None and f"md126 {text}" in banner.plain and "stuck" not in banner.plain
    md126 = next(a for a in v.machine.arrays if a.name == "md126")  # type: ignore[union-attr]
    assert "recover waits for md127" in array_label(md126, v.machine).plain
    j = next(a for a in machine_to_json(b.probe())["arrays"] if a["name"] == "md126")
    assert j["sync"]["waits_for"] == ["md127"] and j["sync"]["shares"] == ["sdb", "sdc", "sdd"]
    assert j["sync"]["starts_in_s"] > 0 and j["sync"]["queued"] == "recover"
    assert store.syncs_for("md126", None) == []  # nothing recorded while it waits
    md127_gone: float | None = None  # the first look without md127's sync
    for _ in range(3600):
        clock.advance(1)
        live = b.sample()
        s.sampled(live)
        if md127_gone is None and next(a for a in live.arrays if a.name == "md127").sync is None:
            md127_gone = live.taken_at
            # its record (the Wear card) is closed at that very look, md126 running or not
            (closed,) = store.syncs_for("md127", None)
            assert (closed.ended_at, closed.outcome) == (md127_gone, "finished")
        if not b.probe().array("md126").sync and not b.probe().array("md127").sync:  # type: ignore[union-attr]
            break
    clock.advance(1)
    s.sampled(b.sample())
    (ev126,) = store.syncs_for("md126", None)
    ev127 = store.syncs_for("md127", None)[-1]
    assert (ev126.action, ev126.outcome) == ("recover", "finished")
    assert md127_gone is not None and ev126.started_at >= md127_gone  # from when it ran
    assert not any(f.outcome.startswith("became") for f in s.view.finished)
    # each record counts its own partitions: md126 nothing on sd?2, md127 nothing on sd?1
    assert {m.device for m in ev126.members} == {"sdb1", "sdc1", "sdd1"}
    assert (ev126.kernel_written("sdd1") or 0) > 0
    for m in ev127.members:
        assert ev127.member_written(m)[1]  # its own counter
    store.close()
