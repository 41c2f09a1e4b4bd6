"""Which order a message means when it names no id: the one the conversation is about, or
one it describes (tester9 F1).

"Refund it", "cancel this order", 这个订单 mean the order the conversation is about. "My other
order", "the previous one", "the one from October", "the USD 103.50 one", 另一个订单, 最新那个,
那个九月的 describe an order, and usually one that is *not* the conversation's: such a message
is asked back for the order's id, never run on the conversation's order (nor on the customer's
only order, nor answered with another order's facts).

Hand-written patterns, like :mod:`workflows.customer_service.asks`: this picks the order a
write moves money on, so code that a test can pin decides it.
"""

from __future__ import annotations

import re

from workflows.customer_service.ask_marks import normalise

_MONTHS = (
    r"jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|"
    r"sep(?:t(?:ember)?)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?"
)
#: What points at one order among several: an ordinal or a relative word, then the order.
_EN_WHICH = (
    r"other|another|previous|prior|earlier|older|oldest|newer|newest|latest|last|recent|"
    r"most recent|first|second|third|fourth|fifth|next|former|different|remaining|second-to-last"
)
_DESCRIBED = re.compile(
    # "my other order", "the previous one", "another purchase", "the second order"
    rf"\b(?:{_EN_WHICH})\s+(?:(?:\w+\s+)?(?:orders?|ones?|purchases?|parcels?|packages?|"
    r"shipments?|deliver(?:y|ies))\b)|"
    # "the one from October", "the one that came on Nov 26", "the one with the lamp"
    r"\b(?:the|that)\s+one\s+(?:from|that|which|with|i|we|placed|ordered|bought|delivered|"
    r"shipped|for|of|in|on|dated|containing)\b|"
    # "the USD 103.50 one", "the $20 order"
    r"\bthe\s+(?:[$€£¥]|usd|cny|eur|gbp|rmb)\s?\d[\d.,]*\s+(?:one|order)\b|"
    # "my order from October", "the order of Nov 26", "the order placed on the 3rd"
    r"\b(?:orders?|purchase|one)\s+(?:(?:i|we)\s+)?(?:from|of|in|on|placed(?: on| in)?|made on|"
    r"dated|bought(?: on| in)?|delivered(?: on| in)?|that came(?: on| in)?|arrived(?: on| in)?)"
    rf"\s+(?:the\s+)?(?:\d|{_MONTHS}\b|last\b|yesterday\b)|"
    r"\bnot (?:this|that|the same) one\b|"
    # Chinese (normalised to Simplified): 另一个订单, 上一个, 最新那个, 那个九月的, 第二个
    r"另一|另外(?:一|那|的)|别的订单|其他(?:的)?订单|其它(?:的)?订单|上一[个张单笔]|上个订单|"
    r"前一[个张单笔]|之前(?:那|的)[个张单笔]?订单|"
    r"(?:最新|最近|最早|最旧|最后)(?:的|那|一){0,2}[个张单笔]?订单|"
    r"(?:最新|最近|最早|最旧|最后)(?:的|那|一){1,2}[个张单笔]|"
    r"第[一二两三四五六七八九十\d]+[个张单笔]|(?:较|比较|更)(?:新|旧|早|晚|近)的?(?:那|一)?[个张单笔]|"
    r"那[个张单笔]?[^，,。！？!?]{0,8}?(?:[一二三四五六七八九十\d]+月|[\d.]+元|[\d.]+块)(?:份)?的|"
    r"[一二三四五六七八九十\d]+月(?:份)?(?:[\d一二三四五六七八九十]+[日号])?(?:的|那)[个张单笔]?(?:订单|那|单)|"
    r"还在处理中?的订单|不是这[个张单笔]",
    re.I,
)


def describes_an_order(message: str) -> bool:
    """Whether ``message`` describes which order it means other than by its id ("my other
    order", "the one from October", 另一个订单): the conversation's order is then not assumed.

    Example:
        >>> describes_an_order("please refund my other order")
        True
        >>> describes_an_order("請幫我取消另一張訂單"), describes_an_order("refund it please")
        (True, False)
    """
    return bool(_DESCRIBED.search(normalise(message[:4000])))


#: Words that may stand right before "order"/"one"/"purchase" in a plain reference to the
#: conversation's order ("refund this order", "cancel the one", "my whole order"): a verb,
#: a plain determiner or a preposition. Any other word there describes an order ("the
#: earbuds order", "my 1st order", "the cheaper one") and a write then asks for its id.
_PLAIN_BEFORE = frozenset(
    re.findall(
        r"\S+",
        "the my this that your our its whole entire full complete current same existing "
        "refund cancel return change update amend modify edit redirect reroute void stop "
        "for on of to in from with about please pls plz and or but then just so me us it is "
        "was be",
    )
)
_NOUNS = frozenset(("order", "one", "purchase"))
#: What describes orders for a write only (a read may answer them all): a plural, "all",
#: 两个订单, 所有订单.
_MANY = re.compile(
    r"\b(?:orders|purchases|ones)\b|"
    r"\ball (?:of )?(?:my|the|them|these|those)\b|[两俩几多][个张单笔]订单|所有(?:的)?订单|"
    r"全部(?:的)?订单|订单都|都退",
    re.I,
)
#: What describes an order beyond :data:`_DESCRIBED` (tester9b F1): a digit ordinal, "both",
#: "the order before", "order number two", what follows the order ("the order with the desk
#: lamp", "the one I bought"), in Chinese a clause ending in 的 before it (买耳机的那个订单).
_WRITE_DESCRIBED = re.compile(
    r"\b\d+(?:st|nd|rd|th)\b|\b(?:both|either|neither)\b|"
    r"\b(?:order|one|purchase)\s+(?:before|after|earlier|prior)\b|"
    r"\b(?:order|one)\s+(?:number|no\.?|#)\s*(?:\d|one|two|three|four|five)|"
    r"\b(?:order|one|purchase)\s+(?:with|containing|contains|including|which|where|that|"
    r"(?:i|we)\b|of (?:the|my|a|an)\b|for (?:the|a|an|my)\s+(?!full|whole|entire|total))|"
    r"[^\s我你您他她它们这那该此本，,。！？!?、的]的(?:那|这)?一?[个张单笔份]?(?:订单|单|个)",
    re.I,
)
_WORD = re.compile(r"[a-z0-9$€£¥][a-z0-9$€£¥.'-]*", re.I)


def write_describes_order(message: str, *, read: bool = False) -> bool:
    """Whether a write naming no order id must ask for it: ``message`` refers to an order
    other than by a pronoun or plain deixis ("it", "this order", "the one", 这个订单) or no
    reference at all ("refund please"). Everything :func:`describes_an_order` finds, and an
    item, ordinal, comparative or plural ("the earbuds order", "my 1st order", "the cheaper
    one", "both orders", 买耳机的那个订单): the conversation's order is then never assumed,
    even where the description happens to fit it. ``read``: for a read, where more than one
    order may be answered, a plural or "all" is no description.

    Example:
        >>> write_describes_order("refund the earbuds order"), write_describes_order("refund it")
        (True, False)
        >>> write_describes_order("請退款買跑鞋的那張訂單"), write_describes_order("這張訂單退款")
        (True, False)
    """
    text = normalise(message[:4000])
    if describes_an_order(message) or _WRITE_DESCRIBED.search(text):
        return True
    if not read and _MANY.search(text):
        return True
    words = [w.lower().strip(".'-") for w in _WORD.findall(text)]
    return any(
        word in _NOUNS and i > 0 and words[i - 1] not in _PLAIN_BEFORE
        for i, word in enumerate(words)
    )
