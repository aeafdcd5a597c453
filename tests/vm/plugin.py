"""pytest plugin for the real-kernel tests (registered by ``tests/conftest.py``).

* ``vm`` (session): ONE guest per session, booted lazily by the first test that asks for it.
  When it cannot start: a skip with the reason, or a failure under ``RAIDMAN_VM_REQUIRED=1``
  (CI); either way a loud line in the terminal summary.
* ``blank_vm`` (function): the same guest with every disk blank again (``vm.reset_disks()``).
* A failing test that used the VM gets report sections: the guest console since the test
  started, the ``dmesg`` tail, and the agent commands it ran.
"""

from __future__ import annotations

import os
import time
from collections.abc import Generator, Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from pluggy import Result

from tests.vm.machine import VM, VMConfig, VMError, VMUnavailable, find_config


def vm_required() -> bool:
    return os.environ.get("RAIDMAN_VM_REQUIRED", "") not in ("", "0")


@dataclass
class Harness:
    vm: VM | None = None
    error: str | None = None
    config: VMConfig | None = None
    vm_tests: dict[str, tuple[str, float]] = field(default_factory=dict)  # nodeid -> (outcome, s)

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


HARNESS_KEY = pytest.StashKey[Harness]()
START_KEY = pytest.StashKey[tuple[int, int, float]]()  # console offset, calls index, t0


def _harness(config: pytest.Config) -> Harness:
    h = config.stash.get(HARNESS_KEY, None)
    if h is None:
        h = Harness()
        config.stash[HARNESS_KEY] = h
    return h


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "vm: runs inside a real Linux kernel under QEMU (virtme-ng)")
    _harness(config)


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
        time.monotonic(),
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
    offset, calls_at, t0 = item.stash.get(START_KEY, (0, 0, time.monotonic()))
    if rep.when == "call" or (rep.when == "setup" and not rep.passed):
        word = "xfailed" if hasattr(rep, "wasxfail") else rep.outcome
        h.vm_tests[item.nodeid] = (word, time.monotonic() - t0)
    vm = h.vm
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
    h = _harness(terminalreporter.config)
    tr = terminalreporter
    if h.error is not None:
        n = len(h.vm_tests)
        verb = "FAILED" if vm_required() else "SKIPPED"
        tr.write_sep(
            "!", f"VM TESTS {verb} ({n}): the real-kernel VM cannot start", red=True, bold=True
        )
        tr.write_line(f"reason: {h.error}", red=True, bold=True)
        tr.write_line(
            "fix: `make vm-deps` (qemu-system-x86, linux-image-amd64, ...) and the venv's vng"
        )
        return
    vm = h.vm
    if vm is None:
        return
    tr.write_sep("-", "raidman VM (real kernel)")
    tr.write_line(
        f"boot: {vm.boot_s:.1f} s ({'KVM' if vm.config.kvm else 'TCG'}, {vm.config.cpus} vCPU)"
    )
    tr.write_line(f"agent latency: {vm.latency_summary()}")
    total = sum(s for _, s in h.vm_tests.values())
    tr.write_line(f"vm tests: {len(h.vm_tests)}, {total:.1f} s in tests (+ boot)")
    for nodeid, (outcome, secs) in sorted(h.vm_tests.items(), key=lambda kv: -kv[1][1]):
        tr.write_line(f"  {secs:7.1f} s  {outcome:7}  {nodeid}")
    for text in vm.notes:
        tr.write_line(f"note: {text}")
