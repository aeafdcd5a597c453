"""What the Wear tab is asked to show (``WearRequest``, published by the App as
``wear_request``) and the read behind it (``load_wear``: the store, and SMART when no fresh
reading is at hand). ``load_wear`` does I/O: the Wear pane calls it from its own worker."""

from __future__ import annotations

import threading
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass

from app.backend import Backend
from app.model.devices import Disk, Machine, MdArray
from app.model.smart import SmartReading
from app.wear.delta import SyncWear, array_wear
from app.wear.plot import disk_serial, load_disk_history
from app.wear.snapshots import Snapshot, SnapshotStore


@dataclass(frozen=True, eq=False)
class WearRequest:
    """The device under the tree cursor, and where its wear is read from."""

    machine: Machine
    name: str | None  # the tree node's device (None: a node of no device)
    backend: Backend
    store: Callable[[], SnapshotStore]
    lock: threading.Lock  # the store's writers' lock (never held while waiting for the UI)
    smart_seen: MutableMapping[str, tuple[float, SmartReading]]  # the host's SMART cache
    reading: SmartReading | None = None  # a fresh enough reading of the disk, if any
    follow: bool = False  # a sample of a running sync (shown only while the tab is)

    def device(self) -> Disk | MdArray | None:
        obj = self.machine.device(self.name) if self.name else None
        return obj if isinstance(obj, (Disk, MdArray)) else None


@dataclass(frozen=True)
class ArrayWear:
    array: MdArray
    wear: tuple[SyncWear, ...]


@dataclass(frozen=True)
class DiskWear:
    disk: Disk
    reading: SmartReading
    history: tuple[Snapshot, ...]
    syncs: tuple[SyncWear, ...]


def load_wear(req: WearRequest, obj: Disk | MdArray) -> ArrayWear | DiskWear:
    """An array's recorded syncs, or a disk's SMART, write history and its arrays' syncs."""
    store = req.store()
    if isinstance(obj, MdArray):
        with req.lock:
            return ArrayWear(obj, tuple(array_wear(store, obj.name, obj.uuid)))
    reading = req.reading
    if reading is None:  # SMART on its own cadence, not at every sample
        reading = req.backend.smart(obj.name)
        req.smart_seen[obj.name] = (req.backend.now(), reading)
    serial = disk_serial(obj.name, reading.serial, obj.serial)
    with req.lock:
        history, syncs = load_disk_history(
            store, serial, [a.name for a in req.machine.arrays_of_disk(obj.name)]
        )
    return DiskWear(obj, reading, tuple(history), tuple(syncs))
