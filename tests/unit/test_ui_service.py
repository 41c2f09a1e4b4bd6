"""The chat UI's service and its inline charts, with ScriptedModel (a test double of the model;
no vLLM here): the NDJSON event stream of a turn (classified once, the rules in the
classification event, the heatmap after the reply), the report's charts read from a real
report workbook, and text from workbooks and models escaped for Plotly."""

from __future__ import annotations

import json
import re
from datetime import date
from pathlib import Path
from typing import Any

import openpyxl
import pytest
from case_tables import cases
from starlette.testclient import TestClient
from test_ui_service_auth import tid

from orchestrator import Attachment, Orchestrator, Request, TelemetryStore
from orchestrator.config import Settings
from orchestrator.exceptions import UserError
from orchestrator.observability import (
    configure_tracing,
    shutdown_tracing,
    tracing_enabled,
)
from orchestrator.testing import ScriptedModel
from orchestrator.ui import build_app, expert_grid
from orchestrator.ui.auth import Caller, sign_caller
from orchestrator.ui.charts import expert_figure, plot_text, report_figures
from orchestrator.ui.service import presets
from workflows.excel_report import ExcelReportWorkflow, ReportConfig
from workflows.excel_report.encoding import ByteCounter

#: Text a workbook or a model may hold that plotly.js would read as markup.
HOSTILE: list[str] = cases("ui_service.toml", "hostile")


@pytest.mark.parametrize("text", HOSTILE)
def test_plot_text_leaves_no_tag_and_keeps_the_text(text: str) -> None:
    out = plot_text(text, limit=200)
    assert "<" not in out and ">" not in out
    # plotly.js decodes &lt; &gt; &amp; back to the characters: what is shown is the text
    shown = out.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&")
    assert shown == text


def test_plot_text_cuts_long_labels_and_drops_control_characters() -> None:
    assert plot_text("a\x00b\nc") == "a b c"
    out = plot_text("x" * 500, limit=60)
    assert len(out) == 60 and out.endswith("…")
    # cut before escaping: an entity is never cut in half
    assert plot_text("&" * 100, limit=10) == "&amp;" * 9 + "…"


def test_expert_figure_is_the_grid_as_a_heatmap() -> None:
    calls = [
        {"expert_routing_source": "replay", "top_experts": [[1, 3, 0.5], [1, 7, 0.25]]},
        {"expert_routing_source": "replay", "top_experts": [[2, 3, 0.4], [1, 3, 0.25]]},
    ]
    grid = expert_grid(calls)
    figure = expert_figure(grid)
    assert figure is not None
    heatmap = figure["data"][0]
    assert heatmap["type"] == "heatmap"
    assert heatmap["x"] == ["E3", "E7"] and heatmap["y"] == ["L1", "L2"]
    # layer 1: expert 3 0.75, expert 7 0.25 (renormalised); layer 2: expert 3 only
    assert heatmap["z"] == [[0.75, 0.25], [1.0, 0.0]]
    assert "source: replay" in figure["layout"]["title"]["text"]


def test_expert_grid_sums_whole_counts_over_the_turns_calls() -> None:
    calls = [
        {  # 10 activations in layer 1, 4 in layer 2
            "expert_routing_source": "replay",
            "moe_layers": [1, 2],
            "expert_counts": [[6, 0, 4, 0], [0, 0, 0, 4]],
            "top_experts": [[1, 0, 0.6]],  # ignored: the counts say more
        },
        {
            "expert_routing_source": "replay",
            "moe_layers": [1, 2],
            "expert_counts": [[0, 0, 0, 10], [0, 4, 0, 0]],
            "top_experts": [],
        },
    ]
    grid = expert_grid(calls)
    assert grid["layers"] == [1, 2] and grid["experts"] == [0, 1, 2, 3]
    # layer 1: 6, 0, 4, 10 of 20; layer 2: 0, 4, 0, 4 of 8
    assert grid["share"] == [[0.3, 0.0, 0.2, 0.5], [0.0, 0.5, 0.0, 0.5]]
    assert grid["sources"] == ["replay"]


