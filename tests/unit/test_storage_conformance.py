"""Storage conformance: the same tests on a SQLite file, SQLite in memory and a real PostgreSQL.

Like LangGraph's checkpointer conformance suite, every test here takes a ``url`` fixture
parametrised over the backends and exercises the store only through its public API: request
status transitions, a call's counts and confidence round-tripping, rollups written in the
call's transaction, the read API, errors on bad input, and the schema migrations (a fresh
database and an upgraded pre-migration one both match the ORM schema). The skew report is
also built from the same data on SQLite and PostgreSQL and must come out identical.

The PostgreSQL server is Debian's ``postgresql`` package, started once per session by
:func:`postgres_server.running_postgres` (its ``TimeZone`` is not UTC, so a datetime that
loses its zone is caught). Missing server binaries fail these tests: CI must run them.
"""

from __future__ import annotations

import asyncio
import itertools
import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from postgres_server import PostgresServer
from skew_data import EXPERTS, LAYERS, T0, TOP_K, add_request, freeze_time, trace, uniform
from sqlalchemy import Engine, MetaData, Table, create_engine, inspect, text
from sqlalchemy.pool import StaticPool
from typer.testing import CliRunner

from orchestrator import Request, RuleClassifier, TelemetryError, TelemetryStore, UserError
from orchestrator.analysis.skew import ReportOptions, build_report
from orchestrator.classifier import Classification
from orchestrator.cli import app
from orchestrator.telemetry import (
    CONFIDENCE_BINS,
    BatchLedger,
    RollupStatus,
    TelemetryReader,
    decode_counts,
    head_revision,
)
from orchestrator.telemetry import store as store_module
from orchestrator.telemetry.__main__ import main as telemetry_main
from orchestrator.telemetry.migrate import alembic_config, current_revision
from orchestrator.telemetry.migrate import upgrade as migrate_upgrade
from orchestrator.telemetry.schema import Base
from serving import ExpertRoutingSource, ExpertRoutingTrace

BACKENDS = ["sqlite-file", "sqlite-memory", "postgresql"]
_names = itertools.count()


def _new_url(backend: str, request: pytest.FixtureRequest, tmp_path: Path) -> str:
    if backend == "sqlite-file":
        return f"sqlite:///{tmp_path / f'telemetry{next(_names)}.db'}"
    if backend == "sqlite-memory":
        return "sqlite:///:memory:"
    server: PostgresServer = request.getfixturevalue("postgres")
    return server.create_database(f"telemetry_{next(_names)}")


@pytest.fixture(params=BACKENDS)
def url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """A URL of a new, empty database on each backend."""
    return _new_url(request.param, request, tmp_path)


@pytest.fixture
def store(url: str) -> Iterator[TelemetryStore]:
    opened = TelemetryStore(url)
    yield opened
    opened.close()


def _engine(url: str) -> Engine:
    """An engine of ``url``; one shared connection for SQLite in memory, like the store's."""
    if url == "sqlite:///:memory:":
        return create_engine(url, poolclass=StaticPool, connect_args={"check_same_thread": False})
    return create_engine(url)


def _classified(text_: str, request_id: str | None = None) -> tuple[Request, Classification]:
    request = Request(text=text_) if request_id is None else Request(id=request_id, text=text_)
    return request, RuleClassifier().classify(request)


def _call_args(
    request: Request, classification: Classification, routing: ExpertRoutingTrace, **kw: object
) -> dict[str, object]:
    """``record_call`` arguments of one call of ``request``; ``kw`` overrides any of them."""
    args: dict[str, object] = {
        "request_id": request.id,
        "classification": classification,
        "workflow": "customer_service",
        "node": "triage",
        "model": "scripted-model",
        "latency_ms": 12.5,
        "finish_reason": "stop",
        "routing": routing,
    }
    args.update(kw)
    return args


def _schema_diff(engine: Engine) -> list[object]:
    with engine.connect() as connection:
        return compare_metadata(MigrationContext.configure(connection), Base.metadata)


