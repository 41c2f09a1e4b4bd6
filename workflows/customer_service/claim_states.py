"""The state and promise phrases the claim checker reads (:mod:`workflows.customer_service.
claims`), English and Chinese (Simplified; Traditional is folded by OpenCC before matching).

Each table is ``(state, pattern)`` pairs tried in order: a match is blanked out so a later
pattern cannot read it again ("has not shipped" is never also "shipped"). ``not_X`` is a
negated state; ``unverified`` is an event of an order, parcel or refund in no state listed
before it, and is read per clause by the checker.
"""

from __future__ import annotations

import re

#: State phrases, tried in order; a match is blanked out so a later pattern cannot read it
#: again ("has not shipped" is never also "shipped"). ``not_X`` is a negated state.
_EN_NEGATION = r"(?:not|never|hasn't|haven't|hadn't|isn't|wasn't|aren't|weren't|didn't|won't)"
_EN_WORDS: dict[str, str] = {
    "shipped": r"shipped|dispatched|sent out",
    "delivered": r"delivered|arrived",
    "cancelled": r"cancell?ed",
    "refunded": r"refunded",
    "approved": r"approved",
}
#: An arrival promised ("will arrive", 很快就会送到): the state check lets only an order on its
#: way be promised one, but it is a prediction, never a restated fact (:data:`ARRIVALS`).
_EN_ARRIVAL = (
    r"\b(?:(?:will|should|shall|is going to|'ll|would)\s+(?:arrive|reach you|be delivered|"
    r"get to you|be with you|be at your door)|(?:expect|receive|get) (?:it|them|your "
    r"(?:order|parcel|package|items?|shipment))\b[^.!?]{0,30}\b(?:today|tomorrow|soon|by|"
    r"within|next|this))\b"
)
_ZH_ARRIVAL = (
    r"(?:今天|明天|后天|很快|即将|马上|预计|就能|就会|将|会)[^。！？，,]{0,6}?"
    r"(?:送达|送到|到达|到货|签收|收到|到)"
)
#: The arrival patterns, which the unbacked and allow-list checks never read as a fact.
ARRIVALS = frozenset({_EN_ARRIVAL, _ZH_ARRIVAL})
_EN_STATES: tuple[tuple[str, str], ...] = (
    (
        "declined",
        r"\b(?:declined|rejected|denied|refused|not (?:be )?possible|not eligible|ineligible|"
        r"(?:not|isn't|aren't|non-)\s*refundable|"
        r"(?:cannot|can't|can not|could not|couldn't|unable to|not able to|did not|didn't|"
        r"will not|won't|failed to|were not able to)\s+(?:be\s+)?(?:been\s+)?"
        r"(?:refund|cancel|change|process|approve|update|modify|handl|assist|proceed)\w*|"
        r"nothing (?:more|else|further) (?:(?:i|we) can do|can be done)|"
        # the agent refusing, whatever the verb: "I cannot do that", "we are unable to help"
        r"(?:i|we)(?: am| are|'m|'re)?\s+(?:cannot|can't|can not|could not|couldn't|"
        r"unable to|not able to))\b",
    ),
    *(
        (f"not_{state}", rf"\b{_EN_NEGATION}\s+(?:yet\s+)?(?:been\s+|be\s+)?(?:{words})\b")
        for state, words in _EN_WORDS.items()
    ),
    ("not_shipped", r"\byet to (?:be )?(?:ship|shipped|dispatched)\b"),
    # "can be refunded up to": an eligibility, read before the word "refunded"
    ("eligible", r"\b(?:can|could|may)\s+(?:still\s+)?be\s+refunded\b|\brefundable\b"),
    ("not_lost", rf"\b{_EN_NEGATION}\s+(?:been\s+|be\s+)?(?:lost|missing|stolen)\b"),
    # events that say a state without its word; "lost" and "returned" are states the store
    # never holds, so such a claim is always dropped
    ("lost", r"\b(?:is|was|has been|got|went|are|were|have been)\s+(?:lost|missing|stolen)\b"),
    ("returned", r"\b(?:returned|sent back|shipped back) to (?:the )?(?:sender|us|our \w+)\b"),
    (
        "refunded",
        r"\b(?:refund (?:has been|was|is|is being) (?:approved|issued|processed|completed|sent)|"
        r"(?:issued|processed|approved|sent) (?:a|the|your) refund|refund (?:has )?(?:gone|went) "
        r"through|money (?:is |has been |was )?(?:back|returned|sent back|credited)|"
        r"(?:sent|paid|transferred|returned|credited|put) (?:\w+ )?money back|credited|"
        r"reimbursed|(?:get|receive) (?:your |the )?(?:money|funds) back)\b",
    ),
    (
        "shipped",
        r"\b(?:left (?:our|the) (?:warehouse|depot|facility|store|hub)|(?:picked|collected) "
        r"(?:it |them )?up|collected (?:it |them )?(?:by|from|an?\b)|handed (?:it |them )?"
        r"(?:over )?to (?:the )?(?:courier|carrier)|(?:was|were|has been|have been) "
        r"(?:mailed|posted|sent)|(?:packed|labell?ed) and (?:packed|labell?ed|sent)|labell?ed)\b",
    ),
    ("in_transit", r"\b(?:on (?:its|the|their) way|in transit|en route|out for delivery)\b"),
    # an arrival promised: only an order on its way may be promised one
    ("in_transit", _EN_ARRIVAL),
    ("processing", r"\b(?:is|are|still)\s+(?:being\s+)?(?:processed|prepared|processing)\b"),
    ("delivered", r"\b(?:is|was|has been|have been)\s+(?:completed?|fulfilled|finished)\b"),
    ("cancelled", r"\bno longer (?:active|valid|open)\b|\bvoided\b"),
    *((state, rf"\b(?:{words})\b") for state, words in _EN_WORDS.items()),
    ("eligible", r"\beligible\b"),
    (
        # any other event in the life of an order, parcel or refund (was closed, got
        # packed...): the checker cannot verify it, so it is not shown
        "unverified",
        r"\b(?:orders?|parcels?|packages?|shipments?|items?|refunds?|money|payments?|it|they)"
        r"\b[^.!?]{0,30}?\b(?:has|have|had|was|were|got|is now|are now)\s+(?:just\s+|already\s+)?"
        r"(?:been\s+)?(?!placed\b|received\b|noted\b)[a-z]+ed\b",
    ),
)
_ZH_STATES: tuple[tuple[str, str], ...] = (
    ("declined", r"被拒绝|已拒绝|拒绝了|未批准|未获批准?|不予|不符合|不可以退|"
                 # 无法为您办理, 这个订单我在这里无法进一步处理
                 r"(?:无法|不能|未能|没能|没有办法|没办法|不可以)(?:在这里|在此|这边|再|进一步|继续|"
                 r"为您|帮您|给您)*(?:办理|退款|取消|修改|更改|处理|操作|协助)|"
                 r"(?:我|我们)(?:在这里|在此|这边|这里)?(?:无法|不能|没办法|没有办法|未能)"),
    ("not_shipped", r"(?:未|尚未|还没有?|还未|没有)(?:发货|发出|寄出)"),
    ("not_delivered", r"(?:未|尚未|还没有?|还未|没有)(?:送达|签收|到达|收到)"),
    ("not_cancelled", r"(?:未|尚未|还没有?|没有)取消"),
    ("not_refunded", r"(?:未|尚未|还没有?|没有)退款"),
    ("not_lost", r"(?:未|没有?|不会|并未)(?:丢失|遗失|丢件|丢|被盗)"),
    # events that say a state without its word (已给您退了, 已出库, 明天就能到); 丢失 and 退回
    # 仓库 are states the store never holds, so such a claim is always dropped
    ("lost", r"丢失|遗失|丢件|丢了|被盗"),
    ("returned", r"(?:退回|返回|寄回)(?:给)?(?:仓库|发件人|寄件人|卖家|商家)|退件"),
    ("refunded", r"已退款|已经退款|退款已(?:批准|完成|处理|到账|发放|通过)|已为您退款|退款成功|"
                 r"(?:已经?|刚刚?)[^。！？，,]{0,8}?(?:退款|退回|退还|返还|退钱|退给|退到|退了|打到|"
                 r"原路返回)|(?:退款|款项|钱款?|货款)[^。！？，,]{0,6}?(?:已经?|成功)[^。！？，,]{0,4}?"
                 r"(?:退|返|到账|发放|打|转)"),
    ("shipped", r"已发货|已经发货|已发出|已寄出|已经发出|"
                r"(?:已经?|刚刚?)[^。！？，,]{0,6}?(?:发货|发出|寄出|寄送|送出|出货|出库|发走|揽收|揽件|"
                r"取件|取走|交给快递|交由快递)"),
    ("delivered", r"已送达|已签收|已到达|已经送达|已经签收|已妥投|"
                  r"(?:订单|交易|包裹)[^。！？，,]{0,4}?(?:已经?)?(?:完成|完结)|已经?(?:完成|完结)(?=[。！？]|$)"),
    ("in_transit", r"运输中|在途|正在配送|派送中|配送中|在路上|正在运送|运送途中"),
    # an arrival promised: only an order on its way may be promised one
    ("in_transit", _ZH_ARRIVAL),
    ("processing", r"处理中|正在处理|备货中|待发货"),
    ("cancelled", r"已取消|已经取消|取消成功|已被取消"),
    ("approved", r"已批准|已通过|批准了|已同意|审核通过"),
    ("eligible", r"符合退款条件|(?<!不)可以?退款|(?<!不)可退"),
    # any other event in the life of an order, parcel or refund (订单已经处理好了): the
    # checker cannot verify it, so it is not shown
    ("unverified", r"(?:订单|包裹|快递|货物?|货品|商品|退款|款项|钱款?|货款|运单|物流)"
                   r"[^。！？，,]{0,10}?(?:已经?|刚刚?)|"
                   r"(?:已经?)[^。！？，,]{0,6}?(?:订单|包裹|快递|货|退款|款项|钱)"),
)  # fmt: skip
#: Promises tried before the states: ``follow_up`` (a person or we will act later, or a person
#: can: look into, get back, contact, confirm by email, call, escalate, "a colleague can look
#: at other options with you", tester7 F13) needs a handoff or ticket this
#: turn; ``no_charge`` (nothing more will be charged) needs a write done this turn.
_EN_PROMISES: tuple[tuple[str, str], ...] = (
    (
        "no_charge",
        r"\b(?:nothing (?:more|else|further) will be (?:charged|taken|debited|billed)|"
        r"(?:will not|won't|will never) be (?:charged|billed|debited)|"
        r"no (?:more|further|other) (?:charges?|payments?) will(?: be (?:taken|made|charged|"
        r"debited|collected|applied))?)\b",
    ),
    (
        "follow_up",
        r"\b(?:(?:colleague|agent|specialist|team|someone|somebody|person|representative|staff|"
        r"manager|supervisor|support)s?\b[^.!?]{0,40}?\b(?:will|shall|'ll|is going to|are "
        r"going to|can|could|may|(?:is|are) (?:able|available|happy|here) to)|"
        r"(?:we|i)(?:'ll|'m going to|'re going to|\s+will|\s+shall|\s+am going to|"
        r"\s+are going to)|(?:get|getting) back to you|be in touch|reach(?:ing)? out to you|"
        r"follow(?:ing)? up|escalat\w+|confirm\w*[^.!?]{0,30}\b(?:by|via) (?:e-?mail|phone|sms))\b",
    ),
)
_ZH_PROMISES: tuple[tuple[str, str], ...] = (
    (
        "no_charge",
        r"不会(?:再|继续)?(?:(?:产生|有)(?:任何)?费用|扣费|扣款|收费|扣钱)|"
        r"不再(?:产生费用|扣费|扣款|收费)",
    ),
    (
        "follow_up",
        r"(?:同事|专员|客服|人工|团队|专人|工作人员|有人)[^。！？]{0,12}?(?:会|将|稍后|尽快|可以|能)|"
        r"(?:我们|我)(?:会|将|稍后|随后|尽快)|稍后(?:回复|联系|答复|通知)|"
        r"(?:联系|回复|回电|致电|通知)您|(?:邮件|短信|电话)(?:确认|通知|联系)|跟进|升级处理",
    ),
)
EN_STATE_RES = tuple((s, re.compile(p, re.I)) for s, p in _EN_PROMISES + _EN_STATES)
ZH_STATE_RES = tuple((s, re.compile(p)) for s, p in _ZH_PROMISES + _ZH_STATES)
