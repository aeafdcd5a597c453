"""What the disk plans (qualify, locate, retire, smart-test) need to know about one disk that
the probe does not read, read through the backend right before the plan is made (read-only
programs and sysfs files; never a shell). Each reader says why when it learns nothing.

* self-tests: ``smartctl -j -c`` (``self_test_supported``; smartctl 7.3 says NVMe's optional
  admin commands only as text: ``smartctl -c`` then), and the drive's own time for an
  extended test (ATA capabilities "Extended self-test routine recommended polling time":
  ``ata_smart_data.self_test.polling_minutes.extended``);
* the enclosure slot: the kernel's enclosure class links the disk's SCSI device to its slot
  (drivers/misc/enclosure.c ``enclosure_add_links``: ``/sys/block/D/device/enclosure_device:
  NAME`` → ``/sys/class/enclosure/ENC/NAME``, NAME the component's name or number), whose
  ``slot``, ``locate`` and ``fault`` attributes say which bay it is and which LEDs it has;
* ledmon's ``ledctl`` (``ledctl --version``);
* how the disk can be erased: ``nvme id-ctrl -o json`` (NVMe), ``hdparm -I`` (ATA security).
"""

from __future__ import annotations

from dataclasses import dataclass

from app.backend import Backend
from app.model import Machine
from app.model.smart import SmartReading
from app.parsers.disk_erase import (
    AtaSecurity,
    NvmeErase,
    parse_hdparm_security,
    parse_nvme_id_ctrl,
)
from app.parsers.errors import ParseError
from app.plans.ops.disk_tests import ENCLOSURE_LED

TIMEOUT_S = 60


def _run(backend: Backend, argv: list[str]) -> tuple[int, str]:
    try:
        res = backend.run(argv, timeout=TIMEOUT_S)
    except Exception as e:  # a reader never raises: it learns nothing and says so
        return 1, str(e)
    return res.returncode, res.stdout


@dataclass(frozen=True, slots=True)
class SelfTestSupport:
    supported: bool | None  # None: the drive did not say (or SMART could not be read)
    extended_minutes: int | None = None  # the drive's own time for an extended test
    why: str = ""  # why unknown


def read_self_test_support(backend: Backend, disk: str) -> SelfTestSupport:
    """What the drive's capabilities say about self-tests (``smartctl -j -c``)."""
    from app.parsers.safe import load_json
    from app.parsers.smartctl_logs import self_test_supported, self_test_supported_text

    rc, out = _run(backend, ["smartctl", "-j", "-c", f"/dev/{disk}"])
    said = self_test_supported(out) if out else None
    minutes: int | None = None
    try:
        doc = load_json(out, "smartctl -j -c") if out else None
    except ParseError:
        doc = None
    if isinstance(doc, dict):
        ata = doc.get("ata_smart_data")
        st = ata.get("self_test") if isinstance(ata, dict) else None
        pm = st.get("polling_minutes") if isinstance(st, dict) else None
        ext = pm.get("extended") if isinstance(pm, dict) else None
        if isinstance(ext, int) and not isinstance(ext, bool) and 0 < ext < 100_000:
            minutes = ext
    if said is None:  # smartctl 7.3 prints NVMe's optional admin commands only as text
        rc2, text = _run(backend, ["smartctl", "-c", f"/dev/{disk}"])
        said = self_test_supported_text(text)
        if said is None:
            first = (text or out).strip().splitlines()[:1]
            why = first[0][:160] if first else f"smartctl exited with {rc2 or rc}"
            return SelfTestSupport(
                None, minutes, f"its SMART capabilities could not be read ({why})"
            )
    return SelfTestSupport(said, minutes)


@dataclass(frozen=True, slots=True)
class EnclosureSlot:
    enclosure: str  # the enclosure's name in /sys/class/enclosure ("0:0:2:0")
    component: str  # the slot's component name ("Slot 03", "3")
    slot: int | None  # its ``slot`` attribute: the bay number the enclosure reports
    has_locate: bool
    has_fault: bool

    def describe(self) -> str:
        bay = f"bay {self.slot}" if self.slot is not None else f"slot {self.component!r}"
        return f"{bay} of enclosure {self.enclosure}"

    def attr(self, name: str) -> str:
        return f"/sys/class/enclosure/{self.enclosure}/{self.component}/{name}"


def _read(backend: Backend, path: str) -> str | None:
    try:
        return backend.read_text(path)
    except Exception:
        return None


def read_enclosure_slot(backend: Backend, disk: str) -> tuple[EnclosureSlot | None, str]:
    """The enclosure slot the disk sits in, or None and why none was found."""
    rc, out = _run(backend, ["ls", "-1", f"/sys/block/{disk}/device"])
    if rc != 0:
        return None, f"/sys/block/{disk}/device could not be listed"
    links = [ln for ln in out.splitlines()[:4096] if ln.startswith("enclosure_device:")]
    if not links:
        return None, "no enclosure slot links to it (no SES enclosure or backplane driver)"
    link = f"/sys/block/{disk}/device/{links[0]}"
    rc, target = _run(backend, ["readlink", "-f", link])
    parts = target.strip().split("/")
    if rc != 0 or len(parts) < 3:
        return None, f"{link} could not be followed"
    enclosure, component = parts[-2], parts[-1]
    if component != links[0].removeprefix("enclosure_device:") or not ENCLOSURE_LED.fullmatch(
        f"/sys/class/enclosure/{enclosure}/{component}/locate"
    ):
        return None, f"{link} points at a slot raidman does not name ({target.strip()[:120]!r})"
    base = f"/sys/class/enclosure/{enclosure}/{component}"
    slot_text = (_read(backend, f"{base}/slot") or "").strip()
    return (
        EnclosureSlot(
            enclosure,
            component,
            int(slot_text) if slot_text.isdigit() and len(slot_text) < 6 else None,
            _read(backend, f"{base}/locate") is not None,
            _read(backend, f"{base}/fault") is not None,
        ),
        "",
    )


def ledctl_present(backend: Backend) -> bool:
    rc, _ = _run(backend, ["ledctl", "--version"])
    return rc == 0


@dataclass(frozen=True, slots=True)
class EraseSupport:
    nvme: NvmeErase | None = None
    ata: AtaSecurity | None = None
    why: str = ""  # what could not be read


def read_erase_support(backend: Backend, machine: Machine, disk: str) -> EraseSupport:
    d = machine.disk(disk)
    transport = (d.transport or "") if d is not None else ""
    if disk.startswith("nvme") or transport == "nvme":
        rc, out = _run(backend, ["nvme", "id-ctrl", f"/dev/{disk}", "--output-format=json"])
        try:
            return (
                EraseSupport(nvme=parse_nvme_id_ctrl(out))
                if rc == 0
                else EraseSupport(why=f"nvme id-ctrl exited with {rc}")
            )
        except ParseError as e:
            return EraseSupport(why=str(e))
    if transport in ("sata", "ata"):
        rc, out = _run(backend, ["hdparm", "-I", f"/dev/{disk}"])
        if rc != 0:
            return EraseSupport(why=f"hdparm -I exited with {rc}")
        try:
            return EraseSupport(ata=parse_hdparm_security(out))
        except ParseError as e:
            return EraseSupport(why=str(e))
    return EraseSupport()


def smart_unreadable(reading: SmartReading | None) -> str | None:
    """Why SMART cannot be read from the disk (None: it can)."""
    if reading is None:
        return "SMART was not read"
    if not reading.available:
        return reading.reason or "SMART is not available on it"
    return None
