"""Issue 52's GPU run: the family configs read as their real shapes by the project's reader, and
the per-call check that counts equal routed tokens x top-k on every MoE layer."""

from __future__ import annotations

import base64
import io

import numpy as np
import pytest

from benchmarks.gpu.famcost import check_one, check_routing, prompts
from benchmarks.gpu.families import CONFIGS, config_for, expected_capture


def _encode(counts: np.ndarray) -> str:
    buf = io.BytesIO()
    np.save(buf, counts)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _call(counts: np.ndarray | None, prompt: int, completion: int, asked: str) -> dict:
    return {
        "asked": asked,
        "present": True,
        "routed_experts": None if counts is None else _encode(counts),
        "prompt_tokens": prompt,
        "completion_tokens": completion,
    }


def _counts(family: str, tokens: int, *, all_layers: bool, seed: int = 0) -> np.ndarray:
    """Counts as the plugin sends them: random top-k picks of ``tokens`` tokens per MoE layer;
    a dense layer's zero ids count as expert 0."""
    exp = expected_capture(config_for(family))
    rng = np.random.default_rng(seed)
    rows = []
    for layer in range(exp["num_hidden_layers"]):
        row = np.zeros(exp["num_experts"], dtype=np.int64)
        if layer in exp["moe_layer_index"]:
            for _ in range(tokens):
                row[rng.choice(exp["num_experts"], exp["top_k"], replace=False)] += 1
        elif not all_layers:
            continue
        else:
            row[0] = tokens * exp["top_k"]
        rows.append(row)
    return np.array(rows, dtype=np.uint16)


def test_family_shapes_are_the_published_ones() -> None:
    shapes = {f: expected_capture(config_for(f)) for f in CONFIGS}
    assert (shapes["ernie45"]["moe_layers"], shapes["ernie45"]["top_k"]) == (27, 6)
    assert shapes["ernie45"]["moe_layer_index"][0] == 1  # layer 0 dense
    assert (shapes["qwen3_moe"]["moe_layers"], shapes["qwen3_moe"]["top_k"]) == (48, 8)
    assert shapes["qwen3_moe"]["num_experts"] == 128
    assert (shapes["deepseek_v2"]["moe_layers"], shapes["deepseek_v2"]["top_k"]) == (26, 6)
    assert shapes["deepseek_v2"]["moe_layer_index"][0] == 1  # first_k_dense_replace 1
    with pytest.raises(KeyError, match="choose from"):
        config_for("mixtral-typo")


@pytest.mark.parametrize("family", list(CONFIGS))
@pytest.mark.parametrize("all_layers", [True, False])
def test_counts_of_every_moe_layer_sum_to_tokens_times_top_k(family: str, all_layers: bool) -> None:
    exp = expected_capture(config_for(family))
    good = _call(_counts(family, 20, all_layers=all_layers), 15, 6, "counts")  # 20 routed tokens
    assert check_one(good, exp) is None
    short = _call(_counts(family, 19, all_layers=all_layers), 15, 6, "counts")  # one token lost
    assert "tokens x top-k" in (check_one(short, exp) or "")
    # one MoE layer's row lost: a wrong shape, or (ERNIE/DeepSeek, every layer sent) the
    # dense layer's row read as a MoE layer's
    missing_layer = _call(_counts(family, 20, all_layers=all_layers)[:-1], 15, 6, "counts")
    problem = check_one(missing_layer, exp) or ""
    assert "not (" in problem or "a dense row" in problem
    assert "no counts" in (check_one(_call(None, 15, 6, "counts"), exp) or "")


def test_a_load_check_counts_failures_and_leaks() -> None:
    exp = expected_capture(config_for("qwen3_moe"))
    counts = _counts("qwen3_moe", 10, all_layers=True)
    calls = [_call(counts, 8, 3, "counts"), _call(None, 8, 3, "none"), _call(counts, 8, 3, "none")]
    result = check_routing(calls, exp, "on")
    assert (result["asked_counts"], result["counts_ok"]) == (1, 1)
    assert result["none_empty"] == 1 and not result["all_ok"]  # a 'none' call leaked routing
    assert result["expected_activations"] == 10 * 8 * 48
    off = check_routing([_call(None, 8, 3, "") | {"asked": None}], exp, "off")
    assert off["all_ok"]


def test_prompts_are_unique_per_load_and_in_vocabulary() -> None:
    a, b = prompts(64, 1000, seed=1), prompts(64, 1000, seed=2)
    assert len(a) == 64 and all(len(p) == len(a[0]) for p in a)
    assert a != b and prompts(64, 1000, seed=1) == a
    assert min(min(p) for p in a) >= 3 and max(max(p) for p in a) < 1000


def test_a_load_check_counts_each_calls_deficit() -> None:
    """The check records P + C - routed tokens of every counts call, not only five failures."""
    exp = expected_capture(config_for("deepseek_v2"))
    calls = [
        _call(_counts("deepseek_v2", 20, all_layers=True), 15, 6, "counts"),  # 20 = 15 + 6 - 1
        _call(_counts("deepseek_v2", 19, all_layers=True), 15, 6, "counts"),  # one token short
        _call(_counts("deepseek_v2", 19, all_layers=False, seed=1), 15, 6, "counts"),
    ]
    result = check_routing(calls, exp, "on")
    assert result["deficits"] == {"1": 1, "2": 2}
    assert result["counts_ok"] == 1 and not result["all_ok"]


