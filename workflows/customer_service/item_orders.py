"""Which of the customer's orders a message means by the goods it names (tester14 I14).

"Has my desk lamp been delivered?" names no order id. Before this module the read was offered
the customer's newest orders and the model picked one, so the reply could state another
order's facts as the lamp's. The order is a fact: code reads it from the customer's words.

A product of one of the customer's orders is named when the message holds its head noun (the
last word of an English name, singular or plural: "lamp", "lamps" for "Desk lamp") or, in
Chinese, the whole name or its last two characters (耳机 for 无线耳机), the message folded to
Simplified first.

Goods of no order of theirs ("where is my blender?", 我的冰箱到哪了) are found by where they
stand (:func:`goods_phrases`: after "my", "the … I ordered", 我的, 我买的), whatever the
word: the caller then says none of their orders holds them and asks which order is meant,
never answering with an order the customer did not name (cs15).
"""

from __future__ import annotations

import re

from workflows.customer_service.ask_marks import normalise

_WORD = re.compile(r"[a-z0-9]+")
_HAN = re.compile(r"[\u4e00-\u9fff]")
#: English words of a phrase in a goods slot that make it no goods: the order or parcel
#: itself, money, the account, a person, a figure of speech ("my god"). Any other word there
#: is taken for goods: the safe side, a question back.
_NOT_GOODS = frozenset(
    re.findall(
        r"\S+",
        "order orders package packages parcel parcels delivery deliveries shipment shipments "
        "purchase purchases item items stuff thing things goods product products box boxes "
        "refund refunds money cash payment payments card account address tracking number "
        "request question questions issue problem complaint email name details info "
        "information id code receipt invoice bill balance points coupon voucher membership "
        "wife husband son daughter mom mum mother dad father parents friend boss partner "
        "kid kids child children family brother sister neighbour neighbor colleague "
        "god goodness gosh bad mistake apologies pleasure mind time day life own turn side "
        "one ones fault dear bank shipping return returns exchange reason",
    )
)
#: Chinese (Simplified) words that make a goods-slot phrase no goods (same roles as above).
_NOT_GOODS_ZH = re.compile(
    r"订单|单号|包裹|快递|物流|东西|商品|宝贝|货|退款|钱|款|地址|账|问题|申请|意思|天|号|"
    r"电话|邮箱|名字|情况|投诉|请求|要求|信息|卡|会员|积分|优惠|老公|老婆|妈|爸|儿|女|"
    r"朋友|家|丈夫|妻|孩子|哥|姐|弟|妹|同事|老板|邻居|退货|换货|久|时间|周|月|年|^单$|^件$"
)
#: English goods slots: "my <phrase>", "the <phrase> I ordered", "I ordered a <phrase>",
#: "where is the <phrase>"; a phrase is one to three words, up to a word that is no noun.
_PHRASE = r"((?:[a-z0-9][a-z0-9'-]*\s+){0,2}?[a-z0-9][a-z0-9'-]*)"
_STOP = (
    r"(?=\s*(?:[^\w\s']|$)|\s+(?:is|are|was|were|has|have|had|hasn'?t|haven'?t|did|didn'?t|"
    r"does|doesn'?t|will|won'?t|still|yet|not|never|arrived?|came|come|shipped|ship|been|"
    r"delivered|get|got|gotten|show|showed|turn|turned|broke|broken|stopped|and|or|but|"
    r"that|which|i|we|from|for|to|at|in|on|of|with|by|already|just|today|now)\b)"
)
_EN_GOODS = tuple(
    re.compile(slot, re.I)
    for slot in (
        rf"\b(?:my|our)\s+{_PHRASE}{_STOP}",
        rf"\b(?:the|a|an|this|that)\s+{_PHRASE}\s+(?:that\s+|which\s+)?(?:i|we)\s+"
        r"(?:ordered|bought|purchased|paid for|got from you)\b",
        rf"\b(?:ordered|bought|purchased)\s+(?:a|an|the|some|two|three)\s+{_PHRASE}{_STOP}",
        rf"\b(?:where\s+is|where's|where\s+are|has|have|did|when\s+will)\s+the\s+{_PHRASE}{_STOP}",
    )
)
#: Chinese goods slots (folded to Simplified): 我的X, 我买的X, 我订的X, 我买了(一)个X; X is a
#: run of Chinese characters up to one that begins what is said about it.
_ZH_GOODS = re.compile(
    r"我们?(的|买的|订的|下单的|购买的|订购的|网购的|买了|订了|下单了|购买了)(?:一[个台件双只部]|[这那]?[个台件双只部])?"
    r"([\u4e00-\u9fff]{1,8}?)(?=[到在怎什呢了吗吧还已是有没么呀啊都也就能可为几多哪何从和跟"
    r"要想坏破被给，。！？、,.!?\s]|发[货了出到走过没]|送[到达了来]|寄[出了到来]|$)"
)


