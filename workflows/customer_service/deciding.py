"""The ``decide`` node's code: the turn's one tool, a clarifying question, or a handoff.

A write tool is picked only from what the customer asked for in their own words
(:func:`~workflows.customer_service.asks.read_asks`): never from keyword rank, never from the
triage (which may pick read tools only). Two intents, one of them a write, get a question
back, not the money-moving one. Split out of :mod:`workflows.customer_service.graph`
(issue 48).
"""

from __future__ import annotations

import re
from typing import Any

from orchestrator.routes import FALLBACK
from skills import IssueTriage
from skills.reply import NOT_CONFIRMED
from workflows.customer_service import confirm as confirming
from workflows.customer_service.ask_later import not_the_holder
from workflows.customer_service.ask_we import joint_subject
from workflows.customer_service.asks import (
    Asks,
    has_words,
    is_yes,
    normalise,
    read_asks,
    third_language,
)
from workflows.customer_service.item_orders import goods_phrases, item_orders, order_list
from workflows.customer_service.language import reply_language
from workflows.customer_service.notes import handed_on_notes
from workflows.customer_service.order_words import write_describes_order
from workflows.customer_service.plain_talk import mark_account, not_read_text, unusual_reason
from workflows.customer_service.question_waits import offered_amount, reread
from workflows.customer_service.read_ids import read_targets
from workflows.customer_service.ref_ids import ref_orders
from workflows.customer_service.refund_status import waives_refund
from workflows.customer_service.replying import how_to_ask
from workflows.customer_service.signals import INTENT_TOOL
from workflows.customer_service.state import (
    MAX_MESSAGE_CHARS,
    MAX_OFFERED_ORDERS,
    MODEL_DOWN_REASON,
    CustomerServiceState,
)
from workflows.customer_service.store import OrderStore
from workflows.customer_service.store.tools import WRITE_TOOLS, OrderTools, ToolError, ToolResult

#: The write tools (each runs only confirmed, through :func:`execute_write`).
WRITE_TOOL_NAMES = frozenset(WRITE_TOOLS)
#: Read tools of the read intents that the signals table does not name.
_READ_TOOLS = {"eligibility": "check_refund_eligibility", "address": "lookup_order"}
#: How many of a customer's orders a loose id is matched against (all of them, in practice).
_ALL_ORDERS = 10_000
#: Why-nots of a write mention that ask something (answered with a read of that write).
_ANSWERED = ("question", "not_asked", "conditional", "past")
#: "Where" in a message with no other read word (after a refund waived: a tracking read).
_WHERE = re.compile(r"\bwhere\b|到哪|在哪", re.I)
#: At most this many orders are answered at once for a message naming none: refunded orders
#: for "is my refund approved yet?", the customer's own for "where is my order?"; more: the
#: customer is asked which one.
_FEW = 3
#: The triage's issue types mapped to *read* intents: the triage never picks a write.
_TRIAGE_READ = {
    "refund": "eligibility",
    "delivery": "track",
    "order_status": "status",
    "cancellation": "status",
}


