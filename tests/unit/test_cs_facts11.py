"""Code's fact sentence of a cancelled order with no shipment says it will not ship (cs11;
tester11 F2): "Order ORD-… is cancelled and has not shipped yet." implied it still might.
An order still processing keeps "has not shipped yet"."""

from __future__ import annotations

import pytest

from skills.reply import fact_sentence


def _no_shipment(status: str) -> list[dict[str, object]]:
    facts = {"order_id": "ORD-102091", "status": status}
    return [{"tool": "track_shipment", "ok": False, "facts": facts}]


@pytest.mark.parametrize(
    ("status", "locale", "said", "never"),
    [
        ("cancelled", "en_US", "is cancelled and will not ship", "not shipped yet"),
        ("cancelled", "zh_CN", "已取消，不会发货", "尚未发货"),
        ("processing", "en_US", "is processing and has not shipped yet", "will not ship"),
        ("processing", "zh_CN", "状态：处理中，尚未发货", "不会发货"),
    ],
)
def test_a_cancelled_order_will_not_ship(status: str, locale: str, said: str, never: str) -> None:
    text = fact_sentence(_no_shipment(status), locale)
    assert said in text and never not in text, text
