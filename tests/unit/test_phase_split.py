"""Prefill and decode apart (issue 51): the plugin's ``phase_counts`` mode, its decode, the
store's ``prefill_counts`` and phase rollups, and the skew report's phase view.

The plugin wraps vLLM's ``RequestState``; here a stand-in with the same two methods and
``prompt_len`` (as vLLM 0.24.0's ``output_processor.py`` sets it) plays that class, the
engine-core side the shared stand-ins of ``tests/unit/vllm_standins.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from rich.console import Console
from skew_data import EXPERTS, LAYERS, T0, TOP_K, add_request, freeze_time
from sqlalchemy import select, text

from orchestrator import TelemetryStore
from orchestrator.analysis.skew import ReportOptions, build_report
from orchestrator.analysis.skew.phases import NO_SPLIT
from orchestrator.analysis.skew.report_html import render_html
from orchestrator.analysis.skew.terminal import summary
from orchestrator.telemetry import ModelCallRecord, decode_counts
from orchestrator.telemetry.codec import decode_counts_blob
from serving import vllm_plugin
from serving.architecture import MoEArchitecture
from serving.engine_capture import EngineCountsTrace, decode_routed_experts
from serving.errors import ExpertRoutingDecodeError
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace
from tests.fixtures.vllm_recorded import npy_b64, recorded, recorded_arch
from tests.unit.vllm_standins import Params


@dataclass
class _Request:
    sampling_params: Params | None


@dataclass
class _Output:
    routed_experts: np.ndarray | None


def _request_state_cls(with_prompt_len: bool = True) -> type:
    class RequestState:
        """After vLLM 0.24.0: ``prompt_len`` set at creation, chunks joined at the end."""

        def __init__(self, prompt_len: int) -> None:
            if with_prompt_len:
                self.prompt_len = prompt_len
            self.routed_experts_chunks: list[np.ndarray] = []

        @classmethod
        def from_new_request(cls, tokenizer: Any, request: _Request, prompt: Any, **_: Any):
            return cls(prompt_len=len(prompt))

        def _new_completion_output(self, token_ids, finish_reason, stop_reason) -> _Output:
            routed = None
            if finish_reason is not None and self.routed_experts_chunks:
                routed = np.concatenate(self.routed_experts_chunks, axis=0)
            return _Output(routed_experts=routed)

    return RequestState


def _served(cls: type, ids: np.ndarray, prompt: int, mode: str | None) -> Any:
    """What the patched state returns for a request whose prompt has ``prompt`` tokens: the
    prefill step's rows, then one row per decode step, as vLLM appends them."""
    extra = None if mode is None else {"routed_experts": mode}
    state = cls.from_new_request(None, _Request(Params(extra)), list(range(prompt)))
    state.routed_experts_chunks.append(ids[:prompt])
    state.routed_experts_chunks.extend(ids[i : i + 1] for i in range(prompt, len(ids)))
    return state._new_completion_output([1], "stop", None).routed_experts


def _random_ids(rng: np.random.Generator, tokens: int, layers: int, top_k: int, experts: int):
    picks = [rng.permutation(experts)[:top_k] for _ in range(tokens * layers)]
    return np.stack(picks).reshape(tokens, layers, top_k).astype(np.uint8)


@pytest.fixture(scope="module")
def arch() -> MoEArchitecture:
    return recorded_arch()


# ---- the plugin ------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["chat_en_routed.json", "chat_zh_routed.json"])
def test_phase_counts_split_the_recorded_ids_at_the_prompt(
    name: str, arch: MoEArchitecture
) -> None:
    body = recorded(name)
    usage = body["usage"]
    prompt, completion = usage["prompt_tokens"], usage["completion_tokens"]
    ids = decode_routed_experts(
        body["choices"][0], prompt_tokens=prompt, completion_tokens=completion, arch=arch
    ).expert_ids
    raw = _served_ids(body)
    assert raw.shape[0] == prompt + completion - 1  # the P + C - 1 rows vLLM returns
    cls = _request_state_cls()
    assert vllm_plugin.patch_request_state(cls, default="ids")
    split = _served(cls, raw, prompt, "phase_counts")
    assert split.dtype.names == ("prefill", "decode") and split.dtype["prefill"] == np.uint8
    # per part: counts == tokens x top-k, on every hidden layer (the dense one reads id 0)
    assert (split["prefill"].sum(axis=1) == prompt * arch.top_k).all()
    assert (split["decode"].sum(axis=1) == (completion - 1) * arch.top_k).all()
    whole = vllm_plugin.compact_expert_counts(raw)
    assert np.array_equal(split["prefill"].astype(int) + split["decode"], whole)
    head = vllm_plugin.expert_counts_from_ids(raw[:prompt])
    assert np.array_equal(split["prefill"][:, : head.shape[1]], head)
    # the client's decode keeps them apart and checks each part
    trace = decode_routed_experts(
        {"routed_experts": npy_b64(split)},
        prompt_tokens=prompt,
        completion_tokens=completion,
        arch=arch,
    )
    assert isinstance(trace, EngineCountsTrace) and "phase_counts" in (trace.reason or "")
    phases = trace.phase_counts()
    assert phases is not None and ids is not None
    assert np.array_equal(phases[0], vllm_plugin.expert_counts_from_ids(ids[:prompt]).astype(int))
    assert np.array_equal(phases[0] + phases[1], trace.expert_counts())