def test_expert_figure_of_no_routing_is_none_and_a_bad_grid_is_refused() -> None:
    assert expert_figure(expert_grid([])) is None
    with pytest.raises(ValueError, match=r"2 layers × 1 experts"):
        expert_figure({"layers": [1, 2], "experts": [3], "share": [[1.0]], "sources": []})
    with pytest.raises(ValueError, match=r"within 0\.\.1"):
        expert_figure({"layers": [1], "experts": [3], "share": [[1.5]], "sources": []})


def test_the_source_label_is_escaped_too() -> None:
    grid = {"layers": [1], "experts": [0], "share": [[1.0]], "sources": ["<b>x</b>"]}
    figure = expert_figure(grid)
    assert figure is not None and "<b>" not in figure["layout"]["title"]["text"]


def _hostile_sales(path: Path) -> Path:
    """A sales sheet whose region names are markup (what a workbook may hold)."""
    wb = openpyxl.Workbook()
    ws = wb.active
    ws.title = "Sales"
    ws.append(["Date", "Region", "Revenue"])
    for i in range(36):
        ws.append([date(2024, 1 + i % 12, 1 + i % 27), HOSTILE[i % 3], 100.0 + 10 * i])
    wb.save(path)
    return path


async def test_report_charts_come_from_the_report_workbook_escaped(tmp_path: Path) -> None:
    path = _hostile_sales(tmp_path / "sales.xlsx")
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    model = ScriptedModel(
        json_reply=json.dumps(
            {"findings": [], "title": "t", "summary": "s", "sections": []}, ensure_ascii=False
        )
    )
    workflow = ExcelReportWorkflow(ReportConfig(output_dir=tmp_path / "out"), ByteCounter())
    outcome = await Orchestrator(model, store, [workflow]).handle(
        Request(
            text="Summarise the attached spreadsheet",
            attachments=(Attachment(filename=path.name, path=str(path)),),
        )
    )
    store.close()
    assert outcome.status == "succeeded", outcome.error
    figures = report_figures(outcome.result["xlsx"])
    assert figures, "the report workbook has charts"
    book = openpyxl.load_workbook(outcome.result["xlsx"], read_only=True)
    blocks = sum(1 for row in book["Chart data"].iter_rows(values_only=True) if row[1] == "value")
    assert len(figures) == min(4, blocks)
    by_region = [f for f in figures if "Region" in f["layout"]["title"]["text"]]
    assert by_region, [f["layout"]["title"]["text"] for f in figures]
    trace = by_region[0]["data"][0]
    assert trace["type"] == "bar"
    assert all("<" not in label and ">" not in label for label in trace["x"])
    shown = {x.replace("&lt;", "<").replace("&gt;", ">").replace("&amp;", "&") for x in trace["x"]}
    assert shown == set(HOSTILE[:3])
    assert all(isinstance(v, float) for v in trace["y"])
    periods = [f for f in figures if f["layout"]["title"]["text"].endswith(" per period")]
    assert all(f["data"][0]["type"] == "scatter" for f in periods)


def test_report_figures_of_a_missing_or_plain_workbook(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError):
        report_figures(tmp_path / "nope.xlsx")
    plain = tmp_path / "plain.xlsx"
    openpyxl.Workbook().save(plain)
    assert report_figures(plain) == []
    broken = tmp_path / "broken.xlsx"
    broken.write_bytes(b"not a zip")
    with pytest.raises(ValueError, match=r"broken\.xlsx"):
        report_figures(broken)


SECRET = "ui-service-test-secret-0123456789abcdef"


def _headers(role: str = "customer", customer: str | None = "C00001") -> dict[str, str]:
    """A signed caller's Authorization header (what ui/app.py sends)."""
    caller = Caller(name=f"{role}-{customer}", role=role, customer_id=customer)  # type: ignore[arg-type]
    return {"Authorization": f"Bearer {sign_caller(SECRET, caller)}"}


