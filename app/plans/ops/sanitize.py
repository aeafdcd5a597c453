"""Erasing a retired disk by its transport, each with the check its own tool has.

* NVMe: ``nvme sanitize DEV --sanact=2|4`` (block or crypto erase of every namespace of the
  controller; nvme-sanitize(1)), checked with ``nvme sanitize-log DEV --output-format=json``
  (the Sanitize Status log page: progress and "completed successfully"); or ``nvme format DEV
  --ses=1|2 --force`` (Format NVM with Secure Erase Settings: 1 user data erase, 2 cryptographic
  erase; nvme-format(1)), which returns when the erase is done;
* SATA: ``hdparm --user-master u --security-set-pass PASS DEV`` then ``hdparm --user-master u
  --security-erase[-enhanced] PASS DEV`` (hdparm(8): refused by the drive while its security
  state is "frozen"), checked with ``hdparm -I DEV`` (security "not enabled" again once the erase
  has cleared the password);
* SCSI/SAS: ``sg_sanitize --block|--crypto --quick DEV`` (sg_sanitize(8): without ``--early``
  it polls the drive until the sanitize is done), checked with ``sg_requests --progress DEV``;
* an SSD that takes secure discards: ``blkdiscard --secure DEV`` (BLKSECDISCARD).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from app.plans.ops.base import ErasesDevice, Op, OpError, device, shown

NVME_NAMESPACE = re.compile(r"/dev/nvme[0-9]{1,4}n[0-9]{1,4}")
SANACT = {"block": 2, "crypto": 4}  # nvme-sanitize(1) --sanact: 2 block erase, 4 crypto erase
SES = {"user-data": 1, "crypto": 2}  # nvme-format(1) --ses
SG_ACTIONS = ("block", "crypto")
HDPARM_PASS = "raidman"  # the temporary user password the ATA erase needs (cleared by it)


def _nvme(path: str, what: str) -> str:
    device(path, what)
    if NVME_NAMESPACE.fullmatch(path) is None:
        raise OpError(f"{what}: {shown(path)} is not an NVMe namespace (/dev/nvmeXnY)")
    return path


def _plain_disk(path: str, what: str) -> str:
    device(path, what)
    if path.startswith(("/dev/md", "/dev/dm-", "/dev/nvme")):
        raise OpError(f"{what}: {shown(path)} is not a SATA/SCSI disk")
    return path


@dataclass(frozen=True, slots=True)
class NvmeSanitize(ErasesDevice):
    KIND = "nvme-sanitize"
    device: str
    action: str = "block"

    def __post_init__(self) -> None:
        _nvme(self.device, "nvme sanitize")
        if self.action not in SANACT:
            raise OpError(f"nvme sanitize: {shown(self.action)} is not planned (block, crypto)")

    def argv(self) -> tuple[str, ...]:
        return ("nvme", "sanitize", self.device, f"--sanact={SANACT[self.action]}")


@dataclass(frozen=True, slots=True)
class NvmeSanitizeLog(Op):
    KIND = "nvme-sanitize-log"
    device: str

    def __post_init__(self) -> None:
        _nvme(self.device, "nvme sanitize-log")

    def argv(self) -> tuple[str, ...]:
        return ("nvme", "sanitize-log", self.device, "--output-format=json")

    def identifies(self) -> tuple[str, ...]:
        return (self.device,)


@dataclass(frozen=True, slots=True)
class NvmeFormat(ErasesDevice):
    KIND = "nvme-format"
    device: str
    ses: str = "user-data"

    def __post_init__(self) -> None:
        _nvme(self.device, "nvme format")
        if self.ses not in SES:
            raise OpError(f"nvme format: --ses {shown(self.ses)} is not planned")

    def argv(self) -> tuple[str, ...]:
        return ("nvme", "format", self.device, f"--ses={SES[self.ses]}", "--force")


@dataclass(frozen=True, slots=True)
class HdparmSetPassword(Op):
    KIND = "hdparm-set-pass"
    device: str

    def __post_init__(self) -> None:
        _plain_disk(self.device, "hdparm --security-set-pass")

    def argv(self) -> tuple[str, ...]:
        return ("hdparm", "--user-master", "u", "--security-set-pass", HDPARM_PASS, self.device)

    def identifies(self) -> tuple[str, ...]:
        return (self.device,)


@dataclass(frozen=True, slots=True)
class HdparmErase(ErasesDevice):
    KIND = "hdparm-erase"
    device: str
    enhanced: bool = False

    def __post_init__(self) -> None:
        _plain_disk(self.device, "hdparm --security-erase")
        if not isinstance(self.enhanced, bool):
            raise OpError("hdparm: enhanced or not")

    def argv(self) -> tuple[str, ...]:
        opt = "--security-erase-enhanced" if self.enhanced else "--security-erase"
        return ("hdparm", "--user-master", "u", opt, HDPARM_PASS, self.device)


@dataclass(frozen=True, slots=True)
class HdparmIdentify(Op):
    KIND = "hdparm-identify"
    device: str

    def __post_init__(self) -> None:
        _plain_disk(self.device, "hdparm -I")

    def argv(self) -> tuple[str, ...]:
        return ("hdparm", "-I", self.device)

    def identifies(self) -> tuple[str, ...]:
        return (self.device,)


@dataclass(frozen=True, slots=True)
class SgSanitize(ErasesDevice):
    KIND = "sg-sanitize"
    device: str
    action: str = "block"

    def __post_init__(self) -> None:
        _plain_disk(self.device, "sg_sanitize")
        if self.action not in SG_ACTIONS:
            raise OpError(f"sg_sanitize: {shown(self.action)} is not planned (block, crypto)")

    def argv(self) -> tuple[str, ...]:
        return ("sg_sanitize", f"--{self.action}", "--quick", self.device)


@dataclass(frozen=True, slots=True)
class SgRequests(Op):
    KIND = "sg-requests"
    device: str

    def __post_init__(self) -> None:
        _plain_disk(self.device, "sg_requests")

    def argv(self) -> tuple[str, ...]:
        return ("sg_requests", "--progress", self.device)

    def identifies(self) -> tuple[str, ...]:
        return (self.device,)


@dataclass(frozen=True, slots=True)
class SecureDiscard(ErasesDevice):
    KIND = "secure-discard"
    device: str

    def __post_init__(self) -> None:
        device(self.device, "blkdiscard --secure")
        if self.device.startswith(("/dev/md", "/dev/dm-")):
            raise OpError("blkdiscard --secure: raidman erases one whole disk, not an array")

    def argv(self) -> tuple[str, ...]:
        return ("blkdiscard", "--secure", self.device)