def _served_ids(body: dict[str, Any]) -> np.ndarray:
    import base64
    import io

    raw = base64.b64decode(body["choices"][0]["routed_experts"])
    return np.load(io.BytesIO(raw), allow_pickle=False)


def test_counts_mode_is_unchanged_and_an_unknown_prompt_length_gives_combined_counts() -> None:
    rng = np.random.default_rng(11)
    ids = _random_ids(rng, 40, 4, 2, 8)
    cls = _request_state_cls()
    vllm_plugin.patch_request_state(cls, default="ids")
    combined = _served(cls, ids, 30, "counts")  # the old single array, for old clients
    assert combined.dtype == np.uint8 and combined.dtype.names is None
    assert np.array_equal(combined, vllm_plugin.compact_expert_counts(ids))
    assert np.array_equal(_served(cls, ids, 30, None), ids)  # the default: vLLM's own ids
    assert _served(cls, ids, 30, "none") is None
    assert vllm_plugin.mode_of({"routed_experts": "PHASE_COUNTS"}, "ids") == "phase_counts"
    no_len = _request_state_cls(with_prompt_len=False)
    vllm_plugin.patch_request_state(no_len, default="ids")
    fallback = _served(no_len, ids, 30, "phase_counts")
    assert fallback.dtype.names is None and np.array_equal(fallback, combined)


def test_phase_counts_of_edge_cases_and_wide_counts() -> None:
    rng = np.random.default_rng(12)
    ids = _random_ids(rng, 300, 3, 2, 8)
    ids[:, 0, 0] = 5  # one expert picked by all 300 tokens: uint16
    out = vllm_plugin.phase_expert_counts(ids, 299)  # one completion token routed
    assert out.dtype["decode"] == np.uint16
    assert (out["decode"].sum(axis=1) == 2).all() and (out["prefill"].sum(axis=1) == 598).all()
    only_prompt = vllm_plugin.phase_expert_counts(ids, 300)  # completion of one token: C-1 = 0
    assert int(only_prompt["decode"].sum()) == 0
    clipped = vllm_plugin.phase_expert_counts(ids, 10_000)
    assert np.array_equal(clipped["prefill"], only_prompt["prefill"])
    with pytest.raises(ValueError, match="tokens, layers, top_k"):
        vllm_plugin.phase_expert_counts(ids[0], 1)


def test_the_engine_core_keeps_the_rows_of_phase_counts_requests() -> None:
    import types

    from tests.unit.vllm_standins import EngineCoreOutput

    module = types.ModuleType("fake_scheduler_phase")

    class Scheduler:
        def __init__(self) -> None:
            self.requests: dict[str, Any] = {}

        def update_from_output(self, rows: dict[str, np.ndarray]) -> list[Any]:
            return [
                module.EngineCoreOutput(request_id=rid, new_token_ids=[1], routed_experts=r)
                for rid, r in rows.items()
            ]

    module.Scheduler, module.EngineCoreOutput = Scheduler, EngineCoreOutput
    assert vllm_plugin.patch_scheduler(module, default="none")
    scheduler = Scheduler()
    scheduler.requests["a"] = _Req(Params({"routed_experts": "phase_counts"}))
    scheduler.requests["b"] = _Req(Params({"routed_experts": "none"}))
    rows = np.zeros((1, 3, 2), dtype=np.uint8)
    outs = {o.request_id: o for o in scheduler.update_from_output({"a": rows, "b": rows})}
    assert outs["a"].routed_experts is rows and outs["b"].routed_experts is None


@dataclass
class _Req:
    sampling_params: Params


# ---- the decode's checks -------------------------------------------------------------------


