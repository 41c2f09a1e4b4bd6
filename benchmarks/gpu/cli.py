"""The command line of the GPU run: ``build``, ``hold``, ``measure --phases ...``, ``replay``
(see :mod:`benchmarks.gpu`)."""

from __future__ import annotations

import argparse
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import benchmarks.gpu
from benchmarks.gpu import agree, bench, capture19, decode, diag, orch
from benchmarks.gpu.build import build
from benchmarks.gpu.common import (
    Workspace,
    budget_left,
    default_data,
    default_out,
    default_state,
    device_info,
    log,
)
from benchmarks.gpu.hold import hold, wait_for
from benchmarks.gpu.replay import replay
from benchmarks.harness import add_common_arguments

Urls = dict[str, str | None]
Phase = Callable[[Workspace, argparse.Namespace, Urls], None]

#: Seconds a phase needs at least; one that does not fit the budget left is skipped.
PHASE_EST = {
    "agree": 45,
    "decode": 40,
    "b128": 80,
    "b32": 150,
    "orch": 150,
    "b8": 200,
    "probe": 5,
    "cap128": 60,
    "cap32": 90,
    "stream": 30,
    "agree19": 20,
}


def _modes(args: argparse.Namespace, default: list[str]) -> list[str]:
    """The capture modes of a cap* phase: ``--cap-modes`` (comma-separated) or ``default``."""
    chosen = getattr(args, "cap_modes", "") or ""
    return chosen.split(",") if chosen else default


PHASES: dict[str, Phase] = {
    "agree": agree.run,
    "diag": diag.run,
    "decode": decode.run,
    "orch": orch.run,
    "b128": lambda ws, args, urls: bench.run(ws, args, urls, 128),
    "b32": lambda ws, args, urls: bench.run(ws, args, urls, 32),
    "b8": lambda ws, args, urls: bench.run(ws, args, urls, 8),
    # issue 19
    "probe": capture19.probe,
    # 2026-12-01: compact counts and sampled capture (ids: 9.9% on 2026-11-30, not re-run)
    "cap128": lambda ws, args, urls: capture19.capture(
        ws, args, urls, 128, _modes(args, ["off", "counts", "none", "sampled"])
    ),
    # 2026-12-01b: the engine-side 'none' (plugin), 5 rotated repetitions (--cap-reps)
    "cap32": lambda ws, args, urls: capture19.capture(
        ws, args, urls, 32, _modes(args, ["off", "counts", "sampled"])
    ),
    "stream": capture19.stream,
    "agree19": capture19.agree,
}
#: ``--quick``: workload sizes of a smoke test of the plumbing.
QUICK = {"requests": 128, "agree_n": 16, "orch_n": 64, "repeat": 30}


def measure(ws: Workspace, args: argparse.Namespace) -> None:
    """Run ``args.phases`` in order within ``args.budget_s`` seconds, skipping those done
    (``phases_done`` in the results) and those that do not fit; a phase that raises is recorded
    under ``errors`` and the next one runs."""
    unknown = [p for p in args.phases.split(",") if p not in PHASES]
    if unknown:
        raise SystemExit(f"unknown phase(s) {unknown}; choose from {', '.join(PHASES)}")
    ws.out.mkdir(parents=True, exist_ok=True)
    if "device_measure" not in ws.load_results():
        ws.save_results({"device_measure": device_info()})
    urls: Urls = {"on": wait_for(ws, "on", args.wait_s), "off": None}
    finished = set(ws.load_results().get("phases_done", []))
    for phase in args.phases.split(","):
        if phase in finished:
            continue
        if (phase.startswith("b") or phase.startswith("cap") or phase == "probe") and urls[
            "off"
        ] is None:
            urls["off"] = wait_for(ws, "off", args.wait_s)
        if budget_left(args.budget_s) < PHASE_EST.get(phase, 60):
            log(f"skip {phase}: {budget_left(args.budget_s):.0f} s left")
            continue
        log(f"phase {phase}")
        t = time.monotonic()
        try:
            PHASES[phase](ws, args, urls)
            if phase.startswith("b") and not ws.load_results().get(f"bench_c{phase[1:]}", {}).get(
                "complete"
            ):
                continue
            if phase.startswith("cap") and not ws.load_results().get(
                f"capture_c{phase[3:]}", {}
            ).get("complete"):
                continue
        except Exception as exc:
            traceback.print_exc()
            errs = ws.load_results().get("errors", [])
            ws.save_results({"errors": [*errs, f"{phase}: {type(exc).__name__}: {exc}"[:2000]]})
            continue
        finished.add(phase)
        ws.save_results({"phases_done": sorted(finished)})
        log(f"phase {phase} done in {time.monotonic() - t:.0f} s")
    if ws.hold_file.is_file():
        (ws.out / "hold.json").write_text(ws.hold_file.read_text())


