"""Alerts from ``raidman monitor`` (app.routine.events) delivered as mdadm --monitor delivers
them, so an admin without Prometheus hears of a failed disk:

(a) a program, run as ``[program, event, md-device, component]`` (the component only when there
    is one, as mdadm's Monitor.c does), never through a shell, with a time limit; the details in
    environment variables ``RAIDMAN_EVENT``, ``RAIDMAN_ARRAY``, ``RAIDMAN_COMPONENT``,
    ``RAIDMAN_DETAIL``, ``RAIDMAN_HOST``, ``RAIDMAN_FOLDED`` and ``RAIDMAN_<KEY>`` per detail;
(b) mail through the system's sendmail interface (``sendmail -t -oi``, the message on stdin:
    mdadm's own way), to ``mailaddr`` from ``mailfrom``; the body plain text with the array's
    state (its /proc/mdstat lines) and the last kernel lines about it;
(c) a webhook (``webhook``, ``--webhook URL``): a JSON body POSTed per alert, and an ntfy topic
    (``ntfy``, ``--ntfy URL``): app.routine.channels says what each receives;
(d) the log (the journal, under systemd): always.

Quiet hours and a digest (app.routine.digest) hold the events that are not critical and send
them as one ``Digest``.

Where raidman's configuration names no program and no address, mdadm.conf's ``PROGRAM``,
``MAILADDR`` and ``MAILFROM`` are used. The same event of the same array (and component) again
within the cool-down is folded: said in the log, and delivered once the cool-down is over as
"N more since HH:MM". A delivery that fails (the program exits non-zero, times out, sendmail
is missing) is logged and retried later (1 min, doubling, up to 1 h; at most
``MAX_PENDING`` are kept). Deliveries run on threads of their own (``WORKERS`` at once, taken
in the order the events came): a slow program never holds the monitor's sampling, nor the next
event's delivery.
"""

from __future__ import annotations

import queue
import re
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from app.backend import Backend
from app.model.live import LiveSample
from app.routine.channels import json_headers, ntfy_request, webhook_body
from app.routine.config import ConfigError, RoutineConfig, parse_mailaddr, parse_program
from app.routine.digest import Holder
from app.routine.events import AlertEvent, CheckHistory, array_events, sync_alerts
from app.rules.alerts import alert_targets
from app.sync.tracker import ArrayEvent

Sender = Callable[[Sequence[str], Mapping[str, str], "str | None", float], tuple["int | None", str]]
# (url, body, headers, time limit) -> (0 delivered / None, why): backends.linux.notify.post_http
Poster = Callable[[str, bytes, Mapping[str, str], float], tuple["int | None", str]]
HTTP_CHANNELS = ("webhook", "ntfy")
MDADM_CONFS = ("/etc/mdadm/mdadm.conf", "/etc/mdadm.conf")
MAX_PENDING = 100
WORKERS = 4  # deliveries run at once
RETRY_FIRST_S = 60.0
RETRY_MAX_S = 3600.0
KERNEL_LINES = 12
PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_SAFE = re.compile(r"[^A-Za-z0-9._:@+-]")


@dataclass(frozen=True)
class Targets:
    program: str | None = None
    mailaddr: str | None = None
    mailfrom: str | None = None
    sendmail: str = "/usr/sbin/sendmail"
    source: str = "none"
    notes: tuple[str, ...] = ()
    webhook: str | None = None
    ntfy: str | None = None

    @property
    def any(self) -> bool:
        return bool(self.program or self.mailaddr or self.webhook or self.ntfy)

    def text(self) -> str:
        parts = []
        if self.program:
            parts.append(f"program {self.program}")
        if self.mailaddr:
            parts.append(f"mail to {self.mailaddr} via {self.sendmail}")
        if self.webhook:
            parts.append(f"webhook {self.webhook}")
        if self.ntfy:
            parts.append(f"ntfy {self.ntfy}")
        return (", ".join(parts) or "the log only") + f" ({self.source})"


DEMO_SOURCE = "--demo/--replay: nothing simulated leaves this machine"
SIMULATED_NOTE = (
    "a demo or a replay: alerts go to this log and to --alert-program/--mailaddr/--webhook/"
    "--ntfy only, never to a program, address or URL of raidman.toml or of the simulated or "
    "captured mdadm.conf"
)


