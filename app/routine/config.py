"""raidman's routine configuration: ``raidman.toml`` beside hosts.toml (app.paths.config_dir).

::

    [checks]
    every = "monthly"        # or a duration: "7d", "2m"; "off": no scheduled checks
    at = "01:00"             # monthly: the first Sunday of the month at this local time
    window = "6h"            # stopped at the window's end, resumed in the next one
    max_age_days = 35        # a finding when the last finished check is older
    arrays = ["md127"]       # only these (default: every array with redundancy)
    ignore_autocheck = false # true: schedule even where /etc/default/mdadm says AUTOCHECK=true

    [checks.md127]           # one array's own schedule: every, at, window
    every = "7d"

    [alerts]
    program = "/usr/local/sbin/md-alert"   # run as [program, event, md-device, component]
    mailaddr = "root"                      # mail through sendmail
    mailfrom = "raidman@host"
    sendmail = "/usr/sbin/sendmail"
    cooldown = "10m"         # the same event of the same array again within it: folded
    timeout = "30s"          # the program's, sendmail's and a POST's time limit
    wear_high = 1.5          # WearHigh: a sync wrote more than this × a member
    webhook = "https://hooks.example.org/raid"  # POST, a JSON body per alert
    ntfy = "https://ntfy.sh/my-raid-topic"      # POST to an ntfy topic (title, priority, tags)
    quiet = "22:00-07:00"    # events that are not critical wait, and go out as one digest after
    digest = "24h"           # events that are not critical go out as one digest this often
    heartbeat = "24h"        # a Heartbeat this often: the channels work and the monitor runs
    degraded_for = "6h"      # DegradedFor: an array degraded this long (and again as long after)
    rebuild_slow = 30        # RebuildSlow: a rebuild this many % below its forecast
    member_latency = 3.0     # MemberLatency: a member's latency this × its peers' during a sync

The file decides what root runs (``program``), so it is read as a trusted file (root's or the
running user's, not writable by group or others, bounded) and checked key by key: anything out
of shape is refused with one line naming the file and the key.
"""

from __future__ import annotations

import dataclasses
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from app import statefiles
from app.parsers.safe import TomlError, toml_loads
from app.paths import config_dir
from app.statefiles import StateFileError

CONFIG_NAME = "raidman.toml"
MAX_BYTES = 64 * 1024
MAX_NESTING = 8
MAX_ARRAYS = 256
MONTHLY = "monthly"
DEFAULT_WINDOW_S = 6 * 3600.0
DEFAULT_AT = (1, 0)
DEFAULT_COOLDOWN_S = 600.0
DEFAULT_TIMEOUT_S = 30.0
DEFAULT_WEAR_HIGH = 1.5
DEFAULT_DEGRADED_FOR_S = 6 * 3600.0
DEFAULT_REBUILD_SLOW = 0.30
DEFAULT_LATENCY_FACTOR = 3.0
MAX_URL = 2048
MIN_EVERY_S = 60.0
MAX_DURATION_S = 400 * 86400.0

