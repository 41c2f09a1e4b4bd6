"""``build``: the random-weight checkpoint, with the project's builder, on the GPU."""

from __future__ import annotations

import json
import time
from typing import Any

from benchmarks.gpu.common import Workspace, device_info, log

CONFIG_KEYS = (
    "num_hidden_layers",
    "hidden_size",
    "moe_num_experts",
    "moe_k",
    "moe_num_shared_experts",
    "moe_layer_start_index",
    "vocab_size",
    "num_attention_heads",
    "num_key_value_heads",
    "dtype",
)


def build(ws: Workspace, *, shape: str, device: str) -> dict[str, Any]:
    """Build ``<state>/ckpt`` in ``shape`` (``"21b"``: ERNIE-4.5-21B-A3B; ``"tiny"``: the
    default 4-layer spec) on ``device``, and record time (s), size (bytes) and config."""
    from serving.checkpoint import CheckpointSpec, build_checkpoint, corpus_from_data_dir

    spec = CheckpointSpec.ernie_21b_a3b() if shape == "21b" else CheckpointSpec()
    t = time.monotonic()
    path = build_checkpoint(
        ws.ckpt, spec, corpus_from_data_dir(ws.data), overwrite=True, device=device
    )
    seconds = time.monotonic() - t
    manifest = json.loads((path / "orchestrator_checkpoint.json").read_text())
    size = sum(f.stat().st_size for f in path.iterdir() if f.is_file())
    config = json.loads((path / "config.json").read_text())
    log(f"built {path} in {seconds:.0f} s, {size / 1e9:.1f} GB, {manifest['parameters']:,} params")
    return ws.save_results(
        {
            "build": {
                "seconds": round(seconds, 1),
                "bytes": size,
                "parameters": manifest["parameters"],
                "device": manifest.get("device"),
                "spec": manifest["spec"],
                "config": {k: config.get(k) for k in CONFIG_KEYS},
            },
            "device_build": device_info(),
        }
    )
