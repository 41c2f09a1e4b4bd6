"""A refund of part of an order: every amount written is read exactly or asked back, never
replaced by the whole order (tester7 F8, F9) and the reply after the yes to an over-limit
refund does not ask for the yes again (tester7 F6).

F8: "one dollar", "50c", 五毛钱 were no amount for the reader, so the whole order was offered.
F9: "USD 1.234,56" was offered as USD 1.00, "USD 10.999" as USD 10.00, "-20元" as CNY 20.00.
The inputs here are my own (English, Simplified and Traditional Chinese); the tester's own
sentences are a held-out check, run once (benchmarks/results/amounts_tester7_heldout.md)."""

from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import select

from orchestrator.core.dispatcher import Orchestrator
from tests.unit.test_customer_service_safety import (  # noqa: F401 (the fixtures)
    _count_refunds,
    _find,
    _say,
    _writes,
    orch,
    store,
)
from workflows.customer_service.amounts import refund_ask
from workflows.customer_service.store import OrderStore
from workflows.customer_service.store.schema import Order

READ = [  # (message, cents, a currency it fits)
    ("could you refund a buck on ORD-100231", 100, "USD"),
    ("refund twelve dollars of ORD-100231, the lid is cracked", 1200, "USD"),
    ("I'd like forty-five dollars back on ORD-100231", 4500, "USD"),
    ("refund two hundred and five dollars of ORD-100231", 20500, "USD"),
    ("refund seventy-five cents of ORD-100231", 75, "USD"),
    ("refund 75c on ORD-100231", 75, "USD"),
    ("refund 30 cents for ORD-100231", 30, "EUR"),
    ("refund $.99 of ORD-100231", 99, "USD"),
    ("refund $0.05 of ORD-100231", 5, "USD"),
    ("refund USD 1,234.56 of ORD-100231", 123456, "USD"),
    ("refund three euros on ORD-100231", 300, "EUR"),
    ("ORD-100231 退八毛钱就行", 80, "CNY"),
    ("ORD-100231 请退三块二", 320, "CNY"),
    ("ORD-100231 退我两块五毛五", 255, "CNY"),
    ("ORD-100231 退款一百零八元", 10800, "CNY"),
    ("ORD-100231 退二十块钱吧", 2000, "CNY"),
    ("ORD-100231 退 3元5角", 350, "CNY"),
    ("訂單 ORD-100231 請退五塊錢", 500, "CNY"),
    ("ORD-100231 退两千零五十元", 205000, "CNY"),
    ("ORD-100231 帮我退款twelve dollars", 1200, "USD"),  # English glued to Chinese
    ("ORD-100231 退款a buck", 100, "USD"),
    ("ORD-100231 退30元，谢谢", 3000, "CNY"),  # a full-width comma is no decimal separator
]
ASK_BACK = [  # an amount written that cannot be read with certainty
    "refund EUR 2.500,75 of ORD-100231",
    "refund USD 3,25 of ORD-100231",
    "refund $4.125 of ORD-100231",
    "refund 2k dollars of ORD-100231",
    "refund $1.5k of ORD-100231",
    "refund USD 15-25 of ORD-100231",
    "refund 5 to 8 dollars of ORD-100231",
    "refund around $12 of ORD-100231",
    "refund at least 30 dollars on ORD-100231",
    "refund USD 40 or so of ORD-100231",
    "refund $25ish of ORD-100231",
    "refund (USD 12) of ORD-100231",
    "refund half a buck of ORD-100231",
    "refund a few dollars of ORD-100231",
    "refund $five of ORD-100231",
    "refund a dollar twenty of ORD-100231",
    "refund some cents of ORD-100231",
    "refund USD 10 000 of ORD-100231",
    "refund eleven of ORD-100231",
    "ORD-100231 退二三十块",
    "ORD-100231 退十几块钱",
    "ORD-100231 退30元左右",
    "ORD-100231 退一百五",
    "ORD-100231 退个十来块",
    "ORD-100231 退5刀",
    "ORD-100231 退款 1.234,56 元",
    "ORD-100231 退款 12.345 元",
    "ORD-100231 屏幕掉了一块，退款",
    "ORD-100231 退款大约50元",
    "ORD-100231 退款roughly USD 9",  # English glued to Chinese: still a hedge
    "ORD-100231 退款half a buck",
]
NOT_POSITIVE = [
    "refund USD -5 of ORD-100231",
    "refund $-7.50 of ORD-100231",
    "refund -$3 on ORD-100231",
    "refund USD \u22129 of ORD-100231",
    "refund negative five dollars of ORD-100231",
    "refund minus 4 dollars of ORD-100231",
    "refund $0.00 of ORD-100231",
    "refund zero dollars of ORD-100231",
    "ORD-100231 退款-15元",
    "ORD-100231 退款 ￥-8",
    "ORD-100231 退负十元",
    "ORD-100231 退0元",
    "ORD-100231 帮我退款minus 3 dollars",
    "ORD-100231 退款-¥6",
]
WHOLE = [
    "Please refund ORD-100231, it arrived broken",
    "refund ORD-100231, it took three weeks and two days",
    "refund ORD-100231 ordered on 2026-10-02 at 14:30",
    "I want a refund for ORD-100231",
    "ORD-100231 帮我退一下款",
    "ORD-100231 11月3号买的，退款",
    "訂單 ORD-100231 全部退款",
    "refund ORD-100231, it broke halfway through the first use",
]


