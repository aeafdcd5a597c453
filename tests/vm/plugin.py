"""pytest plugin for the real-kernel tests (registered by ``tests/conftest.py``).

* ``vm`` (session): ONE guest per session, booted lazily by the first test that asks for it
  (under pytest-xdist every worker is a session: ``make test`` runs two guests, see
  ``tests/vm/README.md``). When it cannot start: a skip with the reason, or a failure under ``RAIDMAN_VM_REQUIRED=1``
  (CI); either way a loud line in the terminal summary.
* ``blank_vm`` (function): the same guest with every disk blank again (``vm.reset_disks()``).
* A failing test that used the VM gets report sections: the guest console since the test
  started, the ``dmesg`` tail, and the agent commands it ran.
* The terminal summary gives each guest's boot and every VM test's wall time and host CPU
  (QEMU's, and this process's); xdist workers send theirs to the controller.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import pytest
from pluggy import Result

from tests.vm.costs import two_queues
from tests.vm.machine import VM, VMConfig, VMError, VMUnavailable, find_config


def vm_required() -> bool:
    return os.environ.get("RAIDMAN_VM_REQUIRED", "") not in ("", "0")


@dataclass(frozen=True)
class VMTestTime:
    """One VM test's cost, setup + call (the guest's boot is counted on its own)."""

    outcome: str
    wall_s: float
    guest_cpu_s: float  # host CPU of QEMU: what the guest cost
    pytest_cpu_s: float  # CPU of this pytest process (polling, parsing, the test's own work)


@dataclass
class Harness:
    vm: VM | None = None
    error: str | None = None
    config: VMConfig | None = None
    vm_tests: dict[str, VMTestTime] = field(default_factory=dict)

    def get(self, tmp_path_factory: pytest.TempPathFactory) -> VM:
        if self.vm is not None:
            return self.vm
        if self.error is None:
            try:
                self.config = find_config()
                workdir = Path(tmp_path_factory.mktemp("raidman-vm", numbered=True))
                self.vm = VM.boot(workdir, self.config)
                return self.vm
            except VMUnavailable as e:
                self.error = str(e)
            except (VMError, TimeoutError, OSError) as e:
                self.error = f"the VM did not boot: {e}"
        if vm_required():
            pytest.fail(
                f"VM REQUIRED (RAIDMAN_VM_REQUIRED=1) but it cannot start: {self.error}",
                pytrace=False,
            )
        pytest.skip(f"VM unavailable: {self.error}")
        raise AssertionError("unreachable")

    def close(self) -> None:
        if self.vm is not None:
            self.vm.close()

    def summary(self, name: str) -> dict[str, Any]:
        """What the terminal summary shows of this session's guest (JSON: it crosses from an
        xdist worker to the controller)."""
        vm = self.vm
        boot = latency = None
        if vm is not None:
            boot = (
                f"booted in {vm.boot_s:.1f} s (agent answers), ready (modules preloaded) after "
                f"{vm.boot_cpu_s:.1f} s of QEMU CPU ({'KVM' if vm.config.kvm else 'TCG'}, "
                f"{vm.config.cpus} vCPU)"
            )
            latency = vm.latency_summary()
        return {
            "name": name,
            "error": self.error,
            "boot": boot,
            "latency": latency,
            "notes": list(vm.notes) if vm is not None else [],
            "tests": {k: asdict(v) for k, v in self.vm_tests.items()},
        }


HARNESS_KEY = pytest.StashKey[Harness]()
WORKERS_KEY = pytest.StashKey[list[dict[str, Any]]]()  # the xdist workers' summaries
# console offset, calls index, t0, QEMU CPU s, pytest CPU s (None: the guest was not up yet)
START_KEY = pytest.StashKey[tuple[int, int, float | None, float, float]]()


def _harness(config: pytest.Config) -> Harness:
    h = config.stash.get(HARNESS_KEY, None)
    if h is None:
        h = Harness()
        config.stash[HARNESS_KEY] = h
    return h


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The VM tests in the order that splits their time evenly between two guests
    (tests/vm/costs.py); the other tests keep theirs, before them."""
    vm_items = [i for i in items if i.get_closest_marker("vm") is not None]
    if len(vm_items) > 1:
        others = [i for i in items if i.get_closest_marker("vm") is None]
        items[:] = others + two_queues(vm_items, lambda i: i.nodeid)


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "vm: runs inside a real Linux kernel under QEMU (virtme-ng)")
    _harness(config)
    config.stash[WORKERS_KEY] = []


def _worker_id(config: pytest.Config) -> str | None:
    winput: dict[str, Any] | None = getattr(config, "workerinput", None)
    return str(winput["workerid"]) if winput is not None else None


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: pytest.Session) -> None:
    """An xdist worker hands its guest's summary to the controller."""
    config = session.config
    name = _worker_id(config)
    h = _harness(config)
    if name is not None and (h.vm_tests or h.error is not None):
        config.workeroutput["raidman_vm"] = h.summary(name)  # type: ignore[attr-defined]


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """(xdist controller) a worker is done: keep its guest's summary."""
    got = getattr(node, "workeroutput", {}).get("raidman_vm")
    if got is not None:
        node.config.stash[WORKERS_KEY].append(got)


