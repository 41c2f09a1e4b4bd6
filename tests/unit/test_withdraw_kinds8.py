"""Which messages withdraw a refund that waits for a person, by kind (tester8 F3).

A withdrawal needs the customer's own withdrawal words that are not themselves negated: a
withdrawal verb on the request ("please stop the refund", 撤回我的退款申请), the write itself
negated ("I don't want the refund any more", 不用退了) or a settled form ("I'll keep it",
算了). Its mirror is no withdrawal: a negated withdrawal verb ("don't drop my refund",
不要忘了我的退款, 不要不退), an insistence ("I still want it", "no rush", 快点), a complaint
about waiting, or a question about the refund. Those keep the handoff waiting, the customer is
told it still waits for a person, and the person deciding sees the message. English,
Simplified and Traditional Chinese; the tricky pairs go both ways.
"""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from orchestrator.config import Settings
from workflows.customer_service.store import OrderStore
from workflows.customer_service.withdrawing import withdraws

sys.path.insert(0, str(Path(__file__).parent))
from test_handoff_withdraw import (  # noqa: F401 (waiting: a fixture)
    CANCEL,
    REFUND,
    _approve,
    _say,
    waiting,
)

#: Insistence, by kind: none of these takes the refund back.
NEGATED_WITHDRAWAL = [
    "Please do not withdraw my refund request.",
    "Don't drop the refund, I really need that money",
    "Please don't forget about my refund",
    "Do NOT stop the refund!",
    "I don't want you to drop the refund",
    "Never cancel my refund request without asking me first",
    "please don't close my refund request yet",
    "I haven't changed my mind, I still want the refund",
    "I don't want it dropped",
    "I do not want to cancel the refund",
    "Please don't let my refund get lost",
    "It's not that I don't want the refund",
    "I'm not cancelling the refund, just checking",
]
NEGATED_WITHDRAWAL_ZH = [
    "不要取消我的退款",
    "别撤回我的退款申请，我还要",
    "千万别把我的退款取消了",
    "退款别取消",
    "不要不退",
    "我没有改主意，还是要退款",
    "我不是不想退",
    "請不要取消我的退款申請",
    "別忘了我的退款啊",
    "不要撤銷退款，我還在等",
    "千萬別把退款撤回",
    "別把我的退款申請撤回",  # the negation before 把 and its object
]
INSISTENCE = [
    "I still want it",
    "I still want the refund, please",
    "I'm waiting for it",
    "please hurry",
    "Please hurry up, I need the money",
    "no rush",
    "take your time",
    "Never mind the delay, I still want my money back",
    "I'm still waiting for my money",
    "Keep me posted please",
]
INSISTENCE_ZH = [
    "我还在等",
    "快点",
    "麻烦快一点",
    "不急，慢慢来",
    "不着急，你们慢慢处理",
    "我還在等退款",
    "請快點處理",
    "還是要退的，謝謝",
]
COMPLAINT = [
    "This is taking forever, I can't wait any longer for my money",
    "I've been waiting for days and nobody has replied",
    "I'm fed up with waiting",
    "Nobody has looked at this yet, this is ridiculous",
    "等了好久了，还没退",
    "等太久了吧",
    "已經等了三天了，太慢了",
]
QUESTION = [
    "Is the refund still on?",
    "any update on my refund?",
    "Did you cancel my refund?",
    "Will my refund be cancelled?",
    "Why would anyone drop my refund?",
    "退款会被取消吗？",
    "我的退款被撤销了吗",
    "有消息了吗",
    "退款還在處理嗎？",
    "退款怎麼樣了",
]
INSISTENCES = (
    NEGATED_WITHDRAWAL + NEGATED_WITHDRAWAL_ZH + INSISTENCE + INSISTENCE_ZH + COMPLAINT + QUESTION
)

#: Real withdrawals: each takes the refund back.
WITHDRAWAL = [
    "I don't want the refund any more",
    "Please stop the refund",
    "Cancel my refund request please, I found the parcel",
    "I'll keep it",
    "Please withdraw my refund request",
    "Drop the refund, it works fine now",
    "I no longer want a refund",
    "Forget the refund, I'll keep the blender",
    "Call off the refund please",
    "No need to refund, thanks",
    "Don't bother with the refund",
    "I want the refund request cancelled",
    "I don't need the refund now",
    "Never mind the refund, I'll keep it",
    "Please don't refund it, I've decided to keep it",
]
WITHDRAWAL_ZH = [
    "不用退了",
    "不要退款了",
    "我不想退了，东西留着",
    "请撤回我的退款申请",
    "退款就算了",
    "我改主意了，不退了",
    "别退款了，我留着用",
    "把退款申请撤回吧",
    "不用退了，謝謝",
    "請撤回我的退款申請",
    "我改變主意了，不退款了",
    "算了，東西我留著",
    "退款申請作廢吧",
    "別退了，我不要退款了",
]
WITHDRAWALS = WITHDRAWAL + WITHDRAWAL_ZH

