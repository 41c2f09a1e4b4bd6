"""Chinese ask forms the gate missed (session 6): the address named first and the verb after a
polite word (地址请改成…, 收货地址麻烦帮我更新为…), and A-not-A requests for help (能不能帮我
取消, 可不可以帮我退款), whose 不 asks rather than negates. Their look-alikes stay no write:
A-not-A questions about policy or state, questions whether the address needs changing, and
real negations inside an A-not-A question. :data:`ADDRESS_FIRST` is checked by
test_asks_address's test of the address as written (an ask, that address, exactly as written)."""

from __future__ import annotations

import re

import pytest

from workflows.customer_service.asks import read_asks

#: (message, the address as the customer wrote it): the address named before the verb.
ADDRESS_FIRST = [
    ("ORD-100905 的地址麻烦改成北京市朝阳区建国路1号", "北京市朝阳区建国路1号"),
    ("订单ORD-100231，收货地址帮我改为上海市徐汇区漕溪北路88号", "上海市徐汇区漕溪北路88号"),
    ("ORD-100777 配送地址请更新为广州市天河区体育西路5号", "广州市天河区体育西路5号"),
    ("訂單 ORD-100412 的收貨地址請改為高雄市前金區中正四路211號", "高雄市前金區中正四路211號"),
    ("ORD-100318 地址要换成杭州市西湖区文三路90号，谢谢", "杭州市西湖区文三路90号"),
    ("麻烦一下，ORD-100560 的地址需要改到南京市鼓楼区中山路18号", "南京市鼓楼区中山路18号"),
]

HELP_REQUESTS = [
    ("能不能帮我取消订单 ORD-100905？", "cancel"),
    ("ORD-100311 可不可以帮我退款", "refund"),
    ("可不可以幫我取消 ORD-100402", "cancel"),
    ("ORD-100118 能不能帮忙退一下款", "refund"),
    ("ORD-100654 可唔可以帮我取消", "cancel"),
]

NO_WRITE = [
    "ORD-100905 能不能取消？",  # a policy question
    "ORD-100905 可不可以退款",
    "請問 ORD-100412 能不能退款？",
    "ORD-100905 地址需要更新吗",
    "ORD-100905 的地址要不要改？",
    "ORD-100905 是不是已经退款了",
    "ORD-100905 是不是已经取消了？",
    "能不能不要取消 ORD-100905",
    "ORD-100905 能不能别退款",
    "ORD-100905 的地址不用改",
    "如果地址要改成北京市朝阳区建国路1号，ORD-100905 要多久",
    "我老公说 ORD-100905 的地址要改成北京市朝阳区建国路1号",
]


@pytest.mark.parametrize(("message", "write"), HELP_REQUESTS)
def test_an_a_not_a_request_for_help_is_an_ask(message: str, write: str) -> None:
    asks = read_asks(message)
    assert asks.writes == (write,), asks


@pytest.mark.parametrize("message", NO_WRITE)
def test_a_question_or_a_negation_is_no_write(message: str) -> None:
    asks = read_asks(message)
    assert asks.writes == (), asks


@pytest.mark.parametrize(
    "message",
    [
        "ORD-100905 地址改成",  # no address given
        "ORD-100905 地址改成取消订单",  # an instruction
        "ORD-100905 地址改成好的",  # not an address
        "ORD-100905 地址改成 <b>北京市朝阳区建国路1号</b>",  # markup
        "ORD-100905 地址改成北京市朝阳\u200b区建国路1号",  # an invisible character
        "ORD-100905 地址改成北京市\u202e区阳朝路国建1号",  # a direction change
    ],
)
def test_every_address_problem_is_told_in_chinese(message: str) -> None:
    from workflows.customer_service.confirm import address_problem

    asks = read_asks(message)
    assert asks.new_address == "" and asks.address_problem, asks
    told = address_problem(asks.address_problem, "zh")
    assert not re.search(r"[A-Za-z]{3,}", told), told