def pytest_report_header(config: pytest.Config) -> str:
    try:
        c = find_config()
        what = f"kernel {c.kernel}, {'KVM' if c.kvm else 'TCG (no KVM)'}"
    except VMUnavailable as e:
        what = f"UNAVAILABLE: {e}"
    return f"raidman VM: {what}; required={'yes' if vm_required() else 'no'}"


@pytest.fixture(scope="session")
def vm(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[VM]:
    """The session's guest (booted on first use)."""
    h = _harness(request.config)
    request.addfinalizer(h.close)
    yield h.get(tmp_path_factory)


@pytest.fixture
def blank_vm(vm: VM) -> VM:
    """The guest with every disk blank, no md/LVM, speed limits at their boot values."""
    vm.reset_disks()
    return vm


def _vm_of(item: pytest.Item) -> VM | None:
    return _harness(item.config).vm


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    vm = _vm_of(item)
    item.stash[START_KEY] = (
        vm.console_offset() if vm else 0,
        len(vm.calls) if vm else 0,
        time.monotonic() if vm else None,
        vm.host_cpu_s() if vm else 0.0,
        time.process_time(),
    )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(
    item: pytest.Item, call: pytest.CallInfo[None]
) -> Generator[None, Result[pytest.TestReport], None]:
    outcome = yield
    rep = outcome.get_result()
    if item.get_closest_marker("vm") is None:
        return
    h = _harness(item.config)
    vm = h.vm
    offset, calls_at, t0, cpu0, own0 = item.stash.get(
        START_KEY, (0, 0, None, 0.0, time.process_time())
    )
    if rep.when == "call" or (rep.when == "setup" and not rep.passed):
        word = "xfailed" if hasattr(rep, "wasxfail") else rep.outcome
        if t0 is None and vm is not None:  # this test booted the guest: count from ready
            t0, cpu0 = vm.ready_at, vm.boot_cpu_s
        h.vm_tests[item.nodeid] = VMTestTime(
            word,
            time.monotonic() - (t0 if t0 is not None else time.monotonic()),
            (vm.host_cpu_s() - cpu0) if vm is not None else 0.0,
            time.process_time() - own0,
        )
    if vm is None or not rep.failed:
        return
    rep.sections.append(
        ("guest console (since the test started)", vm.console_tail(200, since=offset))
    )
    try:
        rep.sections.append(("guest dmesg (tail)", vm.dmesg(80)))
    except Exception as e:
        rep.sections.append(("guest dmesg (tail)", f"(could not read: {e})"))
    calls = vm.calls[calls_at:]
    lines = [
        f"{c.duration_s * 1000:8.0f} ms  {c.op:6}  rc={c.rc!s:4}  {c.what}" for c in calls[-80:]
    ]
    rep.sections.append(("guest agent calls (last 80)", "\n".join(lines)))


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    tr = terminalreporter
    h = _harness(tr.config)
    workers: list[dict[str, Any]] = tr.config.stash[WORKERS_KEY]
    guests = sorted(workers, key=lambda g: str(g["name"]))
    if h.vm_tests or h.error is not None:
        guests.append(h.summary("guest"))
    if not guests:
        return
    errors = [g for g in guests if g["error"] is not None]
    for g in errors:
        n = len(g["tests"])
        verb = "FAILED" if vm_required() else "SKIPPED"
        tr.write_sep(
            "!",
            f"VM TESTS {verb} ({n}, {g['name']}): the real-kernel VM cannot start",
            red=True,
            bold=True,
        )
        tr.write_line(f"reason: {g['error']}", red=True, bold=True)
        tr.write_line(
            "fix: `make vm-deps` (qemu-system-x86, linux-image-amd64, ...) and the venv's vng"
        )
    if len(errors) == len(guests):
        return
    tr.write_sep("-", "raidman VM (real kernel)")
    rows: list[tuple[str, VMTestTime]] = []
    for g in guests:
        times = [VMTestTime(**t) for t in g["tests"].values()]
        tr.write_line(
            f"{g['name']}: {g['boot'] or 'not booted'}; {len(times)} tests: "
            f"{sum(t.wall_s for t in times):.1f} s, QEMU CPU {sum(t.guest_cpu_s for t in times):.1f} s"
            f", pytest CPU {sum(t.pytest_cpu_s for t in times):.1f} s"
        )
        if g["latency"]:
            tr.write_line(f"  agent latency: {g['latency']}")
        rows += [(f"{g['name']:>6}  {nodeid}", VMTestTime(**t)) for nodeid, t in g["tests"].items()]
    tr.write_line("    wall  QEMU CPU  pytest CPU  outcome   guest  test (setup + call)")
    for what, t in sorted(rows, key=lambda r: -r[1].wall_s):
        tr.write_line(
            f"  {t.wall_s:6.1f} s {t.guest_cpu_s:6.1f} s {t.pytest_cpu_s:8.1f} s   "
            f"{t.outcome:8}{what}"
        )
    for g in guests:
        for text in g["notes"]:
            tr.write_line(f"note ({g['name']}): {text}")
