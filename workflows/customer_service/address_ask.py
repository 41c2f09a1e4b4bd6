"""What is said after a new address that is not part of it (tester8 F5).

:func:`~workflows.customer_service.asks.extract_address` finds where the new address starts
and where its sentence ends; :func:`address_end` reads that span for what ends the address
or spoils the ask:

- a condition (``unless it already left``, ``if …``, ``as long as …``, 如果, 除非, 要是…的话):
  the change waits on something, so it is asked back, never offered;
- an alternative (``… or 11 Downing Street``, ``whichever is easier``, 或者, 还是): two
  addresses, so the customer is asked which one;
- contact details (``tel``, ``phone``, an e-mail, 电话, 手机, 联系人, a Chinese mobile
  number) or a reason (``because``, ``but``, 因为, 但是): the address ends before them;
- a place with no postal shape (``my mum's place``, 我妈家): refused, the full address asked;
- another request, an instruction, a time or other orders after it (``and tell the driver to
  leave it with the guards``, ``after it has shipped``, ``for future orders``, 然后告诉司机,
  发货以后, 以后的订单都): asked back, never stored as part of the address (tester9 F2).

The text is normalised (Traditional folded to Simplified, full-width to ASCII) and keeps its
case: a lower-case ``or`` is a conjunction, ``Portland OR 97201`` and ``Orchard Rd`` are not.
Home-made word lists because this is workflow logic on one field, not a parsing library's job.
"""

from __future__ import annotations

import difflib
import re

#: Why no address is read when the change waits on a condition (one clause, no period).
CONDITIONAL = (
    "the change of address waits on a condition; send the new address on its own, "
    "or ask first whether the order has shipped"
)
#: Why no address is read when two are given.
TWO_ADDRESSES = "two addresses were given; which one should it be? Send just that one"
#: Why no address is read when it names a place, not where it is.
NOT_POSTAL = "that names a place but not its street, number or postcode"
#: Why no address is read when more than an address follows the change.
MORE_THAN_ADDRESS = (
    "what follows the new address (an instruction, a time, other orders) is not part of it; "
    "send the new address on its own, and anything else in another message"
)
#: Why no address is read when the message goes on, after the address's sentence, with more
#: than thanks (cs10: "… LS1 4AB. Please leave it with the neighbour."): a note is never stored
#: with an address, and never dropped unsaid.
NOTE_AFTER = (
    "you added something after the new address (a delivery note or another request); an "
    "address change cannot carry a note, so nothing was stored. Send the new address on its "
    "own to change it, and ask a colleague about the note"
)
#: The reasons above in Chinese (for confirm.address_problem).
WHY_ZH = {
    NOTE_AFTER: "您在新地址后面还写了别的内容（送货备注或其他请求）；"
    "修改地址不能附带备注，所以没有保存任何内容。如需修改地址，请只发送新地址；备注的事请另外联系同事",
    CONDITIONAL: "修改地址附带了条件；请只发送新地址，或先问订单是否已发货",
    TWO_ADDRESSES: "给出了两个地址，请问是哪一个？请只发送那一个",
    NOT_POSTAL: "这只是一个地点，没有街道、门牌号或邮编",
    MORE_THAN_ADDRESS: "新地址后面还有别的内容（指示、时间或其他订单），不属于地址；"
    "请只发送新地址，其他事项另发消息",
}

