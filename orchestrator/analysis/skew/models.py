"""Typed results of the expert-skew analysis (pydantic), as the JSON report writes them.

Shares are fractions in ``[0, 1]``; divergences are in bits (log base 2); times are UTC.
"""

from __future__ import annotations

from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ScopeKind = Literal["global", "workflow", "node", "phase"]


class Thresholds(BaseModel):
    """Alarm thresholds of the analysis, each a documented choice.

    Attributes:
        hot_factor: An expert is hot when the *lower* bound of its share's confidence
            interval exceeds ``hot_factor / E`` (:mod:`orchestrator.analysis.skew.intervals`).
            The default 4 sits clear of a healthy trained router, whose busiest expert takes
            about 2.4 times a uniform share on this project's traffic (the former default, 2
            on the point estimate, flagged about 6 experts per layer of a healthy run). With
            ``E = 64`` and top-6, an expert chosen by every token has share ``1/6``, about 10.7
            times uniform.
        dead_factor: An expert is dead when the *upper* bound of its share's interval is below
            ``dead_factor / E`` (default 0.15: provably under about a seventh of a fair share; a
            healthy router's least used expert gets about a quarter). A zero count is dead once
            ``N / d > z^2 E / dead_factor`` activations (about 4,800 for ``E = 64`` at 95%:
            one node of the served ground-truth test has about 7,000). Replaces "no activation
            so far".
        confidence: Simultaneous confidence of the ``E`` intervals of one layer (Goodman 1965).
        min_expected: Minimum volume for both hot and dead: a layer is judged only when
            uniform routing would give each expert at least this many activations
            (``N / E``).
        min_calls: ... and only with at least this many calls (the design effect of the
            intervals is estimated between calls; one call gives no estimate).
        collapse_share: A layer has collapsed when its ``top_k`` busiest experts together take
            more than this share (the classic warning, "one pair of experts takes more than 80%
            of the requests", written for top-2 models).
        drift_alpha: Family-wise significance level of the drift test; each layer is tested at
            ``drift_alpha / layers`` (Bonferroni).
        drift_min_jsd: Smallest Jensen-Shannon divergence (bits, per layer) called drift, so
            that a statistically significant but negligible change is not reported.
        outlier_z: Modified z-score above which a call is an outlier (Iglewicz & Hoaglin
            1993, "How to Detect and Handle Outliers", recommend 3.5).
        outlier_min_calls: Calls a (workflow, node) group needs before its calls are scored
            against it; fewer give no stable median or MAD.
    """

    model_config = ConfigDict(frozen=True)

    hot_factor: float = Field(4.0, gt=1.0)
    dead_factor: float = Field(0.15, gt=0, lt=1.0)
    confidence: float = Field(0.95, ge=0.5, lt=1.0)
    min_expected: float = Field(5.0, gt=0)
    min_calls: int = Field(2, ge=2)
    collapse_share: float = Field(0.8, gt=0, le=1)
    drift_alpha: float = Field(0.01, gt=0, lt=1)
    drift_min_jsd: float = Field(0.002, ge=0)
    outlier_z: float = Field(3.5, gt=0)
    outlier_min_calls: int = Field(8, ge=3)


class TimeWindow(BaseModel):
    """A half-open UTC time range ``[start, end)``, aligned to whole hours.

    Attributes:
        start: First instant included.
        end: First instant excluded.
        label: How it was asked for, e.g. ``"7d"`` or ``"all"``.
    """

    model_config = ConfigDict(frozen=True)

    start: datetime
    end: datetime
    label: str

    @model_validator(mode="after")
    def _ordered(self) -> TimeWindow:
        if self.end <= self.start:
            raise ValueError(f"window end {self.end} is not after its start {self.start}")
        return self


class ModelShape(BaseModel):
    """The MoE shape the calls share.

    Attributes:
        moe_layers: Model-layer index of each MoE layer.
        num_experts: Routed experts per layer (shared experts excluded).
        top_k: Routed experts per token.
    """

    model_config = ConfigDict(frozen=True)

    moe_layers: list[int]
    num_experts: int
    top_k: int


