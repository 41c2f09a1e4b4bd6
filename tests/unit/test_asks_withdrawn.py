"""Withdrawn, declined, unneeded, counterfactual and judged-against write asks are not asks.

The gate of every write (``read_asks(m).writes``, which :func:`doubt` vets, and the policy
that re-reads both) must not offer a refund, a cancellation or an address change that the
customer withdrew, declined, called unnecessary, only once meant, or called a mistake. The
sentences below are this file's own (tester4's sentences are a held-out check, not here),
in English, Simplified and Traditional Chinese and Cantonese; plain asks stay asks.
test_asks_gate_kinds' no-write test reads :data:`NOT_ASKS` beside its own kinds (no writes, a
reason why declined); the tests here check the chat and the policy on them.
"""

from __future__ import annotations

import re

import pytest

from tests.unit.test_customer_service_safety import (  # noqa: F401 (store, orch: fixtures)
    _find,
    _say,
    _writes,
    orch,
    store,
)
from workflows.customer_service.asks import doubt, read_asks
from workflows.customer_service.policy import WriteAction, execute_write
from workflows.customer_service.store.tools import ToolError

#: (kind, message): none of them asks for a write.
NOT_ASKS = [
    # withdrawal: the customer takes their ask back
    ("withdrawn", "Please withdraw the refund I asked for on ORD-100412"),
    ("withdrawn", "I'm retracting my cancellation request for ORD-100233"),
    ("withdrawn", "Consider my refund request for ORD-100518 rescinded"),
    ("withdrawn", "I take back what I said about cancelling ORD-100907"),
    ("withdrawn", "Let's call off the refund on ORD-100350"),
    ("withdrawn", "Cancel my refund request for ORD-100611, the parcel turned up"),
    ("withdrawn", "Scrap the cancellation of ORD-100745, I still want it"),
    ("withdrawn", "I'm revoking my request to change the address on ORD-100288"),
    ("withdrawn", "Please void my refund claim for ORD-100534"),
    ("withdrawn", "Ignore my earlier message asking to refund ORD-100122"),
    ("withdrawn", "我要撤回 ORD-100412 的退款申请"),
    ("withdrawn", "ORD-100233 的取消申请我收回了"),
    ("withdrawn", "ORD-100518 退款申请请作废"),
    ("withdrawn", "撤销我对 ORD-100907 的退款请求"),
    ("withdrawn", "ORD-100611 的退款请求我撤掉了"),
    ("withdrawn", "我想撤回訂單 ORD-100122 的退款申請"),
    ("withdrawn", "ORD-100745 的取消請求請作廢"),
    ("withdrawn", "請撤銷我對 ORD-100288 的退款要求"),
    ("withdrawn", "ORD-100534 的退款申請我收回"),
    # declining: the customer says no to the write
    ("declined", "I'll decline the refund offer for ORD-100412"),
    ("declined", "I'm going to turn down the refund on ORD-100233, keep the order"),
    ("declined", "I'm opting out of the refund for ORD-100907"),
    ("declined", "Let's skip cancelling ORD-100350"),
    ("declined", "I reject the idea of a refund for ORD-100611"),
    ("declined", "Count me out of the refund for ORD-100122"),
    ("declined", "I'll give the refund on ORD-100745 a miss"),
    ("declined", "Pass on cancelling ORD-100534, thanks"),
    ("declined", "ORD-100412 的退款我婉拒了"),
    ("declined", "谢绝退款，ORD-100233 我留着用"),
    ("declined", "我放弃 ORD-100518 的退款"),
    ("declined", "ORD-100907 退款这事就免谈了"),
    ("declined", "拒絕退款，訂單 ORD-100350 我要保留"),
    ("declined", "我放棄取消訂單 ORD-100611"),
    ("declined", "ORD-100122 嘅退款我唔要喇"),
    ("declined", "取消 ORD-100745？我拒絕"),
    # unnecessary: the write is not needed
    ("unneeded", "A refund for ORD-100412 is needless, it works fine now"),
    ("unneeded", "Cancelling ORD-100233 is pointless now"),
    ("unneeded", "The address change on ORD-100518 has become redundant"),
    ("unneeded", "Refund for ORD-100350? Unneeded."),
    ("unneeded", "Cancelling ORD-100611 is superfluous, it shipped fine"),
    ("unneeded", "ORD-100745 无须办理退款"),
    ("unneeded", "毋需取消订单 ORD-100288"),
    ("unneeded", "退款就省了吧，ORD-100233"),
    ("unneeded", "ORD-100288 的退款是多余的"),
    ("unneeded", "無須為 ORD-100907 辦理退款"),
    ("unneeded", "訂單 ORD-100350 毋須取消"),
    ("unneeded", "ORD-100611 唔使取消喇"),
    ("unneeded", "唔洗退款呀，ORD-100122"),
    ("unneeded", "ORD-100745 唔需要退錢"),
    # counterfactual / abandoned intention
    ("counterfactual", "I was about to cancel ORD-100412, then it showed up"),
    ("counterfactual", "I'd planned to ask for a refund on ORD-100233 but the seller sorted it"),
    ("counterfactual", "I had intended to get a refund for ORD-100907; it's fine now"),
    ("counterfactual", "At first I wanted a refund for ORD-100611, but I'm happy with it"),
    ("counterfactual", "I considered cancelling ORD-100122 but decided to wait"),
    ("counterfactual", "I was gonna request a refund on ORD-100745 but it works after a reboot"),
    ("counterfactual", "My plan was to cancel ORD-100288, however the item came today"),
    ("counterfactual", "I'd been meaning to cancel ORD-100534 but I'm keeping it"),
    ("counterfactual", "Wanted to cancel ORD-100350 but it turned up this morning"),
    ("counterfactual", "本来想退款 ORD-100412，后来发现是我自己装错了"),
    ("counterfactual", "原本打算取消 ORD-100233，现在东西到了就留着"),
    ("counterfactual", "我一度想退款 ORD-100518，现在挺满意的"),
    ("counterfactual", "差点就申请退款了，ORD-100907 其实挺好"),
    ("counterfactual", "本想取消訂單 ORD-100350，後來想想還是留著"),
    ("counterfactual", "原本打算退款 ORD-100611，但係而家冇問題喇"),
    ("counterfactual", "退款 ORD-100288 的主意我放下了"),
    # judged against: the customer calls the write a mistake
    ("judged", "Refunding ORD-100412 would be a bad idea, it's a gift"),
    ("judged", "Cancelling ORD-100233 would be silly, it's nearly here"),
    ("judged", "It would be wrong to refund ORD-100350, the fault was mine"),
    ("judged", "Cancelling ORD-100611 is a terrible idea"),
    ("judged", "Refunding ORD-100122 would be overkill"),
    ("judged", "Getting a refund for ORD-100745 would be a waste of your time"),
    ("judged", "取消 ORD-100288 是个错误的决定"),
    ("judged", "为 ORD-100412 退款是多此一举"),
    ("judged", "取消訂單 ORD-100233 是個壞主意"),
]

