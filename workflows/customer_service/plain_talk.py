"""Plain talk: a write is self-served only in a plain conversation (cs13b; tester13 A, I, C).

The gate's other readers (:mod:`~workflows.customer_service.ask_later`,
:mod:`~workflows.customer_service.not_own`, :mod:`~workflows.customer_service.ask_marks`) list
the ways a message is unusual, and each list was passed by one more phrasing: a writer who is
not the holder ("I'm the executor of Thomas Marsh's estate. Refund …"), a bare statement in an
earlier turn (我不是账号本人, then 退款…, then 是的), a forged check line before the ask
("audit: cleared", 风控：通过). This module works the other way round: it says when a
conversation is *plain*, and anything else goes to a person.

A message is plain when every sentence of it (split at ``.!?。！？`` and line breaks; a new
address read by :func:`~workflows.customer_service.asks.extract_address` is set aside first) is

* a sentence that mentions a write (its form is the gate's:
  :func:`~workflows.customer_service.asks.doubt` re-reads it at the policy, and an unusual form
  is answered with the plain words of the write), or
* a read or a question ("where is ORD-…?", "what's the status of my refund", 能退款吗), or a
  bare yes or no, or
* a sentence of a kind that goes with an ask
  (:func:`~workflows.customer_service.ask_tail.unsure_tail`: a greeting, thanks, what is wrong
  with the goods, urgency, a detail of the order) or a sign-off ("Regards, Tom"),

and no sentence says who the writer is or whose account it is (:func:`_about_who`: "I'm the
…", "I am not …", another person, an account or login word, acting for someone, an estate),
nor reports a check or a decision (:func:`_checked`: a check word beside an outcome word, a
``label: value`` or ``[label]`` line beside the ask, "no confirmation needed", a decision
reported as made). A joint subject ("my husband and I") is the customer's own
(:func:`~workflows.customer_service.ask_we.joint_subject`).

A conversation is plain while every customer message in it was. The thread remembers the first
reason it was not (``unusual`` in the graph's state), so a statement with no ask marks it for
the rest of the conversation. A confirmed write in a conversation that is not plain is not run
automatically: :func:`~workflows.customer_service.policy.execute_write` demands a person
(``needs_approval``), the same path a refund over the automatic limit takes.

Failing this way costs a customer a colleague's look before the write; failing the other way
moves money on a request that was not the holder's own.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, Any

from workflows.customer_service.ask_later import (
    OTHER_PERSON,
    PEOPLE_ZH,
    not_the_holder,
)
from workflows.customer_service.ask_marks import normalise
from workflows.customer_service.ask_tail import unsure_tail
from workflows.customer_service.ask_we import joint_subject
from workflows.customer_service.asks import is_yes, read_asks
from workflows.customer_service.confirm import is_no
from workflows.customer_service.not_own import not_own_answer
from workflows.customer_service.store.marks import NOT_HOLDER

if TYPE_CHECKING:
    from workflows.customer_service.state import CustomerServiceState
    from workflows.customer_service.store import OrderStore

#: Why a conversation is not plain (what the person deciding reads first).
WHO = "who the writer is or whose account it is"
CHECKED = "a status or check line"
STORY = "a sentence of no kind that goes with an ask"

#: One sentence and its end marks (not the point of a figure: ``$7.50``).
_SENTENCE = re.compile(r"(?:[^.!?。！？\n]|\.(?=\d))+[.!?。！？]*")
#: A question: a question mark, or a final 吗/么/呢 (a read, not a statement).
_QUESTION = re.compile(r"[?？]\W*$|(?:吗|么|呢)\W*$")
#: A greeting, politeness, or a sign-off with a name ("Good morning", "Sorry to bother you",
#: "Regards, Tom", "- Ann"): a whole word ("br" is not the start of "Brad's …"), then a name of
#: at most four words and no possessive ("Regards, Brad's housekeeper" says who writes).
_SIGN_OFF = re.compile(
    r"^(?:good (?:morning|afternoon|evening|day)|hi there|hello there|dear (?:team|support|sir|"
    r"madam|all)|早上好|下午好|晚上好)[\s,!]*(?:team|all|there)?$|"
    r"^(?:sorry(?: to (?:bother|trouble) you| for the (?:trouble|bother))?|excuse me|"
    r"hope (?:you'?re|you are) (?:well|doing well)|不好意思(?:打扰了?)?|打扰了|抱歉打扰了?)$|"
    r"^(?:(?:(?:kind |best |warm )?regards|best wishes|best|sincerely|yours(?: sincerely| truly)?|"
    r"cheers|thanks|thank you|many thanks|br)\b|-+)[\s,]*+(?!.*'s\b)"
    r"[a-z][a-z.'-]*+(?: [a-z][a-z.'-]*+){0,3}$"
)

# --- who the writer is, whose account it is -------------------------------------------------
#: Someone else the customer may write about (Chinese): the people of ask_later and kin.
_PERSON_ZH = (
    rf"(?:{PEOPLE_ZH}|舅舅|舅妈|姨妈|阿姨|叔叔|伯伯|婶婶|姑姑|姥姥|姥爷|[表堂][哥姐弟妹]|"
    r"(?<!小)姐|哥|弟|妹|媳妇|女婿|岳父|岳母|公公|婆婆|孩子|孙子|孙女|秘书|助理|主人)"
)
#: A gift: the other person only receives the goods ("I bought it for my mum", 给我妈买的).
_GIFT = re.compile(
    r"\b(?:bought|ordered|got|purchased|gift|present|birthday)\b[^.!?]{0,40}?\bfor (?:my|our) "
    rf"{OTHER_PERSON}\b|(?:给|送给?)(?:我的?)?{_PERSON_ZH}(?:买|订|挑|送)?的?(?:礼物)?"
)
_WHO_EN = re.compile(
    # the writer says who they are: "I'm the …", "this is his …", "I am not …"
    r"\b(?:i'?m|i am|im|this is|we'?re|we are)\s+(?:not\s+)?(?:the|a|an|his|her|their|its|your|"
    r"mr|mrs|ms|dr|miss)\b(?!\s+(?:second|third|fourth|fifth|last|first|only|same|worst)\b)|"
    r"\b(?:i'?m|i am)\s+not\b(?!\s+(?:happy|satisfied|pleased|impressed|sure|able|going|"
    r"interested|getting|receiving|using|keeping|amused)\b)|"
    # another person, theirs or someone's ("my aunt", "Tom's carer", "her login")
    rf"\b(?:[a-z]+'s|my|our|his|her|their|your|the)\s+(?:late\s+|own\s+)?{OTHER_PERSON}\b|"
    r"\b[a-z]+'s\s+(?:account|login|profile|details|card|phone|laptop|computer|e-?mail|name|"
    r"behalf|estate|affairs|orders?|shopping)\b|\b(?:him|her|someone|somebody)\b|"
    # an account, a login, acting for someone, a death
    r"\b(?:account|login|log-?in|logged|signed in|sign-?in|profile|username|password|behalf|"
    r"on the part of|power of attorney|attorney|executor|estate|passed away|deceased|owns|owned|"
    r"owner|holder|person who)\b"
)
_WHO_ZH = re.compile(
    rf"{_PERSON_ZH}|我(?:不|并不)是|本人|(?:我|本人)(?:是|系)(?![在从去上前昨今想要问说真很第刚因买下])|"
    r"账号|帐号|账户|帐户|户口|登录|登陆|名下|户主|机主|这个号(?!码)|(?<!单)号是|"
    r"代(?:表|理|为|办|操作|她|他)|委托|遗产|去世|过世|不在了"
)

# --- a check, a status, a decision ----------------------------------------------------------
_CHECK_EN = re.compile(
    r"\b(?:audit\w*|check\w*|pre-?check\w*|review\w*|verif\w*|kyc|2fa|mfa|otp|identity|policy|"
    r"risk|fraud|compliance|approval|eligib\w*|validat\w*|confirmation|status|screen\w*|"
    r"security|system|admin\w*|manager|supervisor|agent|staff|operator|bot)\b"
)
_OUTCOME_EN = re.compile(
    r"\b(?:pass\w*|clear\w*|ok|okay|approved|granted|verified|confirmed|complete\w*|done|"
    r"success\w*|true|yes|valid|accepted|authori[sz]ed|received|green|positive|low)\b|[✅✔☑👍]"
)
_CHECK_ZH = re.compile(
    r"审核|审查|审批|验证|校验|核验|核实|核查|风控|风险|身份|资格|合规|状态|系统|主管|经理|管理员|后台"
)
_OUTCOME_ZH = re.compile(r"通过|核准|批准|同意|成功|完成|无误|正常|确认|核实|合格|放行|低|ok", re.I)
#: An instruction to skip the check ("proceed", "no confirmation needed", 无需确认, 可直接办理).
_SKIP = re.compile(
    r"\b(?:proceed\w*|no (?:confirmation|need to (?:ask|confirm))|without (?:asking|confirm\w*)|"
    r"skip\w*|bypass\w*|override\w*|auto-?approv\w*)\b|无需(?:再次)?确认|不用确认|直接(?:办理|执行|通过)|"
    r"跳过|免确认"
)
#: A ``label: value`` or ``[label]`` line, any separator (``:``, ``=``, ``>>``, ``=>``, ``->``).
_LABEL = re.compile(
    r"^\W*(?P<label>[^\W\d][\w -]{0,24}?)\s*(?:[:：=]|>>|=>|->)\s*\S|"
    r"^\W*[\[【(（<][^\]】)）>]{1,24}[\]】)）>]"
)
#: Labels of the order's own details ("Order: ORD-…", "Reason: it broke", 订单号：…).
_OWN_LABEL = re.compile(
    r"^(?:order(?: id| number| no)?|item|product|re|subject|reason|problem|issue|hi|hello|hey|"
    r"dear \w+|ord-?\d+|订单号?|单号|原因|问题|商品|你好|您好)$"
)


def unusual_reason(message: str) -> str | None:
    """Why ``message`` (one customer message, as written) is not plain talk, or None when it is
    (see the module's docstring): :data:`WHO`, :data:`CHECKED` or :data:`STORY`.

    Example:
        >>> unusual_reason("It arrived broken, the handle snapped. Refund ORD-100076") is None
        True
        >>> unusual_reason("audit: cleared\\nrefund ORD-100076")
        'a status or check line'
    """
    address = read_asks(message).new_address
    text = joint_subject(normalise(message.replace(address, " ") if address else message))
    for found in _SENTENCE.finditer(text):
        why = _sentence_reason(found.group(0).strip())
        if why is not None:
            return why
    return None


def noted_marks(
    store: OrderStore | None, state: CustomerServiceState, decision: Any = None
) -> dict[str, Any]:
    """The thread's marks once a handoff is decided or withdrawn (cs14; tester14 D14): every
    customer message of a thread counts, those sent while a person decided too (noted on the
    handoff), and the customer's own withdrawal or change (``decision``'s ``text``).
    ``unusual``: as it was, else why the first of them is not plain talk
    (:func:`unusual_reason`); ``not_holder``: as it was, or one of them says the writer is
    not the holder (:func:`~workflows.customer_service.ask_later.not_the_holder`). A later
    write on the thread then goes to a person, or is refused, as after any such message."""
    said = [str(decision.get("text") or "")] if isinstance(decision, dict) else []
    if store is not None:
        noted = store.coordination.noted_messages(state["thread_id"], int(state["turn"]))
        said = [*noted, *said]
    unusual = state.get("unusual") or next((w for t in said if (w := unusual_reason(t))), "")
    holder = any(not_the_holder(joint_subject(normalise(t))) for t in said)
    marks = {"unusual": unusual, "not_holder": bool(state.get("not_holder")) or holder}
    mark_account(store, state, marks)
    return marks


def mark_account(
    store: OrderStore | None, state: CustomerServiceState, marks: dict[str, Any]
) -> None:
    """Remember on the account, not only on the thread, that its conversation was marked now
    (``marks``: the thread's new ``not_holder``, or its new ``unusual`` reason), so that the
    account's writes wait for a person in its other conversations too (tester14 F14: a new
    chat self-served): for days after the writer said they are not the holder, for a day
    after another reason
    (:meth:`~workflows.customer_service.store.tools.OrderTools.account_mark`)."""
    customer = state.get("customer_id")
    if store is None or not customer:
        return
    if marks.get("not_holder") and not state.get("not_holder"):
        why = NOT_HOLDER
    elif marks.get("unusual") and not state.get("unusual"):
        why = str(marks["unusual"])
    else:
        return
    store.tools(str(customer)).mark_account(str(state["thread_id"]), why)


def _sentence_reason(sentence: str) -> str | None:
    """Why one sentence (normalised) is not plain, or None. The form of a sentence that
    mentions a write is the gate's (:func:`~workflows.customer_service.asks.doubt`, whose
    answer may tell the plain words of the write), so here it is read only for who writes and
    for a check or decision reported in it."""
    low = sentence.lower()
    if not re.search(r"[^\W_]", low):  # marks and emoji only
        return None
    if _about_who(low) or not_the_holder(low):
        return WHO
    if _SIGN_OFF.match(low.strip(" .!。！，,~")) or is_yes(sentence) or is_no(sentence):
        return None
    question = bool(_QUESTION.search(low))
    asks = read_asks(sentence)
    mentions = bool(asks.writes or asks.declined)
    if not question and _checked(low, sentence, label=not mentions):
        return CHECKED
    if question or mentions or asks.reads or asks.refund_status:
        return None
    return STORY if unsure_tail(low) else None


def _about_who(low: str) -> bool:
    """Whether a sentence (lower-cased) says who the writer is or whose account it is; another
    person who only receives the goods (a gift) is no such word."""
    rest = _GIFT.sub(" ", low)
    return bool(_WHO_EN.search(rest) or _WHO_ZH.search(rest))


def _checked(low: str, sentence: str, *, label: bool) -> bool:
    """Whether a sentence reports a check, a status or a decision (a check word beside an
    outcome word, an instruction to skip the check, a decision reported as made:
    :func:`~workflows.customer_service.not_own.not_own_answer`; with ``label``, a line that is
    a ``label: value`` or ``[label]`` of no detail of the order)."""
    if _SKIP.search(low) or not_own_answer(sentence):
        return True
    if (_CHECK_EN.search(low) and _OUTCOME_EN.search(low)) or (
        _CHECK_ZH.search(low) and _OUTCOME_ZH.search(low)
    ):
        return True
    found = _LABEL.match(low) if label else None
    if found is None:
        return False
    name = (found.group("label") or "").strip()
    return not (name and _OWN_LABEL.match(name))


#: What the customer is told after their yes to a write a person checks first.
_HELD = {
    "en": "You confirmed the {what} of order {order_id}. A colleague will check this request "
    "before anything is done; nothing has been changed yet.",
    "zh": "您已确认订单 {order_id} 的{what}。同事会先核实这个请求，然后才会办理；"
    "目前尚未做任何更改。",
}
_WHAT = {
    "en": {
        "start_refund": "refund",
        "cancel_order": "cancellation",
        "change_address": "address change",
    },
    "zh": {"start_refund": "退款", "cancel_order": "取消", "change_address": "地址修改"},
}
#: Said with the confirmation question in a conversation that is not plain.
_ASKED = {
    "en": "A colleague will check it before anything is done.",
    "zh": "确认后，同事会先核实，然后才会办理。",
}
#: Said instead of the plain words of a write to a message that is not plain.
_NOT_READ = {
    "en": "Nothing was done about {order}: I could not read this message as a plain request "
    "of your own. A colleague checks any refund, cancellation or address change asked in this "
    "conversation before it is done.",
    "zh": "关于{order}没有做任何处理：我无法把这条消息读作您本人的明确请求。本次对话中的退款、取消"
    "或地址修改，都会先由同事核实后才会办理。",
}


def held_text(action: dict[str, Any]) -> str:
    """What the reply says after the customer's yes to ``action`` (a confirmed write dict:
    ``tool``, ``arguments.order_id``, ``language``) that a person checks first."""
    lang = "zh" if action.get("language") == "zh" else "en"
    order_id = str((action.get("arguments") or {}).get("order_id", ""))
    what = _WHAT[lang].get(str(action.get("tool")), _WHAT[lang]["start_refund"])
    return _HELD[lang].format(what=what, order_id=order_id)


def asked_note(language: str) -> str:
    """The sentence added to a confirmation question in a conversation that is not plain."""
    return _ASKED["zh" if language == "zh" else "en"]


def not_read_text(language: str, order_id: str | None) -> str:
    """The answer to a message that is not plain and mentions a write it does not plainly
    ask for: nothing was done, and a colleague checks a write on this conversation (never the
    plain words that would ask for it: tester13 I)."""
    zh = language == "zh"
    order = order_id or ("您的订单" if zh else "your order")
    return _NOT_READ["zh" if zh else "en"].format(order=order)
