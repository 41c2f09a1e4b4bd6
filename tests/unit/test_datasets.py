"""``orchestrator.datasets.sample_requests``: what a wrong kind or data folder is told."""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.datasets import sample_requests
from orchestrator.exceptions import UserError


def test_a_kind_the_data_folder_lacks_is_named_with_the_kinds_it_has(data_dir: Path) -> None:
    with pytest.raises(UserError, match="kinds there are customer_service, moderation"):
        sample_requests(data_dir, 2, kind="bogus")


def test_a_data_folder_without_requests_says_where_to_point(tmp_path: Path) -> None:
    with pytest.raises(UserError, match="set ORCH_DATA_DIR"):
        sample_requests(tmp_path / "missing", 2, kind="customer_service")


def test_requests_of_a_kind_are_drawn(data_dir: Path) -> None:
    requests = sample_requests(data_dir, 3, kind="moderation")
    assert len(requests) == 3 and all(r.text.strip() for r in requests)
