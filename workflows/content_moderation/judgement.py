"""From the two judges' findings to a :class:`~workflows.content_moderation.verdict.Verdict`.

One function, :func:`build_verdict`, assembles every verdict: the combined one (both judges),
the lexicon-alone one (model ``absent``) and the model-alone one (lexicon ``absent``), so the
evaluation compares like with like. The decision itself always comes from the policy table.
"""

from __future__ import annotations

from collections.abc import Sequence

from skills.assess_risk import RiskAssessment
from workflows.content_moderation.disguise import SECOND_PERSON

# lexicon_findings lives below the scorer (findings.py); re-exported for existing callers
from workflows.content_moderation.findings import lexicon_findings as lexicon_findings
from workflows.content_moderation.inputs import PreparedPost
from workflows.content_moderation.policy import (
    LexiconState,
    ModelState,
    Policy,
    PolicyRule,
    ScorerState,
)
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


def scorer_findings(
    scorer: RiskScorer | None,
    text: str,
    why: str = "",
    spans: Sequence[Span] | None = None,
) -> ScorerJudgement:
    """The learned scorer's judgement of ``text`` (``unavailable`` when ``scorer`` is None;
    ``why`` then says why). ``spans`` are the lexicon's spans of ``text`` (the hate model
    reads them); None scans them with the packaged lexicon."""
    if scorer is None:
        return ScorerJudgement(status="unavailable", error=(why or "no scorer loaded")[:300])
    r = scorer.score(text, spans)
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


def disguised_state(state: LexiconState, prepared: PreparedPost) -> LexiconState:
    """A low-severity term found only after bidi controls were undone counts as medium: the
    reordering of what a reader sees is itself a sign of intent (issue 47)."""
    return "medium" if state == "low" and prepared.report.bidi_controls else state


def unscanned(rule: PolicyRule, prepared: PreparedPost) -> PolicyRule:
    """``rule``, unless it allows a post whose end the lexicon never read (longer than
    ``limits.scan_chars``): then a person reads it. Padding is free, so what was not read is
    never passed as clean (tester12 E: 200,000 harmless characters, then a threat)."""
    report = prepared.report
    if rule.decision is not Decision.ALLOW or not report.scan_truncated:
        return rule
    reason = (
        f"the post is {report.chars:,} characters and the lexicon read the first "
        f"{report.scanned_chars:,}: a person reads the rest"
    )
    return PolicyRule(
        id="unscanned-tail", lexicon=("*",), model=("*",), decision=Decision.REVIEW, reason=reason
    )


def speech_capped(
    state: ScorerState, l_state: LexiconState, lexicon: LexiconJudgement | None
) -> ScorerState:
    """Speech about harm (the post opposes, reports or quotes discrimination) is a mention at
    most: the scorer does not send it to review alone while the lexicon finds nothing above
    low outside mentions (issue 47)."""
    speech = lexicon is not None and lexicon.speech_about_harm
    if speech and l_state in ("none", "mention", "low") and state in ("medium", "high"):
        return "low"
    return state


def solo_weighed(
    state: ScorerState, l_state: LexiconState, scorer: ScorerJudgement | None, policy: Policy
) -> ScorerState:
    """The scorer alone (the lexicon finds nothing above low, mentions aside) sends a post to
    review only from the probability where its dev precision on such posts reached the
    policy's floor (:meth:`Policy.scorer_may_review_alone`); below it ``medium`` reads as
    ``low``. ``high`` and posts with a medium+ term are left as they are (issue 47)."""
    if state != "medium" or l_state not in ("none", "mention", "low") or scorer is None:
        return state
    return state if policy.scorer_may_review_alone(scorer.lang, scorer.flagged) else "low"


_AIMED_HARM = frozenset({Category.THREAT, Category.SELF_HARM})
#: Hits of a kind (not a listed term) that the scorer may not clear: a generalisation about a
#: group, a construction (an intent to die, a death wish, a scam: constructions.py) and an
#: insult aimed at a person (you/你/楼上 + an insult noun); the scorer learns
#: words, and a learned clear of "楼上的死胖子" would let every new insult of the kind through.
_UNCLEARED_KINDS = frozenset({"generalised", "addressed", "construction"})