class LayerMetrics(BaseModel):
    """Load metrics of one MoE layer in one scope (see :mod:`orchestrator.analysis.skew.metrics`).

    Attributes:
        layer: Model-layer index.
        activations: Routed (token, slot) activations ``N``.
        shares: Load share per expert, ``(E,)``.
        balancedness: ``mean / max`` of the counts.
        max_violation: MaxVio, ``(max - mean) / mean``.
        cv: Coefficient of variation of the counts.
        normalised_entropy: ``H / ln E``.
        effective_experts: ``exp(H)``.
        gini: Gini coefficient of the counts.
        topk_share: Combined share of the ``top_k`` busiest experts.
        collapsed: ``topk_share > collapse_share``.
        judgeable: The minimum volume is met (otherwise hot and dead are left empty).
        hot: Hot experts (interval above ``hot_factor / E``), highest share first.
        dead: Dead experts (interval below ``dead_factor / E``), ascending.
        share_low: Lower bound of each expert's share, ``(E,)`` (Goodman-Wilson over calls,
            :mod:`orchestrator.analysis.skew.intervals`).
        share_high: Upper bound of each expert's share, ``(E,)``.
        design_effect: The largest per-expert design effect of the layer (``>= 1``; how many
            activations count as one independent draw).
        mean_confidence: Token-weighted mean router confidence of the layer, or None.
    """

    model_config = ConfigDict(frozen=True)

    layer: int
    activations: int
    shares: list[float]
    balancedness: float
    max_violation: float
    cv: float
    normalised_entropy: float
    effective_experts: float
    gini: float
    topk_share: float
    collapsed: bool
    judgeable: bool
    hot: list[int]
    dead: list[int]
    mean_confidence: float | None
    share_low: list[float] = []
    share_high: list[float] = []
    design_effect: float = 1.0


class ConfidenceSummary(BaseModel):
    """Router confidence of a scope: the chosen experts' probability mass per token.

    Attributes:
        calls: Calls that carry a confidence (replay; vLLM's engine capture returns none).
        mean: Token-weighted mean of the per-call means, or None.
        bin_edges: Histogram bin edges over ``[0, 1]``.
        histogram: Calls per bin of their mean router confidence.
        p10: 10th percentile of the per-call means, interpolated in the histogram.
        p50: Median, likewise.
        p90: 90th percentile, likewise.
    """

    model_config = ConfigDict(frozen=True)

    calls: int
    mean: float | None
    bin_edges: list[float]
    histogram: list[int]
    p10: float | None
    p50: float | None
    p90: float | None


class ScopeProfile(BaseModel):
    """Expert load of one scope (all calls, a workflow, or a workflow's node) in a window.

    Attributes:
        kind: ``global``, ``workflow`` or ``node``.
        name: ``all``, the workflow, or ``workflow/node``.
        calls: Calls with routing.
        routed_tokens: Tokens that passed the router.
        sources: Calls per expert-routing source (``replay`` is an estimate, ``engine`` a record).
        layers: One :class:`LayerMetrics` per MoE layer.
        confidence: Router confidence summary.
    """

    model_config = ConfigDict(frozen=True)

    kind: ScopeKind
    name: str
    calls: int
    routed_tokens: int
    sources: dict[str, int]
    layers: list[LayerMetrics]
    confidence: ConfidenceSummary

    def hot(self) -> list[tuple[int, int]]:
        """Every hot ``(layer, expert)``."""
        return [(m.layer, e) for m in self.layers for e in m.hot]

    def dead(self) -> list[tuple[int, int]]:
        """Every dead ``(layer, expert)``."""
        return [(m.layer, e) for m in self.layers for e in m.dead]


