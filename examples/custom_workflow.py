"""Your own route and workflow, passed in code beside the installed ones.

A workflow declares its route (:class:`~orchestrator.routes.RouteSpec`: description, rules,
example utterances) and is handed to ``Orchestrator``; the classifier reads its rules with the
built-in routes'. To make a package of it that registers through an entry point, run
``orchestrator new workflow NAME``; to teach the learned tier the route, run
``orchestrator classifier fit --examples my_routes.csv`` (see docs/tutorial.md).

    .venv/bin/python examples/custom_workflow.py [--scripted]
"""

from __future__ import annotations

import re
from typing import Any, TypedDict

from _common import run, session, show
from langgraph.graph import END, START, StateGraph
from pydantic import BaseModel

from orchestrator import Orchestrator, Request, RuleClassifier
from orchestrator.core.registry import load_workflows
from orchestrator.core.workflow import Workflow
from orchestrator.routes import Route, RouteSpec

ROUTE = RouteSpec(
    name=Route("invoice_question"),
    description="Questions about an invoice number: its amount, due date, status.",
    rules=(
        {"id": "invoice.number", "weight": 0.9, "regex": r"\binv-\d{4,}\b", "decisive": True},
        {"id": "invoice.words", "weight": 0.6, "keywords": ["invoice", "发票"]},
    ),
    examples={"en": ("when is invoice INV-2041 due", "what is the amount of invoice INV-1187")},
)
#: The invoices this example knows (a real workflow would read them from a system).
INVOICES = {"INV-2041": ("EUR 1,250.00", "2026-12-31", "open")}


class State(TypedDict, total=False):
    text: str
    answer: str


class InvoiceAnswer(BaseModel):
    answer: str


class InvoiceQuestion(Workflow[State, InvoiceAnswer]):
    """Answers from the invoice table, without a model call (facts come from data)."""

    name = "invoice_question"
    route = ROUTE.name
    route_spec = ROUTE

    def __init__(self) -> None:
        def look_up(state: State) -> dict[str, Any]:
            found = re.search(r"INV-\d{4,}", state["text"], re.IGNORECASE)
            number = found.group(0).upper() if found else None
            if number not in INVOICES:
                return {"answer": "I do not know that invoice; please check its number."}
            amount, due, status = INVOICES[number]
            return {"answer": f"{number}: {amount}, due {due}, {status}."}

        graph = StateGraph(State)
        graph.add_node("look_up", look_up)
        graph.add_edge(START, "look_up")
        graph.add_edge("look_up", END)
        self.graph = graph.compile()

    def initial_state(self, request: Request) -> State:
        return State(text=request.text)

    def result(self, state: State) -> InvoiceAnswer:
        return InvoiceAnswer(answer=state["answer"])

    def headline(self, result: InvoiceAnswer) -> str:
        return result.answer


async def main() -> None:
    async with session(__doc__ or "") as (client, store, _):
        # the installed workflows and this one, checked against their routes at start-up
        workflows = load_workflows(extra=[InvoiceQuestion()])
        routes = [w.route_spec for w in workflows if w.route_spec is not None]
        classifier = RuleClassifier(routes=routes)  # every route in use, as the app's
        if classifier.model is not None and ROUTE.name not in classifier.model.classes:
            # the learned tier has not seen this route yet: route by the rules alone until
            # `orchestrator classifier fit --examples` has taught it
            classifier = RuleClassifier(model_path=False, calibration_path=False, routes=routes)
        orch = Orchestrator(client, store, workflows, classifier=classifier)
        for text in ("When is invoice INV-2041 due?", "Where is my parcel? It is late"):
            show(await orch.handle(Request(text=text)))


if __name__ == "__main__":
    run(main)
