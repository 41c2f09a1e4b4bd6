"""Sentence kinds the model may never say on its own: the part of the claim checker
(:mod:`workflows.customer_service.claims`) that reads what a sentence *does*, not which
figure or state it names. English and Chinese (Traditional is folded by OpenCC first).

The rest of the checker verifies figures, dates, states and actions told. A sentence with
none of those can still make a promise the shop never made (the Air Canada "bereavement
policy"), a binding offer (the Chevrolet dealer's "legally binding, no takesies backsies"), or
insult the customer and run down the shop (the DPD bot). A model sentence may only

* restate a fact a tool returned (the figure, state and unbacked checks verify it);
* be courtesy: thanks, an apology, empathy, an acknowledgement, a question back;
* point to a person or a next step the workflow offers (a handoff, a ticket, a reply).

So every kind below is dropped, in any clause (a question or an offer too), unless a tool fact
backs it:

=============  ==========================================================  =====================
kind           what the sentence does                                      backed by
=============  ==========================================================  =====================
``policy``     states a policy, a right, a term, money for nothing ("our    a tool value saying it
               policy", "free of charge", 政策, 无理由)
``terms``      tells money or a return as a rule (always / free / instant   a tool value saying it
               / no need to send it back / in full + refund, return, fee)
``guarantee``  guarantees or promises (guarantee, promise, assure, 保证, 一定)  never
``legal``      gives a legal status or a final deal (legally binding,        never
               irrevocable, final offer, 法律效力, 不可撤销, 一言为定)
``offer``      offers money or goods (a discount, a credit, a replacement,  never
               a price: "I can give you a voucher", 送您优惠券)
``done``       says the customer's matter is handled (all sorted, 处理好了)   a write this turn
``abuse``      insults the customer or swears (idiot, damn, 笨蛋, 他妈)        never
``judgement``  runs down the shop, its partners or anyone, or sends the      never
               customer to a rival (scam, useless, Amazon, 骗子, 别家)
``progress``   a vague nearness of a parcel (almost there, 快到了, 马上就到)  out for delivery
``day``        a Chinese relative day or time (今天, 后天, 下午, 周五); the     never (no clock in
               English ones are already unbacked times                       the tool facts)
=============  ==========================================================  =====================

Tool values (an item called "Garbage bags", a refusal reason naming a final sale) are blanked
first, as are courtesy phrases that share a word ("feel free", "contact us any time",
请随时联系, 垃圾邮件, "sorry for the terrible wait"). A Chinese question or wish (今天还有什么
可以帮您？, 祝您今天愉快) tells no day, and "done" in a condition ("until the refund is
settled", 等退款办好后) is no claim.

Regular expressions rather than a classifier: the vocabularies stay readable and cost
microseconds a sentence (``benchmarks/truth.py`` measures the checker's cost).
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

#: Tool names that write: only these back a "done" sentence.
WRITES = frozenset({"start_refund", "cancel_order", "change_address", "open_ticket"})

# --- courtesy that shares a word with a kind: blanked before the kinds are searched ----------

_EN_COURTESY = re.compile(
    r"\bfeel free\b|\bfree to\b|\b(?:contact|reach|ask|message|write to|call|tell|email|check|"
    r"track|view|see|follow)\b[^.!?]{0,40}?\b(?:any ?time|whenever)\b|\bhave a (?:nice|good|"
    r"great|lovely) \w+|\bno need to (?:worry|apologi[sz]e)\b|\b(?:don't|do not) worry\b|"
    r"\balways (?:here|happy|glad|available)\b|"
    r"\b(?:terrible|awful|horrible|frustrating|bad|poor) (?:experience|wait|delay|day|time|"
    r"situation|news)\b|\b(?:experience|wait|delay|situation)\s+(?:\w+\s+){0,2}?(?:terrible|"
    r"awful|horrible)\b",
    re.I,
)
_ZH_COURTESY = re.compile(
    r"随时[^。！？，,]{0,8}?(?:联系|告诉|咨询|找|留言|查看|查询|跟踪|关注)|祝您[^。！？!?]{0,10}|"
    r"(?:很差|糟糕|不好|不愉快|不佳)的(?:体验|经历|情况|事情|事)|垃圾(?:邮件|箱|短信)|"
    r"(?:不用|无需|不必|别)(?:担心|着急|客气|道歉)"
)
#: A condition or a time to wait for: "done" inside it is no claim ("keep it until the refund
#: is settled", 等退款办好后).
_EN_CONDITION = re.compile(
    r"\b(?:until|once|when|if|after|before|as soon as|whether)\b[^,.;!?]*", re.I
)
_ZH_CONDITION = re.compile(r"(?:等到?|待|一旦|如果|若|直到)[^，,；;。！？!?]*")
_ZH_QUESTION = re.compile(r"(?:[?？]|[吗呢][。！？?!]?)\s*$")

# --- the kinds: English and Chinese vocabularies ---------------------------------------------

#: Keeping the goods, or sending them back (not a receipt, a label or a number).
_EN_KEEP = (
    r"keep (?:it|them|the (?!receipt|label|box|packaging|tracking|number)\w+)|"
    r"send (?:it|them|the \w+) back"
)
_EN_MONEY = (
    r"\b(?:refund\w*|returns?|returned|returning|exchange\w*|money|shipping|postage|delivery "
    r"fees?|fees?|charges?|costs?|price\w*|warrant\w*|compensat\w*|credits?|discounts?|"
    r"replacements?|" + _EN_KEEP + r")\b"
)
_ZH_MONEY = r"退|换货|换新|运费|邮费|寄回|退回|到账|赔|补偿|费用|价格|差价|保修|质保|返还"
_EN_TERMS = (
    r"\b(?:always|never|any ?time|forever|lifetime|every(?:thing| order| item| product| "
    r"purchase)?|all (?:orders|items|products|purchases)|instant(?:ly)?|"
    r"automatic(?:ally)?|unconditional(?:ly)?|in full|for free|free|at no (?:extra )?cost|"
    r"no (?:extra )?charge|no need|(?:do not|don't|doesn't|does not|won't|will not) (?:need|"
    r"have) to|without (?:returning|sending|paying)|(?:costs?|pay) (?:you )?nothing|"
    r"no questions asked|double (?:the |your )?(?:refund|money|amount)|" + _EN_KEEP + r")\b"
)
_ZH_TERMS = (
    r"免费|全额|全部|随时|任何时候|永远|永久|终身|一律|所有|都可以|均可|不需要|不用|无需|不必|"
    r"(?:立即|立刻|马上)到账|即时|秒到|实时|双倍|包退|包换"
)


@dataclass(frozen=True)
class _Kind:
    """One kind of sentence: its name, what it does (for the reason), its English and
    Chinese vocabularies, and ``needs``: a second vocabulary that must also be in the sentence
    (a term counts only in a sentence about money or a return)."""

    name: str
    does: str
    en: re.Pattern[str]
    zh: re.Pattern[str]
    en_needs: re.Pattern[str] | None = None
    zh_needs: re.Pattern[str] | None = None


_KINDS = (
    _Kind(
        "policy",
        "states a policy, a right or a term",
        re.compile(
            r"\b(?:polic(?:y|ies)|terms (?:and|&) conditions|our rules?|entitle\w*|"
            r"price[- ]match\w*|money[- ]back guarantee|satisfaction guarantee|restocking|"
            r"bereavement|no questions asked|goodwill (?:gesture|credit|refund)|"
            r"we (?:offer|provide|support|allow)|(?:is|are) (?:allowed|permitted)|lets? you|"
            r"for free|free of charge|at no (?:extra )?cost|no (?:extra )?charge|complimentary|"
            r"on the house|on us)\b",
            re.I,
        ),
        re.compile(
            r"政策|规定|条款|条例|规则|无理由|价格保护|保价|先行赔付|我们(?:提供|支持|允许)|"
            r"不收(?:取)?(?:任何)?费|零费用"
        ),
    ),
    _Kind(
        "terms",
        "tells money or a return as a rule",
        re.compile(_EN_TERMS, re.I),
        re.compile(_ZH_TERMS),
        re.compile(_EN_MONEY, re.I),
        re.compile(_ZH_MONEY),
    ),
    _Kind(
        "guarantee",
        "guarantees or promises",
        re.compile(
            r"\b(?:guarantee\w*|promis\w*|assur\w*|(?:you have )?my word|100 ?%|a hundred "
            r"percent|without fail|no matter what|i swear|count on (?:it|me|us|that)|trust me)\b",
            re.I,
        ),
        re.compile(
            r"保证|担保|承诺|确保|绝对|百分之?百|包您|包你|(?<!请)一定(?:会|能|可以|给|帮|收到|到|退|赔)|"
            r"肯定(?:会|能|可以)|一定(?:没问题|没事)|包在我身上|打包票|放一百个心"
        ),
    ),
    _Kind(
        "legal",
        "gives a legal status or a final deal",
        re.compile(
            r"\b(?:legal(?:ly)?|binding|contract\w*|irrevocabl\w*|(?:cannot|can't|can not) be "
            r"(?:revoked|undone|reversed|withdrawn|taken back)|no take-?backs?|takesies|"
            r"backsies|final (?:offer|deal|sale|price|decision|answer|agreement)|"
            r"(?:offer|deal|agreement|decision|sale) is (?:final|official|binding)|"
            r"(?<!big )(?<!great )(?<!good )deal\b(?! with)|agreement|lawyers?|attorneys?|court|"
            r"sue|lawsuit|liab\w*|waive\w*|(?:agree to|accept) your (?:offer|terms|price|"
            r"proposal|conditions))\b",
            re.I,
        ),
        re.compile(
            r"法律|法定|约束力|具有效力|合同|契约|协议|不可撤销|不可撤回|不得撤销|不能撤销|"
            r"(?:不能|不可|不得|不许|不准)反悔|一言为定|成交|最终(?:报价|决定|价格|结果|答复)|"
            r"律师|起诉|法院|诉讼|免责|(?:同意|接受)您的(?:报价|条件|价格|要求|提议)|"
            r"按您(?:说|提)的(?:价格|价)|就这么定了"
        ),
    ),
    _Kind(
        "offer",
        "offers money or goods no tool gives",
        re.compile(
            r"\b(?:i|we|let me|let us)\b[^.!?]{0,20}?\b(?:give|offer|sell|send|grant|provide|"
            r"extend|apply|honou?r|throw in|knock)\b"
            r"[^.!?]{0,30}?\b(?:discounts?|credits?|vouchers?|coupons?|compensation|gifts?|"
            r"bonus|cash|replacements?|dollars?|cents?|penny|half (?:price|off)|off the price|"
            r"cheaper|price)\b",
            re.I,
        ),
        re.compile(
            r"(?:(?:我|我们)[^。！？，,]{0,4}?(?:给|送|为|帮|替|可以|能|会)|(?:给|送)您)"
            r"[^。！？，,]{0,6}?(?:打折|折扣|优惠|代金券|优惠券|红包|返现|赠品|免单|半价|补偿|赔偿|"
            r"降价|减价|补发|换新)|卖给您|(?:一|1)(?:元|块钱?|美元)(?:卖|出售)"
        ),
    ),
    _Kind(
        "done",
        "says the matter is handled",
        re.compile(
            r"\b(?:all (?:done|set|sorted)|consider it (?:done|sorted|handled)|good to go|"
            r"(?<!not )(?<!n't )(?<!yet )(?:is|are|'s|been) (?:all |now |fully )*(?:done|sorted|"
            r"handled|taken care of|resolved|fixed|settled)|(?:i|we)(?:'ve| have)? (?:just )?"
            r"(?:done|handled|sorted|fixed|resolved|taken care of))\b",
            re.I,
        ),
        re.compile(
            r"已经?(?:为您|帮您|给您|替您)?(?:处理|办理|解决|办妥|搞定)|搞定|"
            r"(?:处理|办理|办|弄|搞|解决|安排)(?:好|妥|完|定)"
        ),
    ),
    _Kind(
        "abuse",
        "insults the customer or swears",
        re.compile(
            r"\b(?:idiot\w*|stupid\w*|dumb|dumbass|moron\w*|fool(?:s|ish)?|imbecile\w*|loser\w*|"
            r"jerk\w*|clown\w*|retard\w*|shut up|damn\w*|dammit|goddam\w*|hell|fuck\w*|f\*+k\w*|"
            r"shit\w*|bullshit|crap\w*|bastard\w*|bitch\w*|asshole\w*|ass|piss\w*|bloody|wtf|"
            r"stfu|screw you|go away|leave me alone|stop (?:bothering|bugging|pestering) "
            r"(?:me|us)|you(?:'re| are) (?:so |really |such an? )?(?:annoying|clueless|"
            r"ignorant|lazy|a pain))\b|\w\*{2,}\w*",
            re.I,
        ),
        re.compile(
            r"笨蛋|傻|白痴|蠢|混蛋|王八|滚(?!动)|他妈|妈的|去死|闭嘴|脑残|弱智|废物|狗屎|该死|见鬼|"
            r"神经病|卧槽|我靠|贱人|放屁|狗屁|别烦|烦死|懒得理|少废话|有毛病"
        ),
    ),
    _Kind(
        "judgement",
        "runs down the shop or others, or names a rival",
        re.compile(
            r"\b(?:suck\w*|scam\w*|fraud\w*|rip-?off|worst|useless|terrible|awful|horrible|"
            r"horrendous|pathetic|incompetent|rubbish|garbage|trash\w*|lousy|shoddy|hopeless|"
            r"unreliable|dishonest|shady|crooked|joke|disgrace\w*|disgusting|amazon|ebay|walmart|"
            r"aliexpress|alibaba|temu|shein|etsy|best buy|costco|taobao|jd\.com|competitors?|"
            r"(?:another|other|a different) (?:shops?|stores?|sellers?|retailers?|websites?|"
            r"compan(?:y|ies)|brands?)|hate (?:this|our|the|working)|despise|ashamed|"
            r"waste of (?:time|money)|(?:nobody|no one) (?:here )?cares|(?:we|they|i) (?:don't|"
            r"do not) care|"
            r"(?:shop|buy|order|look) (?:it )?(?:there|elsewhere|somewhere else)|go elsewhere|"
            r"(?:better|cheaper) than (?:us|ours|our))\b",
            re.I,
        ),
        re.compile(
            r"骗子|骗人|诈骗|坑人|黑店|垃圾|(?:太|很|真|好|超|巨)烂|烂透|差劲|太差|很差|最差|真差|糟糕|无能|不靠谱|靠不住|丢人|"
            r"恶心|没救|讨厌|浪费时间|破(?:店|公司|平台)|亚马逊|淘宝|京东|拼多多|天猫|闲鱼|唯品会|苏宁|别家|别处|"
            r"(?:别的|其他|其它)(?:店|商家|平台|网站|公司)|竞争对手|比我们(?:好|便宜|强)"
        ),
    ),
    _Kind(
        "progress",
        "tells a parcel's nearness",
        re.compile(
            r"\b(?:(?:almost|nearly|just about) (?:there|here|with you|at your (?:door|home|"
            r"place)|delivered|arrived)|close to (?:you|your|its destination)|any (?:minute|"
            r"moment|second|day|time) now|(?:just )?around the corner|on the (?:final|last) "
            r"(?:leg|stretch|mile)|in your (?:area|city|neighbou?rhood)|"
            r"(?:is|are|'s|now) (?:\w+ )?nearby|next stop|(?:streets?|blocks?|stops?) away|"
            r"on your (?:street|road|block)|final stage)\b",
            re.I,
        ),
        re.compile(
            r"快到了|就快到|快要到|马上就(?:到|能到|送到)|很快就(?:到|能到|送到)|最后一公里|楼下|"
            r"到(?:您的?)?小区|还有[一二两三几]站|"
            r"(?:到|在|到达)[^。！？，,]{0,4}?(?:附近|同城)(?:了|啦|呢)?(?=[。！？!?，,]|$)"
        ),
    ),
    _Kind(
        "day",
        "tells a relative day or time",
        re.compile(r"(?!)"),  # English relative times are the unbacked check's (claim_assertions)
        re.compile(
            r"今天|明天|后天|昨天|前天|今晚|今早|明早|明晚|今日|明日|上午|下午|中午|傍晚|晚上|早上|凌晨|"
            r"今儿|明儿|后儿|(?:下|这|本)(?:个)?(?:礼拜|星期)|"
            r"周[一二三四五六日天末]|星期[一二三四五六日天]|礼拜[一二三四五六日天]|本周|这周|下周|"
            r"下个?月|月底|月初|(?:[一二两三四五六七八九十几]|一两)(?:个)?(?:小时|分钟|天|日|周|"
            r"星期|工作日)"
        ),
    ),
)


def _backed(kind: str, actions: frozenset[str], values: Iterable[str]) -> bool:
    """Whether this turn's facts back a sentence of ``kind`` (see the module's table)."""
    if kind == "done":
        return bool(actions & WRITES)
    if kind == "progress":
        return any("out for delivery" in v.lower().replace("_", " ") for v in values)
    return False


def unsaid_kind(
    text: str, zh: bool, values: Iterable[str], actions: frozenset[str]
) -> tuple[str, str] | None:
    """The first kind the model may not say that ``text`` says, unbacked by this turn.

    Args:
        text: One sentence, NFKC-normalised (Chinese folded to Simplified).
        zh: The sentence is Chinese.
        values: The tools' fact values of this turn (blanked first: a value is a tool fact).
        actions: ``looked``, each tool name that returned ok, ``follow_up``.

    Returns:
        ``(what the sentence does, the words that say it)``, or None when it may be shown.
    """
    values = tuple(values)
    for value in sorted((v for v in values if len(v) > 3), key=len, reverse=True):
        text = re.sub(re.escape(value), " ", text, flags=re.I)
    text = (_ZH_COURTESY if zh else _EN_COURTESY).sub(" ", text)
    question = zh and bool(_ZH_QUESTION.search(text))
    for kind in _KINDS:
        if kind.name == "day" and question:
            continue
        seen = (
            (_ZH_CONDITION if zh else _EN_CONDITION).sub(" ", text) if kind.name == "done" else text
        )
        match = (kind.zh if zh else kind.en).search(seen)
        needs = kind.zh_needs if zh else kind.en_needs
        if match is None or (needs is not None and not needs.search(text)):
            continue
        if not _backed(kind.name, actions, values):
            return kind.does, match.group(0)
    return None
