"""Subcommands of the ``raidman`` CLI, one module each; each exposes ``add_parser(sub)`` and ``run(args)``.
``backend_options`` holds the options they share for choosing a backend."""
