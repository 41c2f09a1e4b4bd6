"""A vLLM general plugin: routed experts as per-call expert counts, computed in the server.

vLLM 0.24.0 with ``--enable-return-routed-experts`` returns, in every non-streaming choice,
``routed_experts``: base64 of an ``.npy`` array of shape ``(routed tokens, num_hidden_layers,
top_k)`` (about 35 KB per 150-token call of the 21B-A3B shape). The skew analysis only needs the
per-call counts ``(layers, experts)``. This plugin lets each request choose what the server
sends in that same field:

=========  ==========================================================================  =======
mode       ``routed_experts`` of the choice                                            size
=========  ==========================================================================  =======
``ids``    vLLM's own array, unchanged: ``(tokens, layers, top_k)`` expert ids           35 KB
``counts`` ``(layers, E)`` activations per layer and expert, summed over every          ~2 KB
           routed token (prompt and completion), one row per hidden layer as vLLM
           returns them (a dense layer's zeros count as expert 0: the client drops
           exactly the layers its shape description names non-MoE, for every family,
           :func:`serving.engine_capture.counts_trace`; the server guesses nothing);
           the smallest unsigned dtype that holds the largest count (uint8 below 256,
           else uint16, else uint32); ``E`` = the highest expert id seen + 1 (the
           client pads to the model's expert count). 2-D, so a reader tells it from
           ``ids`` by its shape.
``phase_   the same counts kept apart for the prompt (prefill) and the completion          ~4 KB
counts``   (decode) rows: one ``(layers, E)`` array of the structured dtype
           ``[("prefill", u), ("decode", u)]`` (:func:`phase_expert_counts`); vLLM's array
           holds the ``P`` prompt rows first, then ``C - 1`` completion rows. Still 2-D, so a
           client that reads only plain ``counts`` refuses it by its dtype, never misreads it.
           Where the request's prompt length is unknown, plain ``counts`` are sent instead.
``none``   absent (``null``): for sampled capture, where the client asks for routing on     0
           a sample of calls only
=========  ==========================================================================  =======

``counts`` is unchanged since it first shipped (the combined array, for clients that read it);
``phase_counts`` (2026-12-05) is the versioned form that keeps prefill and decode apart. A
server whose plugin predates it answers a ``phase_counts`` request with its default mode.

The request picks its mode with ``"vllm_xargs": {"routed_experts": "counts"}``; without it
the server's default applies, ``$ORCH_ROUTED_EXPERTS`` (``ids`` when unset, which is vLLM's
behaviour). Both encodings stay base64 ``.npy``, as vLLM writes them.

**What it saves and what it does not.** The counts are computed in vLLM's API process, where
the output processor joins the per-step routing of a finished request. The plugin removes the
``.npy`` + base64 of the whole array, the 35 KB JSON string and the client's decode.

**A request that asks for ``none`` pays (almost) nothing past the GPU** (since 2026-12-01b):
in the engine-core process the plugin also wraps the scheduler (:func:`patch_scheduler`), so
the per-step routing rows of a ``none`` request are never attached to its ``EngineCoreOutput``:
they are not serialised, not sent to the API process, not appended there. What such a request
still shares with every other one is the engine's batch-wide work of
``--enable-return-routed-experts``: the GPU capture buffer, its per-step copy to the CPU, the
scheduler's slot buffer, and the read of a finished prefill's prompt rows. This makes sampled
capture a per-request opt-in: only the sampled calls (``counts``) carry their routing through
the engine-to-API path.

**How it hooks in** (no fork): vLLM loads every ``vllm.general_plugins`` entry point in each of
its processes and calls it. :func:`register` wraps two methods of
``vllm.v1.engine.output_processor.RequestState`` (read from vLLM 0.24.0's source):
``from_new_request`` (to remember the request's mode from its ``SamplingParams.extra_args``)
and ``_new_completion_output`` (which builds the ``CompletionOutput`` whose
``routed_experts`` the chat and completion serving code encode); and in the scheduler's module
``vllm.v1.core.sched.scheduler`` it wraps ``Scheduler.update_from_output`` (to know the
scheduler whose outputs are being built) and the module's ``EngineCoreOutput`` name (to drop
the routing rows of ``none`` requests). On a vLLM without these names the plugin logs a
warning and changes nothing; any error inside the wrappers falls back to vLLM's own
behaviour for that output (the server keeps answering).

Entry point (``pyproject.toml``)::

    [project.entry-points."vllm.general_plugins"]
    moe_orchestrator_routing = "serving.vllm_plugin:register"

The capture cost of each mode against routed experts off is measured on a GPU by
``benchmarks/gpu/run19.sh`` (the 21B-A3B shape); see
``benchmarks/results/gpu_2026-11-30.md`` and ``benchmarks/results/gpu_2026-12-01b.md``.

Where the project is not installed (the GPU machine), ``python -m serving.vllm_plugin DIR``
writes a ``.dist-info`` with that entry point into ``DIR``, a folder on ``PYTHONPATH``.

This module imports only the standard library and numpy at import time: it runs inside the
vLLM server's processes.
"""

