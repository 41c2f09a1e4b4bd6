"""Expert-skew report at scale: millions of model-call rows of the 21B-A3B shape (27 x 64).

Usage::

    python -m benchmarks.skew_bench [--calls 1000000] [--repeat 3] [--dir /tmp] [--keep]
    python -m benchmarks.skew_bench --db /tmp/skew-10m.db --repeat 3   # a kept database
    python -m benchmarks.skew_bench --quick   # 20,000 calls, one report run, under a minute

Steps:

1. **Generate** ``--calls`` rows in a new SQLite file (schema made by ``TelemetryStore``): 28
   days of traffic over 3 workflows and 7 nodes, each node with its own expert profile;
   per-call counts are multinomial draws of ``routed_tokens * 6`` activations (tokens
   log-normal, median ~150), stored with the store's own
   :func:`~orchestrator.telemetry.encode_counts`. Planted: a hot expert (layer 5, e12), a dead
   one (layer 9, e40), a drift in the last week (content_moderation, layer 3), and 0.1%
   outlier calls. Each call is 20 routed completion tokens (``C - 1``) after its prompt, and
   its prefill counts are stored too (``prefill_counts``, as the plugin's ``phase_counts``
   mode gives them), with a planted expert hot in decode only (layer 7, e30). The newest
   :data:`FRESH` calls (those the outlier scoring reads) are fresh draws; older calls reuse
   one of :data:`POOL` draws of their node and period, as they reach the report only through
   the rollups. Rows go in with one plain ``executemany`` per chunk
   (values in the form SQLAlchemy's types store them), journal in memory and no fsync on
   the generator's own connection; bounded memory.
2. **Rollups**: summed per chunk with the store's own
   :meth:`~orchestrator.telemetry.RollupDelta.of_calls` and written as
   :func:`~orchestrator.telemetry.rollup_rows.new_rollup` builds them, in the chunk's
   transaction, so they are what ``record_call`` would have written
   (``tests/unit/test_skew_bench.py`` checks them against ``rebuild_rollups``).
3. **Report** ``--repeat`` times (``--runs`` is the older spelling), each in a fresh
   process: ``build_report`` (last 7 days against the 7 before; outliers over the newest
   50,000 calls of the window) + HTML + JSON + the terminal summary; wall time and CPU time
   in seconds, peak RSS in MiB (``VmHWM``) of that process, the load average at its start.
   Then once with ``--window all``.
4. **Write path**: time of ``record_call`` (row + rollup update) for 300 calls of this shape
   (30 with ``--quick``).

Results go to ``benchmarks/results/skew_bench.{json,md}`` (``--out``; a ``--quick`` run writes
under ``/tmp/benchmarks-quick``); the generated database is deleted unless ``--keep``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import shutil
import subprocess
import sys
import time
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import create_engine, event, insert

from benchmarks.harness import (
    BenchParser,
    host_info,
    median,
    percentile,
    record_routed_call,
    write_results,
)
from orchestrator.telemetry import (
    ModelCallRecord,
    RollupDelta,
    TelemetryStore,
    encode_counts,
)
from orchestrator.telemetry.rollup_rows import new_rollup, rollup_table
from orchestrator.telemetry.rollups import RollupKey
from orchestrator.telemetry.schema import ExpertPhaseRollupRecord, ExpertRollupRecord

LAYERS = tuple(range(1, 28))
EXPERTS = 64
TOP_K = 6
DAYS = 28
NODES = (
    ("customer_service", "triage_issue"),
    ("customer_service", "draft_reply"),
    ("content_moderation", "judge_post"),
    ("content_moderation", "explain"),
    ("excel_report", "read_sheet"),
    ("excel_report", "summarise"),
    ("excel_report", "write_report"),
)
START = datetime(2026, 10, 1, tzinfo=UTC)
NAME = "skew_bench"
MODULE = f"benchmarks.{NAME}"
REPO = Path(__file__).resolve().parent.parent
QUICK_CALLS = 20_000


def _profiles(rng: np.random.Generator) -> np.ndarray:
    """``(nodes, L, E)`` expert shares: a shared base, tilted per node, with planted experts."""
    base = rng.dirichlet(np.full(EXPERTS, 8.0), size=len(LAYERS))
    tilt = rng.dirichlet(np.full(EXPERTS, 8.0), size=(len(NODES), len(LAYERS)))
    shares = 0.7 * base[None] + 0.3 * tilt
    shares[:, 4, 12] += 0.12  # layer 5: expert 12 hot everywhere
    shares[:, 8, 40] = 0.0  # layer 9: expert 40 dead everywhere
    return shares / shares.sum(axis=-1, keepdims=True)


#: The newest calls drawn fresh (the outlier scoring reads at most 50,000 of them one by one).
FRESH = 50_000
#: Multinomial draws per (node, period) that the older calls reuse (they reach the report only
#: through the rollups; a fresh draw for each of 10M calls took most of an hour).
POOL = 1024


#: Routed completion tokens of every generated call (completion 21 tokens: ``C - 1``).
DECODE_TOKENS = 20


def _decode_shares(pvals: np.ndarray) -> np.ndarray:
    """The decode's expert shares: ``pvals`` with layer 7's expert 30 hot in decode only."""
    shares = pvals.copy()
    shares[..., 6, 30] += 0.3
    return shares / shares.sum(axis=-1, keepdims=True)


def _draw(rng: np.random.Generator, pvals: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(n,)`` routed tokens (log-normal, median ~150), and the ``(n, L, E)`` multinomial
    counts of the prompt's ``(tokens - DECODE_TOKENS) * TOP_K`` activations per layer from
    ``pvals`` ``(n, L, E)`` and of the decode's ``DECODE_TOKENS * TOP_K`` from
    :func:`_decode_shares`: ``(tokens, prefill, decode)``."""
    n = len(pvals)
    tokens = np.clip(rng.lognormal(np.log(150), 0.5, n), DECODE_TOKENS + 1, 4000).astype(np.int64)
    prefill = rng.multinomial(((tokens - DECODE_TOKENS) * TOP_K)[:, None], pvals)
    decode = rng.multinomial(DECODE_TOKENS * TOP_K, _decode_shares(pvals))
    return tokens, prefill, decode


