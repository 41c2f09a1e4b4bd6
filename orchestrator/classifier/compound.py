"""Compound requests: routes asked for in separate clauses ("refund my order, and summarise the
attached sheet"), from the rules' signals in each clause (:func:`asked_routes`,
:func:`compound_routes`)."""

from __future__ import annotations

import re
from typing import Literal

from orchestrator.classification import Signal
from orchestrator.classifier.engine import CompiledRules
from orchestrator.classifier.models import Classification
from orchestrator.classifier.negation import (
    clauses,
    in_scopes,
    joined_after_post,
    joins,
    negated_scopes,
)
from orchestrator.classifier.parts import (
    MODERATION_ASK_RULES,
    REVIEW_ASK,
    REVIEW_ASK_RULES,
    TEXT_TASK,
    fold,
    scan,
)
from orchestrator.routes import FALLBACK, Route

#: The learned tier's probability of moderation from which :func:`compound_routes` reads a clause's
#: moderation evidence as an ask (``moderation="likely"``) when it decided another route:
#: "update my address; also, would you let this comment through: nice" (moderation 0.25).
MODERATION_LIKELY = 0.2


def compound_routes(
    norm: str,
    parts: list[tuple[int, int]],
    signals: list[Signal],
    min_score: float,
    *,
    moderation: Literal["decided", "likely"] | None = None,
    content: frozenset[str] = frozenset(),
    wraps: Route | None = None,
) -> tuple[tuple[Route, float], ...]:
    """Routes asked for in separate clauses, in the order asked, each with its evidence in
    the clause that asks for it (in [0, 1]); () unless two or more.

    A clause asks for a route when that route's evidence in the clause (noisy-OR of the
    non-negated positive signals whose span lies in it) reaches ``min_score`` and beats every
    other route's there by 0.2. Evidence of what a post says (the ``content`` rules: profanity,
    slurs, hashtags) never makes a clause an ask, and a clause that opens with a quotation mark
    is quoted content, never an ask.

    Moderation is read apart, because what follows its ask is the post under review, and a post
    may mention anything ("moderate this: where is my refund" is one request). The clauses
    after the one that asks for moderation are therefore never asks of their own, unless the
    post is quoted and a joining word follows its closing mark (``moderate this: "..." and
    then reset my password``: :func:`~orchestrator.classifier.negation.joined_after_post`). Clauses
    before it are asks only when the moderation clause opens with a joining word: in "where is
    my parcel? also, is it ok to post this: ..." the parcel is a request of its own, while in
    "where is my refund, you thieves. remove it?" it is the post. A moderation ask in the
    first clause leaves a single route.

    Args:
        norm: The normalised text.
        parts: Its :func:`~orchestrator.classifier.negation.clauses`.
        signals: The rules' signals on ``norm``.
        min_score: The evidence a clause needs to ask for a route (``secondary_min``).
        moderation: ``"decided"``: the tiers decided content_moderation for the whole text;
            ``"likely"``: they decided another route but find moderation likely
            (:data:`MODERATION_LIKELY`). Then a clause asks for moderation when it holds
            moderation evidence that reaches ``min_score`` or the post itself (after a ``:`` or
            a quotation mark), whatever other routes score there: the ask may be in words no
            rule lists ("tell me if this *post* breaks our rules: ..."), and the post's own
            words may score for another route; "and also *post* the chart to our channel"
            holds neither.
        wraps: The route whose declaration says it wraps content under review
            (:attr:`~orchestrator.routes.RouteSpec.wraps_content`: moderation), or None.
        content: Ids of the rules whose evidence is what a post says (profanity, slurs,
            hashtags): never evidence that a clause asks for moderation.
    """
    if len(parts) < 2:
        return ()
    asked: list[tuple[Route, float]] = []
    for j, (a, b) in enumerate(parts):
        if norm[a:b].lstrip()[:1] in _QUOTES:
            continue
        miss = _clause_miss(signals, a, b, content)
        if not miss:
            continue
        if (
            moderation is not None
            and wraps is not None
            and wraps in miss
            and (1.0 - miss[wraps] >= min_score or _POST.search(norm, a, b))
        ):
            route: Route | None = wraps
        else:
            route = _clause_ask(miss, min_score)
            if route is None:
                continue
        assert route is not None
        if route == wraps and _text_task_clause(norm, a, b, signals):
            continue
        ask = (route, 1.0 - miss[route])
        if route == wraps:
            joined = j > 0 and joins(norm, parts[j - 1][1], a)
            out = [*asked, ask] if asked and joined else [ask]
            # a quoted post that closes, then a joining word: the clauses after it are asks
            closed = joined_after_post(norm, a)
            if closed is not None:
                for c, d in parts[j + 1 :]:
                    if c > closed and norm[c:d].lstrip()[:1] not in _QUOTES:
                        after = _clause_ask(_clause_miss(signals, c, d, content), min_score)
                        if after is not None and all(r is not after for r, _ in out):
                            out.append((after, 1.0 - _clause_miss(signals, c, d, content)[after]))
            return tuple(out) if len(out) >= 2 else ()
        if all(r != route for r, _ in asked):
            asked.append(ask)
    return tuple(asked) if len(asked) >= 2 else ()