from __future__ import annotations

import functools
import logging
import os
import sys
from collections.abc import Mapping as _Mapping
from typing import Any as _Any

import numpy as np

__all__ = [
    "DIST_NAME",
    "ENV_DEFAULT",
    "MODES",
    "XARG",
    "compact_expert_counts",
    "expert_counts_from_ids",
    "mode_of",
    "patch_request_state",
    "patch_scheduler",
    "patch_scheduler_config",
    "phase_expert_counts",
    "register",
    "write_dist_info",
]

# a child of "vllm": vLLM configures that logger in its processes, so these lines reach its log
_logger = logging.getLogger("vllm.moe_orchestrator_plugin")

#: The ``vllm_xargs`` key a request sets to choose its mode.
XARG = "routed_experts"
#: Environment variable holding the server's default mode.
ENV_DEFAULT = "ORCH_ROUTED_EXPERTS"
#: The modes (see the module docstring).
MODES = ("ids", "counts", "phase_counts", "none")
#: Attribute the plugin stores the mode under on each ``RequestState``.
_STATE_ATTR = "_orch_routed_experts_mode"
_PATCHED_MARK = "_orch_routed_experts_patched"


def _default_mode() -> str:
    mode = os.environ.get(ENV_DEFAULT, "ids").strip().lower() or "ids"
    if mode not in MODES:
        _logger.warning("%s=%r is not one of %s; using 'ids'", ENV_DEFAULT, mode, MODES)
        return "ids"
    return mode


def mode_of(extra_args: _Mapping[str, _Any] | None, default: str) -> str:
    """The mode a request asked for: ``extra_args["routed_experts"]`` when it is one of
    :data:`MODES` (case-insensitive), else ``default``.

    An unknown value falls back to ``default`` rather than failing the request: the server
    must keep answering, and the client checks the shape of what it gets.
    """
    if not extra_args:
        return default
    value = extra_args.get(XARG)
    if isinstance(value, str) and value.strip().lower() in MODES:
        return value.strip().lower()
    return default


def expert_counts_from_ids(ids: np.ndarray) -> np.ndarray:
    """Activations per (layer, expert) of one call's routed-experts array.

    Args:
        ids: ``(tokens, layers, top_k)`` integer expert ids, as vLLM's output processor joins
            them (all hidden layers; a dense layer reads zeros there).

    Returns:
        ``(layers, max id + 1)`` counts: uint16 when ``tokens < 65536`` (a layer's count of one
        expert never exceeds the token count: each token picks an expert at most once per
        layer), else uint32. Every row sums to ``tokens * top_k``. ``(layers, 0)`` for no
        tokens.

    Raises:
        ValueError: ``ids`` is not 3-D or not integer.
    """
    if ids.ndim != 3 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(
            f"expected (tokens, layers, top_k) integer ids, got {ids.shape} {ids.dtype}"
        )
    tokens, layers, _ = ids.shape
    if tokens == 0:
        return np.zeros((layers, 0), dtype=np.uint16)
    experts = int(ids.max()) + 1
    # one bincount over "layer * experts + id"
    offsets = (np.arange(layers, dtype=np.int32) * experts)[None, :, None]
    flat = (ids.astype(np.int32) + offsets).ravel()
    counts = np.bincount(flat, minlength=layers * experts).reshape(layers, experts)
    return counts.astype(np.uint16 if tokens < 65536 else np.uint32)


