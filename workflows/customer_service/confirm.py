"""Confirmation questions and clarifications of the customer-service workflow, written by code.

Before any write the workflow states exactly what it will do, with the facts read from the
store now (:func:`preview`), and waits for the customer's yes (LangGraph ``interrupt``). When a
message cannot be acted on as written (two intents, a hesitant or unreadable message, a missing
or odd address, no order named) :func:`clarification` says why, in the customer's language.
"""

from __future__ import annotations

import re
from typing import Any

from workflows.customer_service import address_ask
from workflows.customer_service.amounts import RefundAsk
from workflows.customer_service.ask_marks import HIDDEN_ADDRESS
from workflows.customer_service.asks import Asks, normalise
from workflows.customer_service.store import OrderTools, ToolError, ToolResult, money

#: Words of a plain no ("no", "no wait, don't", "算了，不用了"): an answer made only of these.
_NO_WORDS = re.compile(
    r"no|nope|nah|n|don ?t|do not|dont|stop|cancel|cancel it|never ?mind|not now|thanks|"
    r"thank you|wait|hold on|forget it|actually|please|不|不要|不用|不用了|算了|取消|不是|不行|别|"
    r"等等|等一下|先不要|不了|还是算了|不对|了"
)

#: What an intent is called in a question ("which do you mean: tracking or a refund?").
_NAMES = {
    "en": {
        "refund": "a refund",
        "cancel": "cancelling the order",
        "change_address": "changing the address",
        "track": "tracking the parcel",
        "status": "the order's status",
        "eligibility": "whether it can be refunded",
    },
    "zh": {
        "refund": "退款",
        "cancel": "取消订单",
        "change_address": "修改地址",
        "track": "查询物流",
        "status": "查询订单状态",
        "eligibility": "查询能否退款",
    },
}
_TEXTS = {
    "en": {
        "empty": "I could not find a question in your message. Please tell me what you need, "
        "for example: where is order ORD-123456?",
        "language": "I can help in English or Chinese (我可以用中文或英文为您服务). Please write "
        "your question in one of them.",
        "two": "Your message asks for {names}. Which one do you want? I have not changed "
        "anything yet.",
        "long": "Your message is very long; I read only its beginning. For a refund, a "
        "cancellation or an address change, please send a short message that says only that.",
        "too_long": "Your message is too long for me to read. Please send your question on its "
        "own, in a few sentences. Nothing was changed.",
        "bad_id": "That order id does not look right: order ids are ORD- and six digits "
        "(ORD-123456). Which order do you mean? Nothing was changed.",
        "which_order": "Which order do you mean? Please give its id (ORD- and six digits). "
        "Nothing was changed.",
        "which_of": "Which order do you mean: {ids}? Nothing was changed.",
        "which_listed": "Which order do you mean: {orders}? Please give its id (ORD- and six "
        "digits). Nothing was changed.",
        "no_item": "I could not find that item in your recent orders: {orders}. Which order "
        "do you mean? Please give its id (ORD- and six digits). Nothing was changed.",
        "no_refunds": "There is no refund on any of your orders. Nothing was changed.",
        "which_refund": "You have refunds on {count} orders ({ids}). Which order or refund do "
        "you mean? Please give its id (ORD-… or RF-…). Nothing was changed.",
        "address": "Please tell me the new address (street and number, city, postcode). "
        "Nothing was changed: {why}.",
        "not_done": "OK, I did not {what} order {order_id}; nothing was changed.",
        "other_customer": "This conversation belongs to another customer; nothing was changed.",
        "not_holder": "Only the account holder can ask for a refund, a cancellation or an address "
        "change, so nothing was changed. Please ask them to sign in and write to us.",
        "nothing_pending": "Nothing is waiting for your confirmation, so nothing was changed. "
        "How can I help?",
        "refund_amount": "How much should I refund? Please write the amount as a number with "
        "the order's currency (for example: refund USD 10.00 of ORD-123456), or say "
        '"refund all of" and the order id for the whole amount left. Nothing was changed.',
        "refund_not_positive": "A refund amount must be more than zero. Please write the "
        "amount as a number with the order's currency (for example: refund USD 10.00 of "
        "ORD-123456). Nothing was changed.",
        "over_limit": "You confirmed a refund of {amount} for order {order_id}. It is more than "
        "is refunded automatically on this order, so a colleague will review it before any "
        "money moves; nothing has been refunded yet.",
        "out_of_scope": "I can only help with orders from this shop: deliveries, refunds, "
        "returns, cancellations, address changes and your account. I can't help with that "
        "question. Is there anything about an order I can do for you?",
    },
    "zh": {
        "empty": "没有在您的消息中看到问题。请告诉我您需要什么，例如：订单 ORD-123456 到哪了？",
        "language": "我可以用中文或英文为您服务 (I can help in English or Chinese)。"
        "请用其中一种语言描述您的问题。",
        "two": "您的消息同时提到了{names}。请问您要办理哪一项？目前没有做任何更改。",
        "long": "您的消息太长，我只读取了开头部分。"
        "如需退款、取消订单或修改地址，请单独发送一条简短的消息。",
        "too_long": "您的消息太长，我无法读取。请用几句话单独发送您的问题。没有做任何更改。",
        "bad_id": "这个订单号格式不对：订单号是 ORD- 加六位数字（例如 ORD-123456）。"
        "请问是哪一个订单？没有做任何更改。",
        "which_order": "请问是哪一个订单？请提供订单号（ORD- 加六位数字）。没有做任何更改。",
        "which_of": "请问是哪一个订单：{ids}？没有做任何更改。",
        "which_listed": "请问是哪一个订单：{orders}？请提供订单号（ORD- 加六位数字）。"
        "没有做任何更改。",
        "no_item": "在您最近的订单里没有找到这件商品：{orders}。请问是哪一个订单？"
        "请提供订单号（ORD- 加六位数字）。没有做任何更改。",
        "no_refunds": "您的订单都没有退款记录。没有做任何更改。",
        "which_refund": "您有 {count} 个订单有退款（{ids}）。请问是哪一个订单或退款？"
        "请提供订单号或退款号（ORD-… 或 RF-…）。没有做任何更改。",
        "address": "请告诉我新的收货地址（省市区、街道和门牌号）。没有做任何更改：{why}。",
        "not_done": "好的，订单 {order_id} 没有{what}，没有做任何更改。",
        "other_customer": "此对话属于另一位客户，没有做任何更改。",
        "nothing_pending": "目前没有等待您确认的操作，没有做任何更改。请问有什么可以帮您？",
        "not_holder": "只有账户持有人本人才能申请退款、取消订单或修改地址，因此没有做任何更改。"
        "请让账户持有人登录后联系我们。",
        "refund_amount": "请问要退多少钱？请用数字写明金额和订单的币种（例如：订单 ORD-123456 "
        "退 10.00 元），或说“全部退款”并附上订单号，退还剩余的全部金额。没有做任何更改。",
        "refund_not_positive": "退款金额必须大于零。请用数字写明金额和订单的币种（例如：订单 "
        "ORD-123456 退 10.00 元）。没有做任何更改。",
        "over_limit": "您已确认为订单 {order_id} 退款 {amount}。该金额超过自动退款上限，"
        "需由同事审核后才会退款，目前尚未退款。",
        "out_of_scope": "我只能处理本店订单的问题：物流、退款、退货、取消订单、修改地址和账户。"
        "这个问题我帮不上忙。请问您的订单有什么需要帮助的吗？",
    },
}
_UNLIKE = "please write the amount in the order's currency"
_WHAT = {
    "en": {"start_refund": "refund", "cancel_order": "cancel", "change_address": "change"},
    "zh": {"start_refund": "退款", "cancel_order": "取消", "change_address": "修改地址"},
}
_ADDRESS_WHY_ZH = {
    "no new address was given": "没有提供新地址",
    "what follows the address change is an instruction, not an address": (
        "提供的内容是一条指令，不是地址"
    ),
    "that does not read as a postal address": "提供的内容不像邮寄地址",
    "an address holds no markup, links or code": "地址里不能有网页代码、链接或程序代码",
    HIDDEN_ADDRESS: "地址里不能有不可见字符或改变文字方向的字符，请重新输入",
    **address_ask.WHY_ZH,
}


