from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from orchestrator import Request, RuleClassifier, TelemetryError, TelemetryStore, UserError
from orchestrator.analysis.load import expert_load, layer_load
from orchestrator.classifier import Classification
from orchestrator.exceptions import StorageError
from serving import ExpertRoutingSource, ExpertRoutingTrace


def _trace(ids: np.ndarray) -> ExpertRoutingTrace:
    tokens = ids.shape[0]
    return ExpertRoutingTrace(
        source=ExpertRoutingSource.REPLAY,
        moe_layers=(1, 2),
        num_experts=8,
        top_k=2,
        prompt_tokens=tokens,
        completion_tokens=1,
        expert_ids=ids,
        router_confidence=np.full((tokens, 2), 0.5, np.float32),
    )


def _call(
    request_id: str, classification: Classification, ids: np.ndarray, node: str = "n"
) -> dict[str, object]:
    """``record_call`` arguments of one customer-service call routed by ``ids``."""
    return {
        "request_id": request_id,
        "classification": classification,
        "workflow": "customer_service",
        "node": node,
        "model": "m",
        "latency_ms": 1.0,
        "finish_reason": "stop",
        "routing": _trace(ids),
    }


def test_sqlite_folder_is_created_and_bad_url_is_a_user_error(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 'a' / 'b' / 't.db'}")
    assert (tmp_path / "a" / "b" / "t.db").exists() and store.count_calls() == 0
    with pytest.raises(UserError, match="SQLAlchemy URL"):
        TelemetryStore("not a url ::")


def test_files_that_are_not_databases_and_missing_drivers_are_user_errors(
    tmp_path: Path,
) -> None:
    binary = tmp_path / "data.csv"
    binary.write_bytes(bytes(range(256)) * 8)
    with pytest.raises(StorageError, match=r"is damaged \(not a readable SQLite database\)"):
        TelemetryStore(f"sqlite:///{binary}")
    with pytest.raises(UserError, match="no driver"):  # mysqlclient is not a dependency
        TelemetryStore("mysql+mysqldb://user@127.0.0.1:1/telemetry")
    with pytest.raises(UserError, match="cannot open telemetry database postgresql"):
        TelemetryStore("postgresql+psycopg://user:secret@127.0.0.1:1/telemetry")


def test_open_existing_creates_and_changes_nothing(tmp_path: Path) -> None:
    """Read-only commands (``load``, ``skew``) open with ``open_existing``: a missing path is
    not created, and an empty or foreign file is not turned into a database."""
    missing = tmp_path / "no" / "such.db"
    with pytest.raises(UserError, match="does not exist"):
        TelemetryStore.open_existing(f"sqlite:///{missing}")
    assert not missing.parent.exists()
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    with pytest.raises(UserError, match="not a SQLite database"):
        TelemetryStore.open_existing(f"sqlite:///{empty}")
    assert empty.read_bytes() == b""
    import sqlite3

    other = tmp_path / "other.db"
    sqlite3.connect(other).execute("CREATE TABLE t (x)").connection.commit()
    with pytest.raises(UserError, match="without telemetry tables"):
        TelemetryStore.open_existing(f"sqlite:///{other}")
    real = tmp_path / "telemetry.db"
    TelemetryStore(f"sqlite:///{real}").close()
    assert TelemetryStore.open_existing(f"sqlite:///{real}").count_calls() == 0


