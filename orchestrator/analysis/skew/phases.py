"""Hot and dead experts for prefill and decode apart, where the stored source allows it.

A call's prompt tokens (prefill) and its completion tokens (decode) can route differently, and
an expert hot in decode only is diluted by long prompts in the combined view. Where the
source kept the phases apart (the vLLM plugin's ``phase_counts`` mode, per-token ids of the
engine or a replay: ``model_calls.prefill_counts``), the store sums each phase into
``expert_phase_rollups``; here each phase gets the combined view's global profile
(:func:`~orchestrator.analysis.skew.profile.scope_profile`): every expert's share with its
simultaneous interval over calls, and hot or dead with the same thresholds and the same
minimum volume (``min_expected`` activations per expert, ``min_calls`` calls) as the combined
verdict, counted in that phase's own activations.

Calls whose source summed the phases (the plugin's ``counts`` mode, every call stored before
migration 0008) are in the combined view only: the report says how many calls the phase view
covers, and "combined (source has no phase split)" when it covers none. No split is estimated.
"""

from __future__ import annotations

from orchestrator.analysis.skew.aggregate import read_windows
from orchestrator.analysis.skew.models import (
    ModelShape,
    PhaseView,
    ScopeProfile,
    Thresholds,
    TimeWindow,
)
from orchestrator.analysis.skew.profile import scope_profile
from orchestrator.telemetry import TelemetryReader
from orchestrator.telemetry.rollups import PHASES

#: The line shown where no call of the window has a prefill/decode split.
NO_SPLIT = "prefill and decode: combined (source has no phase split)"


def phase_note(split_calls: int, calls: int) -> str:
    """One line saying which calls the prefill/decode view covers."""
    if split_calls == 0:
        return NO_SPLIT
    if split_calls >= calls:
        covered, rest = f"all {calls:,} calls", ""
    else:
        covered = f"{split_calls:,} of {calls:,} calls"
        rest = "; the other calls are combined only (their source has no phase split)"
    return (
        f"prefill and decode judged apart for {covered} (prompt tokens = prefill, completion "
        f"tokens = decode), with the combined view's thresholds and minimum volume{rest}"
    )


def phase_view(
    store: TelemetryReader,
    window: TimeWindow,
    shape: ModelShape,
    thresholds: Thresholds,
    *,
    calls: int,
    model: str | None = None,
) -> PhaseView:
    """The prefill and decode profiles of all workflows in ``window``.

    Args:
        store: The telemetry store (or a batch view).
        window: The report window.
        shape: The combined view's MoE shape (a phase row of another shape is refused).
        thresholds: The combined view's thresholds.
        calls: Calls with routing in the window (the combined view's).
        model: Only this served model.

    Returns:
        A :class:`PhaseView`: both profiles where some call has a split, none otherwise.

    Raises:
        UserError: The phase rows mix MoE shapes (as the combined view would).
    """
    profiles = []
    split_calls = 0
    for phase in PHASES:
        (data,) = read_windows(store, [window], model=model, phase=phase)
        if data.shape is None or data.shape != shape:
            continue
        delta = data.overall()
        split_calls = max(split_calls, delta.calls)
        profiles.append(scope_profile("phase", phase, delta, shape, thresholds, data.sources()))
    return PhaseView(
        split_calls=split_calls,
        calls=calls,
        profiles=profiles,
        note=phase_note(split_calls, calls),
    )


def flagged(profile: ScopeProfile, verdict: str, show: int = 6) -> str:
    """The ``hot`` or ``dead`` experts of ``profile``, each with its share and simultaneous
    interval, e.g. ``"L5:e12 9.10% [8.31–9.95%]"`` (the first ``show``, then a count), or
    ``"-"``."""
    items = [
        f"L{m.layer}:e{e} {m.shares[e]:.2%} [{m.share_low[e]:.2%}–{m.share_high[e]:.2%}]"
        for m in profile.layers
        for e in (m.hot if verdict == "hot" else m.dead)
    ]
    if not items:
        return "-"
    return " · ".join(items[:show]) + (f" +{len(items) - show}" if len(items) > show else "")


def unjudged(profile: ScopeProfile) -> str:
    """The layers below the minimum volume, e.g. ``"L1, L2"``, or ``"-"``."""
    return ", ".join(f"L{m.layer}" for m in profile.layers if not m.judgeable) or "-"
