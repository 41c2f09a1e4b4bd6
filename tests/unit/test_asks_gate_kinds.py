"""The write gate fails safe: a write word is the customer's ask only in a positive ask of
their own, in the present, unconditional (issue: tester5 finding 1).

Each kind below mentions a refund, a cancellation or an address change without asking for it
now: a mistyped negation, a past event or a thank-you, someone else's words, a hypothetical,
a question about policy, a condition, a Cantonese negation or past, sarcasm. None may be read
as an ask, by :func:`read_asks` (the graph's reading) nor let through by :func:`doubt` and
:func:`read_asks` together (the policy's reading). Plain, polite, terse, imperative asks, with
reasons and with typos in words other than a negation, in English, Simplified and Traditional
Chinese and Cantonese, stay asks. These sentences are this file's own; the tester's are a
held-out check, not here. The no-write test also reads test_asks_withdrawn's mentions
(withdrawn, declined, unneeded, counterfactual, judged against): one test of the gate's no.
"""

from __future__ import annotations

import pytest

from tests.unit.test_asks_withdrawn import NOT_ASKS as WITHDRAWN_DECLINED_UNNEEDED
from workflows.customer_service.asks import doubt, read_asks

#: kind -> messages that mention a write but do not ask for it now.
NOT_ASKS: dict[str, list[str]] = {
    "mistyped_negation": [
        "I don;t want ORD-100200 cancelled",
        "i do nt need a refund for ORD-100200",
        "Pls do'nt cancel ORD-100200",
        "I dnt want my money back, I want the item",
        "I donot want to cancel ORD-100200",
        "I dun wan refund for ORD-100200 lah",
        "I don,t need a refund on ORD-100200",
        "I do n't want ORD-100200 cancelled",
        "I didn' t request a refund for ORD-100200",
        "we dnt need the refund for ORD-100200 anymore",
        "I dn't want a refund for ORD-100200",
        "I dont' want to cancel ORD-100200, where is it?",
        "我不 想退款ORD-100200，东西挺好",
        "我 没 打算取消ORD-100200",
    ],
    "past_or_thanks": [
        "Got the refund for ORD-100200 on Friday, thank you!",
        "The cancellation of ORD-100200 went through, thanks a lot",
        "I requested a refund for ORD-100200 on the 3rd and heard nothing",
        "You cancelled ORD-100200 on Wednesday without asking me",
        "Refund for ORD-100200 received, many thanks",
        "The refund on ORD-100200 hit my account, cheers",
        "I cancelled ORD-100200 this morning, why is it still shipping?",
        "ORD-100200的退款收到了，谢谢",
        "ORD-100200 退款到账了，多谢",
        "我上周五申请了退款ORD-100200",
        "ORD-100200 星期三就取消了，怎么还发货",
        "大前天取消了ORD-100200",
        "訂單ORD-100200的退款收到了，謝謝",
    ],
    "reported_speech": [
        "My mum wants me to refund ORD-100200",
        "My brother insists we cancel ORD-100200",
        "According to my husband, ORD-100200 should be refunded",
        "My partner keeps telling me to cancel ORD-100200",
        "The shop assistant reckons I should get a refund for ORD-100200",
        "Per my wife: refund ORD-100200",
        "我爸让我取消ORD-100200",
        "我姐说要退款ORD-100200",
        "我女儿要我取消ORD-100200",
        "我同事叫我申请退款ORD-100200",
        "我老婆讲要退款ORD-100200",
        "我阿媽話要取消ORD-100200",
    ],
    "hypothetical": [
        "Say I cancelled ORD-100200 today, would the points come back?",
        "Let's say I want a refund for ORD-100200, how long would it take?",
        "Were I to ask for a refund on ORD-100200, who pays the return shipping?",
        "Assuming I cancel ORD-100200, do I keep the coupon?",
        "What would happen when I cancel ORD-100200?",
        "Theoretically, could ORD-100200 be refunded after 30 days?",
        "Imagine I refund ORD-100200, would I lose the gift?",
        "比如说我取消ORD-100200，会扣钱吗",
        "取消ORD-100200会有什么影响",
        "假如我想取消ORD-100200，积分会退回吗",
        "萬一我要退款ORD-100200，要等幾天",
    ],
    "policy_question": [
        "Can I get my money back on ORD-100200?",
        "Is ORD-100200 cancellable?",
        "Do you offer refunds on sale items like ORD-100200?",
        "Are refunds allowed for ORD-100200?",
        "Can ORD-100200 still be cancelled?",
        "Is it too late to cancel ORD-100200?",
        "Any way to get a refund for ORD-100200?",
        "Would a refund be possible for ORD-100200?",
        "ORD-100200能不能退款啊",
        "ORD-100200支持取消吗",
        "ORD-100200还能退款不",
        "訂單ORD-100200可以取消嗎",
    ],
    "conditional": [
        "Refund ORD-100200 once the courier collects it",
        "Cancel ORD-100200 when the price drops",
        "Refund ORD-100200 as soon as you get the return",
        "Hold ORD-100200 until Monday, otherwise cancel it",
        "Please cancel ORD-100200 after the weekend",
        "ORD-100200要是周三还不到就取消",
        "ORD-100200三天内不发货就退款",
        "等我寄回去之后再给ORD-100200退款",
        "到时候再帮我取消ORD-100200",
        "除非明天发货，不然取消ORD-100200",
        "ORD-100200星期五前冇到就取消",
    ],
    "cantonese": [
        "咪退款ORD-100200住",
        "ORD-100200唔好取消",
        "ORD-100200唔要退款",
        "咪帮我取消ORD-100200",
        "我上個禮拜取消咗ORD-100200",
        "ORD-100200退款？免喇",
        "ORD-100200嘅退款到咗喇",
        "我阿哥叫我取消ORD-100200",
        "ORD-100200可唔可以退款㗎",
        "咪住取消ORD-100200",
        "取消ORD-100200？唔使喇",
    ],
    "sarcasm": [
        "Sure, refund ORD-100200, because you're so good at refunds",
        "Wow, cancel ORD-100200, amazing service as always",
        "Brilliant. Refund ORD-100200. Slow clap.",
        "Oh fantastic, just cancel ORD-100200 then, whatever",
        "Refund ORD-100200? Yeah, when pigs fly.",
        "Go on then, cancel ORD-100200 🙄",
        "好好好，取消ORD-100200，你们开心就好",
        "退款ORD-100200？你们可真行啊🙄",
        "行吧行吧，ORD-100200退款，随便你们",
        "真是好棒的服务，给ORD-100200退款吧，呵呵",
    ],
}