def test_a_rejected_write_leaves_no_row(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    request = Request(text="refund")
    classification = RuleClassifier().classify(request)
    ids = np.zeros((4, 2, 2), np.int16)
    ids[..., 1] = 1
    # no request row exists: the foreign key rejects the call row, and nothing remains
    with pytest.raises(TelemetryError, match="could not write"):
        store.record_call(**_call(request.id, classification, ids))
    assert store.count_calls() == 0


def _calls(per_call: np.ndarray, calls: int) -> tuple[np.ndarray, np.ndarray]:
    """Summed counts and ``sq_counts`` (sum of ``c^2 / n``) of ``calls`` identical calls."""
    per_call = per_call.astype(np.float64)
    return per_call * calls, per_call**2 / per_call.sum() * calls


def test_load_uses_skews_interval_verdicts_and_says_when_it_cannot_judge() -> None:
    # 16 experts, 10 tokens x top-2 per call: e0 takes 8 of 20 picks (6.4x uniform), e1-e12
    # one each (0.8x uniform: neither hot nor dead), e13-e15 none
    per_call = np.array([8] + [1] * 12 + [0, 0, 0])
    counts, sq = _calls(per_call, 100)
    load = layer_load(1, counts, sq, calls=100)
    assert load.judged and load.hot == [0] and load.dead == [13, 14, 15]
    assert load.balancedness == pytest.approx((20 / 16) / 8, abs=1e-4)
    # the same shares from 2 calls: 40 activations, 2.5 per expert, below min_expected 5
    counts, sq = _calls(per_call, 2)
    small = layer_load(1, counts, sq, calls=2)
    assert not small.judged and small.hot == [] and small.dead == []
    # a share of 3x uniform is no verdict at the default 4x, whatever the volume (the old
    # point rule, share > 2x uniform, called it hot)
    counts, sq = _calls(np.array([6] + [2] * 13 + [0, 0]), 500)  # 16 tokens x top-2
    assert layer_load(1, counts, sq, calls=500).hot == []


def test_expert_load_sums_stored_counts(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    classification = RuleClassifier().classify(Request(text="refund my order"))
    for _ in range(3):
        request = Request(text="refund my order")
        store.start_request(request, classification, "customer_service")
        ids = np.tile(np.array([[0, 1], [2, 3]], np.int16), (5, 1, 1))
        store.record_call(**_call(request.id, classification, ids))
    load = expert_load(store)
    assert load.calls == 3 and load.sources == {"replay": 3}
    assert load.layers[0].shares[0] == pytest.approx(0.5)
    assert load.layers[1].shares[3] == pytest.approx(0.5)
    # a workflow with no calls: the message lists the ones that have some (user49)
    with pytest.raises(UserError, match="no model call") as err:
        expert_load(store, workflow="excel_report")
    assert "the workflows with such calls there: customer_service;" in str(err.value)


@pytest.mark.parametrize("where", ["file", "memory"])
async def test_async_writes_go_through_the_writer_thread_in_order(
    tmp_path: Path, where: str
) -> None:
    url = f"sqlite:///{tmp_path / 't.db'}" if where == "file" else "sqlite:///:memory:"
    store = TelemetryStore(url)
    request = Request(text="refund my order")
    classification = RuleClassifier().classify(request)
    await store.astart_request(request, classification, "customer_service")
    ids = np.zeros((3, 2, 2), np.int16)
    ids[..., 1] = 1
    first = await store.arecord_call(**_call(request.id, classification, ids, node="a"))
    second = await store.arecord_call(**_call(request.id, classification, ids, node="b"))
    await store.afinish_request(request.id, "succeeded", result={"ok": True})
    assert second == first + 1
    assert [c.node for c in store.calls(request_id=request.id)] == ["a", "b"]
    assert store.requests()[0].status == "succeeded"
    # errors cross the thread unchanged: a call row for an unknown request is rejected
    with pytest.raises(TelemetryError, match="could not write"):
        await store.arecord_call(**_call("nope", classification, ids, node="c"))
    store.close()


async def test_concurrent_calls_are_committed_in_groups_and_a_rejected_one_fails_alone(
    tmp_path: Path,
) -> None:
    import asyncio

    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    classification = RuleClassifier().classify(Request(text="refund my order"))
    requests = [Request(text=f"refund order {i}") for i in range(6)]
    for request in requests:
        await store.astart_request(request, classification, "customer_service")
    rng = np.random.default_rng(3)
    traces = []
    for _ in range(40):
        ids = np.stack([rng.permutation(8)[:2] for _ in range(5 * 2)]).reshape(5, 2, 2)
        traces.append(ids.astype(np.int16))
    writes = [
        store.arecord_call(**_call(requests[i % 6].id, classification, ids, node=f"n{i % 2}"))
        for i, ids in enumerate(traces)
    ]
    # an unknown request id among them: its group is rejected, then written call by call
    writes.insert(17, store.arecord_call(**_call("nope", classification, traces[0], node="n0")))
    outcomes = await asyncio.gather(*writes, return_exceptions=True)
    errors = [o for o in outcomes if isinstance(o, BaseException)]
    ids_written = [o for o in outcomes if not isinstance(o, BaseException)]
    assert len(errors) == 1 and isinstance(errors[0], TelemetryError)
    assert "nope" in str(errors[0])
    assert isinstance(outcomes[17], TelemetryError)
    assert len(set(ids_written)) == 40
    assert store.count_calls() == 40
    # the rollups hold exactly the 40 calls' counts: none lost, none counted twice
    sums = [row.sums for row in store.iter_rollups()]
    assert sum(d.calls for d in sums) == 40
    want = sum(_trace(t).expert_counts() for t in traces)
    assert np.array_equal(sum(d.counts for d in sums), want)
    per_node = {n: sum(_trace(t).expert_counts() for t in traces[n::2]) for n in (0, 1)}
    rows = list(store.iter_rollups())
    assert sorted(r.node for r in rows) == ["n0", "n1"]
    for row, delta in zip(rows, sums, strict=True):
        assert np.array_equal(delta.counts, per_node[int(row.node[1])])
    assert expert_load(store).calls == 40
    store.close()


async def test_starts_calls_and_finishes_share_a_group_in_arrival_order(tmp_path: Path) -> None:
    import asyncio

    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    classification = RuleClassifier().classify(Request(text="refund my order"))
    ids = np.zeros((3, 2, 2), np.int16)
    ids[..., 1] = 1
    first, second = Request(text="refund order 1"), Request(text="refund order 2")
    await store.astart_request(first, classification, "customer_service")
    outcomes = await asyncio.gather(
        store.astart_request(second, classification, "customer_service"),
        store.arecord_call(**_call(second.id, classification, ids, node="a")),
        store.astart_request(first, classification, "customer_service"),  # exists: rejected
        store.arecord_call(**_call(second.id, classification, ids, node="b")),
        store.afinish_request(second.id, "succeeded", result={"ok": True}),
        store.afinish_request("never-started", "failed"),  # rejected
        return_exceptions=True,
    )
    assert outcomes[0] is None and outcomes[4] is None
    assert isinstance(outcomes[1], int) and outcomes[3] == outcomes[1] + 1
    assert isinstance(outcomes[2], TelemetryError) and first.id in str(outcomes[2])
    assert isinstance(outcomes[5], TelemetryError) and "never started" in str(outcomes[5])
    assert [c.node for c in store.calls(request_id=second.id)] == ["a", "b"]
    statuses = {r.id: r.status for r in store.requests()}
    assert statuses == {first.id: "running", second.id: "succeeded"}
    store.close()


async def test_finished_rows_store_sql_null_for_no_result_and_pending_rows_follow_calls(
    tmp_path: Path,
) -> None:
    """The writer's Core statements write what the ORM wrote: no result is SQL NULL (not the
    JSON text 'null'), a result is JSON, and a pending call's token ids sit under its own id."""
    import sqlite3

    from serving.capture import PendingReplayTrace

    path = tmp_path / "t.db"
    store = TelemetryStore(f"sqlite:///{path}")
    classification = RuleClassifier().classify(Request(text="refund my order"))
    plain, with_result = Request(text="refund order 1"), Request(text="refund order 2")
    pending = PendingReplayTrace(
        source=ExpertRoutingSource.PENDING,
        moe_layers=(1, 2),
        num_experts=8,
        top_k=2,
        prompt_tokens=3,
        completion_tokens=2,
        reason="pending",
        prompt_ids=(7, 8, 9),
        completion_ids=(10, 11),
        checkpoint="/ckpt",
    )
    for request in (plain, with_result):
        await store.astart_request(request, classification, "customer_service")
    call = {**_call(plain.id, classification, np.zeros((3, 2, 2), np.int16)), "routing": pending}
    call_id = await store.arecord_call(**call)  # type: ignore[arg-type]
    await store.afinish_request(plain.id, "failed", error="boom")
    await store.afinish_request(with_result.id, "succeeded", result={"a": [1, None]})
    store.close()
    with sqlite3.connect(path) as db:
        rows = dict(
            db.execute("SELECT id, typeof(result) || ':' || coalesce(result, '') FROM requests")
        )
        stored = db.execute("SELECT call_id, prompt_ids FROM pending_expert_routing").fetchall()
    assert rows == {plain.id: "null:", with_result.id: 'text:{"a": [1, null]}'}
    assert stored == [(call_id, np.array([7, 8, 9], "<i4").tobytes())]


def test_expert_counts_are_computed_once_and_read_only() -> None:
    ids = np.tile(np.array([[0, 1], [2, 3]], np.int16), (4, 1, 1))
    trace = _trace(ids)
    counts = trace.expert_counts()
    assert trace.expert_counts() is counts
    assert counts.tolist() == [[4, 4, 0, 0, 0, 0, 0, 0], [0, 0, 4, 4, 0, 0, 0, 0]]
    with pytest.raises(ValueError, match="read-only"):
        counts[0, 0] = 99
