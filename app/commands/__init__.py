"""Subcommands of the ``raidman`` CLI, one module each; each exposes ``add_parser(sub)`` and ``run(args)``."""