def decide(state: CustomerServiceState, store: OrderStore | None) -> dict[str, Any]:
    """The ``decide`` node's state update: ``plan`` (``intent``, ``tool``, ``order_ids``,
    and for a write ``write``/``ask``/``address``), ``clarify`` (a question back, or None),
    ``handoff`` (with a store) or ``plan["handoff_reason"]`` (without one), the anger streak,
    and a "not done" result for a write the customer did not confirm."""
    signals = state["signals"]
    triage = IssueTriage(**state["triage"])
    asks = read_asks(state["message"], max_chars=MAX_MESSAGE_CHARS)
    # a changed ask while a question waited ("actually make it USD 25", "no, cancel it")
    asks, amended = reread(state["message"], state.get("declined_action"), asks)
    intents: list[str] = list(signals["intents"])
    # anger is read from words, not from the triage: on the CPU default the triage is a
    # random model's greedy answer, the same for every message
    streak = int(state.get("angry_streak") or 0) + 1 if signals["angry"] else 0
    update: dict[str, Any] = {"angry_streak": streak, "clarify": None, "pending": None}
    declined = state.get("declined_action")
    if declined:  # a confirmation this message did not confirm: say nothing was done
        update["declined_action"] = None
        update["tool_results"] = [_not_done_result(declined)]
    refs = ref_orders(state["message"], store, state.get("customer_id"))  # RF-…, 1Z… (tester9 F5)
    ids, bad_id = message_ids({**state, "message": refs.rest}, asks, store)
    ids = list(dict.fromkeys([*refs.orders, *ids]))
    named = bool(ids) or bad_id or bool(refs.missing)  # a loose id too: about an order
    reason = _handoff_reason(state, asks, triage, streak, named)
    about = named or bool(goods_phrases(state["message"], bought=True))  # "the X I bought"
    intent = (
        asks.writes[0]
        if asks.writes
        else refs.intent(_read_intent(asks, intents, triage, about, state["message"]))
    )
    tool = INTENT_TOOL.get(intent or "") or _READ_TOOLS.get(intent or "")
    plan: dict[str, Any] = {"intent": intent, "tool": tool, "order_ids": []}
    if intent == "eligibility" and (asks.refund_status or refs.refund):  # "money back yet?"
        plan["refund_status"] = True  # answered with the refunds made, or that none was
    # a joint ask ("my husband and I want …", 我和我老公想…) is the customer's own (ask_we)
    said = joint_subject(normalise(state["message"]))
    holder = bool(state.get("not_holder")) or not_the_holder(said)
    update["not_holder"] = holder  # remembered: a later plain ask on the thread is no write
    if reason is None:  # an RF-…/1Z… of no order of theirs: said so, no order's facts
        update["clarify"] = refs.question(state) or clarification(
            state, asks, named=named, bad_id=bad_id, amended=amended
        )
    language = reply_language(state["message"], str(state.get("locale") or "en_US"))
    if reason is None and holder and (asks.writes or asks.declined) and not update["clarify"]:
        update["clarify"] = confirming.text("not_holder", language)  # tester12 I
    # remembered: a later write goes to a person (an amount alone is plain: new_amount)
    own = None if amended else unusual_reason(state["message"])
    update["unusual"] = state.get("unusual") or own
    mark_account(store, state, update)  # the account's other conversations too (tester14 F14)
    if reason is None and own and not update["clarify"] and how_to_ask(state["message"], language):
        update["clarify"] = not_read_text(language, ids[0] if ids else None)  # tester13 I
    if reason is None and update["clarify"] is None and tool and state.get("customer_id"):
        update["clarify"] = _target(plan, state, asks, store, (ids, bad_id))
    elif tool is not None:
        plan["tool"] = None
        if store is not None and not state.get("customer_id"):
            plan["note"] = "no customer id: nothing can be looked up"
    if amended and plan.get("write"):
        plan["amended"] = amended
    if reason is None and update["clarify"] is None and plan["tool"] and store is not None:
        refunded_in_full(plan, asks, store.tools(str(state.get("customer_id"))))
    if update["clarify"]:  # a part handed to a person is told beside a question too (cs15)
        update["clarify"] = " ".join([update["clarify"], *handed_on_notes(state, language)])
    update["plan"] = plan
    if reason is not None and store is not None:
        update["handoff"] = {"reason": reason}
        if state.get("model_down"):
            update["handoff"]["detail"] = state["model_down"]
    elif reason is not None:  # stateless mode (no store, so no handoff queue): say so
        plan["handoff_reason"] = reason
    return update


