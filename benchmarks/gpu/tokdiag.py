"""Issue 52: which calls' routed experts cover fewer tokens than ``prompt + completion - 1``.

On 2026-12-05 (DeepSeek-V2-Lite shape, H100, vLLM 0.24.0) every ``counts`` record of a
``/v1/completions`` call with ``ignore_eos`` and ``max_tokens`` 32 covered ``P + C - 2`` tokens,
where ``shared/FACTS.md`` says ``P + C - 1`` (every token but the last sampled one is routed).
:func:`diagnose` isolates it against a running server started with
``--enable-return-routed-experts`` and the project's plugin, by crossing:

* the endpoint: ``/v1/completions`` with a token-id prompt, with a text prompt, and
  ``/v1/chat/completions`` (the synthetic tokenizer's chat template,
  :data:`benchmarks.gpu.families.CHAT_TEMPLATE`, joins the messages' text as it is);
* how the call ends: ``length`` (``ignore_eos``, ``max_tokens`` 1, 2, 8 or 32) or ``stop`` on the
  end-of-sequence token (forced by ``logit_bias`` once ``min_tokens`` have been written);
* the mode: ``ids`` (vLLM's own ``(tokens, layers, top_k)`` array) or ``counts`` (the plugin's
  ``(layers, E)`` sums);
* one call at a time, or 64 at once (batched, as in the measured loads).

Each call is recorded with ``P`` and ``C`` from ``usage``, the returned token ids' lengths
(``return_token_ids``), the finish reason, the routed tokens (ids: rows; counts: every MoE
row's sum / top-k, when all agree) and ``deficit = P + C - routed tokens`` (1 as documented).
:func:`align` then says WHICH token the rows leave out, by matching one call's rows against
the prefill of its own prompt and output (2026-12-06). Only the standard library and numpy;
nothing here raises past :func:`diagnose`.
"""

from __future__ import annotations

import base64
import io
import json
import urllib.error
import urllib.request
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import numpy as np

#: The synthetic tokenizer's end-of-sequence id (``<t2>``, :func:`families.write_tokenizer`).
EOS_ID = 2
#: Prompt length of every case (the measured loads' length).
PROMPT_TOKENS = 128
#: Calls sent at once in the batched cases.
BATCH = 64


def post(base: str, path: str, body: dict[str, Any], timeout: float = 120.0) -> dict[str, Any]:
    """POST ``body`` as JSON to ``base + path``; the decoded answer, or ``{"error": ...}``."""
    req = urllib.request.Request(
        f"{base}{path}",
        data=json.dumps(body).encode(),
        headers={"Content-Type": "application/json"},
    )
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return {"error": f"HTTP {exc.code}: {exc.read()[:300]!r}"}
    except (OSError, ValueError) as exc:
        return {"error": f"{type(exc).__name__}: {exc}"[:300]}


def routed_tokens(value: Any, expected: dict[str, Any]) -> dict[str, Any]:
    """What a ``routed_experts`` field covers: ``shape``, ``routed`` (token rows of ``ids``; for
    ``counts`` the MoE rows' common sum / top-k, None when the rows disagree) and, for ``ids``,
    ``zero_rows`` (token rows whose MoE layers read all zeros: an unwritten slot)."""
    if not isinstance(value, str):
        return {"shape": None, "routed": None}
    array = np.load(io.BytesIO(base64.b64decode(value)), allow_pickle=False)
    moe = expected["moe_layer_index"]
    if array.ndim == 3:
        layers = array[:, moe, :] if array.shape[1] == expected["num_hidden_layers"] else array
        zero = int((layers.reshape(len(layers), -1) == 0).all(axis=1).sum())
        return {"shape": list(array.shape), "routed": int(array.shape[0]), "zero_rows": zero}
    rows = array[moe] if array.shape[0] == expected["num_hidden_layers"] else array
    sums = set(rows.sum(axis=1, dtype=np.int64).tolist())
    top_k = int(expected["top_k"])
    one = next(iter(sums)) if len(sums) == 1 else None
    routed = one // top_k if one is not None and one % top_k == 0 else None
    return {"shape": list(array.shape), "routed": routed, "row_sums": sorted(sums)[:4]}


