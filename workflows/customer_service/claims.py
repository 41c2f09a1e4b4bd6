"""The claim checker: every sentence the model writes for a customer is checked against this
turn's facts before anyone reads it. The model may choose words, never facts.

A model sentence is kept only when all of these hold (English and Chinese):

* **state**: a statement about an order's or a case's state (shipped, delivered, on its way,
  not shipped, cancelled, refunded, approved, declined... and 已发货, 已送达, 运输中, 未发货,
  已取消, 已退款, 已批准, 被拒绝...) agrees with this turn's tool results and the thread's
  decision (:class:`TurnFacts`). A claim nothing supports is dropped too. Events count as
  the state they tell (money sent back is refunded, a parcel picked up is shipped, a promised
  arrival needs one on its way); another event of an order or refund told in the perfect is
  dropped as unverified.
* **figure**: every id, amount, date, tracking number or count in it is one a tool returned.
* **form**: no field names (``order_id``), placeholders left, JSON or markup, links,
  unbalanced quotes or brackets, repeated phrases, holes (``is  and``), fragments.
* **language**: it is in the customer's language.
* **promise**: a promise of later action (a colleague will look into it / get back to you /
  confirm by email, we will contact you, 会有同事联系您, 我们会尽快回复...) needs a handoff or
  ticket recorded this turn; "nothing more will be charged" (不会再扣费) needs a cancel or
  refund done this turn.
* **unbacked** (fail-safe, :mod:`workflows.customer_service.claim_assertions`): any other
  action done or to be done by us, event, date or time, or account, payment, stock, warranty
  or shipping fact must be explained by this turn's facts and actions; questions, offers,
  requests, conditions, thanks and apologies carry no fact.
* **kind** (:mod:`workflows.customer_service.claim_kinds`): no policy, guarantee, legal status,
  "done", insult, run-down of the shop or a rival, nearness or Chinese relative day unbacked.
* **found**: a sentence that doubts an order a tool found this turn ("Could you check the
  order number?", "I couldn't find that order", 请核对订单号, 查不到该订单) or asks for a fact
  a tool result already holds (the tracking number, the new address) is dropped; doubt stays
  allowed when the tool answered ``not_found`` (:mod:`workflows.customer_service.
  claim_orders`).
* **wants**: "you want a refund" / 您想取消 names something the customer asked for
  ("you don't want" something they refused).
* **intent** (a reply with no tool): it fits the customer's intent; a sentence of another kind
  (thanks for a review, to a fee question) is dropped, and a reply with no sentence on the
  intent's topic is replaced by the intent's template.

A failing sentence is dropped whole (never trimmed) and its reason kept (:attr:`ReplyChecker.
dropped`: the model call's telemetry row, ``model_calls.checks``, and a ``sentence_dropped``
trace event). When nothing is left, code writes the prose (:func:`code_reply`): a template
per tool outcome and intent, English and Chinese.

Home-made rather than a library: this is workflow logic over the project's own tool facts
(the order store's states and fields), and it must cost well under a millisecond a sentence
(``benchmarks/truth.py`` measures it); no NLI or grammar library runs in that budget on CPU.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from orchestrator.textnorm import to_simplified
from workflows.customer_service.claim_allowed import unrecognised
from workflows.customer_service.claim_assertions import explained, unbacked_assertion, verbless
from workflows.customer_service.claim_grammar import ill_formed, language_reason, repeats
from workflows.customer_service.claim_kinds import unsaid_kind
from workflows.customer_service.claim_orders import ORDER_ID, add_orders, asked_or_doubted
from workflows.customer_service.claim_replies import code_reply, cut_reply, outcome_key
from workflows.customer_service.claim_states import EN_STATE_RES, ZH_STATE_RES
from workflows.customer_service.language import Lang

#: Longest model sentence kept (characters), and most model sentences kept per reply.
MAX_SENTENCE_CHARS = 300
MAX_SENTENCES = 3

#: "You want X" / "您想X": what the customer wants, kept only when they asked for it (an
#: "if you would like" offer is no statement).
_EN_WANTS = re.compile(
    r"(?<!if )(?<!whether )\byou(?:'d| would| do| still)?\s+(?:(?:not|n't)\s+)?(?:like|want|"
    r"wish|need|are asking for|asked for|are requesting|requested|are looking to|'re looking to)"
    r"\b|\byou (?:don't|do not|no longer) (?:want|need|wish)\b",
    re.I,
)
_ZH_WANTS = re.compile(
    r"(?<!如果)(?<!若)(?<!如)您(?:不|并不)?(?:想要|想|希望|需要|要求|申请|打算|要)"
)

#: What an order status says about the states a sentence may claim.
_STATUS_STATES: dict[str, frozenset[str]] = {
    "processing": frozenset({"processing"}),
    "shipped": frozenset({"shipped", "in_transit"}),
    "in_transit": frozenset({"shipped", "in_transit"}),
    "out_for_delivery": frozenset({"shipped", "in_transit"}),
    "delivered": frozenset({"shipped", "delivered"}),
    "cancelled": frozenset({"cancelled"}),
}
#: The status a refusal's reason tells ("order is shipped", "delivered over 30 days ago").
_STATUS_IN_REASON = re.compile(
    r"\b(?:is |(?=delivered over))(processing|shipped|delivered|cancelled)\b"
)

# --- figures and form -------------------------------------------------------------------

#: A figure: any run of id/amount/date characters holding a digit.
_FIGURE = re.compile(r"[A-Za-z0-9_./:,$¥€£#+-]*\d[A-Za-z0-9_./:,$¥€£#+-]*")
_EDGE = ".,:;/-#+$¥€£"
_EN_COUNT = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|"
    r"forty|fifty|hundred|thousand|dozen|couple of)\b",
    re.I,
)
_ZH_COUNT = re.compile(
    r"[两二三四五六七八九十百千万]+\s*(?:个|件|天|次|单|笔|元|块|小时|周|星期|月|年|日|分钟)"
)
_FIELD = re.compile(r"\b[a-z]+_[a-z_]+\b|\bORD\b(?!-\d{6})", re.I)
_MARKUP = re.compile(r"[{}\[\]<>`|\\]|\*\*|(?:^|\s)#+\s|\"\s*:|:\s*\"|https?://|www\.|\bnull\b")
_HOLE = re.compile(
    r"\s{2,}|\s[,.;:!?，。；：！？]|[,;:，；：]\s*[.!?。！？]$|\(\s*\)|（\s*）|[,，]\s*[,，]|"
    r"\b(?:the|a|an|of|to|and|by|your)\s*[.!?]$|\b(?:with|at|for)\s*[.!]$|"
    r"(?<!order )(?<!your tracking )(?<!your ticket )(?<!your )\bnumber\s*[.!]$",
    re.I,
)
_PAIRS = (("(", ")"), ("（", "）"), ("“", "”"), ("「", "」"), ("『", "』"), ("《", "》"))
_PLACEHOLDER = re.compile(r"\{(\w{1,40})\}")
_END = ".!?。！？"
#: A sentence ends at ., ! or ? before a space (not inside 59.99), or at 。！？ or a new line.
_BOUNDARY = re.compile(r"(?<=[.!?])\s+|(?<=[。！？])|\n+")

# --- intent -------------------------------------------------------------------------------

#: Words a reply on each intent's topic uses (a no-tool reply must use one).
_TOPIC: dict[str, str] = {
    "billing": r"\b(?:fees?|charge[sd]?|charging|bill|billing|invoice|cost|price)\b|"
    r"费用|收费|扣费|手续费|账单|价格|扣款",
    "payment": r"\b(?:payments?|pay|paid|repay\w*|instal?lments?)\b|付款|支付|还款|分期",
    "account_access": r"\b(?:account|sign in|log ?in|password|locked)\b|账户|账号|登录|密码",
    "card": r"\bcards?\b|卡",
    "refund": r"\brefund\w*|退款|退货",
    "track": r"\b(?:orders?|parcel|package|shipment|delivery|tracking|courier)\b|"
    r"订单|包裹|物流|快递",
    "status": r"\borders?\b|订单",
    "cancel": r"\bcancel\w*|取消",
    "change_address": r"\baddress\b|地址",
    "complaint": r"\b(?:sorry|apologi[sz]e|experience|understand)\b|抱歉|对不起|体验|理解",
    "product_feedback": r"\b(?:feedback|review|thank\w*)\b|评价|反馈|感谢|谢谢",
    "human": r"\b(?:colleague|person|agent|team)\b|同事|人工|客服",
}
_TOPIC_RES = {k: re.compile(v, re.I) for k, v in _TOPIC.items()}
#: A sentence of a kind that answers only one intent: thanks for a review.
_REVIEW_THANKS = re.compile(
    r"\bthank\w*\b[^.!?]*\b(?:review|rating|feedback|kind words)\b|"
    r"(?:感谢|谢谢)您的(?:评价|好评|反馈)",
    re.I,
)
#: Topics a message is about, read by code (the triage of the CPU default model is random).
_MESSAGE_TOPICS: tuple[tuple[str, str], ...] = (
    (
        "human",
        r"\b(?:human|real person|a person|agent|representative|someone real)\b|"
        r"人工|真人|客服人员",
    ),
    (
        # another customer's orders or account (tester7 F7): only the signed-in customer's
        "others",
        r"\b(?:(?:an)?other|different)\s+(?:customer|user|client|account)s?\b|"
        r"\b(?:someone|somebody|anyone|anybody) else'?s\b|\bother people'?s\b|"
        r"\b(?:customer|user|client)\s*(?:id\s*)?#?\s*C\d{5}\b|\b(?:all|every)\s+(?:the\s+)?"
        r"(?:customers?|users?)\b|(?:其他|其它|别的|另一个?|另外的?)(?:客户|用户|顾客|账户|账号)|"
        r"别人的|他人的|(?:客户|用户|顾客)\s*C\d{5}|所有(?:的)?(?:客户|用户|顾客)",
    ),
    (
        "billing",
        r"\b(?:fees?|charged?|charges|billing|bill|invoice|overcharged)\b|"
        r"费用|收费|扣费|手续费|账单|多扣",
    ),
    ("payment", r"\b(?:payments?|repay\w*|instal?lments?|loan|pay)\b|付款|支付|还款|分期|贷款"),
    (
        "account_access",
        r"\b(?:log ?in|sign in|password|locked out|account)\b|登录|登陆|密码|账号|账户",
    ),
    ("card", r"\bcard\b|信用卡|银行卡|卡片"),
    ("refund", r"\brefund\w*|money back|退款|退钱"),
    ("cancel", r"\bcancel\w*|取消"),
    ("change_address", r"\baddress\b|地址"),
    (
        "track",
        r"\b(?:track\w*|where is|parcel|package|delivery|shipping|arrive\w*)\b|"
        r"物流|快递|包裹|到哪|没收到",
    ),
    ("status", r"\borders?\b|订单"),
    (
        "complaint",
        r"\b(?:complain\w*|terrible|awful|angry|disappointed|unacceptable)\b|"
        r"投诉|太差|生气|失望",
    ),
    ("product_feedback", r"\b(?:review|feedback|love it|great product|would buy)\b|评价|好评|反馈"),
)
_MESSAGE_TOPIC = tuple((topic, re.compile(p, re.I)) for topic, p in _MESSAGE_TOPICS)
#: Intents whose code answer restates the customer's trouble (:func:`code_reply`).
_RESTATES = frozenset({"billing", "payment", "account_access", "card"})
#: Triage issue types mapped onto the topics above.
_ISSUE_TOPIC: dict[str, str] = {
    "delivery": "track",
    "order_status": "status",
    "cancellation": "cancel",
}


def message_topic(message: str) -> str | None:
    """The topic of ``message`` read by code (``billing``, ``payment``, ``refund``...), or
    None when no topic word occurs."""
    text = to_simplified(unicodedata.normalize("NFKC", message[:4000]))
    return next((topic for topic, pattern in _MESSAGE_TOPIC if pattern.search(text)), None)


def reply_intent(plan_intent: str | None, message: str, issue_type: str | None) -> str | None:
    """The intent a reply must fit: the workflow's plan, else the message's topic, else the
    triage's issue type."""
    if plan_intent:
        return plan_intent
    topic = message_topic(message)
    if topic:
        return topic
    if issue_type and issue_type != "other":
        intent = _ISSUE_TOPIC.get(issue_type, issue_type)
        # the triage of the CPU default model is random: an answer that restates the
        # customer's trouble ("I see you cannot get into your account") needs its words
        if intent in _RESTATES and not _TOPIC_RES[intent].search(to_simplified(message)):
            return None
        return intent
    return None


