"""Observed annual failure rates of hard disks by the raw value of a SMART counter, as Scrutiny
publishes them: Backblaze's drive-stats data, binned by the value of ATA attributes 5, 187,
188, 197, 198 and 199 (Scrutiny's ``webapp/backend/pkg/thresholds/ata_attribute_metadata.go``,
``AtaMetadata[id].ObservedThresholds``: low, high, annual failure rate and its error
interval; the rates are failures per drive-year, 0.025 = 2.5 %, and may exceed 1).

A value falls in a bin the way Scrutiny's ``ValidateThreshold`` decides it: ``low == high`` and
the value equal to it, or ``low < value <= high``; the first bin that matches wins. A value no
bin holds has no rate ("unknown": Scrutiny's table stops at its last bin, and its bins for 199
start above 0). Attribute 188 is compared as Scrutiny transforms it: a Seagate raw string of
three numbers, each no larger than the next, counts the last one (Scrutiny issue #522).

These are rates of whole-drive failure among drives that showed the value, not of read errors;
each is shown with its bin and its source, never folded into one score.
"""

from __future__ import annotations

from dataclasses import dataclass

from app.model.smart import SmartAttribute, SmartReading

SOURCE = (
    "Backblaze drive stats as Scrutiny bins them (Scrutiny, webapp/backend/pkg/thresholds/"
    "ata_attribute_metadata.go, ObservedThresholds of attribute {id})"
)

NAMES = {
    5: "Reallocated Sectors Count",
    187: "Reported Uncorrectable Errors",
    188: "Command Timeout",
    197: "Current Pending Sector Count",
    198: "Offline Uncorrectable Sector Count",
    199: "UltraDMA CRC Error Count",
}

