"""Code-written replies of the customer-service workflow: the prose code writes when no model
sentence is left after the claim checker (:mod:`workflows.customer_service.claims`), a template
per tool outcome and per intent, English and Chinese. Split out of ``claims`` (which
re-exports :func:`code_reply`, :func:`cut_reply` and :func:`outcome_key`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from workflows.customer_service.language import Lang

_EN_REPLY: dict[str, str] = {
    "tool:lookup_order": "Let me know if you need anything else about this order.",
    "tool:track_shipment": "You can follow the parcel with the tracking number above.",
    "tool:check_refund_eligibility": "Reply here if you would like me to start the refund.",
    "tool:start_refund": "Let me know if there is anything else I can do for you.",
    "tool:cancel_order": "Let me know if there is anything else I can do for you.",
    "tool:change_address": "Please check the new address above; reply here if it needs a fix.",
    "tool:open_ticket": "You will hear from us on this ticket.",
    "refused": "I am sorry I cannot do more on this order here; reply if you would like a "
    "colleague to look at it.",
    "not_confirmed": "What would you like me to do instead? Tell me, and I will ask you to "
    "confirm it.",  # a plain question back, never a refusal (tester7 F13)
    "not_found": "Please check the order number and send it again.",
    "decided": "Thank you for your patience while a colleague looked at your case.",
    "cut": "My answer was cut off before it was complete; please send your message again, or "
    "ask for a colleague.",
    "billing": "I see you have a question about a fee or a charge. Please send the order "
    "number or the date of the charge, so I can look into it.",
    "payment": "I see you have a question about a payment. Please send the order number and "
    "the date of the payment, so I can check it.",
    "account_access": "I see you cannot get into your account. Please use the password reset "
    "link on the sign-in page, or ask here for a colleague.",
    "card": "I see you have a question about your card. Please tell me what happened, or ask "
    "for a colleague.",
    "refund": "I can help with a refund. Please send the order number.",
    "eligibility": "I can check where your refund stands. Please send the order number.",
    "track": "I can check where your order is. Please send the order number.",
    "status": "I can check your order. Please send the order number.",
    "cancel": "I can help you cancel an order. Please send the order number.",
    "change_address": "I can help you change the delivery address. Please send the order "
    "number and the new address.",
    "human": "I am passing this conversation to a colleague, who will reply here.",
    "complaint": "I am sorry about this experience. Please tell me what happened, or ask "
    "for a colleague.",
    "others": "I can only look up the orders of the customer signed in to this chat. For one "
    "of your own orders, please send its order number.",
    # nothing records the feedback: say only thanks, no forwarding
    "product_feedback": "Thank you for taking the time to share your feedback.",
    "other": "Thank you for your message. Please tell me a little more, and I will help you.",
}
_ZH_REPLY: dict[str, str] = {
    "tool:lookup_order": "关于这个订单如还有其他问题，请告诉我。",
    "tool:track_shipment": "您可以用上面的运单号查看包裹的物流信息。",
    "tool:check_refund_eligibility": "如需办理退款，请在这里回复我。",
    "tool:start_refund": "如还有其他需要帮助的地方，请告诉我。",
    "tool:cancel_order": "如还有其他需要帮助的地方，请告诉我。",
    "tool:change_address": "请核对上面的新地址；如需修改，请在这里回复。",
    "tool:open_ticket": "我们会就这个工单与您联系。",
    "refused": "很抱歉，这个订单我在这里无法进一步处理；如需同事查看，请回复我。",
    "not_confirmed": "您希望我改为怎么处理？请告诉我，我会再请您确认。",
    "not_found": "请核对订单号后重新发送。",
    "decided": "感谢您耐心等待同事处理您的问题。",
    "cut": "我的回答在完成前被中断了；请重新发送您的消息，或要求转人工。",
    "billing": "我了解您对费用或扣款有疑问。请发送订单号或扣款日期，以便我为您核查。",
    "payment": "我了解您对付款有疑问。请发送订单号和付款日期，以便我为您核查。",
    "account_access": "我了解您无法登录账户。请使用登录页上的重置密码链接，或在这里要求转人工。",
    "card": "我了解您对银行卡有疑问。请告诉我具体情况，或要求转人工。",
    "refund": "我可以帮您办理退款。请发送订单号。",
    "eligibility": "我可以帮您查询退款进度。请发送订单号。",
    "track": "我可以帮您查询订单的物流。请发送订单号。",
    "status": "我可以帮您查询订单。请发送订单号。",
    "cancel": "我可以帮您取消订单。请发送订单号。",
    "change_address": "我可以帮您修改收货地址。请发送订单号和新地址。",
    "human": "我会将这段对话转交给同事，同事会在这里回复您。",
    "complaint": "很抱歉给您带来不好的体验。请告诉我具体情况，或要求转人工。",
    "others": "我只能查询当前登录客户本人的订单。如需查询您自己的订单，请发送订单号。",
    "product_feedback": "感谢您抽出时间分享您的反馈。",
    "other": "感谢您的留言。请再告诉我一些细节，我会尽力帮助您。",
}


def outcome_key(results: Sequence[Mapping[str, Any]], decided: bool) -> str | None:
    """The template key of a turn's tool outcome: ``tool:NAME`` when the last result succeeded,
    ``refused`` / ``not_found`` / ``not_confirmed`` (an offer not confirmed) when it did not,
    ``decided`` after a person's decision with no tool, None with no tool at all."""
    if not results:
        return "decided" if decided else None
    last = results[-1]
    if last.get("ok", True):  # a refunded order with nothing left: no offer of a refund
        done = (last.get("facts") or {}).get("eligible") == "no"
        return "tool:lookup_order" if done else f"tool:{last.get('tool')}"
    code = str(last.get("error_code"))
    if last.get("tool") == "track_shipment" and code == "policy":  # found, not shipped yet:
        return "tool:lookup_order"  # answered (the fact sentence says so), no refusal
    return code if code in ("not_found", "not_confirmed") else "refused"


def code_reply(outcome: str | None, intent: str | None, lang: Lang) -> str:
    """The prose code writes when no model sentence is left: by the tool outcome
    (:func:`outcome_key`), else by the intent, else a general one."""
    table = _ZH_REPLY if lang == "zh" else _EN_REPLY
    return table.get(outcome or "") or table.get(intent or "") or table["other"]


def cut_reply(lang: Lang) -> str:
    """What the customer reads when the model's answer was cut mid-stream."""
    return (_ZH_REPLY if lang == "zh" else _EN_REPLY)["cut"]
