"""How much of an order the customer asks to have refunded, read from their own words.

A refund is offered for the whole amount left only when the message names no part of it and
no amount at all. An ask for part of it is offered for exactly the amount written (to the cent,
:class:`~decimal.Decimal`), or asked back, so a "yes" never moves more, or other, money than
was asked for (tester5: "refund USD 10 of ORD-…" was offered as the whole USD 139.97; tester7
F8/F9: "one dollar", "50c", 五毛钱 were offered as the whole order, "USD 1.234,56" as USD 1.00):

* one amount with its currency is the ask: digits ("USD 10", "$10.50", "$.50", "1,204.50 EUR",
  "50c", "10 cents"), number words up to 999,999 ("one dollar", "a buck", "twenty-five
  dollars", "fifty cents") and Chinese amounts (十块钱, 两块五, 五毛钱, 一百二十元, 3元5角);
* an amount that is written but cannot be read with certainty is asked back
  (:attr:`RefundAsk.unclear`): a European or unknown separator ("1.234,56", "1,5"), more than
  two decimals, "1k", a range or a hedge ("USD 10-20", "about $10", "10ish", 十多块, 20元左右),
  parentheses round it, colloquial Chinese (一百二 = 102 or 120?), two different amounts, a
  currency word left over that no amount was read from ("a couple of dollars", "$ten");
* a part named without an amount ("half", "the shipping fee", "20%", 一半, 运费) is asked back;
* an amount that is a side remark is asked back (tester10 M): beside "in full"/全额, or in a
  clause that asks no money back ("Please refund ORD-…; my bank charged USD 3", "in full plus
  USD 20 compensation", 请退款…，我付了200元);
* a negative or zero amount ("USD -10", "-$10", "minus 10 dollars", -20元, "$0") is refused
  in one line (:attr:`RefundAsk.why` ``not_positive``).

Hand-written patterns, like :mod:`workflows.customer_service.asks`: this decides an amount of
money, so code that a test can pin decides it, never the model. Number-word libraries
(word2number, cn2an) were not used: they read leniently ("ten five" → 15, skip unknown words),
and here any doubt must be asked back, not read.
"""

from __future__ import annotations

import itertools
import re
import unicodedata
from dataclasses import dataclass
from decimal import Context, Decimal, localcontext

from orchestrator.textnorm import to_simplified
from workflows.customer_service.ask_marks import ITEM_PART