def compact_expert_counts(ids: np.ndarray) -> np.ndarray:
    """The ``counts`` mode's payload: :func:`expert_counts_from_ids` of every hidden layer, in
    the smallest unsigned dtype that holds it.

    No layer is dropped here: the server does not know which layers are MoE, and "every id is
    0" is no proof of a dense layer (a top-1 MoE layer may route every token to expert 0). The
    client's decoder (:func:`serving.engine_capture.counts_trace`) drops exactly the layers its
    shape description (:class:`serving.architecture.MoEArchitecture`) names non-MoE: ERNIE-4.5's
    layer 0, DeepSeek-V2's first ``first_k_dense_replace`` layers, Qwen3-MoE's
    ``mlp_only_layers``. A dense layer costs one row of ``E`` bytes (64 for the 21B-A3B shape).

    Against the full ``(28, 64)`` uint16 array of the 21B-A3B shape this is ``(28, 64)`` uint8
    for calls under 256 routed tokens: 1,920 bytes of ``.npy`` instead of 3,712.

    Args:
        ids: ``(tokens, layers, top_k)`` integer expert ids.

    Returns:
        ``(layers, max id + 1)`` counts, uint8/uint16/uint32.

    Raises:
        ValueError: ``ids`` is not 3-D or not integer.
    """
    counts = expert_counts_from_ids(ids)
    peak = int(counts.max()) if counts.size else 0
    dtype = np.uint8 if peak < 256 else np.uint16 if peak < 65536 else np.uint32
    return counts.astype(dtype)


def phase_expert_counts(ids: np.ndarray, prompt_rows: int) -> np.ndarray:
    """The ``phase_counts`` mode's payload: :func:`compact_expert_counts` of the first
    ``prompt_rows`` rows (prefill) and of the others (decode), as one structured array.

    Args:
        ids: ``(tokens, layers, top_k)`` integer expert ids, prompt rows first (vLLM's order).
        prompt_rows: Rows of the prompt, ``P``; clipped to ``[0, tokens]``.

    Returns:
        ``(layers, max id + 1)`` of dtype ``[("prefill", u), ("decode", u)]``, ``u`` the
        smallest of uint8/uint16/uint32 that holds both; ``prefill + decode`` equals
        :func:`expert_counts_from_ids` of ``ids``.

    Raises:
        ValueError: ``ids`` is not 3-D or not integer.
    """
    if ids.ndim != 3 or not np.issubdtype(ids.dtype, np.integer):
        raise ValueError(
            f"expected (tokens, layers, top_k) integer ids, got {ids.shape} {ids.dtype}"
        )
    split = min(max(int(prompt_rows), 0), ids.shape[0])
    experts = int(ids.max()) + 1 if ids.size else 0
    parts = []
    for rows in (ids[:split], ids[split:]):
        part = expert_counts_from_ids(rows)
        wide = np.zeros((ids.shape[1], experts), dtype=np.uint32)
        wide[:, : part.shape[1]] = part
        parts.append(wide)
    peak = max((int(p.max()) for p in parts if p.size), default=0)
    dtype = np.uint8 if peak < 256 else np.uint16 if peak < 65536 else np.uint32
    out = np.empty((ids.shape[1], experts), dtype=[("prefill", dtype), ("decode", dtype)])
    out["prefill"], out["decode"] = parts
    return out


def patch_request_state(request_state_cls: type, default: str | None = None) -> bool:
    """Wrap ``from_new_request`` and ``_new_completion_output`` of vLLM's ``RequestState``.

    Args:
        request_state_cls: ``vllm.v1.engine.output_processor.RequestState`` (tests pass a
            stand-in with the same two methods).
        default: The mode of requests that name none; :data:`ENV_DEFAULT` (else ``ids``) when
            None.

    Returns:
        True when patched now or before; False (with a warning) when the class lacks either
        method, in which case nothing is changed.
    """
    if getattr(request_state_cls, _PATCHED_MARK, False):
        return True
    from_new = request_state_cls.__dict__.get("from_new_request")
    new_output = request_state_cls.__dict__.get("_new_completion_output")
    if not isinstance(from_new, classmethod) or not callable(new_output):
        _logger.warning(
            "moe-orchestrator routed-experts plugin: %s has no from_new_request classmethod or "
            "_new_completion_output (vLLM version not supported); routed experts stay as vLLM "
            "sends them",
            request_state_cls,
        )
        return False
    server_default = default if default is not None else _default_mode()
    original_from_new = from_new.__func__

    @functools.wraps(original_from_new)
    def from_new_request(cls: type, *args: _Any, **kwargs: _Any) -> _Any:
        state = original_from_new(cls, *args, **kwargs)
        request = kwargs["request"] if "request" in kwargs else args[1]
        params = getattr(request, "sampling_params", None)
        extra = getattr(params, "extra_args", None) if params is not None else None
        setattr(state, _STATE_ATTR, mode_of(extra, server_default))
        return state

    @functools.wraps(new_output)
    def _new_completion_output(self: _Any, *args: _Any, **kwargs: _Any) -> _Any:
        mode = getattr(self, _STATE_ATTR, server_default)
        if mode == "none":
            # nothing to join: the chunks are dropped before vLLM concatenates them
            self.routed_experts_chunks = []
        output = new_output(self, *args, **kwargs)
        ids = getattr(output, "routed_experts", None) if mode != "ids" else None
        if ids is not None:
            prompt_rows = getattr(self, "prompt_len", None)  # RequestState.prompt_len
            if mode == "phase_counts" and isinstance(prompt_rows, int):
                output.routed_experts = phase_expert_counts(np.asarray(ids), prompt_rows)
            else:  # counts (or phase_counts of an unknown prompt length: combined)
                output.routed_experts = compact_expert_counts(np.asarray(ids))
        return output

    request_state_cls.from_new_request = classmethod(from_new_request)  # type: ignore[attr-defined]  # monkey-patch of vLLM's class
    request_state_cls._new_completion_output = _new_completion_output  # type: ignore[attr-defined]  # monkey-patch of vLLM's class
    setattr(request_state_cls, _PATCHED_MARK, True)
    return True