# --- schema -------------------------------------------------------------------------------


def test_a_new_database_is_at_head_and_matches_the_orm_schema(store: TelemetryStore) -> None:
    with store.engine.connect() as connection:
        assert current_revision(connection) == head_revision() == "0008"
        columns = {c["name"] for c in inspect(connection).get_columns("model_calls")}
    assert "expert_routing_source" in columns and "routing_source" not in columns
    assert _schema_diff(store.engine) == []
    if store.url != "sqlite:///:memory:":  # reopening an up-to-date database changes nothing
        TelemetryStore(store.url).close()
        with store.engine.connect() as connection:
            assert current_revision(connection) == "0008"
    assert store.count_calls() == 0


def test_the_revisions_build_the_orm_schema_and_an_upgrade_keeps_rows(
    url: str,
) -> None:
    """Migrate 0001 -> a pre-migration database (no alembic_version) with rows -> head."""
    engine = _engine(url)
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0001")
        connection.execute(text("DROP TABLE alembic_version"))  # as the old code left it
    with engine.begin() as connection:
        meta = MetaData()
        requests = Table("requests", meta, autoload_with=connection)
        calls = Table("model_calls", meta, autoload_with=connection)
        moment = datetime(2026, 11, 20, 9, 30, tzinfo=UTC)
        connection.execute(
            requests.insert(),
            [
                {
                    "id": "old-1",
                    "received_at": moment,
                    "text": "refund my order",
                    "route": "refund",
                    "route_confidence": 0.9,
                    "classifier_signals": [{"rule": "refund.keyword"}],
                    "workflow": "customer_service",
                    "status": "succeeded",
                    "result": {"ok": True},
                }
            ],
        )
        counts = np.arange(len(LAYERS) * EXPERTS, dtype="<u1").reshape(len(LAYERS), EXPERTS)
        connection.execute(
            calls.insert(),
            [
                {
                    "created_at": moment,
                    "request_id": "old-1",
                    "route": "refund",
                    "route_confidence": 0.9,
                    "classifier_signals": [],
                    "workflow": "customer_service",
                    "node": "triage",
                    "model": "m",
                    "prompt_tokens": 3,
                    "completion_tokens": 1,
                    "latency_ms": 1.0,
                    "routing_source": "replay",
                    "moe_layers": list(LAYERS),
                    "num_experts": EXPERTS,
                    "top_k": TOP_K,
                    "routed_tokens": 4,
                    "expert_counts": counts.tobytes(),
                },
                {
                    "created_at": moment + timedelta(minutes=1),
                    "request_id": "old-1",
                    "route": "refund",
                    "route_confidence": 0.9,
                    "classifier_signals": [],
                    "workflow": "customer_service",
                    "node": "reply",
                    "model": "m",
                    "prompt_tokens": 3,
                    "completion_tokens": 1,
                    "latency_ms": 1.0,
                    "routing_source": "dense",
                    "moe_layers": [],
                    "num_experts": 0,
                    "top_k": 0,
                    "routed_tokens": 0,
                    "expert_counts": None,
                },
            ],
        )
    # the upgrade: adopted at 0001, then 0002 renames the column (0003 adds batch jobs, 0004
    # the pending expert routing, 0005 sampling rates and decided_by); rows survive
    with engine.begin() as connection:
        before, after = migrate_upgrade(connection)
    assert (before, after) == (None, "0008")
    assert _schema_diff(engine) == []
    reader = TelemetryReader(engine, url)
    rows = reader.calls()
    assert [(r.node, r.expert_routing_source) for r in rows] == [
        ("triage", "replay"),
        ("reply", "dense"),
    ]
    # 0007: an old MoE call could only be ERNIE-4.5 (the one family described then)
    assert [r.model_family for r in rows] == ["ernie45", ""]
    assert (decode_counts(rows[0]) == counts).all() and decode_counts(rows[1]) is None
    (old,) = reader.requests()
    assert (old.id, old.status, old.result) == ("old-1", "succeeded", {"ok": True})
    assert reader.rollup_status() == (1, 0)  # the old rows had no rollups: the report rebuilds
    # 0002 (and 0007) go down and up again without losing a row
    with engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0001")
        assert "routing_source" in {
            c["name"] for c in inspect(connection).get_columns("model_calls")
        }
        command.upgrade(alembic_config(connection), "head")
    assert [r.expert_routing_source for r in reader.calls()] == ["replay", "dense"]
    engine.dispose()


