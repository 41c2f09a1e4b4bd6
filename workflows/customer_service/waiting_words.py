"""Which messages keep a write waiting for a person (tester9b F4): a safe default.

While a confirmed write waits for a person's decision, any customer message that might change
it makes it stale (:mod:`~workflows.customer_service.amending`). Recognising every change by its
words cannot be done (a part named by an item, "20 bucks", store credit "instead", …), so the
reading is the other way round: :func:`keeps_waiting` is true only for a few benign kinds, and
everything else (an amount or number, an item, another remedy, a negation, words it does not
know) is a change. The benign kinds:

* thanks, an acknowledgement, a greeting, a goodbye ("thanks, I'll wait", 好的，谢谢);
* insisting or urging on the same request ("please hurry with my refund", "don't forget my
  refund", "I made no mistake, please go ahead", 请尽快处理, 不要撤回我的退款申请);
* asking for news or status ("any news?", "how long does approval take?", 有进展吗？);
* restating the same request ("…, as I said") with no change word, number or other order;
* another order asked for in addition ("also cancel ORD-… too") with no change word.

Every word of the message must be one of :data:`_BENIGN_EN` or of :data:`_BENIGN_ZH` (after
the insistence phrases are taken out); one word outside them is enough to withdraw. Hand-written
lists: this decides whether money may still move, so code decides, and a wrong guess costs the
customer one more confirmation, never a write they did not ask for.
"""

from __future__ import annotations

import re
from typing import Any

from rapidfuzz.distance import OSA

from workflows.customer_service.asks import normalise
from workflows.customer_service.signals import ORDER_ID

