"""``lvmconfig`` / ``lvm config``: LVM configuration values.

With node arguments (``lvmconfig --type full devices/issue_discards devices/md_chunk_alignment``)
LVM prints bare ``key=value`` lines::

    issue_discards=0
    md_chunk_alignment=1

Without, it prints nested sections (``devices {`` ... ``}``). Both are accepted; values are
reachable by their last name (``issue_discards``) or, inside sections, by their path
(``devices/issue_discards``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from app.parsers.errors import ParseError
from app.parsers.safe import only_parse_errors

SOURCE = "lvmconfig"

LvmValue = int | float | str

_ASSIGN = re.compile(r"^([A-Za-z_][\w]*)\s*=\s*(.*)$")
_OPEN = re.compile(r"^([A-Za-z_][\w]*)\s*\{$")


@dataclass(frozen=True, slots=True)
class LvmConfig:
    values: dict[str, LvmValue] = field(default_factory=dict, hash=False)

    def get(self, path: str) -> LvmValue | None:
        """A value by path (``devices/issue_discards``) or last name (``issue_discards``)."""
        if path in self.values:
            return self.values[path]
        last = path.rsplit("/", 1)[-1]
        return self.values.get(last)

    def get_bool(self, path: str) -> bool | None:
        v = self.get(path)
        if isinstance(v, int):
            return v != 0
        return None


def _value(raw: str, line: int) -> LvmValue:
    raw = raw.split("#", 1)[0].strip() if not raw.startswith('"') else raw.strip()
    if raw.startswith('"') and raw.endswith('"') and len(raw) >= 2:
        return raw[1:-1]
    if re.fullmatch(r"-?[0-9]{1,20}", raw):
        return int(raw)
    if re.fullmatch(r"-?[0-9]{1,20}\.[0-9]{0,20}", raw):
        return float(raw)
    if raw.startswith("["):
        return raw
    raise ParseError(SOURCE, f"cannot read value {raw!r}", line)


@only_parse_errors(SOURCE)
def parse_lvmconfig(text: str) -> LvmConfig:
    """Parse lvmconfig output. Raises ParseError on lines that are neither assignments nor braces."""
    values: dict[str, LvmValue] = {}
    stack: list[str] = []
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        m = _OPEN.match(line)
        if m:
            stack.append(m.group(1))
            continue
        if line == "}":
            if not stack:
                raise ParseError(SOURCE, "unbalanced '}'", n)
            stack.pop()
            continue
        m = _ASSIGN.match(line)
        if not m:
            raise ParseError(SOURCE, f"unexpected line {line!r}", n)
        key, value = m.group(1), _value(m.group(2), n)
        path = "/".join([*stack, key])
        values[path] = value
        values.setdefault(key, value)
    if stack:
        raise ParseError(SOURCE, f"section {stack[-1]!r} not closed")
    return LvmConfig(values)
