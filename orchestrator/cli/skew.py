"""``orchestrator skew``: the expert-skew report in the terminal, as HTML and as JSON.

The database is opened read-only (:func:`~orchestrator.telemetry.readonly.open_readonly`):
the command works on a database in a read-only folder and beside a writer that is still
writing, and writes nothing. Stale rollups (a database from an older version) are summed from
the calls on the fly, and the command says so; ``--rebuild`` opens the database for writing and
rebuilds them on disk instead (the old default).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from pydantic import ValidationError

from orchestrator.cli.common import (
    DbFlagOption,
    ModelFilterOption,
    OutputConsole,
    UntilOption,
    console,
    database_url_from_flags,
    err,
    fail,
    invalid_values,
    settings_from_flags,
    working,
)
from orchestrator.exceptions import OrchestratorError, UserError

if TYPE_CHECKING:  # the report and the store load when the command runs, not for --help
    from orchestrator.analysis.skew.report import ReportOptions
    from orchestrator.config import Settings
    from orchestrator.telemetry import TelemetryStore
    from orchestrator.telemetry.readonly import ReadOnlyTelemetry


def skew(
    ctx: typer.Context,
    db: DbFlagOption = None,
    database_url: DbFlagOption = None,
    window: Annotated[str, typer.Option(help="Report window: 24h, 7d, 2w... or all.")] = "7d",
    baseline: Annotated[
        str | None,
        typer.Option(help="Drift baseline just before the window (default: same length; none)."),
    ] = None,
    until: UntilOption = None,
    workflow: Annotated[str | None, typer.Option(help="Only this workflow.")] = None,
    model: ModelFilterOption = None,
    html: Annotated[Path | None, typer.Option("--html", help="Write the HTML report here.")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Write the JSON report here.")
    ] = None,
    hot_factor: Annotated[
        float | None,
        typer.Option(help="Hot = the share's confidence interval lies above factor / experts."),
    ] = None,
    dead_factor: Annotated[
        float | None,
        typer.Option(help="Dead = the share's confidence interval lies below factor / experts."),
    ] = None,
    confidence: Annotated[
        float | None,
        typer.Option(help="Simultaneous confidence of a layer's share intervals (0.95)."),
    ] = None,
    min_expected: Annotated[
        float | None,
        typer.Option(help="Judge hot/dead only with this many expected activations per expert."),
    ] = None,
    prom_file: Annotated[
        Path | None,
        typer.Option(
            "--prom-file",
            help="Write the report's Prometheus gauges here (node_exporter textfile format; "
            "alert rules: deploy/prometheus/alerts.yml).",
        ),
    ] = None,
    outlier_limit: Annotated[
        int, typer.Option(help="Score at most this many newest calls for outliers.")
    ] = 50_000,
    rebuild: Annotated[
        bool,
        typer.Option(
            help="Open the database for writing and rebuild stale rollups on disk (databases "
            "from older versions). Without it the database is only read, and stale rollups "
            "are summed from the calls for this report."
        ),
    ] = False,
    batch: Annotated[
        str | None, typer.Option(help="Only the requests of this batch job (orchestrator batch).")
    ] = None,
) -> None:
    """Expert skew: load per workflow and node, hot and dead experts, drift, outlier requests.

    Without a subcommand, the report; `orchestrator skew placement --mix ... --gpus N` is the
    expert-placement what-if for a workflow mix.
    """
    # long only by its option declarations (typer reads them from the signature); the work is
    # in the helpers below
    if ctx.invoked_subcommand is not None:
        return  # `skew placement`: the subcommand does the work
    settings = settings_from_flags(database_url=database_url_from_flags(db, database_url))
    options = _options(
        settings,
        window=window,
        baseline=baseline,
        until=until,
        workflow=workflow,
        model=model,
        thresholds={
            "hot_factor": hot_factor,
            "dead_factor": dead_factor,
            "confidence": confidence,
            "min_expected": min_expected,
        },
        outlier_limit=outlier_limit,
        batch=batch,
    )
    for target in (html, json_out, prom_file):
        _check_target(target)
    store = _open_store(settings.database_url, rebuild)
    try:
        _report(store, options, rebuild=rebuild, outputs=(html, json_out, prom_file))
    except UserError as exc:
        raise fail(exc, 2) from exc
    except OrchestratorError as exc:
        raise fail(exc, 1) from exc
    finally:
        store.close()


def _options(
    settings: Settings,
    *,
    window: str,
    baseline: str | None,
    until: str | None,
    workflow: str | None,
    model: str | None,
    thresholds: dict[str, float | None],
    outlier_limit: int,
    batch: str | None,
) -> ReportOptions:
    """The report's options from the flags (``min_expected`` defaults from ``settings``, the
    other thresholds from :class:`Thresholds`, as ``orchestrator load`` takes them); exit 2
    naming a value out of range or a window, baseline or end that cannot be read."""
    from orchestrator.analysis.skew.models import Thresholds
    from orchestrator.analysis.skew.report import ReportOptions
    from orchestrator.analysis.skew.window import parse_duration, parse_until

    try:
        given = {k: v for k, v in thresholds.items() if v is not None}
        given.setdefault("min_expected", settings.dead_min_expected)
        options = ReportOptions(
            window=window,
            baseline=baseline,
            until=parse_until(until) if until is not None else None,
            workflow=workflow,
            model=model,
            thresholds=Thresholds.model_validate(given),
            outlier_limit=outlier_limit,
            rebuild=True,  # read-only: the reader refuses to rebuild, with a clear error
            batch=batch,
        )
        parse_duration(window)
        if baseline is not None and baseline.strip().lower() != "none":
            parse_duration(baseline, "--baseline")
    except ValidationError as exc:
        raise fail(f"invalid option: {invalid_values(exc)}", 2) from exc
    except UserError as exc:
        raise fail(exc, 2) from exc
    return options


def _check_target(target: Path | None) -> None:
    """Exit 2 when a report file cannot be written there (a folder, no such folder, a parent
    that is a file, a read-only mount, /proc), before the report is computed."""
    from orchestrator.outfiles import check_writable

    if target is not None:
        try:
            check_writable(target)
        except UserError as exc:
            raise fail(exc, 2) from exc


def _open_store(url: str, rebuild: bool) -> TelemetryStore | ReadOnlyTelemetry:
    """The telemetry database: read-only, or for writing with ``--rebuild``; says when stale
    rollups are summed from the calls (exit 2 when it cannot be opened)."""
    from orchestrator.telemetry import TelemetryStore
    from orchestrator.telemetry.readonly import open_readonly

    try:
        store = TelemetryStore.open_existing(url) if rebuild else open_readonly(url)
    except UserError as exc:
        raise fail(exc, 2) from exc
    stale = getattr(store, "rollups_stale", None)
    if stale is not None:
        err.print(
            f"[yellow]rollups cover {stale.summed} of {stale.calls} calls; summing the calls "
            "for this report (read-only; --rebuild writes the rollups to the database)[/]"
        )
    return store


def _report(
    store: TelemetryStore | ReadOnlyTelemetry,
    options: ReportOptions,
    *,
    rebuild: bool,
    outputs: tuple[Path | None, Path | None, Path | None],
) -> None:
    """Build the report, print its summary, and write the HTML, JSON and Prometheus files
    asked for (``outputs``, in that order)."""
    from orchestrator.analysis.skew.alerts import write_prom_file
    from orchestrator.analysis.skew.report import build_report
    from orchestrator.analysis.skew.report_html import write_html
    from orchestrator.analysis.skew.report_json import write_json
    from orchestrator.analysis.skew.terminal import print_summary

    with working("reading the expert rollups"):
        report = build_report(
            store,
            options,
            on_rebuild=(
                lambda calls, summed: err.print(
                    f"[yellow]rollups cover {summed} of {calls} calls; rebuilding them[/]"
                )
            )
            if rebuild
            else None,
        )
    # piped or redirected output gets rich's 80 columns, too narrow for the scope table
    wide = console if console.is_terminal else OutputConsole(width=max(console.width, 150))
    print_summary(wide, report)
    writers = (
        ("HTML report", write_html),
        ("JSON report", write_json),
        ("Prometheus gauges", write_prom_file),
    )
    for (label, write), path in zip(writers, outputs, strict=True):
        if path is not None:
            try:
                console.print(f"{label}: {write(report, path)}")
            except OSError as exc:  # a full disk mid-write; the old file is left whole
                raise UserError(f"cannot write {path}: {exc.strerror or exc}") from exc


def register(app: typer.Typer) -> None:
    """Add ``skew`` (the report) and ``skew placement`` (the what-if) to the root app."""
    from orchestrator.cli.skew_placement import placement

    group = typer.Typer(add_completion=False, rich_markup_mode="markdown")
    group.callback(invoke_without_command=True)(skew)
    group.command("placement")(placement)
    app.add_typer(group, name="skew")
