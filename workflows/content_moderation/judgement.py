"""From the two judges' findings to a :class:`~workflows.content_moderation.verdict.Verdict`.

One function, :func:`build_verdict`, assembles every verdict: the combined one (both judges),
the lexicon-alone one (model ``absent``) and the model-alone one (lexicon ``absent``), so the
evaluation compares like with like. The decision itself always comes from the policy table.
"""

from __future__ import annotations

from collections.abc import Sequence

from skills.assess_risk import RiskAssessment
from workflows.content_moderation.inputs import PreparedPost
from workflows.content_moderation.matcher import ScanResult
from workflows.content_moderation.mention import MentionRules, load_mention_rules
from workflows.content_moderation.policy import LexiconState, ModelState, Policy, ScorerState
from workflows.content_moderation.scorer import RiskScorer
from workflows.content_moderation.verdict import (
    TAXONOMY,
    Category,
    CategoryScore,
    Decision,
    LexiconJudgement,
    ModelJudgement,
    ScorerJudgement,
    Severity,
    Span,
    Verdict,
    VerdictSource,
)

#: Taxonomy shown to the model: category name → one-line description.
MODEL_CATEGORIES: dict[str, str] = {c.value: TAXONOMY[c].description for c in Category}
RATIONALE_CHARS = 600


def lexicon_findings(
    scan: ScanResult,
    version: str,
    names_harm: frozenset[str] = frozenset(),
    mentions: MentionRules | None = None,
) -> tuple[LexiconJudgement, tuple[Span, ...]]:
    """The lexicon's judgement and its spans (all of them; the verdict caps the list).

    Args:
        scan: The matcher's hits.
        version: The lexicon version.
        names_harm: Terms that name a harm (``Matcher.names_harm``); a hit on one of them in a
            sentence that negates or condemns it is a mention (left out of the severity and
            the categories).
        mentions: The cue rules (the packaged ``mention.toml`` by default).
    """
    rules = mentions if mentions is not None or not names_harm else load_mention_rules()
    text = scan.normalized.original
    is_mention = [
        rules is not None and h.term in names_harm and rules.is_mention(text, h.start, h.end)
        for h in scan.hits
    ]
    best: dict[Category, float] = {}
    for hit, mention in zip(scan.hits, is_mention, strict=True):
        if not mention:
            best[hit.category] = max(best.get(hit.category, 0.0), hit.score)
    judgement = LexiconJudgement(
        severity=Severity.highest(
            [h.severity for h, m in zip(scan.hits, is_mention, strict=True) if not m]
        ),
        categories=tuple(
            CategoryScore(category=c, score=s, sources=("lexicon",))
            for c, s in sorted(best.items(), key=lambda kv: (-kv[1], kv[0].value))
        ),
        hits=len(scan.hits),
        mentions=sum(is_mention),
        version=version,
    )
    spans = tuple(
        Span(
            start=h.start,
            end=h.end,
            text=h.text,
            term=h.term,
            category=h.category,
            severity=h.severity,
            how=h.how,
            score=h.score,
            mention=m,
        )
        for h, m in zip(scan.hits, is_mention, strict=True)
    )
    return judgement, spans


def scorer_findings(scorer: RiskScorer | None, text: str, why: str = "") -> ScorerJudgement:
    """The learned scorer's judgement of ``text`` (``unavailable`` when ``scorer`` is None;
    ``why`` then says why)."""
    if scorer is None:
        return ScorerJudgement(status="unavailable", error=(why or "no scorer loaded")[:300])
    r = scorer.score(text)
    return ScorerJudgement(
        status="ok",
        lang=r.lang,
        flagged=r.flagged,
        hate=r.hate,
        state=r.state,
        hate_state=r.hate_state,
        version=r.version,
    )