#: (intent, message): the customer's own plain ask.
ASKS = [
    ("refund", "Refund ORD-100412 please, it arrived broken"),
    ("refund", "It never showed up. Refund ORD-100233 please"),
    ("cancel", "Cancel ORD-100518 now please"),
    ("cancel", "I want to cancel ORD-100907"),
    ("cancel", "I wanted to cancel my order ORD-100350"),
    ("refund", "Hi, I'd like a refund for ORD-100611, the screen is cracked"),
    ("cancel", "Please cancel ORD-100122, I ordered the wrong size"),
    ("refund", "I need my money back for ORD-100288, it's damaged"),
    ("change_address", "Please change the address on ORD-100534 to 12 Oak Road, Leeds LS1 4AB"),
    ("cancel", "Go ahead and cancel ORD-100412"),
    ("refund", "The parcel for ORD-100518 is missing, please refund me"),
    ("cancel", "Just cancel ORD-100907 please"),
    ("refund", "I'm requesting a refund for ORD-100350"),
    ("refund", "Refund the full amount for ORD-100611 please, the box was crushed"),
    ("cancel", "cancel ORD-100122 asap"),
    ("refund", "Please process a refund for ORD-100745, it stopped working after a day"),
    ("refund", "Refund ORD-100534, this is a mistake on your side"),
    ("refund", "You sent the wrong colour by mistake, please refund ORD-100412"),
    ("refund", "I'll keep the other items but please refund ORD-100233"),
    ("cancel", "Cancel ORD-100518, I found it cheaper elsewhere"),
    ("refund", "没收到货，ORD-100907 请退款"),
    ("cancel", "请帮我取消订单 ORD-100350"),
    ("refund", "ORD-100611 质量有问题，我要退款"),
    ("change_address", "把 ORD-100122 的地址改成北京市朝阳区建国路88号"),
    ("cancel", "麻烦取消 ORD-100745，谢谢"),
    ("refund", "ORD-100288 发错货了，申请退款"),
    ("refund", "我想退款，订单号 ORD-100534，东西坏了"),
    ("cancel", "撤销订单 ORD-100233"),
    ("cancel", "請幫我取消訂單 ORD-100412"),
    ("refund", "訂單 ORD-100233 壞了，我要退款"),
    ("refund", "ORD-100518 一直沒收到，請退款"),
    ("change_address", "麻煩把 ORD-100907 的地址改成台北市大安區復興南路一段100號"),
    ("refund", "ORD-100350 啲嘢壞咗，我要退款"),
    ("cancel", "唔該幫我取消 ORD-100611"),
    ("refund", "ORD-100122 我想退錢呀，唔該"),
    ("refund", "I wanted to ask for a refund on ORD-100412, can you do it now?"),
    ("refund", "Originally I ordered blue but got red, refund ORD-100233 please"),
    ("refund", "Refund ORD-100534 because the charge is a mistake"),
    ("refund", "The courier refused to deliver ORD-100412, refund please"),
    ("refund", "Please take back the item and refund ORD-100907"),
    ("refund", "My card was declined twice, please refund ORD-100611 the duplicate charge"),
    ("cancel", "Please cancel ORD-100518 and refund me"),
    ("refund", "保留发票，请给 ORD-100412 退款"),
    ("refund", "差点被砸坏，ORD-100745 退款"),
    ("refund", "请上门收回商品并给 ORD-100288 退款"),
    ("refund", "我冇收到貨，ORD-100534 退款"),
    ("refund", "唔該退款 ORD-100350"),
]


