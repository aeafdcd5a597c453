"""The programs the simulated backend runs, one module per program or family (mdadm, LVM,
filesystems, wipefs, the rest in ``system``); ``registry`` maps a program's name to its handler.

Every handler takes ``(state, args, stdin)``, changes the state like the real program and returns
``(returncode, stdout, stderr)``; it never raises for bad input.
"""
