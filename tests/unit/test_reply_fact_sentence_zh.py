"""A Chinese reply's fact sentence says the store's state words in Chinese, and keeps every id,
sum and date exactly as the tool result gives them (skills.reply.fact_sentence)."""

import re

import pytest

from skills.reply import fact_sentence

ORDER_STATES = ["processing", "shipped", "delivered", "cancelled"]


def _lookup(status: str) -> dict[str, object]:
    return {
        "tool": "lookup_order",
        "ok": True,
        "facts": {
            "order_id": "ORD-104233",
            "status": status,
            "total": "CNY 58.20",
            "placed_on": "2026-11-03",
        },
    }


@pytest.mark.parametrize("status", ORDER_STATES)
def test_zh_order_state_is_chinese_and_facts_are_kept(status: str) -> None:
    text = fact_sentence([_lookup(status)], "zh_CN")
    assert status not in text
    for fact in ("ORD-104233", "CNY 58.20", "2026-11-03"):
        assert fact in text
    assert not re.search(r"\b[a-z]{4,}\b", text), text  # no English word left


@pytest.mark.parametrize("status", ORDER_STATES)
def test_en_order_state_is_unchanged(status: str) -> None:
    assert f"is {status} " in fact_sentence([_lookup(status)])


def test_zh_shipment_and_refund_states() -> None:
    ship = {
        "tool": "track_shipment",
        "ok": True,
        "facts": {
            "order_id": "ORD-1",
            "carrier": "SF Express",
            "shipped_on": "2026-11-04",
            "tracking_number": "SF123",
            "shipment_status": "in_transit",
            "last_scan": "杭州",
            "last_scan_on": "2026-11-05",
        },
    }
    refund = {
        "tool": "start_refund",
        "ok": True,
        "facts": {
            "order_id": "ORD-1",
            "refund_id": "RF-9",
            "refund_amount": "CNY 5.00",
            "refund_status": "approved",
        },
    }
    text = fact_sentence([ship, refund], "zh_CN")
    assert "运输中" in text and "已批准" in text
    assert "in_transit" not in text and "approved" not in text
    assert "SF Express" in text  # a carrier's name is a fact, not a state word


def test_zh_unknown_state_is_shown_as_stored() -> None:
    assert "on_hold" in fact_sentence([_lookup("on_hold")], "zh_CN")


def _refused(reason: str) -> dict[str, object]:
    return {
        "tool": "start_refund",
        "ok": False,
        "facts": {"order_id": "ORD-100103", "reason": reason},
    }


@pytest.mark.parametrize(
    ("reason", "said"),
    [
        ("order is not refundable: order is processing; only delivered orders are refunded",
         "订单处理中，只有已送达的订单可以退款"),
        ("order is not refundable: delivered over 30 days ago", "已送达超过 30 天"),
        ("already refunded in full", "已全额退款"),
        ("order ORD-100103 is shipped; only unshipped orders cancel", "只有未发货的订单可以取消"),
        ("order is delivered; only unshipped orders change", "只有未发货的订单可以修改地址"),
        ("ORD-100103: USD 80.00 is more than the USD 59.99 left to refund",
         "USD 80.00 超过可退金额 USD 59.99"),
        ("declined after review", "经同事审核未获批准"),
        ("a reason no table knows yet", "不符合办理条件"),
    ],
)  # fmt: skip
def test_zh_refusal_reason_is_chinese(reason: str, said: str) -> None:
    text = fact_sentence([_refused(reason)], "zh_CN")
    assert said in text and "ORD-100103" in text
    assert not re.search(r"\b[a-z]{2,}\b", text), text


def test_en_refusal_reason_is_unchanged() -> None:
    reason = "order is not refundable: delivered over 30 days ago"
    assert reason in fact_sentence([_refused(reason)])