def text(key: str, language: str, **facts: str) -> str:
    """The clarification ``key`` in ``language`` with ``facts`` filled in."""
    return _TEXTS[language][key].format(**facts)


def two_intents(asks: Asks, language: str) -> str:
    """ "Which one do you want?" for a message with two intents, one of them a write."""
    names = [_NAMES[language][i] for i in dict.fromkeys((*asks.writes, *asks.reads))]
    joined = "、".join(names) if language == "zh" else " or ".join(names)
    return text("two", language, names=joined)


def address_problem(why: str, language: str) -> str:
    """Ask for a usable new address, saying what was wrong."""
    return text("address", language, why=_ADDRESS_WHY_ZH.get(why, why) if language == "zh" else why)


def is_no(answer: str) -> bool:
    """A plain no (``no``, ``no wait, don't``, ``不用了``, ``算了``) and nothing else."""
    plain = re.sub(r"[\s\W_]+", " ", normalise(answer).lower()).strip()
    words = [w for w in plain.split(" ") if w]
    if not words or not re.fullmatch(
        r"no|nope|nah|n|don ?t|dont|stop|wait|cancel|never|not|forget|[不别算取等先还].*", words[0]
    ):
        return False
    rest = " ".join(words)
    while rest:  # a short run of no-words
        end = next((e for e in range(len(rest), 0, -1) if _NO_WORDS.fullmatch(rest[:e].strip())), 0)
        if not end:
            return False
        rest = rest[end:].strip()
    return True