# --- the facts a turn may state -------------------------------------------------------------


def _figures(text: str) -> set[str]:
    return {
        norm
        for match in _FIGURE.finditer(unicodedata.normalize("NFKC", text))
        if (norm := match.group(0).strip(_EDGE).upper())
    }


@dataclass(frozen=True)
class TurnFacts:
    """What this turn's tool results and the thread's decision say.

    Attributes:
        figures: Every figure (id, amount, date, tracking number, count) the tools returned,
            upper-cased, edge punctuation stripped (``USD 59.99`` gives ``59.99`` and ``USD``
            is not a figure).
        states: The states a sentence may claim (``shipped``, ``delivered``, ``in_transit``,
            ``processing``, ``cancelled``, ``refunded``, ``approved``, ``declined``,
            ``eligible``).
        known: The order's state is known, so a negated claim ("has not shipped") can be
            judged; without it every negated claim is unsupported.
        values: The tools' fact values (text the language check leaves out).
        wants: Topics (``refund``, ``cancel``, ``change_address``, ``track``...) the customer
            asked for: a "you want X" sentence is kept only for one of these.
        unwanted: Topics the customer refused ("no refund"): "you don't want X" needs one.
        actions: What this turn did, which backs an action told: ``looked`` (any tool
            result), each tool name that returned ok, ``follow_up`` (a handoff or a ticket).
        found: Order ids a tool found this turn (an ok result, or a ``policy`` /
            ``needs_approval`` refusal of an existing order), upper-cased.
        missing: Order ids a tool answered ``not_found`` (``"?"`` when it named none).
        held: Fact names (``order_id``, ``tracking_number``, ``shipping_address``...) an ok
            tool result holds a value for: a sentence asking the customer for one is dropped.
        eta: The estimated delivery date a shipment tool returned ("" when none): a sentence
            may restate it ("is expected to arrive on …"), never predict another arrival.
    """

    figures: frozenset[str] = frozenset()
    states: frozenset[str] = frozenset()
    known: bool = False
    values: tuple[str, ...] = ()
    wants: frozenset[str] = frozenset()
    unwanted: frozenset[str] = frozenset()
    actions: frozenset[str] = frozenset()
    found: frozenset[str] = frozenset()
    missing: frozenset[str] = frozenset()
    held: frozenset[str] = frozenset()
    eta: str = ""

    def supports(self, state: str) -> bool:
        """Whether these facts support a claim of ``state`` (``not_X``: the order's state is
        known and is not X)."""
        if state.startswith("not_"):
            return self.known and state[4:] not in self.states
        return state in self.states

    @classmethod
    def of(
        cls,
        results: Iterable[Mapping[str, Any]],
        decision: str | None = None,
        *,
        handoff: bool = False,
        wants: Iterable[str] = (),
        unwanted: Iterable[str] = (),
    ) -> TurnFacts:
        """From tool results (``{"tool", "ok", "facts", "error_code"}`` each), a person's
        decision on the thread (``approved`` / ``rejected``, or None), whether a handoff was
        recorded for the thread this turn (backs ``follow_up`` promises), and the topics the
        customer asked for and refused."""
        figures: set[str] = set()
        states: set[str] = set()
        known = False
        values: list[str] = []
        actions: set[str] = set()
        orders: dict[str, set[str]] = {"found": set(), "missing": set(), "held": set()}
        for result in results:
            actions.add("looked")
            if result.get("ok"):
                actions.add(str(result.get("tool")))
            facts = {str(k): str(v) for k, v in (result.get("facts") or {}).items()}
            add_orders(orders, result, facts)
            values.extend(v for v in facts.values() if v)
            for value in facts.values():
                figures |= _figures(value)
            if result.get("error_code") == "not_confirmed":  # no refusal to back (F13)
                continue
            found, knows = _result_states(str(result.get("tool")), bool(result.get("ok")), facts)
            states |= found
            known = known or knows
        if decision == "approved":
            states.add("approved")
        elif decision == "rejected":
            states.add("declined")
        if handoff:
            states.add("follow_up")
        actions |= states & {"follow_up", "in_transit"}
        return cls(
            frozenset(figures),
            frozenset(states),
            known,
            tuple(values),
            frozenset(wants),
            frozenset(unwanted),
            frozenset(actions),
            frozenset(orders["found"]),
            frozenset(orders["missing"]),
            frozenset(orders["held"]),
            next((v for r in results for k, v in _ok_facts(r) if k == "estimated_delivery"), ""),
        )


