"""The lexicon's findings on a post: its judgement (severity, categories) and its spans, with
mentions (terms that name a harm in a sentence that condemns it) marked. Used by the verdict
(:mod:`.judgement`) and by the scorer's hate model (:mod:`.scorer`), so it sits below both.
"""

from __future__ import annotations

import re
from dataclasses import asdict, replace

from workflows.content_moderation.matcher import Hit, ScanResult
from workflows.content_moderation.mention import MentionRules, load_mention_rules
from workflows.content_moderation.normalize import is_han
from workflows.content_moderation.verdict import (
    Category,
    CategoryScore,
    LexiconJudgement,
    Severity,
    Span,
)

#: Categories whose terms are mentions in speech about harm (a post that opposes, reports or
#: quotes discrimination; ``mention.toml`` ``speech_*``); threats, sexual and self-harm terms
#: and every critical term keep their severity.
SPEECH_CATEGORIES = frozenset(
    {Category.HATE, Category.REGIONAL_DISCRIMINATION, Category.HARASSMENT}
)
#: Categories whose terms are mentions when quoted in a report of someone else's words
#: (:meth:`MentionRules.is_quoted`: 'he shouted "go back to your country"'); a critical term
#: only under the stricter cues of ``quote_critical_*`` (the word named as a slur or
#: documented: "the word 'X'", "'X' is a slur") and not aimed at the reader (a quote is an
#: easy wrapper for the worst words).
QUOTE_CATEGORIES = SPEECH_CATEGORIES | {Category.THREAT, Category.PROFANITY}


#: An English term said as a form of address at the end of a clause ("shut your mouth, idiot",
#: "thanks, loser!"): a comma or colon just before it, punctuation or the end just after.
_VOCATIVE_BEFORE = re.compile(r"[,，:：]\s*$")
_VOCATIVE_AFTER = re.compile(r"\s*(?:[.!?,;。！？，；…]|$)")


def _aimed(hit: Hit, text: str, rules: MentionRules) -> Hit:
    """A low-severity harassment term aimed at the reader ("you are pathetic", "…, idiot",
    你真是蠢到家了) counts as medium: an insult said to someone goes to a person (issue 47)."""
    if hit.severity is not Severity.LOW or hit.category is not Category.HARASSMENT:
        return hit
    # (English only: after a Chinese comma a bare word is a predicate, "做错了，真蠢")
    vocative = (
        not any(map(is_han, hit.text))
        and _VOCATIVE_BEFORE.search(text[max(0, hit.start - 3) : hit.start])
        and _VOCATIVE_AFTER.match(text, hit.end)
    )
    if vocative or rules.is_addressed(text, hit.start):
        return replace(hit, severity=Severity.MEDIUM)
    return hit


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
            the categories); so is every hit of :data:`SPEECH_CATEGORIES` below critical and
            not aimed at the reader (:meth:`MentionRules.is_addressed`) in a post that is
            speech about harm (:meth:`MentionRules.is_speech_about_harm`), and
            every hit of :data:`QUOTE_CATEGORIES` quoted in a report of someone else's words
            (a critical one under the stricter cues only; :meth:`MentionRules.is_quoted`; the
            post then counts as speech about harm, but its other hits keep their severity).
        mentions: The cue rules (the packaged ``mention.toml`` by default).
    """
    rules = mentions if mentions is not None else load_mention_rules()
    text = scan.normalized.original
    scan = replace(scan, hits=tuple(_aimed(h, text, rules) for h in scan.hits))
    speech = rules.is_speech_about_harm(scan.normalized.text)
    quoted = [
        h.category in QUOTE_CATEGORIES
        and (
            rules.is_quoted(text, h.start, h.end)
            if h.severity is not Severity.CRITICAL
            else not rules.is_addressed(text, h.start)
            and rules.is_quoted(text, h.start, h.end, critical=True)
        )
        for h in scan.hits
    ]
    is_mention = [
        q
        or (h.term in names_harm and rules.is_mention(text, h.start, h.end))
        or (
            speech
            and h.category in SPEECH_CATEGORIES
            and h.severity is not Severity.CRITICAL
            and h.how != "addressed"
            and not rules.is_addressed(text, h.start)
        )
        for h, q in zip(scan.hits, quoted, strict=True)
    ]
    # a report of others' words is speech about harm (the scorer may not flag it alone), but
    # terms outside the quotes keep their severity
    speech = speech or any(quoted)
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
        speech_about_harm=speech,
        version=version,
    )
    # a span is the hit (its fields are Span's first eight) and whether it is a mention
    spans = tuple(Span(**asdict(h), mention=m) for h, m in zip(scan.hits, is_mention, strict=True))
    return judgement, spans