#: English words that carry no change of a waiting write: function words, thanks, greetings,
#: waiting, urging, status questions. No number, negation, "only", "just", "instead", "rather",
#: "change", "actually", item or remedy word is among them.
_BENIGN_EN = frozenset(
    re.findall(
        r"\S+",
        """
    a an the i i'm im i'll ill i've i'd you you're your we we're we'll us our my me it it's its
    this that that's there is are was were be been being will would could can do does did have
    has had am to for of on in with at by and or but so if as what what's when how how's who
    why where which please pls plz kindly thanks thank thx ty cheers ok okay k alright great
    good fine sure cool perfect nice appreciated appreciate much very lot lots really yes yeah
    yep yup hi hello hey dear morning afternoon evening again bye goodbye see later day
    weekend wait waiting waited colleague colleagues team person someone human agent manager
    staff approval approve approved approving review reviewing reviewed decision decide
    decided take takes taking time any news update updates status progress check checking
    checked go going ahead proceed process processed processing handle handled hurry asap
    soon quickly quick fast faster urgent urgently yet now today know let tell hear heard
    hoping hope look looking forward patience patient help helping everything all right
    correct same request still want need like already about up long longer make sure possible
    happen happening done said mentioned before earlier get got back reply answer answers
    received receive question out nobody anybody anyone days hours
    week forever slow fed ridiculous whenever ready speed again money posted replied looked
    you'd better case anything finish finished complete completed sort sorted push through
    deal dealt chase chasing following follow reminder remind nudge open pending active
    """,
    )
)
#: The waiting write's own words ("please hurry with my refund" insists on it).
_INTENT_EN = {
    "start_refund": {"refund", "refunds", "refunded", "refunding", "full", "amount", "money"},
    "cancel_order": {"cancel", "cancellation", "cancelled", "canceled", "cancelling", "order"},
    "change_address": {"address", "change", "changed", "updated", "shipping", "delivery", "order"},
}
#: Chinese words (Simplified) of the same kinds, longest matched first, then the particles
#: that may be left between them.
_BENIGN_ZH = sorted(
    re.findall(
        r"\S+",
        """
    请问 问一下 谢谢 感谢 多谢 谢了 好的 好吧 可以 知道了 明白 收到 没问题 辛苦了 辛苦 你好 您好
    在吗 早上好 下午好 晚上好 再见 拜拜 我等着 等着 等待 等你们 等同事 还在等 在等 审核 审批
    批准 同事 回复
    答复 结果 请 麻烦 尽快 快点 快一点 赶紧 处理 催一下 一下 帮我 有进展吗 进展 进度 情况 怎么样
    多久 多长时间 什么时候 还要 申请 请求 我的 我们 你们 您 我 你 金额是多少 是多少 好 行 等 还
    会 要 就行 就好 消息 到哪一步 到账 怎么 等了 好久 太久 太慢 好慢 已经 还是要 能 得 退
    三天 两天 几天 一天 一周 有 在 还在 慢慢 事 快啲 快些 快d 催促 跟进 提醒 搞掂 办好 办理
    """,
    ),
    key=len,
    reverse=True,
)
_INTENT_ZH = {
    "start_refund": ("全额退款", "全额", "退款", "退钱"),
    "cancel_order": ("取消订单", "取消", "订单"),
    "change_address": ("改地址", "改好", "改完", "地址", "订单"),
}
_PARTICLES = re.compile(r"[的了吗呢吧啊呀哦嗯哈么喔噢嘅啦咗喇嘛]")
#: Insisting on the waiting write, said with a negation ("don't forget my refund", "no rush",
#: "I made no mistake", 不要撤回, 别忘了, 不急): taken out before the words are read. A negated
#: verb that is the write's own ("don't cancel" while a cancel waits) is a withdrawal, not this.
_INSIST_EN = (
    r"\b(?:please\s+)?(?:i\s+)?(?:don'?t|do not|never|won'?t|would never|better not|not|nobody)"
    r"(?:,? i repeat,? do not)?\s+"
    r"(?:(?:you|dare|want|anyone|to|let|my|the|it|be|get|me|refund|request)\s+){{0,6}}"
    r"(?:{verbs})\w*(?:\s+about)?\b|"
    r"\bno (?:rush|hurry|worries|problem)\b|\bcan'?t wait\b|\bkeep me posted\b|"
    r"\b(?:didn'?t|did not|never|no|not) (?:make|made) (?:a |any )?mistakes?\b|"
    r"\bmade no mistakes?\b|\bhaven'?t changed my mind\b|\bjust (?:checking|wondering|asking)\b|"
    r"\b(?:has|have|is|was|were)(?:n'?t| not) (?:(?:it|this|that|my|the|our|anyone|anybody|order|"
    r"refund|request|address|cancellation|money|change)\s+){{0,3}}(?:been |yet )?"
    r"(?:processed|approved|replied|looked|done|handled|reviewed|answered|paid|started|{done})\b|"
    # cs10: chasing with a "no" ("still nothing", "no reply yet") and "just" before the
    # request's own verb or a go-ahead ("please just process it"; "just the kettle" stays)
    r"\bwithout (?:asking|checking with|telling) (?:me|us)(?: first)?\b|"
    r"\bnever ?mind the (?:delay|wait|waiting)\b|\bstill nothing\b|\bnothing yet\b|"
    r"\b(?:still )?no (?:reply|answer|news|update|word|response|progress|action)(?: yet)?\b|"
    r"\bjust\s+(?=(?:process|proceed|go ahead|get on with|approve|handle|finish|complete|sort|"
    r"deal with|push|do it|get it done|{own})\b)"
)
_INSIST_ZH = (
    r"(?:千万)?(?:不要|别|请勿|不能|不用|不会|可没说要|没说要|不是要|不是想|唔好|唔要|咪)(?:再)?(?:把)?"
    r"(?:我的|我嘅|这个|那个|这笔)?"
    r"(?:退款)?(?:的)?(?:申请|请求)?(?:忘了|忘记|忘掉|{verbs})|不急|不着急|别急|慢慢来|"
    r"没(?:有)?(?:搞|弄|写|说)?错|没有?改主意|(?:不要|不是|不能|别)不(?:想)?退|不退不行|"
    r"(?:怎么)?还没(?:有)?(?:退|处理|到账|消息|批|审核|回复|动静|好)|"
    # cs10: "I never said I don't want the refund"; a question ending "… or not" (好了没有？)
    r"没(?:有)?说(?:过)?(?:我)?(?:不要|不想要|不想|不需要|唔要)|"
    r"(?:好|了|完)(?:没有?|未|冇)(?=\s*(?:[?？,，.。!！]|$))"
)
_NEGATED_VERBS_EN = {
    "forget",
    "lost",
    "drop",
    "withdraw",
    "stop",
    "delay",
    "cancel",
    "ignore",
    "lose",
    "close",
    "abandon",
}
#: The waiting write's own verb, and its past participle ("why hasn't it been cancelled?").
_OWN_VERBS = {
    "start_refund": ("refund", "refunded"),
    "cancel_order": ("cancel", "cancell?ed|canceled"),
    "change_address": ("change|update", "changed|updated"),
}
_NEGATED_VERBS_ZH = {"撤回", "撤销", "撤掉", "取消", "停止", "作废", "拖"}
_RESTATED = re.compile(
    r"\b(?:as|like) (?:i|we) (?:said|mentioned|wrote|told you)\b|我(?:刚才)?说过|我说了"
)
_ALSO = re.compile(r"\b(?:also|too|as well|in addition)\b|也|另外|还有|顺便")
#: A word that can change a request even where the rest is restated or another order is asked
#: in addition: a number, a negation, a change, a part, another remedy.
_CHANGE = re.compile(
    r"\d|\b(?:not|no|n't|never|instead|only|just|rather|change\w*|actually|mistake\w*|wrong|"
    r"meant|half|part\w*|except|without|minus|credit|replace\w*|exchange|voucher|gift|"
    r"coupon|keep|prefer\w*|don'?t|won'?t|isn'?t|wasn'?t)\b|n't\b|"
    r"不|没|别|只|改|换|而是|其实|错|一半|部分|代金|积分|礼品|券|留着"
)
#: A withdrawal word: in a restated ask it may call the write off ("cancel it, as I said").
_OFF = re.compile(r"\b(?:cancel\w*|withdraw\w*|forget|stop|drop)\b|撤|取消|算了")


