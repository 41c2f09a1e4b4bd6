"""Issue 46 item 9, round 13: a question for another business falls back, however sure.

A customer-service decision whose text names another business (the route's ``others`` in
``orchestrator/rules/routes.toml``: an ``@handle``, or a kind of business outside the desk's
scope: an airline, a landlord, an insurer, a utility, a school...) and none of the desk's own
things (``own_things``: orders, parcels, cards, 花呗...) falls back (``out_of_scope``), whatever
tier decided (:mod:`orchestrator.classifier.others`). Own phrasings, written for this test.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.models import Classification
from orchestrator.classifier.others import OTHERS_CONFIDENCE, named_elsewhere
from orchestrator.exceptions import UserError
from orchestrator.routes import Route, RouteSpec
from tests.unit.classifier_helpers import share_tests

FB, CS = Route("fallback"), Route("customer_service")

#: Each kind and its floor: tests/data/cases/classifier_round13.toml.
test_each_kind_routes_right = share_tests("classifier_round13.toml")


def _sure(route: Route, secondary: tuple[Route, ...] = ()) -> Classification:
    return Classification(
        route=route,
        confidence=0.99,
        scores={route: 0.99},
        reason="sure",
        calibrated=True,
        secondary_routes=secondary,
    )


@pytest.mark.parametrize(
    ("text", "secondary", "gated"),
    [
        ("@SkyMobile refund the extra charge on my bill", (), True),
        ("the airline kept my refund", (), True),
        ("航空公司多收的行李费能退吗", (), True),
        ("the airline lost the parcel you sent me", (), False),  # a thing of ours named
        ("房东说我的订单地址不对", (), False),
        ("where is my refund", (), False),  # no other business named
        ("the airline kept my refund", (Route("excel_report"),), False),  # a compound
    ],
)
def test_a_sure_decision_about_another_business_falls_back(
    clf: RuleClassifier, text: str, secondary: tuple[Route, ...], gated: bool
) -> None:
    """named_elsewhere reads the decision as made, however sure (0.99 here): another business
    named and nothing of ours gives an uncalibrated ``out_of_scope`` fallback that says what
    was named; otherwise (or a compound's decision, or another route's) it stands."""
    compiled = clf._state.compiled
    c = named_elsewhere(compiled, text, _sure(CS, secondary))
    assert (c.route == FB) is gated
    if gated:
        assert c.fallback_reason == "out_of_scope"
        assert (c.confidence, c.calibrated) == (OTHERS_CONFIDENCE, False)
        assert c.reason.startswith("another business named") and c.reason.endswith("(sure)")
    else:
        assert c == _sure(CS, secondary)
    moderation = _sure(Route("content_moderation"))
    assert named_elsewhere(compiled, text, moderation) is moderation


def test_the_gate_is_what_decides_a_sure_one(clf: RuleClassifier) -> None:
    """An @handle question the tiers read as customer service falls back by the gate, and
    the whole classification says so."""
    c = clf.classify_text("@SkyMobile my bill is wrong again, please refund the extra charge")
    assert (c.route, c.fallback_reason) == (FB, "out_of_scope")
    assert "another business named ('@skymobile')" in c.reason


def _routes_file(tmp_path: Path, fields: str) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(
        f'version = 1\n\n[[route]]\nname = "customer_service"\n{fields}\n\n'
        '[[rule]]\nid = "cs.x"\nroute = "customer_service"\nweight = 0.5\nregex = \'order\'\n',
        encoding="utf-8",
    )
    return path


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ("own_things = 'order'\nothers = '(airline'", "customer_service.others.*does not compile"),
        ("own_things = 'order'\nothers = 'x*'", "customer_service.others.*matches the empty"),
        ("others = 'airline'", "declares others but no own_things"),
    ],
)
def test_a_bad_others_declaration_is_refused_at_load(
    tmp_path: Path, fields: str, message: str
) -> None:
    with pytest.raises(UserError, match=message):
        RuleClassifier(
            rules_path=_routes_file(tmp_path, fields),
            model_path=False,
            calibration_path=False,
            reload_interval=None,
        )


def test_others_needs_own_things() -> None:
    with pytest.raises(ValueError, match="declares others but no own_things"):
        RouteSpec(name="customer_service", others="airline")
