"""Code's fact sentence of a cancelled order with no shipment says it will not ship (cs11;
tester11 F2): "Order ORD-… is cancelled and has not shipped yet." implied it still might.
An order still processing keeps "has not shipped yet"."""

from __future__ import annotations

import pytest

from skills.reply import fact_sentence


def _no_shipment(status: str) -> list[dict[str, object]]:
    facts = {"order_id": "ORD-102091", "status": status}
    return [{"tool": "track_shipment", "ok": False, "facts": facts}]


#: What the fact sentence of an order with no shipment says, by locale and status: its state,
#: then its shipping words. Neither status's sentence holds the other's shipping words.
SAID = {
    ("en_US", "cancelled"): ("is cancelled and ", "will not ship"),
    ("en_US", "processing"): ("is processing and has ", "not shipped yet"),
    ("zh_CN", "cancelled"): ("已取消，", "不会发货"),
    ("zh_CN", "processing"): ("状态：处理中，", "尚未发货"),
}


@pytest.mark.parametrize(("locale", "status"), sorted(SAID))
def test_a_cancelled_order_will_not_ship(locale: str, status: str) -> None:
    other = "processing" if status == "cancelled" else "cancelled"
    text = fact_sentence(_no_shipment(status), locale)
    assert "".join(SAID[locale, status]) in text, text
    assert SAID[locale, other][1] not in text, text