_SCHED_MARK = "_orch_routed_experts_scheduler_patched"


def patch_scheduler(scheduler_module: _Any, default: str | None = None) -> bool:
    """Drop the routing rows of ``none`` requests in the engine core (see the module docstring).

    Wraps ``scheduler_module.Scheduler.update_from_output`` (it remembers, for the duration of
    the call, the scheduler whose outputs are being built) and replaces the module's
    ``EngineCoreOutput`` name with a factory that builds the same struct but with
    ``routed_experts=None`` when the request (``scheduler.requests[request_id]``) asked for
    ``none`` in its ``sampling_params.extra_args`` (or names no mode and the server default
    is ``none``). Outputs of every other request, and outputs without routing, are built
    unchanged; so is the last output of a request that finishes in this step, which vLLM
    0.24.0 has already removed from ``scheduler.requests`` (its mode is unknown there; the
    API-side wrapper of :func:`patch_request_state` drops it for a ``none`` request). Any
    error in the lookup builds the output unchanged.

    Args:
        scheduler_module: ``vllm.v1.core.sched.scheduler`` (tests pass a stand-in module with
            ``Scheduler`` and ``EngineCoreOutput``).
        default: The mode of requests that name none; :data:`ENV_DEFAULT` (else ``ids``) when
            None.

    Returns:
        True when patched now or before; False (with a warning) when the module lacks
        ``Scheduler.update_from_output`` or ``EngineCoreOutput``, in which case nothing is
        changed.
    """
    scheduler_cls: _Any = getattr(scheduler_module, "Scheduler", None)
    output_cls = getattr(scheduler_module, "EngineCoreOutput", None)
    if scheduler_cls is not None and getattr(scheduler_cls, _SCHED_MARK, False):
        return True
    update = getattr(scheduler_cls, "update_from_output", None) if scheduler_cls else None
    if not callable(update) or not callable(output_cls):
        _logger.warning(
            "moe-orchestrator routed-experts plugin: %s has no Scheduler.update_from_output or "
            "EngineCoreOutput (vLLM version not supported); 'none' requests still carry their "
            "routing from the engine core to the API process",
            getattr(scheduler_module, "__name__", scheduler_module),
        )
        return False
    server_default = default if default is not None else _default_mode()
    active: list[_Any] = []  # the scheduler inside update_from_output (one engine core thread)

    @functools.wraps(update)
    def update_from_output(self: _Any, *args: _Any, **kwargs: _Any) -> _Any:
        active.append(self)
        try:
            return update(self, *args, **kwargs)
        finally:
            active.pop()

    def engine_core_output(*args: _Any, **kwargs: _Any) -> _Any:
        if kwargs.get("routed_experts") is not None and active:
            try:
                request = active[-1].requests.get(kwargs["request_id"])
                # A request that finishes in this step is already freed (vLLM 0.24.0 deletes it
                # from ``requests`` before building its last output): its mode is unknown here,
                # so its rows go on as vLLM sends them (the API-side wrapper drops them for a
                # ``none`` request). Reading it as the server default lost the last step of
                # every counts call where the default is ``none`` (gpu_2026-12-05b.md).
                params = getattr(request, "sampling_params", None)
                extra = getattr(params, "extra_args", None) if params is not None else None
                if request is not None and mode_of(extra, server_default) == "none":
                    kwargs["routed_experts"] = None
            except Exception:  # never fail the engine: send the routing as vLLM would
                pass
        return output_cls(*args, **kwargs)

    engine_core_output.__wrapped__ = output_cls  # type: ignore[attr-defined]  # as functools.wraps sets it
    scheduler_cls.update_from_output = update_from_output
    scheduler_module.EngineCoreOutput = engine_core_output
    setattr(scheduler_cls, _SCHED_MARK, True)
    return True


