"""Issue 46 item 9, as a kind: another business's product or service falls back, however it is
asked; the customer's own order, charge or booking with us stays customer service.

The kind: a question or an ask about what a bank, an airline, a hotel, an insurer, a telecom
operator or a utility sells (its rates, fees, rules, extras, sign-up, how it works), which
merely shares a service word with this desk's business (a card, a booking, a bill, a plan).
Written on 2026-12-05 for this test BEFORE the rules ``neg.cs.other_business.en`` and
``neg.cs.other_business.zh`` were run on them, in shapes the families of
``tests/data/classifier_oos_families*.json`` do not use (a bare noun phrase, a request to sign
up, an instruction to a travel agent, a worry, a sum); the controls name the same nouns about
something the customer already bought from us.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.labelled_set import build_labelled_set
from orchestrator.routes import Route
from tests.unit.classifier_helpers import share_tests

FB, CS = Route("fallback"), Route("customer_service")

#: Each kind and its floor (the framing and numbered-parcel kinds that a refit for item 9
#: once weakened among them): tests/data/cases/classifier_other_business.toml.
test_each_kind_routes_right = share_tests("classifier_other_business.toml")


def test_the_rules_name_another_business_and_the_customer_s_own_deal() -> None:
    """The rules alone: the veto fires on another business's product (en and zh), and a
    positive decisive rule on the customer's own trip or money with us, which wins over it."""
    rules = RuleClassifier(reload_interval=None, model_path=False)
    for text in (
        "what is the usual excess on a travel insurance policy for skiing",
        "sign me up for the hotel's loyalty scheme",
        "出国漫游包要不要提前开",
        "定期存款三年期的利率高吗",
    ):
        fired = {s.rule_id for s in rules.classify_text(text).signals if not s.negated}
        assert fired & {"neg.cs.other_business.en", "neg.cs.other_business.zh"}, (text, fired)
    for text in (
        "my cruise was cancelled last night and nobody told me",
        "you billed me twice for the airport parking",
    ):
        fired = {s.rule_id for s in rules.classify_text(text).signals if not s.negated}
        assert "cs.decisive.mine_trip.en" in fired, (text, fired)


def test_clinc_intents_of_other_businesses_are_labelled_fallback(data_dir: Path) -> None:
    """The labelled set: CLINC150's asks for another business's product (a hotel, carry-on
    rules, an insurance change, a credit score) fall back; its order status and the customer's
    own card stay customer service."""
    rows = build_labelled_set(data_dir)
    by_family: dict[str, set[Route]] = {}
    for row in rows:
        if row.source.startswith("clinc150"):
            by_family.setdefault(row.family.split(":")[-1], set()).add(row.route)
    for intent in ("book_hotel", "carry_on", "insurance_change", "credit_score", "apr"):
        assert by_family[intent] == {FB}, intent
    for intent in ("order_status", "report_lost_card", "card_declined"):
        assert by_family[intent] == {CS}, intent