def _text_task_clause(norm: str, a: int, b: int, signals: list[Signal]) -> bool:
    """Whether the clause ``norm[a:b]`` asks to repeat, translate or explain the text after its
    colon or quotation mark (:data:`~orchestrator.classifier.parts.TEXT_TASK` in the words
    before it) and nothing outside that text asks for a review (tester7 F15): "also repeat
    this sentence: your post is live" asks for no moderation, nor does "tell me what this
    means: 'your comment violates our policy'"."""
    post = _POST.search(norm, a, b)
    if post is None or TEXT_TASK.search(norm[a : post.start()]) is None:
        return False
    own = norm[a : post.start()]
    quoted = _QUOTATION.match(norm, post.start(), b)
    after = quoted.end() if quoted is not None else b  # a colon's text runs to the clause end
    own += " " + norm[after:b]
    if REVIEW_ASK.search(own):
        return False
    return not any(
        s.span is not None
        and (a <= s.span[0] < post.start() or after <= s.span[0] < b)
        and not s.negated
        and s.rule_id.startswith(REVIEW_ASK_RULES)
        for s in signals
    )


def asked_routes(
    compiled: CompiledRules,
    norm: str,
    parts: list[tuple[int, int]] | None,
    signals: list[Signal],
    scopes: list[tuple[int, int]],
    min_score: float,
) -> tuple[tuple[Route, float], ...]:
    """:func:`compound_routes` on the rules' signals; when that finds one route, again with the
    rules that fire once more in a later clause (:func:`_repeats_in_clauses`): a rule fires
    once, at its first match, so a second clause that repeats a word of the first
    ("汇总附件里的发票表格，还有我的订单要退款") had no evidence of its own (issue 46)."""
    if parts is None:
        return ()
    content, wraps = compiled.content_ids, compiled.wraps_content
    asked = compound_routes(norm, parts, signals, min_score, content=content, wraps=wraps)
    if asked or len(parts) < 2:
        return asked
    more = _repeats_in_clauses(compiled, norm, parts, signals, scopes)
    if not more:
        return ()
    return compound_routes(norm, parts, signals + more, min_score, content=content, wraps=wraps)


def _repeats_in_clauses(
    compiled: CompiledRules,
    norm: str,
    parts: list[tuple[int, int]],
    signals: list[Signal],
    scopes: list[tuple[int, int]],
) -> list[Signal]:
    """Signals of the positive rules that fire again in a later clause than their first
    match (``signals`` holds one signal per rule, at its first match), with spans in
    ``norm``; for :func:`compound_routes` only (what the classification reports is unchanged)."""
    first = {s.rule_id: s.span for s in signals if s.span is not None}
    extra: list[Signal] = []
    for a, b in parts[1:]:
        for index, (sim, matched, span) in compiled.match(norm[a:b]).items():
            rule = compiled.rules[index]
            at = first.get(rule.id)
            if rule.negative or span is None or at is None or at[0] >= a:
                continue
            x, y = span[0] + a, span[1] + a
            negated = rule.negatable and in_scopes((x, y), scopes)
            extra.append(
                Signal(
                    rule_id=rule.id,
                    route=rule.route,
                    weight=round(rule.weight * sim, 4),
                    matched=matched,
                    span=(x, y),
                    similarity=sim,
                    negated=negated,
                )
            )
    return extra


def _clause_miss(
    signals: list[Signal], a: int, b: int, content: frozenset[str]
) -> dict[Route, float]:
    """Per route, ``prod(1 - w)`` of the positive, non-negated signals inside ``[a, b)``
    (what a post says, the ``content`` rules, excluded): 1 minus its evidence there."""
    miss: dict[Route, float] = {}
    for sig in signals:
        if sig.span is None or sig.negative or sig.negated or sig.rule_id in content:
            continue
        if a <= sig.span[0] and sig.span[1] <= b:
            miss[sig.route] = miss.get(sig.route, 1.0) * (1.0 - sig.weight)
    return miss


def _clause_ask(miss: dict[Route, float], min_score: float) -> Route | None:
    """The route a clause asks for: its evidence reaches ``min_score`` and beats every other
    route's there by 0.2 (``miss`` from :func:`_clause_miss`); None when no route does."""
    if not miss:
        return None
    ranked = sorted(((1.0 - m, r) for r, m in miss.items()), reverse=True)
    top, route = ranked[0]
    runner = ranked[1][0] if len(ranked) > 1 else 0.0
    return route if top >= min_score and top - runner >= 0.2 else None


