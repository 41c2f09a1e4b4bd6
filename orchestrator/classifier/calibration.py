"""Confidence calibration: isotonic maps from a raw score to P(correct), and their error.

A classifier is *calibrated* when, of the decisions it makes with confidence ``c``, a fraction of
about ``c`` is right. This module fits a monotone map from a raw evidence score to that
fraction on labelled data and measures how far a set of confidences is from it.

* :func:`fit_isotonic` — pool-adjacent-violators isotonic regression (Zadrozny & Elkan, 2002,
  "Transforming classifier scores into accurate multiclass probability estimates", KDD).
* :func:`expected_calibration_error` — ECE with equal-width bins (Naeini, Cooper & Hauskrecht,
  2015, AAAI; Guo, Pleiss, Sun & Weinberger, 2017, "On calibration of modern neural networks",
  ICML): ``sum_b |B_b|/n * |acc(B_b) - conf(B_b)|``.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field, model_validator

from orchestrator.exceptions import UserError


class IsotonicMap(BaseModel):
    """A non-decreasing piecewise-linear map ``x -> y`` with ``y`` in [0, 1].

    Attributes:
        x: Knots, strictly increasing raw scores.
        y: Values at the knots, non-decreasing, in [0, 1].
        n: How many labelled decisions it was fitted on.
    """

    model_config = ConfigDict(frozen=True)

    x: tuple[float, ...] = Field(min_length=1)
    y: tuple[float, ...] = Field(min_length=1)
    n: int = 0

    @model_validator(mode="after")
    def _check(self) -> IsotonicMap:
        if len(self.x) != len(self.y):
            raise ValueError(f"x has {len(self.x)} knots but y has {len(self.y)}")
        if any(b <= a for a, b in zip(self.x, self.x[1:], strict=False)):
            raise ValueError("x must be strictly increasing")
        if any(b < a for a, b in zip(self.y, self.y[1:], strict=False)):
            raise ValueError("y must be non-decreasing")
        if any(not 0.0 <= v <= 1.0 for v in self.y):
            raise ValueError("y must lie in [0, 1]")
        return self

    def __call__(self, value: float) -> float:
        """Interpolated ``y`` at ``value`` (clamped to the end knots)."""
        xs, ys = self.x, self.y
        if value <= xs[0]:
            return ys[0]
        if value >= xs[-1]:
            return ys[-1]
        i = bisect.bisect_right(xs, value)
        x0, x1, y0, y1 = xs[i - 1], xs[i], ys[i - 1], ys[i]
        return y0 + (y1 - y0) * (value - x0) / (x1 - x0)


def fit_isotonic(scores: Sequence[float], correct: Sequence[bool]) -> IsotonicMap:
    """Fit a non-decreasing map from raw scores to the observed rate of correct decisions.

    Args:
        scores: Raw score of each decision (any real numbers), length n >= 1.
        correct: Whether each decision was right, length n.

    Returns:
        The map; knots are the mean score of each pooled block, values its accuracy.

    Raises:
        UserError: Empty input or lengths differ.
    """
    if len(scores) != len(correct) or not scores:
        raise UserError(
            f"need as many outcomes as scores and at least one ({len(scores)} vs {len(correct)})"
        )
    pairs = sorted(zip(scores, correct, strict=True))
    # Blocks of (sum_x, sum_y, count); merge while the order is violated (PAV).
    blocks: list[list[float]] = []
    for x, ok in pairs:
        if blocks and blocks[-1][0] / blocks[-1][2] == x:  # ties share one block
            blocks[-1][0] += x
            blocks[-1][1] += float(ok)
            blocks[-1][2] += 1
        else:
            blocks.append([x, float(ok), 1.0])
        while len(blocks) > 1 and blocks[-2][1] / blocks[-2][2] >= blocks[-1][1] / blocks[-1][2]:
            sx, sy, c = blocks.pop()
            blocks[-1][0] += sx
            blocks[-1][1] += sy
            blocks[-1][2] += c
    xs = [b[0] / b[2] for b in blocks]
    ys = [round(b[1] / b[2], 4) for b in blocks]
    # Rounding can make x knots equal; keep the first of each run.
    kx: list[float] = []
    ky: list[float] = []
    for x, y in zip(xs, ys, strict=True):
        x = round(x, 6)
        if kx and x <= kx[-1]:
            ky[-1] = max(ky[-1], y)
            continue
        kx.append(x)
        ky.append(y)
    for i in range(1, len(ky)):
        ky[i] = max(ky[i], ky[i - 1])
    return IsotonicMap(x=tuple(kx), y=tuple(ky), n=len(pairs))


class ReliabilityBin(BaseModel):
    """One bin of a reliability diagram: ``[low, high)`` confidence, count, mean conf, accuracy."""

    low: float
    high: float
    count: int
    confidence: float
    accuracy: float


def reliability_bins(
    confidences: Sequence[float], correct: Sequence[bool], n_bins: int = 10
) -> list[ReliabilityBin]:
    """Equal-width confidence bins over [0, 1] (the last bin includes 1.0); empty bins skipped.

    Raises:
        UserError: Lengths differ or ``n_bins`` < 1.
    """
    if len(confidences) != len(correct) or n_bins < 1:
        raise UserError("need one outcome per confidence and n_bins >= 1")
    sums = [[0, 0.0, 0.0] for _ in range(n_bins)]
    for c, ok in zip(confidences, correct, strict=True):
        b = min(int(c * n_bins), n_bins - 1)
        sums[b][0] += 1
        sums[b][1] += c
        sums[b][2] += float(ok)
    return [
        ReliabilityBin(
            low=i / n_bins,
            high=(i + 1) / n_bins,
            count=int(n),
            confidence=s / n,
            accuracy=a / n,
        )
        for i, (n, s, a) in enumerate(sums)
        if n
    ]


def expected_calibration_error(
    confidences: Sequence[float], correct: Sequence[bool], n_bins: int = 10
) -> float:
    """ECE (Naeini et al. 2015; Guo et al. 2017) with ``n_bins`` equal-width bins.

    Args:
        confidences: Confidence of each decision, in [0, 1].
        correct: Whether each decision was right.
        n_bins: Number of equal-width bins over [0, 1].

    Returns:
        ``sum_b (n_b / n) * |accuracy_b - mean_confidence_b|`` in [0, 1]; 0.0 for no input.
    """
    if not confidences:
        return 0.0
    n = len(confidences)
    return sum(
        b.count / n * abs(b.accuracy - b.confidence)
        for b in reliability_bins(confidences, correct, n_bins)
    )
