"""Emulated programs of the simulated backend, one module per program family."""
