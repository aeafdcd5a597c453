"""Where the shared corpus of real tool outputs lives (``../shared/corpus`` beside the clone)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
FIXTURES = REPO / "tests" / "fixtures"


def corpus_dir() -> Path:
    """The shared corpus. Tests that need it fail loudly in CI if it is missing (never skip silently)."""
    env = os.environ.get("RAIDMAN_CORPUS")
    candidates = [Path(env)] if env else []
    candidates += [REPO.parent / "shared" / "corpus", REPO / ".." / ".." / "shared" / "corpus"]
    for c in candidates:
        if c.is_dir():
            return c.resolve()
    if os.environ.get("CI"):
        raise RuntimeError(f"shared corpus not found (looked in {candidates})")
    pytest.skip("shared corpus (../shared/corpus) not present on this machine")
    raise AssertionError("unreachable")


def corpus(folder: str, *parts: str) -> Path:
    return corpus_dir().joinpath(folder, *parts)