def _ok_facts(result: Mapping[str, Any]) -> list[tuple[str, str]]:
    """The ``(name, value)`` facts of an ok result, empty values left out."""
    facts = (result.get("facts") or {}) if result.get("ok") else {}
    return [(str(k), str(v)) for k, v in facts.items() if v]


def _result_states(tool: str, ok: bool, facts: Mapping[str, str]) -> tuple[set[str], bool]:
    """(states, whether the order's state is known) from one tool result."""
    status = facts.get("status", "")
    if not ok:
        reason = _STATUS_IN_REASON.search(facts.get("reason", ""))
        found = set(_STATUS_STATES.get(status or (reason.group(1) if reason else ""), ()))
        known = bool(found)
        if facts.get("reason") or facts.get("eligible") == "no":  # a refusal, not a wait
            found.add("declined")
        return found, known
    if tool == "lookup_order":
        found = set(_STATUS_STATES.get(status, ()))
        if _figures(facts.get("refunded", "")) - {"0.00"}:
            found.add("refunded")
        return found, bool(found)
    if tool == "track_shipment":
        return set(_STATUS_STATES.get(facts.get("shipment_status", ""), ())), True
    none_due = facts.get("refund_count") == "0" and facts.get("eligible") == "no"
    if tool == "check_refund_eligibility" and none_due:  # a status read: no refund, none due
        reason = _STATUS_IN_REASON.search(facts.get("reason", ""))
        found = set(_STATUS_STATES.get(reason.group(1) if reason else "", ()))
        return found, bool(found)
    if tool == "check_refund_eligibility":  # the refunds it lists are facts too (F24)
        approved = any(k.endswith("_status") and v == "approved" for k, v in facts.items())
        found = {"shipped", "delivered"} | ({"refunded", "approved"} if approved else set())
        return found | ({"eligible"} if facts.get("eligible") != "no" else set()), True
    if tool == "start_refund":
        return {"refunded", "approved", "eligible", "shipped", "delivered", "no_charge"}, True
    if tool == "cancel_order":
        return {"cancelled", "no_charge"}, True
    if tool == "open_ticket":
        return {"follow_up"}, False
    if tool == "change_address":
        return {"processing", "approved"}, True
    return set(), False


