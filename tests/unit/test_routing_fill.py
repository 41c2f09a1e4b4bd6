"""Deferred expert routing: calls recorded ``pending`` with their token ids, then filled by the
replay worker (orchestrator/telemetry/fill.py) exactly once, also across a kill mid-fill.

The replayer here is scripted (expert ids are a fixed function of the token ids), so a deferred
fill can be compared with the same calls recorded inline; one test runs the real
transformers replayer on the committed trained checkpoint (batched vs one call per pass).
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import textwrap
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from orchestrator.analysis.load import expert_load
from orchestrator.analysis.skew.report import ReportOptions, build_report
from orchestrator.batch import BatchOptions, ColumnMapping, open_input, run_batch_job
from orchestrator.cli.app import app
from orchestrator.core.client import VLLMClient
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.exceptions import UserError
from orchestrator.telemetry import ExpertRollupRecord, ModelCallRecord, TelemetryStore
from orchestrator.telemetry.fill import (
    _commit_chunk,
    _read_chunk,
    _replay,
    fill_pending_routing,
    pending_routing_count,
)
from orchestrator.telemetry.read import rollup_sums
from orchestrator.telemetry.schema import PENDING_SOURCE, PendingExpertRoutingRecord
from serving.architecture import MoEArchitecture
from serving.capture import PENDING_REASON, CallTokens, DeferredReplayCapture, PendingReplayTrace
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace
from tests.fixtures.vllm_recorded import recorded
from tests.unit.pending_data import CHECKPOINT, pending_trace, record_calls
from workflows import default_workflows


class ScriptedReplayer:
    """Expert ids and confidences as a fixed function of each token id (no model).

    Args:
        arch: The shape to report.
        checkpoint_dir: The folder it claims to replay through.
        fail_token: A token id whose call raises (a bad call).
    """

    def __init__(
        self, arch: MoEArchitecture, checkpoint_dir: Path, fail_token: int | None = None
    ) -> None:
        self.arch = arch
        self.checkpoint_dir = checkpoint_dir
        self.fail_token = fail_token
        self.passes = 0

    def trace(self, prompt: Sequence[int], completion: Sequence[int]) -> ExpertRoutingTrace:
        tokens = np.array(list(prompt) + list(completion[:-1]), dtype=np.int64)
        layers, k, e = len(self.arch.moe_layers), self.arch.top_k, self.arch.num_experts
        ids = (
            tokens[:, None, None] * 3
            + np.arange(layers)[None, :, None] * 11
            + np.arange(k)[None, None, :]
        ) % e
        conf = ((tokens[:, None] + np.arange(layers)[None, :]) % 9 + 1) / 10.0
        return ExpertRoutingTrace(
            source=ExpertRoutingSource.REPLAY,
            moe_layers=self.arch.moe_layers,
            num_experts=e,
            top_k=k,
            prompt_tokens=len(prompt),
            completion_tokens=len(completion),
            expert_ids=ids.astype(np.int16),
            router_confidence=conf.astype(np.float32),
        )

    def replay_many(
        self, calls: Sequence[tuple[Sequence[int], Sequence[int]]]
    ) -> list[ExpertRoutingTrace]:
        self.passes += 1
        if self.fail_token is not None and any(self.fail_token in p for p, _c in calls):
            raise RuntimeError("token id out of range")
        return [self.trace(p, c) for p, c in calls]


@pytest.fixture(scope="module")
def arch() -> MoEArchitecture:
    return MoEArchitecture.from_checkpoint(CHECKPOINT)


def _calls(n: int, seed: int = 0) -> list[tuple[list[int], list[int]]]:
    rng = np.random.default_rng(seed)
    return [
        (
            rng.integers(10, 6000, size=int(rng.integers(3, 40))).tolist(),
            rng.integers(10, 6000, size=int(rng.integers(0, 12))).tolist(),
        )
        for _ in range(n)
    ]


def _rollups(store: TelemetryStore) -> dict[tuple[Any, ...], tuple[Any, ...]]:
    with store._session() as session:
        rows = session.scalars(select(ExpertRollupRecord)).all()
    out = {}
    for r in rows:
        s = rollup_sums(r)
        out[(r.bucket_start, r.node, r.expert_routing_source)] = (
            s.calls,
            s.routed_tokens,
            s.counts.tolist(),
            np.round(s.sq_counts, 6).tolist(),
            s.conf_calls,
            round(s.conf_sum, 6),
            s.conf_hist.tolist(),
            np.round(s.layer_conf_sum, 6).tolist(),
        )
    return out


def _call_rows(store: TelemetryStore) -> list[tuple[Any, ...]]:
    with store._session() as session:
        rows = session.scalars(select(ModelCallRecord).order_by(ModelCallRecord.id)).all()
    return [
        (
            r.expert_routing_source,
            r.routed_tokens,
            r.expert_counts,
            r.layer_confidence,
            None if r.mean_router_confidence is None else round(r.mean_router_confidence, 9),
        )
        for r in rows
    ]


def test_a_pending_call_has_no_experts_its_ids_are_kept_and_the_analysis_says_so(
    tmp_path: Path, arch: MoEArchitecture
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    prompt, completion = [5, 9, 13], [40, 41]
    record_calls(store, [pending_trace(arch, prompt, completion)], batch="b1")
    with store._session() as session:
        call = session.scalars(select(ModelCallRecord)).one()
        kept = session.get(PendingExpertRoutingRecord, call.id)
    assert call.expert_routing_source == PENDING_SOURCE and call.expert_counts is None
    assert call.routed_tokens == 4 and call.routing_note == PENDING_REASON
    assert kept is not None
    assert np.frombuffer(kept.prompt_ids, "<i4").tolist() == prompt
    assert np.frombuffer(kept.completion_ids, "<i4").tolist() == completion
    assert _rollups(store) == {}  # never summed as zero experts
    assert pending_routing_count(store) == pending_routing_count(store, batch_id="b1") == 1
    assert pending_routing_count(store, batch_id="other") == 0
    with pytest.raises(
        UserError,
        match=r"1 model call still has expert routing pending.*"
        r"fill-routing --batch b1",
    ):
        build_report(store, ReportOptions(window="all", batch="b1"))
    with pytest.raises(UserError, match="pending"):
        expert_load(store)


@pytest.mark.parametrize(
    ("source", "tokens", "ids", "error"),
    [  # a pending trace needs every token id; a trace with token ids is source pending
        (ExpertRoutingSource.PENDING, (3, 1), ((1, 2), (3,)), "every token id"),
        (ExpertRoutingSource.UNAVAILABLE, (1, 0), ((1,), ()), "source pending"),
    ],
    ids=["missing-token-id", "not-pending"],
)
def test_a_pending_trace_is_refused_without_every_token_id_or_source_pending(
    arch: MoEArchitecture,
    source: ExpertRoutingSource,
    tokens: tuple[int, int],
    ids: tuple[tuple[int, ...], tuple[int, ...]],
    error: str,
) -> None:
    with pytest.raises(ValueError, match=error):
        PendingReplayTrace(
            source=source,
            moe_layers=arch.moe_layers,
            num_experts=arch.num_experts,
            top_k=arch.top_k,
            prompt_tokens=tokens[0],
            completion_tokens=tokens[1],
            prompt_ids=ids[0],
            completion_ids=ids[1],
            checkpoint="/x",
        )


def test_a_deferred_capture_reports_source_pending_not_unavailable(
    arch: MoEArchitecture,
) -> None:
    trace = asyncio.run(
        DeferredReplayCapture(CHECKPOINT).capture(
            CallTokens(
                response={},
                choice={},
                prompt_ids=[5, 6, 7],
                completion_ids=[8, 9],
                prompt_tokens=3,
                completion_tokens=2,
            )
        )
    )
    assert isinstance(trace, PendingReplayTrace)
    assert trace.source is ExpertRoutingSource.PENDING and trace.source.value == PENDING_SOURCE
    assert trace.reason == PENDING_REASON and not trace.has_routing
    assert (trace.prompt_ids, trace.completion_ids) == ((5, 6, 7), (8, 9))


def test_a_deferred_fill_equals_the_same_calls_replayed_inline(
    tmp_path: Path, arch: MoEArchitecture
) -> None:
    calls = _calls(23)
    replayer = ScriptedReplayer(arch, CHECKPOINT)
    inline = TelemetryStore(f"sqlite:///{tmp_path / 'inline.db'}")
    record_calls(inline, [replayer.trace(p, c) for p, c in calls])
    deferred = TelemetryStore(f"sqlite:///{tmp_path / 'deferred.db'}")
    record_calls(deferred, [pending_trace(arch, p, c) for p, c in calls])
    assert pending_routing_count(deferred) == 23
    done: list[tuple[int, int]] = []
    summary = fill_pending_routing(
        deferred, replayer, chunk=5, on_chunk=lambda d, t: done.append((d, t))
    )
    assert (summary.filled, summary.failed, summary.left) == (23, 0, 0)
    assert done[-1] == (23, 23) and len(done) == 5 and replayer.passes == 5
    assert _call_rows(deferred) == _call_rows(inline)
    assert _rollups(deferred) == _rollups(inline)
    with deferred._session() as session:
        assert session.scalars(select(PendingExpertRoutingRecord)).all() == []
    # a second run finds nothing; the rollups still agree with a rebuild from the calls
    assert fill_pending_routing(deferred, replayer).filled == 0
    before = _rollups(deferred)
    deferred.rebuild_rollups()  # (its float sums come from the stored float32 confidences)
    exact = {k: (v[0], v[1], v[2], v[4], v[6]) for k, v in _rollups(deferred).items()}
    assert exact == {k: (v[0], v[1], v[2], v[4], v[6]) for k, v in before.items()}
    report = build_report(deferred, ReportOptions(window="all"))
    assert report.pending_routing_calls == 0 and report.overall.calls == 23


def test_a_call_filled_by_another_worker_is_not_filled_or_summed_again(
    tmp_path: Path, arch: MoEArchitecture
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    record_calls(store, [pending_trace(arch, p, c) for p, c in _calls(4)])
    replayer = ScriptedReplayer(arch, CHECKPOINT)
    chunk = _read_chunk(store, str(CHECKPOINT.resolve()), None, 0, 10)
    traces = _replay(replayer, chunk)
    assert _commit_chunk(store, chunk, traces) == (4, 0)
    once = _rollups(store)
    # a second worker that read the same chunk before the first committed
    assert _commit_chunk(store, chunk, traces) == (0, 0)
    assert _rollups(store) == once
    assert sum(v[0] for v in once.values()) == 4


def test_a_call_whose_replay_fails_is_recorded_unavailable_and_the_rest_filled(
    tmp_path: Path, arch: MoEArchitecture
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    calls = _calls(6)
    bad = calls[2][0][0]
    record_calls(store, [pending_trace(arch, p, c) for p, c in calls])
    summary = fill_pending_routing(store, ScriptedReplayer(arch, CHECKPOINT, fail_token=bad))
    assert (summary.filled, summary.failed, summary.left) == (5, 1, 0)
    with store._session() as session:
        rows = session.scalars(select(ModelCallRecord).order_by(ModelCallRecord.id)).all()
    assert rows[2].expert_routing_source == "unavailable" and rows[2].expert_counts is None
    assert "replay failed: RuntimeError: token id out of range" in (rows[2].routing_note or "")
    assert [r.expert_routing_source for r in rows].count("replay") == 5


def test_calls_served_from_another_checkpoint_stay_pending_and_are_named(
    tmp_path: Path, arch: MoEArchitecture
) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    record_calls(store, [pending_trace(arch, p, c) for p, c in _calls(3)])
    elsewhere = ScriptedReplayer(arch, tmp_path)  # another folder
    summary = fill_pending_routing(store, elsewhere)
    assert summary.filled == 0 and summary.left == 3
    assert summary.other_checkpoint == {str(CHECKPOINT.resolve()): 3}


KILLER = textwrap.dedent(
    """
    import os, signal, sys
    from sqlalchemy import event
    from sqlalchemy.orm import Session
    sys.path.insert(0, {tests!r})
    from test_routing_fill import ScriptedReplayer, CHECKPOINT
    from serving.architecture import MoEArchitecture
    from orchestrator.telemetry import TelemetryStore
    from orchestrator.telemetry.fill import fill_pending_routing

    commits = []

    @event.listens_for(Session, "before_commit")
    def die(session):
        commits.append(1)
        if len(commits) == {kill_at}:  # inside the transaction, after its statements
            session.flush()
            os.kill(os.getpid(), signal.SIGKILL)

    store = TelemetryStore({url!r})
    fill_pending_routing(store, ScriptedReplayer(MoEArchitecture.from_checkpoint(CHECKPOINT),
                         CHECKPOINT), chunk=4)
    """
)


@pytest.mark.parametrize("kill_at", [1, 3])
def test_a_kill_mid_fill_neither_loses_nor_doubles_a_call(
    tmp_path: Path, arch: MoEArchitecture, kill_at: int
) -> None:
    calls = _calls(14, seed=kill_at)
    replayer = ScriptedReplayer(arch, CHECKPOINT)
    inline = TelemetryStore(f"sqlite:///{tmp_path / 'inline.db'}")
    record_calls(inline, [replayer.trace(p, c) for p, c in calls])
    url = f"sqlite:///{tmp_path / 'deferred.db'}"
    deferred = TelemetryStore(url)
    record_calls(deferred, [pending_trace(arch, p, c) for p, c in calls])
    deferred.close()
    script = KILLER.format(tests=str(Path(__file__).parent), url=url, kill_at=kill_at)
    killed = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=300)
    assert killed.returncode == -9, killed.stderr.decode()[-2000:]
    store = TelemetryStore(url)
    left = pending_routing_count(store)
    assert left == 14 - 4 * (kill_at - 1)  # the killed chunk's transaction left no trace
    with store._session() as session:
        filled = session.scalars(
            select(ModelCallRecord).where(ModelCallRecord.expert_routing_source == "replay")
        ).all()
        kept = session.scalars(select(PendingExpertRoutingRecord)).all()
    assert len(filled) + len(kept) == 14 and not {c.id for c in filled} & {k.call_id for k in kept}
    summary = fill_pending_routing(store, replayer, chunk=4)
    assert summary.filled == left and summary.left == 0
    assert _call_rows(store) == _call_rows(inline)
    assert _rollups(store) == _rollups(inline)


def _chat_body(prompt: list[int], completion: list[int]) -> dict[str, Any]:
    body = recorded("chat_en_routed.json")
    body["prompt_token_ids"] = prompt
    choice = body["choices"][0]
    choice["token_ids"] = completion
    choice.pop("routed_experts", None)
    choice["message"]["content"] = json.dumps(
        {"intent": "other", "sentiment": "neutral", "urgency": "low"}
    )
    body["usage"] = {
        "prompt_tokens": len(prompt),
        "completion_tokens": len(completion),
        "total_tokens": len(prompt) + len(completion),
    }
    return body


class RecordedFactory:
    """The batch's factory with a VLLMClient on recorded bodies (token ids in the trained
    checkpoint's vocabulary) and the deferred capture; ``replayer()`` as SettingsFactory."""

    def __init__(self, db: str, replayer: Any) -> None:
        self.db = db
        self._replayer = replayer
        self._store: TelemetryStore | None = None
        self.sent = 0

    def store(self) -> TelemetryStore:
        if self._store is None:
            self._store = TelemetryStore(self.db)
        return self._store

    def replayer(self) -> Any:
        return self._replayer

    async def orchestrators(self, urls: Sequence[str]) -> list[Orchestrator]:
        rng = np.random.default_rng(7)

        def answer(request: httpx.Request) -> httpx.Response:
            self.sent += 1
            prompt = rng.integers(10, 6000, size=int(rng.integers(5, 30))).tolist()
            completion = rng.integers(10, 6000, size=int(rng.integers(2, 9))).tolist()
            return httpx.Response(200, json=_chat_body(prompt, completion))

        http = httpx.AsyncClient(transport=httpx.MockTransport(answer))
        client = VLLMClient(
            "http://vllm.test/v1",
            "ernie",
            DeferredReplayCapture(CHECKPOINT),
            http_client=http,
            max_retries=0,
        )
        return [Orchestrator(client, self.store(), default_workflows())]

    async def aclose(self) -> None:
        return None


