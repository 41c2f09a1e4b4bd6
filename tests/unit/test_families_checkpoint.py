"""Offline checkpoints per family: shape read back, planted hot and dead experts, CLI errors.

Each family's CPU shape is built with a small tokenizer (512) and the built-in corpus, then
replayed on texts of the corpus (English and Chinese): the planted hot expert must be chosen by
every token and the dead one by none, and no unplanted expert may come near either verdict.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from transformers import AutoTokenizer

from serving.architecture import MoEArchitecture
from serving.checkpoint import (
    _BUILTIN_CORPUS,
    FAMILY_NAMES,
    CheckpointSpec,
    PlantedExpert,
    build_checkpoint,
)
from serving.replay import ExpertRoutingReplayer

PLANTED = (PlantedExpert.parse("1:3:hot"), PlantedExpert.parse("1:7:dead"))
TEXTS = (
    *_BUILTIN_CORPUS,
    "My package never arrived and the tracking page has not changed for a week.",
    "我想修改收货地址，订单还没有发货。",
    "Can you cancel the second charge on my card? I was billed twice for one order.",
    "这家店的菜太咸了，而且送来的时候已经凉了，能退款吗？",
)


@pytest.fixture(scope="module", params=[f for f in FAMILY_NAMES if f != "ernie45"])
def planted(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory):
    family = request.param
    spec = CheckpointSpec.for_family(family, tokenizer_vocab_size=512, planted=PLANTED)
    folder = build_checkpoint(tmp_path_factory.mktemp(family) / "ckpt", spec)
    return family, spec, folder


def test_the_shape_reads_back(planted) -> None:
    family, spec, folder = planted
    arch = MoEArchitecture.from_checkpoint(folder)
    assert arch.family == family
    assert (arch.num_experts, arch.top_k) == (spec.moe_num_experts, spec.moe_k)
    assert arch.num_shared_experts == spec.moe_num_shared_experts
    assert arch.moe_layers == tuple(range(spec.moe_layer_start_index, spec.num_hidden_layers))
    assert 1 in arch.moe_layers and arch.num_experts >= 8 * arch.top_k // 1 / 1


def test_planted_hot_and_dead_hold_on_every_token(planted) -> None:
    _family, _spec, folder = planted
    tokenizer = AutoTokenizer.from_pretrained(folder)
    replayer = ExpertRoutingReplayer(folder)
    calls = [(tokenizer(text)["input_ids"], [5, 6, 7]) for text in TEXTS]
    traces = replayer.replay_many(calls)
    ids = np.concatenate([t.expert_ids for t in traces])  # (tokens, layers, k)
    layer = replayer.arch.moe_layers.index(1)
    tokens = ids.shape[0]
    assert (ids[:, layer] == 3).any(axis=-1).all()  # hot: chosen by every token
    assert not (ids[:, layer] == 7).any()  # dead: never chosen
    experts, k = replayer.arch.num_experts, replayer.arch.top_k
    for position in range(len(replayer.arch.moe_layers)):
        load = np.bincount(ids[:, position].ravel(), minlength=experts)
        assert load.sum() == tokens * k
        others = np.delete(load, [3, 7]) if position == layer else load
        assert others.max() < tokens  # no unplanted expert is chosen by every token
        assert (others > 0).all()  # balanced: no unplanted expert is left unused


def test_every_family_builds_its_own_model_class(planted) -> None:
    import json

    family, _spec, folder = planted
    config = json.loads((folder / "config.json").read_text())
    manifest = json.loads((folder / "orchestrator_checkpoint.json").read_text())
    assert manifest["family"] == family
    assert config["model_type"] == {"gpt_oss": "gpt_oss"}.get(family, family)


def test_an_ernie_spec_hashes_as_before_families() -> None:
    spec = CheckpointSpec()
    assert spec.family == "ernie45"
    import hashlib

    before = spec.model_dump_json(exclude={"family"}) + "corpus"
    assert spec.fingerprint("corpus") == hashlib.sha256(before.encode()).hexdigest()[:16]
    other = CheckpointSpec.for_family("olmoe")
    assert other.fingerprint("corpus") != CheckpointSpec.for_family("qwen3_moe").fingerprint(
        "corpus"
    )


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"family": "llama"}, "unknown MoE family 'llama'; choose one of ernie45"),
        ({"family": "mixtral", "moe_num_shared_experts": 2}, "no shared experts"),
        ({"family": "olmoe", "moe_layer_start_index": 1}, "every olmoe layer is MoE"),
    ],
)
def test_a_spec_that_does_not_fit_its_family_is_refused(kwargs: dict, match: str) -> None:
    family = kwargs.pop("family")
    with pytest.raises(ValueError, match=match):
        CheckpointSpec.for_family(family, **kwargs)


@pytest.mark.parametrize(
    ("flags", "line"),
    [
        (
            ["--family", "mixtrall"],
            "error: unknown MoE family 'mixtrall'; choose one of ernie45, qwen3_moe, "
            "deepseek_v2, mixtral, olmoe, gpt_oss",
        ),
        (
            ["--family", "olmoe", "--plant", "7:1:hot"],
            "error: planted layer 7 is not an MoE layer; the MoE layers are 0, 1",
        ),
        (
            ["--family", "deepseek_v2", "--plant", "0:1:hot"],  # layer 0 is dense
            "error: planted layer 0 is not an MoE layer; the MoE layers are 1",
        ),
        (
            ["--family", "ernie45", "--layers", "8", "--plant", "9:1:dead"],
            "error: planted layer 9 is not an MoE layer; the MoE layers are 1..7",
        ),
        (  # Mixtral's field is num_local_experts: the message gives the range instead
            ["--family", "mixtral", "--plant", "1:99:hot"],
            "error: planted expert 99 of layer 1: this checkpoint has 16 experts per MoE layer: "
            "use 0..15",
        ),
        (
            ["--family", "mixtral", "--plant", "1:3:hot", "--plant", "1:3:dead"],
            "error: expert 3 of layer 1 is planted twice: plant each expert once",
        ),
        (
            ["--plant", "2:40:hot", "--plant", "1:5:0.5", "--plant", "2:40:hot"],
            "error: expert 40 of layer 2 is planted twice: plant each expert once",
        ),
        (
            ["--family", "mixtral", *[f for e in (1, 2, 3) for f in ("--plant", f"1:{e}:hot")]],
            "error: layer 1 has 3 hot experts planted, but each token chooses only 2: plant at "
            "most 2 hot experts per layer",
        ),
        (
            ["--family", "mixtral", *[f for e in range(15) for f in ("--plant", f"0:{e}:dead")]],
            "error: layer 0 has 15 dead experts planted, but each token chooses 2 of 16: plant at "
            "most 14 dead experts per layer",
        ),
        (
            ["--family", "olmoe", "--plant", "-1:3:hot"],
            "error: planted expert '-1:3:hot' is not LAYER:EXPERT:hot, LAYER:EXPERT:dead or "
            "LAYER:EXPERT:BIAS (e.g. 1:3:hot, 1:7:dead, 2:5:0.5)",
        ),
        (
            ["--family", "qwen3_moe", "--layers", "1"],
            "error: --layers = 1: Input should be greater than or equal to 2",
        ),
    ],
)
def test_cli_bad_flags_are_one_line(flags: list[str], line: str, tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from orchestrator.cli import app

    out = tmp_path / "x"
    result = CliRunner().invoke(
        app, ["build-checkpoint", *flags, "--out", str(out)], env={"COLUMNS": "300"}
    )
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [line]
    assert not out.exists()


def test_serving_a_built_family_checkpoint_keeps_it(planted, tmp_path: Path) -> None:
    """``orchestrator serve`` (ensure_checkpoint) serves a folder of build-checkpoint as it
    is: its family and planted experts are not replaced by the default ERNIE spec."""
    from orchestrator.cli.common import ensure_checkpoint
    from orchestrator.config import Settings
    from serving.checkpoint import recorded_spec

    family, spec, folder = planted
    weights = (folder / "model.safetensors").stat().st_mtime_ns
    settings = Settings(checkpoint_dir=folder, data_dir=tmp_path)  # no data: built-in corpus
    assert ensure_checkpoint(settings) == folder
    assert (folder / "model.safetensors").stat().st_mtime_ns == weights
    assert recorded_spec(folder) == spec
    assert MoEArchitecture.from_checkpoint(folder).family == family
