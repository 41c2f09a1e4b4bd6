"""What follows a new address (tester8 F5): a condition ("unless it has shipped", 除非, 如果…)
or a second address ("… or 14 Hill St", 或者, 还是) makes no address read, so the change is
asked back, never offered; contact details (phone, tel, e-mail, 电话, 手机, 联系人, a mobile
number) end the address; a place told by whose it is ("my sister's place", 我妈家楼下) is no
postal address. Our own sentences per kind, English and Chinese (Simplified and
Traditional); every one of the first four lists was read as (part of) an address before by
extract_address, which the policy reads again (the Chinese conditions were already held by the
write gate, the English ones were offered)."""

from __future__ import annotations

import pytest

from tests.unit.test_customer_service_safety import _find, _say, _writes, orch, store  # noqa: F401
from workflows.customer_service.address_ask import CONDITIONAL, NOT_POSTAL, TWO_ADDRESSES
from workflows.customer_service.asks import extract_address, read_asks
from workflows.customer_service.confirm import address_problem

ID = "ORD-100321"

CONDITIONAL_ASKS = [
    f"Change the address of {ID} to 22 Birch Road, Bristol BS1 5TR unless it has shipped",
    f"please update the address of {ID} to 8 Quay St, Cork provided it is still in stock",
    f"Change the delivery address on {ID} to 41 Pine Ave, Denver 80203 as long as it's still here",
    f"change the address of {ID} to 3 Canal Walk, Oxford OX1 2AB in case it already left",
    f"change the address of {ID} to 6 Wharf Rd, Hull HU2 8AA assuming it's still at the depot",
    f"把{ID}的地址改成北京市朝阳区建国路88号，除非已经发货了",
    f"{ID}的收货地址改为广州市天河区体育西路10号 要是还没发出的话",
    f"請把{ID}的地址改成台中市西屯區台灣大道三段99號 如果還沒出貨",
    f"把{ID}的地址改成深圳市南山区科技园路5号 只要还没寄出",
]
TWO = [
    f"Change the address of {ID} to 12 Hill St, Bath BA1 1AA or 14 Hill St, Bath",
    f"update the address on {ID} to 7 Lake Rd, Perth or my work address at 9 King St",
    f"Change the address of {ID} to 5 Mill Lane, York YO1 7HH, whichever depot is closer",
    f"Change the address of {ID} to either 3 Bay Rd, Hobart 7000 and 5 Bay Rd",
    f"把{ID}的地址改成杭州市西湖区文三路90号或者文三路92号",
    f"{ID}地址改为成都市锦江区春熙路1号还是2号都行",
    f"請把{ID}的地址改成高雄市苓雅區四維三路2號或是2之1號",
]
#: (message, the address as written, without the contact details after it)
CONTACT = [
    (
        f"Change the address of {ID} to 18 Rose Lane, Leeds LS6 2AB, phone 07700 900123",
        "18 Rose Lane, Leeds LS6 2AB",
    ),
    (
        f"change the address of {ID} to 4 Bank St, Ely CB7 4AA tel: +44 1353 000000",
        "4 Bank St, Ely CB7 4AA",
    ),
    (
        f"Change the address of {ID} to 90 Main St, Boise 83702 jo@example.com",
        "90 Main St, Boise 83702",
    ),
    (f"change the address of {ID} to 2 Low Rd, Hull HU1 1AA contact Sam", "2 Low Rd, Hull HU1 1AA"),
    (f"把{ID}的地址改成广州市越秀区中山五路3号，手机13912345678", "广州市越秀区中山五路3号"),
    (f"{ID}的地址改为武汉市江汉区解放大道100号 联系人王先生", "武汉市江汉区解放大道100号"),
    (f"把{ID}的地址改成西安市雁塔区长安南路8号 15012345678", "西安市雁塔区长安南路8号"),
    (f"請把{ID}的地址改成台南市東區大學路1號 電話06-2757575", "台南市東區大學路1號"),
    (f"請把{ID}的地址改成新竹市東區光復路二段101號，聯絡人陳小姐", "新竹市東區光復路二段101號"),
]
NO_POSTAL_SHAPE = [
    f"change the address of {ID} to my sister's place",
    f"Change the shipping address of {ID} to our place",
    f"update the address on {ID} to my friend's place on the high street",
    f"把{ID}的地址改成我妈家楼下",
    f"{ID}的收货地址改为我老家村里",
    f"請把{ID}的地址改成我朋友家那條街",
]
#: Plain addresses with words that hold "or", "if", "once", "but", 还, 如 inside: read whole.
PLAIN = [
    "Flat 2, 10 Orchard Rd, Leeds LS1 4AB",
    "5 Oregon Ave, Portland OR 97201",
    "12 Orchid Way, Orlando FL 32801",
    "1 Ifield Rd, London SW10 9AA",
    "3 Butterfield Close, Oxford OX2 6AA",
    "8 Oncewood Ct, Phoenix AZ 85001",
    "北京市西城区如意里12号",
    "台北市中山區還河街3號",
]


@pytest.mark.parametrize(
    ("message", "why"),
    [(m, CONDITIONAL) for m in CONDITIONAL_ASKS] + [(m, TWO_ADDRESSES) for m in TWO],
)
def test_a_condition_or_a_second_address_reads_no_address(message: str, why: str) -> None:
    asks = read_asks(message)
    assert asks.new_address == "", asks
    assert extract_address(message) == ("", why)  # what the policy reads again


@pytest.mark.parametrize(("message", "address"), CONTACT)
def test_contact_details_end_the_address(message: str, address: str) -> None:
    asks = read_asks(message)
    assert (asks.new_address, asks.address_problem) == (address, ""), asks


@pytest.mark.parametrize("message", NO_POSTAL_SHAPE)
def test_a_place_without_a_postal_shape_is_refused(message: str) -> None:
    assert read_asks(message).writes == ("change_address",)
    assert extract_address(message) == ("", NOT_POSTAL)


@pytest.mark.parametrize("address", PLAIN)
def test_a_plain_address_is_read_whole(address: str) -> None:
    message = f"Please change the address of {ID} to {address}"
    assert extract_address(message) == (address, "")
    assert read_asks(message).new_address == address


@pytest.mark.parametrize("why", [CONDITIONAL, TWO_ADDRESSES, NOT_POSTAL])
def test_the_reason_is_told_in_one_line_in_both_languages(why: str) -> None:
    for language in ("en", "zh"):
        said = address_problem(why, language)
        assert "\n" not in said and (why in said) == (language == "en"), said


@pytest.mark.parametrize(
    "text",
    [
        f"Change the address of {ID} to 22 Birch Road, Bristol BS1 5TR unless it has shipped",
        f"把{ID}的地址改成杭州市西湖区文三路90号或者文三路92号",
        f"change the address of {ID} to my sister's place",
    ],
)
async def test_through_the_chat_nothing_is_offered_and_yes_writes_nothing(
    store,  # noqa: F811
    orch,  # noqa: F811
    text: str,
) -> None:
    customer, order = _find(store, want="processing")
    before = _writes(store)
    first = await _say(orch, text.replace(ID, order), customer, thread="a8")
    assert first.result["status"] != "awaiting_confirmation", first.result["reply"]
    await _say(orch, "yes" if text.isascii() else "是", customer, thread="a8")
    assert _writes(store) == before
