"""A refund the customer refused or mocked is not offered back after the eligibility read
(cs11; tester11 F4): "Refund ORD-…? No." was answered "… Reply here if you would like me to
start the refund." Now the code-written prose after the read is the order's, with no offer
(``replying.offer_key``); a plain eligibility question still gets the offer."""

from __future__ import annotations

import pytest

from workflows.customer_service.replying import offer_key

_READ = [{"tool": "check_refund_eligibility", "ok": True, "facts": {"eligible": "yes"}}]


@pytest.mark.parametrize(
    "message",
    [
        "Refund ORD-100076? No.",  # tester11
        "Refund ORD-100076? Nah.",  # tester11
        "Refund ORD-100076? Never.",
        "Cancel the refund talk, I don't want a refund for ORD-100076",
        "退款ORD-105142？不要。",
        "退款ORD-105142？算了吧",
        "退款ORD-105142？唔使喇",
        "Refund ORD-100076? yeah right",
    ],
)
def test_a_refused_refund_is_not_offered_back(message: str) -> None:
    assert offer_key(_READ, False, message) == "tool:lookup_order"


@pytest.mark.parametrize("message", ["Can ORD-100076 be refunded?", "ORD-105142能退款吗？"])
def test_an_eligibility_question_still_gets_the_offer(message: str) -> None:
    assert offer_key(_READ, False, message) == "tool:check_refund_eligibility"
