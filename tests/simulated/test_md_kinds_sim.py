"""The simulated backend follows the kernel through the md kinds walk (issue 43): the same steps
the VM test drives on a real kernel (tests/vm/md_kinds_steps.py: a write journal, PPL, linear,
RAID-0, RAID-1 -> 5, a member added, the chunk changed, RAID-5 -> 6 -> 5), run here through
the simulated backend's own ``run``/``read_text``/``probe``/``sample``, and compared field by
field with what the kernel's sysfs read at each step of a VM run (the golden file
tests/fixtures/md_kinds/walk.json, recorded by ``RAIDMAN_MD_KINDS_RECORD=1`` on
tests/vm/test_md_kinds.py). raidman's model of the simulator is held to the simulator's sysfs
by the same comparison the VM test holds the Linux backend to the kernel's."""

from __future__ import annotations

from typing import Any

import pytest

from backends.simulated import SimClock, SimulatedBackend
from tests.vm.kernel import RUNNING_STATES, KernelMd, md_paths
from tests.vm.md_kinds_steps import ARRAYS, KEPT, compare, load, reduce, steps

VM_NVME_BYTES = 256 << 20  # tests/vm/machine.py VMConfig.nvme_size: the disks the fixture saw
DISKS = [f"nvme{i}n1" for i in range(4)]
TICK_S = 0.5
WAIT_S = 7200.0  # simulated seconds a wait may take (a held reshape at 20 KiB/s: ~30 min)

# Where the simulator may differ from the recorded kernel, and why: field -> reason. Only a
# position inside the array on both sides is let through.
EXPLAINED = {
    # where a held reshape is when it is looked at depends on how long the guest took to look
    # (the kernel had moved 768 sectors at 20 KiB/s on 2 -> 3); and md ran the chunk change
    # and the RAID-5 -> 6 restripe backwards (131072 of 131072: mdadm moved the data offset,
    # Grow.c set_new_data_offset), 6 -> 5 forwards, which the simulator does not model: it
    # reshapes forwards
    "reshape_position": "timing, and the direction mdadm picks for a same-width restripe",
}


def _positions(got: str | None, want: set[str | None]) -> bool:
    return got is not None and got.isdigit() and all(w is not None and w.isdigit() for w in want)


def _backend() -> SimulatedBackend:
    b = SimulatedBackend.from_scenario("blank", clock=SimClock.manual())
    for name in DISKS:
        b.state.disks[name].size_bytes = VM_NVME_BYTES
    b.state.touch()
    return b


def _read(b: SimulatedBackend, md: str) -> dict[str, str | None]:
    """The files tests/vm/guest.py:_read reads for ``md`` (md_paths), its globs expanded over
    the array's devices as the kernel lists them (/sys/block/mdX/slaves)."""
    paths, globs = md_paths(md)
    data = {p: b.read_text(p) for p in paths}
    devs = (b.read_text(f"/sys/block/{md}/slaves") or "").split()
    for g in globs:
        for dev in sorted(devs):
            p = g.replace("dev-*", f"dev-{dev}")
            data[p] = b.read_text(p)
    return data


def _attr(b: SimulatedBackend, md: str, attr: str) -> str:
    return (b.read_text(f"/sys/block/{md}/md/{attr}") or "").strip()


def walk(b: SimulatedBackend, walk_steps: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """tests/vm/guest_md_kinds.py:walk on the simulated backend: commands through its ``run``,
    writes through ``tee``, waits by moving its clock, looks through ``read_text``, ``probe``
    and ``sample``."""
    import dataclasses

    out: list[dict[str, Any]] = []
    for st in walk_steps:
        for argv in st.get("run", []):
            r = b.run(argv)
            assert r.returncode == 0, f"{st['name']}: {argv} exited {r.returncode}: {r.stderr}"
        for path, text in st.get("write", []):
            r = b.run(["tee", path], stdin=text)
            assert r.returncode == 0, f"{st['name']}: tee {path}: {r.stderr}"
        for md, until, *attr in st.get("wait", []):
            waited = 0.0
            while _attr(b, md, attr[0] if attr else "sync_action") != until:
                assert waited < WAIT_S, f"{st['name']}: {md} never reads {until!r}"
                b.clock.advance(TICK_S)
                waited += TICK_S
        rec: dict[str, Any] = {"name": st["name"]}
        look = st.get("look", [])
        if look:
            rec["before"] = {md: _read(b, md) for md in look}
            machine = b.probe()
            sample = b.sample()
            rec["after"] = {md: _read(b, md) for md in look}
            rec["model"] = {a.name: dataclasses.asdict(a) for a in machine.arrays if a.name in look}
            rec["sample"] = {a.name: dataclasses.asdict(a) for a in sample.arrays if a.name in look}
        out.append(rec)
    return out


@pytest.fixture(scope="module")
def recs() -> list[dict[str, Any]]:
    return walk(_backend(), steps([f"/dev/{d}" for d in DISKS]))


def test_the_walk_is_the_one_the_fixture_recorded(recs: list[dict[str, Any]]) -> None:
    gold = load()
    assert [r["name"] for r in recs] == [g["name"] for g in gold]
    assert [sorted(r.get("model", {})) for r in recs] == [sorted(g["looked"]) for g in gold]
    assert {md for g in gold for md in g["looked"]} == set(ARRAYS)


def test_raidman_reads_the_simulator_as_the_linux_backend_reads_the_kernel(
    recs: list[dict[str, Any]],
) -> None:
    problems = [f"{r['name']}: {p}" for r in recs if "model" in r for p in compare(r)[1]]
    assert problems == [], "\n".join(problems)


def _differences(sim: dict[str, Any], gold: dict[str, Any]) -> list[str]:
    """Fields of one array where the simulator's sysfs (before and after the look) is not what
    the kernel's was (before or after the look)."""
    out: list[str] = []
    for a in KEPT:
        want = {gold["before"]["attrs"][a], gold["after"]["attrs"][a]}
        for got in {sim["before"]["attrs"][a], sim["after"]["attrs"][a]}:
            if got in want:
                continue
            if a == "array_state" and got in RUNNING_STATES and want <= RUNNING_STATES:
                continue
            if a in EXPLAINED and _positions(got, want):
                continue
            out.append(f"{a}: simulator {got!r}, kernel {sorted(want, key=str)}")
    gm = [gold["before"]["members"], gold["after"]["members"]]
    for got in (sim["before"]["members"], sim["after"]["members"]):
        if got not in gm:
            out.append(f"members: simulator {got}, kernel {gm[0]}")
    return out


def test_the_simulators_sysfs_is_the_kernels_at_every_step(recs: list[dict[str, Any]]) -> None:
    problems: list[str] = []
    for rec, gold in zip(recs, load(), strict=True):
        for md, g in gold["looked"].items():
            sim = {w: reduce(KernelMd.parse(md, rec[w][md]), DISKS) for w in ("before", "after")}
            problems += [f"{rec['name']}: {p}" for p in _differences(sim, g)]
    assert problems == [], "\n".join(problems)