TEXTS = [
    "I was charged twice for my order, please refund me",
    "Where is my package? It has not arrived after two weeks",
    "My account is locked and I cannot log in",
    "你们的外卖送得太慢了，饭都凉了",
]


def _sheet(tmp_path: Path) -> Path:
    path = tmp_path / "in.csv"
    path.write_text(
        "id,text\n" + "".join(f"Q{i},{t}\n" for i, t in enumerate(TEXTS)), encoding="utf-8"
    )
    return path


async def test_a_batch_records_routing_pending_then_fills_it_before_the_results(
    tmp_path: Path, arch: MoEArchitecture
) -> None:
    from openpyxl import load_workbook

    factory = RecordedFactory(f"sqlite:///{tmp_path / 't.db'}", ScriptedReplayer(arch, CHECKPOINT))
    source = open_input(_sheet(tmp_path), ColumnMapping(text="text", id="id"))
    out = tmp_path / "results.xlsx"
    options = BatchOptions(concurrency=2, backoff_initial_s=0, backoff_max_s=0)
    job = await run_batch_job(source, factory, ["u"], options, out=out, formats=["jsonl"])
    assert factory.sent > 0
    assert job.routing_fill is not None and job.routing_fill.filled == factory.sent
    assert job.pending_routing == 0
    rows = [json.loads(line) for line in out.with_suffix(".jsonl").read_text().splitlines()]
    called = [r for r in rows if r["request_id"] and r["prompt_tokens"]]
    assert called and all(r["expert_routing"] == "replay" for r in called)
    assert all(r["top_experts"] and r["router_confidence"] for r in called)
    book = load_workbook(out, read_only=True)
    sheet_rows = list(book.worksheets[0].iter_rows(values_only=True))
    book.close()
    column = sheet_rows[0].index("expert_routing")
    assert sorted({r[column] for r in sheet_rows[1:] if r[column]}) == ["replay"]
    report = build_report(factory.store(), ReportOptions(window="all", batch=job.summary.batch_id))
    assert report.overall.calls == factory.sent and report.pending_routing_calls == 0