#: (intent, message): the customer's own present ask.
ASKS: list[tuple[str, str]] = [
    ("refund", "Please refund ORD-100200, the screen is cracked"),
    ("refund", "I want a refund for ORD-100200"),
    ("cancel", "I'd like to cancel ORD-100200"),
    ("cancel", "Cancel ORD-100200 please"),
    ("refund", "Refund ORD-100200, it arrived broken"),
    ("refund", "ORD-100200 refund please"),
    ("cancel", "Cancel my order"),
    ("cancel", "Could you cancel ORD-100200 for me?"),
    ("refund", "Can you refund me for ORD-100200? The zip is broken."),
    ("refund", "Kindly process a refund for ORD-100200."),
    ("refund", "I need my money back for ORD-100200, it never arrived"),
    ("cancel", "pls cancel ORD-100200 asap"),
    ("refund", "plz refund ORD-100200 thx"),
    ("cancel", "Go ahead and cancel ORD-100200."),
    ("refund", "I request a full refund for ORD-100200 as the item is faulty."),
    ("refund", "I'm requesting a refund on ORD-100200 because it's the wrong size."),
    ("cancel", "Cancel ORD-100200 now, I ordered the wrong colour"),
    ("refund", "refund me ORD-100200"),
    ("refund", "Refund please"),
    ("refund", "I'd like a refund plaese for ORD-100200"),
    ("cancel", "I wnat to cancel ORD-100200"),
    ("cancel", "Cancle ORD-100200 please"),
    ("refund", "I neeed a refund for ORD-100200"),
    ("cancel", "Cancel the order ORD-100200, I found it cheaper elsewhere"),
    ("cancel", "Please cancel this order, I ordered it twice by mistake"),
    ("refund", "Refund for ORD-100200 please, it came damaged"),
    ("refund", "Money back for ORD-100200 please"),
    ("cancel", "Just cancel it."),
    ("refund", "OK, refund ORD-100200 then."),
    ("cancel", "Can you please cancel ORD-100200? I no longer need it"),
    ("refund", "Would you refund ORD-100200 for me, please?"),
    ("refund", "I would like to request a refund for order ORD-100200."),
    ("cancel", "Cancel order ORD-100200"),
    ("cancel", "Cancellation of ORD-100200 please"),
    ("refund", "ORD-100200: please refund, wrong item sent"),
    ("cancel", "Hi, I want to cancel my order ORD-100200 since I moved"),
    ("cancel", "I need to cancel ORD-100200 right away"),
    ("change_address", "Please change the address of ORD-100200 to 12 Oak Street, Leeds LS2 7EW"),
    (
        "change_address",
        "Change the delivery address for ORD-100200 to 9 King Road, Bristol BS1 4DJ",
    ),
    ("change_address", "Ship it to 44 Elm Avenue, Apt 3, Denver CO 80203 please"),
    ("refund", "I want my money back, ORD-100200 is faulty"),
    ("refund", "Refund me please, ORD-100200 never showed up"),
    ("refund", "I'd liek a refund for ORD-100200"),
    ("cancel", "Pleas cancel ORD-100200"),
    ("refund", "Refund ORD-100200 because it arrived late and cold"),
    ("cancel", "cancel ORD-100200 as I no longer need it"),
    ("refund", "ORD-100200 pls refund, box crushed"),
    ("refund", "我要退款，ORD-100200 收到的是坏的"),
    ("cancel", "请帮我取消订单ORD-100200"),
    ("refund", "退款 ORD-100200"),
    ("refund", "订单ORD-100200退款"),
    ("cancel", "把ORD-100200取消"),
    ("refund", "麻烦给ORD-100200退款，谢谢"),
    ("cancel", "ORD-100200 取消一下"),
    ("cancel", "我想取消ORD-100200，买错了"),
    ("refund", "申请退款，订单号ORD-100200"),
    ("refund", "帮我把ORD-100200退款吧"),
    ("refund", "给我退钱，ORD-100200质量太差"),
    ("cancel", "需要取消ORD-100200，因为地址填错了"),
    ("refund", "我要求退款ORD-100200"),
    ("cancel", "取消订单吧"),
    ("refund", "ORD-100200退款吧，谢谢"),
    ("change_address", "请把ORD-100200的地址改成上海市徐汇区漕溪北路88号"),
    ("cancel", "我的订单ORD-100200取消"),
    ("cancel", "請幫我取消訂單ORD-100200"),
    ("refund", "我要退款，訂單ORD-100200壞了"),
    ("refund", "麻煩幫我退款ORD-100200"),
    ("cancel", "唔該幫我取消ORD-100200"),
    ("refund", "唔該退款ORD-100200"),
    ("refund", "我想退貨款ORD-100200"),
    ("cancel", "ORD-100200 我要取消"),
    ("cancel", "急！请马上取消ORD-100200"),
    ("refund", "请尽快给ORD-100200退款，已经等了两周了"),
    ("refund", "东西坏了，请退款 ORD-100200"),
    ("cancel", "cancel ORD-100200 please i ordered the wrong size"),
    ("cancel", "need to cancel ORD-100200, wrong size"),
    ("refund", "想退款 ORD-100200，盒子压坏了"),
    ("refund", "ORD-100200 refund pls the box was crushed"),
    ("refund", "退款ORD-100200 谢谢 东西是坏的"),
]