def refunded_in_full(plan: dict[str, Any], asks: Asks, tools: OrderTools) -> None:
    """Turn ``plan`` into the read of the refunds made when the turn is about a refund of one
    order that is refunded in full already ("Refund ORD-… again", 再退款一次…, a plain ask
    too): the reply tells the refunds the store holds (id, amount, date) and that nothing is
    left, and offers nothing (cs12; tester11 F1). A refund the customer refused is left to
    the refusal's answer."""
    topic = plan["intent"] in ("refund", "eligibility") or any(
        i == "refund" and why != "negated" for i, why in asks.declined
    )
    if not topic or len(plan["order_ids"]) != 1:
        return
    try:
        why_not = tools.refundable(plan["order_ids"][0])[2]
    except ToolError:  # not one of theirs: the read or the write says so, as before
        return
    if why_not != "already refunded in full":
        return
    for key in ("write", "ask", "address", "each"):
        plan.pop(key, None)
    plan.update(intent="eligibility", tool=_READ_TOOLS["eligibility"], refund_status=True)


def _cut(state: CustomerServiceState) -> bool:
    """Whether the turn's message was longer than :data:`MAX_MESSAGE_CHARS` (only its head
    and tail are in the state; a state of an older release has the whole text)."""
    return bool(state.get("cut")) or len(state["message"]) > MAX_MESSAGE_CHARS


def _handoff_reason(
    state: CustomerServiceState, asks: Asks, triage: IssueTriage, streak: int, named: bool
) -> str | None:
    """Why the turn goes to a person, or None."""
    if state.get("too_long"):  # the server refused the prompt: asked to write less
        return None
    if asks.writes and _cut(state):
        return None  # a write asked in a message too long to read: asked back, not handed
        # on (the model may have refused the long prompt: that is not a lost server)
    if state.get("model_down"):
        return MODEL_DOWN_REASON
    if "human" in state["signals"]["intents"]:
        return "the customer asked for a person"
    if streak >= 2:
        return "the customer is angry for a second turn"
    if _unsure_opening(state, asks, named) and not out_of_scope(state, asks, named=named):
        return "the classifier is unsure of the route and no intent word was found"
    if not triage.parsed and _readable(state["message"]):
        return "the triage could not read the message"
    return None


def _target(
    plan: dict[str, Any],
    state: CustomerServiceState,
    asks: Asks,
    store: OrderStore | None,
    named: tuple[list[str], bool],
) -> str | None:
    """Fill ``plan``'s order ids (a write's one target, or the ids a read may touch) from
    ``named`` (:func:`message_ids`); drop its tool when there are none. Returns the question
    to ask back instead, or None."""
    question = None
    if store is not None and plan["tool"] in WRITE_TOOL_NAMES:
        plan.update(write=True, ask=asks.ask_text, address=asks.new_address)
        plan["order_ids"], question = _write_target(state, store, named[0])
    elif store is not None:
        language = reply_language(state["message"], str(state.get("locale") or "en_US"))
        plan["order_ids"], bad, question = _offer_ids(plan, state, store, named, language)
        if bad:  # never another order's facts for an id that could not be read (tester8 F6)
            plan["order_ids"], question = [], confirming.text("bad_id", language)
        elif question:  # goods of no order of theirs, or one of several orders (cs15)
            plan["order_ids"] = []
        elif not named[0] and write_describes_order(state["message"], read=True):  # "other"
            plan["order_ids"], question = [], confirming.text("which_order", language)
        elif plan.get("refund_status") and not named[0] and not state.get("last_order_id"):
            tools = store.tools(str(state["customer_id"]))  # "is my refund approved yet?"
            plan["order_ids"], question = own_refunds(plan, tools, language)
    if not plan["order_ids"]:
        plan["tool"] = None
    return question