def record(case: str, answer: dict[str, Any], expected: dict[str, Any]) -> dict[str, Any]:
    """One call's line (module docstring); ``error`` when the server refused it."""
    if "error" in answer or not answer.get("choices"):
        return {"case": case, "error": answer.get("error", "no choices")}
    choice, usage = answer["choices"][0], answer.get("usage") or {}
    p, c = int(usage.get("prompt_tokens", -1)), int(usage.get("completion_tokens", -1))
    got = routed_tokens(choice.get("routed_experts"), expected)
    out = {
        "case": case,
        "P": p,
        "C": c,
        "n_token_ids": len(choice.get("token_ids") or []),
        "n_prompt_token_ids": len(answer.get("prompt_token_ids") or []),
        "finish": choice.get("finish_reason"),
        **got,
    }
    out["deficit"] = None if got["routed"] is None else p + c - got["routed"]
    return out


def words(ids: list[int]) -> str:
    """The text the word-level tokenizer encodes back to exactly ``ids``."""
    return " ".join(f"<t{i}>" for i in ids)


def body_for(case: dict[str, Any], ids: list[int]) -> tuple[str, dict[str, Any]]:
    """``(path, body)`` of one call of ``case`` (keys ``endpoint``, ``mode``, ``max_tokens``,
    ``eos``) with the prompt ``ids``."""
    body: dict[str, Any] = {
        "model": "ernie",
        "max_tokens": case["max_tokens"],
        "temperature": 0.0,
        "return_token_ids": True,
        "vllm_xargs": {"routed_experts": case["mode"]},
    }
    if case["eos"]:  # write min_tokens, then the end-of-sequence token
        body.update(ignore_eos=False, min_tokens=8, logit_bias={str(EOS_ID): 100.0})
    else:
        body["ignore_eos"] = True
    if case["endpoint"] == "chat":
        body["messages"] = [{"role": "user", "content": words(ids)}]
        return "/chat/completions", body
    body["prompt"] = ids if case["endpoint"] == "completions" else words(ids)
    return "/completions", body


def cases() -> list[dict[str, Any]]:
    """The sequential cases (module docstring), two calls each."""
    out = []
    for endpoint in ("completions", "chat"):
        for m in (1, 2, 8, 32) if endpoint == "completions" else (1, 32):
            out.append({"endpoint": endpoint, "mode": "ids", "max_tokens": m, "eos": False})
        out.append({"endpoint": endpoint, "mode": "counts", "max_tokens": 32, "eos": False})
        out.append({"endpoint": endpoint, "mode": "ids", "max_tokens": 32, "eos": True})
    out.append({"endpoint": "completions_text", "mode": "ids", "max_tokens": 32, "eos": False})
    return out


def name_of(case: dict[str, Any], batch: int = 1) -> str:
    """A case's label, e.g. ``completions/ids/length/m32/c1``."""
    finish = "eos" if case["eos"] else "length"
    return f"{case['endpoint']}/{case['mode']}/{finish}/m{case['max_tokens']}/c{batch}"


def ids_rows(value: Any, expected: dict[str, Any]) -> np.ndarray | None:
    """The ``(tokens, MoE layers, top_k)`` expert ids of an ``ids``-mode field, or None."""
    if not isinstance(value, str):
        return None
    array = np.load(io.BytesIO(base64.b64decode(value)), allow_pickle=False)
    if array.ndim != 3:
        return None
    full = array.shape[1] == expected["num_hidden_layers"]
    return array[:, expected["moe_layer_index"], :] if full else array


def set_agreement(a: np.ndarray, b: np.ndarray, shift: int) -> float | None:
    """Mean share of the top-k expert set that row ``i`` of ``a`` shares with row ``i + shift``
    of ``b``, over every MoE layer and every row both cover; None when none overlap.

    Args:
        a, b: ``(tokens, layers, top_k)`` expert ids of the same layers.
        shift: Offset of ``b``'s rows against ``a``'s.
    """
    lo, hi = max(0, -shift), min(len(a), len(b) - shift)
    if hi <= lo:
        return None
    x, y = np.sort(a[lo:hi], axis=2), np.sort(b[lo + shift : hi + shift], axis=2)
    shared = (x[..., :, None] == y[..., None, :]).any(axis=3).sum(axis=2)
    return round(float(shared.mean()) / a.shape[2], 4)


