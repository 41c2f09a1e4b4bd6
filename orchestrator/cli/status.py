"""``orchestrator status``: the model server's health, read from vLLM's ``/metrics``.

Two readings ``--interval`` seconds apart give the throughputs (counters over the interval);
the table shows running and waiting requests, KV-cache use (red above
``Settings.kv_cache_warn_fraction``), prompt and generation tokens per second and
preemptions. ``--json`` prints the same as one JSON object (an error too: ``{"error", "kind", ...}``
on standard output, exit status 1 or 2); ``--watch N`` prints the STATS line (with ``--json``
one object per line) every N seconds until Ctrl-C.
"""

from __future__ import annotations

import contextlib
import json
import logging
import time
from collections.abc import Callable, Iterator
from typing import Annotated

import typer
from pydantic import ValidationError
from rich.table import Table

from orchestrator.cli.common import console, err, fail, invalid_values, settings_from_flags
from orchestrator.config import Settings
from orchestrator.exceptions import ModelCallError, ServerUnavailableError
from orchestrator.observability import (
    HealthMonitor,
    ServerHealth,
    StatsReporter,
    start_metrics_server,
)
from orchestrator.observability import metrics as framework_metrics


@contextlib.contextmanager
def observe_server(
    settings: Settings,
    server_url: str,
    *,
    on_health: Callable[[ServerHealth], None] | None = None,
) -> Iterator[StatsReporter]:
    """While the block runs: log the STATS line of the server at ``server_url`` every
    ``settings.stats_interval_s`` seconds (INFO on ``orchestrator.stats``, turned on here;
    a warning above ``settings.kv_cache_warn_fraction``), and, when ``settings.metrics_port``
    is set, serve the framework's Prometheus metrics on ``127.0.0.1:<port>/metrics``.

    Used by ``orchestrator serve`` and ``orchestrator ui``.

    Raises:
        typer.Exit: The metrics port cannot be bound (the message names it).
    """
    framework_metrics.configure(expert_window_s=settings.metrics_expert_window_s)
    if settings.metrics_port is not None:
        try:
            start_metrics_server(settings.metrics_port)
        except OSError as exc:
            raise fail(
                f"cannot serve metrics on port {settings.metrics_port} ({exc}); pick another "
                "with --metrics-port or ORCH_METRICS_PORT"
            ) from exc
        console.print(f"framework metrics on http://127.0.0.1:{settings.metrics_port}/metrics")
    logging.getLogger("orchestrator.stats").setLevel(logging.INFO)
    monitor = HealthMonitor(server_url, kv_cache_warn_fraction=settings.kv_cache_warn_fraction)
    reporter = StatsReporter(monitor, settings.stats_interval_s, on_health=on_health).start()
    try:
        yield reporter
    finally:
        reporter.stop()
        monitor.close()


def _table(health: ServerHealth) -> Table:
    s = health.sample

    def rate(value: float | None) -> str:
        return "-" if value is None else f"{value:,.1f} tok/s"

    table = Table(title=f"vLLM server health ({health.url})", show_header=False)
    table.add_column("metric")
    table.add_column("value", justify="right")
    table.add_row("running requests", str(s.running))
    table.add_row("waiting requests", str(s.waiting))
    kv = f"{100 * s.kv_cache_usage:.1f}%"
    table.add_row("KV-cache use", f"[bold red]{kv}[/]" if health.kv_cache_warning else kv)
    interval = "" if health.interval_s is None else f" (over {health.interval_s:.1f} s)"
    table.add_row("prompt throughput" + interval, rate(health.prompt_throughput))
    table.add_row("generation throughput" + interval, rate(health.generation_throughput))
    new = "" if health.new_preemptions is None else f" (+{health.new_preemptions:g})"
    table.add_row("preemptions", f"{s.preemptions:g}{new}")
    return table


def _json_error(kind: str, message: str, code: int, **extra: object) -> typer.Exit:
    """Print ``{"error": message, "kind": kind, ...}`` on standard output (the stream a
    ``--json`` reader parses) and return the exit to raise (non-zero)."""
    print(json.dumps({"error": message, "kind": kind, **extra}, ensure_ascii=False))
    return typer.Exit(code)


def status(
    server_url: Annotated[
        str | None, typer.Option(help="The server (default ORCH_SERVER_URL).")
    ] = None,
    interval: Annotated[
        float, typer.Option(min=0.1, max=600, help="Seconds between the two readings.")
    ] = 2.0,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="One JSON object (one per line with --watch); an error is a JSON object "
            '{"error", "kind", ...} too, with a non-zero exit.',
        ),
    ] = False,
    watch: Annotated[
        float | None,
        typer.Option(min=1, help="Log the STATS line every N seconds until Ctrl-C."),
    ] = None,
) -> None:
    """Health of the vLLM server: requests running and waiting, KV-cache use, throughput.

    Exit status: 0 with a reading; 1 when the server does not answer or its ``/metrics`` is
    not vLLM's; 2 for a bad setting (URL, ``ORCH_*`` variable).
    """
    if as_json:
        try:
            settings = Settings() if server_url is None else Settings(server_url=server_url)
        except ValidationError as exc:
            message = f"invalid setting: {invalid_values(exc)}"
            raise _json_error("invalid_setting", message, 2) from exc
    else:
        settings = settings_from_flags(server_url=server_url)
    try:
        monitor = HealthMonitor(
            settings.server_url,
            kv_cache_warn_fraction=settings.kv_cache_warn_fraction,
        )
    except ValueError as exc:
        if as_json:
            raise _json_error("invalid_setting", str(exc), 2) from exc
        raise fail(exc, 2) from exc
    try:
        monitor.poll()
        if watch is not None:
            with contextlib.suppress(KeyboardInterrupt):
                while True:
                    time.sleep(watch)
                    health = monitor.poll()
                    if as_json:
                        print(health.model_dump_json(), flush=True)
                        continue
                    console.print(
                        health.stats_line(), markup=False, highlight=False, soft_wrap=True
                    )
                    if health.warning_text():
                        err.print(f"[yellow]warning:[/] {health.warning_text()}", highlight=False)
            return
        time.sleep(interval)
        health = monitor.poll()
    except (ServerUnavailableError, ModelCallError) as exc:
        if as_json:
            down = isinstance(exc, ServerUnavailableError)
            kind = "server_unavailable" if down else "bad_metrics"
            raise _json_error(
                kind, str(exc), 1, server_url=settings.server_url, metrics_url=monitor.url
            ) from exc
        raise fail(exc) from exc
    finally:
        monitor.close()
    if as_json:
        print(health.model_dump_json(indent=2))
        return
    console.print(_table(health))
    console.print(health.stats_line(), markup=False, highlight=False, soft_wrap=True)
    if health.warning_text():
        err.print(f"[yellow]warning:[/] {health.warning_text()}", highlight=False)


def register(app: typer.Typer) -> None:
    """Add ``status`` to the root app."""
    app.command("status")(status)
