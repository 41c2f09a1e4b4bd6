"""Unbacked assertions: the fail-safe part of the claim checker (:mod:`workflows.
customer_service.claims`), English and Chinese (Traditional is folded by OpenCC first).

The state and promise checks know the words of order and refund states; a model can also tell
an action done or to be done by us ("we've issued a store credit", 已为您补发), an event ("your
payment bounced"), a date or a time ("tomorrow", 明天), or an account, payment, stock,
warranty or shipping fact ("out of stock", 包邮). Rather than a list of such claims, this
module reads a sentence as clauses and keeps a clause only when it is:

* of a kind that carries no fact: a question, an offer or request ("I can look into…",
  "Would you like…", "Please…", 如需…, 我可以…), a condition ("if…"), or empathy, thanks
  or an apology (which may still not tell an action of ours, a date or an account fact); or
* a statement whose every assertion is explained by this turn's facts: the tools' values and
  figures, the state words the state check already verified, and the phrases of the actions
  that ran (a lookup backs "I checked", ``open_ticket`` backs "I opened a ticket", a handoff
  backs "I passed your case to a colleague", ``change_address`` backs "I updated the address").

What is left after those are blanked out is searched for assertion markers (a first-person
action, a perfect, passive or past verb, a future, a date or time word, an account word):
any one left drops the sentence.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

from workflows.customer_service.claim_states import ARRIVALS, EN_STATE_RES, ZH_STATE_RES

_BLANK = "~"
#: States that are promises a recorded handoff or write backs: a next step, not a fact.
_PROMISES = frozenset({"follow_up", "no_charge"})
#: Backed phrases that carry no fact: an intention, the customer's own topic, a receipt.
_NO_FACT_NAMES = frozenset({"always", "always_topic", "always_intent"})
#: What blanks a phrase that carries no fact (an intention, the customer's own topic, an
#: auxiliary): only ``_BLANK`` marks a fact of this turn (:mod:`.claim_allowed` reads it).
NEUTRAL = "^"
_Supported = Callable[[str], bool]

# --- what carries no fact -------------------------------------------------------------------

EN_CLAUSE = re.compile(r"[,;:()]|\s(?:and|but|while|so|because|as)\s|\s[-–—]\s")
ZH_CLAUSE = re.compile(r"[,，;；:：()（）]|而且|并且|但是?|所以|因为")
#: A clause that asks, offers, requests or states a condition.
EN_NO_FACT = re.compile(
    r"^\W*(?:(?:i|we)(?:'d| would| can| could| may| am happy to| 'm happy to|'m happy to|"
    r"'m glad to| am glad to| are happy to|'re happy to)\s+(?!confirm|tell|assure|see\b|inform|"
    r"report|say|note|let you know)|you (?:can|may)\b(?!\s+(?:now\s+)?expect)|can i\b|"
    r"could i\b|may i\b|shall i\b|"
    r"would you|could you|can you|do you|did you|are you|have you|is there|are there|"
    r"would it|let me know|(?:please|kindly)\s+(?!note|be aware|know)|feel free|if\b|"
    r"whether\b|should you|in case|happy to|glad to|just let|any other|anything else|"
    r"(?:reply|send|tell|check|contact|visit|use|follow|keep|ask|click|try|share|have a (?:nice|"
    r"good|great|lovely))\b)",
    re.I,
)
ZH_NO_FACT = re.compile(
    r"^\W*(?:(?:我|我们)?(?:可以|能|能够|可|乐意|愿意|随时|很乐意)|如需|如果|若|假如|要是|"
    r"请|欢迎|是否|需要我|您可以|您需要|您是否|还有|有什么|有没有|以便|方便)"
)
#: A clause of empathy, thanks or apology: it may restate the customer's trouble, but not
#: tell an action of ours, a date or an account fact.
EN_EMPATHY = re.compile(
    r"^\W*(?:(?:i|we)(?:'m| am|'re| are)?\s+(?:so\s+|very\s+|really\s+|truly\s+)?sorry|sorry|"
    r"apologi|my apologies|thank|(?:i|we)\s+(?:\w+ly\s+)?(?:understand|appreciate|know|hear|"
    r"see|apologi))",
    re.I,
)
ZH_EMPATHY = re.compile(
    r"^\W*(?:非常|十分|真的|很)?(?:抱歉|对不起|感谢|谢谢|多谢|理解|明白|不好意思)|"
    r"^\W*(?:我|我们)(?:非常|很|完全)?(?:理解|明白|感谢|抱歉)|"
    r"^\W*(?:我|我们)?(?:很|非常)?(?:高兴|荣幸)(?:能)?为您服务|"
    r"^\W*(?:给您|让您)(?:带来(?:的)?(?:不便|麻烦|困扰)|添(?:了)?麻烦|久等|失望)"
)

# --- what asserts a fact ---------------------------------------------------------------------

#: Words after "I" / "we" that tell no action: modals, feelings, wishes.
_EN_NEUTRAL_VERBS = (
    r"can|could|would|may|might|should|must|understand|see|know|hope|appreciate|apologi[sz]e|"
    r"value|thank|realize|realise|hear|need|want|like|wish|recommend|suggest|am|are|be|sorry|"
    r"happy|glad|here|truly|really|completely|totally|fully|do"
)
_EN_FIRST_PERSON = re.compile(
    r"\b(?:i|we)\b(?:'ve|'ll|'m|'re|'d)?\s+(?:(?:have|had|will|shall|am|are|just|already|also|"
    r"now|then|been|have been|\w+ly)\s+)*(?!(?:" + _EN_NEUTRAL_VERBS + r")\b)(?![a-z]+ly\b)[a-z]+",
    re.I,
)
#: Past forms that end in -ed but tell a feeling or a quality, not an event.
_EN_NEUTRAL_ED = frozenset(
    re.findall(
        r"\S+",
        "need indeed speed feed seed interested concerned worried frustrated disappointed "
        "delighted pleased satisfied confused annoyed surprised excited detailed related based "
        "tired red bed shed used limited valued dedicated unexpected inconvenienced upset "
        "appreciated assured advised preferred",
    )
)
_EN_IRREGULAR = (
    r"sent|made|gave|given|took|taken|got|gotten|went|gone|came|done|did|paid|sold|held|kept|"
    r"left|lost|found|told|brought|bought|shown|spent|won|built|wrote|written|frozen|put|set|"
    r"re-sent|resent|began|begun|ran|saw|seen"
)
_EN_EVENT = re.compile(
    r"\b(?:(?:has|have|had)\s+(?:\w+ly\s+|just\s+|already\s+|now\s+|also\s+|not\s+)*"
    r"(?:been\s+[a-z-]+|being\s+[a-z-]+|[a-z]+ed\b|(?:" + _EN_IRREGULAR + r"))|"
    r"(?:was|were|been|being|got|gets)\s+(?:\w+ly\s+|just\s+|already\s+|"
    r"now\s+|also\s+|not\s+)*(?:been\s+|being\s+)?[a-z-]+|(?:" + _EN_IRREGULAR + r")|"
    r"will|'ll|shall|going to|gonna|about to|(?:can|may|should|could) (?:now )?expect)\b",
    re.I,
)
_EN_ED = re.compile(r"\b[a-z]+ed\b", re.I)
#: A thing of the order, account or shop with a verb in the present ("your warranty covers").
_EN_SUBJECT_VERB = re.compile(
    r"\b(?:orders?|parcels?|packages?|items?|products?|purchases?|refunds?|payments?|accounts?|"
    r"cards?|delivery|shipments?|shipping|it|this|that|they|warranty|guarantee|courier|carrier|"
    r"system|bank|team|store|warehouse)\s+(?:\w+ly\s+|also\s+|now\s+|still\s+|usually\s+)?"
    r"(?!is\b|was\b|has\b|does\b|as\b|us\b|its\b|this\b|plus\b)[a-z]+s\b",
    re.I,
)
_EN_PREDICATE = re.compile(
    r"\b(?:is|are|was|were|'s|'re|be)\s+(?:now\s+|still\s+|currently\s+|also\s+|not\s+|"
    r"already\s+)*(?:on|at|in|with|ready|available|free|out|back|stuck|late|pending|awaiting|"
    r"waiting|under|covered|sold|due|overdue|locked|blocked|active|inactive|valid|invalid|"
    r"expired|closed|open|complete|delayed|held|scheduled|booked|paused|suspended)\b",
    re.I,
)
#: Soon, with no date: time words that a handoff or a ticket may back in a follow-up promise
#: (:data:`_EN_VAGUE`, :data:`_ZH_VAGUE`), and that otherwise tell a time like any other.
_EN_SOON = r"soon|shortly|as soon as possible|asap|right away"
_ZH_SOON = r"马上|立即|立刻|稍后|很快|尽快|随后"
_EN_TIME = re.compile(
    r"\b(?:yesterday|tomorrow|today|tonight|overnight|this (?:morning|afternoon|evening|week|"
    r"month|weekend)|(?:last|next|coming) (?:night|week|month|year|weekend|\w+day)|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)days?|january|february|march|april|june|july|"
    r"august|september|october|november|december|just now|recently|ago|earlier|"
    r"later|within|first thing|in a (?:moment|minute|bit|while|few)|by (?:the )?end of|"
    r"business days?|hours?|minutes?|weeks?|momentarily|imminently|immediately|"
    r"(?:" + _EN_SOON + r"))\b",
    re.I,
)
#: Vague times a follow-up promise may carry when a handoff or a ticket backs it.
_EN_VAGUE = re.compile(r"\b(?:" + _EN_SOON + r"|later)\b", re.I)
_EN_ACCOUNT = re.compile(
    r"\b(?:charge[sd]?|charging|bill(?:ed|s|ing)?|payments?|paid|pay|balance|credits?|points|"
    r"stock|sold out|inventory|warrant(?:y|ies)|guarantee[sd]?|covered|covers|qualif\w*|"
    r"free (?:shipping|delivery|returns?)|on hold|verif\w*|accounts?|subscriptions?|"
    r"membership|coupons?|vouchers?|discounts?|promo\w*|invoices?|receipts?|e-?mail\w*|sms|"
    r"texts?|notif\w*|password|cards?|fees?|compensation|customs|depot|labels?)\b",
    re.I,
)

_ZH_FIRST_PERSON = re.compile(
    r"(?:我们|我|系统|仓库|团队)(?:这边)?(?:已经?|刚刚?|会|将|正在|把|给|为|帮|替|马上|立即|立刻|"
    r"已为|已给|已帮)"
)
_ZH_EVENT = re.compile(
    r"已经?|刚刚?|刚才|(?<![为对好极除])了(?!解)|被|将|会(?!员)|即将|准备|安排|正在|"
    r"(?:为|给|帮|替)您|[^\s~]中(?=[。！？，,；;]|$)"
)
_ZH_TIME = re.compile(
    r"今天|明天|后天|昨天|前天|今晚|今早|明早|上午|下午|晚上|早上|"
    + _ZH_SOON
    + r"|下周|上周|本周|这周|下个?月|上个?月|周[一二三四五六日天末]|星期|礼拜|"
    r"[0-9一二三四五六七八九十]+(?:号|日|月)|小时|分钟|届时|提前|目前还"
)
_ZH_VAGUE = re.compile(_ZH_SOON)
_ZH_ACCOUNT = re.compile(
    r"扣款|扣费|扣了|多扣|扣钱|付款|支付|账户|账号|余额|积分|优惠券|代金券|折扣|优惠|库存|缺货|有货|"
    r"售罄|售完|卖完|保修|质保|包邮|免运费|免邮|运费|冻结|验证|认证|暂停|发票|会员|邮件|短信|电话|"
    r"通知|密码|银行卡|信用卡|补偿|赔偿|延误|滞留|海关|仓库|免费|标签|补发|审核"
)

# --- what the actions of this turn back ------------------------------------------------------

#: Action name → the phrases it backs: ``looked`` (any tool result), a tool that ran ok, or
#: ``follow_up`` (a handoff or a ticket this turn).
_EN_BACKED: dict[str, str] = {
    "always": r"\b(?:(?:your )?(?:message|request|question|feedback|email)\s+(?:has been|was|is)\s+"
    r"(?:received|noted)|(?:i|we)(?:'ve| have)?\s+(?:received|noted|got|read)\s+(?:your )?"
    r"(?:message|request|question|feedback))\b",
    "lookup_order": r"\b(?:was|were)\s+placed\b|\b(?:contains?|includes?)\s+(?=~)",
    # the customer's own question or trouble named as a topic, not told as a fact
    "always_topic": r"\b(?:(?:a|an|your|the|this)\s+)?(?:question|concern|query|issue|problem|"
    r"trouble)s?\s+(?:about|with|regarding|on)\s+(?:(?:a|an|the|your|this|that)\s+)?"
    r"(?:[a-z]+\s+){0,2}?[a-z]+\b|\b(?:get into|access|sign (?:in|into)|log (?:in|into))\s+"
    r"(?:to\s+)?(?:your\s+)?account\b",
    # what a person or we will do: an intention, not a fact ("we will look into your card")
    "always_intent": r"\b(?:look (?:into|at)|check|review|investigate|help (?:you )?with|"
    r"sort out)\s+(?:(?:your|the|this|that|a|an)\s+)?(?:[a-z]+\s+)?[a-z]+\b",
    "refund_or_cancel": r"\b(?:to|on|from|into)\s+(?:your\s+|the\s+)?(?:original\s+)?"
    r"(?:card|payment method|payment card|bank account|account)\b",
    "looked": r"\b(?:(?:i|we)(?:'ve| have)?\s+(?:just\s+)?(?:checked|looked (?:up|into|at)|"
    r"found|pulled up|reviewed|searched)|(?:on|in|under) your account)\b",
    "follow_up_reply": r"\b(?:(?:call|phone|email|e-mail|text|contact|reply to|write to|"
    r"get back to)\s+you|reply (?:here|in this (?:chat|conversation))|"
    r"let you know(?:\s+(?:where|when|how|what|if|whether)\b[^.!?]*)?|"
    r"(?:by|via|over) (?:e-?mail|phone|sms|text|the phone))\b",
    "open_ticket": r"\b(?:(?:i|we)(?:'ve| have)?\s+)?(?:opened|created|raised|logged|filed)\s+"
    r"(?:a |the |your |this )?(?:support )?(?:ticket|case)(?: for you)?\b|"
    r"\b(?:a |the |your |this )?(?:support )?(?:ticket|case)\b[^.!?]{0,12}?"
    r"(?:has been|was|is)\s+(?:opened|created|raised|logged|filed)(?: for you)?",
    "follow_up": r"\b(?:(?:i|we)(?:'ve| have)?\s+)?(?:just\s+)?(?:passed|handed|forwarded|"
    r"transferred|escalated|referred)\s+(?:[\w~]+\s+){0,3}?(?:on\s+|over\s+)?(?:to|with)\s+"
    r"(?:a |the |our |one of our )?(?:colleague|agent|specialist|team|person|supervisor|"
    r"manager)s?\b",
    "track_shipment": r"\b(?:is|are)\s+(?:now\s+)?with\s+(?=~)|\b(?:shipped|sent|carried)\s+"
    r"(?:with|by|via)\s+(?=~)",
    "change_address": r"\b(?:(?:i|we)(?:'ve| have)?\s+)?(?:updated|changed|corrected|amended)\s+"
    r"(?:the |your )?(?:(?:delivery |shipping )?address|order)\b|"
    r"\b(?:(?:your|the) )?(?:delivery |shipping )?address\b[^.!?]{0,12}?(?:has been|was|is now|"
    r"is)\s+(?:updated|changed|corrected)|\b(?:will|'ll)\s+(?:now\s+)?(?:ship|go|be (?:sent|"
    r"delivered|shipped))\s+to\b",
    "write": r"^\W*(?:done|all set)\b",
    "start_refund": r"\b(?:(?:i|we)(?:'ve| have)?\s+)?(?:started|submitted|initiated|created|"
    r"filed|requested)\s+(?:a |the |your |this )?refund\b|\brefund\b[^.!?]{0,40}?"
    r"(?:has been|was|is)\s+(?:started|submitted|initiated|created|requested)",
}
_ZH_BACKED: dict[str, str] = {
    "always": r"(?:已经?)?收到(?:了)?您的(?:消息|留言|反馈|问题)",
    "lookup_order": r"(?:于|在)[^。！？，,]{0,12}?下单",
    "always_topic": r"(?:对|关于)[^。！？，,]{0,10}?(?:有疑问|的问题|有问题)|"
    r"无法登录(?:账户|账号)?",
    "always_intent": r"(?<![已了])(?<!已经)(?<!已为您)(?<!已帮您)(?<!已给您)"
    r"(?:协助您?|帮助您?)?(?:核实|查看|查询|处理|跟进|了解|解决|恢复)(?:一下)?(?:您的)?"
    r"[^。！？，,]{0,6}",
    "refund_or_cancel": r"(?:您的)?原(?:支付)?(?:账户|方式|渠道|银行卡)|原路",
    "follow_up_reply": r"(?:会|将)有(?:同事|专人|人|客服|专员|工作人员)|"
    r"(?:会|将)?(?:给您|为您|与您)?(?:回电|回复|答复|联系|致电|打电话)(?:您)?|"
    r"(?:通过|用)(?:邮件|短信|电话)",
    "looked": r"(?:已经?|刚刚?)?(?:为您|帮您|给您)?(?:查询|查看|核实|核查|查了|查到|查过|看了)"
    r"(?:了|到|过)?|(?:您的)?账户(?:中|里|下)",
    "open_ticket": r"(?:已经?)?(?:为您|给您|帮您)?(?:创建|建立|提交|开|登记|新建)了?(?:一个|一张)?"
    r"(?:工单|服务单)|工单[^。！？，,]{0,20}?(?:已经?)?(?:创建|建立|提交|登记)(?:成功)?",
    "follow_up": r"(?:我们?)?(?:已经?|已将|已把)?[^。！？，,]{0,10}?"
    r"(?:转交|转给|转达|转接|交给)(?:给)?[^。！？，,]{0,6}?(?:同事|专员|团队|人工|客服|主管)|(?:已经?)?(?:为您)?(?:转人工|升级处理)",
    "change_address": r"(?:已经?)?(?:为您|帮您|给您)?(?:修改|更改|更新|改)了?[^。！？，,]{0,16}?"
    r"(?:收货|配送|送货)?地址|(?:收货|配送|送货)?地址[^。！？，,]{0,4}?(?:已经?)?(?:修改|更改|更新)"
    r"(?:成功)?|(?:将|会)?(?:寄往|送往)",
    "start_refund": r"退款[^。！？，,]{0,20}?(?:已经?)?(?:提交|受理|创建|发起|办理)|"
    r"(?:已经?)?(?:为您|帮您)?(?:提交|发起|办理)了?退款",
    "track_shipment": r"(?:已经?)?由[^。！？，,]{0,20}?(?:配送|承运|派送|运送)",
    "write": r"(?:已经?)?(?:为您|帮您)(?:处理|办理)(?:好|完成)?了?",
}
_EN_BACKED_RES = {k: re.compile(v, re.I) for k, v in _EN_BACKED.items()}
_ZH_BACKED_RES = {k: re.compile(v) for k, v in _ZH_BACKED.items()}
_WRITES = frozenset({"start_refund", "cancel_order", "change_address", "open_ticket"})


#: An auxiliary just before (or 了 just after) a blanked phrase belongs to it.
_EN_AUX = re.compile(
    r"\b(?:has|have|had|was|were|is|are|been|being|be|will|would|should|shall|'ll|got|get|"
    r"'ve|'s|'re|going to)\s+(?:(?:just|already|now|also|not|yet|been|be|still|finally)\s+)*"
    r"(?=[~^])",
    re.I,
)
_ZH_AUX = re.compile(
    r"(?:会有|将有|已经?|刚刚?|就会|将|会|正在|被|在|都|为您|帮您|给您|替您)++(?=[~^])|(?<=[~^])了"
)


def _blank(text: str, pattern: re.Pattern[str], mark: str = _BLANK) -> str:
    return pattern.sub(lambda m: mark * len(m.group(0)), text)


def explained(
    text: str,
    zh: bool,
    values: Iterable[str],
    actions: frozenset[str],
    supported: _Supported,
    intents: bool = True,
) -> str:
    """``text`` with what this turn's facts explain blanked out: the tools' values, the state
    and promise phrases (already verified by the state check) and the backed actions, each
    by ``~``; phrases that carry no fact (an intention, the customer's topic) and auxiliaries
    by ``^`` (:data:`NEUTRAL`). With ``intents`` False the intentions and topics are left as
    they are (their objects may be any words: the allow-list reads them word by word)."""
    for value in sorted((v for v in values if len(v) > 1), key=len, reverse=True):
        # whole words only: the value "no" (not eligible) is no part of "not"
        text = re.sub(r"(?<![A-Za-z0-9])" + re.escape(value) + r"(?![A-Za-z0-9])", _BLANK, text)
    text = re.sub(r"[A-Za-z0-9_./:,$¥€£#+-]*\d[A-Za-z0-9_./:,$¥€£#+-]*", _BLANK, text)
    backed = set(actions) | ({"always", "always_topic", "always_intent"} if intents else set())
    backed |= {"write"} if actions & _WRITES else set()
    backed |= {"refund_or_cancel"} if actions & {"start_refund", "cancel_order"} else set()
    backed |= {"follow_up_reply"} if "follow_up" in actions else set()
    lexicon = _ZH_BACKED_RES if zh else _EN_BACKED_RES
    # the actions that ran, then the verified states, then what carries no fact (an
    # intention's free object must not eat a state: 处理中)
    for name in sorted(backed & lexicon.keys() - _NO_FACT_NAMES):
        text = _blank(text, lexicon[name])
    for state, pattern in ZH_STATE_RES if zh else EN_STATE_RES:
        if state != "unverified" and pattern.pattern not in ARRIVALS and supported(state):
            text = _blank(text, pattern, NEUTRAL if state in _PROMISES else _BLANK)
    for name in sorted(backed & _NO_FACT_NAMES, key=lambda n: n == "always_intent"):
        text = _blank(text, lexicon[name], NEUTRAL)
    for _ in range(2):  # the auxiliaries of what was blanked ("has been ~~~", 已经~~~了)
        text = _blank(text, _ZH_AUX if zh else _EN_AUX, NEUTRAL)
    return text


def _en_marker(clause: str, follow_up: bool) -> str | None:
    if EN_NO_FACT.search(clause):
        return None
    checks: list[re.Pattern[str]] = [_EN_ACCOUNT, _EN_TIME]
    if not EN_EMPATHY.search(clause):
        checks = [_EN_FIRST_PERSON, _EN_EVENT, _EN_SUBJECT_VERB, _EN_PREDICATE, *checks]
    elif re.search(r"\b(?:i|we)\b", clause[6:], re.I):  # "sorry we charged you"
        checks.insert(0, _EN_FIRST_PERSON)
    if follow_up:
        clause = _blank(clause, _EN_VAGUE)
    marker = _first_match(checks, clause)
    if marker is not None or EN_EMPATHY.search(clause):  # "sorry for the trouble this caused"
        return marker
    return next((w for w in _EN_ED.findall(clause) if w.lower() not in _EN_NEUTRAL_ED), None)


def _zh_marker(clause: str, follow_up: bool) -> str | None:
    if ZH_NO_FACT.search(clause):
        return None
    checks: list[re.Pattern[str]] = [_ZH_FIRST_PERSON, _ZH_ACCOUNT, _ZH_TIME]
    if not ZH_EMPATHY.search(clause):
        checks.append(_ZH_EVENT)
    if follow_up:
        clause = _blank(clause, _ZH_VAGUE)
    return _first_match(checks, clause)


def _first_match(patterns: list[re.Pattern[str]], clause: str) -> str | None:
    """What the first of ``patterns`` (in order) that is found in ``clause`` matched, or None."""
    for pattern in patterns:
        match = pattern.search(clause)
        if match:
            return match.group(0)
    return None


def unbacked_assertion(
    text: str, zh: bool, values: Iterable[str], actions: frozenset[str], supported: _Supported
) -> str | None:
    """The first assertion marker in ``text`` that this turn's facts do not explain, or None.

    Args:
        text: One sentence, NFKC-normalised (Chinese folded to Simplified).
        zh: The sentence is Chinese.
        values: The tools' fact values of this turn.
        actions: ``looked`` (a tool ran), each tool name that returned ok, ``follow_up`` (a
            handoff or a ticket this turn).
        supported: Whether this turn's facts support a state (``shipped``, ``not_shipped``,
            ``follow_up``...): only a supported state's words explain a clause.

    Returns:
        The marker (a word or a phrase), or None when the sentence may be shown.
    """
    rest = explained(text, zh, values, actions, supported)
    question = rest.rstrip().endswith(("?", "？")) or bool(re.search(r"[吗呢][。！？?]?$", rest))
    clauses = [c for c in (ZH_CLAUSE if zh else EN_CLAUSE).split(rest) if c.strip(" ~^")]
    follow_up = bool(actions & {"follow_up", "in_transit"})
    for index, clause in enumerate(clauses):
        if question and index == len(clauses) - 1:
            continue
        marker = (_zh_marker if zh else _en_marker)(clause.strip(), follow_up)
        if marker:
            return marker
    return None


#: A verb of a whole English sentence (a finite or common verb, -ed, -ing, a contraction).
_EN_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|being|am|has|have|had|do|does|did|will|would|can|could|"
    r"should|may|might|must|shall|let|please|thank|thanks|hope|need|want|like|know|see|help|"
    r"check|send|reply|contact|follow|ask|tell|use|keep|feel|get|make|take|go|come|look|find|"
    r"contains?|includes?|"
    r"ships?|arrives?|try|wait|enjoy|apologi[sz]e|understand|appreciate|note|continue|share|"
    r"provide|confirm|cancel|refund|change|update|track|shows?|give|stay|remains?|happens?|"
    r"means?|costs?|says?|read|write|sign|log|reach|call|email|visit)\b|"
    r"\w(?:ed|ing|n't|'s|'re|'m|'ll|'ve|'d)\b",
    re.I,
)
#: Verbless openings that make a whole sentence ("Sorry for the trouble.", "Thanks again.").
_EN_VERBLESS_OK = re.compile(
    r"^\W*(?:sorry|thank|thanks|happy|glad|welcome|no problem|of course|certainly|absolutely|"
    r"sure|great|understood|apologies|my apologies|hello|hi|dear|good|best|kind regards|"
    r"with pleasure|all set|done|noted|okay|ok)\b",
    re.I,
)


#: A noun phrase opening a sentence (an imperative opens with its verb: "Expect it…").
_EN_NOUN_START = re.compile(
    r"^\W*(?:your|the|a|an|this|that|these|those|our|my|its|order|refund)\b", re.I
)


def verbless(sentence: str) -> bool:
    """An English sentence of four words or more that opens with a noun phrase and has no verb
    ("Your order ORD-102013 on your account."): a fragment."""
    words = re.findall(r"[A-Za-z']+", sentence)
    return (
        len(words) >= 4
        and bool(_EN_NOUN_START.search(sentence))
        and not _EN_VERB.search(sentence)
        and not _EN_VERBLESS_OK.search(sentence)
    )