def register() -> None:
    """The ``vllm.general_plugins`` entry point: patch vLLM's output processor (see the module
    docstring). Safe to call more than once and in every vLLM process."""
    try:
        from vllm.v1.engine.output_processor import RequestState
    except ImportError as exc:  # another vLLM layout: leave the server as it is
        _logger.warning("moe-orchestrator routed-experts plugin not applied: %s", exc)
        return
    if patch_request_state(RequestState):
        _logger.info(
            "moe-orchestrator routed-experts plugin active (default mode %r; per request: "
            'vllm_xargs {"%s": "ids"|"counts"|"phase_counts"|"none"})',
            _default_mode(),
            XARG,
        )
    # The scheduler lives in the engine-core process only: patch its module when the engine
    # core resolves its scheduler class (SchedulerConfig.get_scheduler_cls, called in
    # EngineCore.__init__), so the API process never imports the scheduler module for this.
    try:
        from vllm.config.scheduler import SchedulerConfig
    except ImportError as exc:
        _logger.warning("moe-orchestrator plugin: engine-side 'none' not applied: %s", exc)
        return
    patch_scheduler_config(SchedulerConfig)


_CONFIG_MARK = "_orch_routed_experts_config_patched"


def patch_scheduler_config(config_cls: type) -> bool:
    """Wrap ``config_cls.get_scheduler_cls`` so that the module of the scheduler class it
    returns (``Scheduler`` or a subclass such as ``AsyncScheduler``, whose base module defines
    ``update_from_output`` and builds the outputs) is patched by :func:`patch_scheduler` the
    first time the engine core asks for it. Returns False (nothing changed) when the class has
    no such method."""
    if getattr(config_cls, _CONFIG_MARK, False):
        return True
    original = getattr(config_cls, "get_scheduler_cls", None)
    if not callable(original):
        _logger.warning("moe-orchestrator plugin: %s has no get_scheduler_cls", config_cls)
        return False

    @functools.wraps(original)
    def get_scheduler_cls(self: _Any, *args: _Any, **kwargs: _Any) -> _Any:
        cls = original(self, *args, **kwargs)
        try:
            for klass in getattr(cls, "__mro__", (cls,)):
                module = sys.modules.get(getattr(klass, "__module__", ""))
                if module is not None and getattr(module, "Scheduler", None) is klass:
                    if patch_scheduler(module):
                        _logger.info(
                            "moe-orchestrator routed-experts plugin: 'none' requests carry no "
                            "routing from the engine core (%s)",
                            module.__name__,
                        )
                    break
        except Exception as exc:  # never fail the engine's start for this
            _logger.warning("moe-orchestrator plugin: scheduler not patched: %s", exc)
        return cls

    config_cls.get_scheduler_cls = get_scheduler_cls  # type: ignore[attr-defined]  # monkey-patch of vLLM's class
    setattr(config_cls, _CONFIG_MARK, True)
    return True


#: Distribution name of the metadata :func:`write_dist_info` writes.
DIST_NAME = "moe_orchestrator_vllm_plugin"


def write_dist_info(target: str | os.PathLike[str], version: str = "0.1.0") -> str:
    """Write ``<target>/moe_orchestrator_vllm_plugin-<version>.dist-info`` declaring the entry
    point, so that vLLM finds the plugin where the project is not pip-installed (``target``
    must be on ``PYTHONPATH``, and the repository root too, for ``serving`` to import).

    Returns:
        The ``.dist-info`` folder written.

    Raises:
        OSError: ``target`` cannot be written.
    """
    from pathlib import Path

    folder = Path(target) / f"{DIST_NAME}-{version}.dist-info"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "METADATA").write_text(
        f"Metadata-Version: 2.1\nName: {DIST_NAME}\nVersion: {version}\n", encoding="utf-8"
    )
    (folder / "entry_points.txt").write_text(
        "[vllm.general_plugins]\nmoe_orchestrator_routing = serving.vllm_plugin:register\n",
        encoding="utf-8",
    )
    (folder / "RECORD").write_text("", encoding="utf-8")
    return str(folder)