# --- writes -------------------------------------------------------------------------------


def test_request_status_goes_from_running_to_its_final_value(store: TelemetryStore) -> None:
    done = datetime(2026, 11, 30, 23, 59, 59, 123456, tzinfo=UTC)
    store.clock = lambda: done
    first, c1 = _classified("refund my order please")
    second, c2 = _classified("where is my parcel")
    store.start_request(first, c1, "customer_service")
    store.start_request(second, c2, None)
    assert [r.status for r in store.requests()] == ["running", "running"]
    store.finish_request(first.id, "succeeded", result={"answer": "yes", "n": [1, 2]})
    store.finish_request(second.id, "failed", error="ModelCallError: boom")
    by_id = {r.id: r for r in store.requests()}
    assert by_id[first.id].status == "succeeded"
    assert by_id[first.id].result == {"answer": "yes", "n": [1, 2]}
    assert by_id[first.id].finished_at is not None
    assert (
        by_id[first.id].finished_at.replace(tzinfo=by_id[first.id].finished_at.tzinfo or UTC)
        == done
    )
    assert by_id[first.id].classifier_signals == [s.model_dump(mode="json") for s in c1.signals]
    assert (by_id[second.id].status, by_id[second.id].error) == ("failed", "ModelCallError: boom")
    assert by_id[second.id].workflow is None
    assert [r.id for r in store.requests(status="failed")] == [second.id]
    assert store.requests(status="running") == []


def test_a_call_round_trips_its_counts_and_confidence(store: TelemetryStore) -> None:
    moment = datetime(2026, 11, 30, 16, 5, 7, tzinfo=UTC)
    store.clock = lambda: moment
    rng = np.random.default_rng(3)
    busy = uniform()
    busy[:, 2] = 1e6
    routing = trace(rng, busy / busy.sum(1, keepdims=True), 300, confidence=0.7)
    request, classification = _classified("refund my order")
    store.start_request(request, classification, "customer_service")
    call_id = store.record_call(**_call_args(request, classification, routing))
    (row,) = store.calls(request_id=request.id)
    assert row.id == call_id
    assert (decode_counts(row) == routing.expert_counts()).all()
    assert len(row.expert_counts) == len(LAYERS) * EXPERTS * 2  # counts up to 300: uint16
    stored_conf = np.frombuffer(row.layer_confidence, dtype="<f4")
    assert (stored_conf == routing.confidence_per_layer().astype("<f4")).all()
    assert row.mean_router_confidence == pytest.approx(routing.mean_confidence(), rel=1e-12)
    assert row.expert_routing_source == ExpertRoutingSource.SCRIPTED.value
    assert list(row.moe_layers) == list(LAYERS) and row.top_k == TOP_K
    assert (row.routed_tokens, row.latency_ms, row.finish_reason) == (300, 12.5, "stop")
    created = row.created_at if row.created_at.tzinfo else row.created_at.replace(tzinfo=UTC)
    assert created == moment


async def test_async_writes_keep_their_order(store: TelemetryStore) -> None:
    rng = np.random.default_rng(4)
    request, classification = _classified("refund my order")
    await store.astart_request(request, classification, "customer_service")
    ids = [
        await store.arecord_call(
            **_call_args(request, classification, trace(rng, uniform(), 5), node=f"n{i}")
        )
        for i in range(4)
    ]
    await store.afinish_request(request.id, "succeeded")
    assert ids == sorted(ids) and len(set(ids)) == 4
    assert [c.node for c in store.calls(request_id=request.id)] == ["n0", "n1", "n2", "n3"]
    assert store.requests()[0].status == "succeeded"


