"""Command palette providers of the main screen."""

from __future__ import annotations

from functools import partial

from textual.command import DiscoveryHit, Hit, Hits, Provider

from widgets.storage_tree import StorageTree
from widgets.tree_spec import NodeRef

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


def _lv_name(machine: object, name: str) -> str:
    """An LV as an admin names it, ``vg/lv`` (the tree's ref holds its dm kernel name)."""
    for lv in getattr(machine, "lvs", ()):
        if name in (lv.kernel_name, f"{lv.vg}/{lv.name}"):
            return f"{lv.vg}/{lv.name}"
    return name


def _title(ref: NodeRef, machine: object = None) -> str:
    if ref.kind == "lv":
        return f"Go to LV {_lv_name(machine, ref.name)}"
    if ref.kind == "fs":
        return f"Go to filesystem on {_lv_name(machine, ref.name)}"
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
        machine = getattr(self.app, "machine", None)
        for ref in tree.refs():
            if ref.is_link or ref.kind not in _KIND_WORD:
                continue
            text = tree.label_for(ref.key)  # also for nodes not materialised yet (big machines)
            label = text.plain if text is not None else ref.name
            out.append((_title(ref, machine), ref.key, f"{_KIND_WORD[ref.kind]}: {label}"))
        return out

    def _go(self, key: str) -> None:
        tree = self.screen.query_one(StorageTree)
        tree.go_to(key)
        reveal = getattr(self.screen, "reveal_tree", None)  # a collapsed tree (80 columns)
        if callable(reveal):
            reveal()
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


# (title, action, help): the main screen's actions, as its keys run them (the screen's own, or
# the App's: "app.")
_ACTIONS = (
    ("New array", "create_array", "n: create an md array (devices picked from a list)"),
    ("Member actions", "member_actions", "a: add, re-add, replace, grow, fail, remove"),
    ("Sync actions and tuning", "sync_actions", "t: check/repair, speed limits, stripe cache"),
    ("Filesystem / LVM", "filesystem", "v: LVM and ext4/XFS on an existing array, aligned"),
    ("Boost sync", "boost", "b: raise the sync limits until the sync ends"),
    (
        "Replace a member",
        "replace_member",
        "a: --replace while it works, else a rebuild onto a new disk",
    ),
    ("Qualify a new disk", "disk_actions('qualify')", "D: self-tests, write + verify every block"),
    (
        "Locate a disk (light its bay)",
        "disk_actions('locate')",
        "D: enclosure LED, ledctl or a blink",
    ),
    (
        "Retire an old disk",
        "disk_actions('retire')",
        "D: out of its array, superblock and signatures erased",
    ),
    ("SMART self-test", "disk_actions('smart-test')", "D: the drive's short or long self-test"),
    ("Wipe a device", "disk_actions('wipe')", "D: wipefs -a (every signature)"),
    ("Prepare disks", "disk_actions('prepare')", "D: GPT and one RAID partition per disk"),
    ("Benchmark chunk sizes", "disk_actions('benchmark')", "D: fio on empty disks"),
    ("Stop array", "array_actions('stop')", "A: mdadm --stop"),
    ("Assemble arrays", "array_actions('assemble-scan')", "A: mdadm --assemble --scan"),
    ("Delete array", "array_actions('delete')", "A: stop and erase every member"),
    ("Mount a filesystem", "array_actions('mount')", "A: mount, and its fstab line"),
    ("Check schedule", "array_actions('check-schedule')", "A: raidman monitor's scheduled checks"),
    ("Audit log", "app.audit_log", "L: what raidman ran, newest first"),
    ("Refresh", "app.refresh", "r: probe the machine again now"),
    ("Help: keys", "app.help", "?: the keys of the current screen"),
)


class ActionsProvider(Provider):
    """The main screen's actions (new array, member actions on the selected array, boost…)."""

    def _actions(self) -> list[tuple[str, str, str]]:
        selected = getattr(self.screen, "selected_array", None)  # the main screen's
        array = selected() if callable(selected) else None
        out = []
        for title, action, help_text in _ACTIONS:
            if array is not None and action in (
                "member_actions",
                "sync_actions",
                "filesystem",
                "boost",
                "array_actions('stop')",
                "array_actions('delete')",
                "replace_member",
            ):
                title = f"{title} on {array.name}"
            out.append((title, action, help_text))
        return out

    def _run(self, action: str) -> None:
        self.app.call_later(self.app.run_action, action, self.screen)

    async def discover(self) -> Hits:
        for title, action, help_text in self._actions():
            yield DiscoveryHit(title, partial(self._run, action), help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action, help_text in self._actions():
            score = max(matcher.match(title), matcher.match(help_text) * 0.8)
            if score > 0:
                yield Hit(
                    score, matcher.highlight(title), partial(self._run, action), help=help_text
                )
