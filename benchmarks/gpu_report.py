"""Turn the device's ``results.json`` (``python -m benchmarks.gpu``) into the kept results.

Writes ``benchmarks/results/gpu_<date>.json`` (the device's figures, minus the per-request TTFT
samples, plus the CPU decode timing when given) and ``gpu_<date>.md`` (the summary table), both
atomically and with the command that made them (:func:`benchmarks.harness.write_results`)::

    python -m benchmarks.gpu_report RESULTS_JSON [--cpu-decode runs/decode.json] [--date 2026-11-29]
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from benchmarks.gpu.bench import summarise
from benchmarks.harness import BenchParser, write_results


def _strip(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _strip(v) for k, v in obj.items() if k not in ("ttft_values_s",)}
    if isinstance(obj, list):
        return [_strip(v) for v in obj]
    return obj


def _f(value: Any, fmt: str = "{:.1f}", none: str = "n/a") -> str:
    return none if value is None else fmt.format(value)


def markdown(res: dict[str, Any], date: str, cpu_decode: dict[str, Any] | None) -> str:
    """The summary page of one device run: the setup, then a section per phase measured."""
    lines = [
        *_setup(res, date),
        *_agreement(res.get("agreement")),
        *_capture_overhead(res),
        *_orchestration(res.get("orchestration")),
        *_decode_write(res.get("decode_write"), cpu_decode),
        *_targets(res),
        *_closing(res),
    ]
    return "\n".join(lines) + "\n"


def _setup(res: dict[str, Any], date: str) -> list[str]:
    """Device, software, model and workload."""
    dev = res.get("device_measure") or res.get("device_replay") or res.get("device_build") or {}
    lines = [
        f"# GPU results, {date}",
        "",
        f"- Device: {dev.get('gpu', 'n/a')} ({dev.get('gpu_memory_gib', '?')} GiB), "
        f"host `{dev.get('host', '?')}`",
        f"- vLLM {dev.get('vllm')}, torch {dev.get('torch')}, transformers "
        f"{dev.get('transformers')}, Python {dev.get('python')}",
    ]
    build = res.get("build") or {}
    if build:
        cfg = build.get("config", {})
        lines.append(
            f"- Model: project-built random-weight `Ernie4_5_MoeForCausalLM`, "
            f"{cfg.get('num_hidden_layers')} layers (MoE from layer "
            f"{cfg.get('moe_layer_start_index')}), hidden {cfg.get('hidden_size')}, "
            f"{cfg.get('moe_num_experts')} experts, top-{cfg.get('moe_k')}, "
            f"{cfg.get('moe_num_shared_experts')} shared, vocab {cfg.get('vocab_size')}, "
            f"{build.get('parameters', 0) / 1e9:.1f}B parameters, bf16; built on "
            f"{build.get('device')} in {build.get('seconds')} s"
        )
    lines.append(
        "- Workload: customer-service messages from `shared/data/customer_service` (5 CSVs, "
        "round-robin), a system prompt + the message; 48 output tokens (`ignore_eos`), "
        "temperature 0, non-streaming with `return_token_ids` except every 8th request, "
        "which is streamed to measure TTFT."
    )
    return lines


def _agreement(agr: dict[str, Any] | None) -> list[str]:
    """Engine capture against transformers replay, when measured."""
    lines: list[str] = []
    if agr:
        m = agr["margin"]
        lines += [
            "",
            "## Engine capture vs transformers replay (same token ids, same checkpoint)",
            "",
            f"{agr['calls']} calls, {agr['tokens_total']} tokens, {agr['token_layer_pairs']} "
            f"(token, MoE layer) pairs; replay on {agr['replay_device']} in "
            f"{agr['replay_dtype']} (gate {agr['replay_gate_dtype']}).",
            "",
            "| measure | agreement |",
            "|---|---|",
            f"| expert id per (token, layer, slot), same slot | "
            f"{100 * agr['slot_agreement_ordered']:.2f}% |",
            f"| expert id per (token, layer, slot), in the replay's top-6 | "
            f"{100 * agr['slot_agreement_order_free']:.2f}% |",
            f"| top-6 set per (token, layer) | {100 * agr['topk_set_agreement']:.2f}% |",
            f"| top-6 set, prompt rows / completion rows | "
            f"{_f(100 * agr['topk_set_agreement_prompt_rows'], '{:.2f}%')} / "
            f"{_f(100 * agr['topk_set_agreement_completion_rows'], '{:.2f}%')} |",
            f"| per-call load-share TVD, median / max | "
            f"{_f(agr['load_share_tvd_per_call']['median'], '{:.4f}')} / "
            f"{_f(agr['load_share_tvd_per_call']['max'], '{:.4f}')} |",
            "",
            "Gate margin (6th minus 7th selection score): median "
            f"{_f(m['median_disagreeing'], '{:.2e}')} "
            f"where the sets disagree, {_f(m['median_agreeing'], '{:.2e}')} where they agree; "
            f"P(margin of a disagreeing pair < margin of an agreeing pair) = "
            f"{_f(m['auc_disagreeing_lower'], '{:.3f}')}; "
            f"{_f(100 * (m['share_of_disagreements_in_lowest_10pct_margins'] or 0), '{:.1f}')}% "
            "of disagreements lie in the lowest 10% of margins. Disagreement rate by margin "
            "decile (lowest first): "
            + ", ".join(f"{100 * v:.1f}%" for v in m["disagreement_rate_by_margin_decile"])
            + ".",
            "",
            "Replay rank of the engine's experts that the replay did not choose: "
            + ", ".join(
                f"rank {k}: {v}"
                for k, v in agr["replay_rank_of_engine_experts_not_chosen_by_replay"].items()
            )
            + f". Dense layer 0 rows all zero in every payload: "
            f"{agr['engine_dense_layer_rows_all_zero']}.",
            "",
            "Per MoE layer, top-6 set agreement: "
            + ", ".join(
                f"L{p['layer']} {100 * p['topk_set_agreement']:.1f}%" for p in agr["per_layer"]
            )
            + ".",
        ]
    return lines


def _capture_overhead(res: dict[str, Any]) -> list[str]:
    """Routed experts off against on at each concurrency, when measured."""
    lines: list[str] = []
    bench = [(c, res.get(f"bench_c{c}")) for c in (8, 32, 128)]
    if any(b for _, b in bench):
        lines += [
            "",
            "## Routed experts off vs on (capture overhead)",
            "",
            "Mean of the repetitions of 1024 requests each (off and on alternate); TTFT "
            "percentiles pooled over the streamed requests of all repetitions.",
            "",
            "| concurrency | reps off/on | output tok/s off | on | overhead | TTFT p50 off / on "
            "(ms) | TTFT p99 off / on (ms) | latency p50 off / on (s) | body bytes off / on |",
            "|---|---|---|---|---|---|---|---|---|",
        ]
        for c, b in bench:
            if not b or "runs" not in b:
                lines.append(f"| {c} | not measured | | | | | | | |")
                continue
            s = b.get("summary") or _summary_partial(b["runs"])
            off, on = s.get("off", {}), s.get("on", {})

            def ms(d: dict[str, Any], k: str) -> str:
                return _f(None if d.get(k) is None else 1000 * d[k], "{:.0f}")

            lines.append(
                f"| {c} | {off.get('reps', 0)}/{on.get('reps', 0)} | "
                f"{_f(off.get('output_tok_s_mean'), '{:.0f}')} | "
                f"{_f(on.get('output_tok_s_mean'), '{:.0f}')} | "
                f"{_f(s.get('capture_overhead_pct'), '{:.1f}%')} | "
                f"{ms(off, 'ttft_p50_s')} / {ms(on, 'ttft_p50_s')} | "
                f"{ms(off, 'ttft_p99_s')} / {ms(on, 'ttft_p99_s')} | "
                f"{_f(off.get('latency_p50_s_mean'), '{:.2f}')} / "
                f"{_f(on.get('latency_p50_s_mean'), '{:.2f}')} | "
                f"{_f(off.get('body_bytes_mean'), '{:.0f}')} / "
                f"{_f(on.get('body_bytes_mean'), '{:.0f}')} |"
            )
    return lines


def _orchestration(orch: dict[str, Any] | None) -> list[str]:
    """The full path against a plain client, when measured."""
    lines: list[str] = []
    if orch and orch.get("summary"):
        s = orch["summary"]
        lines += [
            "",
            "## Orchestration overhead (routed experts on)",
            "",
            f"{orch.get('requests')} requests through classifier → customer-service workflow "
            f"(2 model calls) → `VLLMClient` + `EngineCapture` → SQLite telemetry, "
            f"{orch.get('concurrency_requests')} requests in flight, vs a plain `openai` client "
            "sending the same recorded calls with the same concurrency.",
            "",
            "| path | requests/s | output tok/s |",
            "|---|---|---|",
            f"| full | {s['full_requests_s_mean']:.2f} | {s['full_output_tok_s_mean']:.0f} |",
            f"| plain | {s['plain_requests_s_mean']:.2f} | {s['plain_output_tok_s_mean']:.0f} |",
            f"| ratio full / plain | {s['ratio_full_over_plain']:.3f} | |",
        ]
    return lines


def _decode_write(device: dict[str, Any] | None, here: dict[str, Any] | None) -> list[str]:
    """Decode, aggregate and telemetry write of a 1k-token call, on each CPU measured."""
    lines: list[str] = []
    for label, dec in (("device CPU", device), ("CPU here", here)):
        if not dec:
            continue
        syn = dec["synthetic_1k_token_call"]
        lines += [
            "",
            f"## Routing decode + aggregate + telemetry write, 1k-token call ({label}, "
            f"`{dec.get('host')}`)",
            "",
            "| step | mean ms | p50 ms | p99 ms |",
            "|---|---|---|---|",
        ]
        for key, name in (
            ("decode", "decode_routed_experts"),
            ("aggregate_expert_counts", "expert_counts"),
            ("telemetry_write_sqlite", "record_call (SQLite row, own transaction)"),
            ("decode_aggregate_write", "all three"),
            ("json_parse_of_body", "(json.loads of the 230 KB body, for scale)"),
        ):
            t = syn[key]
            lines.append(f"| {name} | {t['mean_ms']:.2f} | {t['p50_ms']:.2f} | {t['p99_ms']:.2f} |")
    return lines


def _closing(res: dict[str, Any]) -> list[str]:
    """Notes, the reading of the figures, how to reproduce, errors."""
    lines: list[str] = []
    notes = [
        (key, res[key]["note"])
        for key in ("bench_c8", "bench_c32", "bench_c128", "orchestration")
        if isinstance(res.get(key), dict) and res[key].get("note")
    ]
    if notes:
        lines += ["", "## Notes", ""] + [f"- `{k}`: {n}" for k, n in notes]
    if res.get("analysis"):
        lines += ["", "## Reading the figures", ""] + [f"- {a}" for a in res["analysis"]]
    lines += ["", "## Reproduce", "", REPRODUCE]
    if res.get("errors"):
        lines += ["", "## Errors during the run", ""] + [f"- {e[:300]}" for e in res["errors"]]
    return lines


REPRODUCE = """From the repository root, on the CPU machine: `bash ../shared/gpu/stage.sh`;
`.whl/` = the orchestrator's pure-Python dependencies missing on the device (langgraph and its
langchain-core/langsmith chain, SQLAlchemy, rapidfuzz, pydantic-settings...), `.whl1/` =
pydantic for the build step, `.gpudata/` = a copy of `shared/data/customer_service`. Device
commands (`run`, kind `nvidia-h200`, each within 30 s of the previous):