# --- one sentence -----------------------------------------------------------------------


_CLAUSE = re.compile(r"[,，;；:：]|\s(?:and|but|while)\s|而且|并且|但是?")


def _claims(sentence: str, lang: Lang) -> list[str]:
    """The state claims in ``sentence`` (``not_X`` for a negated one), and ``unverified``
    when a clause tells an event of the order, parcel or refund in no state the checker
    knows ("退款也已经办好了" beside a true "订单已发货")."""
    text = to_simplified(sentence) if lang == "zh" else sentence
    patterns = ZH_STATE_RES if lang == "zh" else EN_STATE_RES
    known = [(state, pattern) for state, pattern in patterns if state != "unverified"]
    found = _known_claims(text, known)
    event = next(pattern for state, pattern in patterns if state == "unverified")
    if any(event.search(c) and not _known_claims(c, known) for c in _CLAUSE.split(text)):
        found.append("unverified")
    return found


def _known_claims(text: str, patterns: Sequence[tuple[str, re.Pattern[str]]]) -> list[str]:
    found: list[str] = []
    for state, pattern in patterns:
        if pattern.search(text):
            found.append(state)
            text = pattern.sub(lambda m: " " * len(m.group(0)), text)
    return found


_PROMISE_REASON = {
    "follow_up": "promise: says someone will follow up, but no handoff or ticket was recorded",
    "no_charge": "promise: says nothing more will be charged, but no write was done",
}


