"""What a plan must not do, checked on its operations and on the machine as it is: the steps
together (``allowlist``, ``file_edits``), the devices (``preflight``, ``in_use``, ``identity``,
``targets``, ``mountpoints``, ``lifecycle_checks``), and all again right before each step
(``recheck``)."""
