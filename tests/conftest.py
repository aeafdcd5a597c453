"""Registers the real-kernel VM plugin (fixture ``vm``, marker ``vm``, "VM unavailable" reporting)."""

pytest_plugins = ["tests.vm.plugin"]