def _wants_reason(sentence: str, lang: Lang, facts: TurnFacts) -> str | None:
    """A "you want X" sentence whose X the customer did not ask for (or refuse)."""
    text = to_simplified(sentence) if lang == "zh" else sentence
    if text.endswith(("?", "？")):  # "Would you like me to…?" asks, it does not state
        return None
    match = (_ZH_WANTS if lang == "zh" else _EN_WANTS).search(text)
    if match is None:
        return None
    topic = message_topic(text[match.end() : match.end() + 60])
    if topic is None:
        return None
    negated = bool(re.search(r"n't|\bnot\b|\bno longer\b|不", match.group(0), re.I))
    if topic not in (facts.unwanted if negated else facts.wants):
        return f"wants: says the customer {'refuses' if negated else 'wants'} {topic}, they did not"
    return None


#: The last clause of a question offering to act ("Would you like me to check whether it can
#: be refunded?", 需要我帮您看看是否可以退款吗？): it asks, so the states it names are not claimed.
_OFFER_QUESTION = re.compile(
    r"(?:^|[,，;；]\s*)(?:would you like|do you want|shall i|should i|can i|may i|want me to|"
    r"需要我|是否需要|要不要|您是否需要|您需要我|您想)[^,，;；]*[?？]\s*$",
    re.I,
)