def keeps_waiting(message: str, action: dict[str, Any] | None) -> bool:
    """Whether ``message`` (the customer's, while ``action``, ``{"tool", "arguments":
    {"order_id", …}}``, waits for a person) is one of the benign kinds (module docstring), so
    the write may keep waiting; False for anything else, which makes it stale.

    Example:
        >>> refund = {"tool": "start_refund", "arguments": {"order_id": "ORD-111189"}}
        >>> keeps_waiting("thanks, any news on my refund?", refund)
        True
        >>> keeps_waiting("only the kettle please", refund)
        False
    """
    if not action:
        return True
    tool = str(action.get("tool") or "")
    own = str((action.get("arguments") or {}).get("order_id") or "").upper()
    text = normalise(message[:4000]).lower()
    others = {m.group(0).upper() for m in ORDER_ID.finditer(text)} - {own}
    text = ORDER_ID.sub(" ", text)
    if others:  # another order, only as an additional ask ("also cancel ORD-… too")
        return bool(_ALSO.search(text)) and not _CHANGE.search(_ALSO.sub(" ", text))
    text = _without_insisting(text, tool)
    if _RESTATED.search(text):
        return not (_CHANGE.search(text) or _OFF.search(text))
    return _only_benign(_asked_off(text), tool)


def _without_insisting(text: str, tool: str) -> str:
    """``text`` less its insisting phrases with a negation in them (:data:`_INSIST_EN`)."""
    own = {"cancel_order": {"cancel", "取消"}}.get(tool, set())
    verbs_en = "|".join(sorted(_NEGATED_VERBS_EN - own))
    verbs_zh = "|".join(sorted(_NEGATED_VERBS_ZH - own))
    mine, done = _OWN_VERBS.get(tool, ("(?!)", "(?!)"))
    text = re.sub(_INSIST_EN.format(verbs=verbs_en, own=mine, done=done), " ", text)
    return re.sub(_INSIST_ZH.format(verbs=verbs_zh), " ", text)


def _only_benign(text: str, tool: str) -> bool:
    """Whether every word of ``text`` is a benign one (or the waiting write's own)."""
    if re.search(r"\d", text):
        return False
    for phrase in (*_INTENT_ZH.get(tool, ()), *_BENIGN_ZH):
        text = text.replace(phrase, " ")
    word = re.compile(r"[a-z]+(?:'[a-z]+)?")
    if any(c.isalpha() for c in word.sub(" ", _PARTICLES.sub("", text))):
        return False  # a Chinese word not listed, or another script: not read, so a change
    known = _BENIGN_EN | _INTENT_EN.get(tool, set())
    return all(w in known or _typo_of(w, known) for w in word.findall(text))


def _typo_of(word: str, known: frozenset[str] | set[str]) -> bool:
    """Whether ``word`` (not in ``known``) is a typo of one of ``known`` (cs10: "refnd",
    "proces", "updte"): five letters or more, the same first letter, one letter added, dropped,
    changed or two swapped (optimal string alignment distance 1), and no change word
    (:data:`_CHANGE`). Short words are never read as typos ("no" is not "so")."""
    if len(word) < 5 or _CHANGE.search(word):
        return False
    return any(
        len(k) >= 5 and k[0] == word[0] and OSA.distance(word, k, score_cutoff=1) <= 1
        for k in known
    )


def _asked_off(text: str) -> str:
    """``text`` less the withdrawal words of a question about it ("did you cancel my
    refund?", 退款被取消了吗): a question withdraws nothing; else ``text`` as it is."""
    asked = re.search(r"\b(?:did|will|was|has|is|why|who|would)\b|被|了吗", text)
    if not asked or ("?" not in text and "吗" not in text):
        return text  # "can you cancel it?" asks for a withdrawal: not this
    text = re.sub(r"\b(?:did|will|would|why|who)\b", " ", text)
    return re.sub(r"\b(?:cancel\w*|withdr[ae]w\w*|drop\w*)\b|被|取消|撤销|撤回", " ", text)