def align(base: str, expected: dict[str, Any], vocab: int, seed: int = 53) -> dict[str, Any]:
    """Which token a call's rows leave out: call A (prompt ``X``, ``max_tokens`` 8, ``ids``)
    returns rows for ``P + C - 1`` tokens and its completion ``g1..g8``; call B prefills
    ``X + g1..g7`` (``max_tokens`` 1, another ``cache_salt``, so nothing of A's prefix cache is
    reused), whose prompt rows are the routing of exactly those ``P + 7`` tokens. The
    agreement of A's rows with B's at shift 0 (rows = ``x1..xP, g1..g7``: the last sampled
    token is the one missing) against shift +1 (A starts at ``x2``: the first prompt token
    missing) and -1 says which; ``prompt``/``decode`` split shift 0 at row ``P``."""
    rng = np.random.default_rng(seed)
    x = rng.integers(3, vocab, size=PROMPT_TOKENS).tolist()
    case = {"endpoint": "completions", "mode": "ids", "max_tokens": 8, "eos": False}
    path, body = body_for(case, x)
    a = post(base, path, {**body, "cache_salt": "align-a"})
    if "error" in a or not a.get("choices"):
        return {"error": f"A: {a.get('error', 'no choices')}"}
    gen = list(a["choices"][0].get("token_ids") or [])
    path, body = body_for({**case, "max_tokens": 1}, x + gen[:-1])
    b = post(base, path, {**body, "cache_salt": "align-b"})
    if "error" in b or not b.get("choices"):
        return {"error": f"B: {b.get('error', 'no choices')}"}
    ra = ids_rows(a["choices"][0].get("routed_experts"), expected)
    rb = ids_rows(b["choices"][0].get("routed_experts"), expected)
    if ra is None or rb is None or len(gen) < 2:
        return {"error": f"no ids rows (A {ra is not None}, B {rb is not None}, C {len(gen)})"}
    p = len(x)
    return {
        "P": p,
        "C": len(gen),
        "rows_a": len(ra),
        "rows_b": len(rb),
        "shift": {str(s): set_agreement(ra, rb, s) for s in (-1, 0, 1)},
        "prompt": set_agreement(ra[:p], rb[:p], 0),
        "decode": set_agreement(ra[p:], rb[p:], 0),
    }


def diagnose(base: str, expected: dict[str, Any], vocab: int, seed: int = 52) -> dict[str, Any]:
    """Run every case against ``base`` (``http://host:port/v1``); ``calls`` (each call's line)
    and ``summary`` (per case: deficits and finish reasons seen, and errors)."""
    rng = np.random.default_rng(seed)
    prompt = lambda: rng.integers(3, vocab, size=PROMPT_TOKENS).tolist()  # noqa: E731
    calls = []
    for case in cases():
        for _ in range(2):
            path, body = body_for(case, prompt())
            calls.append(record(name_of(case), post(base, path, body), expected))
    for endpoint in ("completions", "chat"):
        case = {"endpoint": endpoint, "mode": "ids", "max_tokens": 32, "eos": False}
        bodies = [body_for(case, prompt()) for _ in range(BATCH)]
        with ThreadPoolExecutor(BATCH) as pool:
            answers = list(pool.map(lambda pb: post(base, *pb), bodies))
        calls += [record(name_of(case, BATCH), a, expected) for a in answers]
    summary: dict[str, Any] = {}
    for line in calls:
        s = summary.setdefault(line["case"], {"deficits": Counter(), "finish": Counter()})
        if "error" in line:
            s.setdefault("errors", []).append(line["error"])
            continue
        s["deficits"][str(line["deficit"])] += 1
        s["finish"][str(line["finish"])] += 1
    return {
        "calls": calls,
        "align": align(base, expected, vocab),
        "summary": {
            k: {**v, "deficits": dict(v["deficits"]), "finish": dict(v["finish"])}
            for k, v in summary.items()
        },
    }