class _Traffic:
    """The generated traffic's profiles and the pool of draws the older calls reuse:
    pool ``k = 2 * node + late`` (``late``: the drifted last week), and ``2 * len(NODES)`` for
    the outlier calls (experts 56-63 only)."""

    def __init__(self, rng: np.random.Generator, pool: int) -> None:
        profiles = _profiles(rng)
        drifted = profiles.copy()
        moderation = [i for i, (w, _) in enumerate(NODES) if w == "content_moderation"]
        drifted[moderation, 2, :8] *= 3.0  # last week: layer 3 moves toward experts 0-7
        drifted /= drifted.sum(axis=-1, keepdims=True)
        odd = np.zeros((len(LAYERS), EXPERTS))
        odd[:, 56:] = 1 / 8
        self.pvals = np.stack([*np.stack([profiles, drifted], axis=1).reshape(-1, *odd.shape), odd])
        self.pool = pool
        drawn = [_draw(rng, np.broadcast_to(p, (pool, *p.shape))) for p in self.pvals]
        self.tokens = np.stack([t for t, _, _ in drawn])
        self.prefill = np.stack([p for _, p, _ in drawn]).astype(np.uint16)
        self.counts = self.prefill + np.stack([d for _, _, d in drawn]).astype(np.uint16)
        self.blobs = _blob_array(self.counts)
        self.prefill_blobs = _blob_array(self.prefill)

    def chunk(
        self, rng: np.random.Generator, key: np.ndarray, fresh: np.ndarray
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[bytes], list[bytes]]:
        """Tokens, ``(n, L, E)`` uint16 counts and prefill counts, and their blobs, of calls
        from pools ``key``; ``fresh`` calls are new draws, the others reuse a random draw of
        their pool."""
        pick = rng.integers(0, self.pool, len(key))
        tokens = self.tokens[key, pick]
        counts = self.counts[key, pick]
        prefill = self.prefill[key, pick]
        blobs = self.blobs[key * self.pool + pick].tolist()
        prefill_blobs = self.prefill_blobs[key * self.pool + pick].tolist()
        if fresh.any():
            t, p, d = _draw(rng, self.pvals[key[fresh]])
            tokens[fresh], counts[fresh], prefill[fresh] = t, p + d, p
            for i, whole, head in zip(np.flatnonzero(fresh).tolist(), p + d, p, strict=True):
                blobs[i], prefill_blobs[i] = encode_counts(whole), encode_counts(head)
        return tokens, counts, prefill, blobs, prefill_blobs