@pytest.mark.parametrize("write", ["upsert", "update then insert"])
async def test_batch_rows_are_recorded_once_and_updated_in_place(
    store: TelemetryStore, write: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Batch rows queued at once are committed with the group's other writes, each row once;
    recording a row again (a failed row retried) updates it in place; a row of a batch that
    does not exist fails its own caller only. Both ways of writing a row: the database's own
    upsert (SQLite, PostgreSQL) and the UPDATE-then-INSERT of other databases."""
    if write != "upsert":
        monkeypatch.setitem(store_module._UPSERTS, store.engine.dialect.name, None)
    ledger = BatchLedger(store)
    ledger.open_batch("b1", source="in.csv", mapping={"text": "body"}, total_rows=40)
    request, classification = _classified("refund my order")

    async def row(index: int, status: str, attempts: int = 1) -> None:
        await ledger.arecord_row(
            "b1",
            index,
            row_id=f"r{index}",
            request_id=f"b1.{index}",
            status=status,
            attempts=attempts,
            output={"id": f"r{index}", "status": status, "reply": "=SUM(A1)"},
        )

    await asyncio.gather(
        store.astart_request(request, classification, "customer_service"),
        *(row(i, "failed" if i % 5 == 0 else "succeeded") for i in range(40)),
    )
    await asyncio.gather(*(row(i, "succeeded", attempts=2) for i in range(0, 40, 5)))
    with pytest.raises(TelemetryError, match="row 3 of batch nope"):
        await ledger.arecord_row(
            "nope", 3, row_id="x", request_id=None, status="failed", attempts=1, output={}
        )
    await row(40, "succeeded")  # the writer goes on after a rejected write
    assert ledger.finished_rows("b1") == {i: "succeeded" for i in range(41)}
    records = list(ledger.iter_rows("b1"))
    assert [r.row_index for r in records] == list(range(41))
    assert [r.attempts for r in records[:10]] == [2, 1, 1, 1, 1, 2, 1, 1, 1, 1]
    assert records[7].output == {"id": "r7", "status": "succeeded", "reply": "=SUM(A1)"}
    assert store.requests()[0].status == "running"


def test_rollups_are_written_in_the_calls_transaction(store: TelemetryStore) -> None:
    rng = np.random.default_rng(5)
    freeze = T0 + timedelta(minutes=20)
    store.clock = lambda: freeze
    traces = [trace(rng, uniform(), 10 + i, confidence=0.3 + 0.1 * i) for i in range(3)]
    request, classification = _classified("refund my order")
    store.start_request(request, classification, "customer_service")
    for routing in traces:
        store.record_call(**_call_args(request, classification, routing))
    dense = ExpertRoutingTrace.dense(prompt_tokens=3, completion_tokens=1)
    store.record_call(**_call_args(request, classification, dense, node="plain"))
    assert store.rollup_status() == RollupStatus(calls=3, summed=3)
    (rollup,) = list(store.iter_rollups())
    assert rollup.bucket_start == T0 and rollup.bucket_start.tzinfo is not None
    assert (rollup.workflow, rollup.node, rollup.expert_routing_source) == (
        "customer_service",
        "triage",
        "scripted",
    )
    assert (rollup.moe_layers, rollup.num_experts, rollup.top_k) == (LAYERS, EXPERTS, TOP_K)
    sums = rollup.sums
    assert (sums.calls, sums.routed_tokens) == (3, 10 + 11 + 12)
    assert (sums.counts == sum(t.expert_counts() for t in traces)).all()
    assert sums.conf_calls == 3 and sums.conf_hist.shape == (CONFIDENCE_BINS,)
    assert sums.conf_hist.sum() == 3
    assert sums.conf_sum == pytest.approx(
        sum(t.mean_confidence() * t.routed_tokens for t in traces)
    )
    # a rejected call (no such request) leaves neither its row nor its share of the rollup
    with pytest.raises(TelemetryError, match="could not write"):
        store.record_call(**_call_args(Request(text="ghost"), classification, traces[0]))
    assert store.count_calls() == 4 and store.rollup_status() == (3, 3)
    (after,) = list(store.iter_rollups())
    assert (after.sums.counts == sums.counts).all()
    # the rebuild from the calls gives the same sums
    assert store.rebuild_rollups(chunk=2, max_pending=1) == 3
    (rebuilt,) = list(store.iter_rollups())
    assert (rebuilt.sums.counts == sums.counts).all()
    assert rebuilt.sums.sq_counts == pytest.approx(sums.sq_counts)
    assert rebuilt.sums.conf_sum == pytest.approx(sums.conf_sum, rel=1e-6)


# --- reads --------------------------------------------------------------------------------


def test_read_api_filters_orders_and_pages(store: TelemetryStore) -> None:
    rng = np.random.default_rng(6)
    same_time = T0 + timedelta(hours=3, minutes=7)
    with pytest.MonkeyPatch.context() as mp:
        freeze_time(mp, store, T0 + timedelta(minutes=5))
        first = add_request(
            store, "refund one", "customer_service", [("triage", trace(rng, uniform(), 8))]
        )
        freeze_time(mp, store, same_time)  # five calls at one instant: paging must use the id
        second = add_request(
            store, "post two", "moderation", [("judge", trace(rng, uniform(), 6)) for _ in range(5)]
        )
    assert store.count_calls() == 6 and store.count_calls(workflow="moderation") == 5
    assert store.count_calls(with_routing=False) == 0
    assert store.count_calls(since=same_time) == 5
    assert [c.request_id for c in store.calls(workflow="customer_service")] == [first]
    assert len(store.calls(since=same_time - timedelta(seconds=1))) == 5
    assert store.request_texts([first, second, "missing"]) == {
        first: "refund one",
        second: "post two",
    }
    assert store.request_texts([]) == {}
    assert store.rollup_workflows() == ["customer_service", "moderation"]
    assert store.rollup_span() == (T0, T0 + timedelta(hours=3))
    hour3 = list(store.iter_rollups(start=T0 + timedelta(hours=1)))
    assert [(r.workflow, r.sums.calls) for r in hour3] == [("moderation", 5)]
    assert list(store.iter_rollups(end=T0 + timedelta(hours=1), workflow="moderation")) == []
    assert list(store.iter_rollups(model="another-model")) == []
    # newest first, two at a time across equal timestamps: every call exactly once
    batches = list(store.iter_call_counts(chunk=2))
    ids = np.concatenate([b.ids for b in batches]).tolist()
    assert [len(b.ids) for b in batches] == [2, 2, 2] and len(set(ids)) == 6
    assert ids[-1] == min(ids) and ids[:5] == sorted(ids[:5], reverse=True)
    assert batches[0].created_at[0] == same_time and batches[0].counts.shape == (
        2,
        len(LAYERS),
        EXPERTS,
    )
    assert batches[0].moe_layers == LAYERS and batches[0].sources == ["scripted", "scripted"]
    window = list(store.iter_call_counts(start=T0, end=T0 + timedelta(hours=1)))
    assert [b.request_ids for b in window] == [[first]]
    limited = list(store.iter_call_counts(limit=3, chunk=2))
    assert sum(len(b.ids) for b in limited) == 3


def test_bad_input_is_named(store: TelemetryStore) -> None:
    rng = np.random.default_rng(7)
    request, classification = _classified("refund my order")
    store.start_request(request, classification, "customer_service")
    with pytest.raises(TelemetryError, match=f"request {request.id}"):
        store.start_request(request, classification, "customer_service")  # same id twice
    with pytest.raises(TelemetryError, match="was never started"):
        store.finish_request("no-such-request", "succeeded")
    with pytest.raises(UserError, match="chunk must be at least 1"):
        next(store.iter_call_counts(chunk=0))
    store.record_call(**_call_args(request, classification, trace(rng, uniform(), 4)))
    other_shape = trace(rng, uniform(layers=2), 4, layers=(1, 2))
    store.record_call(**_call_args(request, classification, other_shape, node="other"))
    with pytest.raises(UserError, match="use one database per model"):
        list(store.iter_call_counts())
    assert [r.status for r in store.requests()] == ["running"]


def test_open_existing_reads_and_refuses_a_database_behind_the_code(url: str) -> None:
    if url == "sqlite:///:memory:":
        with pytest.raises(UserError, match="in-memory"):
            TelemetryStore.open_existing(url)
        return
    if url.startswith("postgresql"):  # an empty PostgreSQL database is not telemetry
        with pytest.raises(UserError, match="holds no telemetry tables"):
            TelemetryStore.open_existing(url)
    engine = _engine(url)
    with engine.begin() as connection:
        command.upgrade(alembic_config(connection), "0001")
    engine.dispose()
    with pytest.raises(UserError, match=r"revision 0001, this version reads 0008.*upgrade"):
        TelemetryStore.open_existing(url)
    result = CliRunner().invoke(app, ["skew", "--database-url", url])
    shown = " ".join(result.output.split())  # rich wraps long lines
    assert result.exit_code == 2 and "python -m orchestrator.telemetry upgrade" in shown
    assert "Traceback" not in result.output
    engine = _engine(url)
    with engine.connect() as connection:
        assert current_revision(connection) == "0001"  # the read-only path wrote nothing
    engine.dispose()
    assert telemetry_main(["upgrade", url]) == 0
    reader = TelemetryStore.open_existing(url)
    assert reader.count_calls() == 0 and reader.rollup_status() == (0, 0)
    reader.close()


# --- the skew report, SQLite against PostgreSQL -------------------------------------------


def _fill(store: TelemetryStore) -> None:
    """Two weeks of synthetic calls with a drift and an odd request (as in test_skew_report)."""
    rng = np.random.default_rng(11)
    base = uniform()
    base[0, 3], base[0, 7] = 1e6, 0.0
    drifted = base.copy()
    drifted[1, 9] = 4.0
    odd = base.copy()
    odd[1:, :12] = 0.0
    with pytest.MonkeyPatch.context() as mp:
        for week in (0, 1):
            shares = drifted if week else base
            for i in range(20):
                freeze_time(mp, store, T0 + timedelta(days=7 * week, hours=8 * i, minutes=i))
                add_request(
                    store,
                    f"refund please {week}-{i}",
                    "customer_service",
                    [
                        ("triage", trace(rng, base / base.sum(1, keepdims=True), 40)),
                        ("reply", trace(rng, base / base.sum(1, keepdims=True), 30)),
                    ],
                    request_id=f"cs-{week}-{i}",
                )
                add_request(
                    store,
                    f"is this ok {week}-{i}",
                    "moderation",
                    [
                        (
                            "judge",
                            trace(rng, shares / shares.sum(1, keepdims=True), 30, confidence=0.4),
                        )
                    ],
                    request_id=f"mod-{week}-{i}",
                )
        freeze_time(mp, store, T0 + timedelta(days=10, hours=1))
        add_request(
            store,
            "<script>odd</script>",
            "customer_service",
            [("triage", trace(rng, odd / odd.sum(1, keepdims=True), 40))],
            request_id="odd-1",
        )


def test_the_skew_report_is_the_same_on_sqlite_and_postgresql(
    tmp_path: Path, postgres: PostgresServer
) -> None:
    dumps = []
    for url in (f"sqlite:///{tmp_path / 'skew.db'}", postgres.create_database("skew_report")):
        store = TelemetryStore(url)
        _fill(store)
        report = build_report(store, ReportOptions(window="7d", until=T0 + timedelta(days=14)))
        store.close()
        dump = report.model_dump(mode="json", exclude={"generated_at", "database"})
        dumps.append(json.dumps(dump, sort_keys=True))
    sqlite_dump, postgres_dump = dumps
    assert json.loads(sqlite_dump)["overall"]["calls"] == 20 * 3 + 1
    assert json.loads(sqlite_dump)["drift"] is not None
    assert sqlite_dump == postgres_dump