#: A second round, written after the rules above (3 of its 92 inputs were misread then: 不退不
#: 行, "I'm keeping it", 我不想要退款了; fixed), the tester's own seven first; then a third batch
#: of 15, written with three more forms (撤回吧, Cantonese 唔使, "I'd rather not get a refund").
SECOND_INSISTENCES = [
    "Don't cancel my refund request please, I still want it",
    "Please don't forget about my refund, I can't wait much longer!",
    "Don't drop my refund!",
    "No rush on the refund, take your time",
    "不要忘了我的退款，谢谢",
    "Is the refund still on? I don't want it dropped",
    "please do not cancel it",
    "Don't you dare cancel my refund",
    "I would never withdraw my request",
    "Don't close the case, I still need the money",
    "you better not drop my refund request",
    "Please don't abandon my refund",
    "Hey, don't forget me",
    "not cancelling anything, just wondering about the refund",
    "I don't want my refund request to be withdrawn",
    "Make sure nobody cancels my refund",
    "Please do not stop processing my refund",
    "Hello? Still waiting on my refund",
    "how much longer?",
    "Can you speed this up?",
    "this is so slow",
    "Whenever you're ready",
    "no worries, I can wait",
    "What's happening with my refund",
    "Has the manager approved it yet?",
    "Did someone withdraw my request??",
    "不要撤回",
    "别取消",
    "千万不要取消退款",
    "别把我的申请撤掉",
    "退款的事别忘了",
    "请别忘记我的退款",
    "我可没说要撤回",
    "我没说不要退款",
    "我不是要取消退款",
    "不要把退款申请作废",
    "还在等退款呢",
    "退款到哪一步了",
    "能快点吗",
    "慢慢来不着急",
    "怎么还没处理",
    "请尽快处理我的退款",
    "麻煩不要取消我的退款",
    "別撤回我的申請",
    "我還是要退款",
    "請盡快",
    "退款處理得怎麼樣了？",
    "不要忘記我的退款喔",
    "我等得好辛苦",
    "退款什么时候到账",
    "退款取消了吗？",
    "你们不会把我的退款取消吧",
    "不退不行",
    "Please, do not drop my refund",
    "Do not, I repeat, do not cancel my refund",
    "You'd better not cancel the refund!",
    "Why hasn't my refund been processed?",
    "Hope you won't forget my refund",
    "千萬不要把我的退款申請取消",
    "我要退款，不要撤回",
    "唔好取消我嘅退款",
]

#: The second round's withdrawals (requests put as questions count: "Can you cancel …?").
SECOND_WITHDRAWALS = [
    "Cancel the refund please",
    "I'd like to cancel my refund request",
    "Please drop my refund request, the item works now",
    "Actually, I don't want a refund anymore",
    "I don't need a refund after all",
    "You can stop the refund, I found a use for it",
    "Withdraw it please",
    "Forget about the refund",
    "No refund please, I'm keeping it",
    "Kill the refund request",
    "I've decided to keep the item, so please cancel the refund",
    "Can you cancel my refund request?",
    "Could you please withdraw my refund?",
    "I'm keeping it",
    "Never mind, I'll keep it",
    "changed my mind, keep the money",
    "don't process the refund",
    "Scrap the refund, thanks",
    "I want to withdraw my refund request",
    "I no longer need the refund",
    "撤销退款",
    "取消我的退款申请",
    "退款不要了",
    "不退了",
    "不需要退了",
    "算了吧，不退款了",
    "我不想要退款了",
    "把我的退款申请取消吧",
    "退款申请撤回",
    "我決定不退了",
    "取消退款申請",
    "退款就不用了，謝謝",
    "不用退款了，我留著用",
    "我改主意了",
    "别给我退了",
    "算了，东西我自己留着",
    "能帮我撤回退款申请吗？",
    "不要退了，谢谢你们",
    "退款的事就算了吧",
    "I'd rather not get a refund",
    "The refund is no longer needed",
    "I'm going to keep the blender, so no refund",
    "钱不用退了",
    "退款申请我撤回",
    "唔使退款喇",
    "撤回吧",
]


#: The same reading for a pending cancellation and a pending address change (the refund's: the
#: kinds above).
ADDRESS = {"tool": "change_address", "arguments": {"order_id": "ORD-100321"}}
OTHER_WRITES = [
    (CANCEL, "Don't withdraw my cancellation", False),
    (CANCEL, "I still want it cancelled", False),
    (CANCEL, "不要撤回取消申请", False),
    (CANCEL, "請不要撤回我的取消申請", False),
    (CANCEL, "Don't cancel it after all", True),
    (CANCEL, "please withdraw my cancellation request", True),
    (CANCEL, "訂單不用取消了", True),
    (ADDRESS, "Don't forget to change my address", False),
    (ADDRESS, "地址还是要改的", False),
    (ADDRESS, "don't change the address after all", True),
    (ADDRESS, "不用改地址了", True),
]


@pytest.mark.parametrize(
    ("action", "text", "withdrawn"),
    [(REFUND, text, False) for text in INSISTENCES + SECOND_INSISTENCES]
    + [(REFUND, text, True) for text in WITHDRAWALS + SECOND_WITHDRAWALS]
    + OTHER_WRITES,
)
def test_only_an_unnegated_withdrawal_in_own_words_withdraws(
    action: dict[str, object], text: str, withdrawn: bool
) -> None:
    assert withdraws(text, action) is withdrawn


#: Through the chat: the tester's words, Simplified and Traditional Chinese, a double negation.
CHAT_INSISTENCES = [
    "Don't drop my refund!",
    "不要忘了我的退款，谢谢",
    "別把我的退款申請撤回",
    "不要不退",
]


async def test_insisting_in_the_chat_keeps_the_refund_waiting_for_the_person(
    waiting: tuple[Settings, OrderStore, str, str],  # noqa: F811 (the imported fixture)
) -> None:
    settings, store, customer, order = waiting
    for text in CHAT_INSISTENCES:
        outcome = await _say(settings, customer, text)
        assert outcome.status == "needs_human", (text, outcome.headline)
        assert "waits for a person" in outcome.headline
    (row,) = store.handoffs("waiting")  # still the operator's, with every message to read
    assert [m["text"] for m in row["context"]["customer_messages"]] == CHAT_INSISTENCES
    assert store.tools(customer).refund_count(order) == 0
    outcome = await _approve(settings)
    assert outcome.status == "succeeded" and store.tools(customer).refund_count(order) == 1