def cleared_state(
    state: ScorerState,
    prepared: PreparedPost,
    lexicon: LexiconJudgement | None = None,
    spans: Sequence[Span] = (),
) -> ScorerState:
    """The scorer may not clear a term that bidi controls hid (:func:`disguised_state`), a
    generalisation about a group or an insult aimed at a person (``generalised`` and
    ``addressed`` spans, :data:`_UNCLEARED_KINDS`),
    nor a threat or self-harm term in a post addressed to its reader (``你去死吧``: a death
    wish aimed at someone is never the scorer's to clear, in any language): its ``clear``
    reads as ``low`` there."""
    if state != "clear":
        return state
    if prepared.report.bidi_controls:
        return "low"
    if any(s.how in _UNCLEARED_KINDS and not s.mention for s in spans):
        return "low"
    aimed = lexicon is not None and any(c.category in _AIMED_HARM for c in lexicon.categories)
    return "low" if aimed and SECOND_PERSON.search(prepared.normalized.text) else state


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


def _slur_as_insult(
    lexicon: LexiconJudgement | None, spans: Sequence[Span], scorer: ScorerJudgement | None
) -> bool:
    """True when the lexicon's hate category should read as harassment: the English hate
    model ran and rates the post low, and no critical hate term (no mention) is present.

    A slur is hate speech when it is aimed at a group or at a person as a member of one; used
    as a general insult ("you f*", between friends) it is offensive (Davidson et al., 2017).
    The hate model (:mod:`.targeting` features) tells the two apart; critical terms ("gas the
    jews", the n-word) stay hate whatever it says.
    """
    if lexicon is None or scorer is None or scorer.status != "ok" or scorer.hate is None:
        return False
    if scorer.hate_state in ("medium", "high"):
        return False
    if not any(c.category is Category.HATE for c in lexicon.categories):
        return False
    return not any(
        s.category is Category.HATE and s.severity is Severity.CRITICAL and not s.mention
        for s in spans
        if s.source == "lexicon"
    )


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
    l_state = disguised_state(lexicon_state(lex_j), prepared)
    m_state = policy.model_vote(l_state, model_state(model, policy.min_confidence))
    s_state = speech_capped(scorer_state(scorer), l_state, lex_j)
    s_state = solo_weighed(s_state, l_state, scorer, policy)
    s_state = cleared_state(s_state, prepared, lex_j, lex_spans)
    rule = unscanned(policy.decide(l_state, m_state, s_state), prepared)
    trusted = m_state in ("allow", "review", "block")
    insult = _slur_as_insult(lex_j, lex_spans, scorer)
    severities = [lex_j.severity] if lex_j is not None else []
    if model is not None and trusted and model.decision is not Decision.ALLOW and model.severity:
        severities.append(model.severity)
    spans = list(lex_spans)
    if model is not None and trusted:
        spans += _evidence_spans(prepared.text, model)
    spans.sort(key=lambda s: (s.start, s.end))
    parts = [
        f"{rule.reason} (rule {rule.id}).",
        _lexicon_note(lex_j, lex_spans),
        *_scorer_notes(scorer, insult),
        _model_note(model, policy, trusted=trusted, noted=m_state == "noted"),
        *_input_notes(prepared, lex_j),
    ]
    rationale = " ".join(parts)
    if len(rationale) > RATIONALE_CHARS:
        rationale = rationale[: RATIONALE_CHARS - 1] + "…"
    return Verdict(
        decision=rule.decision,
        severity=Severity.highest(severities),
        categories=_categories(
            lex_j, model if trusted else None, scorer, insult=insult, flagged=rule.decision
        ),
        rationale=rationale,
        spans=tuple(spans[: policy.limits.max_spans]),
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


def _categories(
    lex_j: LexiconJudgement | None, model: ModelJudgement | None,
    scorer: ScorerJudgement | None, *, insult: bool, flagged: Decision,
) -> tuple[CategoryScore, ...]:  # fmt: skip
    """The verdict's categories: the lexicon's (hate read as harassment for a slur used as an
    insult), the trusted model's (``model`` None when untrusted), and, on a post that is not
    allowed, the scorer's hate, or its flag as harassment when nothing else names one."""
    sources: list[tuple[CategoryScore, ...]] = []
    if lex_j is not None:
        sources.append(
            tuple(
                cs.model_copy(update={"category": Category.HARASSMENT})
                if insult and cs.category is Category.HATE
                else cs
                for cs in lex_j.categories
            )
        )
    if model is not None:
        sources.append(model.categories)
    if scorer is not None and scorer.status == "ok" and flagged is not Decision.ALLOW:
        # without a slur the hate model labels hate only at "high" (its review threshold
        # is chosen to confirm slurs, see scorer.py)
        slur = lex_j is not None and any(c.category is Category.HATE for c in lex_j.categories)
        if scorer.hate is not None and (
            scorer.hate_state == "high" or (slur and scorer.hate_state == "medium")
        ):
            sources.append(
                (CategoryScore(category=Category.HATE, score=scorer.hate, sources=("scorer",)),)
            )
        if not any(sources) and scorer.flagged is not None:
            harassment = Category.HARASSMENT
            sources.append(
                (CategoryScore(category=harassment, score=scorer.flagged, sources=("scorer",)),)
            )
    scores: dict[Category, tuple[float, set[str]]] = {}
    for group in sources:
        for cs in group:
            old, where = scores.get(cs.category, (0.0, set()))
            scores[cs.category] = (max(old, cs.score), where | set(cs.sources))
    return tuple(
        CategoryScore(category=c, score=s, sources=tuple(sorted(w)))
        for c, (s, w) in sorted(scores.items(), key=lambda kv: (-kv[1][0], kv[0].value))
    )


def _lexicon_note(lex_j: LexiconJudgement | None, lex_spans: Sequence[Span]) -> str:
    """What the lexicon found, for the rationale (mentions marked)."""
    if lex_j is None:
        return "Lexicon: not run."
    terms = ", ".join(
        dict.fromkeys(
            f"{s.term} [{s.category.value}, {'mention' if s.mention else s.severity.value}]"
            for s in lex_spans
        )
    )
    return f"Lexicon: {terms}." if terms else "Lexicon: no term."


def _scorer_notes(scorer: ScorerJudgement | None, insult: bool) -> list[str]:
    """What the scorer said, for the rationale."""
    if scorer is None:
        return ["Scorer: not run."]
    if scorer.status != "ok":
        return [f"Scorer: unavailable ({scorer.error})."]
    hate = f", hate {scorer.hate:.2f} → {scorer.hate_state}" if scorer.hate is not None else ""
    out = [f"Scorer ({scorer.lang}): {scorer.flagged:.2f} → {scorer.state}{hate}."]
    if insult:
        out.append(
            "The slur reads as an insult of a person, not hate against a group "
            "(no critical hate term, hate model low): category harassment."
        )
    return out


def _model_note(model: ModelJudgement | None, policy: Policy, *, trusted: bool, noted: bool) -> str:
    """What the model said, or why it said nothing usable, for the rationale."""
    if model is None:
        return "Model: not called."
    if model.status == "skipped":
        return f"Model: not called ({model.error or 'skipped'})."
    if model.status == "error":
        return f"Model: unavailable ({(model.error or 'error')[:120]})."
    if model.status != "ok":
        return f"Model: answer unusable ({model.status})."
    conf = f"{(model.confidence or 0):.0%}"
    note = "" if trusted else f", under the {policy.min_confidence:.0%} trust threshold"
    note = policy.noted_reason() if noted else note
    return f"Model: {model.decision} at {conf}{note}: {model.rationale}"


def _input_notes(prepared: PreparedPost, lex_j: LexiconJudgement | None) -> list[str]:
    """What the input held that the reader should know (cut, bad bytes, disguises)."""
    report = prepared.report
    out = []
    if report.truncated:
        out.append(f"The model saw {report.model_chars} of {report.chars} characters.")
    if report.invalid_utf8_bytes:
        out.append(f"{report.invalid_utf8_bytes} invalid UTF-8 bytes replaced.")
    if lex_j is not None and lex_j.speech_about_harm:
        out.append("The post opposes, reports or quotes discrimination: a mention at most.")
    if report.bidi_controls:
        out.append(
            f"{report.bidi_controls} bidi control characters removed; the text was "
            "read in the order it displays."
        )
    if report.emoji_words:
        out.append(f"{report.emoji_words} emoji read as words.")
    return out
