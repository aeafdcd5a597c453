r"""A plan is data: typed operations (``app.plans.ops``) in order, each with why it runs. Building
one has no side effects.

A step is an operation and its reason; its argv, stdin and piped producer are rendered from the
operation. A plan read from a file is untrusted input: ``Plan.from_json`` checks every field's
type and size, refuses control, invisible and bidi characters in its texts, and decodes each
step's argv into its operation once (``app.plans.ops.decode``) — a step that does not decode is
refused with the step's number and the reason. ``load_plan_file`` adds the file-level limits
(size, UTF-8, NUL, JSON depth, duplicate keys). Every failure is a ``PlanFileError`` with one line
saying what is wrong.

Whether a step destroys data and the name typed to confirm come from the operations
(``Op.destroys``): a file's ``"destructive"`` and ``"target"`` are read for their shape and
otherwise ignored (the target of a destructive plan is what its first destroying step
overwrites; a weakening plan's is set by its builder and kept).

``disks`` records the identity (serial, WWN) of every whole disk a step writes to when the plan is
built (``app.plans.guards.identity``); ``apply`` and the executor compare it with the disk now under
that kernel name. ``None``: made by an older raidman (no identities recorded).

``Plan.digest`` is ``sha256:`` over a canonical JSON (sorted keys, no spaces, UTF-8) of the whole
plan as written: title, kind, target, warnings, notes, params, the steps (argv, stdin, producer,
why) and the disks. It is an integrity check against accidents (a plan edited by hand, cut
short, or mixed up with another), NOT a signature: anyone who can write the file can recompute
it. What keeps a hostile file harmless is that every step must decode into an operation raidman
plans, and everything that decides confirmation is derived from the operations.

``escape_controls`` (app/escape.py) shows text with control characters as visible ``\x1b`` /
``\u202e`` escapes; ``Plan.escaped()`` is the display copy.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import unicodedata
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from app.escape import escape_controls as escape_controls  # the plan modules import it here
from app.escape import is_control as _is_control
from app.plans.ops import Op, OpError, StopArray, decode
from app.plans.outcome.consequence_types import Consequences

MAX_FILE_BYTES = 1024 * 1024
# the largest plan raidman makes: a benchmark (4 disks, the 3 default chunks: 241 steps)
MAX_STEPS = 320
MAX_ARGV = 128
MAX_ARG_CHARS = 4096
MAX_TEXT_CHARS = 8192
MAX_LIST = 256
MAX_PARAMS = 64
STEP_KEYS = frozenset({"argv", "why", "destructive", "stdin", "stdin_from"})
PLAN_KEYS = frozenset(
    {
        "title",
        "kind",
        "target",
        "warnings",
        "notes",
        "params",
        "steps",
        "digest",
        "preflight",
        "host",
        "backend",  # the backend it was made on: apply refuses it on another (app.commands.apply)
        "disks",
        "consequences",  # written for the reader, never read back: recomputed from the machine
    }
)
DISK_KEYS = frozenset({"name", "serial", "wwn"})


class PlanFileError(ValueError):
    """A plan (file) that is not in shape; ``str()`` is one line saying why."""


class PlanRefused(PlanFileError):
    """A plan file in shape that raidman will not run (its owner, a step it never plans)."""


class StepRefused(PlanRefused):
    """A step that is not an operation raidman plans (``str()``: "step N: why")."""


# characters that print as nothing, or as something else (a filler, a combining overlay, a
# space that is not one): text in a plan is raidman's own English, device names and numbers
_INVISIBLE = frozenset("\u115f\u1160\u3164\uffa0\u2800\u180e")


def invisible(ch: str) -> bool:
    """A control or format character (bidi, zero-width), or one that shows as nothing or
    overlays its neighbour: combining marks, fillers, spaces other than the plain one."""
    if _is_control(ch) or ch in _INVISIBLE:
        return True
    cat = unicodedata.category(ch)
    return cat[0] == "M" or (cat == "Zs" and ch != " ")


def _text(v: Any, what: str, *, limit: int = MAX_TEXT_CHARS, newlines: bool = False) -> str:
    if not isinstance(v, str):
        raise PlanFileError(f"{what} must be a string, not {type(v).__name__}")
    if len(v) > limit:
        raise PlanFileError(f"{what} is too long ({len(v)} characters, at most {limit})")
    if v.isascii() and v.isprintable():
        return v
    for ch in v:
        if (newlines and ch in "\n\t") or not invisible(ch):
            continue
        kind = "control" if _is_control(ch) else "invisible"
        raise PlanFileError(
            f"{what} contains the {kind} character {escape_controls(ch)!s}: refused"
        )
    return v


def _str_list(v: Any, what: str, *, limit: int, newlines: bool = False) -> tuple[str, ...]:
    if not isinstance(v, list):
        raise PlanFileError(f"{what} must be a list of strings, not {type(v).__name__}")
    if len(v) > limit:
        raise PlanFileError(f"{what} has too many entries ({len(v)}, at most {limit})")
    item_limit = MAX_ARG_CHARS if not newlines else MAX_TEXT_CHARS
    return tuple(
        _text(x, f"{what}[{i}]", limit=item_limit, newlines=newlines) for i, x in enumerate(v)
    )


def _param_value(v: Any, where: str, depth: int) -> None:
    """JSON values of bounded depth and size; strings without control characters."""
    if v is None or isinstance(v, (bool, int, float)):
        return
    if isinstance(v, str):
        _text(v, where, limit=MAX_ARG_CHARS)
        return
    if depth >= 3:
        raise PlanFileError(f"{where} is nested too deeply")
    if isinstance(v, list):
        if len(v) > MAX_LIST:
            raise PlanFileError(f"{where} has too many entries")
        for i, x in enumerate(v):
            _param_value(x, f"{where}[{i}]", depth + 1)
        return
    if isinstance(v, dict):
        if len(v) > MAX_PARAMS:
            raise PlanFileError(f"{where} has too many keys")
        for k, x in v.items():
            _text(k, f"a key of {where}", limit=64)
            _param_value(x, f"{where}.{k}", depth + 1)
        return
    raise PlanFileError(f"{where} is not a JSON value")  # pragma: no cover - json.loads types


def _params(v: Any) -> dict[str, Any]:
    """Plain JSON of bounded depth (the wizard's inputs, for the record)."""
    if not isinstance(v, dict):
        raise PlanFileError(f"'params' must be an object, not {type(v).__name__}")
    _param_value(v, "params", 0)
    return dict(v)


def _sha256(data: Any) -> str:
    canon = json.dumps(data, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return "sha256:" + hashlib.sha256(canon.encode("utf-8")).hexdigest()


@dataclass(frozen=True, slots=True)
class DiskIdentity:
    """A whole disk as the plan saw it: its kernel name and what identifies it across reboots."""

    name: str
    serial: str | None = None
    wwn: str | None = None

    def describe(self) -> str:
        ids = [
            f"serial {self.serial}" if self.serial else "",
            f"WWN {self.wwn}" if self.wwn else "",
        ]
        return f"{self.name} ({', '.join(i for i in ids if i) or 'no serial or WWN'})"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "serial": self.serial, "wwn": self.wwn}

    @classmethod
    def from_json(cls, d: Any, where: str) -> DiskIdentity:
        if not isinstance(d, dict):
            raise PlanFileError(f"{where} must be an object, not {type(d).__name__}")
        extra = sorted(set(d) - DISK_KEYS)
        if extra:
            raise PlanFileError(f"{where} has unknown keys: {escape_controls(', '.join(extra))}")
        name = _text(d.get("name", ""), f"{where}.name", limit=64)
        if not name:
            raise PlanFileError(f"{where} has no 'name'")
        ids = [
            None if d.get(k) is None else _text(d[k], f"{where}.{k}", limit=256)
            for k in ("serial", "wwn")
        ]
        return cls(name, ids[0], ids[1])


@dataclass(frozen=True, slots=True)
class Step:
    """One operation of a plan and why it runs; what runs is rendered from the operation."""

    op: Op
    why: str = ""

    @classmethod
    def decode(
        cls,
        argv: Iterable[str],
        why: str = "",
        destructive: bool = False,
        stdin: str | None = None,
        stdin_from: Iterable[str] | None = None,
    ) -> Step:
        """The step whose operation renders ``argv`` (OpError when none does). ``destructive``
        is not read: whether a step destroys data is its operation's."""
        del destructive
        producer = tuple(stdin_from) if stdin_from is not None else None
        return cls(decode(tuple(argv), stdin, producer), why)

    @property
    def argv(self) -> tuple[str, ...]:
        return self.op.argv()

    @property
    def stdin(self) -> str | None:
        """Fed to the program (e.g. a value for ``tee /sys/...``)."""
        return self.op.stdin()

    @property
    def stdin_from(self) -> tuple[str, ...] | None:
        """A read-only program whose stdout becomes this step's stdin (a pipe, run by the
        executor through backend.run too): ``mdadm --detail --brief MD`` feeding ``tee -a
        mdadm.conf`` (the ARRAY line needs the UUID mdadm picks at create)."""
        return self.op.stdin_from()

    @property
    def destructive(self) -> bool:
        return self.op.destroys() is not None

    def shell(self) -> str:
        """The step as one copyable, properly quoted shell line."""
        line = shlex.join(self.argv)
        producer = self.stdin_from
        if producer is not None:
            return f"{shlex.join(producer)} | {line}"
        stdin = self.stdin
        if stdin is not None:
            return f"printf '%s\\n' {shlex.quote(stdin.rstrip(chr(10)))} | {line}"
        return line

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "argv": list(self.argv),
            "why": self.why,
            "destructive": self.destructive,
        }
        if self.stdin is not None:
            d["stdin"] = self.stdin
        if self.stdin_from is not None:
            d["stdin_from"] = list(self.stdin_from)
        return d

    @classmethod
    def from_json(cls, d: Any, where: str = "step") -> Step:
        if not isinstance(d, dict):
            raise PlanFileError(f"{where} must be an object, not {type(d).__name__}")
        extra = sorted(set(d) - STEP_KEYS)
        if extra:
            raise PlanFileError(f"{where} has unknown keys: {escape_controls(', '.join(extra))}")
        if "argv" not in d:
            raise PlanFileError(f"{where} has no 'argv'")
        argv = _str_list(d["argv"], f"{where}.argv", limit=MAX_ARGV)
        if not argv:
            raise PlanFileError(f"{where}.argv must name a program")
        why = _text(d.get("why", ""), f"{where}.why", limit=MAX_TEXT_CHARS)
        if not isinstance(d.get("destructive", False), bool):
            raise PlanFileError(f"{where}.destructive must be true or false")
        stdin = d.get("stdin")
        if stdin is not None:
            stdin = _text(stdin, f"{where}.stdin", limit=MAX_TEXT_CHARS * 8, newlines=True)
        stdin_from = d.get("stdin_from")
        if stdin_from is not None:
            stdin_from = _str_list(stdin_from, f"{where}.stdin_from", limit=MAX_ARGV)
            if not stdin_from:
                raise PlanFileError(f"{where}.stdin_from must name a program")
            if stdin is not None:
                raise PlanFileError(f"{where} has both 'stdin' and 'stdin_from'")
        try:
            return cls.decode(argv, why, stdin=stdin, stdin_from=stdin_from)
        except OpError as e:
            raise StepRefused(f"{where}: {e}") from None

    def escaped(self) -> Step:
        """A display copy (an operation's fields hold no control characters: it checked them)."""
        return Step(self.op, escape_controls(self.why))