@pytest.mark.parametrize(
    ("kind", "message"),
    [(kind, m) for kind, ms in NOT_ASKS.items() for m in ms] + WITHDRAWN_DECLINED_UNNEEDED,
)
def test_a_mention_that_is_not_a_present_own_ask_is_no_write(kind: str, message: str) -> None:
    asks = read_asks(message)
    assert asks.writes == (), (kind, message, asks.declined)
    assert asks.declined, (kind, message)  # the mention is seen and set aside, with why


@pytest.mark.parametrize(("intent", "message"), ASKS)
def test_a_present_own_ask_is_an_ask(intent: str, message: str) -> None:
    asks = read_asks(message)
    assert asks.writes == (intent,), (message, asks.declined)
    assert doubt(message) is None, message


def test_the_sets_are_varied_enough() -> None:
    assert all(len(ms) >= 10 for ms in NOT_ASKS.values()), {k: len(v) for k, v in NOT_ASKS.items()}
    assert len(ASKS) >= 60
    texts = [m for ms in NOT_ASKS.values() for m in ms] + [m for _, m in ASKS]
    assert len(set(texts)) == len(texts)  # no sentence twice
    for kind, ms in NOT_ASKS.items():  # each kind in both languages (Cantonese: Chinese only)
        assert kind == "cantonese" or any(m.isascii() for m in ms), kind
        assert any(not m.isascii() for m in ms), kind
