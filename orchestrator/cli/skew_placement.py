"""``orchestrator skew placement``: a what-if expert placement for a workflow mix (DeepSeek's
EPLB fed with the mix's measured expert loads; :mod:`orchestrator.analysis.skew.eplb`).

Expert placement means which GPU holds which MoE expert under expert parallelism; it has
nothing to do with ``serving.placement`` (the CPU cores of the vLLM process).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from orchestrator.cli.common import (
    DbFlagOption,
    ModelFilterOption,
    UntilOption,
    command_errors,
    console,
    database_url_from_flags,
    fail,
    settings_from_flags,
)
from orchestrator.exceptions import UserError

if TYPE_CHECKING:
    from orchestrator.analysis.skew.eplb import Placement


def placement(
    mix: Annotated[
        str,
        typer.Option(
            help="Shares of model calls per workflow, summing to 1: "
            "customer_service=0.6,content_moderation=0.4 (workflows with calls in the window)."
        ),
    ],
    gpus: Annotated[int, typer.Option(help="GPUs the experts are spread over (EP size).")],
    redundant: Annotated[
        int, typer.Option(help="Redundant expert slots per layer (replicas of busy experts).")
    ] = 0,
    db: DbFlagOption = None,
    database_url: DbFlagOption = None,
    window: Annotated[str, typer.Option(help="Loads measured over: 24h, 7d, 2w... or all.")] = "7d",
    until: UntilOption = None,
    model: ModelFilterOption = None,
    out: Annotated[
        Path | None,
        typer.Option(
            "--out", help="Write the placement JSON here (SGLang's --init-expert-location form)."
        ),
    ] = None,
) -> None:
    """What-if expert placement for a workflow mix: DeepSeek's EPLB on the measured loads.

    Prints, per MoE layer, the predicted GPU balancedness (mean / max GPU load) of the plain
    placement and of EPLB's, and the experts to replicate and the GPUs their copies go to.
    """
    from orchestrator.analysis.skew.eplb import (
        check_counts,
        measured_loads,
        mixed_load,
        parse_mix,
        placement_json,
        plan,
    )
    from orchestrator.analysis.skew.window import parse_duration, parse_until
    from orchestrator.outfiles import atomic_write_text, check_writable
    from orchestrator.telemetry.readonly import open_readonly

    settings = settings_from_flags(database_url=database_url_from_flags(db, database_url))
    with command_errors(usage=(UserError,)):
        check_counts(gpus, redundant)  # before the database is opened
        if out is not None:
            check_writable(out)  # before the loads are computed (about 10 s)
        parse_duration(window)
        end = parse_until(until) if until is not None else None
        store = open_readonly(settings.database_url)
        try:
            measured = measured_loads(store, window, until=end, model=model)
            shares = parse_mix(mix, list(measured.workflows))
            load = mixed_load(measured.workflows, shares)
            result = plan(load, measured.shape.moe_layers, gpus, redundant)
        finally:
            store.close()
    calls = {w: measured.workflows[w].calls for w in shares}
    console.print(
        f"loads from {sum(calls.values()):,} calls "
        f"({', '.join(f'{w} {n:,}' for w, n in calls.items())}), window "
        f"{measured.window.start:%Y-%m-%d %H:%M} to {measured.window.end:%Y-%m-%d %H:%M} UTC"
    )
    console.print(_table(result))
    if out is not None:
        try:
            atomic_write_text(out, json.dumps(placement_json(result)) + "\n")
        except (UserError, OSError) as exc:  # OSError: a full disk mid-write, old file kept
            reason = exc.strerror if isinstance(exc, OSError) else None
            raise fail(f"cannot write {out}: {reason}" if reason else exc, 2) from exc
        console.print(f"placement JSON: {out} (SGLang: --init-expert-location {out})")


def _table(result: Placement) -> Table:
    experts = result.logcnt.shape[-1]
    table = Table(
        title=f"{experts} experts + {result.redundant} redundant slots on {result.gpus} GPUs "
        "(balancedness = mean / max GPU load, predicted)"
    )
    for name in ("layer", "before", "after", "replicate (expert → GPUs)"):
        table.add_column(name, justify="left" if name.startswith("rep") else "right")
    for i, layer in enumerate(result.moe_layers):
        copies = " ".join(
            f"e{e}→{','.join(str(g) for g in where)}" for e, where in result.replicas(i)
        )
        table.add_row(
            str(layer), f"{result.before[i]:.3f}", f"{result.after[i]:.3f}", copies or "-"
        )
    return table