class DistinguishingExpert(BaseModel):
    """An expert whose share sets a scope apart from the global profile.

    Attributes:
        layer: Model-layer index.
        expert: Routed expert id.
        share: Its load share in the scope.
        global_share: Its load share over all calls.
        contribution: Its term of the layer's Jensen-Shannon divergence, in bits, divided by
            the number of layers (so the terms of all experts sum to the scope's ``jsd``).
        direction: ``over`` when the scope uses it more than the global profile, else ``under``.
    """

    model_config = ConfigDict(frozen=True)

    layer: int
    expert: int
    share: float
    global_share: float
    contribution: float
    direction: Literal["over", "under"]


class Fingerprint(BaseModel):
    """How a scope's expert distribution differs from the global one.

    Attributes:
        kind: ``workflow`` or ``node``.
        name: Scope name.
        calls: Calls in the scope.
        jsd: Jensen-Shannon divergence to the global profile, bits, mean over layers.
        jsd_per_layer: The same per MoE layer.
        distinguishing: The experts that contribute most to ``jsd``.
    """

    model_config = ConfigDict(frozen=True)

    kind: ScopeKind
    name: str
    calls: int
    jsd: float
    jsd_per_layer: list[float]
    distinguishing: list[DistinguishingExpert]


class LayerDrift(BaseModel):
    """Drift of one layer between the baseline and the current window.

    Attributes:
        layer: Model-layer index.
        jsd: Jensen-Shannon divergence of the two share vectors, bits.
        chi2: Pearson's chi-square of the 2 x E table of counts (experts unused in both
            windows dropped).
        dof: Its degrees of freedom.
        dispersion: The between-call dispersion the statistic is divided by (>= 1).
        p_value: Of ``chi2 / dispersion`` under chi-square(dof).
        significant: ``p_value < drift_alpha / layers``.
        drifted: Significant and ``jsd >= drift_min_jsd``.
    """

    model_config = ConfigDict(frozen=True)

    layer: int
    jsd: float
    chi2: float
    dof: int
    dispersion: float
    p_value: float
    significant: bool
    drifted: bool


class ShareChange(BaseModel):
    """The change of one expert's share between windows."""

    model_config = ConfigDict(frozen=True)

    layer: int
    expert: int
    baseline_share: float
    current_share: float


class ScopeDrift(BaseModel):
    """Drift of one scope.

    Attributes:
        kind: Scope kind.
        name: Scope name.
        baseline_calls: Calls in the baseline window.
        current_calls: Calls in the current window.
        status: ``tested``, or ``insufficient`` when either window has too few calls or
            activations (``reason`` says which).
        reason: Why it was not tested.
        layers: Per-layer results (empty unless tested).
        drifted_layers: Layers that drifted.
        largest_changes: The experts whose share changed most.
    """

    model_config = ConfigDict(frozen=True)

    kind: ScopeKind
    name: str
    baseline_calls: int
    current_calls: int
    status: Literal["tested", "insufficient"]
    reason: str | None = None
    layers: list[LayerDrift] = []
    drifted_layers: list[int] = []
    largest_changes: list[ShareChange] = []


class DriftReport(BaseModel):
    """Routing drift between two adjacent windows.

    Attributes:
        baseline: The earlier window.
        current: The report window.
        baseline_profile: The global profile of the baseline window (None when it is empty).
        scopes: Global first, then each workflow.
    """

    model_config = ConfigDict(frozen=True)

    baseline: TimeWindow
    current: TimeWindow
    baseline_profile: ScopeProfile | None
    scopes: list[ScopeDrift]


class OutlierRequest(BaseModel):
    """A request whose routing is far from its (workflow, node) profile.

    Attributes:
        request_id: The request.
        workflow: Its workflow.
        node: The node of its most unusual call.
        call_id: That call's row id.
        created_at: That call's time.
        routed_tokens: That call's routed tokens.
        jsd: Mean-over-layers Jensen-Shannon divergence of that call to the profile, bits.
        excess: ``jsd`` minus the divergence expected from sampling alone.
        z: Modified z-score of ``excess`` within the (workflow, node) group.
        text: The request's text, shortened (None when the request row is missing).
    """

    model_config = ConfigDict(frozen=True)

    request_id: str
    workflow: str
    node: str
    call_id: int
    created_at: datetime
    routed_tokens: int
    jsd: float
    excess: float
    z: float
    text: str | None


