"""Isotonic calibration and expected calibration error (synthetic numbers, no data file)."""

from __future__ import annotations

from itertools import pairwise

import pytest
from pydantic import ValidationError

from orchestrator.classifier.calibration import (
    IsotonicMap,
    expected_calibration_error,
    fit_isotonic,
    reliability_bins,
)
from orchestrator.exceptions import UserError


def test_ece_known_value() -> None:
    # 10 decisions at confidence 0.8, 5 right: one bin, |0.5 - 0.8| = 0.3.
    assert expected_calibration_error([0.8] * 10, [True] * 5 + [False] * 5) == pytest.approx(0.3)
    # Perfectly calibrated halves: 0.25 -> 1/4 right, 0.75 -> 3/4 right.
    conf = [0.25] * 4 + [0.75] * 4
    ok = [True, False, False, False, True, True, True, False]
    assert expected_calibration_error(conf, ok) == pytest.approx(0.0)
    assert expected_calibration_error([], []) == 0.0


def test_reliability_bins_include_one() -> None:
    bins = reliability_bins([1.0, 0.0], [True, False], n_bins=10)
    assert [(b.low, b.count) for b in bins] == [(0.0, 1), (0.9, 1)]


def test_isotonic_is_monotone_and_fits_rates() -> None:
    scores = [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8]
    ok = [False, True, False, False, True, True, False, True]
    m = fit_isotonic(scores, ok)
    values = [m(x / 100) for x in range(0, 101)]
    assert all(b >= a for a, b in pairwise(values))
    assert m(0.0) < 0.5 < m(1.0) and m(1.0) == 1.0
    assert m.n == 8


def test_isotonic_validation() -> None:
    with pytest.raises(ValidationError, match="non-decreasing"):
        IsotonicMap(x=(0.0, 1.0), y=(0.9, 0.1))
    with pytest.raises(UserError):
        fit_isotonic([], [])
