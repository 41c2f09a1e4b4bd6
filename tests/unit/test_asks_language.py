"""Terse English is English; Latin-script third languages are told which languages we speak.

``third_language`` decides whether the customer gets "I can help in English or Chinese": it
must say so for Spanish, French, German, Indonesian, Vietnamese... and never for a terse
English complaint with no function word in it.
"""

from __future__ import annotations

import pytest

from workflows.customer_service.asks import third_language

TERSE_ENGLISH = [
    "Wrong item received, ORD-100412",
    "Delivery late again, unacceptable",
    "Package damaged, box crushed",
    "Broken screen, ORD-100233",
    "Still waiting, eight days now",
    "Charged twice, ORD-100518",
    "Missing parts, ORD-100907",
    "Courier never showed",
    "Terrible service, nobody answers",
    "Size too small, exchange possible?",
    "Refund still pending, ORD-100350",
    "Totally useless product",
    "Shipping address wrong, urgent",
    "Parcel stuck in customs",
    "Tracking number invalid",
    "Colour faded after washing",
    "Received someone else's order",
    "Café latte machine leaking, ORD-100611",
    "Jose Garcia here, invoice missing",
]
OTHER_LANGUAGES = [
    "Mi pedido no ha llegado todavía",  # Spanish
    "Quiero un reembolso para ORD-100412",  # Spanish
    "Ma commande est arrivée cassée",  # French
    "Je voudrais annuler ma commande",  # French
    "Meine Bestellung ist noch nicht angekommen",  # German
    "Das Paket war beschädigt",  # German
    "Pesanan saya belum tiba",  # Indonesian
    "Saya mau pengembalian dana",  # Indonesian
    "Đơn hàng của tôi chưa được giao",  # Vietnamese
    "Il mio ordine non è ancora arrivato",  # Italian
    "Minha encomenda chegou danificada",  # Portuguese
    "Mijn bestelling is nog niet aangekomen",  # Dutch
    "Siparişim henüz gelmedi",  # Turkish
    "Moje zamówienie jeszcze nie dotarło",  # Polish
    "Min beställning har inte kommit",  # Swedish
    "Где мой заказ",  # Russian: another script
    "sí",  # one word, with an accent
]


@pytest.mark.parametrize("message", TERSE_ENGLISH)
def test_terse_english_is_english(message: str) -> None:
    assert not third_language(message)


@pytest.mark.parametrize("message", OTHER_LANGUAGES)
def test_another_language_gets_the_note(message: str) -> None:
    assert third_language(message)


@pytest.mark.parametrize(
    "message", ["我的订单 ORD-100412 到哪了", "我嘅訂單幾時到", "ok", "ORD-100412"]
)
def test_chinese_and_bare_words_are_not_a_third_language(message: str) -> None:
    assert not third_language(message)