def _blob_array(counts: np.ndarray) -> np.ndarray:
    """The count blobs of ``(pools, pool, L, E)`` counts, as a 1-d object array of bytes."""
    blobs = [encode_counts(c) for pool in counts for c in pool]
    out = np.empty(len(blobs), dtype=object)
    out[:] = blobs
    return out


def _bulk_pragmas(dbapi_connection: Any, _record: Any) -> None:
    """The generator's own connection: no fsync and no journal on disk (a failed run is
    deleted anyway). The report opens the file with the store's own pragmas (WAL)."""
    cursor = dbapi_connection.cursor()
    for pragma in ("journal_mode=MEMORY", "synchronous=OFF", "cache_size=-262144"):
        cursor.execute(f"PRAGMA {pragma}")
    cursor.close()


def _rollup_key(hour: int, node: int) -> RollupKey:
    """The rollup group of the generated calls of ``node`` in hour ``hour`` since START."""
    workflow, name = NODES[node]
    return RollupKey(
        START + timedelta(hours=hour),
        workflow,
        name,
        "replay",
        "ernie-bench",
        LAYERS,
        EXPERTS,
        TOP_K,
    )


def _sum_rollups(
    pending: dict[RollupKey, RollupDelta],
    hour: np.ndarray,
    node: np.ndarray,
    calls: tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray],
) -> None:
    """Add a chunk's calls to ``pending`` by rollup group, and their prefill and decode to
    the phase groups, with the store's own :meth:`RollupDelta.of_calls` (``calls``: tokens,
    counts, prefill counts, mean and per-layer confidence; the phases carry no confidence)."""
    tokens, counts, prefill, mean_conf, layer_conf = calls
    no_conf = (np.full(len(tokens), np.nan), np.full(layer_conf.shape, np.nan))
    head = prefill.astype(np.int64)
    parts = {  # phase: counts, routed tokens, mean and per-layer confidence
        "": (counts, tokens, mean_conf, layer_conf),
        "prefill": (head, tokens - DECODE_TOKENS, *no_conf),
        "decode": (counts - head, np.full_like(tokens, DECODE_TOKENS), *no_conf),
    }
    group = hour * len(NODES) + node
    for g in np.unique(group).tolist():
        sel = group == g
        key = _rollup_key(*divmod(g, len(NODES)))
        for phase, arrays in parts.items():
            part, routed, mean, layers = (x[sel] for x in arrays)
            delta = RollupDelta.of_calls(part, routed, TOP_K, mean, layers)
            k = replace(key, phase=phase)
            if k in pending:
                pending[k].merge(delta)
            else:
                pending[k] = delta


def _flush_rollups(
    conn: Any, pending: dict[RollupKey, RollupDelta], before: datetime | None
) -> None:
    """Insert the pending rollup rows of hours before ``before`` (all when None), as the
    store's :func:`~orchestrator.telemetry.rollup_rows.new_rollup` builds them."""
    done = [k for k in pending if before is None or k.bucket_start < before]
    for table in (ExpertRollupRecord, ExpertPhaseRollupRecord):
        columns = [c.key for c in table.__table__.columns if c.key != "id"]
        rows = []
        for key in [k for k in done if rollup_table(k.phase) is table]:
            record = new_rollup(key, pending.pop(key))
            rows.append({c: getattr(record, c) for c in columns})
        if rows:
            conn.execute(insert(table), rows)


