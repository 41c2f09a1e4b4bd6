"""Unbacked assertions: a model sentence that tells an action done or to be done by us (or
the shop, or the system), an event, a date or time, or an account, payment, stock, warranty
or shipping-eligibility fact is dropped unless a tool result of this turn (or its handoff
or ticket record) shows it (workflows.customer_service.claims.check_sentence).

Written before the checker's change (tester5 finding 2: the kind, not the tester's list;
none of the tester's sentences is here). Three sets:

* ``UNBACKED_EN`` / ``UNBACKED_ZH``: with only a lookup of an order being prepared this
  turn, every one is dropped;
* ``HARMLESS``: empathy, thanks, apologies, questions, offers: kept whatever ran;
* ``TRUE``: a sentence that says what a tool result of this turn shows: kept.
"""

from __future__ import annotations

from typing import Any

import pytest

from workflows.customer_service.claims import TurnFacts, check_sentence

ORDER = "ORD-104233"


def _result(tool: str, **facts: str) -> dict[str, Any]:
    return {"tool": tool, "ok": True, "facts": {"order_id": ORDER, **facts}}


LOOKUP = _result(
    "lookup_order",
    status="processing",
    total="USD 41.50",
    placed_on="2026-11-02",
    items="1 x Desk lamp",
    refunded="USD 0.00",
)
#: Only a lookup of an order being prepared ran this turn: nothing else happened.
PROCESSING = TurnFacts.of([LOOKUP])

UNBACKED_EN = [
    # an action done by us, first person or passive
    "I have applied a discount to your order.",
    "We've waived the delivery fee.",
    "I've reset your password.",
    "I have unlocked your account.",
    "We've put a hold on the payment.",
    "I've reserved a replacement unit for you.",
    "We have booked a courier pickup for you.",
    "I've flagged this order as urgent.",
    "I have logged a complaint on your behalf.",
    "We've blocked your card to keep it safe.",
    "I've upgraded your delivery to express.",
    "Your request has been passed on to our billing department.",
    "A return label has been emailed to you.",
    "A gift voucher was added to your account.",
    "Your complaint has been recorded.",
    "Your loyalty points have been restored.",
    "The duplicate charge has been reversed.",
    "Your subscription was paused.",
    "The missing item is being re-sent.",
    "We're arranging a pickup for the faulty item.",
    "I'm sending you a prepaid return label.",
    "Our warehouse team has been informed.",
    "I arranged a callback for you.",
    "A new invoice was generated for you.",
    # an action to be done
    "You'll receive a refund confirmation by text.",
    "A replacement will be dispatched today.",
    "The courier will call you before delivery.",
    "Your card will be charged on delivery.",
    "You'll get a tracking link by SMS.",
    "The system will email you a receipt.",
    # an event or an account, payment, stock, warranty or shipping fact
    "Your payment bounced.",
    "The bank reversed the payment.",
    "You have a remaining balance on your account.",
    "Your account is in good standing.",
    "This product is back in stock.",
    "The item is sold out.",
    "Your purchase is covered by our guarantee.",
    "The product comes with a lifetime warranty.",
    "Shipping on this order is free.",
    "Your parcel is at the local depot.",
    "The package is stuck in customs.",
    "The order is delayed because of the weather.",
    "Your delivery was rescheduled.",
    "Your order is ready for pickup.",
    "Your order was paid by card.",
    # a relative or absolute date or time
    "Your order went out this afternoon.",
    "It will be packed on Monday.",
    "Your order will be ready next week.",
    "We got your message last night.",
    "The payment cleared earlier today.",
    "It leaves the warehouse tonight.",
    "Your order ships first thing in the morning.",
]

