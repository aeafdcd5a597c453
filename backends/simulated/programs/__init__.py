"""Programs the simulated backend emulates, one module each (registered in commands.HANDLERS)."""