@dataclass(frozen=True, slots=True)
class Plan:
    title: str
    steps: tuple[Step, ...]
    target: str = ""  # the device a destructive plan acts on: typed by the user to confirm
    warnings: tuple[str, ...] = ()
    kind: str = ""  # which wizard/rule built it, e.g. "create-array"
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    notes: tuple[str, ...] = ()  # explanations shown with the plan (geometry, bitmap, conf diff)
    # identities of the disks destructive steps write to (app.plans.guards.identity); None: not recorded
    disks: tuple[DiskIdentity, ...] | None = None

    def __post_init__(self) -> None:
        # the name typed to confirm is what the first destroying step overwrites
        derived = confirm_target(s.op for s in self.steps)
        if derived is not None and derived != self.target:
            object.__setattr__(self, "target", derived)

    # what running it means (app.plans.outcome.consequences); never taken from a plan file
    consequences: Consequences | None = field(default=None, hash=False, compare=False)

    @property
    def destructive(self) -> bool:
        return any(s.destructive for s in self.steps)

    @property
    def confirm_word(self) -> str:
        """What the user types to confirm: the thing at risk (data the plan loses, an array whose
        sync it stops or that it leaves weaker: ``Consequences.at_risk``), else the target. A
        retire erases one whole disk: its serial is typed, read off the disk's label."""
        if self.kind == "retire":
            serial = retired_serial(self)
            if serial:
                return serial
        c = self.consequences
        return c.at_risk if c is not None and c.at_risk else self.target

    @property
    def needs_typed(self) -> bool:
        """The user must type the target's name: the plan destroys data, or its consequences
        leave an array weaker than now (``Consequences.confirm``)."""
        c = self.consequences
        return self.destructive or (c is not None and c.confirm == "typed")

    def shell_script(self) -> str:
        p = self.escaped()  # no text from the plan can end a comment and become a command
        lines = ["#!/bin/sh", f"# {p.title}", f"# digest: {self.digest}"]
        lines += [f"# note: {n}" for line in p.notes for n in line.splitlines()]
        lines += [f"# warning: {w}" for line in p.warnings for w in line.splitlines()]
        lines.append("set -e")
        for i, s in enumerate(self.steps, 1):
            lines.append(
                f"# {i}. {escape_controls(s.why)}" + (" [DESTROYS DATA]" if s.destructive else "")
            )
            lines.append(s.shell())
        return "\n".join(lines) + "\n"

    @property
    def digest(self) -> str:
        """Integrity (not authenticity): see the module docstring."""
        return _sha256(
            {
                "title": self.title,
                "kind": self.kind,
                "target": self.target,
                "warnings": list(self.warnings),
                "notes": list(self.notes),
                "params": self.params,
                "steps": [s.to_json() for s in self.steps],
                "disks": None if self.disks is None else [d.to_json() for d in self.disks],
            }
        )

    def escaped(self) -> Plan:
        """A display copy of the plan: control characters in every text shown as escapes."""
        return replace(
            self,
            title=escape_controls(self.title),
            steps=tuple(s.escaped() for s in self.steps),
            target=escape_controls(self.target),
            warnings=tuple(escape_controls(w) for w in self.warnings),
            kind=escape_controls(self.kind),
            notes=tuple(escape_controls(n, keep_newlines=True) for n in self.notes),
        )

    def to_json(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "title": self.title,
            "kind": self.kind,
            "target": self.target,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "params": self.params,
            "steps": [s.to_json() for s in self.steps],
        }
        if self.disks is not None:
            d["disks"] = [x.to_json() for x in self.disks]
        if self.consequences is not None:
            d["consequences"] = self.consequences.to_json()
        d["digest"] = self.digest
        return d

    @classmethod
    def from_json(cls, d: Any) -> Plan:
        """The plan in ``d`` (parsed JSON), every field checked; raises PlanFileError.

        A ``digest`` in ``d`` is not checked here (see ``declared_digest``)."""
        if not isinstance(d, dict):
            raise PlanFileError(f"a plan is a JSON object, not {type(d).__name__}")
        extra = sorted(set(d) - PLAN_KEYS)
        if extra:
            raise PlanFileError(f"unknown keys in the plan: {escape_controls(', '.join(extra))}")
        raw_steps = d.get("steps")
        if not isinstance(raw_steps, list):
            raise PlanFileError("a plan needs a 'steps' list")
        if len(raw_steps) > MAX_STEPS:
            raise PlanFileError(f"too many steps ({len(raw_steps)}, at most {MAX_STEPS})")
        steps = tuple(Step.from_json(s, f"step {i + 1}") for i, s in enumerate(raw_steps))
        disks: tuple[DiskIdentity, ...] | None = None
        if d.get("disks") is not None:
            raw = d["disks"]
            if not isinstance(raw, list):
                raise PlanFileError(f"'disks' must be a list, not {type(raw).__name__}")
            if len(raw) > MAX_LIST:
                raise PlanFileError(
                    f"'disks' has too many entries ({len(raw)}, at most {MAX_LIST})"
                )
            disks = tuple(DiskIdentity.from_json(x, f"disks[{i}]") for i, x in enumerate(raw))
        return cls(
            title=_text(d.get("title", ""), "'title'", limit=MAX_ARG_CHARS),
            steps=steps,
            target=_text(d.get("target", ""), "'target'", limit=MAX_ARG_CHARS),
            warnings=_str_list(d.get("warnings", []), "'warnings'", limit=MAX_LIST, newlines=True),
            kind=_text(d.get("kind", ""), "'kind'", limit=64),
            params=_params(d.get("params", {})),
            notes=_str_list(d.get("notes", []), "'notes'", limit=MAX_LIST, newlines=True),
            disks=disks,
        )