def generate(
    path: Path,
    calls: int,
    seed: int = 0,
    chunk: int = 20_000,
    *,
    fresh: int = FRESH,
    pool: int = POOL,
) -> dict[str, float]:
    """Write ``calls`` model-call rows, one request row per two calls and their expert rollups
    to a new SQLite file ``path``; the newest ``fresh`` calls are fresh draws, the others
    reuse one of ``pool`` draws of their (node, period). Returns the seconds taken."""
    from rich.progress import track

    TelemetryStore(f"sqlite:///{path}").close()  # the schema at the head revision
    engine = create_engine(f"sqlite:///{path}")
    event.listen(engine, "connect", _bulk_pragmas)
    rng = np.random.default_rng(seed)
    started = time.perf_counter()
    traffic = _Traffic(rng, pool)
    span = DAYS * 86400
    offsets = np.sort(rng.uniform(0, span, calls))
    pending: dict[RollupKey, RollupDelta] = {}
    for lo in track(range(0, calls, chunk), description="generating", transient=True):
        seconds = offsets[lo : lo + chunk]
        n = len(seconds)
        node = rng.integers(0, len(NODES), n)
        late = seconds >= span - 7 * 86400
        pool_of = np.where(rng.random(n) < 0.001, 2 * len(NODES), 2 * node + late)
        fresh_calls = np.arange(lo, lo + n) >= calls - fresh
        tokens, counts, prefill, blobs, prefill_blobs = traffic.chunk(rng, pool_of, fresh_calls)
        conf = np.clip(rng.normal(0.45, 0.08, (n, len(LAYERS))), 0.05, 1).astype("<f4")
        mean_conf = conf.mean(axis=1).astype(np.float64)
        hour = (seconds // 3600).astype(np.int64)
        rolled = (tokens, counts, prefill, mean_conf, conf.astype(np.float64))
        _sum_rollups(pending, hour, node, rolled)
        with engine.begin() as conn:  # a transaction each: calls and their finished hours
            _insert_calls(conn, lo, seconds, node, tokens, (blobs, prefill_blobs), conf)
            _flush_rollups(conn, pending, START + timedelta(hours=int(hour[-1])))
    with engine.begin() as conn:
        _flush_rollups(conn, pending, None)
    engine.dispose()
    return {"generate_s": time.perf_counter() - started}


#: The model-call columns the generator fills (the others keep their defaults).
CALL_COLUMNS = (
    "created_at, request_id, route, route_confidence, classifier_signals, workflow, node, "
    "model, prompt_tokens, completion_tokens, latency_ms, finish_reason, "
    "expert_routing_source, moe_layers, num_experts, top_k, routed_tokens, expert_counts, "
    "layer_confidence, mean_router_confidence, prefill_counts"
)
REQUEST_COLUMNS = "id, received_at, text, channel, route, route_confidence, "
REQUEST_COLUMNS += "classifier_signals, workflow, status"


def _stored(column: Any, value: Any, dialect: Any) -> Any:
    """``value`` as SQLAlchemy stores it in ``column`` (its type's bind processor)."""
    process = column.type.dialect_impl(dialect).bind_processor(dialect)
    return value if process is None else process(value)


def _insert_calls(
    conn: Any,
    lo: int,
    seconds: np.ndarray,
    node: np.ndarray,
    tokens: np.ndarray,
    blobs: tuple[list[bytes], list[bytes]],
    conf: np.ndarray,
) -> None:
    """Insert a chunk's request rows (one per two calls) and model-call rows, ``lo`` being
    the index of its first call: a plain executemany with each value in the form
    SQLAlchemy's own types store it (times as text, JSON as text; checked on the chunk's
    first row), which is ten times quicker than ``insert()`` with a dict per row."""
    c, dialect = ModelCallRecord.__table__.c, conn.dialect
    micros = np.datetime64(START.replace(tzinfo=None), "us") + np.round(seconds * 1e6).astype(
        "timedelta64[us]"
    )
    when = np.char.replace(np.datetime_as_string(micros, unit="us"), "T", " ").tolist()
    first = START + timedelta(microseconds=int(np.round(seconds[0] * 1e6)))
    if when[0] != _stored(c.created_at, first, dialect):
        raise AssertionError(f"{when[0]!r} is not how SQLAlchemy stores {first!r}")
    layers, signals = _stored(c.moe_layers, list(LAYERS), dialect), "[]"
    request_ids = [f"bench-{i // 2:08d}" for i in range(lo, lo + len(when))]
    workflows = [NODES[k][0] for k in node.tolist()]
    names = [NODES[k][1] for k in node.tolist()]
    start = lo % 2  # a request row with its first call (an odd call's is in the chunk before)
    conn.exec_driver_sql(
        f"INSERT INTO requests ({REQUEST_COLUMNS}) VALUES ({', '.join('?' * 9)})",
        [
            (rid, w, f"benchmark request {rid}", "bench", wf, 0.9, signals, wf, "succeeded")
            for rid, w, wf in zip(
                request_ids[start::2], when[start::2], workflows[start::2], strict=True
            )
        ],
    )
    confidence = conf.tobytes()
    size = conf.shape[1] * 4
    conn.exec_driver_sql(
        f"INSERT INTO model_calls ({CALL_COLUMNS}) VALUES ({', '.join('?' * 21)})",
        [
            (
                w,
                rid,
                wf,
                0.9,
                signals,
                wf,
                nd,
                "ernie-bench",
                t - DECODE_TOKENS,
                DECODE_TOKENS + 1,
                100.0,
                "stop",
                "replay",
                layers,
                EXPERTS,
                TOP_K,
                t,
                blob,
                confidence[i * size : (i + 1) * size],
                m,
                head,
            )
            for i, (w, rid, wf, nd, t, blob, m, head) in enumerate(
                zip(
                    when,
                    request_ids,
                    workflows,
                    names,
                    tokens.tolist(),
                    blobs[0],
                    conf.mean(axis=1).astype(np.float64).tolist(),
                    blobs[1],
                    strict=True,
                )
            )
        ],
    )


def report_once(path: Path, window: str, out: Path) -> dict[str, float]:
    """One full report in this process: build, HTML, JSON, terminal summary."""
    from rich.console import Console

    from orchestrator.analysis.skew import ReportOptions, build_report
    from orchestrator.analysis.skew.report_html import write_html
    from orchestrator.analysis.skew.report_json import write_json
    from orchestrator.analysis.skew.terminal import print_summary
    from orchestrator.telemetry import TelemetryStore

    store = TelemetryStore(f"sqlite:///{path}")
    started = time.perf_counter()
    report = build_report(store, ReportOptions(window=window))
    built = time.perf_counter()
    write_html(report, out / "skew.html")
    write_json(report, out / "skew.json")
    with open(os.devnull, "w") as sink:
        print_summary(Console(file=sink, width=160), report)
    done = time.perf_counter()
    store.close()
    return {
        "build_s": built - started,
        "outputs_s": done - built,
        "total_s": done - started,
        "peak_rss_mib": _peak_rss_mib(),
        "cpu_s": _cpu_s(),
        "load_average_1m": os.getloadavg()[0],
        "calls_in_window": report.overall.calls,
        "outlier_calls_scored": report.outliers.scored_calls,
        "outliers_flagged": report.outliers.flagged_requests,
        "hot": report.overall.hot(),
        "dead": report.overall.dead(),
        "phases": {
            p.name: {"hot": p.hot(), "dead": p.dead()}
            for p in (report.phases.profiles if report.phases else [])
        },
        "drifted": {s.name: s.drifted_layers for s in report.drift.scopes} if report.drift else {},
        "html_mib": (out / "skew.html").stat().st_size / 2**20,
    }


def _peak_rss_mib() -> float:
    """This process's peak resident memory since its ``exec`` (``VmHWM``; ``ru_maxrss`` also
    counts the parent's peak when a big parent forks the child)."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # not Linux


def _cpu_s() -> float:
    """CPU seconds (user + system) this process has used: less sensitive to other load."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _child(path: Path, window: str) -> dict[str, Any]:
    """One report in a fresh Python process (``--report-only``); its figures."""
    started = time.perf_counter()
    load = os.getloadavg()[0]
    done = subprocess.run(
        [sys.executable, "-m", MODULE, "--report-only", str(path), "--window", window],
        check=True,
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    result = json.loads(done.stdout.strip().splitlines()[-1])
    result["process_wall_s"] = time.perf_counter() - started
    result["load_average_at_start"] = load
    print(
        f"  report ({window}): {result['total_s']:.2f} s ({result['cpu_s']:.2f} CPU s), "
        f"peak RSS {result['peak_rss_mib']:.0f} MiB, load average {load:.1f}",
        flush=True,
    )
    return result


def write_path(calls: int = 300) -> dict[str, float]:
    """Median ``record_call`` time (call row + rollup update) at the 27 x 64 shape."""
    import tempfile

    from orchestrator import Request, RuleClassifier, TelemetryStore
    from serving import ExpertRoutingSource, ExpertRoutingTrace

    rng = np.random.default_rng(1)
    with tempfile.TemporaryDirectory() as folder:
        store = TelemetryStore(f"sqlite:///{folder}/w.db")
        request = Request(text="benchmark")
        classification = RuleClassifier().classify(request)
        store.start_request(request, classification, "customer_service")
        times = []
        for _ in range(calls):
            ids = np.argsort(rng.random((150, len(LAYERS), EXPERTS)), axis=-1)[..., :TOP_K]
            trace = ExpertRoutingTrace(
                source=ExpertRoutingSource.REPLAY,
                moe_layers=LAYERS,
                num_experts=EXPERTS,
                top_k=TOP_K,
                prompt_tokens=130,
                completion_tokens=21,
                expert_ids=ids.astype(np.int16),
                router_confidence=np.full((150, len(LAYERS)), 0.4, np.float32),
            )
            trace.expert_counts()
            started = time.perf_counter()
            record_routed_call(
                store, request.id, classification, trace, node="triage_issue", model="m"
            )
            times.append(time.perf_counter() - started)
        store.close()
    return {
        "record_call_p50_ms": median(times) * 1e3,
        "record_call_p90_ms": percentile(times, 90) * 1e3,
    }


def main(argv: list[str] | None = None) -> None:
    parser = BenchParser(
        MODULE,
        __doc__.splitlines()[0],
        repeat=3,
        repeat_help="Report runs over the 7d window, each in a fresh process.",
        repeat_aliases=("--runs",),
    )
    parser.add_argument("--calls", type=int, default=1_000_000)
    parser.add_argument("--dir", type=Path, default=Path("/tmp"))
    parser.add_argument("--keep", action="store_true", help="Keep the generated database.")
    parser.add_argument(
        "--db", type=Path, help="Report on this database (one kept with --keep); no generating."
    )
    parser.add_argument("--report-only", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--window", default="7d", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)

    if args.report_only is not None:  # child process: one report, JSON on stdout
        out = args.report_only.parent / f"out-{os.getpid()}"
        out.mkdir(exist_ok=True)
        print(json.dumps(report_once(args.report_only, args.window, out)))
        shutil.rmtree(out)
        return
    calls = min(args.calls, QUICK_CALLS) if args.quick else args.calls
    runs_wanted = 1 if args.quick else args.repeat
    write_calls = 30 if args.quick else 300

    path = args.db or args.dir / f"skew-bench-{os.getpid()}.db"
    load_at_start = os.getloadavg()[0]
    try:
        gen: dict[str, Any] = {}
        if args.db is None:
            need = calls * 4700 * 1.1  # 4.5 KiB a call (one 4 KiB page a row, indexes), margin
            free = shutil.disk_usage(args.dir).free
            if free < need:
                sys.exit(f"{args.dir} has {free / 2**30:.1f} GiB free; {need / 2**30:.1f} needed")
            print(f"generating {calls:,} calls in {path} ...", flush=True)
            gen = generate(path, calls)
            print(f"generated in {gen['generate_s']:.0f} s", flush=True)
        else:
            calls = TelemetryStore(f"sqlite:///{path}").rollup_status().calls
        size = sum(p.stat().st_size for p in path.parent.glob(path.name + "*"))
        runs = [_child(path, "7d") for _ in range(runs_wanted)]
        whole = _child(path, "all")
        writes = write_path(write_calls)
    finally:
        if not args.keep and args.db is None:
            for p in path.parent.glob(path.name + "*"):
                p.unlink()
    host = host_info()
    summary = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{host['machine']}, {host['cpus']} CPU cores, "
        f"{host['memory_gib']:.0f} GiB, load average at start {load_at_start:.1f}",
        "python": platform.python_version(),
        "host": host,
        "calls": calls,
        "shape": {"moe_layers": len(LAYERS), "experts": EXPERTS, "top_k": TOP_K},
        "database_gib": size / 2**30,
        **gen,
        "report_7d_runs": runs,
        "report_7d_median_s": median(r["total_s"] for r in runs),
        "report_7d_median_build_s": median(r["build_s"] for r in runs),
        "report_7d_median_cpu_s": median(r["cpu_s"] for r in runs),
        "report_7d_max_peak_rss_mib": max(r["peak_rss_mib"] for r in runs),
        "report_all": whole,
        **writes,
    }
    text = _markdown(summary)
    write_results(args.out, NAME, summary, text, command=args.command)
    print(text)


def _markdown(s: dict[str, Any]) -> str:
    r = s["report_7d_runs"]
    lines = [
        "# Expert-skew report benchmark",
        "",
        f"{s['date']} · {s['machine']} · Python {s['python']}",
        "",
        f"{s['calls']:,} model-call rows, {s['shape']['moe_layers']} MoE layers × "
        f"{s['shape']['experts']} experts, top-{s['shape']['top_k']}, 28 days, 7 nodes; "
        f"database {s['database_gib']:.2f} GiB (counts stored as uint8 where they fit).",
        "",
        "| step | figure |",
        "|---|---|",
        "| generate rows and their rollups (bulk insert) | "
        + (f"{s['generate_s']:.0f} s |" if "generate_s" in s else "an existing database (--db) |"),
        f"| **full report, window 7d + 7d baseline** (median of {len(r)}) | "
        f"**{s['report_7d_median_s']:.2f} s** (runs: "
        + ", ".join(f"{x['total_s']:.2f}" for x in r)
        + ") |",
        f"| of which build_report | {s['report_7d_median_build_s']:.2f} s |",
        f"| CPU time of the report process (median) | {s['report_7d_median_cpu_s']:.2f} s |",
        "| load average (1 min) at each run's start | "
        + ", ".join(f"{x['load_average_at_start']:.1f}" for x in r)
        + " |",
        "| peak RSS of the report process (max of runs) | "
        f"{s['report_7d_max_peak_rss_mib']:.0f} MiB |",
        f"| calls in the 7d window / outlier calls scored | {r[0]['calls_in_window']:,} / "
        f"{r[0]['outlier_calls_scored']:,} |",
        f"| full report, window all | {s['report_all']['total_s']:.2f} s, peak RSS "
        f"{s['report_all']['peak_rss_mib']:.0f} MiB |",
        f"| record_call with rollup update, p50 / p90 | {s['record_call_p50_ms']:.1f} / "
        f"{s['record_call_p90_ms']:.1f} ms |",
        "",
        f"Found: hot {r[0]['hot']}, dead {r[0]['dead']}, drifted layers {r[0]['drifted']}, "
        f"{r[0]['outliers_flagged']} outlier requests flagged; HTML {r[0]['html_mib']:.1f} MiB.",
        f"By phase: {r[0].get('phases') or 'no split stored'}.",
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
