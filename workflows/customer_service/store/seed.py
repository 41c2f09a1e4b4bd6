"""Deterministic, realistic seed data for the order store (faker ``en_US`` and ``zh_CN``).

The same ``(seed, customers, as_of)`` always gives the same rows. Dates are laid out backwards
from ``as_of`` so statuses and dates agree: an order is placed, shipped a day or two later and
delivered a few days after that, all before ``as_of``; orders still ``processing`` have no
shipment, ``shipped`` ones have scans but no delivery, ``cancelled`` ones were cancelled before
any shipment. Some delivered orders already have a refund (never more than the total).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from faker import Faker

from workflows.customer_service.store.schema import (
    Customer,
    Order,
    OrderLine,
    Refund,
    Shipment,
    TrackingEvent,
)

#: Products per locale: (sku, name, unit price in minor units).
PRODUCTS: dict[str, tuple[tuple[str, str, int], ...]] = {
    "en_US": (
        ("SKU-1001", "Wireless earbuds", 5999),
        ("SKU-1002", "Stainless water bottle", 2499),
        ("SKU-1003", "Running shoes", 8999),
        ("SKU-1004", "Desk lamp", 3450),
        ("SKU-1005", "Mechanical keyboard", 12900),
        ("SKU-1006", "Backpack", 6400),
        ("SKU-1007", "Coffee grinder", 4599),
        ("SKU-1008", "4K monitor", 32999),
        ("SKU-1009", "Phone case", 1599),
        ("SKU-1010", "Espresso machine", 54900),
    ),
    "zh_CN": (
        ("SKU-2001", "无线耳机", 39900),
        ("SKU-2002", "保温杯", 12900),
        ("SKU-2003", "跑步鞋", 59900),
        ("SKU-2004", "台灯", 19900),
        ("SKU-2005", "机械键盘", 69900),
        ("SKU-2006", "双肩包", 29900),
        ("SKU-2007", "电饭煲", 49900),
        ("SKU-2008", "显示器", 189900),
        ("SKU-2009", "手机壳", 4900),
        ("SKU-2010", "空气净化器", 159900),
    ),
}
CARRIERS = {"en_US": ("UPS", "FedEx", "USPS"), "zh_CN": ("顺丰速运", "中通快递", "京东物流")}
CURRENCY = {"en_US": "USD", "zh_CN": "CNY"}
SCANS = {
    "en_US": ("Picked up", "Departed facility", "Arrived at facility", "Out for delivery"),
    "zh_CN": ("已揽收", "已发出", "到达转运中心", "派送中"),
}
DELIVERED = {"en_US": "Delivered", "zh_CN": "已签收"}


@dataclass
class SeedData:
    """Rows made by :func:`generate` (not yet added to a session)."""

    customers: list[Customer] = field(default_factory=list)
    orders: list[Order] = field(default_factory=list)


def _at(as_of: datetime, days_ago: float) -> datetime:
    return (as_of - timedelta(days=days_ago)).replace(microsecond=0)


def generate(customers: int, *, seed: int = 0, as_of: datetime) -> SeedData:
    """Customers with their orders, lines, shipments, scans and refunds.

    Args:
        customers: How many customers (1..1,000,000); about 45% get ``zh_CN`` data.
        seed: Random seed; the same arguments give the same rows.
        as_of: The store's "now" (UTC, aware): every date lies before it.

    Raises:
        ValueError: ``customers`` out of range or ``as_of`` naive.
    """
    if not 1 <= customers <= 1_000_000:
        raise ValueError(f"customers must be 1..1000000, got {customers}")
    if as_of.tzinfo is None:
        raise ValueError("as_of must be timezone-aware (UTC)")
    as_of = as_of.astimezone(UTC)
    rng = random.Random(seed)
    fakers = {loc: Faker(loc) for loc in ("en_US", "zh_CN")}
    for offset, fake in enumerate(fakers.values()):
        fake.seed_instance(seed * 2 + offset)
    cities = {loc: [fake.city() for _ in range(60)] for loc, fake in fakers.items()}
    data = SeedData()
    order_no = 100000
    tracking_no = 0
    for n in range(1, customers + 1):
        locale = "zh_CN" if rng.random() < 0.45 else "en_US"
        fake = fakers[locale]
        address = fake.address().replace("\n", ", ")
        customer = Customer(
            id=f"C{n:05d}",
            name=fake.name(),
            email=fake.email(),
            phone=fake.phone_number(),
            locale=locale,
            address=address,
            created_at=_at(as_of, rng.uniform(200, 900)),
        )
        data.customers.append(customer)
        for _ in range(rng.randint(1, 6)):
            order_no += rng.randint(1, 37)
            placed_days = rng.uniform(0.5, 120)
            status = _status(rng, placed_days)
            lines = [
                OrderLine(sku=sku, product=name, quantity=rng.randint(1, 3), unit_price_cents=price)
                for sku, name, price in rng.sample(PRODUCTS[locale], rng.randint(1, 3))
            ]
            order = Order(
                id=f"ORD-{order_no:06d}",
                customer_id=customer.id,
                status=status,
                placed_at=_at(as_of, placed_days),
                currency=CURRENCY[locale],
                total_cents=sum(line.quantity * line.unit_price_cents for line in lines),
                shipping_address=address,
                lines=lines,
            )
            if status == "cancelled":
                order.cancelled_at = _at(as_of, placed_days - rng.uniform(0.05, 0.4))
            if status in ("shipped", "delivered"):
                tracking_no += 1
                order.shipment = _shipment(
                    rng, locale, as_of, placed_days, status, tracking_no, cities[locale]
                )
            if status == "delivered" and rng.random() < 0.08:
                assert order.shipment is not None and order.shipment.delivered_at is not None
                order.refunds.append(
                    Refund(
                        amount_cents=order.total_cents
                        if rng.random() < 0.5
                        else lines[0].unit_price_cents,
                        reason="damaged item" if locale == "en_US" else "商品损坏",
                        status="approved",
                        approved_by="policy",
                        note="",
                        idempotency_key=f"seed:{order.id}",
                        created_at=order.shipment.delivered_at + timedelta(days=1),
                    )
                )
            customer.orders.append(order)
            data.orders.append(order)
    return data


def _status(rng: random.Random, placed_days: float) -> str:
    if placed_days < 2:
        return rng.choice(("processing", "processing", "cancelled"))
    if placed_days < 8:
        return rng.choice(("processing", "shipped", "shipped", "delivered"))
    return "cancelled" if rng.random() < 0.07 else "delivered"


def _shipment(
    rng: random.Random,
    locale: str,
    as_of: datetime,
    placed_days: float,
    status: str,
    number: int,
    cities: list[str],
) -> Shipment:
    shipped_days = placed_days - rng.uniform(0.3, 1.5)
    carrier = rng.choice(CARRIERS[locale])
    prefix = "1Z" if carrier == "UPS" else ("SF" if carrier == "顺丰速运" else "TRK")
    shipment = Shipment(
        carrier=carrier,
        tracking_number=f"{prefix}{number:08d}{rng.randint(10, 99)}",
        status="in_transit",
        shipped_at=_at(as_of, shipped_days),
        estimated_delivery=_at(as_of, shipped_days - 5),
    )
    if status == "delivered":
        delivered_days = shipped_days - rng.uniform(1.0, min(6.0, shipped_days - 0.1))
        shipment.status = "delivered"
        shipment.delivered_at = _at(as_of, delivered_days)
        end = delivered_days
    else:
        end = max(shipped_days - rng.uniform(0.5, 3.0), 0.01)
    scans = SCANS[locale]
    count = rng.randint(2, len(scans))
    for i in range(count):
        days = shipped_days - (shipped_days - end) * (i / count)
        shipment.events.append(
            TrackingEvent(at=_at(as_of, days), location=rng.choice(cities), description=scans[i])
        )
    if status == "delivered":
        assert shipment.delivered_at is not None
        shipment.events.append(
            TrackingEvent(
                at=shipment.delivered_at, location=rng.choice(cities), description=DELIVERED[locale]
            )
        )
    return shipment