def test_a_split_that_does_not_match_the_usage_is_refused(arch: MoEArchitecture) -> None:
    body = recorded("chat_en_routed.json")
    usage = body["usage"]
    prompt, completion = usage["prompt_tokens"], usage["completion_tokens"]
    raw = _served_ids(body)
    shifted = vllm_plugin.phase_expert_counts(raw, prompt - 1)  # one prompt row read as decode
    choice = {"routed_experts": npy_b64(shifted)}
    with pytest.raises(ExpertRoutingDecodeError, match="prefill counts must sum"):
        decode_routed_experts(choice, prompt_tokens=prompt, completion_tokens=completion, arch=arch)
    floats = np.zeros((28, 4), dtype=[("prefill", "f4"), ("decode", "f4")])
    with pytest.raises(ExpertRoutingDecodeError, match="integer"):
        decode_routed_experts(
            {"routed_experts": npy_b64(floats)}, prompt_tokens=1, completion_tokens=1, arch=arch
        )


def test_traces_split_per_token_ids_by_row_and_never_a_summed_record() -> None:
    rng = np.random.default_rng(13)
    ids = _random_ids(rng, 9, len(LAYERS), TOP_K, EXPERTS)  # prompt 5, completion 5: 9 rows
    shape = {"moe_layers": LAYERS, "num_experts": EXPERTS, "top_k": TOP_K}
    t = ExpertRoutingTrace(
        source=ExpertRoutingSource.REPLAY,
        **shape,
        prompt_tokens=5,
        completion_tokens=5,
        expert_ids=ids.astype(np.int16),
    )
    phases = t.phase_counts()
    assert phases is not None
    assert (phases[0].sum(axis=1) == 5 * TOP_K).all() and (phases[1].sum(axis=1) == 4 * TOP_K).all()
    summed = ExpertRoutingTrace(
        source=ExpertRoutingSource.ENGINE,
        **shape,
        prompt_tokens=5,
        completion_tokens=5,
        counts=t.expert_counts(),
    )
    assert summed.phase_counts() is None  # counts mode: no split is made up
    with pytest.raises(ValueError, match="within"):
        ExpertRoutingTrace(
            source=ExpertRoutingSource.ENGINE,
            **shape,
            prompt_tokens=5,
            completion_tokens=5,
            counts=t.expert_counts(),
            prefill_counts=t.expert_counts() + 1,
        )


# ---- the store and its rollups -------------------------------------------------------------


def _split_trace(
    rng: np.random.Generator,
    prompt: int,
    completion: int,
    decode_shares: np.ndarray | None = None,
    *,
    summed: bool = False,
) -> ExpertRoutingTrace:
    """An engine counts trace of ``prompt`` prompt and ``completion`` completion tokens drawn
    uniformly, the decode from ``decode_shares`` (``(L, E)``) when given; ``summed``: as the
    plugin's ``counts`` mode sends it (no split)."""
    uniform = np.full((len(LAYERS), EXPERTS), 1 / EXPERTS)
    pre = rng.multinomial(prompt * TOP_K, uniform)
    dec_p = uniform if decode_shares is None else decode_shares
    dec = rng.multinomial(max(completion - 1, 0) * TOP_K, dec_p)
    return ExpertRoutingTrace(
        source=ExpertRoutingSource.ENGINE,
        moe_layers=LAYERS,
        num_experts=EXPERTS,
        top_k=TOP_K,
        prompt_tokens=prompt,
        completion_tokens=completion,
        counts=pre + dec,
        prefill_counts=None if summed else pre,
    )