_DOLLARS = frozenset({"USD", "CAD", "AUD", "HKD", "SGD", "NZD", "TWD"})
#: Currency words and signs, and the order currencies each may name. ``$`` and "dollar" fit
#: every dollar currency; ``¥`` fits the yuan and the yen; cents fit dollars and euros. The
#: yuan's 元/块 are read by the Chinese grammar (:data:`_CN_MONEY`) only.
_CURRENCIES: tuple[tuple[str, frozenset[str]], ...] = (
    (r"us\$|usd|美元|美金", frozenset({"USD"})),
    (r"hk\$|hkd|港币|港元", frozenset({"HKD"})),
    (r"c\$|cad|加元", frozenset({"CAD"})),
    (r"a\$|aud|澳元", frozenset({"AUD"})),
    (r"\$|dollars?|bucks?", _DOLLARS),
    (r"cny|rmb|yuan|人民币", frozenset({"CNY"})),
    (r"¥|jpy|yen|日元", frozenset({"CNY", "JPY"})),
    (r"eur|€|euros?|欧元", frozenset({"EUR"})),
    (r"gbp|£|pounds?|quid|英镑", frozenset({"GBP"})),
    (r"cents?|¢|c", _DOLLARS | {"EUR"}),
)
_SIGN = "|".join(f"(?:{pattern})" for pattern, _ in _CURRENCIES[:-1])
#: A number as written, read broadly (a sign, any separators, a "k"); :func:`_decimal` then
#: accepts only the unambiguous forms, so "1.234,56" or "1k" is asked back, never misread.
_NUMISH = r"(?:[-−+]\s?)?(?:\d[\d.,]*\d|\d|\.\d+)(?:\s?[km](?![a-z]))?"
_PLAIN = re.compile(r"(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d{1,2})?|\.\d{1,2}")
_MONEY = re.compile(
    rf"(?P<before>{_SIGN})\s?(?P<n1>{_NUMISH})|"
    rf"(?<![\d.])(?P<n2>{_NUMISH})\s?(?P<after>{_SIGN}|cents?\b|c\b|¢)(?![a-z])"
)
_ONES = "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen "
_ONES += "fifteen sixteen seventeen eighteen nineteen"
_TENS = "twenty thirty forty fifty sixty seventy eighty ninety"
_WORD_VALUES = {w: i for i, w in enumerate(_ONES.split())} | {
    w: 20 + 10 * i for i, w in enumerate(_TENS.split())
}
_WORD_VALUES |= {"a": 1, "an": 1}
_U = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_B100 = (
    rf"(?:(?:{_TENS.replace(' ', '|')})(?:[\s-]{_U}\b)?|"
    rf"(?:{'|'.join(reversed(_ONES.split()))}))"
)
_B1000 = rf"(?:(?:{_U}|an?)\s+hundred(?:\s+(?:and\s+)?{_B100})?|{_B100}|an?)"
_WORDS = rf"(?:{_B1000}\s+thousand(?:\s+(?:and\s+)?{_B1000})?|{_B1000})"
_WORD_MONEY = re.compile(
    rf"\b(?P<w>{_WORDS})(?:\s+|-)(?P<after>dollars?|bucks?|cents?|euros?|pounds?|quid|yuan|"
    r"usd|eur|gbp|cny|rmb|hkd|cad|aud)\b"
)
_CN_NUM = r"[零〇一二两三四五六七八九十百千万]+"
_CN_DIGIT = r"[零〇一二两三四五六七八九]|\d"
#: 十块钱, 两块五, 3元5角, 五毛钱: yuan, then at most one jiao and one fen digit, before a money
#: ending (钱, 就行, 吧, a full stop…): 一块手表 is one watch, 十块一个 is asked back.
_CN_END = r"(?=钱|[就吧呢啊呀嘛哦好行可即够了给的左上以多]|[\s\W]|$)"
_CN_MONEY = re.compile(
    rf"(?P<y>{_CN_NUM}|{_NUMISH})\s?(?:元|块)"
    rf"(?:(?P<j>{_CN_DIGIT})(?:毛|角)?(?:(?P<f>{_CN_DIGIT})分?)?{_CN_END})?(?:钱)?{_CN_END}|"
    rf"(?P<j2>{_CN_DIGIT})\s?(?:毛|角)(?:(?P<f2>{_CN_DIGIT})分?)?(?:钱)?{_CN_END}"
)
#: Words before a bare 十块 that make it money: 退十块, 赔我五块, 只要两块.
_CN_ASK = re.compile(r"[退赔补返给要共是只]")
_CN_VALUES = {c: i for i, c in enumerate("零一二三四五六七八九")} | {"〇": 0, "两": 2}
#: Next to an amount, what makes it not one exact amount: a range, a hedge, a fraction.
_UNSURE_BEFORE = re.compile(
    r"(?:\d\s*(?:[-–~]|to|or|and|至|到|或)\s*|[~≈]\s*|\b(?:about|around|approx\w*|roughly|"
    r"nearly|almost|at least|at most|up to|over|under|more than|less than|maybe|"
    # a cap is no amount (cs9 c): "max $20", "no more than $20", "capped at $20", 不超过20元
    r"max(?:imum)?[.:]?|no more than|not more than|not over|not exceeding|capped at|"
    r"(?:a )?(?:cap|limit|ceiling) of|limited to|tops|"
    r"(?<!'d )(?<!would )like|"
    r"half|quarter|between|some|few|couple)\s+|大概|大约|约|差不多|至少|最多|不到|超过|将近|或|一半|"
    r"(?:至多|最多|最高|顶多|不超过|不多于|不高于|上限|封顶)[退给赔要只款]{0,2})$"
)
_UNSURE_AFTER = re.compile(
    r"^(?:[a-z0-9-]|\s?[.,][^\s\u3400-\u9fff]|[\s.,:;/]*\S*\d|\s*(?:[-–~]|to|or|至|到|或)\s*[\d$¥€£零一二两三四五六七八九十]|"
    r"\s*-?(?:ish|or so|or more|or less|each|apiece|per|a piece|max|maximum|min|tops|at most|"
    r"at the most|or below|or under|or lower|limit|cap)\b|"
    # another number just after it ("$1. k 0", "$1 - k0"): which one is meant? asked back
    r"[^\d\n]{0,8}\d|"
    rf"\s+(?:and\s+)?(?:{_WORDS}\b|\d)|\s*(?:左右|上下|以上|以下|以内|多|几|余|来|每|封顶|为限|"
    r"上限|最多))"
)
#: Just before an amount, what makes it the tail of a bigger number (tester11 A): "1e30
#: dollars", "10^30 dollars", "10**30 USD" are asked back, never read as 30.
_POWER_BEFORE = re.compile(r"(?:\d\.?\s?[e×x*]|\^|\*\*)\s?$")
_NEGATIVE_BEFORE = re.compile(r"(?:(?<![\w-])[-−]|\bminus\s+|\bnegative\s+|负\s?)$")
#: A currency word or sign left over once every amount was read: an amount was meant.
_LEFT_OVER = re.compile(
    r"[$¥€£¢]|\b(?:usd|hkd|cad|aud|cny|rmb|jpy|eur|gbp|sgd|nzd|dollars?|bucks?|cents?|yuan|"
    r"yen|euros?|quid)\b|美元|美金|欧元|英镑|港币|港元|日元|人民币|澳元|加元|块钱|毛钱|"
    r"[\d零〇一二两三四五六七八九十百千万亿几多余来]\s?(?:元|块|毛|角|分钱|刀)"
)
#: A part of the order named in words, or a number with no currency after the refund word.
_PART = re.compile(
    r"\b(?:half|partial(?:ly)?|part of|portion|some of (?:it|the)|"
    r"(?:one|two|three|some) of (?:the|my|these|those) (?:items?|things?|products?|pieces?)|"
    r"one item|the (?:broken|damaged|missing|wrong|faulty) (?:one|item|part|piece)|"
    r"(?:shipping|delivery) (?:fees?|costs?|charges?)|postage|the difference|price difference|"
    r"the tax(?:es)?|(?:refund|reimburse)\w*\s+(?:me\s+)?(?:\d|[.,]\d|-\d|"
    rf"(?!an?\b){_WORDS}\b)|\d+\s?%|per ?cent)(?![a-z])|"
    r"一半|部分|其中|一件|运费|邮费|差价|税费|只退|退一点|退款?\s?[-−]?(?:\d|负|"
    r"[零〇一二两三四五六七八九]?[十百千万]|[零〇一二两三四五六七八九]{2})|"
    r"\d+\s?%|百分之",
)
_DATES = re.compile(
    r"(?<![\d.,$¥€£])(?:\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}:\d{2}|\d+\s?[年月日号])(?![\d.,]?\d)"
)