def _ids(tokens: int, exp: dict, seed: int = 0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, exp["num_experts"], (tokens, exp["num_hidden_layers"], exp["top_k"]))
    dense = [i for i in range(exp["num_hidden_layers"]) if i not in exp["moe_layer_index"]]
    ids[:, dense, :] = 0
    return ids.astype(np.uint8)


@pytest.mark.parametrize("family", list(CONFIGS))
def test_diagnosis_reads_routed_tokens_from_ids_and_counts(family: str) -> None:
    from benchmarks.gpu.tokdiag import record, routed_tokens

    exp = expected_capture(config_for(family))
    ids = _ids(30, exp)
    got = routed_tokens(_encode(ids), exp)
    assert got["routed"] == 30 and got["zero_rows"] == 0  # dense layers' zeros are not read
    ids[4, exp["moe_layer_index"], :] = 0  # an unwritten slot: every MoE layer reads zeros
    assert routed_tokens(_encode(ids), exp)["zero_rows"] == 1
    assert routed_tokens(_encode(_counts(family, 29, all_layers=True)), exp)["routed"] == 29
    uneven = _counts(family, 29, all_layers=False)
    uneven[-1, 0] += 1  # one MoE layer sums to something else: no single token count
    assert routed_tokens(_encode(uneven), exp)["routed"] is None
    answer = {
        "choices": [{"routed_experts": _encode(ids), "finish_reason": "length", "token_ids": [1]}],
        "usage": {"prompt_tokens": 25, "completion_tokens": 6},
    }
    line = record("completions/ids/length/m6/c1", answer, exp)
    assert (line["P"], line["C"], line["deficit"], line["finish"]) == (25, 6, 1, "length")
    assert "error" in record("x", {"error": "HTTP 400: b'no'"}, exp)


def test_diagnosis_bodies_cross_endpoint_finish_and_mode() -> None:
    from benchmarks.gpu.tokdiag import EOS_ID, body_for, cases, words

    seen = {(c["endpoint"], c["mode"], c["eos"]) for c in cases()}
    assert ("completions", "ids", True) in seen and ("chat", "counts", False) in seen
    path, body = body_for({"endpoint": "chat", "mode": "ids", "max_tokens": 4, "eos": True}, [5, 9])
    assert path == "/chat/completions" and body["messages"][0]["content"] == "<t5> <t9>"
    assert body["logit_bias"] == {str(EOS_ID): 100.0} and body["min_tokens"] > 0
    assert not body["ignore_eos"] and body["vllm_xargs"] == {"routed_experts": "ids"}
    path, body = body_for(
        {"endpoint": "completions", "mode": "counts", "max_tokens": 1, "eos": False}, [7]
    )
    assert path == "/completions" and body["prompt"] == [7] and body["ignore_eos"]
    _, text = body_for(
        {"endpoint": "completions_text", "mode": "ids", "max_tokens": 1, "eos": False}, [7, 8]
    )
    assert text["prompt"] == words([7, 8]) == "<t7> <t8>"


def test_sequential_report_pairs_modes_with_none_and_bounds_the_off_block() -> None:
    from benchmarks.gpu.report52 import sequential_figures, welch_upper_pct

    def load(mode: str, rep: int, tok: float) -> dict:
        return {"mode": mode, "rep": rep, "concurrency": 128, "output_tok_s": tok}

    runs = [load("off", r, 1000.0 + 10 * r) for r in range(3)]
    runs += [load("none", r, 950.0) for r in range(3)]
    runs += [load("counts", r, 950.0 * (1 - 0.02 * (r + 1))) for r in range(3)]
    fig = sequential_figures({"runs": runs})["c128"]
    assert fig["counts"]["cost_vs_none_each_rep"] == [2.0, 4.0, 6.0]  # same repetition's none
    assert fig["counts"]["cost_vs_none_mean"] == 4.0
    assert fig["counts"]["cost_vs_none_upper95"] > 4.0
    assert fig["none"]["cost_vs_off_pct"] == round(100 * (1 - 950 / 1010), 2)
    upper = welch_upper_pct([1000.0, 1010.0, 1020.0], [940.0, 950.0, 960.0])
    assert upper is not None and upper > 100 * (1 - 950 / 1010)
    assert welch_upper_pct([1000.0], [950.0, 960.0]) is None  # one off load: no bound


def test_alignment_says_which_token_the_rows_leave_out() -> None:
    from benchmarks.gpu.tokdiag import ids_rows, set_agreement

    exp = expected_capture(config_for("ernie45"))
    full = _ids(40, exp, seed=3)  # the routing of tokens 0..39 (prompt + output)
    moe = ids_rows(_encode(full), exp)
    assert moe is not None and moe.shape[1] == exp["moe_layers"]  # the dense layer dropped
    last_missing, first_missing = moe[:39], moe[1:]
    assert set_agreement(last_missing, moe, 0) == 1.0  # rows x1..x39: the last token left out
    assert set_agreement(first_missing, moe, 1) == 1.0  # rows x2..x40: the first left out
    assert set_agreement(first_missing, moe, 0) < 0.3  # unaligned random sets rarely agree
    assert set_agreement(moe[:3], moe[:3], 5) is None  # no rows overlap
    assert ids_rows(_encode(_counts("ernie45", 9, all_layers=True)), exp) is None  # counts
