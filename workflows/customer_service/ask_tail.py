"""What follows an ask: the sentences after the one that asks for a write must be of a kind
that goes with an ask, or the ask is in doubt.

The other marks of the gate (:mod:`workflows.customer_service.asks`,
:mod:`workflows.customer_service.ask_marks`) list the ways an ask is taken back, and a list
is never complete: "refund ORD-…. Wrong order, sorry!", "cancel ORD-…. Let me check with my
wife first.", "退款ORD-…。算啦" each take the ask back in words no list held. So this half
works the other way round. A later sentence is read as going with the ask only when it is one
of a few kinds that customers add to an ask:

* thanks, a greeting or a sign-off (``thanks!``, ``cheers, Tom``, 谢谢, 辛苦了);
* urgency (``asap please``, ``it's urgent``, 尽快, 急);
* what is wrong with the goods or the delivery (``it arrived broken``, ``the size is wrong``,
  ``never came``, 质量有问题, 发错了, 买错了), or how the customer feels about it
  (``very disappointed``, 太失望了);
* a detail of the order or the payment (another order id, ``I paid by card``, ``I ordered it
  last week``, 用支付宝付的);
* a question about the ask or the order (``how long will it take?``, ``where is ORD-…?``).

Anything else after the ask (``actually it works now``, ``my bad``, ``sike``, ``undo``,
``pause that``, 算啦, 到了) makes the ask unsure: no write is offered, and the reply says
what code can read and the words that ask for the write plainly. Failing this way costs a
customer one more message; failing the other way pays money nobody asked for.

Hand-written patterns, as in the rest of the gate: this decision moves money, so code that a
test can pin makes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

#: Where one sentence of what follows the ask ends: a full stop, ``!``, ``?``, ``;``, a line
#: break, an ellipsis or a dash between words (``refund ORD-… — ah, it just came``).
_SPLIT = re.compile(r"[.!?。！？;；\n]+|…+|\s[-–—]{1,2}\s|[–—]{1,2}")
#: Where a sentence of the gate ends: a full stop, ``!``, ``?`` or a line break (not the point
#: of a figure: ``$7.50``).
SENTENCE_MARK = r"[.!?。！？\n](?!\d)"
#: Where the sentence of the ask ends: as a sentence of the gate ends, or at a dash.
ASK_END = re.compile(SENTENCE_MARK + r"|\s[-–—]{1,2}\s|[–—]")
_SENTENCE_END = re.compile(SENTENCE_MARK)
#: A word that turns what follows into a change of course, even in a sentence of a kind that
#: goes with an ask ("thanks, actually I'll keep it", "it came after all").
_TURN = re.compile(
    r"\b(?:actually|after all|anyway|turns? out|turned out|instead|oops|whoops|my bad|"
    r"my mistake|wrong (?:order|one|number|id)|wait|hold|pause|undo|later|let me(?! know)|"
    r"check with|"
    r"ask my|talk to my|sleep on|i'?ll|i will|i need to|gonna|going to)\b|"
    r"其实|原来|搞错|弄错|发错单|不用|算|再(?:想|考虑|看|说|等|问)|等(?:等|一下|一会|下|我)",
    re.I,
)
#: Kinds of sentence that go with an ask (see the module's docstring). Searched in one
#: sentence, lower-cased and normalised (Traditional Chinese folded to Simplified).
_GOES_WITH_ASK = re.compile(
    # thanks, greetings, sign-offs
    r"^(?:thanks?|thank you|thx|ty|tks|cheers|many thanks|much appreciated|appreciated?|"
    r"i appreciate|kind regards|best|bye|goodbye|have a (?:nice|good|great) day|hello|hi|hey|"
    r"please|pls|plz|ok|okay|cool|great)\b(?:[\s,!']+[\w']+){0,5}$|"
    r"^(?:谢谢|多谢|感谢|谢啦|辛苦|麻烦|拜托|劳驾|你好|您好|请|好的|好|再见|拜拜)|"
    # urgency
    r"\b(?:asap|as soon as possible|urgent\w*|quickly|right away|immediately|hurry|"
    r"by (?:today|tomorrow|monday|tuesday|wednesday|thursday|friday|saturday|sunday|"
    r"the weekend))\b|"
    r"尽快|尽早|赶紧|急|加急|快点|马上|立刻|在线等|"
    # what is wrong with the goods or the delivery
    r"\b(?:broke\w*|damag\w*|defect\w*|faulty|fault|crack\w*|torn|ripped|scratch\w*|dent\w*|"
    r"leak\w*|stain\w*|smash\w*|shatter\w*|missing|lost|late|delay\w*|stuck|never (?:arrived|came"
    r"|showed up|got|received)|wrong|too (?:small|big|large|tight|loose|short|long|"
    r"expensive)|(?:does|do|did|is|was|are|were|has|have)\s*(?:n'?t|not)\s+(?:\w+\s+)?"
    r"(?:work\w*|fit\w*|arriv\w*|turn on|switch on|charg\w*|match\w*|come|came|deliver\w*|"
    r"open\w*)|stopped working|not as (?:described|advertised|pictured)|poor quality|"
    r"low quality|quality|counterfeit|fake|expired|spoil\w*|rotten|dead on arrival|doa|"
    r"ordered (?:it |them |this )?(?:by mistake|twice|by accident)|accident\w*|duplicate|"
    r"double[- ]?(?:charged|order\w*)|charged twice|overcharg\w*|no longer (?:need|want|use)|"
    r"(?:don'?t|do not) (?:need|want|use) (?:it|them|this|that)|"
    r"disappoint\w*|frustrat\w*|unacceptable|annoy\w*|upset|angry|furious|terrible|awful|"
    r"horrible|useless|rubbish|garbage|ridiculous|unhappy|"
    r"snap\w*|bent|burst|chipped|peel\w*|fell apart|fall\w* apart|came apart|came off|fell off|"
    r"loose|wobbl\w*|rust\w*|mou?ld\w*|bugs?|error\w*|glitch\w*|crash\w*|freez\w*|nois\w*|"
    r"overheat\w*|hot|dead|died|flat|wet|soak\w*|dirty|smell\w*|stink\w*|sticky|blurry|"
    r"scuff\w*|worn|used|second[- ]hand|opened|tamper\w*|counterfeit|knock[- ]?off|"
    r"uncomfortable|itchy|rash|allerg\w*|unsafe|dangerous|sharp|toxic|sick|ill|"
    r"(?:billed|charged|debited|taken|paid) (?:me )?(?:twice|two times|double|again|too much|"
    r"extra)|price (?:drop\w*|went down)|cheaper|no show|no-show|returned|sent (?:it )?back|"
    r"return(?:ed)? label|courier|postman|driver|neighbou?r|porch|stolen|not here|"
    r"ages|weeks|days|forever|still waiting|waited|waiting|moving|moved|away|abroad|gift|"
    r"birthday|wedding|event|holiday|trip|size|fit)\b|"
    r"坏|破|损|裂|碎|开胶|脱胶|漏|脏|质量|问题|故障|瑕疵|不能用|用不了|没法用|发错了?(?:货|商品|东西|颜色|尺码|型号)|"
    r"错发|少发|漏发|缺件|少了|没收到|未收到|还没到|没到货|没送到|太大|太小|偏大|偏小|尺码|不合适|"
    r"不合身|颜色不对|色差|买错|拍错|下错|多拍|重复(?:下单|购买|扣款)|扣了两次|多扣|假货|过期|变质|"
    r"难吃|迟迟|延误|太慢|不需要了|不想要了|不要了|失望|生气|气死|太差|垃圾|无语|离谱|差评|"
    r"断|掉|松|锈|霉|脏|臭|味|异味|发热|发烫|死机|卡顿|闪退|黑屏|没电|充不|湿|过敏|二手|旧|拆封|被拆|"
    r"便宜|降价|差价|退回|寄回|快递|骑手|丢了|丢失|被偷|等了|好几天|一周|搬家|出差|礼物|生日|"
    # a detail of the order or the payment
    r"\bord-\d{6}\b|\b(?:paid|payment|card|credit|debit|paypal|alipay|wechat|apple pay|"
    r"google pay|bank|account|original (?:payment|method)|receipts?|invoices?|attach\w*|sheet|"
    r"spreadsheet|workbook|file|photos?|pictures?|screenshots?|video)\b|"
    r"\b(?:ordered|bought|purchased|received|got|delivered)\b[^.!?]{0,30}\b(?:on|last|ago|"
    r"yesterday|week|month|\d)|支付宝|微信|银行卡|信用卡|原路|付款|支付|发票|收据|"
    # a question about the ask or the order
    r"\b(?:how long|when will|when do|when can|how soon|how much|where(?:'s| is| are)|status|"
    r"track\w*|will i get|do i need|should i|can i)\b|多久|多长时间|什么时候|几天|到账|进度|物流|"
    # what the customer wants to be told ("give me a date", "let me know", 给我个准确日期; cs15)
    r"\b(?:give|tell|send|show|let) me (?:know\b|(?:(?:a|an|the|some|your) )?(?:(?:exact|precise|"
    r"rough|firm|specific|clear|definite|estimated) )?(?:date|day|time|eta|estimate|timeline|"
    r"time ?frame|update|answer|status|details?|info\w*)\b)|"
    r"(?:给|告诉|发)我(?:一)?个?(?:准确|具体|确切|明确|大概)?的?(?:日期|时间|答复|回复|说法|进度|消息)|"
    r"(?:告诉|通知)我(?:一下)?(?:具体|准确)?(?:哪天|什么时候|几号)",
    re.I,
)


def unsure_tail(text: str) -> bool:
    """Whether ``text`` (lower-cased and normalised: what follows the sentence of an ask)
    holds a sentence that is not of a kind that goes with an ask (see the module's
    docstring). Empty text, punctuation and emoji are never unsure.

    Example:
        >>> unsure_tail(" it arrived broken. thanks!"), unsure_tail(" wrong order, sorry!")
        (False, True)
    """
    for part in _SPLIT.split(text):
        sentence = part.strip(" \t,，、:：'\"()（）[]【】*~")
        if not re.search(r"[^\W_]", sentence):  # nothing but marks and emoji
            continue
        if _TURN.search(sentence) or not _GOES_WITH_ASK.search(sentence):
            return True
    return False


def goods_before(text: str, mentions: Iterable[re.Pattern[str]]) -> str:
    """``text`` (normalised, as :func:`~workflows.customer_service.asks.doubt` reads it) with
    each whole sentence blanked that comes before the first write mention (one of
    ``mentions``, searched lower-cased), mentions no write itself, and is of a kind that goes
    with an ask (what is wrong with the goods, a detail of the order: not
    :func:`unsure_tail`). A negation in such a sentence is about the goods, not the ask ("The
    colour is nothing like the photo. I want a refund", tester13): its scope ends with its
    sentence. A sentence of any other kind keeps its negation ("No. Refund …", "Not sure.
    Refund …"), and so does every sentence from the ask on ("Refund …. No, don't.").

    Example:
        >>> from workflows.customer_service.asks import _WRITE_WORDS as words
        >>> goods_before("The size is not right. Refund ORD-100076", words.values())[:10]
        '          '
    """
    low = text.lower()
    if len(low) != len(text):  # a letter whose lower case is longer: read as it is
        return text
    first = min((m.start() for p in mentions if (m := p.search(low))), default=len(low))
    chars, start = list(text), 0
    for end in (m.end() for m in _SENTENCE_END.finditer(low, 0, first)):
        sentence = low[start:end]
        if re.search(r"[^\W_]", sentence) and not unsure_tail(sentence):
            chars[start:end] = " " * (end - start)
        start = end
    return "".join(chars)
