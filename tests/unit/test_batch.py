"""Batch jobs with ScriptedModel (no vLLM here) and a real SQLite store: results in input
order, escaping, resume and exactly once, retries, timeouts, several endpoints, the skew of
one batch, and the CLI's errors."""

from __future__ import annotations

import asyncio
import csv
import json
import os
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pytest
from openpyxl import load_workbook
from typer.testing import CliRunner

from orchestrator.analysis.skew.report import ReportOptions, build_report
from orchestrator.batch import (
    RESULT_COLUMNS,
    BatchOptions,
    ColumnMapping,
    open_input,
    run_batch_job,
)
from orchestrator.batch.inputs import BatchInput
from orchestrator.batch.runner import BatchProgress, RowResult
from orchestrator.cli.app import app
from orchestrator.core.client import ChatMessage, ChatOptions, ModelCall
from orchestrator.core.dispatcher import Orchestrator
from orchestrator.exceptions import ServerUnavailableError, UserError
from orchestrator.telemetry import BatchLedger, TelemetryStore
from orchestrator.testing import ScriptedModel
from workflows import default_workflows

TEXTS = [
    "I was charged twice for my order, please refund me",
    "Where is my package? It has not arrived after two weeks",
    "My account is locked and I cannot log in",
    "I want to cancel my subscription today",
    "The delivery arrived damaged, I need a replacement",
    # was "How do I change the shipping address of my order?": the classifier refit of
    # 5444804 sends it to fallback (margin 0.29 < 0.3); these tests are about the batch, so
    # they keep six texts every fit routes to customer service (the regression is reported)
    "I need to change the delivery address for my order",
]
#: Model calls the six texts make: triage and reply each, but the address change names no new
#: address, so code asks for it after the triage (no tool, no reply call).
CALLS = 2 * len(TEXTS) - 1


class ScriptedFactory:
    """One ScriptedModel per URL, one store; what SettingsFactory builds from the settings."""

    def __init__(self, db: str, models: dict[str, ScriptedModel]) -> None:
        self.db = db
        self.models = models
        self._store: TelemetryStore | None = None

    def __getstate__(self) -> dict[str, object]:  # for Ray workers: no open store
        return {"db": self.db, "models": self.models, "_store": None}

    def store(self) -> TelemetryStore:
        if self._store is None:
            self._store = TelemetryStore(self.db)
        return self._store

    async def orchestrators(self, urls: Sequence[str]) -> list[Orchestrator]:
        return [Orchestrator(self.models[u], self.store(), default_workflows()) for u in urls]

    async def aclose(self) -> None:
        return None


#: The request text that makes DyingModel die (tests/unit/test_batch_killed_worker.py).
MARKER = "parcel 5512"


class Crash(BaseException):
    """An end no code path handles (asyncio re-raises KeyboardInterrupt itself out of the
    loop, past the test; a BaseException of our own reaches run_batch_job's caller)."""