def model_findings(assessment: RiskAssessment) -> ModelJudgement:
    """The skill's answer as a :class:`ModelJudgement` (categories typed, strings bounded)."""
    categories = tuple(
        CategoryScore(category=Category(c.category), score=c.score, sources=("model",))
        for c in assessment.categories
        if c.category in Category.__members__.values()
    )
    return ModelJudgement(
        status=assessment.status,
        decision=Decision(assessment.decision) if assessment.decision else None,
        severity=Severity(assessment.severity) if assessment.severity else None,
        categories=categories,
        confidence=assessment.confidence,
        rationale=assessment.rationale[:300],
        evidence=assessment.evidence,
        model=assessment.model,
        finish_reason=assessment.finish_reason,
        raw=assessment.raw[:200] if assessment.raw else None,
        error=assessment.error[:300] if assessment.error else None,
    )


def lexicon_state(judgement: LexiconJudgement | None) -> LexiconState:
    """``absent`` when the lexicon did not run; ``mention`` when its only hits above ``low``
    are mentions; else its highest severity."""
    if judgement is None:
        return "absent"
    if judgement.mentions and judgement.severity.rank <= Severity.LOW.rank:
        return "mention"
    return judgement.severity.value


def scorer_state(judgement: ScorerJudgement | None) -> ScorerState:
    """``absent`` when the scorer did not run or is unavailable, else its state."""
    return "absent" if judgement is None or judgement.status != "ok" else judgement.state


def model_state(judgement: ModelJudgement | None, min_confidence: float) -> ModelState:
    """``absent`` (no model), ``uncertain`` (unusable or under-confident answer) or the
    model's decision."""
    if judgement is None or judgement.status == "skipped":
        return "absent"
    if (
        judgement.status != "ok"
        or judgement.decision is None
        or (judgement.confidence or 0.0) < min_confidence
    ):
        return "uncertain"
    return judgement.decision.value


def _evidence_spans(post: str, judgement: ModelJudgement) -> list[Span]:
    """Quotes the model gave that really occur in the post (others are dropped)."""
    if not judgement.categories:
        return []
    top = max(judgement.categories, key=lambda c: c.score)
    spans = []
    folded = post.casefold()
    for quote in judgement.evidence:
        q = quote.strip()
        at = folded.find(q.casefold()) if len(q) >= 2 else -1
        if at < 0 or len(q.casefold()) != len(q):
            continue
        spans.append(
            Span(
                start=at,
                end=at + len(q),
                text=post[at : at + len(q)][:200],
                term=q[:200],
                category=top.category,
                severity=judgement.severity or Severity.NONE,
                how="evidence",
                score=top.score,
                source="model",
            )
        )
    return spans