1. carry `.w1 .whl1 .gpudata`: `. .w1/install.sh; pip install --target /tmp/site1 .whl1/*.whl;
   export PYTHONPATH=.:/tmp/site1:$PYTHONPATH GPURUN_DATA=/tmp/gpurun/data; mkdir -p /tmp/gpurun
   && cp -r .gpudata /tmp/gpurun/data; python3 -m benchmarks.gpu build`
2. carry `.w2 .whl`: `. .w2/install.sh && pip install --target /tmp/site2 .whl/*.whl; export
   PYTHONPATH=.:/tmp/site2:$PYTHONPATH GPURUN_DATA=/tmp/gpurun/data; (setsid nohup python3
   -m benchmarks.gpu hold > /tmp/gpurun/hold.log 2>&1 < /dev/null &); python3
   -m benchmarks.gpu measure --phases agree,decode,b128,b32,orch --budget-s 535`
3. no carry: `. /tmp/stage/install.sh && export PYTHONPATH=.:/tmp/site2:$PYTHONPATH
   GPURUN_DATA=/tmp/gpurun/data; python3 -m benchmarks.gpu measure --phases
   agree,decode,b128,b32,orch,b8 --budget-s 370 --wait-s 30; python3 -m benchmarks.gpu replay`
4. (orchestration, second session) steps 1, then 2 with `hold --servers on --util 0.85` and
   `measure --phases diag,orch --budget-s 470`.

