"""Operations on one whole disk that is being qualified or found: its SMART report, self-tests
that hold the step until the drive has finished them, a surface pass that writes and verifies
one zone of the disk, and the lights that say where the disk sits (the enclosure's slot LEDs,
``ledctl``, or a bounded read the activity LED shows).

Each renders one argv, never a shell; ``app.plans.ops.decode`` reads them back.

* ``smartctl -j -a DEV`` (``SmartReport``): the reading as JSON, read-only (qualify's before and
  after);
* ``smartctl -t short|long -C DEV`` (``CaptiveSelfTest``, ATA and SCSI): smartctl(8) ``-C,
  --captive``: the test runs in the foreground and smartctl returns when it ends — "only run
  captive tests on drives without any mounted partitions", which qualify guarantees (it refuses a
  disk in use); smartmontools atacmds.cpp ``ataSmartTest``: a captive test that fails answers
  EIO, so the step fails with the test;
* ``nvme device-self-test DEV --self-test-code=1|2 --wait`` (``NvmeSelfTest``):
  nvme-device-self-test(1) ``-w, --wait``: "Wait for the device self test to complete before
  exiting" (nvme-cli 2.3, Debian 12);
* ``fio ... --verify=crc32c --do_verify=1`` (``SurfaceTest``): one zone (bytes from an offset,
  whole MiB: fio writes whole 1 MiB blocks) written in full with checksummed blocks, then read back and checked; fio's verify header carries each block's offset
  (fio verify.c ``verify_header``), so a drive that maps two offsets to one place (a fake
  capacity) fails as a drive that returns other bytes does;
* ``fio --readonly ... --time_based --runtime=S --thinktime=...`` (``LocateBlink``): reads in
  bursts with pauses for S seconds: the activity LED blinks; ``--readonly`` makes fio refuse any
  write or trim;
* ``tee /sys/class/enclosure/ENC/SLOT/locate|fault`` (``EnclosureLed``): the kernel's enclosure
  class (drivers/misc/enclosure.c ``set_component_locate`` / ``set_component_fault``: "1" lights,
  "0" clears);
* ``ledctl locate=DEV`` / ``ledctl locate_off=DEV`` (``Ledctl``, ledmon's ledctl(8)).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.plans.ops.base import MD_DEV, Op, OpError, device, number, shown

SELF_TESTS = ("short", "long")
NVME_CODES = {"short": 1, "long": 2}  # nvme-device-self-test(1): 1h short, 2h extended
MIB = 1 << 20
MAX_BYTES = 1 << 60
LEDS = ("locate", "fault")
# smartctl(8) EXIT STATUS: bits 0-2 say the command failed (command line, device open, a SMART
# command); bits 3-7 are the disk's state (failing, attributes at threshold, error-log and
# self-test-log entries): the reading was taken, and the verdict judges what it says
SMARTCTL_RAN = 0x07
LOCATE_MAX_S = 600
_ENCLOSURE = r"[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}"
_COMPONENT = r"[A-Za-z0-9][A-Za-z0-9 _.:-]{0,63}"
ENCLOSURE_LED = re.compile(rf"/sys/class/enclosure/({_ENCLOSURE})/({_COMPONENT})/(locate|fault)")


def _disk(path: str, what: str) -> str:
    device(path, what)
    if MD_DEV.fullmatch(path):
        raise OpError(f"{what}: {shown(path)} is an array; raidman tests one whole disk")
    return path


@dataclass(frozen=True, slots=True)
class SmartReport(Op):
    """``smartctl -j -a DEV``: the drive's SMART reading as JSON (reads only)."""

    KIND = "smart-report"
    device: str

    def __post_init__(self) -> None:
        _disk(self.device, "smartctl -j -a")

    def argv(self) -> tuple[str, ...]:
        return ("smartctl", "-j", "-a", self.device)

    def identifies(self) -> tuple[str, ...]:
        return (self.device,)

    def accepts(self, returncode: int) -> bool:
        return returncode >= 0 and not returncode & SMARTCTL_RAN


@dataclass(frozen=True, slots=True)
class CaptiveSelfTest(Op):
    """``smartctl -t short|long -C DEV``: an ATA/SCSI self-test in captive (foreground) mode:
    the step ends when the test does."""

    KIND = "self-test-captive"
    device: str
    test: str = "short"

    def __post_init__(self) -> None:
        _disk(self.device, "smartctl -C")
        if self.test not in SELF_TESTS:
            raise OpError(f"smartctl: -t {shown(self.test)} is not planned (short, long)")

    def argv(self) -> tuple[str, ...]:
        return ("smartctl", "-t", self.test, "-C", self.device)

    def identifies(self) -> tuple[str, ...]:
        return (self.device,)

    def accepts(self, returncode: int) -> bool:
        # a captive test the drive fails may still exit 0 (atacmds.cpp ataSmartTest takes EIO
        # of a captive test as done): the verdict reads the self-test log after it
        return returncode >= 0 and not returncode & SMARTCTL_RAN


