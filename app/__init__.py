"""raidman: the Linux storage stack (disks, partitions, md RAID, LVM, filesystems) in a terminal.

The package is split by role:

* ``app.model``   – frozen dataclasses describing a machine's storage (no I/O, no UI)
* ``app.parsers`` – pure functions: tool/kernel text in, model objects out
* ``app.rules``   – the alignment and tuning audit
* ``app.plans``   – plans (ordered argv steps), pre-flight checks and the executor
* ``app.wear``    – SMART write counters, snapshots and wear deltas
* ``app.sync``    – sync watching: samples, speed history, boost, events
* ``app.ui``      – the Textual application (the only place, with ``widgets``, that imports Textual)
"""

__version__ = "0.1.0"
