"""Building blocks for the VM scenarios (shared by tests/vm and other issues' VM tests)."""

from __future__ import annotations

import time
from collections.abc import Sequence

import pytest

from tests.vm.kernel import Bracket, KernelMd, assert_model_matches_kernel, read_md
from tests.vm.machine import VM, ModelUnavailable

SLOW_KIB = 4000  # speed_limit_max while a test looks at a running sync (256 MiB ≈ 1 min)
FAST_KIB = 2_000_000  # "as fast as it goes" (TCG manages well below this)
HOLD_KIB = 20  # speed_limit_max that holds a sync running while a test looks (64 MiB ≈ 1 h)


def create_array(
    vm: VM,
    md: str,
    level: str | int,
    devices: Sequence[str],
    *,
    spares: Sequence[str] = (),
    chunk_kib: int | None = None,
    bitmap: str | None = "none",
    layout: str | None = None,
    size_kib: int | None = None,
    extra: Sequence[str] = (),
) -> KernelMd:
    """``mdadm --create /dev/<md>`` from kernel names; returns the kernel's state right after."""
    argv = [
        "mdadm",
        "--create",
        f"/dev/{md}",
        "--run",
        "--metadata=1.2",
        f"--level={level}",
        f"--raid-devices={len(devices)}",
    ]
    if spares:
        argv.append(f"--spare-devices={len(spares)}")
    if chunk_kib is not None and str(level) not in ("1", "raid1", "linear"):
        argv.append(f"--chunk={chunk_kib}")
    if bitmap is not None and str(level) not in ("0", "raid0"):
        argv.append(f"--bitmap={bitmap}")
    if layout is not None:
        argv.append(f"--layout={layout}")
    if size_kib is not None:
        argv.append(f"--size={size_kib}")
    argv += list(extra)
    argv += [f"/dev/{d}" for d in [*devices, *spares]]
    vm.run(argv, stdin="y\n", check=True, timeout=120)
    vm.run(["udevadm", "settle"], timeout=60)
    return read_md(vm, md)


def model_check(vm: VM, *mds: str) -> Bracket | None:
    """raidman's model vs the kernel for ``mds`` (asserts). Returns None, with a note, while the
    Linux backend is missing: only then is the comparison left out."""
    try:
        return assert_model_matches_kernel(vm, *mds)
    except ModelUnavailable as e:
        vm.note(f"model comparison skipped: {e}")
        return None


def finish_or_skip_model(b: Bracket | None) -> None:
    """Call at the END of a scenario: an honest skip when the model part could not run."""
    if b is None:
        pytest.skip("kernel-side checks passed; model comparison skipped: backends.linux missing")


def wait_sync_progress(vm: VM, md: str, min_done: int = 1, timeout: float = 60.0) -> KernelMd:
    """Wait until the array's sync has done at least ``min_done`` sectors (and is still running)."""
    st: KernelMd | None = None

    def moving() -> bool:
        nonlocal st
        st = read_md(vm, md)
        c = st.completed
        return c is not None and c[0] >= min_done

    vm.wait_for(moving, timeout, f"{md} sync progressing", interval=0.2)
    assert st is not None
    return st


def hold_sync(vm: VM) -> None:
    """Hold every running sync (near) still until the test sets the limits again.

    A test that must see a sync *running* calls this once it has seen it progress, looks as
    slowly as it likes, then releases it (``set_speed_limits(FAST_KIB, FAST_KIB)`` or its own
    rate). md enforces the limit, so no check depends on how fast TCG happens to be; md's
    ``sync_max`` cannot be lowered under a running sync (EBUSY), hence the speed limit.
    """
    vm.set_speed_limits(min_kib=1, max_kib=HOLD_KIB)


def timed_idle(vm: VM, md: str, timeout: float = 600.0) -> float:
    t0 = time.monotonic()
    vm.wait_idle(md, timeout)
    return time.monotonic() - t0
