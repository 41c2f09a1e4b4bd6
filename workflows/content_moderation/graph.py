"""The content-moderation workflow (LangGraph)::

    START → lexicon_scan → assess_risk → decide → END

* ``lexicon_scan`` (no model): prepares the post (sanitising, truncation window, decoding
  report), matches the term lexicon over the full text (up to ``limits.scan_chars``), marks
  mentions, and runs the learned risk scorer (:mod:`.scorer`; ``unavailable`` without its
  file).
* ``assess_risk`` (model): :func:`skills.assess_risk` with JSON-schema-constrained output; the
  post is passed as delimited data. Skipped for an empty post. A server error answer, an
  unreachable server or one that drops the connection mid-answer becomes an ``error``
  judgement (``Model: unavailable`` in the rationale; the policy treats it as ``uncertain``),
  so the verdict still comes from the lexicon and the scorer.
* ``decide`` (policy): the decision table of ``policy.toml`` combines both judgements into the
  :class:`~workflows.content_moderation.verdict.Verdict`, which the dispatcher stores in
  ``requests.result``.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any, TypedDict

from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from orchestrator.core.workflow import Workflow, WorkflowContext
from orchestrator.exceptions import ServerUnavailableError
from orchestrator.request import Request
from skills.assess_risk import assess_risk
from skills.calling import CallOptions
from workflows.content_moderation.inputs import PreparedPost, prepare_post
from workflows.content_moderation.judgement import (
    MODEL_CATEGORIES,
    build_verdict,
    lexicon_findings,
    model_findings,
    scorer_findings,
)
from workflows.content_moderation.lexicon import DEFAULT_LEXICON_DIR
from workflows.content_moderation.matcher import Lexicon
from workflows.content_moderation.policy import DEFAULT_POLICY_PATH, Policy, load_policy
from workflows.content_moderation.route import ROUTE
from workflows.content_moderation.scorer import (
    DEFAULT_SCORER_PATH,
    RiskScorer,
    ScorerError,
    load_scorer,
)
from workflows.content_moderation.verdict import (
    LexiconJudgement,
    ModelJudgement,
    ScorerJudgement,
    Span,
    Verdict,
)

#: Request metadata key carrying the invalid-byte count of a post decoded from bytes.
INVALID_BYTES_KEY = "moderation.invalid_utf8_bytes"
#: Completion limit of the assess_risk call (see :func:`skills.assess_risk.assess_risk`).
ASSESS_MAX_TOKENS = 256


class ModerationState(TypedDict, total=False):
    """Graph state: the post, then what each node adds."""

    post: str
    invalid_utf8_bytes: int
    prepared: PreparedPost
    lexicon: LexiconJudgement
    spans: tuple[Span, ...]
    assessment: ModelJudgement
    scorer: ScorerJudgement
    verdict: Verdict


def build_graph(
    lexicon: Lexicon,
    policy: Policy,
    scorer: RiskScorer | None = None,
    scorer_note: str = "",
):  # -> CompiledStateGraph
    """Compile the graph for a lexicon, a policy and a scorer (None: ``unavailable``, with
    ``scorer_note`` saying why); no checkpointer: one short run per post."""

    def scan_and_score(state: ModerationState) -> dict[str, Any]:
        prepared = prepare_post(
            state["post"], policy.limits, invalid_utf8_bytes=state.get("invalid_utf8_bytes", 0)
        )
        matcher = lexicon.matcher()
        scan = matcher.scan(prepared.normalized.original, prepared.normalized)
        judgement, spans = lexicon_findings(scan, matcher.version, matcher.names_harm)
        scored = scorer_findings(scorer, prepared.normalized.original, scorer_note, spans)
        return {"prepared": prepared, "lexicon": judgement, "spans": spans, "scorer": scored}

    async def lexicon_scan(state: ModerationState) -> dict[str, Any]:
        # CPU work of about 2 ms per post on a quiet host (normalising, the lexicon scan,
        # the scorer's features; it was 5-9 ms, 25-45 ms under load, before the scorer's
        # dense product): in a worker thread, so other requests on this event loop (a
        # batch's rows, the UI's turns) keep sending and receiving while a post is scored
        return await asyncio.to_thread(scan_and_score, state)

    async def assess(state: ModerationState, runtime: Runtime[WorkflowContext]) -> dict[str, Any]:
        prepared = state["prepared"]
        if prepared.report.empty:
            return {"assessment": ModelJudgement(status="skipped", error="empty post")}
        try:
            answer = await assess_risk(
                runtime.context.llm,
                prepared.window,
                MODEL_CATEGORIES,
                options=CallOptions(max_tokens=ASSESS_MAX_TOKENS),
            )
        except ServerUnavailableError as exc:
            return {"assessment": ModelJudgement(status="error", error=f"unavailable: {exc}"[:300])}
        return {"assessment": model_findings(answer)}

    async def decide(state: ModerationState) -> dict[str, Any]:
        verdict = build_verdict(
            state["prepared"],
            policy,
            lexicon=(state["lexicon"], state["spans"]),
            model=state["assessment"],
            source="combined",
            scorer=state.get("scorer"),
        )
        return {"verdict": verdict}

    graph = StateGraph(ModerationState, context_schema=WorkflowContext)
    graph.add_node("lexicon_scan", lexicon_scan)
    graph.add_node("assess_risk", assess)
    graph.add_node("decide", decide)
    graph.add_edge(START, "lexicon_scan")
    graph.add_edge("lexicon_scan", "assess_risk")
    graph.add_edge("assess_risk", "decide")
    graph.add_edge("decide", END)
    return graph.compile()


#: Posts :meth:`ContentModerationWorkflow.warm` scores (English and Chinese: each loads its part).
WARM_POSTS = (
    "Thanks for the quick reply, the parcel arrived today.",
    "谢谢你的回复，包裹今天到了。",
)


class ContentModerationWorkflow(Workflow[ModerationState, Verdict]):
    """Registered for its route, ``content_moderation`` (:data:`.route.ROUTE`); its result is a
    :class:`Verdict`.

    Args:
        lexicon: A live lexicon (the packaged folder, reloaded on change, by default).
        policy: The policy (the packaged ``policy.toml`` by default).
        lexicon_dir: Folder for a new :class:`Lexicon` when ``lexicon`` is None.
        policy_path: File for the policy when ``policy`` is None.
        scorer: A loaded risk scorer; by default ``scorer_path`` is read, and when it cannot
            be the scorer is ``unavailable`` in every verdict (its rationale says why).
        scorer_path: File of the risk scorer (``orchestrator moderation fit`` writes it).

    Raises:
        LexiconError, PolicyError: The lexicon folder or the policy file is invalid.
    """

    name = "content_moderation"
    route = ROUTE

    def __init__(
        self,
        lexicon: Lexicon | None = None,
        policy: Policy | None = None,
        *,
        lexicon_dir: Path | str = DEFAULT_LEXICON_DIR,
        policy_path: Path | str = DEFAULT_POLICY_PATH,
        scorer: RiskScorer | None = None,
        scorer_path: Path | str | None = DEFAULT_SCORER_PATH,
    ) -> None:
        self.lexicon = lexicon or Lexicon(lexicon_dir)
        self.policy = policy or load_policy(policy_path)
        self.scorer_note = ""
        if scorer is None and scorer_path is not None:
            try:
                scorer = load_scorer(scorer_path)
            except ScorerError as exc:
                self.scorer_note = str(exc)
        elif scorer is None:
            self.scorer_note = "no scorer configured"
        self.scorer = scorer
        self.graph = build_graph(self.lexicon, self.policy, scorer, self.scorer_note)

    def warm(self) -> None:
        """Score :data:`WARM_POSTS` once: the first post imports scikit-learn and wordfreq and
        reads the word lists (seconds of CPU that stalled a batch's event loop, and every row in
        progress with it, inside its first moderation row)."""
        if self.scorer is not None:
            for post in WARM_POSTS:
                self.scorer.score(post)

    def initial_state(self, request: Request) -> ModerationState:
        raw = request.metadata.get(INVALID_BYTES_KEY, "0")
        invalid = int(raw) if raw.isdigit() else 0
        return ModerationState(post=request.text, invalid_utf8_bytes=invalid)

    def result(self, state: ModerationState) -> Verdict:
        return state["verdict"]

    def output(self, result: Verdict) -> str | None:
        """``decision/severity: categories``."""
        cats = ", ".join(c.category.value for c in result.categories)
        return f"{result.decision.value}/{result.severity.value}" + (f": {cats}" if cats else "")

    def headline(self, result: Verdict) -> str:
        cats = ", ".join(c.category.value for c in result.categories) or "no category"
        return f"[{result.decision.value}/{result.severity.value}] {cats} ({result.policy_rule})"