@dataclass(frozen=True)
class RefundAsk:
    """The refund amount a message asks for.

    Attributes:
        cents: The amount in minor units (cents), when one amount was written and read exactly.
        currencies: The order currencies that amount may be in (``{"USD", "CAD", …}`` for
            ``$``); empty with no amount.
        unclear: No single exact positive amount can be read, though a part or an amount was
            named: ask back (:attr:`question` says with which text).
        why: ``"not_positive"`` for a negative or zero amount, else ``""``.
    """

    cents: int | None = None
    currencies: frozenset[str] = frozenset()
    unclear: bool = False
    why: str = ""

    def fits(self, currency: str) -> bool:
        """Whether the amount can be in the order's ``currency`` (``USD``)."""
        return currency.upper() in self.currencies

    @property
    def question(self) -> str:
        """The clarification key to ask back with (``confirm.text``): ``refund_amount``, or
        ``refund_not_positive`` for a negative or zero amount."""
        return "refund_not_positive" if self.why == "not_positive" else "refund_amount"


@dataclass(frozen=True)
class _Mention:
    value: Decimal | None  # None: written but not readable with certainty
    currencies: frozenset[str]
    start: int
    end: int


#: The most digits an amount may have to be read (tester11 A: 30 nines crashed the exact
#: cents check). Up to this many, the amount is read exactly and refused as more than what is
#: left; more is asked back. Far above any order, far below :data:`_EXACT`'s precision.
MAX_DIGITS = 40
#: The arithmetic of :func:`refund_ask`: exact for any amount of :data:`MAX_DIGITS` digits
#: (with cents), and every Decimal error trapped as one (never a half-read amount).
_EXACT = Context(prec=2 * MAX_DIGITS)


