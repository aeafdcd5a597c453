"""Command palette providers of the main screen."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from widgets.storage_tree import NodeRef, StorageTree

_KIND_WORD = {
    "disk": "disk",
    "partition": "partition",
    "array": "md array",
    "container": "md container",
    "vg": "volume group",
    "lv": "logical volume",
    "fs": "filesystem",
    "crypt": "dm-crypt",
    "dev": "device",
}


def _title(ref: NodeRef) -> str:
    if ref.kind == "fs":
        return f"Go to filesystem on {ref.name}"
    if ref.kind == "vg":
        return f"Go to VG {ref.name}"
    return f"Go to {ref.name}"


class GoToDeviceProvider(Provider):
    """ "Go to <device>" for every device shown as a full node in the tree."""

    def _targets(self) -> list[tuple[str, str, str]]:
        try:
            tree = self.screen.query_one(StorageTree)
        except Exception:
            return []
        out = []
        for ref in tree.refs():
            if ref.is_link or ref.kind not in _KIND_WORD:
                continue
            text = tree.label_for(ref.key)  # also for nodes not materialised yet (big machines)
            label = text.plain if text is not None else ref.name
            out.append((_title(ref), ref.key, f"{_KIND_WORD[ref.kind]}: {label}"))
        return out

    def _go(self, key: str) -> None:
        tree = self.screen.query_one(StorageTree)
        tree.go_to(key)
        tree.focus()

    async def discover(self) -> Hits:
        for text, key, help_text in self._targets():
            yield DiscoveryHit(text, partial(self._go, key), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for text, key, help_text in self._targets():
            score = max(matcher.match(text), matcher.match(help_text) * 0.8)
            if score > 0:
                yield Hit(score, matcher.highlight(text), partial(self._go, key), help=help_text)
