"""Rows of docs/article-reading.md shown on the audit's rules (issue 43), each citing its article
by seed file (../shared/seeds/) and row number."""

from __future__ import annotations

from dataclasses import replace

from app.rules import audit
from app.rules.inputs import SchedulerState
from tests.rules.machines import Stack
from tests.rules.test_rules import codes, healthy_inputs


def test_a_lone_hdd_keeps_either_deadline_or_fair_queuing() -> None:
    """002_b31ddd3f173763e4.txt rows 110, 113 and 117: for disks and hardware RAID outside md
    the best scheduler depends on the load (deadline/noop for sequential reads, CFQ for random
    writes and database servers; measure), so a lone HDD on mq-deadline or on bfq gets no
    scheduler finding, while the same HDD as a software RAID member on mq-deadline does (row
    115's "definitiv CFQ")."""
    m = Stack(rotational=True).machine()
    lone = replace(m, arrays=(), pvs=(), vgs=(), lvs=(), filesystems=(), edges=m.edges[:1])
    inputs = healthy_inputs(m)
    for text in ("[mq-deadline] kyber bfq none", "mq-deadline kyber [bfq] none"):
        scheds = {d.name: SchedulerState.parse(text) for d in m.disks}
        assert not codes(audit(lone, replace(inputs, schedulers=scheds)), "scheduler"), text
    deadline = {d.name: SchedulerState.parse("[mq-deadline] kyber bfq none") for d in m.disks}
    assert codes(audit(m, replace(inputs, schedulers=deadline)), "scheduler")


def test_the_scheduler_list_is_read_with_the_one_in_use() -> None:
    """002 row 109: ``cat /sys/block/DEV/queue/scheduler`` lists the schedulers, the one in use
    in brackets; raidman reads both from that line."""
    s = SchedulerState.parse("mq-deadline kyber [bfq] none\n")
    assert s.current == "bfq"
    assert set(s.available) == {"mq-deadline", "kyber", "bfq", "none"}