def _client(app: Any) -> TestClient:
    """A test client signed in as customer C00001."""
    return TestClient(app, headers=_headers())


def _settings(tmp_path: Path, **overrides: Any) -> Settings:
    """Settings of a service with its stores under ``tmp_path`` and no model server."""
    values: dict[str, Any] = {
        "database_url": f"sqlite:///{tmp_path / 'telemetry.db'}",
        "cs_database_url": f"sqlite:///{tmp_path / 'cs.db'}",
        "report_dir": tmp_path / "reports",
        "server_url": "http://127.0.0.1:9/v1",
    }
    return Settings(**(values | overrides))


@pytest.fixture
def service(tmp_path: Path) -> TestClient:
    settings = _settings(tmp_path)
    model = ScriptedModel(replies=["Sorry <script>alert(1)</script> about the wait."])
    return _client(build_app(settings, client=model, secret=SECRET))


def _turn(client: TestClient, body: dict[str, Any]) -> list[dict[str, Any]]:
    response = client.post("/api/turn", json=body)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("application/x-ndjson")
    return [json.loads(line) for line in response.text.splitlines() if line.strip()]


def test_a_turn_streams_the_classification_first_and_the_heatmap_last(
    service: TestClient,
) -> None:
    with service as client:
        events = _turn(
            client,
            {
                "text": "Where is my order? It has not arrived",
                "thread_id": tid("t-1"),
                "customer_id": "C00001",
                "preset": "precise",
            },
        )
    kinds = [e["kind"] for e in events]
    assert kinds[0] == "classification" and "rules" not in kinds  # classified once
    assert events[0]["route"] == "customer_service"
    assert isinstance(events[0]["signals"], list)
    # what each tier contributed, so the page can say which decided when no rule fired
    tiers = events[0]["tiers"]
    assert {t["tier"] for t in tiers} >= {"fast", "rules", "learned"}
    assert sum(t["decided"] for t in tiers) == 1
    assert kinds.index("done") < kinds.index("expert_grid") == len(kinds) - 1
    text = "".join(e["text"] for e in events if e["kind"] in ("reply_facts", "reply_token"))
    # markup the model wrote never reaches the page: the claim checker drops that sentence
    # (workflows/customer_service/claims.py); what is shown is escaped by the app as before
    assert "<script>" not in text and text
    grid = events[-1]
    assert grid["sources"] == ["scripted"] and grid["figure"]["data"][0]["type"] == "heatmap"
    calls = [e for e in events if e["kind"] == "call_experts"]
    assert calls and all(len(c["expert_counts"]) == len(c["moe_layers"]) for c in calls)
    for row in grid["share"]:
        assert abs(sum(row) - 1.0) < 1e-3  # each layer's shares are over all its tokens
    done = next(e for e in events if e["kind"] == "done")
    assert done["status"] == "succeeded"


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"text": "", "thread_id": "t"}, "text"),
        ({"text": "hi", "thread_id": "bad id!"}, "thread_id"),
        ({"text": "hi", "thread_id": "t", "preset": "wild"}, "preset"),
        ({"text": "hi", "thread_id": "t", "path": "/no/such.xlsx"}, "upload it again"),
    ],
)
def test_a_bad_turn_is_a_400_naming_the_field(
    service: TestClient, body: dict[str, Any], message: str
) -> None:
    with service as client:
        response = client.post("/api/turn", json=body)
    assert response.status_code == 400
    assert message in response.json()["error"]


_CS_TURN = {"text": "Where is my order?", "thread_id": tid("t-tr"), "customer_id": "C00001"}