async def test_a_batch_without_the_fill_says_pending_and_the_command_fills_it_later(
    tmp_path: Path, arch: MoEArchitecture
) -> None:
    db = tmp_path / "t.db"
    factory = RecordedFactory(f"sqlite:///{db}", ScriptedReplayer(arch, CHECKPOINT))
    source = open_input(_sheet(tmp_path), ColumnMapping(text="text", id="id"))
    out = tmp_path / "results.xlsx"
    options = BatchOptions(concurrency=2, backoff_initial_s=0, backoff_max_s=0)
    job = await run_batch_job(
        source, factory, ["u"], options, out=out, formats=["jsonl"], fill_routing=False
    )
    batch = job.summary.batch_id
    assert job.routing_fill is None and job.pending_routing == factory.sent > 0
    rows = [json.loads(line) for line in out.with_suffix(".jsonl").read_text().splitlines()]
    called = [r for r in rows if r["request_id"] and r["prompt_tokens"]]
    assert called and all(r["expert_routing"] == "pending" for r in called)
    assert all(r["top_experts"] is None for r in called)  # empty, never zero experts
    factory.store().close()
    runner = CliRunner()
    shown = runner.invoke(app, ["telemetry", "pending", "--db", str(db), "--batch", batch])
    assert shown.exit_code == 0 and f"{factory.sent} model calls of batch {batch}" in shown.stdout
    # the real replayer on the committed checkpoint fills them (token ids in its vocabulary)
    filled = runner.invoke(
        app, ["telemetry", "fill-routing", "--db", str(db), "--batch", batch, "--chunk", "3"]
    )
    assert filled.exit_code == 0, filled.output
    assert f"filled {factory.sent} calls" in filled.stdout
    store = TelemetryStore(f"sqlite:///{db}")
    assert pending_routing_count(store, batch_id=batch) == 0
    report = build_report(store, ReportOptions(window="all", batch=batch))
    assert report.overall.calls == factory.sent and report.overall.sources == {
        "replay": factory.sent
    }
    again = runner.invoke(app, ["telemetry", "fill-routing", "--db", str(db)])
    assert again.exit_code == 0 and "no model call has expert routing pending" in again.stdout
    unknown = runner.invoke(app, ["telemetry", "pending", "--db", str(db), "--batch", "nope"])
    assert unknown.exit_code == 2


def test_batched_replay_equals_one_call_per_pass_on_the_trained_checkpoint() -> None:
    from serving.replay import ExpertRoutingReplayer

    replayer = ExpertRoutingReplayer(CHECKPOINT)
    calls = [*_calls(7, seed=3), ([11, 12], [])]  # one call with no completion token
    many = replayer.replay_many(calls, max_batch_tokens=64, max_batch_calls=3)
    for (prompt, completion), trace in zip(calls, many, strict=True):
        one = replayer.replay(prompt, completion)
        assert trace.expert_ids is not None and one.expert_ids is not None
        assert trace.expert_ids.shape == one.expert_ids.shape
        same = (np.sort(trace.expert_ids, -1) == np.sort(one.expert_ids, -1)).all(-1).mean()
        assert same >= 0.99  # float rounding of the larger GEMMs may flip a rare near-tie
        assert trace.router_confidence is not None and one.router_confidence is not None
        assert np.allclose(trace.router_confidence, one.router_confidence, atol=1e-4)
    with pytest.raises(ValueError, match="at least 1"):
        replayer.replay_many(calls, max_batch_calls=0)
