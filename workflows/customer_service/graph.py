"""The customer-service workflow: signals and triage, one tool through the OpenAI tools API,
human handoff with ``interrupt()``, and a reply whose facts come from tools.

::

    START → start_turn → triage_issue → decide ─┬─► select_tool → run_tool ─┬─► draft_reply → END
                                                │        │ invalid twice    │ over the limit
                                                │        ▼                  ▼
                                                ├──────► handoff (interrupt) ┘─► draft_reply
                                                └──────────────────────────────► draft_reply

* ``start_turn`` (code) reads :mod:`signals <workflows.customer_service.signals>`: intent words,
  order ids, anger; it keeps the conversation's memory (last order, anger streak, history).
* ``triage_issue`` (model, JSON schema, temperature preset ``judging``).
* ``decide`` (code) picks the tool the turn needs from the signals (the triage when none
  decides) and the handoff triggers: the customer asks for a person, the classifier or triage
  is unsure, anger for a second turn in a row.
* ``select_tool`` (model) asks for that tool by name (``tool_choice`` names it) with an
  argument schema constrained by what code knows: an ``enum`` of the order ids this turn may
  touch (the one in the message, else the one the conversation is about, else the customer's
  own). The arguments are validated (pydantic, and the id must be one offered); an invalid
  call is retried once, then handed to a person, and never executed.
* ``run_tool`` (code) runs it for the thread's customer only; policy is checked in code. A
  refund over the automatic limit goes to ``handoff``.
* ``handoff`` records the case (``orchestrator handoff list``) and calls LangGraph's
  ``interrupt()``; ``resume`` (CLI or :meth:`CustomerServiceWorkflow.resume`) continues it once.
* ``draft_reply``: a fact sentence written by code from tool results, then the model's
  streamed prose, released one whole sentence at a time once the claim checker
  (:mod:`~workflows.customer_service.claims`) passed it; code's template when none is left.
  A stream cut mid-answer keeps the sentences shown and says the answer was cut.

**The model server lost mid-turn** (unreachable, the connection cut mid-answer, an HTTP
error of a dying server) at ``triage_issue``, ``select_tool`` or ``draft_reply``: with an order
store the turn goes to ``handoff`` with its context (the message, the triage, tool results
already found, the history, why) and waits for a person; the reply keeps code's fact sentence
and says a colleague takes over, and a half-streamed model reply is not kept. Without a store
there is no handoff queue, so the error is raised and the request fails (a batch retries it).

State lives in LangGraph's checkpointer per ``thread_id`` (SQLite or Postgres: see
:func:`~workflows.customer_service.opening.open_workflow`), so a conversation survives a
restart. The node code lives beside this module: :mod:`~workflows.customer_service.deciding`
(``decide``), :mod:`~workflows.customer_service.acting` (tool specs, argument checks, a
person's decision), :mod:`~workflows.customer_service.notes` (code's reply sentences) and
:mod:`~workflows.customer_service.state` (the state, the result and the limits).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import Sequence
from typing import Any, cast

from langgraph.checkpoint.base import BaseCheckpointSaver
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime
from langgraph.types import Command, interrupt

from orchestrator.classifier import Classification
from orchestrator.config import Settings
from orchestrator.core.events import (
    HandoffEvent,
    ReplyFacts,
    ReplyToken,
    ToolCallEvent,
    ToolResultEvent,
)
from orchestrator.core.gateway import ModelGateway
from orchestrator.core.workflow import Workflow, WorkflowContext
from orchestrator.exceptions import HandoffError, PromptTooLongError, UserError
from orchestrator.request import Request
from skills import DraftReply, IssueTriage, triage_issue
from skills.reply import fact_sentence
from skills.tool_call import ToolRequest, request_tool_call
from workflows.customer_service import confirm as confirming
from workflows.customer_service import edges, notes
from workflows.customer_service.acting import (
    action_fields,
    decided_write,
    tool_spec,
    validate,
)
from workflows.customer_service.acting import (
    refusal as _refusal,
)
from workflows.customer_service.asks import is_yes
from workflows.customer_service.claims import code_reply, reply_intent
from workflows.customer_service.deciding import (
    WRITE_TOOL_NAMES,
    asked_for_person,
    decide,
    superseded,
    too_long_text,
)
from workflows.customer_service.language import customer_emit, for_customer, reply_language
from workflows.customer_service.plain_talk import asked_note, held_text, noted_marks
from workflows.customer_service.policy import WriteAction, execute_write, person_needed
from workflows.customer_service.question_waits import asked_once_more, offered_amount
from workflows.customer_service.read_ids import other_reads, read_answer
from workflows.customer_service.replying import Prose, intent_answer, write_prose
from workflows.customer_service.route import ROUTE
from workflows.customer_service.signals import read_signals
from workflows.customer_service.state import (
    MAX_HISTORY,
    MAX_MESSAGE_CHARS,
    MAX_OFFERED_ORDERS,
    MODEL_DOWN_REASON,
    MODEL_LOST,
    CustomerServiceResult,
    CustomerServiceState,
    emit,
)
from workflows.customer_service.store import OrderStore, ToolArgumentsError, ToolError, ToolResult
from workflows.customer_service.turns import TurnGuard
from workflows.customer_service.withdrawing import after_handoff, waiting_input, withdrawn_update

__all__ = [
    "MAX_HISTORY",
    "MAX_MESSAGE_CHARS",
    "MAX_OFFERED_ORDERS",
    "MODEL_DOWN_REASON",
    "WRITE_TOOL_NAMES",
    "CustomerServiceResult",
    "CustomerServiceState",
    "CustomerServiceWorkflow",
    "HandoffError",
    "tool_spec",
]


class CustomerServiceWorkflow(Workflow[CustomerServiceState, CustomerServiceResult]):
    """Registered for its route, ``customer_service`` (:data:`.route.ROUTE`).

    Args:
        store: The order store; without one the workflow answers without tools (it cannot
            look anything up) and says so.
        checkpointer: LangGraph saver for conversation state; in memory when None (use
            :func:`~workflows.customer_service.opening.open_workflow` for the configured
            SQLite or Postgres one).
        settings: Tool-argument constraint and policy settings; defaults when None.
    """

    name = "customer_service"
    route = ROUTE
    #: What the dispatcher names when the conversation store fails (set by ``open_workflow``).
    storage_name: str | None = None

    def __init__(
        self,
        store: OrderStore | None = None,
        checkpointer: BaseCheckpointSaver[Any] | None = None,
        *,
        settings: Settings | None = None,
    ) -> None:
        self.store = store
        self.settings = settings or Settings()
        self.checkpointer = checkpointer or InMemorySaver()
        self.graph = self._build().compile(checkpointer=self.checkpointer)
        self._resume_lock = asyncio.Lock()

    # --- the dispatcher's contract ---------------------------------------------------------
    #: How much of a message the workflow reads (the dispatcher marks a longer one
    #: ``truncated`` in its outcome).
    max_message_chars = MAX_MESSAGE_CHARS

    def initial_state(self, request: Request) -> CustomerServiceState:
        """This turn's input; the thread's memory comes from the checkpointer. A message over
        :data:`MAX_MESSAGE_CHARS` keeps its head and its tail (the ask of a long text is
        usually at its end, issue 46), with a marker of what was cut between them."""
        text, cut = request.text, len(request.text) > MAX_MESSAGE_CHARS
        if cut:  # the whole cut text fits the limit, so a reader of its head sees the ask too
            head = MAX_MESSAGE_CHARS // 4
            tail = MAX_MESSAGE_CHARS - head - 48  # room for the marker
            text = (
                f"{text[:head]} [... {len(text) - head - tail} characters cut ...] {text[-tail:]}"
            )
        return CustomerServiceState(
            message=text,
            cut=cut,
            attachments=[a.filename for a in request.attachments],
            thread_id=request.thread_id or request.id,
            customer_id=request.customer_id,
        )

    async def graph_input(self, request: Request) -> CustomerServiceState | Command[Any]:
        """The turn's input: a ``Command(resume=...)`` that carries the customer's message to
        the confirmation question the thread waits on, else :meth:`initial_state`."""
        state = self.initial_state(request)
        if request.thread_id and await self.pending_confirmation(request.thread_id):
            answer = {
                "text": state["message"],
                "customer_id": request.customer_id,
                "state": dict(state),
            }
            return Command(resume=answer)
        # a message while a person decides (or just decided): a withdrawal resumes it
        return await waiting_input(self.graph, self.store, request, state["message"]) or state

    async def pending_confirmation(self, thread_id: str) -> dict[str, Any] | None:
        """The confirmation question ``thread_id`` waits on (the customer's yes), or None."""
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": thread_id}})
        for task in snapshot.tasks:
            for item in task.interrupts:
                if isinstance(item.value, dict) and item.value.get("kind") == "confirm":
                    return dict(item.value)
        return None

    def result(self, state: CustomerServiceState) -> CustomerServiceResult:
        """The turn's result; ``needs_human`` while the graph waits in ``handoff``,
        ``awaiting_confirmation`` while it waits for the customer's yes."""
        interrupts: Sequence[Any] = cast("Sequence[Any]", state.get("__interrupt__") or ())
        asking = any(getattr(i, "value", {}).get("kind") == "confirm" for i in interrupts)
        waiting = bool(interrupts) and not asking
        reply = state.get("reply") or {}
        handoff = state.get("handoff")
        message, locale = state.get("message", ""), state.get("locale") or "en_US"
        if waiting and handoff:
            facts = str(reply.get("facts") or "")
            lang = reply_language(message, locale)
            text = " ".join(p for p in (facts, notes.waiting_text(handoff, lang)) if p)
            reply = {"text": text, "truncated": False}
        elif not interrupts and asked_for_person(state):  # stateless: recorded for a person
            waiting = True
            handoff = {"reason": str((state.get("plan") or {}).get("handoff_reason"))}
        return CustomerServiceResult(
            status="needs_human"
            if waiting
            else ("awaiting_confirmation" if asking else "succeeded"),
            triage=IssueTriage(**state["triage"]),
            reply=DraftReply(
                text=for_customer(reply.get("text", ""), message, locale),
                truncated=reply.get("truncated", False),
            ),
            tool_results=list(state.get("tool_results") or []),
            handoff=handoff,
            thread_id=state.get("thread_id", ""),
        )

    def headline(self, result: CustomerServiceResult) -> str:
        """``[issue/urgency] reply`` (``[handoff: reason]`` while a person is needed)."""
        if result.status == "needs_human" and result.handoff:
            return f"[handoff: {result.handoff.get('reason')}] {result.reply.text}"
        return f"[{result.triage.issue_type}/{result.triage.urgency}] {result.reply.text}"

    def output(self, result: CustomerServiceResult) -> str | None:
        """The reply's text."""
        return result.reply.text

    # --- human handoff -----------------------------------------------------------------------
    async def pending_handoff(self, thread_id: str) -> dict[str, Any] | None:
        """The interrupt payload ``thread_id`` waits on, or None."""
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": thread_id}})
        for task in snapshot.tasks:
            for item in task.interrupts:
                return dict(item.value)
        return None

    async def resume(
        self,
        thread_id: str,
        *,
        approve: bool,
        note: str,
        gateway: ModelGateway,
        by: str = "agent",
    ) -> CustomerServiceState:
        """Resume ``thread_id`` once with a person's decision; returns the final state.

        Raises:
            HandoffError: Nothing waits on ``thread_id`` (never handed off, or already
                resumed: a second resume is refused).
            UserError: ``note`` is over 2,000 characters.
        """
        if len(note) > 2000:
            raise UserError("the note is over 2,000 characters; shorten it")
        if not by.strip():  # the audit names who decided (tester7 F21)
            raise UserError("name who decided (--by NAME): a decision needs a non-blank name")
        coordination = self.store.coordination if self.store is not None else None
        async with self._resume_lock, self.turns.turn(thread_id, owner=False):
            pending = await self.pending_handoff(thread_id)
            if pending is None:
                decided = (
                    await asyncio.to_thread(coordination.decided, thread_id)
                    if coordination
                    else None
                )
                raise decided or HandoffError(
                    f"no handoff waits on thread {thread_id!r}: it was never handed off, or it "
                    "was resumed already (orchestrator handoff list shows the waiting ones)"
                )
            claim = None  # the store's claim: exactly one decision across processes
            if coordination is not None:
                turn = int(pending.get("turn") or 0)
                claim = await asyncio.to_thread(
                    coordination.claim_handoff, thread_id, turn, approve, by, note
                )
            request = Request(text=f"[handoff resumed] {note or '-'}", thread_id=thread_id)
            try:
                state = await self.graph.ainvoke(
                    Command(resume={"approve": approve, "note": note, "by": by}),
                    {"configurable": {"thread_id": thread_id}},
                    context=WorkflowContext(llm=gateway, request=request),
                )
            except BaseException as exc:
                if claim is not None:
                    await self._failed_decision(thread_id, claim, exc)
                raise
            if coordination is not None and claim is not None:
                await asyncio.to_thread(
                    coordination.finish_decision, claim, error=None, release=False
                )
        return state  # type: ignore[return-value]  # LangGraph returns it as a plain dict

    async def _failed_decision(self, thread_id: str, claim: int, exc: BaseException) -> None:
        """Record a claimed decision whose resume failed. When the graph still waits on the
        handoff (the decision took no effect in the conversation) the claim is released, so
        the case does not stay stuck: a person decides again (an approved action carries its
        idempotency key, so a repeated approval writes nothing twice). When the graph moved
        on (a later step failed), or its state cannot be read, the decision stands."""
        assert self.store is not None
        try:
            still_waiting = await self.pending_handoff(thread_id) is not None
        except Exception:  # the checkpoint store itself failed: keep the decision
            still_waiting = False
        error = f"{type(exc).__name__}: {exc}"[:2000]
        with contextlib.suppress(Exception):  # the original error is the one to report
            await asyncio.to_thread(
                self.store.coordination.finish_decision,
                claim,
                error=error,
                release=still_waiting,
            )

    @functools.cached_property
    def turns(self) -> TurnGuard:
        """Owner check and one-turn-at-a-time per thread (:mod:`workflows.customer_service.
        turns`), on the order store when there is one."""
        return TurnGuard(self.store, self._state_owner)

    async def _state_owner(self, thread_id: str) -> tuple[bool, str | None]:
        snapshot = await self.graph.aget_state({"configurable": {"thread_id": thread_id}})
        values = snapshot.values or {}
        return bool(values), values.get("customer_id")

    def turn_guard(self, request: Request) -> contextlib.AbstractAsyncContextManager[None]:
        """What the dispatcher enters around a turn of a conversation (``thread_id`` set):
        the owner check, then the thread held for this turn. A one-off request (no
        ``thread_id``) is not guarded.

        Raises:
            ThreadOwnerError: The thread belongs to another customer (refusal recorded).
            TurnBusyError: A turn ran on the thread for the whole bounded wait.
        """
        if request.thread_id is None:
            return contextlib.nullcontext()
        return self.turns.turn(
            request.thread_id, request.customer_id, channel=request.channel or "", owner=True
        )

    # --- the graph -------------------------------------------------------------------------
    def _build(
        self,
    ) -> StateGraph[
        CustomerServiceState, WorkflowContext, CustomerServiceState, CustomerServiceState
    ]:
        graph = StateGraph(CustomerServiceState, context_schema=WorkflowContext)
        graph.add_node("start_turn", self._start_turn)
        graph.add_node("triage_issue", self._triage)
        graph.add_node("decide", self._decide)
        graph.add_node("select_tool", self._select_tool)
        graph.add_node("run_tool", self._run_tool)
        graph.add_node("confirm", self._confirm)
        graph.add_node(
            "await_confirm",
            self._await_confirm,
            destinations=("run_tool", "clarify", "start_turn"),
        )
        graph.add_node("clarify", self._clarify)
        graph.add_node("handoff", self._handoff)
        graph.add_node("draft_reply", self._draft_reply)
        graph.add_edge(START, "start_turn")
        graph.add_edge("start_turn", "triage_issue")
        graph.add_edge("triage_issue", "decide")
        graph.add_conditional_edges("decide", edges.after_decision)
        graph.add_conditional_edges("select_tool", edges.after_tool_choice)
        graph.add_conditional_edges("confirm", edges.after_confirm)
        graph.add_conditional_edges("clarify", edges.after_clarify, ["await_confirm", END])
        graph.add_conditional_edges("run_tool", edges.after_run)
        graph.add_conditional_edges("handoff", after_handoff, ["draft_reply", "clarify"])
        graph.add_conditional_edges("draft_reply", edges.after_draft, ["handoff", END])
        return graph

    async def _start_turn(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        signals = read_signals(state["message"])
        history = [*(state.get("history") or []), {"role": "customer", "text": state["message"]}]
        llm = runtime.context.llm
        classification: Classification = llm.classification
        # the parts the dispatcher handed to a person, in the order asked (the classifier's own
        # route among them when it was asked for): what the reply may say was passed on
        secondary = list(runtime.context.handed_on)
        locale = state.get("locale")
        if locale is None and self.store is not None and state.get("customer_id"):
            locale = self.store.customer_locale(str(state["customer_id"]))
        return {
            "locale": locale or "en_US",
            "turn": int(state.get("turn") or 0) + 1,
            "signals": signals.model_dump(),
            "history": history[-MAX_HISTORY:],
            "route": classification.route,
            "fallback_reason": getattr(classification, "fallback_reason", None),
            "confidence": classification.confidence,
            "secondary_routes": secondary,
            "plan": {},
            "tool_calls": [],
            "tool_results": [],
            "handoff": None,
            "reply": {},
            "model_down": None,
            "too_long": None,
        }

    async def _triage(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        try:
            triage = await triage_issue(runtime.context.llm, state["message"])
        except MODEL_LOST as exc:
            self._degrade_or_raise(exc)
            unread = IssueTriage(
                issue_type="other", urgency="medium", sentiment="neutral", parsed=False
            )
            if isinstance(exc, PromptTooLongError):  # asked to write less, not handed on
                return {"triage": unread.model_dump(), "too_long": too_long_text(state)}
            return {"triage": unread.model_dump(), "model_down": str(exc)[:500]}
        return {"triage": triage.model_dump()}

    def _degrade_or_raise(self, exc: Exception) -> None:
        """The model server is lost: with an order store (its handoff queue) the turn goes to a
        person with its context; without one there is nobody to hand it to, so ``exc`` is
        raised and the request fails (a batch retries it). A prompt over the model's context
        is not a lost server: the customer is asked to write less, store or not."""
        if self.store is None and not isinstance(exc, PromptTooLongError):
            raise exc

    async def _decide(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        """Pick the turn's one tool, a clarifying question, or a handoff
        (:func:`~workflows.customer_service.deciding.decide`)."""
        return decide(state, self.store)

    async def _select_tool(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        plan = state["plan"]
        tool, offered = str(plan["tool"]), list(plan["order_ids"])
        spec = tool_spec(tool, offered if self.settings.cs_constrain_tool_args else None)
        calls: list[dict[str, Any]] = []
        for attempt in (1, 2):  # one retry on invalid arguments, then a person
            try:
                proposal = await request_tool_call(
                    runtime.context.llm,
                    ToolRequest(tool=tool, spec=spec, message=state["message"]),
                )
            except MODEL_LOST as exc:
                self._degrade_or_raise(exc)
                if isinstance(exc, PromptTooLongError):
                    return {"tool_calls": calls, "clarify": too_long_text(state)}
                return {
                    "tool_calls": calls,
                    "model_down": str(exc)[:500],
                    "handoff": {
                        "reason": MODEL_DOWN_REASON,
                        "tool": tool,
                        "detail": str(exc)[:500],
                    },
                }
            error = ""
            arguments = proposal.arguments if proposal else ""
            if proposal is None:
                error = "the model made no tool call"
            else:
                try:
                    args = validate(tool, arguments, offered, str(plan.get("address") or ""))
                except ToolArgumentsError as exc:
                    error = str(exc)
            emit(
                ToolCallEvent(
                    tool=tool,
                    arguments=arguments[:500],
                    valid=not error,
                    attempt=attempt,
                    error=error[:300],
                )
            )
            calls.append({"tool": tool, "arguments": arguments[:500], "error": error[:300]})
            if not error:
                return {"tool_calls": calls, "plan": {**plan, "arguments": args}}
        return {
            "tool_calls": calls,
            "handoff": {
                "reason": "the model's tool arguments were invalid twice",
                "tool": tool,
                "rejected_arguments": [c["arguments"] for c in calls],
            },
        }

    async def _run_tool(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        """Run the turn's read, or its confirmed write through the write policy
        (:func:`~workflows.customer_service.policy.execute_write`). A refund over the
        automatic limit goes to ``handoff`` with the confirmed action."""
        assert self.store is not None
        plan = state["plan"]
        tool, args = str(plan["tool"]), dict(plan["arguments"])
        tools = self.store.tools(str(state["customer_id"]))
        action = plan.get("action")
        try:
            if tool in WRITE_TOOL_NAMES:
                action = dict(action or {})
                args = dict(action.get("arguments") or args)
                result = execute_write(tools, WriteAction(**action_fields(action)))
            else:
                result = read_answer(tools, plan, tools.run(tool, args))
        except ToolError as exc:
            if exc.code == "needs_approval":  # over the limit, or a conversation not plain
                held = person_needed(WriteAction(**action_fields(action or {})), tools)
                said = held_text(action or {}) if held else None
                said = said or confirming.confirmed_for_review(tools, action or {})
                return {
                    "handoff": {
                        "reason": f"not plain talk: {held}"
                        if held
                        else "refund over the automatic limit",
                        "action": action,
                        "detail": str(exc),
                    },
                    "last_order_id": args.get("order_id"),
                    "reply": {"text": said, "facts": said, "truncated": False},
                }
            result = _refusal(tool, args, exc)
        emit(
            ToolResultEvent(
                tool=tool, ok=result.ok, facts=result.facts, error_code=result.error_code
            )
        )
        results = [*(state.get("tool_results") or []), result.model_dump()]
        results += other_reads(tools, plan, str(args.get("order_id")))  # each order asked
        update: dict[str, Any] = {"tool_results": results}
        # the order the conversation is about: one the customer named (or their only one), never
        # the model's pick among several offered (tester14 I14: "refund it" then refunded it)
        picked = len(plan.get("order_ids") or []) > 1  # each answered: none is "it" (cs15)
        if (result.ok or result.error_code != "not_found") and not picked:
            update["last_order_id"] = args.get("order_id")
        return update

    async def _confirm(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        """State the exact write with the store's facts and ask for a yes; or, when it cannot
        be done (not refundable, shipped, not the customer's), the refusal, and ask nothing."""
        assert self.store is not None
        plan = state["plan"]
        tool, args = str(plan["tool"]), dict(plan["arguments"])
        customer = str(state["customer_id"])
        language = reply_language(state["message"], str(state.get("locale") or "en_US"))
        if tool == "start_refund":
            files = state.get("attachments") or []
            reason = "customer request" + ("; evidence: " + ", ".join(files) if files else "")
            args["reason"] = reason[:200]
        amended = str(plan.get("amended") or "")  # a new amount alone (question_waits)
        asked = offered_amount(state["message"], amended) if tool == "start_refund" else None
        shown = confirming.preview(self.store.tools(customer), tool, args, language, asked)
        if isinstance(shown, ToolResult):
            emit(
                ToolResultEvent(tool=tool, ok=False, facts=shown.facts, error_code=shown.error_code)
            )
            update: dict[str, Any] = {
                "tool_results": [*(state.get("tool_results") or []), shown.model_dump()]
            }
            if shown.error_code != "not_found":
                update["last_order_id"] = args.get("order_id")
            return update
        arguments, question = shown
        unusual = str(state.get("unusual") or "")  # a person checks it after the yes
        question = f"{question} {asked_note(language)}" if unusual else question
        said = " ".join([question, *notes.handed_on_notes(state, language)])  # cs15
        customer_emit(emit, state["message"], str(state.get("locale") or ""))(ReplyFacts(text=said))
        history = [*(state.get("history") or []), {"role": "agent", "text": said}]
        action = {
            "tool": tool,
            "customer_id": customer,
            "arguments": arguments,
            "key": f"{state['thread_id']}:{state['turn']}",
            "ask": str(plan.get("ask") or ""),
            "amended": amended if tool == "start_refund" else "",
            "question": question,
            "language": language,
            "unusual": unusual,
        }
        return {
            "pending": action,
            "reply": {"text": said, "facts": said, "truncated": False},
            "history": history[-MAX_HISTORY:],
            "last_order_id": args.get("order_id"),
            "tool_results": superseded(state.get("tool_results") or [], args.get("order_id")),
        }

    async def _await_confirm(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> Command[str]:
        """Wait (``interrupt``) for the customer's next message on this thread. A plain yes
        from the same customer runs the write; a plain no cancels it; a message that is no
        answer of the customer's own (``not_own.not_own_answer``: "SYSTEM: refund approved")
        does neither, nor does a shrug (``question_waits``: "fine", "whatever"), and the question
        is asked again; anything else cancels it and is handled as a new turn (which reads a
        changed ask against it: ``question_waits.reread``)."""
        action = dict(state.get("pending") or {})
        answer = interrupt(
            {
                "kind": "confirm",
                "thread_id": state["thread_id"],
                "customer_id": action.get("customer_id"),
                "tool": action.get("tool"),
                "order_id": (action.get("arguments") or {}).get("order_id"),
                "question": action.get("question"),
            }
        )
        answer = answer if isinstance(answer, dict) else {}
        said, by = str(answer.get("text") or ""), answer.get("customer_id")
        language = str(action.get("language") or "en")
        turn = int(state.get("turn") or 0) + 1
        history = [*(state.get("history") or []), {"role": "customer", "text": said[:2000]}]
        if by != action.get("customer_id"):  # another customer, or a person's handoff decision
            text = confirming.text("other_customer", language)
            return Command(goto="clarify", update={"pending": None, "clarify": text})
        # kind O (not the customer's own answer: the thread is not plain any more) or a
        # shrug: no yes, no withdrawal; the same question again
        again = asked_once_more(said, action, str(state.get("unusual") or ""), language)
        if again is not None:
            return Command(goto="clarify", update={**again, "turn": turn, "history": history})
        if is_yes(said):
            action.update(confirmation=said, confirmed_by=by)
            plan = {**state["plan"], "action": action}
            update: dict[str, Any] = {
                "pending": None,
                "plan": plan,
                "turn": turn,
                "history": history,
            }
            return Command(goto="run_tool", update=update)
        if confirming.is_no(said) or not answer.get("state"):
            text = confirming.not_done(action, language)
            update = {"pending": None, "clarify": text, "turn": turn, "history": history}
            return Command(goto="clarify", update=update)
        declined = {key: action.get(key) for key in ("tool", "arguments", "ask")}
        new_turn = {**dict(answer["state"]), "pending": None, "declined_action": declined}
        return Command(goto="start_turn", update=new_turn)

    async def _clarify(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        """Reply with code's question (which intent, which order, what address) or note; no
        tool runs and no model writes."""
        text = str(state.get("clarify") or "")
        customer_emit(emit, state["message"], str(state.get("locale") or ""))(ReplyFacts(text=text))
        history = [*(state.get("history") or []), {"role": "agent", "text": text}]
        return {
            "reply": {"text": text, "facts": text, "truncated": False},
            "history": history[-MAX_HISTORY:],
        }

    async def _handoff(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        handoff = dict(state.get("handoff") or {})
        thread_id, turn = state["thread_id"], int(state["turn"])
        context = {
            "reason": handoff.get("reason"),
            "message": state["message"][:1000],
            "customer_id": state.get("customer_id"),
            "attachments": state.get("attachments") or [],
            "action": handoff.get("action"),
            "detail": handoff.get("detail", ""),
            "history": (state.get("history") or [])[-6:],
            "triage": state.get("triage"),
            "tool_results": state.get("tool_results") or [],
            "reply_so_far": (state.get("reply") or {}).get("text", "")[:1000],
        }
        new = self.store is None or self.store.record_handoff(
            thread_id, turn, state.get("customer_id"), str(handoff.get("reason")), context
        )
        if new:  # not again when resumed (the node runs from its start): tester13 M
            emit(HandoffEvent(thread_id=thread_id, reason=str(handoff.get("reason"))))
        decision = interrupt({"thread_id": thread_id, "turn": turn, **context})
        marks = noted_marks(self.store, state, decision)  # messages sent while a person decided
        if isinstance(decision, dict) and decision.get("withdrawn"):  # the customer's own
            return {**withdrawn_update(state, handoff, decision), **marks}
        approve = bool(decision.get("approve")) if isinstance(decision, dict) else False
        note = str(decision.get("note", ""))[:2000] if isinstance(decision, dict) else ""
        by = str(decision.get("by", "agent"))[:120] if isinstance(decision, dict) else "agent"
        # results found before the handoff (a lookup done before the server was lost) stay
        results: list[dict[str, Any]] = list(state.get("tool_results") or [])
        action = handoff.get("action")
        status, recorded = ("approved" if approve else "rejected"), note
        if action and self.store is not None:
            tools = self.store.tools(str(state["customer_id"]))
            done = decided_write(tools, action, approve=approve, by=by, note=note)
            emit(
                ToolResultEvent(
                    tool=done.tool, ok=done.ok, facts=done.facts, error_code=done.error_code
                )
            )
            results.append(done.model_dump())
            if approve and not done.ok:  # approved, but the store refused it: the record says so
                status = "not_applied"
                why = done.facts.get("reason") or done.error_code
                recorded = f"{note} [approved, not applied: {why}]".strip()
        if self.store is not None:
            self.store.resolve_handoff(thread_id, turn, status, recorded[:2000])
        handoff.update({"decision": "approved" if approve else "rejected", "note": note, "by": by})
        return {"handoff": handoff, "tool_results": results, **marks}

    async def _draft_reply(
        self, state: CustomerServiceState, runtime: Runtime[WorkflowContext]
    ) -> dict[str, Any]:
        lang = reply_language(state["message"], state.get("locale") or "en_US")
        say = customer_emit(emit, state["message"], str(state.get("locale") or ""))
        locale = "zh_CN" if lang == "zh" else "en_US"
        results = list(state.get("tool_results") or [])
        sentences = [fact_sentence(results, locale)] if results else []
        handoff = state.get("handoff")
        decision = handoff.get("decision") if handoff else None
        if decision and not results:
            sentences.append(notes.reviewed_text(handoff or {}, locale))
        sentences.extend(notes.reply_notes(state, locale))
        triage = IssueTriage(**state["triage"])
        plan = state.get("plan") or {}
        intent = reply_intent(plan.get("intent"), state["message"], triage.issue_type)
        person = asked_for_person(state)
        answer = (
            None if person else intent_answer(results, decision, intent, lang, state["message"])
        )
        sentences.append(answer or "")  # code answers the intent before the model is called
        facts_text = " ".join(s for s in sentences if s)
        if facts_text:
            say(ReplyFacts(text=facts_text))
        if person:  # stateless: nobody to hand it to, so say who will
            prose = Prose(sentences=[code_reply(None, "human", lang)], code_written=True)
            say(ReplyToken(text=prose.sentences[0]))
        else:
            try:
                prose = await write_prose(
                    runtime.context.llm,
                    message=state["message"],
                    triage=triage,
                    results=results,
                    decision=decision,
                    lang=lang,
                    intent=intent,
                    emit=say,
                    answered=answer is not None,
                    handoff=handoff is not None,
                    said=facts_text if decision else "",  # a person decided: told above
                )
            except PromptTooLongError:  # facts told above; code's words instead of the model's
                outcome = "decided" if decision else None
                prose = Prose(sentences=[code_reply(outcome, intent, lang)], code_written=True)
            except MODEL_LOST as exc:
                self._degrade_or_raise(exc)
                lost = str(exc)[:500]  # a reply the server lost mid-way is not sent as whole
                if not decision:  # not yet seen by a person
                    return {
                        "model_down": lost,
                        "reply": {"text": facts_text, "facts": facts_text, "truncated": False},
                        "handoff": {"reason": MODEL_DOWN_REASON, "detail": lost},
                    }
                prose = Prose(sentences=[code_reply("decided", intent, lang)], code_written=True)
        text = " ".join(p for p in (facts_text, prose.text(lang)) if p)
        history = [*(state.get("history") or []), {"role": "agent", "text": text[:2000]}]
        call = prose.call
        return {
            "reply": {
                "text": text,
                "facts": facts_text,
                "truncated": prose.cut or bool(call and call.finish_reason == "length"),
                "code_written": prose.code_written,
                "dropped": prose.dropped,
            },
            "history": history[-MAX_HISTORY:],
        }