_DURATION = re.compile(r"([0-9]{1,9}(?:\.[0-9]{1,3})?)\s*(s|m|h|d|w)?")
_UNITS = {"s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 7 * 86400.0}
_ADDR = re.compile(r"[A-Za-z0-9._%+@-]{1,254}(,[A-Za-z0-9._%+@-]{1,254}){0,15}")
_ARRAY = re.compile(r"md[0-9]{1,4}|md_[A-Za-z0-9_.-]{1,32}")


class ConfigError(ValueError):
    """The configuration cannot be used; the message (one line) is for the user."""


def parse_duration(text: str, what: str = "duration") -> float:
    """ "30s", "2m", "6h", "7d", "1w", or a number of seconds -> seconds."""
    m = _DURATION.fullmatch(text.strip()) if isinstance(text, str) else None
    if m is None:
        raise ConfigError(f"{what}: {str(text)[:40]!r} is not a duration (e.g. 30s, 2m, 6h, 7d)")
    v = float(m.group(1)) * _UNITS[m.group(2) or "s"]
    if not math.isfinite(v) or not 0 < v <= MAX_DURATION_S:
        raise ConfigError(f"{what}: {text!r} is not between 1 second and 400 days")
    return v


@dataclass(frozen=True)
class RoutineConfig:
    # None: monthly (first Sunday at ``at``); 0: off; else seconds between windows
    check_every_s: float | None = None
    check_at: tuple[int, int] = DEFAULT_AT
    check_window_s: float = DEFAULT_WINDOW_S
    max_age_days: float = 35.0
    arrays: tuple[str, ...] = ()
    ignore_autocheck: bool = False
    alert_program: str | None = None
    mailaddr: str | None = None
    mailfrom: str | None = None
    sendmail: str = "/usr/sbin/sendmail"
    cooldown_s: float = DEFAULT_COOLDOWN_S
    timeout_s: float = DEFAULT_TIMEOUT_S
    wear_high: float = DEFAULT_WEAR_HIGH
    webhook: str | None = None  # a URL: POST a JSON body per alert
    ntfy: str | None = None  # an ntfy topic URL
    quiet: tuple[tuple[int, int], tuple[int, int]] | None = None  # (start, end) local H:M
    digest_s: float | None = None  # events that are not critical, as one digest this often
    heartbeat_s: float | None = None
    degraded_for_s: float = DEFAULT_DEGRADED_FOR_S
    rebuild_slow: float = DEFAULT_REBUILD_SLOW  # a share: 0.3 = 30 % below the forecast
    latency_factor: float = DEFAULT_LATENCY_FACTOR
    source: str = "defaults"
    # where a schedule that overrides Debian's AUTOCHECK came from ("--check-every"); "" none
    schedule_from: str = ""
    # a demo or a replay: alerts go to the log and to the command line's channels only, never
    # to a program or address from the configuration or the (simulated, captured) mdadm.conf
    simulated: bool = False
    notes: tuple[str, ...] = field(default=(), compare=False)
    # array -> its own schedule ([checks.mdN]: every, at, window over the [checks] ones)
    per_array: dict[str, RoutineConfig] = field(default_factory=dict, compare=False)

    def for_array(self, name: str) -> RoutineConfig:
        return self.per_array.get(name, self)

    @property
    def checks_off(self) -> bool:
        return self.check_every_s == 0

    def schedule_text(self) -> str:
        if self.checks_off:
            return "scheduled checks off"
        if self.check_every_s is None:
            h, mi = self.check_at
            when = f"monthly, first Sunday {h:02d}:{mi:02d}"
        else:
            when = f"every {self.check_every_s:g} s"
        return f"{when}, window {self.check_window_s:g} s"


def _text(where: str, key: str, v: Any, limit: int = 4096) -> str:
    if not isinstance(v, str) or not v or len(v) > limit or any(ord(c) < 32 for c in v):
        raise ConfigError(f"{where}: {key} is not a line of text")
    return v


def _number(where: str, key: str, v: Any, lo: float, hi: float) -> float:
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ConfigError(f"{where}: {key} is not a number")
    if isinstance(v, float) and not math.isfinite(v):  # (an int of 400 digits is no float)
        raise ConfigError(f"{where}: {key} is not a number")
    if not lo <= v <= hi:  # an int compares exactly, however long
        raise ConfigError(f"{where}: {key} is not between {lo:g} and {hi:g}")
    return float(v)


def parse_program(where: str, v: Any) -> str:
    p = _text(where, "program", v)
    if not p.startswith("/"):
        raise ConfigError(f"{where}: program must be an absolute path (it is run, never a shell)")
    return p


def parse_mailaddr(where: str, v: Any) -> str:
    a = _text(where, "mailaddr", v, 1024)
    if not _ADDR.fullmatch(a.replace(" ", "")):
        raise ConfigError(f"{where}: mailaddr is not a mail address list")
    return a.replace(" ", "")


def parse_url(where: str, key: str, v: Any) -> str:
    """A webhook's or an ntfy topic's URL: http or https, a host, no blanks or control
    characters, at most 2,048 characters."""
    u = _text(where, key, v, MAX_URL)
    try:
        parts = urlsplit(u)
        ok = parts.scheme in ("http", "https") and bool(parts.hostname) and parts.port != 0
    except ValueError:  # "http://[::1", a port out of range
        ok = False
    if not ok or any(c.isspace() for c in u):
        raise ConfigError(f"{where}: {key} is not an http:// or https:// URL")
    return u


def _hhmm(where: str, key: str, text: str) -> tuple[int, int]:
    m = re.fullmatch(r"([01]?[0-9]|2[0-3]):([0-5][0-9])", text.strip())
    if m is None:
        raise ConfigError(f"{where}: {key} is not a time of day (HH:MM)")
    return int(m.group(1)), int(m.group(2))


def parse_quiet(where: str, v: Any) -> tuple[tuple[int, int], tuple[int, int]]:
    """ "22:00-07:00" -> ((22, 0), (7, 0)): the hours (local time) when events that are not
    critical wait for the digest."""
    text = _text(where, "alerts.quiet", v, 20)
    start, sep, end = text.partition("-")
    if not sep:
        raise ConfigError(f"{where}: alerts.quiet is not a span of the day (22:00-07:00)")
    a, b = _hhmm(where, "alerts.quiet", start), _hhmm(where, "alerts.quiet", end)
    if a == b:
        raise ConfigError(f"{where}: alerts.quiet starts and ends at the same time")
    return a, b


def _off_or_duration(where: str, key: str, v: Any) -> float | None:
    text = _text(where, key, v, 40)
    return None if text == "off" else parse_duration(text, f"{where}: {key}")


def _schedule(where: str, t: dict[str, Any], kw: dict[str, Any], table: str = "checks") -> None:
    if "every" in t:
        e = _text(where, f"{table}.every", t["every"], 40)
        if e == MONTHLY:
            kw["check_every_s"] = None
        elif e == "off":
            kw["check_every_s"] = 0.0
        else:
            v = parse_duration(e, f"{where}: {table}.every")
            if v < MIN_EVERY_S:
                raise ConfigError(f"{where}: {table}.every is shorter than a minute")
            kw["check_every_s"] = v
    if "at" in t:
        at = _text(where, f"{table}.at", t["at"], 5)
        m = re.fullmatch(r"([01]?[0-9]|2[0-3]):([0-5][0-9])", at)
        if m is None:
            raise ConfigError(f"{where}: {table}.at is not a time of day (HH:MM)")
        kw["check_at"] = (int(m.group(1)), int(m.group(2)))
    if "window" in t:
        kw["check_window_s"] = parse_duration(
            _text(where, f"{table}.window", t["window"], 40), f"{where}: {table}.window"
        )


def _checks(where: str, t: Any, kw: dict[str, Any], per: dict[str, dict[str, Any]]) -> None:
    if not isinstance(t, dict):
        raise ConfigError(f"{where}: [checks] is not a table")
    known = {"every", "at", "window", "max_age_days", "arrays", "ignore_autocheck"}
    for name, sub in t.items():
        if name in known:
            continue
        if not _ARRAY.fullmatch(name) or not isinstance(sub, dict):
            raise ConfigError(f"{where}: [checks] has an unknown key {name[:40]!r}")
        if len(per) >= MAX_ARRAYS:
            raise ConfigError(f"{where}: more than {MAX_ARRAYS} [checks.ARRAY] tables")
        bad = set(sub) - {"every", "at", "window"}
        if bad:
            raise ConfigError(f"{where}: [checks.{name}] has an unknown key {sorted(bad)[0]!r}")
        per[name] = {}
        _schedule(where, sub, per[name], f"checks.{name}")
    _schedule(where, t, kw)
    if "max_age_days" in t:
        kw["max_age_days"] = _number(where, "checks.max_age_days", t["max_age_days"], 0.0001, 3650)
    if "arrays" in t:
        arr = t["arrays"]
        if not isinstance(arr, list) or len(arr) > MAX_ARRAYS:
            raise ConfigError(f"{where}: checks.arrays is not a list of md names")
        for a in arr:
            if not isinstance(a, str) or not _ARRAY.fullmatch(a):
                raise ConfigError(f"{where}: checks.arrays: {str(a)[:40]!r} is not an md name")
        kw["arrays"] = tuple(arr)
    if "ignore_autocheck" in t:
        if not isinstance(t["ignore_autocheck"], bool):
            raise ConfigError(f"{where}: checks.ignore_autocheck is not true or false")
        kw["ignore_autocheck"] = t["ignore_autocheck"]


def _alerts(where: str, t: Any, kw: dict[str, Any]) -> None:
    if not isinstance(t, dict):
        raise ConfigError(f"{where}: [alerts] is not a table")
    known = {"program", "mailaddr", "mailfrom", "sendmail", "cooldown", "timeout", "wear_high"}
    known |= {"webhook", "ntfy", "quiet", "digest", "heartbeat", "degraded_for"}
    known |= {"rebuild_slow", "member_latency"}
    unknown = set(t) - known
    if unknown:
        raise ConfigError(f"{where}: [alerts] has an unknown key {sorted(unknown)[0]!r}")
    if "program" in t:
        kw["alert_program"] = parse_program(where, t["program"])
    if "mailaddr" in t:
        kw["mailaddr"] = parse_mailaddr(where, t["mailaddr"])
    if "mailfrom" in t:
        kw["mailfrom"] = parse_mailaddr(where, t["mailfrom"])
    if "sendmail" in t:
        s = _text(where, "alerts.sendmail", t["sendmail"])
        if not s.startswith("/"):
            raise ConfigError(f"{where}: alerts.sendmail must be an absolute path")
        kw["sendmail"] = s
    if "cooldown" in t:
        kw["cooldown_s"] = parse_duration(
            _text(where, "alerts.cooldown", t["cooldown"], 40), f"{where}: alerts.cooldown"
        )
    if "timeout" in t:
        v = parse_duration(_text(where, "alerts.timeout", t["timeout"], 40), "alerts.timeout")
        if v > 600:
            raise ConfigError(f"{where}: alerts.timeout is longer than 10 minutes")
        kw["timeout_s"] = v
    if "wear_high" in t:
        kw["wear_high"] = _number(where, "alerts.wear_high", t["wear_high"], 1.0, 100.0)
    for key in ("webhook", "ntfy"):
        if key in t:
            kw[key] = parse_url(where, f"alerts.{key}", t[key])
    if "quiet" in t:
        kw["quiet"] = parse_quiet(where, t["quiet"])
    if "digest" in t:
        kw["digest_s"] = _off_or_duration(where, "alerts.digest", t["digest"])
    if "heartbeat" in t:
        kw["heartbeat_s"] = _off_or_duration(where, "alerts.heartbeat", t["heartbeat"])
    if "degraded_for" in t:
        text = _text(where, "alerts.degraded_for", t["degraded_for"], 40)
        kw["degraded_for_s"] = parse_duration(text, f"{where}: alerts.degraded_for")
    if "rebuild_slow" in t:
        pct = _number(where, "alerts.rebuild_slow", t["rebuild_slow"], 1.0, 99.0)
        kw["rebuild_slow"] = pct / 100
    if "member_latency" in t:
        kw["latency_factor"] = _number(
            where, "alerts.member_latency", t["member_latency"], 1.5, 100.0
        )


def parse_config(text: str, where: str = CONFIG_NAME) -> RoutineConfig:
    if len(text) > MAX_BYTES:
        raise ConfigError(f"{where}: larger than {MAX_BYTES} bytes")
    try:
        data = toml_loads(text, max_nesting=MAX_NESTING)
    except TomlError as e:
        raise ConfigError(f"{where}: {e}") from None
    unknown = set(data) - {"checks", "alerts"}
    if unknown:
        raise ConfigError(f"{where}: unknown table or key {sorted(unknown)[0]!r}")
    kw: dict[str, Any] = {"source": where}
    per: dict[str, dict[str, Any]] = {}
    if "checks" in data:
        _checks(where, data["checks"], kw, per)
    if "alerts" in data:
        _alerts(where, data["alerts"], kw)
    base = RoutineConfig(**kw)
    if per:
        base = dataclasses.replace(
            base, per_array={n: dataclasses.replace(base, **o) for n, o in per.items()}
        )
    return base


def config_path() -> Path:
    return config_dir() / CONFIG_NAME


def load_config(path: Path | None = None) -> RoutineConfig:
    """The configuration file (defaults when there is none); :class:`ConfigError` when it cannot
    be used (unsafe owner or mode, too large, not TOML, a key out of shape)."""
    p = path or config_path()
    try:
        text = statefiles.read_trusted(p, what="raidman config", max_bytes=MAX_BYTES)
    except StateFileError as e:
        raise ConfigError(str(e)) from None
    if text is None:
        return RoutineConfig()
    return parse_config(text, str(p))
