"""The order store and the conversation checkpointer on a real PostgreSQL server
(Debian's postgresql, started by ``postgres_server.running_postgres``)."""

from __future__ import annotations

import sys
from pathlib import Path

from orchestrator import Orchestrator, Request, TelemetryStore
from orchestrator.config import Settings
from workflows.customer_service import checkpoint_url, open_workflow
from workflows.customer_service.store import OrderStore

sys.path.insert(0, str(Path(__file__).parent))
from customer_service_double import ScriptedToolModel
from postgres_server import PostgresServer


async def test_store_and_postgres_saver_keep_a_conversation(
    postgres: PostgresServer, tmp_path: Path
) -> None:
    url = postgres.create_database("cs_conversations")
    settings = Settings(cs_database_url=url)
    assert checkpoint_url(settings) == url  # Postgres store → Postgres saver
    store = OrderStore(url)
    store.seed(10, seed=2)
    customer = "C00001"
    order_id = store.tools(customer).order_ids()[0]
    lookup = store.tools(customer).run("lookup_order", {"order_id": order_id}).facts
    telemetry = TelemetryStore(f"sqlite:///{tmp_path / 'tel.db'}")
    async with open_workflow(settings) as workflow:
        orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
        first = await orch.handle(
            Request(text=f"status of {order_id}", thread_id="pg", customer_id=customer)
        )
    assert first.status == "succeeded" and lookup["total"] in first.result["reply"]["text"]
    async with open_workflow(settings) as workflow:  # a new saver: state comes from Postgres
        orch = Orchestrator(ScriptedToolModel(), telemetry, [workflow])
        second = await orch.handle(
            Request(text="what is its status again?", thread_id="pg", customer_id=customer)
        )
        snapshot = await workflow.graph.aget_state({"configurable": {"thread_id": "pg"}})
    assert snapshot.values["turn"] == 2 and snapshot.values["last_order_id"] == order_id
    assert order_id in second.result["reply"]["text"]