def confirmed_for_review(tools: OrderTools, action: dict[str, Any]) -> str:
    """What the reply says after the customer's yes to a refund over the automatic limit:
    the yes was heard, the amount, and that a person reviews it; never the question again
    (tester7 F6: "Reply yes to confirm" was repeated after the yes).

    ``action`` is the confirmed write (``arguments`` with ``order_id`` and ``amount_cents``,
    ``language`` ``en``/``zh``); the currency is read from the store now.
    """
    args = action.get("arguments") or {}
    order_id = str(args.get("order_id", ""))
    try:
        currency = tools.refundable(order_id)[1]
    except ToolError:
        currency = ""
    amount = money(int(args.get("amount_cents") or 0), currency).strip()
    language = "zh" if action.get("language") == "zh" else "en"
    return text("over_limit", language, amount=amount, order_id=order_id)


def not_done(action: dict[str, Any], language: str) -> str:
    """ "OK, I did not refund order ORD-…; nothing was changed." """
    what = _WHAT[language].get(str(action.get("tool")), "change")
    order_id = str(action.get("arguments", {}).get("order_id", ""))
    return text("not_done", language, what=what, order_id=order_id)


def preview(
    tools: OrderTools,
    tool: str,
    args: dict[str, Any],
    language: str,
    asked: RefundAsk | None = None,
) -> tuple[dict[str, Any], str] | ToolResult:
    """The exact write and its confirmation question, from the store's facts now; or the
    refusal (``ToolResult``, ok False) when it cannot be done, so nothing is asked.

    ``args`` holds ``order_id`` (and ``new_address`` for an address change, ``reason`` for a
    refund). A refund's arguments get the exact ``amount_cents`` the question names: the
    whole amount left, or the part the customer wrote (``asked``, :func:`~workflows.
    customer_service.amounts.refund_ask`), refused when it is more than what is left or in
    another currency.
    """
    order_id = str(args["order_id"])
    try:
        order = tools.run("lookup_order", {"order_id": order_id}).facts
    except ToolError as exc:
        return ToolResult(tool=tool, ok=False, facts={"order_id": order_id}, error_code=exc.code)
    zh = language == "zh"
    if tool == "start_refund":
        cents, currency, why = tools.refundable(order_id)
        if why is not None:
            return _refused(tool, order_id, f"order is not refundable: {why}")
        if asked is not None and asked.cents is not None:  # the part the customer wrote
            if not asked.fits(currency):
                return _refused(tool, order_id, f"the order is in {currency}; {_UNLIKE}")
            if asked.cents > cents:
                left = f"{money(asked.cents, currency)} is more than the {money(cents, currency)}"
                return _refused(tool, order_id, f"order {order_id}: {left} left to refund")
            cents = asked.cents
        amount = money(cents, currency)
        question = (
            f"确认为订单 {order_id}（{order['items']}）退款 {amount}，退回原支付方式吗？"
            "回复“是”确认。"
            if zh
            else f"Refund {amount} for order {order_id} ({order['items']}) to the original "
            "payment method? "
            "Reply yes to confirm."
        )
        return {**args, "amount_cents": cents}, question
    if order["status"] != "processing":
        return _refused(tool, order_id, f"order is {order['status']}; only unshipped orders change")
    if tool == "cancel_order":
        question = (
            f"确认取消订单 {order_id}（{order['items']}，金额 {order['total']}）吗？回复“是”确认。"
            if zh
            else f"Cancel order {order_id} ({order['items']}, total {order['total']})? "
            "Reply yes to confirm."
        )
        return dict(args), question
    address = str(args["new_address"])
    question = (
        f"确认将订单 {order_id} 的收货地址改为“{address}”吗？回复“是”确认。"
        if zh
        else f'Change the shipping address of order {order_id} to "{address}"? '
        "Reply yes to confirm."
    )
    return dict(args), question


def _refused(tool: str, order_id: str, reason: str) -> ToolResult:
    return ToolResult(
        tool=tool,
        ok=False,
        error_code="policy",
        facts={"order_id": order_id, "reason": reason},
        message=reason,
    )