def _decimal(number: str) -> Decimal | None:
    """``"1,204.50"`` → ``Decimal("1204.50")``; a sign, "1.234,56", "1,5", "10.999", "1k",
    "1e30" or more than :data:`MAX_DIGITS` digits → None (the caller asks back or refuses)."""
    number = number.replace(" ", "")
    if not _PLAIN.fullmatch(number) or sum(c.isdigit() for c in number) > MAX_DIGITS:
        return None
    return Decimal(number.replace(",", ""))


def _signed(number: str) -> Decimal | None:
    """Like :func:`_decimal`, with a leading ``-`` kept as a negative value ("-20" → -20);
    a leading ``+`` → None."""
    sign = number[:1] if number[:1] in ("-", "−", "+") else ""
    digits = number[len(sign) :]
    digits = digits[1:] if digits[:1].isspace() else digits  # one space after the sign
    value = None if sign == "+" else _decimal(digits)
    return -value if value is not None and sign else value


def _currencies(sign: str) -> frozenset[str]:
    return next(c for pattern, c in _CURRENCIES if re.fullmatch(pattern, sign))


def _words(words: str) -> int:
    """English number words already matched by :data:`_WORDS` → their value."""
    total = current = 0
    for word in re.findall(r"[a-z]+", words):
        if word == "hundred":
            current *= 100
        elif word == "thousand":
            total, current = total + current * 1000, 0
        elif word != "and":
            current += _WORD_VALUES[word]
    return total + current


def _cn_section(text: str) -> int | None:
    """一百零二 → 102, 十五 → 15, 两千 → 2000; None for what is not one certain number
    (二三十, colloquial 一百二)."""
    total, digit, last, zero = 0, None, 10_000, False
    for char in text:
        if char in _CN_VALUES:
            if digit:  # two digits in a row: 二三十
                return None
            digit, zero = _CN_VALUES[char], zero or char in "零〇"
        else:
            unit = {"十": 10, "百": 100, "千": 1000}[char]
            if unit >= last or (digit is None and (unit != 10 or total)):
                return None
            total, digit, last = total + (1 if digit is None else digit) * unit, None, unit
    if digit and 10 < last < 10_000 and not zero:  # 一百二: 102 or 120?
        return None
    return total + (digit or 0)


