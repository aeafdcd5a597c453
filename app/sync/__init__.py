"""Watching syncs: speed history, progress views, finished-sync records, events, boost/restore."""