def resolve_targets(cfg: RoutineConfig, backend: Backend) -> Targets:
    """raidman's configuration first; where it names neither a program nor an address,
    mdadm.conf's PROGRAM / MAILADDR / MAILFROM (read through the backend). A demo or a replay
    (``cfg.simulated``): the command line's only, mdadm.conf never read (issue 41: a demo's
    simulated ``MAILADDR root`` went out through the real sendmail; issue 37: a capture's
    PROGRAM ran as root)."""
    # the HTTP channels are raidman's own: from its configuration or the command line only
    http = {"webhook": cfg.webhook, "ntfy": cfg.ntfy}
    if cfg.simulated:
        named = cfg.alert_program or cfg.mailaddr or cfg.webhook or cfg.ntfy
        source = "the command line" if named else DEMO_SOURCE
        return Targets(
            cfg.alert_program,
            cfg.mailaddr,
            cfg.mailfrom,
            cfg.sendmail,
            source,
            (SIMULATED_NOTE,),
            webhook=cfg.webhook,
            ntfy=cfg.ntfy,
        )
    if cfg.alert_program or cfg.mailaddr:
        return Targets(
            cfg.alert_program,
            cfg.mailaddr,
            cfg.mailfrom,
            cfg.sendmail,
            cfg.source,
            webhook=cfg.webhook,
            ntfy=cfg.ntfy,
        )
    for path in MDADM_CONFS:
        try:
            text = backend.read_text(path)
        except Exception:
            text = None
        if text is None:
            continue
        found = alert_targets(text)
        notes: list[str] = []
        program = mail = mfrom = None
        try:
            program = parse_program(path, found["PROGRAM"]) if "PROGRAM" in found else None
        except ConfigError as e:
            notes.append(str(e))
        try:
            mail = parse_mailaddr(path, found["MAILADDR"]) if "MAILADDR" in found else None
            mfrom = parse_mailaddr(path, found["MAILFROM"]) if "MAILFROM" in found else None
        except ConfigError as e:
            notes.append(str(e))
        return Targets(
            program,
            mail,
            mfrom or cfg.mailfrom,
            cfg.sendmail,
            path,
            tuple(notes),
            webhook=cfg.webhook,
            ntfy=cfg.ntfy,
        )
    return Targets(
        sendmail=cfg.sendmail,
        source=cfg.source if any(http.values()) else "none",
        webhook=cfg.webhook,
        ntfy=cfg.ntfy,
    )


def _clean(text: str, limit: int = 2000) -> str:
    return "".join(c if c == "\n" or " " <= c != "\x7f" else "?" for c in text[:limit])


@dataclass
class _Fold:
    count: int
    since: float
    last: AlertEvent


@dataclass
class _Job:
    channel: str  # program, mail, webhook, ntfy
    argv: tuple[str, ...]  # a program's argv; the URL of an HTTP channel
    env: dict[str, str]
    stdin: str | None
    event: AlertEvent
    tries: int = 0
    due: float = 0.0
    done: threading.Event = field(default_factory=threading.Event)
    ok: bool = False