Then here: `python -m benchmarks.gpu_decode --recorded agree.jsonl.gz --out cpu_decode.json` and
`python -m benchmarks.gpu_report results.json --cpu-decode cpu_decode.json`."""


def _targets(res: dict[str, Any]) -> list[str]:
    rows = []
    for c in (8, 32, 128):
        s = (res.get(f"bench_c{c}") or {}).get("summary") or {}
        if s.get("capture_overhead_pct") is not None:
            ok = "met" if s["capture_overhead_pct"] <= 5 else "missed"
            if c == 128:
                ok = "not measurable (see notes)"
            rows.append(
                f"| capture overhead ≤ 5%, c={c} | {s['capture_overhead_pct']:.1f}% | {ok} |"
            )
    orch = (res.get("orchestration") or {}).get("summary") or {}
    if orch:
        r = orch["ratio_full_over_plain"]
        rows.append(
            f"| orchestration ≥ 0.95× plain | {r:.3f}× | {'met' if r >= 0.95 else 'missed'} |"
        )
    dec = (res.get("decode_write") or {}).get("synthetic_1k_token_call")
    if dec:
        ms = dec["decode_aggregate_write"]["mean_ms"]
        rows.append(
            f"| decode + write ≤ 2 ms per 1k-token call (device CPU) | {ms:.2f} ms | "
            f"{'met' if ms <= 2 else 'missed'} |"
        )
    if not rows:
        return []
    return ["", "## Targets", "", "| target | reached | |", "|---|---|---|", *rows]


def _summary_partial(runs: list[dict[str, Any]]) -> dict[str, Any]:
    return summarise(runs)


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser("benchmarks.gpu_report", __doc__.split("\n")[0], repeat=None, quick=False)
    parser.add_argument("results", type=Path)
    parser.add_argument("--cpu-decode", type=Path, default=None)
    parser.add_argument("--date", default=datetime.now(UTC).strftime("%Y-%m-%d"))
    args = parser.parse_args(argv)
    res = json.loads(args.results.read_text())
    cpu = json.loads(args.cpu_decode.read_text()) if args.cpu_decode else None
    for key in [k for k in res if k.startswith("bench_c")]:
        if res[key].get("runs") and not res[key].get("summary"):
            res[key]["summary"] = _summary_partial(res[key]["runs"])
    kept = _strip(res)
    if cpu:
        kept["decode_write_cpu_here"] = cpu
    _, md_path = write_results(
        args.out,
        f"gpu_{args.date}",
        kept,
        markdown(res, args.date, cpu),
        command=args.command,
        indent=1,
    )
    print(md_path.read_text() if md_path else "")


if __name__ == "__main__":
    main()