def _state_reason(sentence: str, lang: Lang, facts: TurnFacts) -> str | None:
    sentence = _OFFER_QUESTION.sub(" ", sentence)
    for claim in _claims(sentence, lang):
        if claim in _PROMISE_REASON:
            if claim not in facts.states:
                return _PROMISE_REASON[claim]
            continue
        if claim == "unverified":  # unless it is an action this turn did ("已为您查询订单")
            if _unbacked_reason(sentence, lang, facts):
                return "state: tells an event of the order or refund that no tool result states"
            continue
        if claim.startswith("not_"):
            if not facts.known or claim[4:] in facts.states:
                return f"state: says {claim.replace('_', ' ')}, the tools do not"
        elif claim not in facts.states:
            return f"state: says {claim.replace('_', ' ')}, the tools do not"
    return None


def text_of(sentence: str, lang: Lang) -> str:
    """``sentence`` as the checks read it (Chinese folded to Simplified)."""
    return to_simplified(sentence) if lang == "zh" else sentence


def _found_reason(sentence: str, lang: Lang, facts: TurnFacts) -> str | None:
    """A sentence that doubts an order a tool found (asks to check its number, says it
    could not be found), or asks for a fact a tool result holds (:mod:`workflows.
    customer_service.claim_orders`)."""
    read = asked_or_doubted(text_of(sentence, lang), lang == "zh")
    if read is None:
        return None
    how, name = read
    if name != "order_id":
        if name not in facts.held:
            return None
        return f"found: asks for the {name.replace('_', ' ')}, a tool result holds it"
    found = facts.found - facts.missing
    named = {match.upper() for match in ORDER_ID.findall(sentence)}
    hit = named & found if named else (found if not facts.missing else frozenset())
    if not hit:
        return None
    return f"found: {how}s order {min(hit)} (its number), which a tool found this turn"


def _unbacked_reason(sentence: str, lang: Lang, facts: TurnFacts) -> str | None:
    """A kind the model may not say (a policy, a guarantee, an insult...: :mod:`.claim_kinds`),
    or an action, event, date or account fact that this turn's facts do not show."""
    text, zh = _eta_told(text_of(sentence, lang), facts.eta), lang == "zh"
    said = unsaid_kind(text, zh, facts.values, facts.actions)
    if said is not None:
        return f"kind: {said[0]} no tool result backs ({said[1]!r})"
    marker = unbacked_assertion(text, zh, facts.values, facts.actions, facts.supports)
    if marker is None:
        return None
    return (
        f"unbacked: tells an action, event, date or account fact no tool result shows ({marker!r})"
    )


def _eta_told(text: str, eta: str) -> str:
    """``text`` with a restated estimated delivery ("is expected to arrive on 2026-12-08",
    预计2026-12-08送达) left as the bare date: the tool's own estimate, so no prediction."""
    if not eta:
        return text
    date = re.escape(eta)
    return re.sub(
        r"\b(?:(?:is|are|it's)\s+)?(?:(?:now\s+)?(?:expected|estimated|due|scheduled)\s+"
        r"(?:to\s+(?:arrive|be\s+delivered|reach\s+you|be\s+with\s+you)\s+)?|(?:the\s+)?"
        r"(?:estimated\s+)?(?:delivery|arrival)\s+(?:date\s+)?(?:is\s+)?)(?:on\s+|by\s+|for\s+)?"
        + date
        + r"|预计(?:于|在)?\s*"
        + date
        + r"\s*(?:前|之前|左右)?(?:送达|到达|送到|到货)?",
        eta,
        text,
        flags=re.I,
    )


