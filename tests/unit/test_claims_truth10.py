"""The reply checker's safe default (truth10): a model sentence is shown only when each of its
clauses is a kind the model may say (a fact of this turn, courtesy, a question back, an
offer, a next step taken) in words the checker knows (workflows.customer_service.
claim_allowed); anything else is dropped. Delivery predictions, promises, refund guarantees,
invented amounts, dates or terms, rude or sarcastic lines are dropped; true restatements,
courtesy and questions are kept. English, Simplified and Traditional Chinese, written for the
kinds (none is a tester's), in ``tests/data/cases/claims_truth10.toml``. One table-driven test
(CI time), and the approved refund's reply not told twice.
"""

from __future__ import annotations

import tomllib

import pytest

from tests.unit.case_tables import CASES, cases
from workflows.customer_service.claims import ReplyChecker, TurnFacts, check_sentence

_TABLES = tomllib.loads((CASES / "claims_truth10.toml").read_text(encoding="utf-8"))
_ONE = {"order_id": "ORD-104233"}
#: The facts a case names (the file's ``facts`` tables: one ok tool result each).
FACTS = {
    name: TurnFacts.of([{"tool": r["tool"], "ok": True, "facts": {**_ONE, **r["facts"]}}])
    for name, r in _TABLES["facts"].items()
} | {"handoff": TurnFacts.of([], handoff=True), "none": TurnFacts.of([])}


def misjudged(file: str, table: str, *, drop: str) -> list[tuple[str, str, str | None]]:
    """The ``(facts, sentence, reason)`` cases of ``table`` in ``file`` (rows ``facts, lang,
    sentence``) that the checker judges wrong: shown when ``table`` is ``drop``, the table of
    sentences that must be dropped; dropped when it is any other (sentences to keep)."""
    wrong = []
    for facts, lang, sentence in cases(file, table):
        reason = check_sentence(sentence, FACTS[facts], lang)
        if (reason is None) == (table == drop):
            wrong.append((facts, sentence, reason))
    return wrong


@pytest.mark.parametrize("table", ["dropped", "kept"])
def test_only_sentences_of_an_allowed_kind_are_shown(table: str) -> None:
    wrong = misjudged("claims_truth10.toml", table, drop="dropped")
    assert not wrong, wrong


def test_a_model_sentence_that_repeats_the_facts_code_wrote_is_dropped() -> None:
    said = {
        "en": "Refund RF-000077 of USD 41.50 for order ORD-104233 is approved.",
        "zh": "订单 ORD-104233 的退款 RF-000077（USD 41.50）状态：已批准。",
    }
    prose = {
        "en": "Your refund RF-000077 has been approved. Thank you for your patience. ",
        "zh": "您的退款已批准。感谢您的耐心等待。",
    }
    refund = {
        "tool": "start_refund",
        "ok": True,
        "facts": {**_ONE, **_TABLES["facts"]["refund"]["facts"]},
    }
    facts = TurnFacts.of([refund], "approved", handoff=True)
    for lang in ("en", "zh"):
        checker = ReplyChecker(facts, lang, said=said[lang])
        shown = checker.feed(prose[lang]) + checker.flush()
        assert len(shown) == 1 and ("patience" in shown[0] or "耐心" in shown[0]), shown
        assert checker.dropped[0]["reason"].startswith("broken: repeats"), checker.dropped
        alone = ReplyChecker(facts, lang)
        assert len(alone.feed(prose[lang]) + alone.flush()) == 2  # true, so kept without code's
