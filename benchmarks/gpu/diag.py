"""``diag`` phase: which structured-output request variants each server accepts (vLLM 0.24.0
answered an empty HTTP 500 to the triage json_schema), with the in-process compile of the
schema and the server log lines after each failed request."""

from __future__ import annotations

import asyncio
import json
import traceback
from argparse import Namespace
from collections.abc import Callable
from pathlib import Path
from typing import Any

from benchmarks.gpu.common import Workspace, log, messages_for
from benchmarks.gpu.hold import wait_for

Urls = dict[str, str | None]
#: The variant the project's client sends; ``orch`` reads its status.
STRICT_VARIANT = "json_schema_strict (the project's client)"


def structured_output_inprocess(ws: Workspace) -> dict[str, Any]:
    """Compile the triage schema with the backends vLLM would use, in this process, so an
    exception shows its traceback (the API server answered 500 with an empty message).

    Returns:
        Per step, ``"ok"``/a version, or the error and (``"<step> traceback"``) its traceback.
    """
    from skills.triage import TRIAGE_SCHEMA

    def xgrammar_version() -> str:
        import xgrammar as xgr

        return str(xgr.__version__)

    def xgrammar_compile() -> str:
        import xgrammar as xgr
        from transformers import AutoTokenizer

        tok = AutoTokenizer.from_pretrained(str(ws.ckpt))
        info = xgr.TokenizerInfo.from_huggingface(tok, vocab_size=len(tok))
        xgr.GrammarCompiler(info).compile_json_schema(json.dumps(TRIAGE_SCHEMA))
        return "ok"

    def vllm_validate() -> str:
        from vllm.sampling_params import SamplingParams, StructuredOutputsParams
        from vllm.v1.structured_output.backend_xgrammar import validate_xgrammar_grammar

        params = StructuredOutputsParams(json=TRIAGE_SCHEMA)
        validate_xgrammar_grammar(SamplingParams(max_tokens=8, structured_outputs=params))
        return "ok"

    def llguidance_version() -> str:
        import llguidance

        return str(getattr(llguidance, "__version__", "ok"))

    def tvm_ffi_version() -> str:
        import tvm_ffi

        return str(getattr(tvm_ffi, "__version__", "ok"))

    steps: dict[str, Callable[[], str]] = {
        "import xgrammar": xgrammar_version,
        "xgrammar compile": xgrammar_compile,
        "vllm validate_xgrammar_grammar": vllm_validate,
        "import llguidance": llguidance_version,
        "import tvm_ffi": tvm_ffi_version,
    }
    out: dict[str, Any] = {}
    for name, step in steps.items():
        try:
            out[name] = step()
        except BaseException as exc:  # a diagnostic records every failure, with its traceback
            out[name] = f"{type(exc).__name__}: {exc}"[:500]
            out[name + " traceback"] = traceback.format_exc()[-3000:]
    return out


def run(ws: Workspace, args: Namespace, urls: Urls) -> None:
    """Send each variant of :func:`variants` to each server (on, off) that is up; save the
    statuses, body heads and server log lines under ``structured_output_diag``."""
    import httpx

    result: dict[str, Any] = {"inprocess": structured_output_inprocess(ws)}
    log(f"diag in-process: { {k: v for k, v in result['inprocess'].items() if 'trace' not in k} }")
    msgs = messages_for("Where is my refund? I was charged twice.", "D0000")
    for server in ("on", "off"):
        base = urls.get(server) or wait_for(ws, server, 5)
        if base is None:
            continue
        log_path = ws.state / f"server_{server}.log"
        out: dict[str, Any] = {}

        async def go(base: str, out: dict[str, Any], log_path: Path) -> None:
            async with httpx.AsyncClient(timeout=120) as client:
                for name, extra in variants().items():
                    before = log_path.stat().st_size if log_path.is_file() else 0
                    body = {
                        "model": "ernie",
                        "messages": msgs,
                        "max_tokens": 48,
                        "temperature": 0.0,
                        "return_token_ids": True,
                        **extra,
                    }
                    resp = await client.post(f"{base}/chat/completions", json=body)
                    out[name] = {"status": resp.status_code, "body_head": resp.text[:300]}
                    await asyncio.sleep(0.5)
                    if resp.status_code != 200 and log_path.is_file():
                        with log_path.open("rb") as fh:
                            fh.seek(before)
                            tail = fh.read().decode(errors="replace").splitlines()
                        out[name]["server_log"] = [
                            line[:400] for line in tail if "qutlass" not in line
                        ][:80]

        asyncio.run(go(base, out, log_path))
        result[server] = out
        log(f"diag {server}: " + json.dumps({k: v["status"] for k, v in out.items()}))
    ws.save_results({"structured_output_diag": result})


def variants() -> dict[str, dict[str, Any]]:
    """The request variants tried, by name: the project's strict json_schema, json_object, a
    structured-outputs choice, and none."""
    from skills.triage import TRIAGE_SCHEMA

    return {
        STRICT_VARIANT: {
            "response_format": {
                "type": "json_schema",
                "json_schema": {"name": "output", "schema": TRIAGE_SCHEMA, "strict": True},
            }
        },
        "json_object": {"response_format": {"type": "json_object"}},
        "structured_outputs_choice": {"structured_outputs": {"choice": ["yes", "no"]}},
        "none": {},
    }