UNBACKED_ZH = [
    # an action done by us
    "我已为您申请了补偿。",
    "我们已为您加急处理。",
    "已为您备注加急。",
    "已帮您重置密码。",
    "您的账户已解锁。",
    "我们已冻结您的银行卡。",
    "已为您预约上门取件。",
    "已给您补发了一件新的。",
    "已给您寄出退货标签。",
    "我们已经把问题反馈给仓库了。",
    "您的投诉已经登记。",
    "积分已经返还到您的账户。",
    "优惠券已发到您的账户。",
    "系统已自动为您改为顺丰快递。",
    # an action to be done, a date or time
    "您的订单明天就会打包。",
    "包裹今天下午出库。",
    "昨天已经给您发了短信。",
    "我们马上安排发货。",
    "快递员会提前给您打电话。",
    "您会收到一封确认邮件。",
    # an account, payment, stock, warranty or shipping fact
    "您这笔订单是免运费的。",
    "这款商品已经售罄。",
    "该商品暂时没有库存。",
    "您的商品在保修期内。",
    "您的账户余额不足。",
    "您的付款还在银行审核中。",
    "订单被暂时冻结了。",
    "您的包裹滞留在海关。",
    "订单因天气原因延误了。",
    "您的会员已经续费成功。",
    # Traditional
    "已為您申請補償。",
    "我們已經通知倉庫了。",
    "您的帳戶已經驗證。",
    "訂單明天會打包。",
    "商品目前缺貨。",
    "您的退貨已經收到。",
    "已幫您開立發票。",
    "您下單時被多扣了一次款。",
]

HARMLESS = [
    ("en", "I'm sorry for the trouble this has caused."),
    ("en", "Thank you for your patience."),
    ("en", "Thanks for reaching out to us."),
    ("en", "I understand how frustrating this is."),
    ("en", "I completely understand your concern."),
    ("en", "Would you like me to check the delivery address?"),
    ("en", "Is there anything else I can help with?"),
    ("en", "I can look into the charge for you."),
    ("en", "I can help you with a return."),
    ("en", "Let me know if you have any other questions."),
    ("en", "Please reply here if you would like a refund."),
    ("en", "If you prefer, I can ask a colleague to help."),
    ("en", "Happy to help with anything else."),
    ("en", "We appreciate your feedback."),
    ("en", "Do you still have the original packaging?"),
    ("en", "What would you like me to do next?"),
    ("en", "Feel free to send a photo of the item."),
    ("en", "I'd be glad to help you track it."),
    ("en", "Apologies for the inconvenience."),
    ("en", "Thank you for choosing our store."),
    ("zh", "非常抱歉给您带来不便。"),
    ("zh", "感谢您的耐心等待。"),
    ("zh", "谢谢您联系我们。"),
    ("zh", "我理解您的心情。"),
    ("zh", "您需要我帮您查一下物流吗？"),
    ("zh", "如需退款，请在这里回复我。"),
    ("zh", "我可以帮您查询订单。"),
    ("zh", "还有其他可以帮您的吗？"),
    ("zh", "请告诉我具体情况。"),
    ("zh", "如果您愿意，我可以请同事帮忙。"),
    ("zh", "您可以把商品照片发给我吗？"),
    ("zh", "感謝您的耐心。"),
    ("zh", "請問還有什麼可以幫您？"),
    ("zh", "很抱歉讓您久等了。"),
]

TICKET = TurnFacts.of([{"tool": "open_ticket", "ok": True, "facts": {"ticket_id": "T-000031"}}])
HANDOFF = TurnFacts.of([], handoff=True)
ADDRESS = TurnFacts.of([_result("change_address", shipping_address="12 Park Lane, Springfield")])
REFUND = TurnFacts.of(
    [
        _result(
            "start_refund",
            refund_id="RF-000077",
            refund_amount="USD 41.50",
            refund_status="approved",
        )
    ]
)
CANCEL = TurnFacts.of([_result("cancel_order", status="cancelled", cancelled_on="2026-11-03")])
TRACK = TurnFacts.of(
    [
        _result(
            "track_shipment",
            carrier="UPS",
            tracking_number="1Z999AA10123456784",
            shipment_status="in_transit",
            shipped_on="2026-11-20",
            estimated_delivery="2026-11-25",
            delivered_on="",
        )
    ]
)
ELIGIBLE = TurnFacts.of(
    [_result("check_refund_eligibility", eligible="yes", refundable="USD 41.50", reason="")]
)