def build_verdict(
    prepared: PreparedPost,
    policy: Policy,
    *,
    lexicon: tuple[LexiconJudgement, Sequence[Span]] | None,
    model: ModelJudgement | None,
    source: VerdictSource,
    scorer: ScorerJudgement | None = None,
) -> Verdict:
    """Decide by the policy table and assemble the verdict.

    Args:
        prepared: The prepared post.
        policy: The policy (decision table, limits, model trust).
        lexicon: The lexicon's judgement and spans, or None for "absent".
        model: The model's judgement, or None for "absent".
        source: What produced it: ``lexicon``, ``model`` or ``combined``.
        scorer: The learned scorer's judgement, or None for "absent".

    The rationale names every signal and what it said: the policy rule, the lexicon's terms
    (mentions marked), the scorer's probability and state, and the model's answer, or why
    there is none (not called, unavailable, unusable). It never reads a missing or unusable
    model answer as the model's approval.
    """
    lex_j, lex_spans = lexicon if lexicon is not None else (None, ())
    if prepared.report.empty:
        return Verdict(
            decision=Decision.ALLOW,
            severity=Severity.NONE,
            rationale="empty post: nothing to publish or judge",
            source=source,
            policy_version=policy.version,
            policy_rule="empty-post",
            lexicon_version=lex_j.version if lex_j else "",
            model=None,
            input=prepared.report,
            lexicon=lex_j or LexiconJudgement(),
            assessment=model,
            scorer=scorer,
        )
    l_state = lexicon_state(lex_j)
    m_state = model_state(model, policy.min_confidence)
    s_state = scorer_state(scorer)
    rule = policy.decide(l_state, m_state, s_state)
    trusted = m_state in ("allow", "review", "block")

    scores: dict[Category, tuple[float, set[str]]] = {}
    sources: list[tuple[CategoryScore, ...]] = []
    if lex_j is not None:
        sources.append(lex_j.categories)
    if model is not None and trusted:
        sources.append(model.categories)
    if scorer is not None and scorer.status == "ok" and rule.decision is not Decision.ALLOW:
        if scorer.hate is not None and scorer.hate_state in ("medium", "high"):
            sources.append(
                (CategoryScore(category=Category.HATE, score=scorer.hate, sources=("scorer",)),)
            )
        if not scores and not any(sources) and scorer.flagged is not None:
            sources.append(
                (
                    CategoryScore(
                        category=Category.HARASSMENT, score=scorer.flagged, sources=("scorer",)
                    ),
                )
            )
    for group in sources:
        for cs in group:
            old, where = scores.get(cs.category, (0.0, set()))
            scores[cs.category] = (max(old, cs.score), where | set(cs.sources))
    categories = tuple(
        CategoryScore(category=c, score=s, sources=tuple(sorted(w)))  # type: ignore[arg-type]
        for c, (s, w) in sorted(scores.items(), key=lambda kv: (-kv[1][0], kv[0].value))
    )

    severities = [lex_j.severity] if lex_j is not None else []
    if model is not None and trusted and model.decision is not Decision.ALLOW and model.severity:
        severities.append(model.severity)
    severity = Severity.highest(severities)

    spans = list(lex_spans)
    if model is not None and trusted:
        spans += _evidence_spans(prepared.text, model)
    spans.sort(key=lambda s: (s.start, s.end))
    cap = policy.limits.max_spans

    parts = [f"{rule.reason} (rule {rule.id})."]
    if lex_j is not None:
        terms = ", ".join(
            dict.fromkeys(
                f"{s.term} [{s.category.value}, {'mention' if s.mention else s.severity.value}]"
                for s in lex_spans
            )
        )
        parts.append(f"Lexicon: {terms}." if terms else "Lexicon: no term.")
    else:
        parts.append("Lexicon: not run.")
    if scorer is None:
        parts.append("Scorer: not run.")
    elif scorer.status != "ok":
        parts.append(f"Scorer: unavailable ({scorer.error}).")
    else:
        hate = f", hate {scorer.hate:.2f}" if scorer.hate is not None else ""
        parts.append(f"Scorer ({scorer.lang}): {scorer.flagged:.2f} → {scorer.state}{hate}.")
    if model is None:
        parts.append("Model: not called.")
    elif model.status == "skipped":
        parts.append(f"Model: not called ({model.error or 'skipped'}).")
    elif model.status == "error":
        parts.append(f"Model: unavailable ({(model.error or 'error')[:120]}).")
    elif model.status == "ok":
        conf = f"{(model.confidence or 0):.0%}"
        note = "" if trusted else f", under the {policy.min_confidence:.0%} trust threshold"
        parts.append(f"Model: {model.decision} at {conf}{note}: {model.rationale}")
    else:
        parts.append(f"Model: answer unusable ({model.status}).")
    if prepared.report.truncated:
        parts.append(
            f"The model saw {prepared.report.model_chars} of {prepared.report.chars} characters."
        )
    if prepared.report.invalid_utf8_bytes:
        parts.append(f"{prepared.report.invalid_utf8_bytes} invalid UTF-8 bytes replaced.")
    rationale = " ".join(parts)
    if len(rationale) > RATIONALE_CHARS:
        rationale = rationale[: RATIONALE_CHARS - 1] + "…"

    return Verdict(
        decision=rule.decision,
        severity=severity,
        categories=categories,
        rationale=rationale,
        spans=tuple(spans[:cap]),
        spans_total=len(spans),
        source=source,
        policy_version=policy.version,
        policy_rule=rule.id,
        lexicon_version=lex_j.version if lex_j else "",
        model=model.model if model is not None else None,
        input=prepared.report,
        lexicon=lex_j or LexiconJudgement(),
        assessment=model,
        scorer=scorer,
    )