def _cn_int(text: str) -> Decimal | None:
    """A Chinese numeral (or digits) → its value; None when unsure."""
    if re.search(r"\d", text):
        return _decimal(text)
    if text.count("万") > 1:  # 万万, 一万万 (ui11: 万 twice raised KeyError below)
        return None
    high, _, low = text.rpartition("万") if "万" in text else ("", "", text)
    parts = [_cn_section(high) if high else 0, _cn_section(low) if low else 0]
    if ("万" in text and not high) or None in parts:
        return None
    return Decimal(parts[0] or 0) * 10_000 + Decimal(parts[1] or 0)


def _cn_value(match: re.Match[str]) -> Decimal | None:
    yuan: Decimal | None
    if match["j2"] is not None:
        yuan, jiao, fen = Decimal(0), match["j2"], match["f2"]
    else:
        yuan = _signed(match["y"]) if re.search(r"\d", match["y"]) else _cn_int(match["y"])
        jiao, fen = match["j"], match["f"]
    if yuan is None or ((jiao or fen) and yuan != yuan.to_integral_value()):
        return None
    jiao_value, fen_value = (_cn_int(d) if d else Decimal(0) for d in (jiao, fen))
    if jiao_value is None or fen_value is None:
        return None
    return yuan + jiao_value / 10 + fen_value / 100


def _mentions(text: str) -> tuple[list[_Mention], str]:
    """Every amount with a currency in ``text``, and ``text`` with them blanked out."""
    found: list[_Mention] = []
    for pattern in (_CN_MONEY, _WORD_MONEY, _MONEY):
        for m in pattern.finditer(text):
            if pattern is _CN_MONEY:
                value, currencies = _cn_value(m), frozenset({"CNY"})
                if re.fullmatch(r"[^元钱毛角]*块\s*", m[0]) and not _CN_ASK.search(
                    text[max(0, m.start() - 4) : m.start()]
                ):
                    value = None  # 碎了一块: a piece, or one yuan? asked back
            elif pattern is _WORD_MONEY:
                value, currencies = Decimal(_words(m["w"])), _currencies(m["after"])
            else:
                sign, number = m["before"] or m["after"], m["n1"] or m["n2"]
                value, currencies = _signed(number), _currencies(sign)
            if (
                value is not None
                and pattern is not _CN_MONEY
                and re.fullmatch(r"cents?|¢|c", (m.groupdict().get("after") or ""))
            ):
                value /= 100
            found.append(_Mention(value, currencies, m.start(), m.end()))
        text = pattern.sub(lambda m: " " * len(m[0]), text)
    return found, text


def _normalise(message: str) -> str:
    text = unicodedata.normalize("NFKC", to_simplified(message)).lower()
    text = re.sub(r"[\u200b-\u200f\u2060\ufeff\u00ad]", "", text)
    text = re.sub(r"[\u2212\u2010\u2011]", "-", text)
    # 退款minus 10 dollars, 请退款-$10: an English word or sign glued to Chinese is a word
    text = re.sub(r"(?<=[\u3400-\u9fff])(?=[a-z$¥€£(+-])|(?<=[a-z])(?=[\u3400-\u9fff])", " ", text)
    text = re.sub(r"ord[-\s_]?\d+", lambda m: " " * len(m[0]), text)  # an id is no amount
    return _DATES.sub(lambda m: " " * len(m[0]), text)


#: "In full" and its kin: with an amount as well, two amounts (tester10 M, cs10).
_WHOLE = re.compile(
    r"\b(?:in full|full refund|refund in full|fully|whole|entire|all of it|the full amount|"
    r"all my money)\b|全额|全部|全款",
)
#: Where a clause ends (not a decimal point).
_CLAUSE_END = re.compile(
    r"[;,!?\n，；。！？、]|\.(?!\d)|\b(?:and|but|also|because|since|as)\b|因为|而且|并且|但是"
)
#: What asks for money back, in the clause of the amount (an allow-list: else the amount is a
#: side remark, "my bank charged USD 3", "I paid USD 100 for it").
_BACK = re.compile(r"\b(?:refund\w*|reimburs\w*|back|return me)\b|退|返还|还我|还给我")