def clarification(
    state: CustomerServiceState,
    asks: Asks,
    *,
    named: bool = False,
    bad_id: bool = False,
    amended: str = "",
) -> str | None:
    """The question to ask back instead of acting, or None: a message with no words or
    in a third language, two intents one of them a write, and a write that cannot be
    read safely (a very long message, an id that is not one of the customer's orders,
    ``bad_id`` (:func:`message_ids`), an address that is not one, a part of a refund with no
    one amount written). ``named``: the message names an order, loosely or not; ``amended``:
    a new amount alone for the refund a question asked about (``question_waits.reread``)."""
    message = state["message"]
    if state.get("too_long"):  # the model could not read it: nothing else is guessed
        return str(state["too_long"])
    language = reply_language(message, str(state.get("locale") or "en_US"))
    if not has_words(message):
        return confirming.text("empty", language)
    if _bare_answer(message):  # a yes or no with no question waiting: nothing to do
        return confirming.text("nothing_pending", language)
    if third_language(message):
        return confirming.text("language", language)
    if out_of_scope(state, asks, named=named):  # told so at once: nothing for a person to approve
        return confirming.text("out_of_scope", language)
    if len(asks.writes) + len(asks.reads) >= 2 and asks.writes:
        return confirming.two_intents(asks, language)
    if _cut(state) and (asks.writes or asks.declined):
        return confirming.text("long", language)  # a write asked or set aside: read only so far
    if not asks.writes:
        return None
    if bad_id:  # never the conversation's order instead
        return confirming.text("bad_id", language)
    if asks.writes[0] == "change_address" and not asks.new_address:
        return confirming.address_problem(asks.address_problem, language)
    refund = offered_amount(message, amended) if asks.writes[0] == "refund" else None
    if refund is not None and refund.unclear:  # a part asked for, no one amount written
        return confirming.text(refund.question, language)  # or: not more than zero
    return None


def too_long_text(state: CustomerServiceState) -> str:
    """What the customer is told when the model server refused the turn's prompt as longer
    than the model's context (:class:`~orchestrator.exceptions.PromptTooLongError`): to send
    the question on its own; nothing was done."""
    language = reply_language(state["message"], str(state.get("locale") or "en_US"))
    return confirming.text("too_long", language)


def _write_target(
    state: CustomerServiceState, store: OrderStore, named: list[str]
) -> tuple[list[str], str | None]:
    """The one order a write may touch, or a question: the order ``named`` in the message
    (one only; a loose id of the customer's own order read as it), else the one the
    conversation is about, else the customer's only order."""
    language = reply_language(state["message"], str(state.get("locale") or "en_US"))
    if len(named) > 1:
        return [], confirming.text("which_of", language, ids=", ".join(named[:5]))
    if named:
        return named, None
    if write_describes_order(state["message"]):  # "my other order", "the earbuds order":
        return [], confirming.text("which_order", language)  # never assumed (tester9/9b F1)
    tools = store.tools(str(state["customer_id"]))
    own = [str(state["last_order_id"])] if state.get("last_order_id") else tools.order_ids(2)
    if len(own) != 1:
        return [], confirming.text("which_order", language)
    return _goods_fit(state["message"], tools, own[0], language)


def _goods_fit(
    message: str, tools: OrderTools, target: str, language: str
) -> tuple[list[str], str | None]:
    """``[target]`` for a write naming no id, or a question when the goods the message names
    (:func:`~workflows.customer_service.item_orders.goods_phrases`: "refund my blender") are
    not in ``target``: which of the orders holding them, or, held by none, that no order of
    theirs holds them (cs15: never a write on an order the goods do not fit)."""
    phrases = goods_phrases(message)
    if not phrases:
        return [target], None
    products = tools.products(MAX_OFFERED_ORDERS)
    holding = item_orders(" ".join(phrases), products)
    if target in holding:
        return [target], None
    if holding:
        listed = {order: products[order] for order in holding}
        return [], confirming.text("which_listed", language, orders=order_list(listed, language))
    return [], confirming.text("no_item", language, orders=order_list(products, language))


def message_ids(
    state: CustomerServiceState, asks: Asks, store: OrderStore | None
) -> tuple[list[str], bool]:
    """The order ids the message names, in order, and whether something written as an order
    id could not be read as one of the customer's orders
    (:func:`~workflows.customer_service.read_ids.read_targets`: ``cancel order 101957``,
    ``refund #101957``, 退款订单101957 name ``ORD-101957`` when it is theirs; for a write,
    six bare digits of no order of theirs are no id either). A postal code in the new
    address is no id. Without a store or a customer: the well-formed ids, and whether one
    is malformed (``ORD-12``)."""
    if store is None or not state.get("customer_id"):
        return list(state["signals"]["order_ids"]), asks.malformed_id
    own = store.tools(str(state["customer_id"])).order_ids(_ALL_ORDERS)
    text = state["message"][:MAX_MESSAGE_CHARS]
    if asks.new_address:
        text = text.replace(asks.new_address, " ")
    return read_targets(text, own, write=bool(asks.writes))


