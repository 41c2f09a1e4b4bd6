"""Whether a request's own words ask for a route: what a part handed on needs (tester13 E2).

The dispatcher runs one workflow per request and records every other route the request asks
for as a part for a person (:mod:`orchestrator.core.compound`, issue 46 item 7). On a customer's
conversation the thread's route runs whatever the classifier read, so the classifier's own
route becomes such a part too, and the n-grams alone may lean to a route nobody asked for
("Note: I am not Thomas Marsh." reads as a post to moderate at 0.94). A part is therefore
handed on only on evidence in the customer's words (:func:`asks_for`):

* the route that wraps content (moderation): a post under review, quoted or after a colon,
  with the words right around it asking for a decision on it (:func:`asks_for_review`);
* any other route: its rules' evidence in the text (the noisy-OR of the positive rules that
  fire outside a negation, less its negative rules; no channel hint) reaches the
  classifier's ``secondary_min``, the bar a clause of a compound request clears.
"""

from __future__ import annotations

from orchestrator.classifier.compound import asks_to_moderate, own_words
from orchestrator.classifier.core import RuleClassifier
from orchestrator.classifier.decide import rule_evidence
from orchestrator.classifier.engine import CompiledRules
from orchestrator.classifier.negation import clauses
from orchestrator.classifier.parts import (
    ASK_LOOK,
    REVIEW_ASK,
    REVIEW_ASK_RULES,
    fold,
    scan,
    simplified,
)
from orchestrator.request import Request
from orchestrator.routes import FALLBACK, Route

#: Moderation rules (id prefixes) that ask for a decision on a text in so many words: a review
#: queue's framing ("Approve or flag:", "审核一下：") or whether it may appear in public.
DECISION_RULES = ("mod.decisive.framing", "mod.decisive.venue")
#: Moderation rules (id prefixes) that are about a post: they ask for a review
#: (:data:`~orchestrator.classifier.parts.REVIEW_ASK_RULES`) or name one ("post", "评论").
POST_RULES = (*REVIEW_ASK_RULES, "mod.object")
#: Where :func:`own_words` put the quoted post.
_POST_MARK = "…"


def asks_for(classifier: RuleClassifier, request: Request, route: Route) -> bool:
    """Whether ``request``'s own words ask for ``route`` (see the module's docstring); never
    for ``fallback`` or a route the live rules do not declare."""
    state = classifier._state  # one snapshot of the live rules and thresholds
    compiled = state.compiled
    if route == FALLBACK or route not in compiled.routes:
        return False
    text = simplified(request.text)
    if route == compiled.wraps_content:
        return asks_for_review(compiled, text)
    exts = tuple(a.extension for a in request.attachments)
    norm, _ = scan(text, compiled.max_scan_chars)
    evidence = rule_evidence(compiled, norm, exts, None)
    return evidence.scores.get(route, 0.0) >= state.thresholds.secondary_min


def asks_for_review(compiled: CompiledRules, text: str) -> bool:
    """Whether ``text`` (Simplified) asks for a decision on a post it carries: it quotes one,
    or puts one after a colon (:func:`~orchestrator.classifier.compound.own_words`), and the
    clause right before the post or right after it both asks (a question, a request's words,
    a decision's words: :data:`~orchestrator.classifier.parts.ASK_LOOK`,
    :data:`~orchestrator.classifier.parts.REVIEW_ASK`, :data:`DECISION_RULES`) and is about
    a post (:data:`POST_RULES`, outside a negation).

    "Note: I am not Thomas Marsh." frames nothing it asks about; "the courier was
    inappropriate: he shouted" describes; "Is this comment OK to post: ..." and "审核一下：..."
    ask."""
    frame = _frame(own_words(text))
    if not frame:
        return False
    asks = (
        ASK_LOOK.search(frame) is not None
        or REVIEW_ASK.search(frame) is not None
        or asks_to_moderate(compiled, frame, (), DECISION_RULES)
    )
    return asks and asks_to_moderate(compiled, frame, (), POST_RULES)


def _frame(words: str | None) -> str:
    """The clause of ``words`` (:func:`own_words`) right before the post and the one right
    after it, folded and joined by a line break ("" when ``words`` is None)."""
    if words is None:
        return ""
    cut = words.find(_POST_MARK)
    before, after = (words[:cut], words[cut + 1 :]) if cut >= 0 else (words, "")
    near = []
    for part, edge in ((fold(before), -1), (fold(after), 0)):
        spans = [(a, b) for a, b in clauses(part) if part[a:b].strip(' "“”「」『』«»')]
        if spans:
            a, b = spans[edge]
            near.append(part[a:b])
    return "\n".join(near)
