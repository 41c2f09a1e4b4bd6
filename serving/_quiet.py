"""Silence transformers' progress bars around a local load or save (private helper)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def no_progress_bars() -> Iterator[None]:
    """Disable transformers' progress bars inside the block, then restore the previous setting.

    Loading or writing the small local checkpoint takes about a second; a bar there only
    clutters CLI output ("Loading weights", "Writing model shards").
    """
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()