def _allowed_reason(sentence: str, lang: Lang, facts: TurnFacts) -> str | None:
    """The safe default: a sentence none of whose clauses is a kind the model may say
    (:mod:`.claim_allowed`: a fact of this turn, courtesy, a question back, an offer, a next
    step taken), or that uses a word outside the checker's vocabulary."""
    text, zh = _eta_told(text_of(sentence, lang), facts.eta), lang == "zh"
    text = text.replace("?", "？") if zh else text  # a blanked phrase may not swallow it
    wants = (_ZH_WANTS if zh else _EN_WANTS).search(text)
    if wants and message_topic(text[wants.end() : wants.end() + 60]) is not None:
        text = text[: wants.start()] + "~" + text[wants.end() :]  # checked by _wants_reason
    rest = explained(text, zh, facts.values, facts.actions, facts.supports, intents=False)
    why = unrecognised(rest, zh, facts.values, "follow_up" in facts.actions)
    return None if why is None else f"unrecognised: {why}"


def _figure_reason(sentence: str, lang: Lang, facts: TurnFacts) -> str | None:
    unknown = sorted(_figures(sentence) - facts.figures)
    if unknown:
        return f"figure: {unknown[0][:40]} is not in the tool results"
    count = (_ZH_COUNT if lang == "zh" else _EN_COUNT).search(sentence)
    if count:
        return f"figure: the count {count.group(0)!r} is not in the tool results"
    return None


def _form_reason(sentence: str, lang: Lang) -> str | None:
    for name, pattern in (("field name", _FIELD), ("markup or JSON", _MARKUP), ("hole", _HOLE)):
        match = pattern.search(sentence)
        if match:
            return f"broken: {name} {match.group(0)[:30]!r}"
    if sentence.count('"') % 2 or any(sentence.count(a) != sentence.count(b) for a, b in _PAIRS):
        return "broken: unbalanced quotes or brackets"
    if repeats(sentence, lang):
        return "broken: a repeated phrase"
    first = sentence[0]
    if lang == "en" and not (first.isupper() or first.isdigit() or first in "\"“'"):
        return "broken: a fragment (starts mid-sentence)"
    if lang == "zh" and unicodedata.category(first).startswith("P"):
        return "broken: a fragment (starts with punctuation)"
    if sentence[-1] not in _END:
        return "broken: an unfinished sentence"
    if lang == "en" and verbless(sentence):  # "Your order ORD-102013 on your account."
        return "broken: a fragment (no verb)"
    return ill_formed(sentence, lang)


def check_sentence(sentence: str, facts: TurnFacts, lang: Lang) -> str | None:
    """Why ``sentence`` may not be shown, or None when it may.

    Args:
        sentence: One model sentence, placeholders already filled (:meth:`ReplyChecker.fill`).
        facts: This turn's facts.
        lang: The customer's language.

    Returns:
        The reason, prefixed by its kind (``state:``, ``figure:``, ``broken:``,
        ``language:``, ``promise:``, ``found:``, ``kind:``, ``unbacked:``, ``wants:``,
        ``unrecognised:``), or None.
    """
    text = unicodedata.normalize("NFKC", sentence).strip()
    if not text:
        return "broken: empty"
    if len(text) > MAX_SENTENCE_CHARS:
        return f"broken: over {MAX_SENTENCE_CHARS} characters"
    return (
        language_reason(text, lang, facts.values)
        or _form_reason(text, lang)
        or _figure_reason(text, lang, facts)
        or _state_reason(text, lang, facts)
        or _found_reason(text, lang, facts)
        or _unbacked_reason(text, lang, facts)
        or _wants_reason(text, lang, facts)
        or _allowed_reason(text, lang, facts)
    )


#: States that tell the same fact twice (a refund approved is the refund told as done).
_SAME = {"refunded": "approved", "in_transit": "shipped"}


def restates(sentence: str, said: str, lang: Lang) -> bool:
    """Whether ``sentence`` (a statement) only repeats states and figures that ``said``, the
    text code already wrote above the prose, tells ("Your refund has been approved." under
    "Refund RF-000010 … is approved."): shown twice, the reply repeats itself."""
    if not said or sentence.rstrip().endswith(("?", "？")):
        return False
    claims = {_SAME.get(c, c) for c in _claims(sentence, lang)} - {"unverified"}
    figures = _figures(sentence)
    if not claims and not figures:
        return False
    return claims <= {_SAME.get(c, c) for c in _claims(said, lang)} and figures <= _figures(said)


def topic_fits(sentence: str, intent: str | None) -> bool:
    """True when ``sentence`` is on ``intent``'s topic (always, for no known intent)."""
    pattern = _TOPIC_RES.get(intent or "")
    return pattern is None or bool(pattern.search(to_simplified(sentence)))