def parser() -> argparse.ArgumentParser:
    """The argument parser (subcommands ``build``, ``hold``, ``measure``, ``replay``)."""
    where = argparse.ArgumentParser(add_help=False)
    add_common_arguments(
        where,
        repeat=None,
        quick=False,
        out_default=default_out(),
        out_help="Results folder brought back from the device ($OUT; default runs/gpu_out).",
    )
    where.add_argument(
        "--state",
        type=Path,
        default=default_state(),
        help="State kept between commands ($GPURUN_STATE; default /tmp/gpurun).",
    )
    where.add_argument(
        "--data",
        type=Path,
        default=default_data(),
        help="Data folder with customer_service/*.csv ($GPURUN_DATA; default .gpudata).",
    )
    p = argparse.ArgumentParser(
        prog="python -m benchmarks.gpu",
        description=(benchmarks.gpu.__doc__ or "").split("\n")[0],
    )
    sub = p.add_subparsers(dest="cmd", required=True)
    b = sub.add_parser("build", parents=[where], help="Build the checkpoint.")
    b.add_argument("--shape", choices=["21b", "tiny"], default="21b")
    b.add_argument("--device", default="cuda")
    h = sub.add_parser("hold", parents=[where], help="Start the servers and keep them.")
    h.add_argument("--profile", choices=["gpu", "cpu"], default="gpu")
    h.add_argument("--util", type=float, default=0.42, help="GPU memory share per server.")
    h.add_argument("--max-life-s", type=float, default=1500)
    h.add_argument("--servers", default="on,off")
    m = sub.add_parser("measure", parents=[where], help="Run benchmark phases.")
    m.add_argument("--phases", default="agree,decode,b128,b32,orch,b8")
    m.add_argument("--budget-s", type=float, default=540, help="Seconds for this command.")
    m.add_argument("--wait-s", type=float, default=420, help="Seconds to wait for a server.")
    m.add_argument("--requests", type=int, default=1024, help="Requests per repetition (b*).")
    m.add_argument("--agree-n", type=int, default=128)
    m.add_argument("--agree-c", type=int, default=16)
    m.add_argument("--orch-n", type=int, default=512)
    m.add_argument("--orch-c", type=int, default=32)
    m.add_argument(
        "--orch-procs",
        type=int,
        default=0,
        help="Client processes of the orch phase, both paths (0: ceil(orch-c / 16)).",
    )
    m.add_argument("--orch-profile", action="store_true", help="cProfile the first full run")
    m.add_argument(
        "--cap-reps",
        type=int,
        default=0,
        help="Repetitions of the cap* phases, orders rotated (0: the three fixed orders).",
    )
    m.add_argument(
        "--cap-modes",
        default="",
        help="Comma-separated modes of the cap* phases (default: each phase's own list; "
        "2026-12-01c: off,sampled for more repetitions of the sampled capture).",
    )
    m.add_argument(
        "--orch-sample-rate",
        type=float,
        default=1.0,
        help="The full path's capture sampling rate (EngineCapture sample_rate; the plain "
        "client asks each recorded call for what the full path's draw asked).",
    )
    m.add_argument("--stream-n", type=int, default=512, help="Streamed calls per load (stream).")
    add_common_arguments(
        m,
        repeat=300,
        repeat_help="Timed calls per step of the decode phase.",
        repeat_aliases=("--decode-repeat",),
        quick_help="Small workloads (a smoke test of the plumbing): "
        + ", ".join(f"{k} {v}" for k, v in QUICK.items()),
        out=False,
    )
    r = sub.add_parser("replay", parents=[where], help="Stop the servers; replay and compare.")
    r.add_argument("--device", default="cuda")
    r.add_argument("--dtype", default="bfloat16")
    return p


def main(argv: Sequence[str] | None = None) -> None:
    """Parse ``argv`` and run the subcommand."""
    args = parser().parse_args(argv)
    ws = Workspace(state=args.state, out=args.out, data=args.data)
    if args.cmd == "build":
        build(ws, shape=args.shape, device=args.device)
    elif args.cmd == "hold":
        hold(
            ws,
            profile=args.profile,
            util=args.util,
            servers=args.servers,
            max_life_s=args.max_life_s,
        )
    elif args.cmd == "measure":
        if args.quick:
            args.requests = min(args.requests, QUICK["requests"])
            args.agree_n = min(args.agree_n, QUICK["agree_n"])
            args.orch_n = min(args.orch_n, QUICK["orch_n"])
            args.repeat = min(args.repeat, QUICK["repeat"])
        measure(ws, args)
    else:
        replay(ws, device=args.device, dtype=args.dtype)