#: Opening quotation marks (normalised text: NFKC has made full-width ones half-width).
_QUOTES = frozenset("\"'“‘「『«")
#: Where a post under review begins inside a clause that asks for moderation.
_POST = re.compile('[:："“「『«]')


def asks_to_moderate(
    compiled: CompiledRules,
    text: str,
    exts: tuple[str, ...],
    rules: tuple[str, ...] = MODERATION_ASK_RULES,
) -> bool:
    """Whether a moderation rule that asks for a review or names abuse (ids starting with one
    of ``rules``: :data:`MODERATION_ASK_RULES`) fires on ``text`` outside a negation's scope."""
    norm, _ = scan(text, compiled.max_scan_chars)
    scopes = negated_scopes(norm)
    for index, (_, _, span) in compiled.match(norm, exts, None).items():
        rule = compiled.rules[index]
        if (
            rule.route == compiled.wraps_content
            and not rule.negative
            and rule.id.startswith(rules)
            and not (rule.negatable and span is not None and in_scopes(span, scopes))
        ):
            return True
    return False


def text_task(compiled: CompiledRules, text: str, exts: tuple[str, ...]) -> str | None:
    """The request's own words around the text it quotes or puts after a colon
    (:func:`own_words`) when they ask to do something with that text other than to judge it
    (repeat, translate, explain it, what someone wrote:
    :data:`~orchestrator.classifier.parts.TEXT_TASK`) and no rule that asks for a review
    (:data:`~orchestrator.classifier.parts.REVIEW_ASK_RULES`) fires in them; None otherwise
    (tester7 F15). A colon or a quotation mark alone never makes a request a moderation one:
    "重复这句话：您的订单已退款" asks to repeat it, while "Flag or approve: ..." and
    "翻译一下，看看违不违规：..." ask to judge it."""
    words = own_words(text)
    if words is None or TEXT_TASK.search(words) is None:
        return None
    # the request's words only: what it quotes may say "审核" or "removed"
    if REVIEW_ASK.search(words) or asks_to_moderate(compiled, words, exts, REVIEW_ASK_RULES):
        return None
    return words


def own_words(text: str) -> str | None:
    """``text`` with each quotation's contents replaced by ``…``, or else its words up to its
    first colon (with the colon); None when it quotes nothing and has no colon with text after
    it within the first :data:`_OWN_MAX_CHARS` characters (a story's colon frames nothing)."""
    words, n = _QUOTATION.subn(lambda q: q.group()[0] + "…" + q.group()[-1], text)
    if n:
        return words
    cut = _COLON.search(text, 0, _OWN_MAX_CHARS)
    return text[: cut.end()] if cut is not None else None


def other_asks(words: str) -> str | None:
    """The clauses of a request's own words (:func:`own_words`, normalised) that ask for no
    text task, joined by a space ("帮我查一下快递，另外重复这句话：" -> "帮我查一下快递"); None
    when every clause asks for one."""
    norm = fold(words)
    kept = [norm[a:b] for a, b in clauses(norm) if TEXT_TASK.search(norm[a:b]) is None]
    return " ".join(kept) if kept else None


def material(text: str) -> str:
    """What ``text`` quotes (the quotations' contents, joined by a space), or else what follows
    its first colon: the text that :func:`own_words` are about."""
    quoted = [next(g for g in m.groups() if g is not None) for m in _QUOTATION.finditer(text)]
    if any(quoted):
        return " ".join(q for q in quoted if q)
    cut = _COLON.search(text)
    return text[cut.end() :].strip() if cut is not None else text


def not_reviewed(c: Classification, frame: str) -> Classification:
    """``c`` (content moderation for a text with a :func:`text_task` framing) as an
    out-of-scope fallback: nobody asked for a review of what the text quotes (uncalibrated
    confidence 0.5: no labelled request measures such a decision)."""
    return c.model_copy(
        update={
            "route": FALLBACK,
            "secondary_routes": (),
            "fallback_reason": "out_of_scope",
            "confidence": 0.5,
            "calibrated": False,
            "reason": f"the request asks to repeat, translate or explain a text ({frame!r}), "
            f"not to review it, and what it quotes is no request of a route; the tiers read "
            f"{c.route}: {c.reason}",
        }
    )


#: The contents of a quotation (paired marks), as :func:`material` takes them.
#: Longest run of a request's own words before the colon that introduces the text they ask about.
_OWN_MAX_CHARS = 80
_COLON = re.compile(r"[:：](?=\s*\S)")
_QUOTATION = re.compile(r'“([^”]*)”|"([^"\n]*)"|「([^」]*)」|『([^』]*)』|«([^»]*)»')