def retired_serial(plan: Plan) -> str | None:
    """The serial (else WWN) of the one disk a retire plan erases, as recorded for it."""
    if plan.disks is not None and len(plan.disks) == 1:
        d = plan.disks[0]
        return d.serial or d.wwn
    p = plan.params
    v = p.get("serial") or p.get("wwn")
    return v if isinstance(v, str) and v else None


def confirm_name(path: str) -> str:
    """What the user types for ``path``: ``/dev/md/127`` → ``127``, ``/dev/sdb`` → ``sdb``,
    ``/dev/vg0/data`` → ``vg0/data``."""
    if path.startswith("/dev/md/"):
        return path[len("/dev/md/") :]
    return path.removeprefix("/dev/")


def confirm_target(ops: Iterable[Op]) -> str | None:
    """The name typed to confirm: what the first destroying step overwrites (None: none does);
    the array, when an earlier step stopped it (deleting an array erases its members one by one,
    and what the user means to destroy is the array)."""
    stopped: str | None = None
    for op in ops:
        if isinstance(op, StopArray):
            stopped = op.array_path
        hit = op.destroys()
        if hit is not None:
            return confirm_name(stopped if stopped is not None else hit)
    return None


def declared_digest(d: Any) -> str | None:
    """The ``digest`` a plan file claims (None when it has none); raises PlanFileError."""
    if not isinstance(d, dict) or d.get("digest") is None:
        return None
    v = _text(d["digest"], "'digest'", limit=100)
    if not v.startswith("sha256:") or len(v) != 71:
        raise PlanFileError("'digest' must be 'sha256:' and 64 hex digits")
    return v


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    d: dict[str, Any] = {}
    for k, v in pairs:
        if k in d:
            raise PlanFileError(f"the key {escape_controls(k)!r} appears twice in one object")
        d[k] = v
    return d