def off_intent(sentence: str, intent: str | None) -> bool:
    """True when ``sentence`` is of a kind that answers another intent (thanks for a review,
    to anything but feedback)."""
    return intent not in ("product_feedback", None) and bool(_REVIEW_THANKS.search(sentence))


# --- a streamed reply -----------------------------------------------------------------------


@dataclass
class ReplyChecker:
    """Checks a streamed model reply one sentence at a time.

    Args:
        facts: This turn's facts.
        lang: The customer's language.
        placeholders: Placeholder name → value, from tool results (``{order_id}`` is filled
            before the check).
        intent: With ``require_topic``, the intent the reply must fit.
        require_topic: A reply with no tool: a sentence of another intent's kind is dropped;
            with ``hold``, sentences are also held until one is on the intent's topic, and
            when none is, the reply is dropped (``off intent``) and code writes it.
        hold: See ``require_topic`` (False when code already answered the intent).
        on_drop: Called with ``(reason, sentence)`` for each dropped sentence.
        said: What code wrote above the prose (the facts): a model sentence that only
            repeats it is dropped (:func:`restates`).

    ``feed(piece)`` returns the sentences that may be shown now; ``flush()`` those left at the
    end (an unfinished last sentence is dropped). ``dropped`` holds ``{"reason",
    "sentence"}`` per dropped sentence (the sentence cut to 200 characters).
    """

    facts: TurnFacts
    lang: Lang
    placeholders: Mapping[str, str] = field(default_factory=dict)
    intent: str | None = None
    require_topic: bool = False
    hold: bool = True
    on_drop: Callable[[str, str], None] | None = None
    said: str = ""
    dropped: list[dict[str, str]] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    _buffer: str = ""
    _held: list[str] = field(default_factory=list)
    _on_topic: bool = False

    def fill(self, sentence: str) -> str:
        """``sentence`` with each known ``{placeholder}`` filled (unknown ones stay, so the
        form check drops the sentence)."""
        return _PLACEHOLDER.sub(lambda m: self.placeholders.get(m.group(1)) or m.group(0), sentence)

    def feed(self, piece: str) -> list[str]:
        """Add streamed text; return the checked sentences that may be shown now."""
        self._buffer += piece
        parts = _BOUNDARY.split(self._buffer)
        self._buffer = parts.pop()
        return self._release(parts)

    def flush(self) -> list[str]:
        """The last sentences, checked; a reply with no sentence on its topic is dropped."""
        rest, self._buffer = self._buffer, ""
        out = self._release([rest])
        if self.require_topic and self.hold and not self._on_topic:
            for sentence in self._held:
                self._drop("intent: no sentence answers the customer's question", sentence)
            self._held = []
        return out

    def _drop(self, reason: str, sentence: str) -> None:
        self.dropped.append({"reason": reason, "sentence": sentence[:200]})
        if self.on_drop is not None:
            self.on_drop(reason, sentence)

    def _release(self, parts: Sequence[str]) -> list[str]:
        out: list[str] = []
        for part in parts:
            sentence = self.fill(part.strip())
            if not sentence:
                continue
            reason = check_sentence(sentence, self.facts, self.lang)
            if reason is None and sentence in self.kept + out + self._held:
                reason = "broken: a repeated sentence"
            if reason is None and restates(sentence, self.said, self.lang):
                reason = "broken: repeats the facts the reply already states"
            if reason is None and len(self.kept) + len(out) + len(self._held) >= MAX_SENTENCES:
                reason = f"broken: over {MAX_SENTENCES} sentences"
            if reason is None and self.require_topic and off_intent(sentence, self.intent):
                reason = "intent: answers another kind of question"
            if reason is not None:
                self._drop(reason, sentence)
                continue
            if self.require_topic and self.hold and not self._on_topic:
                self._held.append(sentence)
                if not topic_fits(sentence, self.intent):
                    continue
                self._on_topic = True
                out.extend(self._held)
                self._held = []
            else:
                out.append(sentence)
        self.kept.extend(out)
        return out


#: Code's own replies live in :mod:`.claim_replies`; re-exported for the callers of this module.
__all__ = [
    "MAX_SENTENCES",
    "ReplyChecker",
    "TurnFacts",
    "check_sentence",
    "code_reply",
    "cut_reply",
    "message_topic",
    "outcome_key",
    "reply_intent",
    "restates",
    "text_of",
]