# id -> (low, high, annual failure rate, (interval low, interval high)), in Scrutiny's order
_B = tuple[int, int, float, tuple[float, float]]
BINS: dict[int, tuple[_B, ...]] = {
    5: (
        (0, 0, 0.025169175350572493, (0.022768612038746357, 0.027753988579272894)),
        (1, 4, 0.027432608477803388, (0.010067283827589948, 0.05970923963096652)),
        (4, 16, 0.07501976284584981, (0.039944864177334186, 0.12828607921150972)),
        (16, 70, 0.23589260654405794, (0.1643078435800227, 0.32806951196017664)),
        (70, 260, 0.36193219378600433, (0.2608488901774093, 0.4892271827875412)),
        (260, 1100, 0.5676621428968173, (0.4527895568499355, 0.702804359408436)),
        (1100, 4500, 1.5028253400346423, (1.2681757596263297, 1.768305221795894)),
        (4500, 17000, 2.0659987547404763, (1.6809790460512237, 2.512808045182302)),
        (17000, 70000, 1.7755385684503124, (1.2796520259849835, 2.400012341226441)),
    ),
    187: (
        (0, 0, 0.028130798308190524, (0.024487830609364304, 0.032162944988161336)),
        (1, 1, 0.33877621175661743, (0.22325565823630591, 0.4929016016666955)),
        (1, 3, 0.24064820598237213, (0.14488594021076606, 0.3758019832614595)),
        (3, 6, 0.5014425058387142, (0.3062941096766342, 0.7744372808405151)),
        (6, 11, 0.38007108544136836, (0.2989500188963677, 0.4764223967570595)),
        (11, 20, 0.5346094598348444, (0.40595137663302483, 0.6911066985735377)),
        (20, 35, 0.8428063943161636, (0.6504601819243522, 1.0742259350903411)),
        (35, 65, 1.4429071005017484, (1.1405581860945952, 1.8008133631629157)),
        (65, 120, 1.6190935390549661, (1.0263664163011208, 2.4294352761068576)),
    ),
    188: (
        (0, 100, 0.024893587674442153, (0.020857343769186413, 0.0294830350167543)),
        (100, 13000000000, 0.10044174089362015, (0.0812633664077498, 0.1227848196758574)),
        (13000000000, 26000000000, 0.334030592234279, (0.2523231196342665, 0.4337665082489293)),
        (26000000000, 39000000000, 0.36724705400842445, (0.30398009356575617, 0.4397986538328568)),
        (39000000000, 52000000000, 0.29848155926978354, (0.2509254838615984, 0.35242890006477073)),
        (52000000000, 65000000000, 0.2203079701535098, (0.18366082845676174, 0.26212468677179274)),
        (65000000000, 78000000000, 0.3018169948863018, (0.23779746376787655, 0.37776897542831006)),
        (78000000000, 91000000000, 0.32854928239235887, (0.2301118782147336, 0.4548506948185028)),
        (91000000000, 104000000000, 0.28488916640649387, (0.1366154288236293, 0.5239213202729072)),
    ),
    197: (
        (0, 0, 0.025540791394761345, (0.023161777231213983, 0.02809784482748174)),
        (1, 2, 0.34196613799103254, (0.22723401523750225, 0.4942362818474496)),
        (2, 6, 0.6823772508117681, (0.41083568090070416, 1.0656166047061635)),
        (6, 16, 0.6108100007493069, (0.47336936083368364, 0.7757071095273286)),
        (16, 40, 0.9564879341127684, (0.7701044196378299, 1.174355230793638)),
        (40, 100, 1.6519989942167461, (1.328402276482456, 2.0305872327541317)),
        (100, 250, 2.5137741046831956, (1.9772427971560862, 3.1510376077891613)),
        (250, 650, 3.3203378817413904, (2.5883662702274406, 4.195047163573006)),
        (650, 1600, 3.133047210300429, (1.1497731080460096, 6.819324775707182)),
    ),
    198: (
        (0, 0, 0.028675322159886437, (0.026159385510707116, 0.03136793218577656)),
        (1, 2, 0.8135764944275583, (0.40613445471964466, 1.4557130815309443)),
        (2, 4, 1.1173469387755102, (0.5773494680315332, 1.9517802404552516)),
        (4, 6, 1.3558692421991083, (0.4402470522980859, 3.1641465148237544)),
        (6, 8, 0.7324414715719062, (0.15104704003805655, 2.140504796291604)),
        (8, 10, 0.5777213677766163, (0.43275294849366835, 0.7556737733062419)),
        (10, 12, 1.7464114832535886, (0.47583835092536914, 4.471507017371231)),
        (12, 14, 2.6449275362318843, (0.3203129951758959, 9.554387676519005)),
        (14, 16, 0.796943231441048, (0.5519063550198366, 1.113648286331181)),
    ),
    199: (
        (0, 1, 0.04068379316116366, (0.037534031558106425, 0.04402730201866553)),
        (1, 2, 0.1513481259734218, (0.12037165605991791, 0.18786293065527596)),
        (2, 4, 0.16849758722418978, (0.12976367397863445, 0.2151676572000481)),
        (4, 8, 0.15385127340491614, (0.10887431782430312, 0.21117289306426648)),
        (8, 16, 0.14882894050104387, (0.09631424312463635, 0.2197008753522735)),
        (16, 35, 0.20878219917249793, (0.14086447304552446, 0.29804957135975)),
        (35, 70, 0.13742940270409038, (0.06860426267470295, 0.24589916335290812)),
        (70, 130, 0.22336578581363, (0.11150339549604707, 0.39966309081252904)),
        (130, 260, 0.18277416124186283, (0.07890890989692058, 0.3601379610272007)),
    ),
}
ATTRIBUTES = tuple(BINS)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One SMART counter of one drive against the observed failure rates."""

    attribute: int  # 5, 187, ...
    name: str  # the drive's name for it ("Reallocated_Sector_Ct")
    value: int  # the value compared (raw, or 188 as Scrutiny transforms it)
    low: int | None  # the bin it falls in (None: no bin holds it)
    high: int | None
    afr: float | None  # failures per drive-year of drives in that bin (0.025 = 2.5 %)
    interval: tuple[float, float] | None  # its error interval

    @property
    def source(self) -> str:
        return SOURCE.format(id=self.attribute)

    @property
    def bin_text(self) -> str:
        """The bin as the integers it holds: "bin 0", "bin 1101–4500", "no bin"."""
        if self.low is None or self.high is None:
            return "no bin"
        if self.low == self.high or self.low + 1 == self.high:
            return f"bin {self.high}"
        return f"bin {self.low + 1}–{self.high}"

    @property
    def afr_text(self) -> str:
        """ "150.3 %/yr (126.8–176.8)" or "unknown"."""
        if self.afr is None:
            return "unknown"
        lo, hi = self.interval or (self.afr, self.afr)
        return f"{self.afr * 100:.1f} %/yr ({lo * 100:.1f}–{hi * 100:.1f})"

    def to_json(self) -> dict[str, object]:
        return {
            "attribute": self.attribute,
            "name": self.name,
            "value": self.value,
            "bin_low": self.low,
            "bin_high": self.high,
            "annual_failure_rate": self.afr,
            "interval": None if self.interval is None else list(self.interval),
            "source": self.source,
        }


def compared_value(a: SmartAttribute) -> int | None:
    """The value Scrutiny compares: the raw value; for 188 the last of a Seagate raw string's
    three non-decreasing numbers."""
    if a.id == 188:
        parts = a.raw_string.split(" ")
        if len(parts) == 3 and all(p.isdigit() for p in parts):
            n = [int(p) for p in parts]
            if n[2] >= n[1] >= n[0]:
                return n[2]
    return a.raw


def bin_for(attr_id: int, value: int) -> _B | None:
    """The first of Scrutiny's bins for ``attr_id`` that holds ``value`` (its rule: ``low ==
    high == value``, or ``low < value <= high``), or None."""
    for b in BINS.get(attr_id, ()):
        low, high = b[0], b[1]
        if (low == high and value == low) or low < value <= high:
            return b
    return None


def evidence(reading: SmartReading) -> tuple[Evidence, ...]:
    """Each binned attribute the drive reports, in attribute order."""
    out: list[Evidence] = []
    for attr_id in ATTRIBUTES:
        a = reading.attribute(attr_id)
        if a is None:
            continue
        v = compared_value(a)
        if v is None:
            continue
        b = bin_for(attr_id, v)
        if b is None:
            out.append(Evidence(attr_id, a.name, v, None, None, None, None))
        else:
            out.append(Evidence(attr_id, a.name, v, b[0], b[1], b[2], b[3]))
    return tuple(out)