@dataclass(frozen=True, slots=True)
class NvmeSelfTest(Op):
    """``nvme device-self-test DEV --self-test-code=1|2 --wait``: an NVMe device self-test the
    step waits for."""

    KIND = "self-test-nvme"
    device: str
    test: str = "short"

    def __post_init__(self) -> None:
        _disk(self.device, "nvme device-self-test")
        if self.test not in SELF_TESTS:
            raise OpError(f"nvme device-self-test: {shown(self.test)} is not planned")

    def argv(self) -> tuple[str, ...]:
        code = NVME_CODES[self.test]
        return ("nvme", "device-self-test", self.device, f"--self-test-code={code}", "--wait")

    def identifies(self) -> tuple[str, ...]:
        return (self.device,)


@dataclass(frozen=True, slots=True)
class SurfaceTest(Op):
    """One zone of a whole disk, ``size`` bytes from ``offset`` (both whole MiB), written with
    checksummed 1 MiB blocks and read back (``fio --verify=crc32c --do_verify=1``)."""

    KIND = "surface-test"
    device: str
    offset: int
    size: int

    def __post_init__(self) -> None:
        _disk(self.device, "fio (surface test)")
        number(self.offset, "fio: --offset", 0, MAX_BYTES)
        number(self.size, "fio: --size", MIB, MAX_BYTES)
        if self.offset % MIB or self.size % MIB:
            raise OpError("fio: a zone starts and ends on a whole MiB")

    def argv(self) -> tuple[str, ...]:
        return (
            "fio",
            "--name=raidman-qualify",
            f"--filename={self.device}",
            f"--offset={self.offset}",
            f"--size={self.size}",
            "--rw=write",
            "--bs=1M",
            "--direct=1",
            "--ioengine=psync",
            "--verify=crc32c",
            "--do_verify=1",
            "--output-format=json",
        )

    def destroys(self) -> str:
        return self.device


@dataclass(frozen=True, slots=True)
class LocateBlink(Op):
    """``fio --readonly`` reading ``burst`` MiB, pausing half a second, for ``seconds``: the
    disk's activity LED blinks (nothing is written: fio refuses writes and trims)."""

    KIND = "locate-blink"
    device: str
    seconds: int = 30
    burst: int = 64  # MiB read between pauses: about half a second at the disk's speed

    def __post_init__(self) -> None:
        _disk(self.device, "fio (locate)")
        number(self.seconds, "fio: --runtime (s)", 5, LOCATE_MAX_S)
        number(self.burst, "fio: --thinktime_blocks", 1, 4096)

    def argv(self) -> tuple[str, ...]:
        return (
            "fio",
            "--name=raidman-locate",
            f"--filename={self.device}",
            "--readonly",
            "--rw=read",
            "--bs=1M",
            "--direct=1",
            "--ioengine=psync",
            "--time_based",
            f"--runtime={self.seconds}",
            "--thinktime=500000",
            f"--thinktime_blocks={self.burst}",
            "--output-format=json",
        )

    def identifies(self) -> tuple[str, ...]:
        return (self.device,)


@dataclass(frozen=True, slots=True)
class EnclosureLed(Op):
    """``tee /sys/class/enclosure/ENC/SLOT/locate|fault`` with ``1`` (on) or ``0`` (off)."""

    KIND = "enclosure-led"
    enclosure: str
    component: str
    led: str
    on: bool

    def __post_init__(self) -> None:
        path = f"/sys/class/enclosure/{self.enclosure}/{self.component}/{self.led}"
        if (
            not isinstance(self.enclosure, str)
            or not isinstance(self.component, str)
            or ENCLOSURE_LED.fullmatch(path) is None
            or self.led not in LEDS
            or ".." in (self.enclosure, self.component)
        ):
            raise OpError(f"tee: {shown(path)} is not an enclosure slot's locate or fault LED")
        if not isinstance(self.on, bool):
            raise OpError("tee: an LED is on or off")

    @property
    def path(self) -> str:
        return f"/sys/class/enclosure/{self.enclosure}/{self.component}/{self.led}"

    def argv(self) -> tuple[str, ...]:
        return ("tee", self.path)

    def stdin(self) -> str:
        return "1\n" if self.on else "0\n"


@dataclass(frozen=True, slots=True)
class Ledctl(Op):
    """``ledctl locate=DEV`` / ``ledctl locate_off=DEV``: the locate pattern on the slot's LED
    through ledmon's ledctl (SES, SGPIO, NPEM, VMD)."""

    KIND = "ledctl"
    device: str
    on: bool = True

    def __post_init__(self) -> None:
        _disk(self.device, "ledctl")
        if not isinstance(self.on, bool):
            raise OpError("ledctl: locate or locate_off")

    def argv(self) -> tuple[str, ...]:
        return ("ledctl", f"{'locate' if self.on else 'locate_off'}={self.device}")

    def identifies(self) -> tuple[str, ...]:
        return (self.device,)
