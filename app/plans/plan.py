"""A plan is data: what will run, why, and whether it can destroy data. Building one has no side effects."""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Step:
    argv: tuple[str, ...]
    why: str
    destructive: bool = False
    stdin: str | None = None  # fed to the program (e.g. a value for `tee /sys/...`)
    # A read-only program whose stdout becomes this step's stdin (a pipe, run by the executor
    # through backend.run too), e.g. ("mdadm", "--detail", "--brief", "/dev/md/127") feeding
    # ("tee", "-a", "/etc/mdadm/mdadm.conf"): the ARRAY line needs the UUID mdadm picks at create.
    stdin_from: tuple[str, ...] | None = None

    def shell(self) -> str:
        """The step as one copyable, properly quoted shell line."""
        line = shlex.join(self.argv)
        if self.stdin_from is not None:
            return f"{shlex.join(self.stdin_from)} | {line}"
        if self.stdin is not None:
            return f"printf '%s\\n' {shlex.quote(self.stdin.rstrip(chr(10)))} | {line}"
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
    def from_json(cls, d: dict[str, Any]) -> Step:
        argv = d.get("argv")
        if not isinstance(argv, list) or not argv or not all(isinstance(a, str) for a in argv):
            raise ValueError("each step needs an 'argv' list of strings")
        stdin = d.get("stdin")
        if stdin is not None and not isinstance(stdin, str):
            raise ValueError("'stdin' must be a string")
        stdin_from = d.get("stdin_from")
        if stdin_from is not None and (
            not isinstance(stdin_from, list)
            or not stdin_from
            or not all(isinstance(a, str) for a in stdin_from)
        ):
            raise ValueError("'stdin_from' must be a list of strings")
        return cls(
            tuple(argv),
            str(d.get("why", "")),
            bool(d.get("destructive", False)),
            stdin,
            tuple(stdin_from) if stdin_from is not None else None,
        )


@dataclass(frozen=True, slots=True)
class Plan:
    title: str
    steps: tuple[Step, ...]
    target: str = ""  # the device a destructive plan acts on: typed by the user to confirm
    warnings: tuple[str, ...] = ()
    kind: str = ""  # which wizard/rule built it, e.g. "create-array"
    params: dict[str, Any] = field(default_factory=dict, hash=False)
    notes: tuple[str, ...] = ()  # explanations shown with the plan (geometry, bitmap, conf diff)

    @property
    def destructive(self) -> bool:
        return any(s.destructive for s in self.steps)

    def shell_script(self) -> str:
        lines = ["#!/bin/sh", f"# {self.title}"]
        lines += [f"# note: {n}" for line in self.notes for n in line.splitlines()]
        lines += [f"# warning: {w}" for w in self.warnings]
        lines.append("set -e")
        for i, s in enumerate(self.steps, 1):
            lines.append(f"# {i}. {s.why}" + (" [DESTROYS DATA]" if s.destructive else ""))
            lines.append(s.shell())
        return "\n".join(lines) + "\n"

    def to_json(self) -> dict[str, Any]:
        return {
            "title": self.title,
            "kind": self.kind,
            "target": self.target,
            "warnings": list(self.warnings),
            "notes": list(self.notes),
            "params": self.params,
            "steps": [s.to_json() for s in self.steps],
        }

    @classmethod
    def from_json(cls, d: dict[str, Any]) -> Plan:
        if not isinstance(d, dict) or not isinstance(d.get("steps"), list):
            raise ValueError("a plan is a JSON object with a 'steps' list")
        steps = tuple(Step.from_json(s) for s in d["steps"])
        warnings = d.get("warnings") or []
        notes = d.get("notes") or []
        return cls(
            title=str(d.get("title", "")),
            steps=steps,
            target=str(d.get("target", "")),
            warnings=tuple(str(w) for w in warnings),
            kind=str(d.get("kind", "")),
            params=dict(d.get("params") or {}),
            notes=tuple(str(n) for n in notes),
        )
