"""Programs the simulated backend emulates, one module each."""