class DyingModel(ScriptedModel):
    """Answers like ScriptedModel; the first call about ``MARKER`` ends the process (``how``
    = ``kill``: SIGKILL, as the OOM killer does) or raises :class:`Crash` (``crash``).
    ``flag`` (a file) makes it happen once over all processes."""

    def __init__(self, flag: Path, how: str, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.flag, self.how = flag, how

    async def chat(self, messages: Sequence[ChatMessage], options: ChatOptions) -> ModelCall:
        if any(MARKER in m.content for m in messages) and not self.flag.exists():
            self.flag.write_text(str(os.getpid()))
            if self.how == "crash":
                raise Crash
            time.sleep(1.0)  # the request's `running` row is written by now
            os.kill(os.getpid(), signal.SIGKILL)
        return await super().chat(messages, options)


class SlowModel(ScriptedModel):
    """Sleeps before answering the calls whose user text contains ``slow_marker``."""

    def __init__(self, slow_marker: str, delay_s: float, **kwargs: object) -> None:
        super().__init__(**kwargs)  # type: ignore[arg-type]
        self.slow_marker, self.delay_s = slow_marker, delay_s

    async def chat(self, messages: Sequence[ChatMessage], options: ChatOptions) -> ModelCall:
        if any(self.slow_marker in m.content for m in messages):
            await asyncio.sleep(self.delay_s)
        return await super().chat(messages, options)


def write_csv(path: Path, header: list[str], rows: list[list[str]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(header)
        writer.writerows(rows)
    return path


def read_results(path: Path) -> list[dict[str, object]]:
    workbook = load_workbook(path, read_only=True)
    rows = list(workbook.worksheets[0].iter_rows(values_only=True))
    workbook.close()
    assert list(rows[0]) == list(RESULT_COLUMNS)
    return [
        dict(zip(rows[0], list(r) + [None] * (len(rows[0]) - len(r)), strict=True))
        for r in rows[1:]
    ]


@pytest.fixture
def db(tmp_path: Path) -> str:
    return f"sqlite:///{tmp_path / 'telemetry.db'}"


@pytest.fixture
def sheet(tmp_path: Path) -> Path:
    ids = [f"T{i:03d}" for i in range(len(TEXTS))]
    return write_csv(
        tmp_path / "inbox.csv",
        ["ticket", "body"],
        [[i, t] for i, t in zip(ids, TEXTS, strict=True)],
    )


@pytest.fixture
def source(sheet: Path) -> BatchInput:
    """The ``sheet`` as a batch input: text in ``body``, ids in ``ticket``."""
    return open_input(sheet, ColumnMapping(text="body", id="ticket"))


@pytest.fixture
def out(tmp_path: Path) -> Path:
    """Where a test's batch writes its results workbook."""
    return tmp_path / "results.xlsx"


def stop_after_two() -> dict[str, Any]:
    """``stop`` and ``on_row`` keywords of a run that is asked to stop once two rows are done."""
    stop = asyncio.Event()

    def on_row(_result: RowResult, progress: BatchProgress) -> None:
        if progress.done >= 2:
            stop.set()

    return {"stop": stop, "on_row": on_row}


async def _run(source, factory, urls=("u1",), **kwargs):  # type: ignore[no-untyped-def]
    options = kwargs.pop(
        "options", BatchOptions(concurrency=3, backoff_initial_s=0, backoff_max_s=0)
    )
    out = kwargs.pop("out")
    return await run_batch_job(source, factory, list(urls), options, out=out, **kwargs)


async def test_results_have_one_row_per_input_row_in_input_order(out, db, source) -> None:
    # empathy only: "…; fixed." tells an action nothing backs, which the reply checker drops
    factory = ScriptedFactory(db, {"u1": ScriptedModel(replies=["Sorry about that."])})
    job = await _run(source, factory, out=out, formats=["csv", "jsonl"])

    rows = read_results(out)
    assert [r["id"] for r in rows] == [f"T{i:03d}" for i in range(len(TEXTS))]
    assert [r["row"] for r in rows] == list(range(1, len(TEXTS) + 1))
    assert job.summary.ran == len(TEXTS) and job.summary.stopped is None
    for r in rows:
        assert r["status"] == "succeeded" and r["route"] == "customer_service"
        reply = str(r["output"])
        if not reply.startswith("Please tell me the new address"):  # a question back: no prose
            assert reply.endswith(" Sorry about that.")  # after code's answer
        assert 0 < float(r["confidence"]) <= 1  # type: ignore[arg-type]
        assert r["top_experts"] and r["expert_routing"] == "scripted"
        assert int(r["prompt_tokens"]) > 0 and r["attempts"] == 1  # type: ignore[arg-type]
    # csv and jsonl hold the same rows in the same order
    with out.with_suffix(".csv").open(encoding="utf-8") as handle:
        assert [r["id"] for r in csv.DictReader(handle)] == [r["id"] for r in rows]
    lines = out.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()
    assert [json.loads(line)["id"] for line in lines] == [r["id"] for r in rows]
    # every telemetry request row carries the batch id; none is left running
    store = factory.store()
    requests = store.requests()
    assert {r.batch_id for r in requests} == {job.summary.batch_id}
    assert len(requests) == len(TEXTS) and all(r.status == "succeeded" for r in requests)


async def test_model_text_is_escaped_against_formula_injection(out, db, source) -> None:
    evil = '=HYPERLINK("http://evil.example","click")'
    factory = ScriptedFactory(db, {"u1": ScriptedModel(replies=[evil])})
    await _run(source, factory, out=out, formats=["csv", "jsonl"])
    workbook = load_workbook(out)  # not read-only: data types are visible
    cells = [
        row[RESULT_COLUMNS.index("output")] for row in workbook.worksheets[0].iter_rows(min_row=2)
    ]
    # the claim checker drops the formula before any output sees it (a fragment with markup
    # and a link); code's answer to the intent stands, and no cell starts a formula
    assert all(c.data_type == "s" and "HYPERLINK" not in c.value for c in cells)
    assert all(not str(c.value).startswith(("=", "+", "-", "@")) for c in cells)
    with out.with_suffix(".csv").open(encoding="utf-8") as handle:
        assert all(not r["output"].startswith("=") for r in csv.DictReader(handle))
    first = json.loads(out.with_suffix(".jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert "HYPERLINK" not in first["output"] and first["output"]


async def test_bad_rows_fail_one_by_one_and_the_batch_goes_on(tmp_path, db) -> None:
    allowed = tmp_path / "files"
    allowed.mkdir()
    (allowed / "ok.txt").write_text("x")
    (tmp_path / "secret.txt").write_text("x")
    (allowed / "link.txt").symlink_to(tmp_path / "secret.txt")
    path = write_csv(
        tmp_path / "in.csv",
        ["id", "text", "file"],
        [
            ["a", TEXTS[0], ""],
            ["b", "   ", ""],  # empty text
            ["a", TEXTS[1], ""],  # duplicate id
            ["c", TEXTS[2], "../secret.txt"],  # traversal
            ["d", TEXTS[3], "link.txt"],  # symlink out of the folder
            ["e", TEXTS[4], "missing.txt"],  # does not exist
            ["f", TEXTS[5], "ok.txt"],
            ["", TEXTS[5], ""],  # empty id
        ],
    )
    factory = ScriptedFactory(db, {"u1": ScriptedModel()})
    source = open_input(
        path, ColumnMapping(text="text", id="id", attachment="file"), attachments_dir=allowed
    )
    out = tmp_path / "results.xlsx"
    job = await _run(source, factory, out=out)
    rows = read_results(out)
    by_row = {r["row"]: r for r in rows}
    assert len(rows) == 8 and job.summary.stopped is None
    assert by_row[1]["status"] == "succeeded"
    assert by_row[2]["status"] == "failed" and "empty text" in str(by_row[2]["error"])
    assert by_row[3]["status"] == "failed" and "duplicate id 'a'" in str(by_row[3]["error"])
    assert "outside the allowed folder" in str(by_row[4]["error"])
    assert "outside the allowed folder" in str(by_row[5]["error"])
    assert "does not exist" in str(by_row[6]["error"])
    assert by_row[7]["status"] != "failed"
    assert "empty id" in str(by_row[8]["error"])
    # rows that failed before sending made no request
    assert len(factory.store().requests()) == 2


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("", "is empty"),
        ("ticket,body\n", "header row but no data rows"),
        ("ticket,body\n,\n,\n", "header row but no data rows"),
        (
            "ticket,message\nT1,hello\n",
            "no column 'body' (--text-column); its columns are: 'ticket', 'message'",
        ),
    ],
)
def test_unusable_inputs_are_refused_before_any_request(tmp_path, content, message) -> None:
    path = tmp_path / "in.csv"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(UserError, match=message.replace("(", r"\(").replace(")", r"\)")):
        open_input(path, ColumnMapping(text="body", id="ticket"))


def test_unusable_workbooks_are_refused_too(tmp_path) -> None:
    from openpyxl import Workbook

    empty, header_only = tmp_path / "empty.xlsx", tmp_path / "header.xlsx"
    Workbook().save(empty)
    book = Workbook()
    book.active.append(["id", "text"])
    book.save(header_only)
    with pytest.raises(UserError, match="is empty"):
        open_input(empty, ColumnMapping(text="text"))
    with pytest.raises(UserError, match="header row but no data rows"):
        open_input(header_only, ColumnMapping(text="text"))
    with pytest.raises(UserError, match="no sheet 'nope'; its sheets: Sheet"):
        open_input(header_only, ColumnMapping(text="text"), sheet="nope")


@pytest.mark.parametrize("first", ["empty", "header only", "other columns"])
def test_a_workbook_whose_first_sheet_is_unusable_names_it_and_suggests_sheet(
    tmp_path, first
) -> None:
    from openpyxl import Workbook

    book = Workbook()
    book.active.title = "Cover page"
    if first == "header only":
        book.active.append(["id", "text"])
    elif first == "other columns":
        book.active.append(["title"])
        book.active.append(["Q3 inbox export"])
    data = book.create_sheet("Requests")
    data.append(["id", "text"])
    data.append(["A1", TEXTS[0]])
    book.create_sheet("Notes")
    path = tmp_path / "inbox.xlsx"
    book.save(path)
    with pytest.raises(UserError) as caught:
        open_input(path, ColumnMapping(text="text", id="id"))
    message = str(caught.value)
    assert "its first sheet 'Cover page'" in message
    assert "other sheets: 'Requests', 'Notes'" in message and "--sheet NAME" in message
    assert open_input(path, ColumnMapping(text="text", id="id"), sheet="Requests").count() == 1
    result = CliRunner().invoke(
        app, ["batch", str(path), "--text-column", "text", "--out", str(tmp_path / "r.xlsx")]
    )
    assert result.exit_code == 2 and "--sheet" in result.output


def test_the_cli_against_an_unreachable_server_writes_results_and_says_how_to_resume(
    tmp_path, sheet, monkeypatch
) -> None:
    from orchestrator.core.client import override_allow_model_requests

    monkeypatch.setenv("ORCH_DATABASE_URL", f"sqlite:///{tmp_path / 't.db'}")
    monkeypatch.setenv("ORCH_MAX_RETRIES", "0")
    out = tmp_path / "r.xlsx"
    args = ["batch", str(sheet), "--text-column", "body", "--id-column", "ticket"]
    args += ["--out", str(out), "--server-url", "http://127.0.0.1:9/v1"]
    with override_allow_model_requests(True):  # port 9 refuses: nothing is sent anywhere
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert out.is_file()
    assert [r["status"] for r in read_results(out)] == ["unreachable"] * len(TEXTS)
    assert "--retry-failed" in result.output and "127.0.0.1:9" in result.output


async def test_a_stopped_run_resumes_and_every_row_is_recorded_exactly_once(
    out, db, source
) -> None:
    factory = ScriptedFactory(db, {"u1": ScriptedModel()})
    options = BatchOptions(concurrency=1, backoff_initial_s=0, backoff_max_s=0)
    first = await _run(source, factory, out=out, options=options, **stop_after_two())
    assert first.summary.ran == 2 and first.summary.stopped
    partial = read_results(out)
    assert [r["status"] for r in partial] == ["succeeded"] * 2 + ["pending"] * (len(TEXTS) - 2)

    second = await _run(source, factory, out=out, options=options)
    assert second.summary.batch_id == first.summary.batch_id  # same input, same batch
    assert second.summary.skipped == 2 and second.summary.ran == len(TEXTS) - 2
    rows = read_results(out)
    assert [r["id"] for r in rows] == [f"T{i:03d}" for i in range(len(TEXTS))]
    assert all(r["status"] == "succeeded" for r in rows)
    ledger = BatchLedger(factory.store())
    recorded = [r.row_index for r in ledger.iter_rows(first.summary.batch_id)]
    assert recorded == list(range(len(TEXTS)))
    # a third run sends nothing
    third = await _run(source, factory, out=out, options=options)
    assert third.summary.ran == 0 and third.summary.skipped == len(TEXTS)
    assert len(factory.store().requests()) == len(TEXTS)


async def test_requests_left_running_by_a_killed_run_are_marked_interrupted(
    out, db, source
) -> None:
    from orchestrator.classifier import RuleClassifier
    from orchestrator.request import Request

    factory = ScriptedFactory(db, {"u1": ScriptedModel()})
    store = factory.store()
    batch = (
        await _run(
            source, factory, out=out, options=BatchOptions(concurrency=1, retry_failed=False)
        )
    ).summary.batch_id
    # what a kill -9 leaves: a request row still running
    orphan = Request(text=TEXTS[0], id=f"{batch}.0.dead", metadata={"batch_id": batch})
    store.start_request(orphan, RuleClassifier().classify(orphan), "customer_service")
    again = await _run(source, factory, out=out)
    assert again.summary.interrupted_requests == 1
    assert not store.requests(status="running")
    assert [r.status for r in store.requests() if r.id == orphan.id] == ["interrupted"]


async def test_failed_rows_are_rerun_only_with_retry_failed(out, db, source) -> None:
    broken = ScriptedModel(fail_on_call=(1, lambda: RuntimeError("boom")))
    factory = ScriptedFactory(db, {"u1": broken})
    options = BatchOptions(concurrency=1, attempts=1)
    first = await _run(source, factory, out=out, options=options)
    assert first.summary.statuses.get("failed") == 1
    failed_ids = [r["id"] for r in read_results(out) if r["status"] == "failed"]
    assert len(failed_ids) == 1 and "internal error" in str(read_results(out)[0]["error"])

    factory.models["u1"] = ScriptedModel()
    kept = await _run(source, factory, out=out, options=options)
    assert kept.summary.ran == 0
    assert [r["id"] for r in read_results(out) if r["status"] == "failed"] == failed_ids

    rerun = await _run(
        source, factory, out=out, options=BatchOptions(concurrency=1, retry_failed=True)
    )
    assert rerun.summary.ran == 1 and rerun.summary.statuses == {"succeeded": 1}
    rows = read_results(out)
    assert all(r["status"] == "succeeded" for r in rows) and len(rows) == len(TEXTS)
    assert [r["attempts"] for r in rows if r["id"] in failed_ids] == [2]


async def test_transient_errors_are_retried_with_backoff(out, db, source) -> None:
    flaky = ScriptedModel(
        fail_on_call=(1, lambda: ServerUnavailableError("http://x/v1", "connection refused"))
    )
    factory = ScriptedFactory(db, {"u1": flaky})
    options = BatchOptions(concurrency=1, attempts=3, backoff_initial_s=0.01, backoff_max_s=0.02)
    job = await _run(source, factory, out=out, options=options)
    rows = read_results(out)
    assert all(r["status"] == "succeeded" for r in rows)
    assert sorted(r["attempts"] for r in rows) == [1] * (len(TEXTS) - 1) + [2]
    # the failed attempt is its own request, recorded failed, not running
    statuses = sorted(r.status for r in factory.store().requests())
    assert statuses == ["failed"] + ["succeeded"] * len(TEXTS)
    assert job.summary.stopped is None


async def test_an_unreachable_server_stops_the_batch_and_records_rows_unreachable(
    out, db, source
) -> None:
    class Down(ScriptedModel):
        async def chat(self, messages: Sequence[ChatMessage], options: ChatOptions) -> ModelCall:
            raise ServerUnavailableError("http://x/v1", "connection refused")

    factory = ScriptedFactory(db, {"u1": Down()})
    options = BatchOptions(concurrency=2, attempts=2, backoff_initial_s=0, backoff_max_s=0)
    job = await _run(source, factory, out=out, options=options)
    assert job.summary.stopped and "unreachable" in job.summary.stopped
    rows = read_results(out)
    assert [r["status"] for r in rows] == ["unreachable"] * len(TEXTS)
    assert all("--retry-failed" in str(r["error"]) for r in rows)
    assert not factory.store().requests(status="running")
    # a plain resume keeps them; --retry-failed runs them once the server is back
    factory.models["u1"] = ScriptedModel()
    again = await _run(source, factory, out=out, options=options)
    assert again.summary.ran == 0
    retry = BatchOptions(concurrency=2, retry_failed=True, backoff_initial_s=0, backoff_max_s=0)
    last = await _run(source, factory, out=out, options=retry)
    assert last.summary.ran == len(TEXTS) and last.summary.stopped is None
    assert "unreachable" not in {r["status"] for r in read_results(out)}
    assert sorted(r["id"] for r in read_results(out)) == [f"T{i:03d}" for i in range(len(TEXTS))]


class DownAtCheck(ScriptedFactory):
    """A factory whose servers do not answer the first check (``/v1/models``)."""

    async def orchestrators(self, urls: Sequence[str]) -> list[Orchestrator]:
        raise ServerUnavailableError(urls[0], "ConnectError: connection refused")


async def test_a_server_down_at_the_start_still_records_every_row_and_writes_results(
    tmp_path, db
) -> None:
    path = write_csv(
        tmp_path / "in.csv",
        ["id", "text"],
        [["A", TEXTS[0]], ["B", ""], ["A", TEXTS[1]], ["C", TEXTS[2]]],
    )
    source = open_input(path, ColumnMapping(text="text", id="id"))
    out = tmp_path / "results.xlsx"
    factory = DownAtCheck(db, {})
    job = await _run(source, factory, out=out, formats=["csv"])
    assert out.is_file() and out.with_suffix(".csv").is_file()
    rows = read_results(out)
    assert [r["status"] for r in rows] == ["unreachable", "failed", "failed", "unreachable"]
    assert "empty text" in str(rows[1]["error"]) and "duplicate" in str(rows[2]["error"])
    assert "connection refused" in str(rows[0]["error"]) and "--retry-failed" in str(
        rows[0]["error"]
    )
    assert job.summary.stopped and "unreachable" in job.summary.stopped
    ledger = BatchLedger(factory.store())
    assert len(ledger.finished_rows(job.summary.batch_id)) == 4
    # resumed with --retry-failed once a server answers: each row once, the bad ones still fail
    up = ScriptedFactory(db, {"u1": ScriptedModel()})
    retry = BatchOptions(concurrency=2, retry_failed=True, backoff_initial_s=0, backoff_max_s=0)
    again = await _run(source, up, out=out, options=retry)
    statuses = [r["status"] for r in read_results(out)]
    assert statuses[1:3] == ["failed", "failed"] and "unreachable" not in statuses
    assert again.summary.stopped is None
    assert [r["row"] for r in read_results(out)] == [1, 2, 3, 4]


async def test_a_request_past_its_timeout_is_cancelled_then_failed(tmp_path, db) -> None:
    path = write_csv(tmp_path / "in.csv", ["text"], [[TEXTS[0]], ["SLOWPOKE " + TEXTS[1]]])
    factory = ScriptedFactory(db, {"u1": SlowModel("SLOWPOKE", 5.0)})
    source = open_input(path, ColumnMapping(text="text"))
    out = tmp_path / "results.xlsx"
    options = BatchOptions(
        concurrency=2, attempts=2, request_timeout_s=0.3, backoff_initial_s=0, backoff_max_s=0
    )
    await _run(source, factory, out=out, options=options)
    rows = read_results(out)
    assert rows[0]["status"] == "succeeded"
    assert rows[1]["status"] == "failed" and "timed out after 0.3 s" in str(rows[1]["error"])
    assert rows[1]["attempts"] == 2
    statuses = sorted(r.status for r in factory.store().requests())
    assert statuses == ["cancelled", "cancelled", "succeeded"]


async def test_requests_are_spread_over_several_endpoints(tmp_path, db) -> None:
    path = write_csv(tmp_path / "in.csv", ["text"], [[t] for t in TEXTS * 4])
    models = {"u1": SlowModel("", 0.01), "u2": SlowModel("", 0.01)}
    factory = ScriptedFactory(db, models)  # type: ignore[arg-type]
    source = open_input(path, ColumnMapping(text="text"))
    await _run(source, factory, urls=("u1", "u2"), out=tmp_path / "r.xlsx")
    calls = [len(m.requests) for m in models.values()]
    assert sum(calls) == CALLS * 4
    assert min(calls) >= sum(calls) // 4  # both endpoints took a real share


async def test_skew_of_one_batch_reads_only_its_calls(tmp_path, db, sheet) -> None:
    factory = ScriptedFactory(db, {"u1": ScriptedModel()})
    first = open_input(sheet, ColumnMapping(text="body", id="ticket"))
    other = write_csv(tmp_path / "other.csv", ["text"], [[t] for t in TEXTS[:2]])
    a = (await _run(first, factory, out=tmp_path / "a.xlsx")).summary.batch_id
    b = (
        await _run(open_input(other, ColumnMapping(text="text")), factory, out=tmp_path / "b.xlsx")
    ).summary.batch_id
    assert a != b
    store = factory.store()
    whole = build_report(store, ReportOptions(window="all", baseline="none"))
    only_a = build_report(store, ReportOptions(window="all", baseline="none", batch=a))
    only_b = build_report(store, ReportOptions(window="all", baseline="none", batch=b))
    assert whole.overall.calls == CALLS + 4
    assert (only_a.overall.calls, only_b.overall.calls) == (CALLS, 4)
    assert any(f"batch {a}" in note for note in only_a.notes)
    with pytest.raises(UserError, match="no batch 'nope'"):
        build_report(store, ReportOptions(window="all", batch="nope"))


def test_the_cli_names_the_missing_column_and_the_columns_that_exist(tmp_path, sheet) -> None:
    result = CliRunner().invoke(
        app,
        [
            "batch",
            str(sheet),
            "--text-column",
            "message",
            "--out",
            str(tmp_path / "r.xlsx"),
            "--server-url",
            "http://127.0.0.1:9/v1",
            "--database-url",
            f"sqlite:///{tmp_path / 't.db'}",
        ],
    )
    shown = " ".join(result.output.split())
    assert result.exit_code == 2
    assert "no column 'message'" in shown and "'ticket', 'body'" in shown


def test_the_cli_refuses_a_sheet_without_text_column_and_a_bad_out(tmp_path, sheet) -> None:
    runner = CliRunner()
    result = runner.invoke(app, ["batch", str(sheet), "--out", str(tmp_path / "r.xlsx")])
    assert result.exit_code == 2 and "--text-column" in result.output
    result = runner.invoke(
        app, ["batch", str(sheet), "--text-column", "body", "--out", str(tmp_path / "r.txt")]
    )
    assert result.exit_code == 2 and ".xlsx" in result.output


def _peak_while_streaming(source) -> tuple[int, int]:  # type: ignore[no-untyped-def]
    import tracemalloc

    tracemalloc.start()
    try:
        rows = source.rows()
        count = sum(1 for _ in rows)
        return count, tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_100k_row_sheet_is_streamed_not_loaded(tmp_path) -> None:
    n = 100_000
    text = "Where is my order? It has not arrived and nobody answers my emails. "
    path = tmp_path / "big.csv"
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["text", "channel"])
        writer.writerows([f"{text}{i}", "email"] for i in range(n))
    size = path.stat().st_size
    source = open_input(path, ColumnMapping(text="text", channel="channel"))
    assert source.count() == n
    count, peak = _peak_while_streaming(source)
    assert count == n
    assert peak < size / 10, f"peak {peak} bytes while streaming a {size}-byte sheet"


def test_workbook_rows_are_streamed_not_loaded(tmp_path) -> None:
    import tracemalloc

    from openpyxl import Workbook, load_workbook

    n = 16_000
    book = Workbook(write_only=True)
    sheet = book.create_sheet("requests")
    sheet.append(["id", "text"])
    # an .xlsx keeps each distinct string once, in a table every reader loads whole: the texts
    # repeat here so that what is measured is the rows, not that table
    for i in range(n):
        sheet.append([i, f"My parcel {i % 50} is late, where is it? Please answer me today."])
    path = tmp_path / "big.xlsx"
    book.save(path)
    count, streamed = _peak_while_streaming(open_input(path, ColumnMapping(text="text")))
    assert count == n
    tracemalloc.start()
    whole = load_workbook(path)  # what a reader that materialises the rows holds
    loaded = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    whole.close()
    # openpyxl's read-only parser keeps about 0.2 KB per row of cleared XML elements (a
    # linear part measured at about a quarter of the loaded workbook's), the rows themselves
    # are not held. Two such parsers run in step (cached values and formulas, so a formula
    # cell with no saved value is read as typed): 0.62 of the loaded workbook in
    # one full-suite run; a reader that materialised the rows would hold more than all of it
    assert streamed < loaded * 0.75, (streamed, loaded)


async def test_a_folder_of_workbooks_is_one_excel_report_request_each(
    tmp_path, db, data_dir, monkeypatch
) -> None:
    import shutil

    monkeypatch.setenv("ORCH_REPORT_DIR", str(tmp_path / "reports"))
    folder = tmp_path / "in"
    folder.mkdir()
    for name in ("calamine_temperature-in-middle.xlsx", "calamine_pass_protected.xlsx"):
        shutil.copy(data_dir / "spreadsheets" / name, folder / name)
    (tmp_path / "elsewhere.xlsx").write_bytes(b"x")
    (folder / "z_link.xlsx").symlink_to(tmp_path / "elsewhere.xlsx")  # leads outside
    (folder / "notes.txt").write_text("not a workbook")
    factory = ScriptedFactory(db, {"u1": ScriptedModel()})
    source = open_input(folder, None)
    assert source.count() == 3
    out = tmp_path / "results.xlsx"
    await _run(source, factory, out=out)
    rows = read_results(out)
    assert [r["id"] for r in rows] == [
        "calamine_pass_protected.xlsx",
        "calamine_temperature-in-middle.xlsx",
        "z_link.xlsx",
    ]
    protected, plain, link = rows
    assert plain["route"] == "excel_report" and plain["status"] == "succeeded"
    assert str(plain["output"]).endswith(".xlsx") and Path(str(plain["output"])).is_file()
    assert protected["route"] == "excel_report" and protected["status"] == "rejected"
    assert "password" in str(protected["error"]).lower()
    assert link["status"] == "failed" and "outside the allowed folder" in str(link["error"])


def test_the_printed_resume_command_runs_as_printed_and_retries_unreachable_rows(
    tmp_path, sheet, monkeypatch
) -> None:
    import shlex
    import sys

    from orchestrator.core.client import override_allow_model_requests

    monkeypatch.setenv("ORCH_DATABASE_URL", f"sqlite:///{tmp_path / 't.db'}")
    monkeypatch.setenv("ORCH_MAX_RETRIES", "0")
    args = ["batch", str(sheet), "--text-column", "body", "--id-column", "ticket"]
    args += ["--out", str(tmp_path / "r.xlsx"), "--server-url", "http://127.0.0.1:9/v1"]
    monkeypatch.setattr(sys, "argv", ["orchestrator", *args])

    def resume_line(output: str) -> list[str]:
        line = next(ln for ln in output.splitlines() if ln.startswith("resume with: "))
        return shlex.split(line.removeprefix("resume with: "))

    with override_allow_model_requests(True):  # port 9 refuses: nothing is sent anywhere
        first = CliRunner().invoke(app, args)
        # the same command again (all rows already recorded unreachable) still says to retry
        again = CliRunner().invoke(app, args)
    for result in (first, again):
        assert result.exit_code == 1, result.output
        command = resume_line(result.output)
        assert command[:2] == ["orchestrator", "batch"] and command.count("batch") == 1
        assert command[2:] == [*args[1:], "--retry-failed"]


def test_the_cli_names_the_option_of_a_bad_request_timeout(tmp_path, sheet) -> None:
    result = CliRunner().invoke(
        app,
        ["batch", str(sheet), "--text-column", "body", "--out", str(tmp_path / "r.xlsx"),
         "--request-timeout", "-1"],
    )  # fmt: skip
    shown = " ".join(result.output.split())
    assert result.exit_code == 2
    assert "(--request-timeout)" in shown and "--request-timeout-s" not in shown


@pytest.mark.parametrize(
    ("header", "mapping", "message"),
    [
        # the same header twice: which one holds the text is unknowable
        ("id,text,text", {"text": "text", "id": "id"}, "2 columns named 'text'"),
        ("Ticket,Body", {"text": "body"}, "did you mean 'Body'?"),
        ("ticket,messsage", {"text": "message"}, "did you mean 'messsage'?"),
    ],
)
def test_an_ambiguous_or_misspelt_column_is_refused_with_what_to_do(
    tmp_path, header, mapping, message
) -> None:
    path = tmp_path / "in.csv"
    path.write_text(header + "\n" + ",".join(["x"] * len(header.split(","))) + "\n", "utf-8")
    with pytest.raises(UserError, match=message.replace("?", r"\?")):
        open_input(path, ColumnMapping(**mapping))


def test_one_column_named_for_two_roles_and_a_sheet_name_on_a_csv_are_refused(tmp_path) -> None:
    from pydantic import ValidationError

    with pytest.raises(ValidationError, match="both as --text-column and as --id-column"):
        ColumnMapping(text="body", id="body")
    path = tmp_path / "in.csv"
    path.write_text("id,body\n1,hello\n", "utf-8")
    with pytest.raises(UserError, match="CSV file, which has none"):
        open_input(path, ColumnMapping(text="body"), sheet="Requests")


def test_the_cli_refuses_column_flags_on_a_folder_and_bad_ray_workers_up_front(
    tmp_path, sheet
) -> None:
    runner = CliRunner()
    out = ["--out", str(tmp_path / "r.xlsx"), "--db", f"sqlite:///{tmp_path / 't.db'}"]
    folder = runner.invoke(app, ["batch", str(tmp_path), "--text-column", "body", *out])
    assert folder.exit_code == 2 and "drop --text-column" in " ".join(folder.output.split())
    workers = runner.invoke(
        app, ["batch", str(sheet), "--text-column", "body", "--ray-workers", "0", *out]
    )
    assert workers.exit_code == 2 and "--ray-workers must be at least 1" in workers.output
    same = runner.invoke(
        app, ["batch", str(sheet), "--text-column", "body", "--id-column", "body", *out]
    )
    assert same.exit_code == 2 and "each role needs a column of its own" in same.output


def test_a_rerun_with_nothing_left_still_exits_1_while_rows_stand_failed(tmp_path) -> None:
    path = tmp_path / "in.csv"
    path.write_text("id,body\na,\nb,\n", "utf-8")  # empty texts: failed, no request sent
    args = ["batch", str(path), "--text-column", "body", "--id-column", "id"]
    args += ["--out", str(tmp_path / "r.xlsx"), "--server-url", "http://127.0.0.1:9/v1"]
    args += ["--db", f"sqlite:///{tmp_path / 't.db'}"]
    from orchestrator.core.client import override_allow_model_requests

    with override_allow_model_requests(True):  # port 9 refuses: nothing is sent anywhere
        first, again = CliRunner().invoke(app, args), CliRunner().invoke(app, args)
    assert first.exit_code == 1, first.output
    assert again.exit_code == 1, again.output
    assert "2 already recorded by an earlier run" in " ".join(again.output.split())


@pytest.mark.parametrize(("flag", "moves"), [(None, False), ("--avoid-server-cpus", True)])
def test_the_cli_moves_off_the_server_cpus_only_when_asked(
    tmp_path, sheet, monkeypatch, flag, moves
) -> None:
    import orchestrator.cli.batch as batch_cli
    from orchestrator.core.client import override_allow_model_requests
    from serving.placement import Placement

    calls: list[int] = []

    def placed() -> Placement:
        calls.append(1)
        return Placement(frozenset({0}), before=frozenset({0, 1}), after=frozenset({1}))

    monkeypatch.setattr(batch_cli, "keep_off_server_cpus", placed)
    monkeypatch.setenv("ORCH_DATABASE_URL", f"sqlite:///{tmp_path / 't.db'}")
    monkeypatch.setenv("ORCH_MAX_RETRIES", "0")
    args = ["batch", str(sheet), "--text-column", "body", "--out", str(tmp_path / "r.xlsx")]
    args += ["--server-url", "http://127.0.0.1:9/v1", *([flag] if flag else [])]
    with override_allow_model_requests(True):  # port 9 refuses: nothing is sent anywhere
        result = CliRunner().invoke(app, args)
    assert result.exit_code == 1, result.output
    assert bool(calls) is moves
    assert ("off the vLLM worker's 0" in result.output) is moves
