"""How sampled expert capture enters the analysis: weights and the label every table carries.

A deployment may capture the experts of a fraction ``r`` of its calls only (the capture
sampling rate, ``model_calls.capture_sampling_rate``; drawn per call, independently of its
content). Each captured call then stands for ``1 / r`` calls (Horvitz-Thompson weighting), so:

* totals (activations, calls, tokens) are estimated by the weighted sums;
* load shares are ratios of weighted sums: unbiased however rates differ between hours,
  workflows or nodes (an unweighted pool would over-represent the fully captured part);
* a single rate everywhere changes no share, only the totals.

Every table and report of :mod:`orchestrator.analysis` states the rates it read
(:func:`sampling_label`).
"""

from __future__ import annotations

from collections.abc import Mapping

__all__ = ["sampling_label"]


def _rate(rate: float) -> str:
    return f"{rate:g}"


def sampling_label(rates: Mapping[float, int]) -> str:
    """The capture sampling rate(s) behind a figure, as one line of text.

    Args:
        rates: Captured calls per capture sampling rate, e.g. ``{0.25: 812, 1.0: 40}``.

    Returns:
        E.g. ``"capture sampling rate 1 (every call captured)"``, ``"capture sampling rate
        0.25 (812 captured calls, each weighted x4)"`` or, for several rates, ``"capture
        sampling rates 0.25 (812 calls, x4), 1 (40 calls, x1); figures weight each call by
        1/rate"``.

    Raises:
        ValueError: A rate is not in ``(0, 1]`` or a call count is negative.
    """
    for rate, calls in rates.items():
        if not 0.0 < float(rate) <= 1.0 or calls < 0:
            raise ValueError(f"capture sampling rates must be in (0, 1], got {dict(rates)}")
    present = {float(r): int(n) for r, n in rates.items() if n > 0}
    if not present:
        return "capture sampling rate: no captured call"
    if len(present) == 1:
        ((rate, calls),) = present.items()
        if rate == 1.0:
            return "capture sampling rate 1 (every call captured)"
        return (
            f"capture sampling rate {_rate(rate)} ({calls:,} captured calls, each weighted "
            f"x{1 / rate:g})"
        )
    parts = ", ".join(f"{_rate(r)} ({n:,} calls, x{1 / r:g})" for r, n in sorted(present.items()))
    return f"capture sampling rates {parts}; figures weight each call by 1/rate"
