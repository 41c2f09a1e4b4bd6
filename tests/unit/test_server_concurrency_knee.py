"""The knee that sets the default concurrency (benchmarks/server_concurrency.py)."""

from __future__ import annotations

import pytest

from benchmarks.server_concurrency import knee

LEVELS = (1, 2, 4, 8, 16, 32)


def _rows(rates: tuple[float, ...]) -> list[dict[str, float]]:
    return [{"concurrency": c, "requests_per_s": r} for c, r in zip(LEVELS, rates, strict=True)]


def test_the_knee_is_where_more_in_flight_buys_less_throughput() -> None:
    # the 2026-12-04 sweep on a quiet 2-core host: still rising at 32, more slowly past 8
    assert knee(_rows((10.09, 17.05, 27.96, 43.47, 57.34, 77.27))) == 8
    # a server that saturates at 8
    assert knee(_rows((10, 19, 35, 50, 55, 56))) == 8
    # one that saturates earlier
    assert knee(_rows((10, 30, 38, 40, 40.5, 41))) in (2, 4)


def test_without_a_knee_the_smallest_level_near_the_best() -> None:
    # linear in concurrency to the end: no bend in the range, so 90% of the best
    assert knee(_rows((10, 20, 40, 80, 160, 320))) == 32
    assert knee(_rows((5, 5, 5, 5, 5, 5))) == 1  # flat: one in flight does as well


def test_the_order_of_rows_does_not_matter_and_none_is_refused() -> None:
    rows = _rows((10.09, 17.05, 27.96, 43.47, 57.34, 77.27))
    assert knee(rows[::-1]) == 8
    with pytest.raises(ValueError, match="no concurrency levels"):
        knee([])
