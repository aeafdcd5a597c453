"""Emulated programs of the simulated backend, one module each (dispatched by commands.py)."""
