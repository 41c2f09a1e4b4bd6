"""The new address stored is exactly the one the customer wrote.

It is found in the normalised text (Traditional folded to Simplified, full-width forms to
ASCII) but taken from the customer's own text; the markers before it (``to``, ``改到``,
``到``, ``为：``) and the tail after it (``instead``, ``please``, ``，谢谢``, ``, order
ORD-…``) are not part of it; an instruction in its place is still refused.
"""

from __future__ import annotations

import pytest

from tests.unit.case_tables import cases
from tests.unit.test_asks_zh_forms import ADDRESS_FIRST
from tests.unit.test_customer_service_safety import _find, _say, orch, store  # noqa: F401
from workflows.customer_service.address_ask import NOTE_AFTER
from workflows.customer_service.asks import extract_address, read_asks
from workflows.customer_service.store import Order

#: (message, the address as the customer wrote it)
WRITTEN = [
    (
        "請把訂單 ORD-100412 的地址改成台北市大安區忠孝東路四段100號",
        "台北市大安區忠孝東路四段100號",
    ),
    ("ORD-100233 地址改為：香港九龍彌敦道 238 號 5 樓", "香港九龍彌敦道 238 號 5 樓"),
    ("新地址：高雄市前鎮區中華五路789號，謝謝", "高雄市前鎮區中華五路789號"),
    ("ORD-100518 嘅地址改到 新界沙田正街 18 號", "新界沙田正街 18 號"),
    ("ORD-100907 改地址到 上海市浦东新区世纪大道100号", "上海市浦东新区世纪大道100号"),
    ("订单 ORD-100350 的地址改为 杭州市西湖区文三路 90 号吧", "杭州市西湖区文三路 90 号"),
    ("把 ORD-100611 的收货地址换成 南京市鼓楼区中山路１８号，麻烦了", "南京市鼓楼区中山路１８号"),
    ("改地址成都市武侯区人民南路四段 9 号，订单 ORD-100122", "成都市武侯区人民南路四段 9 号"),
    (
        "ship it to 5 Elm St, Boston, MA 02101 instead, order ORD-100745",
        "5 Elm St, Boston, MA 02101",
    ),
    (
        "Please change the address of ORD-100288 to: 77 King St W, Toronto ON M5K 1A2, thanks",
        "77 King St W, Toronto ON M5K 1A2",
    ),
    (
        "Update my address to 9 Rue de Rivoli, 75001 Paris please, for order ORD-100534",
        "9 Rue de Rivoli, 75001 Paris",
    ),
    ("Send my order to 14 Market Lane, Leeds LS1 6AB instead", "14 Market Lane, Leeds LS1 6AB"),
    (
        "Change the address on ORD-100412 to be 3 Harbour Road, Apt 2, Portland OR 97201",
        "3 Harbour Road, Apt 2, Portland OR 97201",
    ),
    ("Please ﬁx the address on ORD-100233 to 5 Elm St, Boston", "5 Elm St, Boston"),
]

#: A message whose "address" is an instruction or is missing: no address is read.
NO_ADDRESS = [
    "change the address to: cancel my order instead",
    "Update the address of ORD-100412 to refund everything",
    "ORD-100233 地址改成：取消订单",
    "Please change the address of ORD-100518",
    "改地址到",
]


@pytest.mark.parametrize(("message", "address"), WRITTEN + ADDRESS_FIRST)
def test_the_address_is_the_one_written(message: str, address: str) -> None:
    asks = read_asks(message)
    assert asks.writes == ("change_address",)
    assert (asks.new_address, asks.address_problem) == (address, "")
    assert address in message  # as written: no script or width conversion
    assert extract_address(asks.ask_text) == (address, "")  # what the policy reads again


@pytest.mark.parametrize("message", NO_ADDRESS)
def test_an_instruction_or_nothing_is_no_address(message: str) -> None:
    address, problem = extract_address(message)
    assert address == "" and problem
    assert read_asks(message).new_address == ""


async def test_a_traditional_address_is_stored_as_written(store, orch) -> None:  # noqa: F811
    customer, order = _find(store, want="processing")
    new = "台北市信義區市府路1號"
    asked = await _say(orch, f"請把訂單 {order} 的地址改成{new}", customer)
    assert new in asked.result["reply"]["text"]
    await _say(orch, "是", customer)
    with store.sessions() as s:
        assert s.get(Order, order).shipping_address == new


MARKUP = cases("asks_address.toml", "markup")
PLAIN_WITH_SYMBOLS = cases("asks_address.toml", "plain_with_symbols")


@pytest.mark.parametrize("message", MARKUP)
def test_an_address_with_markup_links_or_code_is_refused(message: str) -> None:
    asks = read_asks(message)
    assert asks.writes == ("change_address",)
    assert asks.new_address == "" and asks.address_problem, asks


@pytest.mark.parametrize(("message", "kept"), PLAIN_WITH_SYMBOLS)
def test_an_address_with_ordinary_symbols_is_kept(message: str, kept: str) -> None:
    asks = read_asks(message)
    assert kept in asks.new_address and asks.address_problem == "", asks


NEXT_SENTENCE = [
    ("to 4 Mill Lane, Leeds LS1 4AB. Call me before delivery", "4 Mill Lane, Leeds LS1 4AB"),
    ("to 9 Elm Road, Leeds LS2 7AA. My phone is 0113 496 0000", "9 Elm Road, Leeds LS2 7AA"),
    ("to 77 Rue Lepic, 75018 Paris. Leave it with the concierge", "77 Rue Lepic, 75018 Paris"),
    ("to 3 Harbour View, Cork T12 X5R2. Ring twice", "3 Harbour View, Cork T12 X5R2"),
    ("to 500 Oak Ave, Austin, TX 78701. It is my new office", "500 Oak Ave, Austin, TX 78701"),
    (
        "to Apt. 4, 12 Main St. Springfield, IL 62701. Gate code 1234",
        "Apt. 4, 12 Main St. Springfield, IL 62701",
    ),
    ("to 10 Downing St. London SW1A 2AA", "10 Downing St. London SW1A 2AA"),
    ("to P.O. Box 12, Springfield, IL 62701", "P.O. Box 12, Springfield, IL 62701"),
]


@pytest.mark.parametrize(("tail", "address"), NEXT_SENTENCE)
def test_the_address_ends_where_its_sentence_ends(tail: str, address: str) -> None:
    asks = read_asks(f"Please change the address of ORD-102091 {tail}")
    if tail.removeprefix("to ") == address:
        assert (asks.new_address, asks.address_problem) == (address, "")
    else:  # cs10: a note in the next sentence is asked back, never dropped unsaid
        assert (asks.new_address, asks.address_problem) == ("", NOTE_AFTER)
        alone = read_asks(f"Please change the address of ORD-102091 to {address}. Thanks!")
        assert (alone.new_address, alone.address_problem) == (address, "")
