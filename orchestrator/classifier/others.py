"""A decision for a desk about another business's own thing falls back (issue 46 item 9,
round 13).

Round 12's gate (:func:`~orchestrator.classifier.decide.unsupported`) reads only the decisions
the n-grams are unsure of. The wrong customer-service decisions left after it were mostly sure
ones (the n-grams at 0.94, the learned tier at 0.6-0.9) or held by a positive rule: a question
to or about another business, in the desk's own words ("@Vodafone_UK why is there an admin fee
on my bill?", 这家酒店退房还要扣清洁费，怎么维权). What they share is not a word of the desk's
but a business the desk is not: an addressee (``@handle``) or a kind of business outside its
scope (an airline, a landlord, an insurer, a utility, a public body, a school, a clinic...).

So a route may declare :attr:`~orchestrator.routes.RouteSpec.others` beside its
:attr:`~orchestrator.routes.RouteSpec.own_things`. A decision for it whose text names one of
the others and none of its own things falls back, whatever tier decided and however sure: the
desk holds no record of that business's bills, bookings or contracts, so a person (or the
fallback's reply) takes it. A text that names something of the desk's own as well ("the
airport parking I paid with my card was charged twice", 用花呗交的电费) keeps its route: the
desk's card or wallet paid another business, which is the desk's to answer.
"""

from __future__ import annotations

from orchestrator.classifier.engine import CompiledRules
from orchestrator.classifier.models import Classification
from orchestrator.classifier.parts import scan
from orchestrator.routes import FALLBACK

__all__ = ["OTHERS_CONFIDENCE", "named_elsewhere"]

#: The confidence of such a fallback (uncalibrated): as a decisive veto's, its rule's weight.
OTHERS_CONFIDENCE = 0.5


def _said_ours(compiled: CompiledRules, c: Classification) -> bool:
    """Whether a positive decisive rule of ``c.route`` that overrides another business's veto
    fired ("you added travel insurance to my booking": what the shop did, an order of ours):
    the rules file's own word that the request is the desk's, as good as an own thing."""
    ours = {
        r.id
        for r in compiled.rules
        if r.route == c.route and r.decisive and not r.negative and r.overrides
    }
    return any(s.rule_id in ours and not s.negated for s in c.signals)


def named_elsewhere(compiled: CompiledRules, text: str, c: Classification) -> Classification:
    """``c``, or a fallback when ``c`` is a one-route decision for a route that declares
    ``others`` and ``text`` (the request as classified, in Simplified Chinese where Chinese)
    names one of them and none of the route's ``own_things``, and no positive decisive rule of
    the route that overrides a veto (an order of ours, what the shop did) fired.

    The text is read as the rules read it (folded; over the scan limit its head and tail
    windows). The fallback keeps ``c``'s scores, signals and tiers; its ``fallback_reason``
    is ``out_of_scope``, its confidence :data:`OTHERS_CONFIDENCE` (uncalibrated), and its reason
    names what was matched. A compound decision (``secondary_routes``) is left as it is: its
    other asks are routes of their own. A pattern that times out leaves ``c`` as it is.
    """
    route = c.route
    others = compiled.others.get(route)
    if others is None or c.secondary_routes:
        return c
    norm, _ = scan(text, compiled.max_scan_chars)
    own = compiled.own_things[route]  # a route's others need its own_things (RouteSpec)
    try:
        found = others.search(norm, timeout=compiled.regex_timeout_s)
        if found is None or own.search(norm, timeout=compiled.regex_timeout_s) is not None:
            return c
    except TimeoutError:
        return c
    if _said_ours(compiled, c):
        return c
    return c.model_copy(
        update={
            "route": FALLBACK,
            "fallback_reason": "out_of_scope",
            "confidence": OTHERS_CONFIDENCE,
            "calibrated": False,
            "reason": f"another business named ({found.group(0).strip()!r}) and none of "
            f"{route}'s own things: out of scope ({c.reason})",
        }
    )