@pytest.mark.parametrize(("text", "cents", "currency"), READ)
def test_an_amount_in_any_common_form_is_read_exactly(text: str, cents: int, currency: str):
    asked = refund_ask(text)
    assert asked is not None and not asked.unclear
    assert asked.cents == cents and asked.fits(currency)


@pytest.mark.parametrize("text", ASK_BACK)
def test_an_amount_not_read_with_certainty_is_asked_back_never_the_whole(text: str) -> None:
    asked = refund_ask(text)
    assert asked is not None, "read as no part named: the whole order would be offered"
    assert asked.unclear and asked.cents is None and asked.question == "refund_amount"


@pytest.mark.parametrize("text", NOT_POSITIVE)
def test_a_negative_or_zero_amount_is_refused(text: str) -> None:
    asked = refund_ask(text)
    assert asked is not None and asked.cents is None
    assert asked.why == "not_positive" and asked.question == "refund_not_positive"


@pytest.mark.parametrize("text", WHOLE)
def test_no_amount_written_is_still_the_whole_order(text: str) -> None:
    assert refund_ask(text) is None


# --- properties ------------------------------------------------------------------------------

_AMOUNTS = st.decimals(min_value=Decimal("0.01"), max_value=Decimal("999999.99"), places=2)
_FORMS = ["USD {n}", "${n}", "{n} dollars", "{n} USD", "US$ {c}", "${c}"]


@given(amount=_AMOUNTS, form=st.sampled_from(_FORMS))
@settings(max_examples=150, deadline=None)
def test_property_a_written_amount_is_read_to_the_cent(amount: Decimal, form: str) -> None:
    text = f"please refund {form.format(n=amount, c=f'{amount:,.2f}')} of ORD-100231"
    asked = refund_ask(text)
    assert asked is not None and asked.cents == int(amount * 100) and asked.fits("USD")


@given(amount=_AMOUNTS, form=st.sampled_from(["退{n}元", "退 ¥{n}", "退款{n}块钱"]))
@settings(max_examples=100, deadline=None)
def test_property_a_chinese_amount_is_read_to_the_cent(amount: Decimal, form: str) -> None:
    asked = refund_ask(f"ORD-100231 {form.format(n=amount)}")
    assert asked is not None and asked.cents == int(amount * 100) and asked.fits("CNY")


