"""An account detail changed beside a refund that waits for a person keeps it waiting
(tester12 D, re-test): 把我的手机号改成…, 我的邮箱改成… ended the waiting refund, read as a
change of it (改成). A 改成 of the phone, e-mail, password or name is not; one of the refund is."""

from __future__ import annotations

import pytest

from workflows.customer_service.withdrawing import waiting_decision

REFUND = {"tool": "start_refund", "arguments": {"order_id": "ORD-100555"}}

ACCOUNT = [
    "把我的手机号改成13800138000",
    "我的邮箱改成abc@example.com",
    "把密码改成一个新的",
    "我的電話改成0912345678",
    "昵称改成小王",
    "头像换成这张",
]
OF_THE_REFUND = ["退款改成50元", "改成只退运费", "换成代金券吧", "把退款改为部分退款"]


@pytest.mark.parametrize("message", ACCOUNT)
def test_an_account_change_keeps_the_refund_waiting(message: str) -> None:
    assert waiting_decision(message, REFUND) == "kept"


@pytest.mark.parametrize("message", OF_THE_REFUND)
def test_a_change_of_the_refund_still_ends_it(message: str) -> None:
    assert waiting_decision(message, REFUND) == "amended"