#: Words that make the change wait on something ("if possible" is cut before as a courtesy).
_IF = "unless if provided providing assuming once when as.long.as so.long.as in.case only.when"
_CONDITION = re.compile(
    rf"\b(?:{'|'.join(_IF.split())})\b|如果|除非|要是|假如|的话|只要|万一", re.I
)
_COURTESY_IF = re.compile(r"[,\s]*\bif (?:possible|you can|you could|you don'?t mind)\b", re.I)
#: ``or`` in lower case (not before a US zip code), ``either``, ``whichever``, 或者, 还是.
_ALTERNATIVE = re.compile(
    r"\bor\b(?!\s*\d{5}\b)|\b(?:either|whichever|alternatively|otherwise)\b|或者|或是|还是|要么",
)
_CONTACT = re.compile(
    r"[,，;；\s]*(?:\b(?:tel|telephone|phone|mobile|cell|contact|e-?mail|call me|ring me|"
    r"text me|attn|because|cause|since|but|as i(?:'m| am)?)\b|\S+@\S+\.\w+|"
    r"电话|手机|联系人|联系方式|联络|收件人|邮箱|因为|但是|不过|可是|(?<!\d)1[3-9]\d{9}(?!\d))",
    re.I,
)
#: After an address: another request or an instruction ("and tell the driver…", "then",
#: "leave it with"), a time ("after it has shipped", "before Friday", "from now on") or other
#: orders ("for future orders"). English in lower case only (``Before St`` is a street).
_MORE = re.compile(
    r"\b(?:and|&)\s+(?:then\s+)?(?:please\s+|pls\s+|also\s+)?(?:tell|ask|leave|let|make|call|"
    r"ring|text|knock|drop|put|give|hand|change|cancel|refund|update|deliver|ship|send|notify|"
    r"keep|use|have|get|do|don't|also|please|pls|remember|mark|note)\b|"
    r"\b(?:then|after|afterwards|before|until|till|from now on|next time|by (?:the )?(?:time|"
    r"end|monday|tuesday|wednesday|thursday|friday|saturday|sunday|tomorrow|tonight))\b|"
    r"\b(?:tell|ask|let|have|get) (?:the|your|my) (?:driver|courier|carrier|delivery|postman|"
    r"mailman)|\bleave (?:it|them|the \w+) (?:with|at|by|in|on|outside)\b|"
    r"\bfor (?:all|every|future|upcoming|later|next|other|the other|my other|the rest)\b|"
    r"\b(?:default|permanent(?:ly)?|from now)\b|"
    r"然后|并且|并把|顺便|另外|还有|再帮|再把|也帮|告诉|通知|让(?:司机|快递|骑手|师傅)|"
    r"叫(?:司机|快递|骑手)|放(?:在|到)(?:门卫|前台|门口|快递柜|驿站|保安)|交给|"
    r"(?:发货|寄出|送达)(?:后|以后|之后|前|以前|之前)|以后|之后|以前|之前|下次|默认|"
    r"所有订单|其他订单|别的订单"
)
#: After an address (up to contact details), what is no part of one (tester9b F2): a
#: lower-case connector or instruction ("so my neighbour…", ", and please gift wrap it", "as
#: it's a gift", "deliver on Monday"; ``and`` before a capital stays: "Building and Garden"),
#: or, after a comma, a Chinese clause with a delivery time or instruction (，下周再寄,
#: ，到了给我打电话, ，送到后放管理室) or with no address part at all (号, 室, 路, a number…).
_NOT_ADDRESS = re.compile(
    r"\b(?:so|as)\s|\band\b(?!\s+[A-Z0-9])|\b(?:please|pls|kindly)\s+\w|"
    r"\b(?:deliver(?:ed|y|ies)?|gift|wrap(?:ped)?|neighbou?rs?|signs?|signed)\b|"
    r"\bring (?:twice|once|the|me|us|my|when)\b|\bcall (?:me|us|when|on|before|ahead|first)\b|"
    r"\bleave (?:it|them|at|with|by|outside|in|on)\b|"
    r"\bon (?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
)
#: A bracket at the end of the address, and what in one is an address part ("(A座)",
#: "(Building B)", "Flat 3 (rear)") rather than a note ("(ring twice)", "(side door)").
_LAST_BRACKET = re.compile(r"[(\[（【]([^)\]）】]*)[)\]）】]?\s*$")
_BRACKET_PART = re.compile(r"\d|[A-Z]|\b(?:floor|flat|unit|apt|suite|block|room|level)\b")
_ZH_CLAUSE = re.compile(r"[，,；;]\s*([^，,；;]*[\u4e00-\u9fff][^，,；;]*)")
_ZH_INSTRUCTION = re.compile(
    r"送|寄|放|打电话|到了|给我|周[一二三四五六日末]|星期|礼拜|下[周个]|明天|后天|今天|晚上|"
    r"上午|下午|麻烦|快点|尽快|礼物|包装|签收|代收|敲门|门铃"
)
_ZH_PART = re.compile(
    r"[号室楼层单元栋幢座区市省县路街道巷弄村镇乡州国院苑园城厦里坊\d]|中心|小区|台湾|香港|澳门"
)
_ZH_COURTESY = re.compile(r"^(?:谢谢|多谢|谢了|辛苦了|感谢)[!！。.]*$")


#: A lower-case word that may start a part of an address written with capitals ("5 Elm St,
#: apt 4, Boston", "12, rue Lepic"); any other lower-case part is no address part (tester10 E).
_LOWER_PART = re.compile(
    r"(?:apt|apartment|flat|unit|suite|ste|floor|fl|level|room|rm|block|building|bldg|c/o|"
    r"po|p\.o\.|box|no\.?|rue|via|calle|avenida|av|ave|chemin|strada|piso|bis)\b"
)
#: A dash standing as a word ("… 02110 — call me"): what follows is no address part.
_DASH = re.compile(r"\s[—–-]+(?:\s|$)")


def _lower_part(span: str) -> bool:
    """Whether ``span`` (an address written with a capital or a digit starting its first
    part) has a comma part that starts with a lower-case word not of an address (", for now",
    ", temporarily", ", my phone is …", ", the blue house", ", formerly 3 Pine St"), or a
    dash standing alone (cs10, tester10 E). An address typed all in lower case is not read so."""
    parts = [p.strip() for p in re.split(r"[,，]", span) if p.strip()]
    if _DASH.search(span.rstrip() + " "):
        return True
    if not any(p[0].isupper() for p in parts):
        return False  # "12 oak st, leeds ls1 4ab": the writer uses no capitals
    return any(p[0].islower() and not _LOWER_PART.match(p) for p in parts)


