"""Real-kernel tests: a QEMU guest booted once per session with virtme-ng (marker ``vm``).

Host side: ``machine.py`` (the VM), ``plugin.py`` (fixtures, markers, reporting), ``kernel.py``
(the kernel's own md/LVM state and comparisons with raidman's model). Guest side: ``agent.py``,
``guest.py``, ``guest_reset.py``. Keep this file free of imports: the guest imports the package.
"""
