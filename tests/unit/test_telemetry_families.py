"""Model families in the telemetry (issue 50): an unsupported family is recorded without
experts, each call keeps its family, and no analysis pools two families.

Two families are written here at the SAME expert shape (3 MoE layers, 16 experts, top-2), so
the refusal can only come from the recorded family, not from the shape check.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
from datetime import UTC, datetime, timedelta
from functools import partial
from pathlib import Path

import numpy as np
import pytest
from sqlalchemy import select
from typer.testing import CliRunner

from orchestrator import TelemetryStore
from orchestrator.analysis.load import expert_load
from orchestrator.analysis.skew import ReportOptions, build_report
from orchestrator.cli import app
from orchestrator.config import Settings
from orchestrator.core.runtime import expert_routing_capture
from orchestrator.exceptions import UserError
from orchestrator.telemetry import ExpertRollupRecord, MixedFamiliesError
from orchestrator.telemetry.readonly import open_readonly
from serving.capture import (
    CallTokens,
    DeferredReplayCapture,
    EngineCapture,
    ReplayCapture,
    UnsupportedCapture,
)
from serving.engine_capture import encode_routed_experts
from serving.expert_routing import ExpertRoutingSource, ExpertRoutingTrace
from tests.unit.skew_data import add_request, routing_trace

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=UTC)
LAYERS, EXPERTS, TOP_K = (1, 2, 3), 16, 2

#: An MoE of no supported family: GraniteMoE, which vLLM serves but the project does not describe.
GRANITE = {
    "model_type": "granitemoe",
    "architectures": ["GraniteMoeForCausalLM"],
    "num_hidden_layers": 4,
    "num_local_experts": 8,
    "num_experts_per_tok": 2,
}


def _checkpoint(tmp_path: Path, config: dict[str, object]) -> Path:
    folder = tmp_path / str(config["model_type"])
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
    return folder


def _call(capture: object, choice: dict[str, object]) -> ExpertRoutingTrace:
    assert isinstance(capture, (UnsupportedCapture, DeferredReplayCapture))
    return asyncio.run(
        capture.capture(
            CallTokens(
                response={},
                choice=choice,
                prompt_ids=[1, 2, 3],
                completion_ids=[4, 5],
                prompt_tokens=3,
                completion_tokens=2,
            )
        )
    )


# ---- an unsupported family ------------------------------------------------------------------


def test_an_unsupported_family_says_so_once_and_records_no_experts(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    folder = _checkpoint(tmp_path, GRANITE)
    with caplog.at_level(logging.WARNING, logger="serving.capture"):
        capture = ReplayCapture.from_checkpoint(folder)
        again = ReplayCapture.from_checkpoint(folder)  # a second client: no second line
        deferred = DeferredReplayCapture(folder)  # a batch job's capture
    lines = [r.getMessage() for r in caplog.records if r.name == "serving.capture"]
    assert len(lines) == 1 and "\n" not in lines[0]
    assert "granitemoe" in lines[0] and "'unsupported'" in lines[0]
    assert "docs/moe_families.md" in lines[0]  # how to add the family
    assert isinstance(capture, UnsupportedCapture) and isinstance(again, UnsupportedCapture)
    assert capture.arch.num_hidden_layers == 4 and not capture.arch.is_moe
    # vLLM may still send ids (it routes the model); none of them becomes an expert
    ids = np.zeros((4, 4, 2), dtype=np.uint8)
    ids[:, 1:, 1] = 3
    for made in (capture, deferred):
        trace = _call(made, {"routed_experts": encode_routed_experts(ids)})
        assert trace.source is ExpertRoutingSource.UNSUPPORTED
        assert (trace.moe_layers, trace.num_experts, trace.top_k) == ((), 0, 0)
        assert not trace.has_routing and trace.expert_counts().size == 0
        assert "granitemoe" in (trace.reason or "")


def test_both_profiles_give_an_unsupported_model_the_unsupported_capture(tmp_path: Path) -> None:
    folder = _checkpoint(tmp_path, {**GRANITE, "num_hidden_layers": 6})
    for profile in ("cpu", "gpu"):
        settings = Settings(profile=profile, checkpoint_dir=folder, gpu_model=str(folder))
        capture = expert_routing_capture(settings)
        assert isinstance(capture, UnsupportedCapture), profile
        assert capture.arch.family == "unsupported" and capture.arch.num_hidden_layers == 6
    # a supported family still gets the engine's capture on the GPU profile
    mixtral = _checkpoint(tmp_path, {**GRANITE, "model_type": "mixtral", "architectures": []})
    capture = expert_routing_capture(Settings(profile="gpu", gpu_model=str(mixtral)))
    assert isinstance(capture, EngineCapture) and capture.arch.family == "mixtral"


def test_an_unsupported_trace_cannot_carry_a_shape() -> None:
    with pytest.raises(ValueError, match="unsupported trace names no MoE layers"):
        ExpertRoutingTrace(source=ExpertRoutingSource.UNSUPPORTED, moe_layers=(1,), top_k=2)


def test_the_store_records_an_unsupported_call_without_experts(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    trace = ExpertRoutingTrace.unsupported("unsupported model family: granitemoe", 7, 3)
    _record(store, "granite", trace)
    (row,) = store.calls()
    assert row.expert_routing_source == "unsupported"
    assert (row.expert_counts, row.moe_layers, row.num_experts, row.top_k) == (None, [], 0, 0)
    assert row.model_family == "unsupported" and "granitemoe" in (row.routing_note or "")
    assert store.rollup_status() == (0, 0)  # nothing summed
    assert store.count_calls(source="unsupported") == 1
    with pytest.raises(UserError, match=r"1 call\(s\) of an MoE family with no description"):
        expert_load(store)  # says why, not "run orchestrator run first"
    store.close()


# ---- two families in one database ------------------------------------------------------------


def _record(store: TelemetryStore, model: str, routing: ExpertRoutingTrace) -> None:
    add_request(
        store,
        f"refund please, model {model}",
        "customer_service",
        [("triage", routing)],
        model=model,
    )


#: An engine trace on this file's MoE shape: ``_shaped(tokens, **data)``.
_shaped = partial(routing_trace, layers=LAYERS, experts=EXPERTS, top_k=TOP_K)


def _trace(rng: np.random.Generator, family: str, hot: int) -> ExpertRoutingTrace:
    tokens = 40
    keys = rng.random((tokens, len(LAYERS), EXPERTS))
    keys[..., hot] += 1.0  # this family's expert `hot` is chosen by every token
    ids = np.argsort(-keys, axis=-1)[..., :TOP_K].astype(np.int16)
    return _shaped(tokens, expert_ids=ids, family=family)


@pytest.fixture(scope="module")
def mixed_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("families") / "telemetry.db"
    store = TelemetryStore(f"sqlite:///{path}")
    rng = np.random.default_rng(50)
    for i in range(8):
        store.clock = lambda i=i: T0 + timedelta(minutes=5 * i)  # type: ignore[misc]
        _record(store, "ernie-moe", _trace(rng, "ernie45", hot=3))
        _record(store, "mixtral-moe", _trace(rng, "mixtral", hot=9))
    store.close()
    return path


def test_each_call_and_rollup_keeps_its_family(mixed_db: Path) -> None:
    store = TelemetryStore(f"sqlite:///{mixed_db}")
    try:
        rows = store.calls()
        assert {(r.model, r.model_family) for r in rows} == {
            ("ernie-moe", "ernie45"),
            ("mixtral-moe", "mixtral"),
        }
        with store._session() as session:
            rollups = session.execute(
                select(ExpertRollupRecord.model_family, ExpertRollupRecord.calls)
            ).all()
        assert sorted(rollups) == [("ernie45", 8), ("mixtral", 8)]  # never one summed row
        (chunk,) = store.iter_call_counts(family="mixtral")
        assert chunk.model_family == "mixtral" and len(chunk.ids) == 8
        assert (chunk.counts[:, :, 9] == 40).all()  # mixtral's own hot expert only
        with pytest.raises(MixedFamiliesError):
            list(store.iter_call_counts())
    finally:
        store.close()


def test_the_skew_report_and_the_load_table_refuse_to_pool_two_families(mixed_db: Path) -> None:
    store = TelemetryStore(f"sqlite:///{mixed_db}")
    try:
        options = ReportOptions(window="7d", until=T0 + timedelta(days=1), baseline="none")
        with pytest.raises(MixedFamiliesError) as caught:
            build_report(store, options)
        message = str(caught.value)
        assert "\n" not in message
        assert "ernie45 (model ernie-moe)" in message and "mixtral (model mixtral-moe)" in message
        assert "--model" in message and "never pooled" in message
        with pytest.raises(UserError, match=r"2 MoE families .*ernie45.*mixtral"):
            expert_load(store)
        one = build_report(store, options.model_copy(update={"model": "mixtral-moe"}))
        assert one.overall.hot() == [(layer, 9) for layer in LAYERS]
        load = expert_load(store, family="ernie45")
        assert load.family == "ernie45" and all(layer.hot == [3] for layer in load.layers)
    finally:
        store.close()


def test_orchestrator_skew_says_why_in_one_line_and_model_selects_one(mixed_db: Path) -> None:
    runner = CliRunner()
    args = ["skew", "--db", str(mixed_db), "--window", "7d", "--baseline", "none"]
    args += ["--until", (T0 + timedelta(days=1)).isoformat()]
    result = runner.invoke(app, args)
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "2 MoE families" in said and "ernie45" in said and "mixtral" in said
    assert "--model" in said and "Traceback" not in result.output
    result = runner.invoke(app, [*args, "--model", "ernie-moe"])
    assert result.exit_code == 0, result.output
    assert "L1:e3" in result.output


def test_calls_without_a_family_pool_with_one_family(tmp_path: Path) -> None:
    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    rng = np.random.default_rng(1)
    _record(store, "m", _trace(rng, "ernie45", hot=3))
    _record(store, "m", _trace(rng, "", hot=3))  # a test double's call names no family
    load = expert_load(store)
    assert load.calls == 2 and load.family == "ernie45"
    store.close()


def test_stale_rollups_summed_from_the_calls_keep_the_families_apart(
    mixed_db: Path, tmp_path: Path
) -> None:
    copy = tmp_path / "stale.db"
    copy.write_bytes(mixed_db.read_bytes())
    with sqlite3.connect(copy) as db:  # as a writer without rollups leaves it
        db.execute("DELETE FROM expert_rollups")
    reader = open_readonly(f"sqlite:///{copy}")
    try:
        assert reader.rollups_stale is not None
        families = {row.model_family for row in reader.iter_rollups()}
        assert families == {"ernie45", "mixtral"}
        options = ReportOptions(window="7d", until=T0 + timedelta(days=1), baseline="none")
        with pytest.raises(MixedFamiliesError, match=r"ernie45 .*mixtral"):
            build_report(reader, options)
        rows = list(reader.iter_rollups(family="ernie45"))
        assert rows and all(r.model_family == "ernie45" for r in rows)
    finally:
        reader.close()


def test_orchestrator_load_refuses_two_families_in_one_line_and_model_selects_one(
    mixed_db: Path,
) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["load", "--db", str(mixed_db)])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "2 MoE families" in said and "select one with --model (e.g. --model ernie-moe)" in said
    assert "orchestrator skew" not in said and "Traceback" not in result.output  # load's own flag
    for model, hot in (("ernie-moe", 3), ("mixtral-moe", 9)):
        result = runner.invoke(app, ["load", "--db", str(mixed_db), "--model", model])
        assert result.exit_code == 0, result.output
        assert result.output.count(f"1: e{hot}") == len(LAYERS)  # one hot expert per layer