def _aside(text: str, mentions: list[_Mention]) -> bool:
    """Whether an amount of ``mentions`` is not the refund's own (tester10 M): the message
    also says "in full"/全额, or an amount's clause asks no money back (an allow-list), or
    another clause asks for money back with no amount (the whole order besides: 退款ORD-…，
    运费10美元也要退). Then the amount is asked back, never offered ("Refund ORD-… in full
    plus USD 20 compensation", "Please refund ORD-…; my bank charged USD 3")."""
    if not mentions:
        return False
    if _WHOLE.search(text):
        return True
    cuts = [0, *(c.end() for c in _CLAUSE_END.finditer(text)), len(text) + 1]
    for start, stop in itertools.pairwise(cuts):
        has_amount = any(start <= m.start < stop for m in mentions)
        if has_amount != bool(_BACK.search(text, start, stop)):
            return True
    return False


def refund_ask(message: str) -> RefundAsk | None:
    """The part of the order ``message`` asks to have refunded, or None for the whole of it.

    Example:
        >>> refund_ask("Please refund ORD-100042, it arrived broken") is None
        True
        >>> refund_ask("refund USD 10 of ORD-100042").cents
        1000
        >>> refund_ask("ORD-100042 退五毛钱").cents
        50
        >>> refund_ask("refund USD 1.234,56 of ORD-100042").unclear
        True
        >>> refund_ask("refund USD -10 of ORD-100042").why
        'not_positive'
    """
    with localcontext(_EXACT):
        return _refund_ask(_normalise(message), message)


def named_amount(message: str) -> tuple[RefundAsk | None, str]:
    """The amount ``message`` names read as :func:`refund_ask` reads one, but with no refund
    word needed in its clause ("make it USD 25", 改成13美元: an amount alone, said while a
    refund's question waits), and the normalised text with every amount blanked out (what else
    the message says). ``(None, text)`` when it names no amount.

    Example:
        >>> named_amount("actually make it USD 25")[0].cents
        2500
    """
    with localcontext(_EXACT):
        text = _normalise(message)
        mentions, rest = _mentions(text)
        return (_refund_ask(text, message, alone=True) if mentions else None), rest


def _refund_ask(text: str, message: str, *, alone: bool = False) -> RefundAsk | None:
    """:func:`refund_ask` of the normalised ``text`` (``message`` as written); ``alone``: an
    amount needs no refund word in its clause (:func:`named_amount`)."""
    mentions, rest = _mentions(text)
    unsure = bool(_LEFT_OVER.search(rest))
    for m in mentions:
        before, after = text[max(0, m.start - 16) : m.start], text[m.end : m.end + 16]
        if _POWER_BEFORE.search(before):
            return RefundAsk(unclear=True)
        if _NEGATIVE_BEFORE.search(before) or (m.value is not None and m.value <= 0):
            return RefundAsk(unclear=True, why="not_positive")
        wrapped = re.search(r"[(（]\s*$", before) and re.match(r"\s*[)）]", after)
        unsure = unsure or m.value is None or bool(wrapped)
        unsure = unsure or bool(_UNSURE_BEFORE.search(before) or _UNSURE_AFTER.match(after))
    values = {m.value for m in mentions}
    if unsure or len(values) > 1 or (not alone and _aside(text, mentions)):
        return RefundAsk(unclear=True)
    if mentions:
        value = values.pop()
        currencies = frozenset.intersection(*(m.currencies for m in mentions))
        if value is None or not currencies or value != value.quantize(Decimal("0.01")):
            return RefundAsk(unclear=True)  # "$10 (10 €)", or half a cent (5毛5分5)
        return RefundAsk(cents=int(value * 100), currencies=currencies)
    if _PART.search(text) or ITEM_PART.search(to_simplified(message)):  # "the lamp in ORD-…"
        return RefundAsk(unclear=True)
    return None
