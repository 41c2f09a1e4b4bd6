"""``decode`` phase: :mod:`benchmarks.gpu_decode` on the device's CPU, on synthetic 1k-token
calls and on the bodies the ``agree`` phase recorded."""

from __future__ import annotations

import gzip
import json
from argparse import Namespace

from benchmarks.gpu.common import Workspace

Urls = dict[str, str | None]


def run(ws: Workspace, args: Namespace, urls: Urls) -> None:
    """Time decode + aggregate + telemetry write, ``args.repeat`` calls per step."""
    from benchmarks.gpu_decode import run as time_decode  # imports the telemetry store

    recorded = None
    if ws.agree_file.is_file():
        with gzip.open(ws.agree_file, "rt", encoding="utf-8") as handle:
            recorded = [json.loads(line)["body"] for line in handle]
        recorded = [b for b in recorded if b["choices"][0].get("routed_experts")] or None
    ws.save_results({"decode_write": time_decode(recorded, repeat=args.repeat)})