class OutlierReport(BaseModel):
    """Outlier requests of the window.

    Attributes:
        scored_calls: Calls scored (the newest ``limit`` of the window).
        limit: The cap on scored calls.
        groups_scored: ``workflow/node`` groups with enough calls to score.
        groups_too_small: Groups with fewer than ``outlier_min_calls`` calls (not scored).
        flagged_requests: Requests with a call above ``outlier_z``.
        requests: The flagged requests, most unusual first (at most ``listed``).
    """

    model_config = ConfigDict(frozen=True)

    scored_calls: int
    limit: int
    groups_scored: list[str]
    groups_too_small: list[str]
    flagged_requests: int
    requests: list[OutlierRequest]


class TimelinePoint(BaseModel):
    """Global routing in one step of the window (for the drift view).

    Attributes:
        start: Step start.
        calls: Calls in the step.
        jsd_to_window: JSD of the step's shares to the whole window's, bits, mean over layers.
        normalised_entropy: Mean over layers.
        balancedness: Minimum over layers.
    """

    model_config = ConfigDict(frozen=True)

    start: datetime
    calls: int
    jsd_to_window: float
    normalised_entropy: float
    balancedness: float


class PhaseView(BaseModel):
    """Hot and dead experts for prefill and decode apart (all workflows), where the stored
    source kept the phases apart (:mod:`orchestrator.analysis.skew.phases`).

    Attributes:
        split_calls: Calls of the window whose routing is split into prefill and decode.
        calls: Calls of the window with routing (the combined view's).
        profiles: ``prefill`` and ``decode`` profiles (kind ``phase``), judged with the same
            thresholds and minimum volume as the combined view; empty without a split.
        note: What is split and what is combined, in one line.
    """

    model_config = ConfigDict(frozen=True)

    split_calls: int
    calls: int
    profiles: list[ScopeProfile]
    note: str


class SkewReport(BaseModel):
    """Everything ``orchestrator skew`` shows, as one typed object.

    Attributes:
        generated_at: When the report was built.
        database: The telemetry database (password hidden).
        window: The report window.
        shape: The MoE shape of the calls.
        models: Served model names seen in the window.
        thresholds: The alarm thresholds used.
        workflow_filter: The workflow the report was limited to, if any.
        overall: The global profile (all workflows) of the window.
        workflows: One profile per workflow.
        nodes: One profile per ``workflow/node``.
        fingerprints: Each workflow and node against the global profile.
        drift: Drift against the previous window, or None when no baseline was asked for.
        outliers: Outlier requests.
        timeline: Global routing per step of the window.
        notes: Plain-language caveats (expert-routing source, sample sizes).
        capture_sampling_rates: Captured calls per capture sampling rate in the window (every
            figure weights a call by ``1 / rate``: :mod:`orchestrator.analysis.sampling`).
        capture_sampling: The same as one line of text, shown with every table.
        phases: Hot and dead for prefill and decode apart, or the line saying the source
            has no split (None in reports written before issue 51).
        pending_routing_calls: Model calls in scope (the batch, the workflow) whose expert
            routing is still ``pending`` (replay deferred by a batch job): not in any figure
            above, never read as zero experts; ``orchestrator telemetry fill-routing`` fills
            them.
    """

    model_config = ConfigDict(frozen=True)

    generated_at: datetime
    database: str
    window: TimeWindow
    shape: ModelShape
    models: list[str]
    thresholds: Thresholds
    workflow_filter: str | None
    overall: ScopeProfile
    workflows: list[ScopeProfile]
    nodes: list[ScopeProfile]
    fingerprints: list[Fingerprint]
    drift: DriftReport | None
    outliers: OutlierReport
    timeline: list[TimelinePoint]
    notes: list[str]
    pending_routing_calls: int = 0
    capture_sampling_rates: dict[float, int] = Field(default_factory=dict)
    capture_sampling: str = "capture sampling rate 1 (every call captured)"
    phases: PhaseView | None = None