def test_the_service_traces_turns_from_otel_env_and_stops_when_it_closes(
    service: TestClient, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """OTEL_TRACES_EXPORTER=console: the UI's turns are traced as ``orchestrator chat``'s are
    (the console exporter writes the spans to stderr when the app closes)."""
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")
    assert not tracing_enabled()
    try:
        with service as client:
            assert tracing_enabled()
            _turn(client, _CS_TURN)
        assert not tracing_enabled()  # turned off (and flushed) with the app
    finally:
        shutdown_tracing()
    err = capfd.readouterr().err
    spans = [json.loads(s) for s in re.findall(r"^\{\n.*?^\}$", err, re.S | re.M)]
    names = {s["name"] for s in spans}
    assert {"orchestrator.request", "orchestrator.workflow", "orchestrator.model_call"} <= names
    request = next(s for s in spans if s["name"] == "orchestrator.request")
    assert request["attributes"]["route"] == "customer_service"


def test_the_service_keeps_tracing_the_cli_turned_on_and_honours_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``orchestrator ui --trace memory|console|otlp``: the CLI's exporter gets the UI's spans and
    stays on after the app closes; ``--trace off`` (trace_from_env=False) with
    OTEL_TRACES_EXPORTER set traces nothing; a bad OTEL_TRACES_EXPORTER stops the app opening."""
    settings = _settings(tmp_path)
    model = ScriptedModel(replies=["On its way."])
    exporter = configure_tracing("memory")
    try:
        monkeypatch.setenv("OTEL_TRACES_EXPORTER", "console")  # the CLI's choice wins
        with _client(build_app(settings, client=model, secret=SECRET)) as client:
            _turn(client, _CS_TURN)
        assert tracing_enabled()
        names = [s.name for s in exporter.get_finished_spans()]
        assert names.count("orchestrator.request") == 1 and "orchestrator.node" in names
    finally:
        shutdown_tracing()
    with _client(build_app(settings, client=model, trace_from_env=False, secret=SECRET)) as client:
        assert not tracing_enabled()
        _turn(client, {**_CS_TURN, "thread_id": tid("t-off")})
    monkeypatch.setenv("OTEL_TRACES_EXPORTER", "zipkin")
    with (
        pytest.raises(UserError, match="console, otlp or none"),
        _client(build_app(settings, client=model, secret=SECRET)),
    ):
        pass
    assert not tracing_enabled()


#: A post with lexicon hits in two languages, and its triggering words.
_POST = "you are a stupid idiot, go kill yourself. 你真是个傻逼"


def test_a_moderation_panel_turn_is_moderated_whatever_the_classifier_says(
    service: TestClient,
) -> None:
    # what the UI sends: the session's thread and customer (which alone would keep the turn
    # in customer service) and the route fixed by the panel
    body = {
        "text": _POST,
        "thread_id": "t-mod",
        "customer_id": "C00001",
        "route": "content_moderation",
    }
    with service as client:
        events = _turn(client, body)
    assert events[0]["kind"] == "classification"
    assert events[0]["route"] == "content_moderation" and events[0]["confidence"] == 1.0
    done = next(e for e in events if e["kind"] == "done")
    verdict = done["result"]
    assert verdict["decision"] in ("allow", "review", "block")
    words = {_POST[s["start"] : s["end"]] for s in verdict["spans"]}
    assert {"kill yourself", "傻逼"} <= words, verdict["spans"]  # offsets into the post as sent
    assert all(_POST[s["start"] : s["end"]] == s["text"] for s in verdict["spans"])


def test_without_the_panel_the_same_post_stays_in_the_conversation(service: TestClient) -> None:
    body = {"text": _POST, "thread_id": tid("t-mod2"), "customer_id": "C00001"}
    with service as client:
        events = _turn(client, body)
    done = next(e for e in events if e["kind"] == "done")
    assert "decision" not in (done["result"] or {})  # a customer-service turn, not a verdict


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        ({"route": "customer_service"}, "route"),
        ({"route": "content_moderation", "path": "x.xlsx"}, "path"),
    ],
)
def test_a_bad_moderation_turn_is_a_400(
    service: TestClient, extra: dict[str, Any], message: str
) -> None:
    with service as client:
        response = client.post("/api/turn", json={"text": "hi", "thread_id": "t", **extra})
    assert response.status_code == 400
    assert message in response.json()["error"]


def test_a_turn_that_fails_mid_stream_ends_with_an_error_line(tmp_path: Path) -> None:
    settings = _settings(tmp_path)
    model = ScriptedModel(
        replies=["unused"], fail_on_call=(1, lambda: RuntimeError("the scripted model broke"))
    )
    with _client(build_app(settings, client=model, secret=SECRET)) as client:
        events = _turn(client, {**_CS_TURN, "thread_id": tid("t-fail")})
    errors = [e for e in events if e["kind"] == "error"]
    assert errors, events  # the stream says why it ended, instead of being cut off
    # in words, with a reference for the log: no exception text reaches the page
    assert errors[0]["error"].startswith("the assistant failed on this turn (ref ")
    assert "RuntimeError" not in errors[0]["error"] and "scripted" not in errors[0]["error"]
    assert events[-1]["kind"] == "expert_grid"  # and the turn's ending lines still come


@pytest.mark.parametrize("preset", ["precise", "balanced", "creative"])
def test_the_chat_preset_sets_the_temperatures_the_model_gets(tmp_path: Path, preset: str) -> None:
    # balanced is the configured presets (ORCH_TEMPERATURE_*)
    settings = _settings(tmp_path, temperature_factual=0.3)
    model = ScriptedModel(replies=["Your order is on its way."])
    with _client(build_app(settings, client=model, secret=SECRET)) as client:
        _turn(client, {**_CS_TURN, "thread_id": tid(f"t-{preset}"), "preset": preset})
    want = presets(settings)[preset]
    assert want["factual"] == {"precise": 0.0, "balanced": 0.3, "creative": 0.5}[preset]
    free = [r.temperature for r in model.requests if r.json_schema is None]
    judged = [r.temperature for r in model.requests if r.json_schema is not None]
    assert free and set(free) <= {want["factual"], want["free_text"]}, model.requests
    assert want["factual"] in free  # the customer-service answer is a factual reply
    assert set(judged) <= {want["judging"]}


def test_the_first_health_reading_already_has_throughput(
    tmp_path: Path, fake_vllm: dict[str, float]
) -> None:
    """The service reads the server once when it opens, so the health a person first asks
    for (the chat's start) has rates: a rate needs two readings."""
    fake_vllm["step"] = 40.0  # generated tokens between readings
    settings = _settings(tmp_path, server_url=str(fake_vllm["url"]))
    with _client(
        build_app(settings, client=ScriptedModel(replies=["ok"]), secret=SECRET)
    ) as client:
        first = client.get("/api/health").json()
    assert fake_vllm["reads"] == 2
    assert first["interval_s"] is not None and first["interval_s"] > 0
    assert first["generation_throughput"] is not None and first["generation_throughput"] > 0
    assert "generation=-" not in first["stats_line"]


def test_a_service_whose_server_does_not_answer_still_opens(tmp_path: Path) -> None:
    with _client(
        build_app(_settings(tmp_path), client=ScriptedModel(replies=["ok"]), secret=SECRET)
    ) as c:
        answer = c.get("/api/health")
    assert answer.status_code == 503
    assert answer.json()["error"] == "the model server's health cannot be read right now"
    assert set(answer.json()["presets"]) == {"precise", "balanced", "creative"}


def test_the_routes_a_page_may_offer_are_the_declared_ones(service: TestClient) -> None:
    """``/api/routes`` lists the declared routes; the moderation panel fixes the one whose
    content is under review (``wraps_content``), named by the routes file, not by the page."""
    with service as client:
        routes = client.get("/api/routes").json()
        anonymous = client.get("/api/routes", headers={"authorization": ""})
    assert {r["name"] for r in routes} == {"customer_service", "content_moderation", "excel_report"}
    assert [r["name"] for r in routes if r["wraps_content"]] == ["content_moderation"]
    assert anonymous.status_code == 401
