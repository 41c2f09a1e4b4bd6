"""Issue 46 item 9, round 7: a thing held ELSEWHERE is not this desk's, whatever service word
it carries; the customer's own goods and money with us stay customer service.

Three kinds fall back: a provider of the customer's own that is no shop and no bank ("my
landlord", "my gym", "my dentist", 房东, 健身卡), a public body's service (taxes, papers, benefits,
fines, 社保, 公积金) and another business NAMED (a marketplace, a ride app, a streaming service,
京东, 闲鱼). Each is a veto that wins over the customer's "my card" / "我的会员", and loses to the
customer's own goods ("where is my order") and to money that moved through the customer's own
card or account with us (the desk is a bank too: "a charge from Netflix on my card").
Own phrasings, written for this test: none is in ``tests/data/classifier_oos_families*.json``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.decide import overrule
from orchestrator.classifier.loader import load_rules
from orchestrator.exceptions import UserError
from orchestrator.routes import Route
from tests.unit.classifier_helpers import share_tests

FB, CS = Route("fallback"), Route("customer_service")

#: Each kind and its floor: tests/data/cases/classifier_elsewhere.toml.
test_each_kind_routes_right = share_tests("classifier_elsewhere.toml")


def _rules() -> dict[str, object]:
    return {r.id: r for r in RuleClassifier(reload_interval=None)._state.compiled.rules}


def test_a_veto_overrides_the_weaker_mine_and_loses_to_our_goods() -> None:
    """decide.overrule: a round-7 veto that overrides cs.decisive.mine.en turns a customer
    service decision into a fallback although "my card" fired; the customer's goods
    (cs.decisive.my_goods.en) or money on the customer's card (card_use) override the veto."""
    rules = _rules()
    mine, goods, card = (
        rules["cs.decisive.mine.en"],
        rules["cs.decisive.my_goods.en"],
        rules["cs.decisive.card_use.en"],
    )
    provider, named = rules["neg.cs.provider_of_mine.en"], rules["neg.cs.named_business.en"]
    probs = {FB: 0.3, CS: 0.6, Route("content_moderation"): 0.1}
    ranking = [(CS, 1), (Route("content_moderation"), 3)]
    assert overrule(CS, probs, [mine, provider], ranking) == (FB, provider)  # type: ignore[list-item]
    assert overrule(CS, probs, [mine, goods, provider], ranking) is None  # type: ignore[list-item]
    assert overrule(CS, probs, [mine, named], ranking) == (FB, named)  # type: ignore[list-item]
    assert overrule(CS, probs, [card, named], ranking) is None  # type: ignore[list-item]
    fb = {FB: 0.6, CS: 0.3, Route("content_moderation"): 0.1}
    assert overrule(FB, fb, [goods, provider], ranking) == (CS, goods)  # type: ignore[list-item]


def test_the_rules_fire_on_their_kind_only() -> None:
    """The rules alone: each veto fires on its kind, not on the same word used for us."""
    clf = RuleClassifier(reload_interval=None, model_path=False)

    def fired(text: str) -> set[str]:
        return {s.rule_id for s in clf.classify_text(text).signals if not s.negated}

    assert "neg.cs.provider_of_mine.en" in fired("my new landlord wants six months upfront")
    assert "neg.cs.public_service.en" in fired("how do I apply for a work permit")
    assert "neg.cs.public_service.en" not in fired("can I apply for a visa card")
    assert "neg.cs.public_service.en" not in fired("can I verify my account with my passport")
    assert "neg.cs.named_business.en" in fired("my Walmart order is late")
    assert "neg.cs.named_business.en" not in fired("the Nike trainers I ordered are too small")
    assert "neg.cs.named_business.zh" in fired("京东的退货运费谁出")
    assert "neg.cs.named_business.zh" not in fired("你们和京东比哪个便宜")
    assert "neg.cs.public_service.zh" in fired("户口本丢了怎么补办")


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ('overrides = ["neg.other"]', r"overrides 'neg\.other'.*no positive decisive rule"),
        (
            'overrides = ["cs.mine"]',
            r"rules '(cs|neg)\.mine' and '(cs|neg)\.mine' override each other",
        ),
    ],
)
def test_a_veto_s_overrides_are_checked(tmp_path: Path, extra: str, message: str) -> None:
    """A veto may override only a positive decisive rule of its route, and two rules never
    override each other: a broken file is refused at load with one line naming the rules."""
    path = tmp_path / "routes.toml"
    path.write_text(
        'version = 1\n\n[[rule]]\nid = "cs.mine"\nroute = "customer_service"\nweight = 0.1\n'
        "decisive = true\noverrides = [\"neg.mine\"]\nregex = 'my card'\n\n"
        '[[rule]]\nid = "neg.mine"\nroute = "customer_service"\nweight = 0.5\nnegative = true\n'
        f"decisive = true\n{extra}\nregex = 'my gym'\n\n"
        '[[rule]]\nid = "neg.other"\nroute = "customer_service"\nweight = 0.5\n'
        "negative = true\ndecisive = true\nregex = 'landlord'\n",
        encoding="utf-8",
    )
    with pytest.raises(UserError, match=message):
        load_rules(path)
