"""Workflows are plugins and routes are data (issue 49): the registry finds workflows through
entry points, start-up refuses routes and workflows that do not match (one line each), and a
fourth workflow the core has never heard of runs, is recorded, counted and written to a batch's
results like the built-in ones."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any, TypedDict

import pytest
from langgraph.runtime import Runtime
from pydantic import BaseModel
from typer.testing import CliRunner

from orchestrator.batch.inputs import BatchRow
from orchestrator.batch.results import RESULT_COLUMNS, row_output
from orchestrator.cli.app import app
from orchestrator.config import Settings
from orchestrator.core import registry
from orchestrator.core.client import ChatMessage
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.core.fixed import FixedRoute
from orchestrator.core.workflow import Workflow, WorkflowContext
from orchestrator.exceptions import UnknownRouteError, UserError
from orchestrator.observability import REGISTRY
from orchestrator.request import Request
from orchestrator.routes import ENTRY_POINT_GROUP, Route, RouteSpec, the_route
from orchestrator.telemetry import TelemetryStore
from orchestrator.testing import ScriptedModel
from tests.unit.workflow_doubles import one_node_graph
from workflows import default_workflows

FAQ = RouteSpec(
    name=Route("faq"),
    description="Questions answered from the shop's FAQ: opening hours, returns address.",
    channels=("faq",),
    rules=({"id": "faq.hours", "weight": 0.6, "keywords": ["opening hours", "营业时间"]},),
    examples={"en": ("what are your opening hours",), "zh": ("你们的营业时间是几点",)},
)


class FaqState(TypedDict, total=False):
    question: str
    answer: str


class FaqResult(BaseModel):
    answer: str
    source: str


class FaqWorkflow(Workflow[FaqState, FaqResult]):
    """A workflow of a route only it declares (``route_spec``), written against the contract."""

    name = "faq"
    route = Route("faq")
    route_spec = FAQ

    def __init__(self) -> None:
        async def answer(state: FaqState, runtime: Runtime[WorkflowContext]) -> dict[str, Any]:
            call = await runtime.context.llm.chat("answer", [ChatMessage(role="user", content="q")])
            return {"answer": call.text}

        self.graph = one_node_graph(FaqState, answer)

    def initial_state(self, request: Request) -> FaqState:
        return FaqState(question=request.text)

    def result(self, state: FaqState) -> FaqResult:
        return FaqResult(answer=state["answer"], source="faq.md")

    def headline(self, result: FaqResult) -> str:
        return f"[faq] {result.answer}"

    def output(self, result: FaqResult) -> str | None:
        return result.answer


@dataclass
class FakeEntryPoint:
    """What the registry reads of an ``importlib.metadata.EntryPoint``."""

    name: str
    value: str
    target: Any

    def load(self) -> Any:
        if isinstance(self.target, Exception):
            raise self.target
        return self.target


def _with_entry_points(monkeypatch: pytest.MonkeyPatch, *extra: FakeEntryPoint) -> None:
    real = list(entry_points(group=ENTRY_POINT_GROUP))
    monkeypatch.setattr(registry, "entry_points", lambda group: [*real, *extra])


def test_the_built_in_workflows_register_through_entry_points() -> None:
    names = {ep.name for ep in entry_points(group=ENTRY_POINT_GROUP)}
    assert {"customer_service", "content_moderation", "excel_report"} <= names
    found = registry.load_workflows()  # the start-up check passes for the project as shipped
    declared = [spec.name for spec in registry.file_routes()]
    assert sorted(w.route for w in found) == sorted(declared)


def test_a_declared_route_without_a_workflow_fails_at_start_up_in_one_line() -> None:
    workflows = [w for w in default_workflows() if w.route != "excel_report"]
    routes = registry.declared_routes(workflows, registry.file_routes())
    with pytest.raises(UserError, match="route 'excel_report' is declared but no workflow") as e:
        registry.check_routes(routes, workflows)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("route", ["faq", "fallback"])
def test_a_workflow_of_an_undeclared_route_fails_at_start_up(route: str) -> None:
    stray = FaqWorkflow()
    stray.route, stray.route_spec = Route(route), None
    workflows = [*default_workflows(), stray]
    routes = registry.declared_routes(workflows, registry.file_routes())
    with pytest.raises(UserError, match=f"route '{route}', which is not declared") as e:
        registry.check_routes(routes, workflows)
    assert "\n" not in str(e.value)


def test_a_route_declared_twice_or_served_twice_is_refused() -> None:
    twice = FaqWorkflow()
    twice.route_spec = FAQ.model_copy(update={"name": Route("customer_service")})
    with pytest.raises(UserError, match="declared by the routes file too"):
        registry.declared_routes([twice], registry.file_routes())
    other = FaqWorkflow()
    other.name = "faq_copy"  # another package's workflow declaring the same route
    with pytest.raises(UserError, match="'faq' of workflow faq_copy is declared by workflow faq"):
        registry.declared_routes([FaqWorkflow(), other], ())
    routes = registry.declared_routes([FaqWorkflow()], registry.file_routes())
    with pytest.raises(UserError, match="both for route 'faq'"):
        registry.check_declared(routes, [FaqWorkflow(), FaqWorkflow()])


def test_a_plugin_that_fails_to_load_is_named_in_one_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    broken = FakeEntryPoint("broken", "no_such_pkg:Flow", ModuleNotFoundError("no_such_pkg"))
    _with_entry_points(monkeypatch, broken)
    with pytest.raises(UserError, match="entry point broken = 'no_such_pkg:Flow' failed"):
        registry.discover_workflows()
    try:  # a plugin whose route declaration has a misspelt field: pydantic's error, one line
        RouteSpec(name=Route("faq"), chanels=("faq",))  # type: ignore[call-arg]
    except ValueError as exc:
        misspelt = FakeEntryPoint("faq", "faq_pkg:Flow", exc)
    monkeypatch.setattr(registry, "entry_points", lambda group: [misspelt])
    with pytest.raises(UserError, match="RouteSpec: chanels: Extra inputs") as e:
        registry.discover_workflows()
    assert "\n" not in str(e.value) and "pydantic.dev" not in str(e.value)
    not_one = FakeEntryPoint("odd", "pkg:thing", lambda: 42)
    monkeypatch.setattr(registry, "entry_points", lambda group: [not_one])
    with pytest.raises(UserError, match=r"gives a int, not an orchestrator\.core\.Workflow"):
        registry.discover_workflows()


def test_an_installed_plugin_declares_its_own_route(monkeypatch: pytest.MonkeyPatch) -> None:
    _with_entry_points(monkeypatch, FakeEntryPoint("faq", "faq_pkg:FaqWorkflow", FaqWorkflow))
    found = registry.load_workflows()
    assert "faq" in {w.route for w in found}
    assert registry.routes_in_use()[-1] == "faq"  # after the routes file's own
    assert registry.plugin_route_specs() == (FAQ,)  # read without starting a workflow


async def test_a_fourth_workflow_runs_is_recorded_counted_and_batched(tmp_path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path}/t.db")
    model = ScriptedModel(replies=["We open 9 to 17, 周一至周五."])
    orch = Orchestrator(
        model, store, [*default_workflows(), FaqWorkflow()], classifier=FixedRoute(Route("faq"))
    )
    before = REGISTRY.get_sample_value(
        "orchestrator_requests_total", {"route": "faq", "status": "succeeded"}
    )
    outcome = await orch.handle(Request(text="what are your opening hours?"))
    assert outcome.status == "succeeded" and outcome.workflow == "faq"
    assert outcome.output == "We open 9 to 17, 周一至周五."
    (row,) = store.requests()
    assert (row.route, row.workflow, row.status) == ("faq", "faq", "succeeded")
    after = REGISTRY.get_sample_value(
        "orchestrator_requests_total", {"route": "faq", "status": "succeeded"}
    )
    assert after == (before or 0.0) + 1  # the Prometheus label is the route's own name
    line = row_output(
        BatchRow(index=0, row_id="r1", line=2, text="hours?"),
        outcome,
        status=outcome.status,
        error=None,
        attempts=1,
    )
    assert list(line) == list(RESULT_COLUMNS)
    assert (line["route"], line["workflow"], line["output"]) == ("faq", "faq", outcome.output)
    store.close()


async def test_threads_stay_only_where_a_route_declares_holds_threads(tmp_path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path}/t.db")
    declared = registry.declared_routes(default_workflows(), registry.file_routes())
    assert the_route(declared.values(), "holds_threads") == "customer_service"
    faq = FaqWorkflow()
    fixed = FixedRoute(Route("faq"))
    orch = Orchestrator(ScriptedModel(), store, [*default_workflows(), faq], classifier=fixed)
    assert orch.thread_route == "customer_service"
    turn = Request(text="hours?", thread_id="t1", customer_id="C00001")
    assert (await orch.handle(turn)).workflow == "customer_service"  # the thread stays
    assert (await orch.handle(Request(text="hours?"))).workflow == "faq"
    alone = Orchestrator(
        ScriptedModel(replies=["9-17"]),
        store,
        [faq],
        classifier=FixedRoute(Route("faq")),
        routes={FAQ.name: FAQ},
    )
    assert alone.thread_route is None
    again = Request(text="hours?", thread_id="t2", customer_id="C00001")
    assert (await alone.handle(again)).workflow == "faq"  # no route pins the thread
    with pytest.raises(UnknownRouteError, match="holds threads"):
        await alone.resume("t1", approve=True)
    store.close()


def test_a_route_spec_checks_its_name_and_rules() -> None:
    with pytest.raises(ValueError, match=r"should match pattern"):
        RouteSpec(name=Route("FAQ Route"))
    with pytest.raises(ValueError, match="fallback is chosen by thresholds"):
        RouteSpec(name=Route("fallback"))
    with pytest.raises(ValueError, match="names route 'customer_service'"):
        RouteSpec(name=Route("faq"), rules=({"id": "x", "route": "customer_service"},))
    with pytest.raises(ValueError, match="wraps_content is set on routes a, b"):
        the_route(
            [RouteSpec(name=Route(n), wraps_content=True) for n in ("a", "b")], "wraps_content"
        )
    assert FAQ.rule_tables()[0]["route"] == "faq"


def test_run_batch_and_ui_refuse_a_broken_plugin_in_one_line_before_any_server(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    broken = FakeEntryPoint("faq", "faq_pkg:Faq", ImportError("cannot import name 'Faq'"))
    _with_entry_points(monkeypatch, broken)
    monkeypatch.setenv("ORCH_DATABASE_URL", f"sqlite:///{tmp_path / 't.db'}")
    sheet = tmp_path / "in.csv"
    sheet.write_text("text\nwhere is my parcel\n", encoding="utf-8")
    for args in (
        ["run", "--limit", "1", "--server-url", "http://127.0.0.1:9/v1"],
        ["batch", str(sheet), "--text-column", "text", "--out", str(tmp_path / "r.xlsx")],
        ["ui", "--no-launch", "--server-url", "http://127.0.0.1:9/v1"],  # not the service's
    ):
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 2, result.output
        assert "workflow entry point faq = 'faq_pkg:Faq' failed to load" in result.output
        assert "Traceback" not in result.output


async def test_chat_and_handoff_open_the_installed_workflow_that_holds_threads(
    monkeypatch: pytest.MonkeyPatch, tmp_path
) -> None:
    settings = Settings(cs_database_url=f"sqlite:///{tmp_path / 'cs.db'}")
    async with registry.opened_thread_workflow(settings) as workflow:
        assert workflow.route == "customer_service"
        assert getattr(workflow, "store", None) is not None  # opened on the order store
    monkeypatch.setattr(registry, "entry_points", lambda group: [])  # nothing serves it
    with pytest.raises(UserError, match="no installed workflow holds conversations"):
        async with registry.opened_thread_workflow(settings):
            pass
