"""Issue 46 item 9, round 12: a safer default instead of more vocabulary.

A customer-service decision that the fast tier gave under even odds (``OWN_UNSURE``), with no
positive decisive rule of the route behind it and none of the desk's own things named (the
route's ``own_things`` allow-list in ``orchestrator/rules/routes.toml``: orders, parcels,
returns, accounts, cards, transfers, 退款, 外卖...), falls back. Sentences written for this file,
not those of the round-12 families.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.loader import load_rules
from orchestrator.exceptions import UserError
from orchestrator.routes import Route
from tests.data.classifier_unseen import CS, FB
from tests.unit.classifier_helpers import share_test

#: Unsure guesses on another business's thing (the fast tier under 0.5, nothing of ours named).
UNSURE_ELSEWHERE = [
    "1) booked a campsite 2) they moved the dates 3) am I owed anything?",
    "my internet contrct has a early termination charge, can they do that",
    "手机合约提前解约要赔多少钱",
]

#: Just as unsure, but naming a thing of the desk's own: they stay customer service.
UNSURE_OURS = [
    "where is my parcel, it was due yesterday",
    "where's my package? it said today",
    "退款什么时候到账",
    "退款什麼時候會到帳",
    "包裹什麼時候到",
]

CASES = [(t, FB) for t in UNSURE_ELSEWHERE] + [(t, CS) for t in UNSURE_OURS]

#: Every case routes right (a floor of 1.0).
test_round12_safe_default = share_test(CASES, 1.0)


@pytest.mark.parametrize("text", UNSURE_ELSEWHERE + UNSURE_OURS)
def test_the_gate_reads_only_unsure_decisions(clf: RuleClassifier, text: str) -> None:
    """Each case is one the fast tier was unsure of (under 0.5 for customer service), and a
    fallback says why in its reason, as ``low_confidence``."""
    c = clf.classify_text(text)
    fast = c.tier("fast")
    assert fast is not None and fast.scores[Route("customer_service")] < 0.5
    if c.route == FB:
        assert c.fallback_reason == "low_confidence"
        assert "none of its own things named" in c.reason


@pytest.mark.parametrize(
    ("pattern", "message"),
    [
        ("(order", "customer_service.own_things.*does not compile"),
        ("x*", "customer_service.own_things.*matches the empty string"),
    ],
)
def test_a_bad_own_things_pattern_is_refused_at_load(
    tmp_path: Path, pattern: str, message: str
) -> None:
    path = tmp_path / "routes.toml"
    path.write_text(
        f"version = 1\n\n[[route]]\nname = \"customer_service\"\nown_things = '{pattern}'\n\n"
        '[[rule]]\nid = "cs.x"\nroute = "customer_service"\nweight = 0.5\nregex = \'order\'\n',
        encoding="utf-8",
    )
    with pytest.raises(UserError, match=message):
        RuleClassifier(
            rules_path=path, model_path=False, calibration_path=False, reload_interval=None
        )
    assert load_rules(path) is not None  # the file itself is valid TOML and rules
