"""Guards: what a plan must not do, checked on its operations (and, where it matters, on the
machine as it is): the shapes of multi-step edits (``file_edits``)."""