def _offer_ids(
    plan: dict[str, Any],
    state: CustomerServiceState,
    store: OrderStore,
    message: tuple[list[str], bool],
    language: str,
) -> tuple[list[str], bool, str | None]:
    """Order ids a read this turn may touch, whether an id in the message could not be read
    (``message``: :func:`message_ids`), and a question back instead, or None. The ids: those
    in the message (a loose id of the customer's own order included; several:
    ``plan["each"]``, each one answered), else those holding goods the message names
    (:func:`~workflows.customer_service.item_orders.item_orders`), else the one the
    conversation is about, else the customer's own when at most :data:`_FEW` (each
    one answered). Never the model's pick among several (tester14 I14): goods of none of
    their orders ("where is my blender?") and more orders than that get a question listing
    their recent orders with their goods (cs15)."""
    assert state.get("customer_id")
    named, bad = message
    if bad or named:
        return _each(plan, named), bad, None
    products = store.tools(str(state["customer_id"])).products(MAX_OFFERED_ORDERS)
    named = item_orders(state["message"], products)
    if named:
        return _each(plan, named), False, None
    if goods_phrases(state["message"]) and products:  # goods of no order of theirs
        return (
            [],
            False,
            confirming.text("no_item", language, orders=order_list(products, language)),
        )
    if state.get("last_order_id"):
        return [str(state["last_order_id"])], False, None
    if plan.get("tool") == "check_refund_eligibility" and not plan.get("refund_status"):
        return [], False, None  # "what is your refund policy?": no verdict on an order not asked
    if plan.get("refund_status"):  # "is my refund approved yet?": their refunds (own_refunds)
        return list(products), False, None
    if len(products) > _FEW:
        return (
            [],
            False,
            confirming.text("which_listed", language, orders=order_list(products, language)),
        )
    return _each(plan, list(products)), False, None


def _each(plan: dict[str, Any], ids: list[str]) -> list[str]:
    """``ids`` (at most :data:`MAX_OFFERED_ORDERS`), each one answered when several."""
    if len(ids) > 1:
        plan["each"] = ids[:MAX_OFFERED_ORDERS]
    return ids[:MAX_OFFERED_ORDERS]


def own_refunds(
    plan: dict[str, Any], tools: OrderTools, language: str
) -> tuple[list[str], str | None]:
    """The orders a refund-status question naming no order and no refund is answered for:
    the customer's own refunded orders (each one answered: ``plan["each"]``) when there are
    at most :data:`_FEW`, else a question back listing them; none: "there is no
    refund on any of your orders" (never the verdict on their newest order, which reads as
    "you have no refund" when one is on another order)."""
    orders = tools.refunded_order_ids(_FEW + 1)
    if not orders:
        return [], confirming.text("no_refunds", language)
    if len(orders) > _FEW:
        shown = tools.refunded_order_ids(MAX_OFFERED_ORDERS)
        ids = ", ".join(shown[:5]) + (", …" if len(shown) > 5 else "")
        count = f"{len(shown)}+" if len(shown) == MAX_OFFERED_ORDERS else str(len(shown))
        return [], confirming.text("which_refund", language, count=count, ids=ids)
    if len(orders) > 1:
        plan["each"] = orders
    return orders, None


