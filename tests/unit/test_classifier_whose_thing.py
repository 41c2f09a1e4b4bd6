"""Issue 46 item 9, round 6: WHOSE thing is asked about decides, not the product noun.

Customer service is this shop's own orders, parcels, refunds, returns, account and address. A
text that names our transaction (an order or parcel number, "the X I ordered", "bought from
you", our checkout, what we did to the customer) is customer service whatever product it names
(a bag fee, an insurance add-on, a phone plan, a courier's name); a question about another
business's product or a shop's rules in general (bank products, card eligibility, extended
warranties, other stores) falls back. Own phrasings, written for this test (none is in the
held-out parts of ``tests/data/classifier_oos_families*.json``).
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

#: Each kind and its floor: tests/data/cases/classifier_whose_thing.toml.
test_each_kind_routes_right = share_tests("classifier_whose_thing.toml")


def test_the_ours_rule_fires_and_overrides_the_product_veto() -> None:
    """The rules alone: our order named fires cs.decisive.ours.*, which lists the other-business
    vetoes it overrides; the same product asked about in general fires only the veto."""
    rules = RuleClassifier(reload_interval=None, model_path=False)
    for text, ours, veto in (
        ("refund my bag fee for order 1234", "cs.decisive.ours.en", "neg.cs.other_business.en"),
        ("订单号20931的保险费退给我", "cs.decisive.ours.zh", "neg.cs.other_business.zh"),
    ):
        fired = {s.rule_id for s in rules.classify_text(text).signals if not s.negated}
        assert ours in fired, (text, fired)
        rule = next(r for r in rules._state.compiled.rules if r.id == ours)
        assert veto in rule.overrides
    fired = {s.rule_id for s in rules.classify_text("what is a typical bag fee").signals}
    assert "cs.decisive.ours.en" not in fired


def test_overrule_ignores_an_overridden_veto_only() -> None:
    """decide.overrule: a veto that a fired positive rule overrides counts for nothing (the
    learned tier's fallback becomes the route); one it does not override still vetoes."""
    rules = {r.id: r for r in RuleClassifier(reload_interval=None)._state.compiled.rules}
    ours, veto = rules["cs.decisive.ours.en"], rules["neg.cs.other_business.en"]
    other_veto = rules["neg.cs.general_knowledge.en"]
    probs = {FB: 0.6, CS: 0.3, Route("content_moderation"): 0.1}
    ranking = [(CS, 1), (Route("content_moderation"), 3)]
    assert overrule(FB, probs, [ours, veto], ranking) == (CS, ours)
    assert overrule(CS, probs, [ours, veto], ranking) is None
    assert overrule(CS, probs, [ours, other_veto], ranking) is None  # a positive one fired
    assert overrule(CS, probs, [veto], ranking) == (FB, veto)
    assert overrule(FB, probs, [ours, other_veto], ranking) is None


def test_overrides_must_name_a_veto_of_the_same_route(tmp_path: Path) -> None:
    """A rules file whose ``overrides`` names no negative decisive rule of the route is
    refused at load with one line naming the rule and how to fix it."""
    path = tmp_path / "routes.toml"
    path.write_text(
        'version = 1\n\n[[rule]]\nid = "cs.ours"\nroute = "customer_service"\n'
        "weight = 0.1\ndecisive = true\noverrides = [\"cs.other\"]\nregex = 'order [0-9]+'\n\n"
        '[[rule]]\nid = "cs.other"\nroute = "customer_service"\nweight = 0.5\n'
        'keywords = ["bank"]\n',
        encoding="utf-8",
    )
    with pytest.raises(UserError, match=r"overrides 'cs\.other'.*no negative decisive rule"):
        load_rules(path)
