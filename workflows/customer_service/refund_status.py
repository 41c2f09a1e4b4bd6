"""Questions about a refund the customer already has (English and Chinese): "has my money come
back yet?", "did you pay me back?", "any news on the money?", 退了多少钱？, 錢退回來了沒有.

:data:`MONEY_BACK` finds such a question when it does not say "refund" (with the word, the
gate's ``question`` / ``past`` readings already make it a read); :func:`asks_status` tells a
question about an existing refund (where it is, whether it went through, how much) from one
about whether a refund can be had ("can I get a refund?"). A status question is answered with
the store's refunds (id, amount, status, date), or plainly that none was made: never with the
refusal of a refund nobody asked for (closing6, "Refund status questions").

Hand-written patterns, as in the rest of the gate (:mod:`workflows.customer_service.asks`);
they see text after :func:`~workflows.customer_service.ask_marks.normalise`, lower-cased.
"""

from __future__ import annotations

import re

#: A question about money coming back, in words other than "refund".
MONEY_BACK = re.compile(
    r"\b(?:has|have|is|was|did|when|where|will)\b[^.?!]{0,12}?\b(?:my|the|our) (?:money|cash|"
    r"funds?|reimbursement)\b[^.?!]{0,30}?\b(?:back|returned|come|came|arriv\w*|"
    r"through|credited|refunded|received)\b|"
    r"\b(?:did|have|has|will|when will|were) (?:you|u|they|the (?:shop|store|company))\b"
    r"[^.?!]{0,12}?\b(?:pa(?:y|id)|give|gave|given|return\w*|send|sent|credit\w*|"
    r"put) (?:me |my money |the money |it )?back\b|"
    r"\b(?:any|what'?s the|an?) (?:news|update|word|progress)\b[^.?!]{0,20}?\b(?:money|cash|"
    r"funds?|reimbursement)\b|"
    r"\bwhere(?:'s| is| has)\b[^.?!]{0,15}?\b(?:my|the) (?:money|cash|funds)\b|"
    r"\bhow much (?:money )?(?:did|have|has|was|were) (?:you |i |they |we )?(?:\w+ ){0,2}?"
    r"(?:pa(?:y|id)|return\w*|credit\w*|give|gave|given|sent|get|got) (?:\w+ )?back\b|"
    r"退了多少|退(?:了|咗)(?:几多|多少)|退回(?:了)?多少|"
    r"(?:钱|款)[^，。？！,?!]{0,6}?(?:退回来|退回|回来|到账|到了|收到|退给我|还给我)"
    r"[^，。,]{0,3}?(?:了吗|吗|没|未|了没|么|嘛|冇|呢)|"
    r"(?:钱|款)(?:退|还)(?:了|咗)(?:吗|没|未|冇)|退(?:了|咗)(?:没有|没|未|吗|冇)|"
    r"(?:钱|款)(?:什么时候|几时)(?:到账|退|回来|到)|(?:钱|款)(?:有|有没有)(?:消息|进展|动静)",
    re.I,
)
#: Words that ask where an existing refund stands, whether it went through, or how much.
_STATUS = re.compile(
    r"\b(?:where(?:'s| is| are| has)|status|progress|news|update|heard|(?:go|gone|went|come|came|"
    r"been|paid|pay) (?:through|back)|processed|approved|issued|arrived|received|credited|"
    r"landed|yet|so far|how much (?:was|were|has|have|did|got|is|money))\b|"
    r"\b(?:did|have|has|was|were|is) (?:\w+ ){0,3}?(?:refund(?!able)\w*|paid|reimburs\w*|"
    r"credit\w*|money)\b|"
    r"到账|进度|退了多少|退(?:了|咗)(?:没|未|吗|冇|几多|多少)|成功了?(?:吗|没|未)|好了(?:没|吗|未)|"
    r"批(?:了|准了)|状态|回来了|收到(?:了)?(?:吗|没)|到了(?:吗|没|未)|(?:钱|款)|退款.{0,4}(?:呢|怎么样|如何)",
    re.I,
)
#: Words that ask whether a refund can be had: an eligibility question, not a status one.
_CAN_I = re.compile(
    r"\b(?:can i|could i|may i|am i|eligib\w*|entitled|would i|if|policy|policies|possible|"
    r"allowed|refundable|how do i|how can i|rules?|terms|conditions)\b|能不能|可不可以|能否|可以退|"
    r"能退|是否可以|政策|规定|规则|条款|条件|"
    r"如果|万一|假如|要是",
    re.I,
)


#: The customer says they want no refund ("I don't want my money back", "no refund needed",
#: 不用退款, 不要退钱): a question in the same message is about the order, never a refund.
_WAIVED = re.compile(
    r"\b(?:(?:do not|don'?t|dont|doesn'?t|not|no|never)\s+(?:\w+\s+){0,2}?(?:want|need|"
    r"asking for|after|looking for|requesting|interested in|seeking)\s+"
    r"(?:a\s+|my\s+|the\s+|any\s+)?(?:refund|money back|reimbursement)|"
    r"no need (?:for|to) (?:\w+ )?refund|no refund (?:is )?(?:needed|necessary|required|please|"
    r"for me|thanks)|not (?:about|for) (?:a |my )?refund)\b|"
    r"(?:不用|不要|不需要|不想|不必|无需|没想|不是要|不是想|不打算)(?:申请)?(?:退款|退钱|退货退款)",
    re.I,
)


def waives_refund(low: str) -> bool:
    """Whether ``low`` (normalised, lower-cased) says the customer wants no refund, so its
    question is about the order's status, not a refund (no verdict, no offer).

    Example:
        >>> waives_refund("i don't want my money back, where is ord-100200?")
        True
        >>> waives_refund("is my refund approved yet?")
        False
    """
    return bool(_WAIVED.search(low))


def asks_status(low: str) -> bool:
    """Whether ``low`` (normalised, lower-cased) asks about a refund that exists or not yet
    (where it is, whether it went through, how much), not whether one can be had.

    Example:
        >>> asks_status("has my money come back yet"), asks_status("can i get a refund?")
        (True, False)
    """
    return bool(MONEY_BACK.search(low) or _STATUS.search(low)) and not _CAN_I.search(low)