def test_store_keeps_prefill_counts_and_phase_rollups_sum_to_the_combined(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    store.clock = lambda: T0 + timedelta(minutes=5)
    rng = np.random.default_rng(14)
    split = [_split_trace(rng, 20 + i, 8 + i) for i in range(4)]
    summed = _split_trace(rng, 30, 9, summed=True)
    add_request(store, "refund my order", "customer_service", [("triage", t) for t in split])
    add_request(store, "退货", "customer_service", [("triage", summed)])
    rows = store.calls()
    for row, t in zip(rows, split, strict=False):
        stored = decode_counts_blob(row.prefill_counts, len(LAYERS), EXPERTS)
        assert np.array_equal(stored, t.prefill_counts)
        assert np.array_equal(decode_counts(row), t.expert_counts())
    assert rows[-1].prefill_counts is None  # a summed record stays combined

    def sums() -> dict[str, Any]:
        out = {p: list(store.iter_rollups(phase=p)) for p in ("", "prefill", "decode")}
        return {p: (len(r), r[0].sums) for p, r in out.items()}

    first = sums()
    assert {p: n for p, (n, _) in first.items()} == {"": 1, "prefill": 1, "decode": 1}
    combined, pre, dec = (first[p][1] for p in ("", "prefill", "decode"))
    assert combined.calls == 5 and pre.calls == dec.calls == 4
    split_total = sum(t.expert_counts() for t in split)
    assert np.array_equal(pre.counts + dec.counts, split_total)
    assert np.array_equal(combined.counts, split_total + summed.expert_counts())
    assert pre.routed_tokens == sum(t.prompt_tokens for t in split)
    assert dec.routed_tokens == sum(t.completion_tokens - 1 for t in split)
    # the rebuild from the call rows gives the same three rows
    assert store.rebuild_rollups(chunk=2, max_pending=1) == 5
    again = sums()
    for phase in ("", "prefill", "decode"):
        assert np.array_equal(again[phase][1].counts, first[phase][1].counts)
        assert again[phase][1].sq_counts == pytest.approx(first[phase][1].sq_counts)
    store.close()


# ---- the migration -------------------------------------------------------------------------


def test_migration_0008_up_and_down_keeps_the_combined_counts(tmp_path: Path) -> None:
    from alembic import command

    from orchestrator.telemetry.migrate import alembic_config

    url = f"sqlite:///{tmp_path / 'm.db'}"
    store = TelemetryStore(url)
    rng = np.random.default_rng(15)
    t = _split_trace(rng, 12, 6)
    add_request(store, "where is my parcel", "customer_service", [("triage", t)])
    with store.engine.begin() as connection:
        command.downgrade(alembic_config(connection), "0007")
        tables = connection.execute(text("SELECT name FROM sqlite_master")).scalars().all()
        assert "expert_phase_rollups" not in tables
        (blob,) = connection.execute(text("SELECT expert_counts FROM model_calls")).one()
        command.upgrade(alembic_config(connection), "head")
    assert np.array_equal(decode_counts_blob(blob, len(LAYERS), EXPERTS), t.expert_counts())
    store.close()
    store = TelemetryStore(url)
    with store.engine.connect() as connection:
        (prefill,) = connection.execute(select(ModelCallRecord.prefill_counts)).one()
    assert prefill is None  # an old row's phase is unknown: never split after the fact
    assert list(store.iter_rollups(phase="prefill")) == []
    assert len(list(store.iter_rollups())) == 1
    store.close()


# ---- the skew report -----------------------------------------------------------------------


def _report_store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, summed: bool) -> TelemetryStore:
    """60 calls of 200 prompt and 41 completion tokens; in decode, layer 2 (index 1) routes
    a third of its picks to expert 9 (share 1/6 against a uniform 1/16 of top-2 picks)."""
    store = TelemetryStore(f"sqlite:///{tmp_path / ('s.db' if summed else 'p.db')}")
    freeze_time(monkeypatch, store, T0 + timedelta(hours=1))
    rng = np.random.default_rng(16)
    decode = np.full((len(LAYERS), EXPERTS), 1.0)
    decode[1, 9] = (EXPERTS - 1) / 2  # expert 9 takes a third of layer 2's decode picks
    decode /= decode.sum(axis=1, keepdims=True)
    for i in range(60):
        t = _split_trace(rng, 200, 41, decode, summed=summed)
        add_request(store, f"request {i}", "customer_service", [("reply", t)])
    return store


def test_a_decode_only_hot_expert_is_found_in_decode_and_not_in_prefill(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _report_store(tmp_path, monkeypatch, summed=False)
    report = build_report(store, ReportOptions(window="all", baseline="none"))
    view = report.phases
    assert view is not None and (view.split_calls, view.calls) == (60, 60)
    by_phase = {p.name: p for p in view.profiles}
    assert set(by_phase) == {"prefill", "decode"}
    assert by_phase["decode"].hot() == [(2, 9)]
    assert by_phase["prefill"].hot() == [] and by_phase["prefill"].dead() == []
    decode_l2 = by_phase["decode"].layers[1]
    assert decode_l2.judgeable and decode_l2.share_low[9] > 4 / EXPERTS  # the stated threshold
    assert by_phase["prefill"].routed_tokens == 60 * 200
    assert by_phase["decode"].routed_tokens == 60 * 40
    # the combined view dilutes it below the threshold: the phase view is what finds it
    assert report.overall.hot() == []
    assert "judged apart for all 60 calls" in view.note
    html = render_html(report)
    assert "Prefill and decode apart" in html and "L2:e9" in html
    console = Console(record=True, width=200)
    console.print(summary(report))
    shown = console.export_text()
    assert "Alarms by phase" in shown and "L2:e9 " in shown  # with its share and interval
    store.close()


def test_a_source_without_the_split_says_combined(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _report_store(tmp_path, monkeypatch, summed=True)
    report = build_report(store, ReportOptions(window="all", baseline="none"))
    assert report.phases is not None
    assert report.phases.profiles == [] and report.phases.split_calls == 0
    assert report.phases.note == NO_SPLIT and NO_SPLIT in report.notes
    assert "combined (source has no phase split)" in render_html(report)
    store.close()