def _heads(name: str) -> set[str]:
    """The words of a message that name an English product: its last word, singular or
    plural (``"Running shoes"`` → ``{"shoe", "shoes", "shoees"}``; the odd form is harmless)."""
    words = _WORD.findall(name.lower())
    if not words:
        return set()
    head = words[-1]
    stem = head[:-1] if head.endswith("s") and len(head) > 3 else head
    return {stem, f"{stem}s", f"{stem}es"}


def names_product(message: str, product: str) -> bool:
    """Whether ``message`` names ``product`` (a product name as the order store holds it).

    Example:
        >>> names_product("has my desk lamp been delivered?", "Desk lamp")
        True
        >>> names_product("我的無線耳機到哪了？", "无线耳机")
        True
        >>> names_product("where is it?", "Desk lamp")
        False
    """
    text = normalise(message[:4000]).lower()
    if _HAN.search(product):
        name = normalise(product)
        return name in text or (len(name) >= 3 and name[-2:] in text)
    return bool(_heads(product) & set(_WORD.findall(text)))


def item_orders(message: str, products: dict[str, list[str]]) -> list[str]:
    """The orders (of ``products``: order id → its product names, newest first) one of whose
    products ``message`` names, in that order; [] when it names none of them."""
    return [
        order for order, names in products.items() if any(names_product(message, n) for n in names)
    ]


def goods_phrases(message: str, *, bought: bool = False) -> list[str]:
    """The goods ``message`` names by where they stand (:data:`_EN_GOODS`, :data:`_ZH_GOODS`),
    lower case and folded to Simplified, less phrases that are an order, money, a person or
    the like (:data:`_NOT_GOODS`); [] when it names none. ``bought``: only goods said to be
    bought or ordered ("the X I ordered", "I bought a X", 我买的X), never a bare "my X" ("my
    statement", 我的X), for what a message is about when nothing else says it.

    Example:
        >>> goods_phrases("where is my blender?"), goods_phrases("where is my order?")
        (['blender'], [])
        >>> goods_phrases("我買的冰箱什麼時候到？"), goods_phrases("我的订单到哪了")
        (['冰箱'], [])
    """
    text = normalise(message[:4000]).lower()
    slots = _EN_GOODS[1:3] if bought else _EN_GOODS  # said bought: the 2nd and 3rd
    found = [p for slot in slots for p in slot.findall(text)]
    english = [p for p in found if not set(_WORD.findall(p)) & _NOT_GOODS]
    zh = [p for v, p in _ZH_GOODS.findall(text) if not (bought and v == "的")]
    chinese = [p for p in zh if not _NOT_GOODS_ZH.search(p)]
    return list(dict.fromkeys([*english, *chinese]))


def order_list(products: dict[str, list[str]], language: str, limit: int = 5) -> str:
    """``products``' first ``limit`` orders with their goods, for a question back:
    ``"ORD-100160 (Desk lamp), ORD-100076 (Wireless earbuds)"`` (``zh``: 、 and full-width
    brackets); ``, …`` when there are more."""
    zh = language == "zh"
    shown = [
        f"{order}（{'、'.join(names)}）" if zh else f"{order} ({', '.join(names)})"
        for order, names in list(products.items())[:limit]
    ]
    more = len(products) > limit
    return ("、" if zh else ", ").join(shown) + ("……" if zh and more else ", …" if more else "")
