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