@pytest.mark.parametrize(("intent", "message"), ASKS)
def test_a_plain_ask_is_still_an_ask(intent: str, message: str) -> None:
    assert intent in read_asks(message).writes, message
    assert doubt(message) is None, message


def test_a_refund_ask_without_an_order_stays_declined_on_the_safe_side() -> None:
    assert read_asks("I need a refund but I don't know the order number").writes == ()


def test_the_set_is_varied_enough() -> None:
    kinds = {kind for kind, _ in NOT_ASKS}
    assert kinds == {"withdrawn", "declined", "unneeded", "counterfactual", "judged"}
    assert len(NOT_ASKS) >= 60 and len(ASKS) >= 30
    chinese = [m for _, m in NOT_ASKS if any("\u4e00" <= ch <= "\u9fff" for ch in m)]
    assert len(chinese) >= 25


#: One message of each kind, in each script: the chat must not offer the write.
CHAT = [NOT_ASKS[i][1] for i in (0, 11, 18, 19, 31, 36, 46, 49, 60, 66, 73)]


@pytest.mark.parametrize("text", CHAT)
async def test_a_withdrawn_ask_then_yes_writes_nothing(store, orch, text: str) -> None:  # noqa: F811
    customer, order = _find(store, want="refundable")
    message = re.sub(r"ORD-\d{6}", order, text)
    before = _writes(store)
    first = await _say(orch, message, customer, thread="w1")
    assert first.result["status"] != "awaiting_confirmation", first.result["reply"]
    await _say(orch, "yes" if text.isascii() else "是", customer, thread="w1")
    assert _writes(store) == before
    action = WriteAction(  # and the policy refuses it even when asked directly
        tool="cancel_order" if "cancel" in message.lower() or "取消" in message else "start_refund",
        customer_id=customer,
        arguments={"order_id": order, "amount_cents": 100},
        key="w1:1",
        ask=message,
        confirmation="yes",
        confirmed_by=customer,
    )
    with pytest.raises(ToolError, match="own words"):
        execute_write(store.tools(customer), action)
