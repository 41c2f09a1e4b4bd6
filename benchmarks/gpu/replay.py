"""``replay``: stop the servers, replay the ``agree`` token ids through the same checkpoint in
transformers (:class:`benchmarks.gpu_agreement.GPUReplayer`), and compare expert ids and gate
margins with the engine's (:func:`benchmarks.gpu_agreement.compare`)."""

from __future__ import annotations

import gzip
import json
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from benchmarks.gpu.common import Workspace, device_info, log

if TYPE_CHECKING:
    from serving import MoEArchitecture


def stop_servers(ws: Workspace, timeout_s: float = 90) -> None:
    """Ask ``hold`` to stop (``<state>/stop``), wait up to ``timeout_s`` seconds for it, and
    keep the last 150 lines of each server log in ``<out>``."""
    (ws.state / "stop").touch()
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        try:
            if json.loads(ws.hold_file.read_text()).get("state") == "stopped":
                break
        except (OSError, ValueError):
            break
        time.sleep(1)
    for name in ("on", "off"):
        log_path = ws.state / f"server_{name}.log"
        if log_path.is_file():
            lines = log_path.read_text(errors="replace").splitlines()
            ws.out.mkdir(parents=True, exist_ok=True)
            (ws.out / f"server_{name}_tail.log").write_text("\n".join(lines[-150:]))


def wait_for_free_gpu(share: float = 0.8, timeout_s: int = 60) -> None:
    """Wait until ``share`` of the GPU's memory is free (the servers' processes are gone)."""
    import torch

    free, total = torch.cuda.mem_get_info()
    for _ in range(timeout_s):
        if free > share * total:
            break
        time.sleep(1)
        free, total = torch.cuda.mem_get_info()
    log(f"GPU free {free / 2**30:.0f} / {total / 2**30:.0f} GiB")


def dense_rows_all_zero(
    choice: dict[str, Any], body: dict[str, Any], prompt_tokens: int, arch: MoEArchitecture
) -> bool:
    """Whether the payload's rows of the dense (non-MoE) layers are all zero.

    The payload is decoded with the public :func:`serving.decode_routed_experts` under an
    architecture that calls every layer MoE, so no layer is dropped. A payload without rows for
    every layer (MoE layers only) has no dense rows: ``True``.
    """
    from serving import ExpertRoutingDecodeError, decode_routed_experts

    every_layer = arch.model_copy(update={"moe_layers": tuple(range(arch.num_hidden_layers))})
    try:
        trace = decode_routed_experts(
            choice,
            prompt_tokens=prompt_tokens,
            completion_tokens=len(choice["token_ids"]),
            arch=every_layer,
            response=body,
        )
    except ExpertRoutingDecodeError:
        return True
    dense = [i for i in range(arch.num_hidden_layers) if i not in arch.moe_layers]
    return bool((trace.expert_ids[:, dense, :] == 0).all())


def replay(ws: Workspace, *, device: str, dtype: str) -> dict[str, Any]:
    """Replay every recorded call (on ``cuda`` only those with ``routed_experts``; elsewhere,
    a dry run, the replay is compared with itself) and save ``agreement``."""
    from benchmarks.gpu_agreement import GPUReplayer, compare
    from serving import MoEArchitecture, decode_routed_experts

    stop_servers(ws)
    if device == "cuda":
        wait_for_free_gpu()
    arch = MoEArchitecture.from_checkpoint(ws.ckpt)
    with gzip.open(ws.agree_file, "rt", encoding="utf-8") as handle:
        rows = [json.loads(line) for line in handle]
    if device == "cuda":
        rows = [r for r in rows if r["body"]["choices"][0].get("routed_experts")]
    t = time.monotonic()
    replayer = GPUReplayer(ws.ckpt, device=device, dtype=dtype)
    load_s = time.monotonic() - t
    log(f"replay model loaded in {load_s:.0f} s (gate dtype {replayer.gate_dtype})")
    engine, replays, prompts = [], [], []
    dense_zero = True
    t = time.monotonic()
    for row in rows:
        body = row["body"]
        choice = body["choices"][0]
        p_ids, c_ids = body["prompt_token_ids"], choice["token_ids"]
        tokens = list(p_ids) + list(c_ids[:-1])
        rr = replayer.replay(tokens)
        if choice.get("routed_experts"):
            dense_zero = dense_zero and dense_rows_all_zero(choice, body, len(p_ids), arch)
            trace = decode_routed_experts(
                choice,
                prompt_tokens=len(p_ids),
                completion_tokens=len(c_ids),
                arch=arch,
                response=body,
            )
            ids = trace.expert_ids
        else:  # dry run without engine capture: compare the replay with itself
            ids = rr.ids
        engine.append(ids)
        replays.append(rr)
        prompts.append(len(p_ids))
    replay_s = time.monotonic() - t
    result = compare(engine, replays, prompts, arch.moe_layers)
    result.update(
        replay_device=device,
        replay_dtype=dtype,
        replay_gate_dtype=replayer.gate_dtype,
        replay_load_s=round(load_s, 1),
        replay_s=round(replay_s, 1),
        engine_dense_layer_rows_all_zero=dense_zero,
        tokens_total=int(sum(e.shape[0] for e in engine)),
        raw_dtype=str(np.asarray(engine[0]).dtype) if engine else None,
    )
    log(
        f"agreement: set {result['topk_set_agreement']:.4f}, slot(order-free) "
        f"{result['slot_agreement_order_free']:.4f}, slot(ordered) "
        f"{result['slot_agreement_ordered']:.4f}; margins dis/agr "
        f"{result['margin']['median_disagreeing']} / {result['margin']['median_agreeing']}"
    )
    return ws.save_results({"agreement": result, "device_replay": device_info()})
