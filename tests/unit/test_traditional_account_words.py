"""Traditional Chinese money words with 帳 (到帳, 結帳, 帳號, 帳單) read like their Simplified
forms with 账 (tester6 finding 16: OpenCC folds 帳 to the variant 帐, which no rule knows, so
"退款什麼時候會到帳？" fell back). 帐 outside money words (帐篷, a tent) is kept."""

from __future__ import annotations

import pytest
from case_tables import cases

from orchestrator.classifier import RuleClassifier
from orchestrator.textnorm import to_simplified


@pytest.mark.parametrize(
    ("traditional", "simplified"), cases("traditional_account_words.toml", "money_words")
)
def test_money_words_fold_to_zhang_of_accounts(traditional: str, simplified: str) -> None:
    assert to_simplified(traditional) == simplified


@pytest.mark.parametrize(
    "ask",
    [
        "退款到帳了嗎？等了一週了",
        "結帳頁面一直轉圈，付不了款",
        "帳單上多扣了運費",
        "我的帳號收不到訂單通知",
    ],
)
def test_traditional_asks_with_zhang_route_like_simplified(ask: str) -> None:
    classifier = RuleClassifier()
    traditional = classifier.classify_text(ask)
    simplified = classifier.classify_text(to_simplified(ask))
    assert traditional.route == "customer_service"
    assert traditional.route == simplified.route