def _not_address(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (from the address to any contact details) holds a note in
    a bracket at its end or a clause that is not an address part (:data:`_NOT_ADDRESS`,
    :data:`_ZH_INSTRUCTION`, :data:`_ZH_PART`)."""
    span = text[start:end]
    last = _LAST_BRACKET.search(span)
    if last and (
        _ZH_INSTRUCTION.search(last.group(1))
        or (
            re.search(r"[a-z]+\s+[a-z]+", last.group(1)) and not _BRACKET_PART.search(last.group(1))
        )
    ):
        return True
    if _NOT_ADDRESS.search(span) or _lower_part(span):
        return True
    for clause in _ZH_CLAUSE.findall(span):
        clause = clause.strip()
        if _ZH_COURTESY.match(clause):
            continue
        if _ZH_INSTRUCTION.search(clause) or not _ZH_PART.search(clause):
            return True
    return False


#: What may follow the address's sentence in the same message: thanks, a goodbye, an ok, the
#: order's id, marks (an allow-list; anything else is a note or another ask: asked back).
_AFTER_OK = re.compile(
    r"(?:\s|[.!！。,，;；~:)?？]|\b(?:many |thanks? (?:a lot|so much|very much|in advance)|"
    r"thank you(?: (?:so|very) much| in advance)?|thanks|thx|ty|cheers|regards|best|"
    r"kind regards|bye|goodbye|ok(?:ay)?|great|please|pls|order|ord-\d{6})\b|"
    r"谢谢|多谢|谢了|感谢|辛苦了|辛苦|麻烦了|麻烦您了|麻烦你了|好的|拜拜|再见)*",
    re.I,
)


def note_after(text: str, end: int) -> str:
    """:data:`NOTE_AFTER` when ``text`` (normalised) goes on after ``end`` (where the new
    address's sentence ends) with more than thanks, a goodbye or the order id; else "".

    Example:
        >>> note_after("to 12 Oak St, Leeds LS1 4AB. Leave it with the neighbour.", 28) != ""
        True
        >>> note_after("to 12 Oak St, Leeds LS1 4AB. Thanks!", 28)
        ''
    """
    rest = text[end:]
    return "" if _AFTER_OK.fullmatch(rest) else NOTE_AFTER


#: A place told by whose it is (``my mum's place``, ``her office``, 我妈家): no postal address
#: unless a number follows.
_WHOSE = re.compile(r"(?:my|our|his|her|their|your|the same|the usual)\b|[我你他她]", re.I)


def address_end(text: str, start: int, end: int) -> tuple[int, str]:
    """Where the address in ``text[start:end]`` ends (an index in ``start..end``) and why no
    address is read ("" when one is): :data:`CONDITIONAL`, :data:`TWO_ADDRESSES` or
    :data:`NOT_POSTAL`. ``text`` is the normalised customer text, ``start:end`` the span
    from the new address to its sentence's end.

    Example:
        >>> address_end("to 5 Elm St, phone 555 0100", 3, 27)
        (11, '')
        >>> address_end("to 5 Elm St unless it left", 3, 26)[1] == CONDITIONAL
        True
    """
    courtesy = _COURTESY_IF.search(text, start, end)
    end = courtesy.start() if courtesy else end
    if _CONDITION.search(text, start, end):
        return end, CONDITIONAL
    if _ALTERNATIVE.search(text, start, end):
        return end, TWO_ADDRESSES
    contact = _CONTACT.search(text, start, end)
    if _MORE.search(text, start, end) or _not_address(
        text, start, contact.start() if contact else end
    ):
        return end, MORE_THAN_ADDRESS
    end = contact.start() if contact else end
    candidate = text[start:end].strip()
    if _WHOSE.match(candidate) and not re.search(r"\d", candidate):
        return end, NOT_POSTAL  # the street-and-number shape is asks._ADDRESS_SHAPE's check
    return end, ""


def trim(text: str, start: int, end: int, chars: str) -> tuple[int, int]:
    """``text[start:end]``'s bounds without ``chars`` at either end."""
    while start < end and text[start] in chars:
        start += 1
    while end > start and text[end - 1] in chars:
        end -= 1
    return start, end


def original_span(message: str, norm: str, start: int, end: int) -> str:
    """The part of ``message`` that became ``norm[start:end]`` under
    :func:`~workflows.customer_service.ask_marks.normalise` (the same offsets when normalising
    kept the length, else difflib's alignment of the two)."""
    if len(norm) == len(message):
        return message[start:end]
    ops = difflib.SequenceMatcher(None, norm, message, autojunk=False).get_opcodes()

    def where(pos: int, at_end: bool) -> int:
        for tag, i1, i2, j1, j2 in ops:
            if i1 <= pos < i2 or (at_end and pos == i2):
                if tag == "equal":
                    return j1 + pos - i1
                return j2 if at_end else j1
        return len(message)

    return message[where(start, False) : where(end, True)]