_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
_ONES += "fifteen sixteen seventeen eighteen nineteen"
_TENS = ["", "", "twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]


def _english(n: int) -> str:
    """1..999,999 in words (the test's own renderer: "two hundred and five")."""
    if n >= 1000:
        rest = n % 1000
        return f"{_english(n // 1000)} thousand" + (f" and {_english(rest)}" if rest else "")
    if n >= 100:
        rest = n % 100
        return f"{_ONES.split()[n // 100]} hundred" + (f" and {_english(rest)}" if rest else "")
    if n >= 20:
        return _TENS[n // 10] + (f"-{_ONES.split()[n % 10]}" if n % 10 else "")
    return _ONES.split()[n]


_DIGITS = "零一二三四五六七八九"


def _chinese(n: int) -> str:
    """1..9,999 in standard Chinese numerals (一千零五, 十二, 三百二十)."""
    out, zero = "", False
    for unit, name in ((1000, "千"), (100, "百"), (10, "十")):
        digit, n = divmod(n, unit)
        if digit:
            out += (
                ("零" if zero and out else "")
                + ("" if (unit, digit, out) == (10, 1, "") else _DIGITS[digit])
                + name
            )
            zero = False
        elif out:
            zero = True
    return out + (("零" if zero else "") + _DIGITS[n] if n else "")


@given(n=st.integers(min_value=1, max_value=999_999))
@settings(max_examples=150, deadline=None)
def test_property_english_number_words_are_read_exactly(n: int) -> None:
    asked = refund_ask(f"refund {_english(n)} dollars of ORD-100231")
    assert asked is not None and asked.cents == n * 100


@given(n=st.integers(min_value=1, max_value=9_999), unit=st.sampled_from(["元", "块钱"]))
@settings(max_examples=150, deadline=None)
def test_property_chinese_numerals_are_read_exactly(n: int, unit: str) -> None:
    asked = refund_ask(f"ORD-100231 退{_chinese(n)}{unit}")
    assert asked is not None and asked.cents == n * 100, _chinese(n)


_JUNK = st.text(alphabet="0123456789.,-k ", min_size=1, max_size=9).filter(
    lambda s: any(c.isdigit() for c in s)
)


@given(junk=_JUNK, sign=st.sampled_from(["$", "USD ", "EUR ", "¥"]))
@settings(max_examples=300, deadline=None)
def test_property_money_written_is_never_the_whole_order_nor_misread(junk: str, sign: str):
    """Any digits after a currency sign: never None (the whole order); when read, the value
    is exactly the number as written (plain or with 3-digit comma groups, at most 2 decimals)
    and nothing after it holds another digit."""
    asked = refund_ask(f"refund {sign}{junk} of ORD-100231")
    assert asked is not None
    if asked.cents is not None:
        first, *rest = junk.split()
        assert Decimal(first.rstrip(".,").replace(",", "")) * 100 == asked.cents
        assert not any(c.isdigit() for c in "".join(rest))


# --- the workflow, with the real SQLite store --------------------------------------------------


async def test_a_number_word_amount_is_offered_exactly_not_the_whole(
    store: OrderStore,  # noqa: F811 (the fixture)
    orch: Orchestrator,  # noqa: F811
) -> None:
    customer, order = _find(store, want="refundable")
    left, currency, _ = store.tools(customer).refundable(order)
    done = await _say(orch, f"please refund a buck of {order}, small scratch", customer)
    reply = done.result["reply"]["text"]
    if currency in ("USD", "CAD", "AUD", "HKD", "SGD", "NZD", "TWD"):
        assert done.result["status"] == "awaiting_confirmation"
        assert reply.startswith(f"Refund {currency} 1.00 for order {order}")
    assert f"{currency} {left // 100}.{left % 100:02d}" not in reply


@pytest.mark.parametrize(
    ("text", "told"),
    [
        ("refund USD -10 of {}", "must be more than zero"),
        ("{} 退款-20元", "必须大于零"),
        ("refund USD 1.234,56 of {}", "How much should I refund?"),
        ("{} 请退款十几块钱", "请问要退多少钱"),
    ],
)
async def test_a_negative_or_unreadable_amount_is_told_and_yes_writes_nothing(
    store: OrderStore,  # noqa: F811 (the fixture)
    orch: Orchestrator,  # noqa: F811
    text: str,
    told: str,
) -> None:
    customer, order = _find(store, want="refundable")
    before = _writes(store)
    done = await _say(orch, text.format(order), customer, thread=f"n-{hash(text)}")
    assert done.result["status"] != "awaiting_confirmation"
    assert told in done.result["reply"]["text"]
    await _say(orch, "yes", customer, thread=f"n-{hash(text)}")
    assert _writes(store) == before


async def test_over_limit_reply_after_the_yes_does_not_ask_for_it_again(
    store: OrderStore,  # noqa: F811 (the fixture)
    orch: Orchestrator,  # noqa: F811
) -> None:
    """tester7 F6: the yes to a refund over the automatic limit was answered with the same
    "Reply yes to confirm" question; now it says the yes was heard and a person reviews it."""
    customer = order = None
    with store.sessions() as s:
        for o in s.scalars(select(Order).where(Order.status == "delivered")):
            cents, _, why = store.tools(o.customer_id).refundable(o.id)
            if why is None and cents > 20_000:
                customer, order, left, currency = o.customer_id, o.id, cents, o.currency
                break
    if order is None:
        pytest.skip("no refund over the limit in the seed")
    asked = await _say(orch, f"please refund {order}, it is broken", customer, thread="ol")
    assert "Reply yes to confirm" in asked.result["reply"]["text"]
    before = _count_refunds(store)
    done = await _say(orch, "yes", customer, thread="ol")
    reply = done.result["reply"]["text"]
    assert done.result["status"] == "needs_human" and _count_refunds(store) == before
    assert "Reply yes" not in reply and "?" not in reply
    assert f"You confirmed a refund of {currency} {left // 100}.{left % 100:02d}" in reply
    assert order in reply and "colleague" in reply
