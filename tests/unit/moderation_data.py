"""Where the moderation tests find the real data, and the mark for tests that need it.

``DATA`` is ``../shared/data`` beside the checkout (:data:`orchestrator.config.DEFAULT_DATA_DIR`,
see its SOURCES.md); a test marked :data:`needs_data` is skipped where its ``moderation``
folder is not there.
"""

from __future__ import annotations

import pytest

from orchestrator.config import DEFAULT_DATA_DIR

DATA = DEFAULT_DATA_DIR
needs_data = pytest.mark.skipif(
    not (DATA / "moderation").is_dir(), reason="../shared/data is not beside the repository"
)
