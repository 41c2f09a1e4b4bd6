"""Issue 14, session 2026-12-04: threats and dehumanising posts typed in with no ask.

Phrasings written for this test (not taken from the labelled set, the probes or the rules'
comments), in shapes the ``mod.decisive.threat.*`` rules name: a call for violence on someone,
a veiled threat, a group named as vermin. Such a post is moderation on its own, so those rules
``settle`` a fallback whatever the learned tier ranks next; they never turn another route into
moderation, so an angry customer stays customer service and a question about violence in
general stays out of scope. Measured before the rules (same model): threats 1/12, the guards
11/12; after: threats 11/12, the guards 11/12. The misses, kept as they are: a slur-free attack
that the fast tier reads as customer service at 0.86 (a settling rule never overrules a route),
and a question about a song called "i know where you live", which was moderation before the
rules too (through ``mod.decisive.abuse.en``).
"""

from __future__ import annotations

import pytest

from orchestrator.classifier.core import overrule
from orchestrator.classifier.models import Rule
from orchestrator.routes import Route
from tests.data.classifier_unseen import CS, FB, MOD, XL
from tests.unit.classifier_helpers import share_test

THREATS: list[tuple[str, Route]] = [
    ("the whole lot of them ought to be strung up in the town square", MOD),
    ("that referee deserves to be beaten until he can't blow a whistle", MOD),
    ("hope your dog gets run over on the way to the vet", MOD),
    ("would be a pity if something happened to that shiny new shop window of yours", MOD),
    ("keep posting and someone is going to shut you up for good", MOD),
    ("nice house. i know where you live now, by the way", MOD),
    ("refugees are a plague on this country and everyone knows it", MOD),
    ("every single one of them is vermin, no exceptions", MOD),
    ("你家住哪我早就查到了，晚上出门小心", MOD),
    ("再敢发这种视频，我找人收拾你", MOD),
    ("外地人素质太低了，全都给我滚回老家", MOD),
    ("迟早有人教训他们，等着看吧", MOD),
]

#: The same words where no post is under review: an angry customer, questions about violence.
GUARDS: list[tuple[str, Route]] = [
    ("you idiots lost my parcel again, where is my refund", CS),
    ("i know where you live is a song title, who sang it originally", FB),
    ("why were people hanged in medieval england instead of jailed", FB),
    ("what does it mean when a dog is put down by a vet", FB),
    ("how do cockroaches survive a nuclear blast", FB),
    ("my order arrived smashed, someone should deal with this courier", CS),
    ("write a short story about a knight who must teach a dragon a lesson", FB),
    ("which animals are called vermin by farmers", FB),
    ("你们的快递员把我的包裹弄丢了，我要投诉", CS),
    ("古代为什么有人被流放到外地", FB),
    ("外卖迟到一个小时，我要退款", CS),
    ("历史上哪些城市爆发过鼠疫", FB),
]


def _rule(route: Route, *, settles: bool = False) -> Rule:
    return Rule(id="mod.t", route=route, weight=0.1, regex="x+", decisive=True, settles=settles)


def test_a_settling_rule_takes_a_fallback_whatever_ranks_next() -> None:
    ranking = ((CS, 1), (MOD, 3), (XL, 2))
    probs = {FB: 0.9, CS: 0.08, MOD: 0.01, XL: 0.01}
    assert overrule(FB, probs, [_rule(MOD)], ranking) is None  # not its most probable route
    got = overrule(FB, probs, [_rule(MOD, settles=True)], ranking)
    assert got is not None and got[0] == MOD
    # it never turns a route into another
    assert (
        overrule(CS, {CS: 0.9, FB: 0.05, MOD: 0.03, XL: 0.02}, [_rule(MOD, settles=True)], ranking)
        is None
    )


def test_settles_needs_a_positive_decisive_rule() -> None:
    with pytest.raises(ValueError, match="settles applies to positive decisive rules only"):
        Rule(id="mod.t", route=MOD, weight=0.1, regex="x+", settles=True)
    with pytest.raises(ValueError, match="settles applies to positive decisive rules only"):
        Rule(
            id="mod.t",
            route=MOD,
            weight=0.1,
            regex="x+",
            decisive=True,
            negative=True,
            settles=True,
        )


test_threats_with_no_ask_are_moderation = share_test(THREATS, 10 / 12)

test_the_same_words_elsewhere_keep_their_route = share_test(GUARDS, 11 / 12)
