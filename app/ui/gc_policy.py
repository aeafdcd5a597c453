"""Garbage-collector settings for a long-running TUI on a big machine (issue 13).

Measured on ``raidman --demo big`` (1,000 disks, 250 arrays): about 170,000 objects stay alive
(Textual, the model, the tree), and with CPython's default thresholds (700, 10, 10) the cyclic
collector ran about 9 full (generation 2) collections in 35 s, ~0.3 s each: that was most of a
slow tab switch or tree jump, and a good share of the idle CPU. After the first frame:

* ``gc.freeze()``: what start-up made (imports, Textual's own objects, the first screen) is
  moved out of the collector's reach; it lives as long as the app anyway. Done once, so at most
  that first generation of widgets is kept if it ever becomes cyclic garbage.
* a larger first threshold: fewer young collections, so fewer objects promoted, so far fewer
  full collections. Cycles are still collected, just in larger batches.
"""

from __future__ import annotations

import gc

THRESHOLDS = (20_000, 20, 20)


def settle_after_start() -> None:
    """Call once, after the first frame is on screen."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*THRESHOLDS)