class Alerter:
    def __init__(
        self,
        backend: Backend,
        targets: Targets,
        sender: Sender,
        *,
        log: Callable[[str], None],
        cooldown_s: float = 600.0,
        timeout_s: float = 30.0,
        host: str = "",
        clock: Callable[[], float] = time.time,
        poster: Poster | None = None,
        holder: Holder | None = None,
    ) -> None:
        self.backend = backend
        self.targets = targets
        self._send = sender
        self._post = poster
        self.check_history: CheckHistory | None = None  # the wear database's, set by Routine
        self.holder = holder if holder is not None else Holder(now=clock())
        self._log = log
        self.cooldown_s = cooldown_s
        self.timeout_s = timeout_s
        self.host = _SAFE.sub("_", host)[:64] or "localhost"
        self._clock = clock
        self._last: dict[tuple[str, str, str], float] = {}
        self._folds: dict[tuple[str, str, str], _Fold] = {}
        self._retry: list[_Job] = []
        self._lock = threading.Lock()
        self._jobs: queue.Queue[_Job | None] = queue.Queue()
        self._prev: LiveSample | None = None
        # a few at once: under load one program run takes seconds, and Fail, DegradedArray and
        # their mails come together (one after another, the last was 15 s late in the VM)
        self._threads = [
            threading.Thread(target=self._loop, name=f"alerts-{i}", daemon=True)
            for i in range(WORKERS)
        ]
        for t in self._threads:
            t.start()
        for n in targets.notes:
            log(f"note: alerts: {n}")

    def configure(self, targets: Targets, cooldown_s: float, timeout_s: float) -> None:
        self.targets, self.cooldown_s, self.timeout_s = targets, cooldown_s, timeout_s

    # ---- events in ---------------------------------------------------------------------------
    def observe(
        self, sample: LiveSample | None, tracked: Sequence[ArrayEvent] = ()
    ) -> list[AlertEvent]:
        """Compare with the last sample: mdadm's array events, and the syncs the session's
        tracker saw begin and end in ``sample`` (``tracked``: its events); sent, and returned.
        A sync already running at the first look or when its array appears sends no start, as
        mdadm (Monitor.c: a new array's percent is RESYNC_UNKNOWN); one whose array stopped
        ends in DeviceDisappeared alone."""
        if sample is None or sample is self._prev:
            return []
        seen = {a.name for a in self._prev.arrays} if self._prev is not None else set()
        events = array_events(self._prev, sample)
        events += sync_alerts(
            (
                e
                for e in tracked
                if (e.kind != "sync-started" or e.array in seen)
                and not (e.sync is not None and e.sync.outcome == "array stopped")
            ),
            self.check_history,
        )
        self._prev = sample
        for e in events:
            self.emit(e)
        return events

    def emit(self, e: AlertEvent, *, fold: bool = True) -> list[_Job]:
        now = self._clock()
        where = " ".join(x for x in (e.md_device, e.component_path) if x)
        self._log(f"alert: {e.event} {where}: {e.detail}".rstrip(": "))
        last = self._last.get(e.key)
        if fold and last is not None and now - last < self.cooldown_s:
            f = self._folds.get(e.key)
            if f is None:
                self._folds[e.key] = _Fold(1, now, e)
            else:
                f.count += 1
                f.last = e
            return []
        self._last[e.key] = now
        if not self.holder.admit(e, now):
            self._log(f"alert: {e.event} {where}: held for the digest".replace("  ", " "))
            return []
        return self._deliver(e, "")

    def tick(self) -> None:
        """Folded events whose cool-down is over go out as one; what quiet hours or the digest
        held goes out as one Digest when due; failed deliveries are retried."""
        now = self._clock()
        digest = self.holder.due(now)
        if digest is not None:
            self._log(f"alert: Digest: {digest.detail.splitlines()[0]}")
            self._deliver(digest, "")
        for key, f in list(self._folds.items()):
            if now - self._last.get(key, 0.0) >= self.cooldown_s:
                del self._folds[key]
                self._last[key] = now
                since = time.strftime("%H:%M:%S", time.localtime(f.since))
                self._deliver(f.last, f"{f.count} more since {since}", folded=f.count)
        with self._lock:
            due = [j for j in self._retry if j.due <= now]
            self._retry = [j for j in self._retry if j.due > now]
        for j in due:
            self._jobs.put(j)

    def close(self, wait_s: float = 5.0) -> None:
        for _ in self._threads:
            self._jobs.put(None)
        end = time.monotonic() + wait_s
        for t in self._threads:
            t.join(max(0.0, end - time.monotonic()))

    # ---- delivery ----------------------------------------------------------------------------
    def _deliver(self, e: AlertEvent, note: str, folded: int = 0) -> list[_Job]:
        t = self.targets
        jobs: list[_Job] = []
        env = {
            "PATH": PATH,
            "RAIDMAN_EVENT": e.event,
            "RAIDMAN_ARRAY": e.md_device,
            "RAIDMAN_COMPONENT": e.component_path,
            "RAIDMAN_DETAIL": _clean(e.detail + (f" ({note})" if note else ""), 1000),
            "RAIDMAN_HOST": self.host,
            "RAIDMAN_FOLDED": str(folded),
        }
        for k, v in e.extra.items():
            env[f"RAIDMAN_{_SAFE.sub('_', k).upper()[:40]}"] = _clean(str(v), 200)
        if t.program:
            argv = [t.program, e.event, e.md_device or self.host]
            if e.component_path:
                argv.append(e.component_path)
            jobs.append(_Job("program", tuple(argv), env, None, e))
        if t.mailaddr:
            msg = self.message(e, note)
            jobs.append(_Job("mail", (t.sendmail, "-t", "-oi"), {"PATH": PATH}, msg, e))
        if t.webhook:
            body = webhook_body(e, self.host, note, folded, self._clock())
            jobs.append(_Job("webhook", (t.webhook,), json_headers(), body, e))
        if t.ntfy:
            text, headers = ntfy_request(e, self.host, note)
            jobs.append(_Job("ntfy", (t.ntfy,), headers, text, e))
        for j in jobs:
            self._jobs.put(j)
        return jobs

    def message(self, e: AlertEvent, note: str = "") -> str:
        t = self.targets
        sender = t.mailfrom or "raidman monitoring <root>"
        subject = f"{e.event} event on {e.md_device or self.host}:{self.host}"
        lines = [
            f"From: {sender}",
            f"To: {t.mailaddr}",
            f"Subject: {subject}",
            "Content-Type: text/plain; charset=utf-8",
            "",
            "This is an automatically generated mail message from raidman monitor",
            f"running on {self.host}",
            "",
            f"A {e.event} event had been detected on md device {e.md_device or '(none)'}."
            if e.array
            else f"A {e.event} event from raidman monitor.",
        ]
        if e.component_path:
            lines.append(f"It could be related to component device {e.component_path}.")
        lines += ["", _clean(e.detail)]
        if note:
            lines.append(f"({note})")
        state = self._array_state(e.array) if e.array else ""
        if state:
            lines += ["", "The array now (/proc/mdstat):", state]
        kern = self._kernel_lines(e)
        if kern:
            lines += ["", "Last kernel lines about it:", kern]
        return "\n".join(lines) + "\n"

    def _array_state(self, array: str) -> str:
        try:
            text = self.backend.read_text("/proc/mdstat") or ""
        except Exception:
            return ""
        out: list[str] = []
        for line in text.splitlines():
            if out and not line.strip():
                break
            if out or line.startswith(f"{array} :"):
                out.append(line)
        try:
            deg = self.backend.read_text(f"/sys/block/{array}/md/degraded")
            st = self.backend.read_text(f"/sys/block/{array}/md/array_state")
        except Exception:
            deg = st = None
        if st is not None:
            out.append(f"array_state {st.strip()}, degraded {(deg or '?').strip()}")
        return _clean("\n".join(out[:20]))

    def _kernel_lines(self, e: AlertEvent) -> str:
        try:
            r = self.backend.run(["dmesg"], timeout=5)
        except Exception:
            return ""
        if r.returncode != 0:
            return ""
        words = [w for w in (e.array, e.component) if w]
        lines = [ln for ln in r.stdout.splitlines() if any(w in ln for w in words)]
        return _clean("\n".join(lines[-KERNEL_LINES:]), 4000)

    def _loop(self) -> None:
        while True:
            j = self._jobs.get()
            if j is None:
                return
            try:
                if j.channel in HTTP_CHANNELS:
                    if self._post is None:
                        rc, why = None, "no HTTP client in this monitor"
                    else:
                        body = (j.stdin or "").encode("utf-8", errors="replace")
                        rc, why = self._post(j.argv[0], body, j.env, self.timeout_s)
                else:
                    rc, why = self._send(j.argv, j.env, j.stdin, self.timeout_s)
            except Exception as ex:  # keep the thread alive
                rc, why = None, f"{ex.__class__.__name__}: {ex}"
            j.tries += 1
            if rc == 0:
                j.ok = True
                j.done.set()
                self._log(f"alert: {j.event.event} delivered by {j.channel}")
                continue
            delay = min(RETRY_MAX_S, RETRY_FIRST_S * 2 ** (j.tries - 1))
            j.due = self._clock() + delay
            with self._lock:
                if len(self._retry) < MAX_PENDING:
                    self._retry.append(j)
                    self._log(
                        f"alert: {j.event.event} not delivered by {j.channel}: {why}; "
                        f"retried in {delay:.0f} s"
                    )
                else:
                    self._log(
                        f"alert: {j.event.event} not delivered by {j.channel}: {why}; dropped"
                    )
            j.done.set()