def _no_constant(name: str) -> Any:
    raise PlanFileError(f"{name} is not a JSON number")


def parse_plan_bytes(data: bytes) -> tuple[Plan, str | None]:
    """(plan, the digest it declares) from a plan file's bytes; raises PlanFileError."""
    if len(data) > MAX_FILE_BYTES:
        raise PlanFileError(f"too large for a plan ({len(data)} bytes, at most {MAX_FILE_BYTES})")
    if b"\x00" in data:
        raise PlanFileError("not a plan: the file contains NUL bytes (binary?)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PlanFileError(f"not UTF-8 text (byte {e.start})") from None
    if not text.strip():
        raise PlanFileError("the file is empty")
    try:
        raw = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except PlanFileError:
        raise
    except RecursionError:
        raise PlanFileError("not a plan: JSON nested too deeply") from None
    except json.JSONDecodeError as e:
        raise PlanFileError(
            f"not valid JSON: {e.msg} at line {e.lineno} column {e.colno}"
        ) from None
    except ValueError as e:  # e.g. an integer too long to convert
        raise PlanFileError(f"not valid JSON: {escape_controls(str(e))[:200]}") from None
    try:
        return Plan.from_json(raw), declared_digest(raw)
    except RecursionError:
        raise PlanFileError("not a plan: JSON nested too deeply") from None


def load_plan_file(path: str | Path) -> tuple[Plan, str | None]:
    """Read and check a plan file (at most MAX_FILE_BYTES are read); raises PlanFileError."""
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except IsADirectoryError:
        raise PlanFileError("is a directory, not a plan file") from None
    except OSError as e:
        raise PlanFileError(e.strerror or str(e)) from None
    return parse_plan_bytes(data)