def _read_intent(
    asks: Asks, intents: list[str], triage: IssueTriage, named_order: bool, message: str
) -> str | None:
    """The read a turn without a write ask does: one asked for, else one whose words occur,
    else the triage's (read intents only), else the order's status when the message names
    one of the customer's orders: any question about an order ("is ORD-… still coming?",
    "how much was ORD-…", 签收了吗) gets its facts, whatever words it uses (tester5 finding 6:
    12 of 18 such questions got no answer when no intent word matched). A refund the
    customer set aside (negated, pasted, someone else's words) and asked nothing about is read
    as the order's status, never as a refund verdict ("That is not possible") on an ask that
    was not made."""
    whys = {w for _, w in asks.declined}
    set_aside = bool(whys) and not whys & set(_ANSWERED)  # negated, pasted: no ask made
    set_aside = set_aside and not asks.refund_status and "?" not in normalise(message)
    waived = waives_refund(normalise(message).lower())  # "no refund needed, where is ORD-…?"
    set_aside = set_aside or waived
    reads = [r for r in asks.reads if not (waived and r == "eligibility")]
    if reads:  # never a refund verdict for a refund set aside ("I don't want my money back")
        return "status" if set_aside and reads[0] == "eligibility" else reads[0]
    words = [i for i in intents if i in ("track", "status")]
    if words:
        return words[0]
    if waived and _WHERE.search(message):  # "no refund needed, just tell me where ORD-… is"
        return "track"
    triaged = _TRIAGE_READ.get(triage.issue_type) if triage.parsed else None
    if triaged == "eligibility" and set_aside:
        triaged = "status"
    return triaged or ("status" if named_order else None)


def out_of_scope(state: CustomerServiceState, asks: Asks, *, named: bool = False) -> bool:
    """The classifier found the message out of scope for every route (``fallback``,
    ``out_of_scope``: a flight, a bank card, the weather) and nothing in it names an intent
    or an order: the customer is told this shop's service cannot help with it (tester4
    finding 8), rather than a person being asked to approve nothing. First turn only: later
    in a conversation "what about the other one?" reads out of scope on its own."""
    return state.get("fallback_reason") == "out_of_scope" and _unsure_opening(state, asks, named)


def _unsure_opening(state: CustomerServiceState, asks: Asks, named: bool) -> bool:
    """The classifier was unsure and nothing in the message says what the customer wants: a
    first turn with no intent word, no order id, in English or Chinese (later turns of a
    conversation, a bare yes/no, emoji or a third language get a reply instead)."""
    message = state["message"]
    return (
        state.get("route") == FALLBACK
        and int(state.get("turn") or 1) <= 1
        and not state["signals"]["intents"]
        and not state["signals"]["order_ids"]
        and not named
        and not asks.writes
        and not asks.reads
        and _readable(message)
    )


def _readable(message: str) -> bool:
    """Words in English or Chinese that are more than a bare yes or no: what a person could
    act on (emoji only, a third language or a lone yes/no get code's reply instead)."""
    return has_words(message) and not third_language(message) and not _bare_answer(message)


def _bare_answer(message: str) -> bool:
    """A plain yes or no (the thread waits on no confirmation when this is read)."""
    return is_yes(message) or confirming.is_no(message)


def _not_done_result(declined: dict[str, Any]) -> dict[str, Any]:
    """The tool result that says a write was not confirmed, so nothing was done."""
    order_id = str((declined.get("arguments") or {}).get("order_id", ""))
    return ToolResult(
        tool=str(declined.get("tool")),
        ok=False,
        error_code="not_confirmed",
        facts={"order_id": order_id, "reason": NOT_CONFIRMED},
    ).model_dump()


def superseded(results: list[dict[str, Any]], order_id: Any) -> list[dict[str, Any]]:
    """``results`` less the "not confirmed" note of an earlier offer on ``order_id`` that a new
    question about the same order replaces: kept, the note waited for the next reply and was
    printed beside the write the customer then confirmed ("Nothing was changed on order X …
    Refund … of X is approved": tester12 G)."""
    return [
        r
        for r in results
        if not (r.get("error_code") == "not_confirmed" and r["facts"].get("order_id") == order_id)
    ]


def asked_for_person(state: CustomerServiceState) -> bool:
    """A stateless turn (no order store, so no handoff queue) whose customer asked for a
    person: the reply says a colleague takes over and the request is ``needs_human``."""
    plan = state.get("plan") or {}
    intents = (state.get("signals") or {}).get("intents") or ()
    return bool(plan.get("handoff_reason")) and "human" in intents
