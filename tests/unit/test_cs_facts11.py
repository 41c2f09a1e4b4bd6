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


_TRACK = {
    "order_id": "ORD-103544",
    "carrier": "UPS",
    "tracking_number": "1Z999",
    "shipment_status": "in_transit",
    "shipped_on": "2026-12-03",
    "estimated_delivery": "2026-12-08",
    "delivered_on": "",
    "last_scan": "Departed facility, Leipzig",
    "last_scan_on": "2026-12-05",
}


@pytest.mark.parametrize(
    ("delivered_on", "locale", "said"),
    [
        ("", "en_US", "Estimated delivery: 2026-12-08."),
        ("", "zh_CN", "预计送达：2026-12-08。"),
        ("2026-12-06", "en_US", None),
        ("2026-12-06", "zh_CN", None),
    ],
)
def test_a_parcel_on_its_way_gets_the_stores_estimate(
    delivered_on: str, locale: str, said: str | None
) -> None:
    """tester11 F6: "When will ORD-… arrive?" got the tracking line with no estimated date
    though the store holds it; a delivered parcel gets no estimate."""
    facts = {**_TRACK, "delivered_on": delivered_on}
    text = fact_sentence([{"tool": "track_shipment", "ok": True, "facts": facts}], locale)
    assert (said in text) if said else ("2026-12-08" not in text), text