TRUE = [
    (PROCESSING, "en", f"Your order {ORDER} is still being prepared."),
    (PROCESSING, "en", f"I checked order {ORDER}: it is processing (total USD 41.50)."),
    (PROCESSING, "zh", f"您的订单 {ORDER} 目前处理中。"),
    (PROCESSING, "zh", f"已为您查询订单 {ORDER}：状态为处理中，金额 USD 41.50。"),
    (TICKET, "en", "I opened ticket T-000031 and a colleague will follow up soon."),
    (TICKET, "en", "A ticket has been opened for you: T-000031."),
    (TICKET, "zh", "已为您创建工单 T-000031，同事会尽快联系您。"),
    (TICKET, "zh", "工单 T-000031 已创建。"),
    (HANDOFF, "en", "I have passed your case to a colleague."),
    (HANDOFF, "en", "A colleague will get back to you soon."),
    (HANDOFF, "zh", "我已将您的问题转交给同事。"),
    (ADDRESS, "en", "Your shipping address has been updated."),
    (ADDRESS, "en", f"I updated order {ORDER}; it will go to 12 Park Lane, Springfield."),
    (ADDRESS, "zh", f"已为您修改订单 {ORDER} 的收货地址。"),
    (REFUND, "en", f"Refund RF-000077 of USD 41.50 for order {ORDER} is approved."),
    (REFUND, "zh", f"订单 {ORDER} 的退款 RF-000077 已提交。"),
    (CANCEL, "en", f"Order {ORDER} is now cancelled, and nothing more will be charged."),
    (CANCEL, "zh", f"订单 {ORDER} 已取消，不会再产生费用。"),
    (TRACK, "en", f"Your order {ORDER} is on its way with UPS; tracking 1Z999AA10123456784."),
    (TRACK, "en", "It shipped on 2026-11-20."),
    (TRACK, "zh", f"您的订单 {ORDER} 已由 UPS 配送，运单号 1Z999AA10123456784。"),
    (ELIGIBLE, "en", f"Order {ORDER} can be refunded up to USD 41.50."),
    (ELIGIBLE, "zh", f"订单 {ORDER} 最多可退款 USD 41.50。"),
]

ALL_FACTS = (PROCESSING, TICKET, HANDOFF, ADDRESS, REFUND, CANCEL, TRACK, ELIGIBLE)


@pytest.mark.parametrize("sentence", UNBACKED_EN)
def test_unbacked_english_is_dropped(sentence: str) -> None:
    assert check_sentence(sentence, PROCESSING, "en") is not None


@pytest.mark.parametrize("sentence", UNBACKED_ZH)
def test_unbacked_chinese_is_dropped(sentence: str) -> None:
    assert check_sentence(sentence, PROCESSING, "zh") is not None


@pytest.mark.parametrize(("lang", "sentence"), HARMLESS)
def test_harmless_sentence_stays_whatever_ran(lang: str, sentence: str) -> None:
    # a request for the order number is no longer harmless once a tool found the order:
    # tests/unit/test_claims_found7.py
    for facts in ALL_FACTS:
        assert check_sentence(sentence, facts, lang) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(("facts", "lang", "sentence"), TRUE)
def test_true_fact_sentence_stays(facts: TurnFacts, lang: str, sentence: str) -> None:
    assert check_sentence(sentence, facts, lang) is None  # type: ignore[arg-type]


@pytest.mark.parametrize(("facts", "lang", "sentence"), TRUE)
def test_true_fact_sentence_is_dropped_when_only_the_lookup_ran(
    facts: TurnFacts, lang: str, sentence: str
) -> None:
    """The same sentence with another turn's facts: what backs it is the tool that ran."""
    if facts is PROCESSING:
        return
    assert check_sentence(sentence, PROCESSING, lang) is not None  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("lang", "sentence"),
    [
        ("en", "A colleague will call you tomorrow."),
        ("en", "Someone from billing will email you a receipt."),
        ("en", "A colleague will refund the fee for you."),
        ("en", "You can expect a call from us tomorrow."),
        ("zh", "同事明天会联系您。"),
        ("zh", "同事会给您发一张优惠券。"),
        ("zh", "專員下週一會回覆您。"),
    ],
)
def test_a_handoff_backs_the_follow_up_not_a_date_or_another_action(
    lang: str, sentence: str
) -> None:
    assert check_sentence(sentence, HANDOFF, lang) is not None  # type: ignore[arg-type]
