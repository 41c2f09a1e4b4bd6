"""The content-moderation workflow's own commands: ``orchestrator moderate TEXT`` and
``orchestrator moderation eval|check|fit``, mounted on ``orchestrator`` through the
``moe_orchestrator.commands`` entry points (``pyproject.toml``), which name :func:`moderate`
and :data:`group`.

Commands:
    moderate           verdict for one post (text argument, ``--file PATH`` or ``--file -``
                       for stdin bytes); uses a running server when one answers, else the
                       lexicon and the learned risk scorer without the model (and says which
                       signals judged, and why the scorer is missing when it is)
    moderation eval    precision/recall/F1 per label for the lexicon alone, the model alone and
                       the combination on a split of the labelled set (test = held out)
    moderation check   validate the lexicon folder and the policy file (file:line errors)
    moderation fit     train the learned risk scorer (train/dev of the labelled set)
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from orchestrator.batch.files import file_problem
from orchestrator.cli.common import (
    ServerUrlOption,
    TelemetryDbOption,
    console,
    err,
    fail,
    settings_from_flags,
    working,
)
from orchestrator.cli.storage import check_storage
from orchestrator.config import Settings
from orchestrator.core.runtime import make_client
from orchestrator.exceptions import ModelCallError, OrchestratorError
from orchestrator.telemetry import TelemetryStore
from serving.launcher import server_is_healthy
from workflows.content_moderation.dataset import PARTS, LabelledPost, load_moderation_set
from workflows.content_moderation.evaluation import (
    LOGGED_PARTS,
    LOOKS_LOG,
    DatasetSummary,
    EvalReport,
    LabelMetrics,
    evaluate_lexicon,
    evaluate_with_model,
    fit_and_save,
    record_look,
    write_json,
)
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.lexicon import DEFAULT_LEXICON_DIR, LexiconError, load_lexicon
from workflows.content_moderation.policy import DEFAULT_POLICY_PATH, PolicyError, load_policy
from workflows.content_moderation.scorer import DEFAULT_SCORER_PATH, SEED
from workflows.content_moderation.service import Moderator, moderate_lexicon_only
from workflows.content_moderation.verdict import Verdict

group = typer.Typer(no_args_is_help=True, help="Content moderation: evaluate, check the data.")


def moderate(
    text: Annotated[str | None, typer.Argument(help="The post (omit with --file).")] = None,
    file: Annotated[
        str | None,
        typer.Option("--file", "-f", help="Read the post as bytes from a file, or - for stdin."),
    ] = None,
    server_url: ServerUrlOption = None,
    database_url: TelemetryDbOption = None,
    no_model: Annotated[
        bool,
        typer.Option(
            "--no-model", help="Never call the model: the lexicon and the learned scorer judge."
        ),
    ] = False,
    json_out: Annotated[
        bool, typer.Option("--json", help="Print the verdict as JSON only.")
    ] = False,
) -> None:
    """Moderate one post: the verdict (decision, severity, categories, spans, rationale)."""
    if (text is None) == (file is None):
        raise fail(
            "give the post as an argument or with --file PATH (--file - for stdin)"
            + (", not both" if text is not None else ""),
            2,
        )
    if file is not None:
        if file != "-" and (problem := file_problem(file)) is not None:
            raise fail(f"--file {file} {problem}: give the path of a text file, or - for stdin", 2)
        try:
            post: str | bytes = sys.stdin.buffer.read() if file == "-" else Path(file).read_bytes()
        except OSError as exc:
            raise fail(f"cannot read {file}: {exc.strerror or exc}", 2) from exc
    else:
        post = text or ""
    said = post.decode("utf-8", "replace") if isinstance(post, bytes) else post
    if not any(ch.isprintable() and not ch.isspace() for ch in said):  # cs11: never ALLOW
        raise fail("the post is empty (only spaces or invisible characters): give its text", 2)
    # an empty --server-url or --database-url means "not given" here, as it always did
    settings = settings_from_flags(server_url=server_url or None, database_url=database_url or None)
    try:
        if no_model or not server_is_healthy(settings.server_url):
            workflow = ContentModerationWorkflow()
            if not no_model:
                err.print(
                    f"[yellow]no model server answers at {escape(settings.server_url)}: "
                    f"{offline_signals(workflow)}, without the model[/] "
                    "(start one with `orchestrator serve`)"
                )
            verdict = moderate_lexicon_only(post, workflow)
        else:
            check_storage(settings)  # the telemetry file, before the request is sent
            verdict = asyncio.run(_moderate_with_model(settings, post))
    except (OrchestratorError, ValueError) as exc:
        raise fail(exc, 2) from exc
    if json_out:
        console.print_json(verdict.model_dump_json())
        return
    _print_verdict(verdict)


def offline_signals(workflow: ContentModerationWorkflow) -> str:
    """What judges a post without a server: the lexicon and the learned scorer, or the
    lexicon alone with the reason the scorer is missing (escaped for rich markup)."""
    if workflow.scorer is not None:
        return f"lexicon and learned risk scorer {escape(workflow.scorer.version)}"
    return f"lexicon alone (risk scorer unavailable: {escape(workflow.scorer_note)})"


async def _moderate_with_model(settings: Settings, post: str | bytes) -> Verdict:
    """The verdict of the lexicon and the model on ``settings.server_url``; the request is
    stored in the telemetry store. Raises :class:`ModelCallError` when no verdict came back."""
    store = TelemetryStore(settings.database_url)
    client = make_client(settings)
    try:
        outcome = await Moderator(client, store).moderate(post)
    finally:
        await client.aclose()
        store.close()
    if outcome.verdict is None:
        raise ModelCallError(outcome.error or "moderation failed")
    if outcome.request_id:
        err.print(f"request {outcome.request_id} stored in {escape(settings.database_url)}")
    return outcome.verdict


def _print_verdict(verdict: Verdict) -> None:
    colour = {"allow": "green", "review": "yellow", "block": "red"}[verdict.decision.value]
    console.print(
        f"[bold {colour}]{verdict.decision.value.upper()}[/] severity {verdict.severity.value}"
        f"  ({verdict.source}, rule {verdict.policy_rule}, policy {verdict.policy_version})"
    )
    if verdict.categories:
        console.print(
            "categories: "
            + ", ".join(f"{c.category.value} {c.score:.2f}" for c in verdict.categories)
            + f"  MLCommons {verdict.mlcommons or '-'}  OpenAI {verdict.openai or '-'}"
        )
    for span in verdict.spans:
        console.print(
            f"  [{span.start}:{span.end}] {escape(span.text)!s} → {escape(span.term)} "
            f"({span.category.value}, {span.severity.value}, {span.how})"
        )
    console.print(escape(verdict.rationale))
    report = verdict.input
    if report.truncated or report.invalid_utf8_bytes or report.control_chars or report.empty:
        console.print(f"input: {report.model_dump()}")


@group.command("check")
def check(
    lexicon_dir: Annotated[
        Path | None, typer.Option(help="Lexicon folder (default: packaged).")
    ] = None,
    policy: Annotated[Path | None, typer.Option(help="Policy file (default: packaged).")] = None,
) -> None:
    """Validate the lexicon folder and the policy file; print their versions."""
    try:
        data = load_lexicon(lexicon_dir or DEFAULT_LEXICON_DIR)
        pol = load_policy(policy or DEFAULT_POLICY_PATH)
    except (LexiconError, PolicyError) as exc:
        raise fail(exc, 2) from exc
    console.print(
        f"lexicon {data.version}: {len(data.terms)} terms, {len(data.allow)} allow-listed words; "
        f"policy {pol.version}: {len(pol.rules)} rules"
    )


def _table(title: str, metrics: list[LabelMetrics]) -> Table:
    table = Table("label", "precision", "recall", "F1", "support", "predicted", "n", title=title)
    for m in metrics:
        table.add_row(m.label, f"{m.precision:.3f}", f"{m.recall:.3f}", f"{m.f1:.3f}",
                      str(m.support), str(m.predicted), str(m.n))  # fmt: skip
    return table


def _summary_table(title: str, rows: list[DatasetSummary]) -> Table:
    table = Table("dataset", "n", "P", "R", "F1", "macro F1", "anti-bias flagged",
                  "safe flagged", title=title)  # fmt: skip

    def rate(pair: tuple[int, int] | None) -> str:
        return "-" if pair is None else f"{pair[0]}/{pair[1]} ({pair[0] / pair[1]:.1%})"

    for r in rows:
        name = escape(r.dataset.removesuffix(".csv").removesuffix("_sample"))
        figures = (r.precision, r.recall, r.f1, r.macro_f1)
        table.add_row(name, str(r.n), *(f"{x:.3f}" for x in figures), rate(r.anti_bias),
                      rate(r.safe))  # fmt: skip
    return table


def print_report(report: EvalReport, *, brief: bool = False) -> None:
    """Print an evaluation as rich tables: the protocol's summary per dataset, then (unless
    ``brief``) overall, per language and per source, and COLD's fine-label confusion."""
    for system in report.systems:
        if system.summary:
            console.print(_summary_table(f"{system.system} — {report.split}", system.summary))
        if brief:
            continue
        console.print(
            _table(f"{system.system} — {report.split} split, n={system.n}", system.labels)
        )
        for lang, metrics in system.by_lang.items():
            console.print(_table(f"{system.system} — language {lang}", metrics))
        for source, metrics in system.by_source.items():
            console.print(_table(f"{system.system} — {source}", metrics))
        if system.confusion:
            conf = Table("COLD fine label", "allow", "review", "block",
                         title=f"{system.system} — decisions by COLD fine label")  # fmt: skip
            for fine, row in system.confusion.items():
                conf.add_row(fine, str(row["allow"]), str(row["review"]), str(row["block"]))
            console.print(conf)
    if report.model_rows:
        console.print(
            f"model judged {report.model_rows} posts in {report.seconds} s; "
            f"answers: {report.model_status}"
        )
    for note in report.note:
        console.print(f"[bold yellow]note:[/] {escape(note)}")


@group.command("eval")
def evaluate(
    split: Annotated[
        str,
        typer.Option(
            help="Protocol part: dev (tune on it); test, heldout-topic, fresh or "
            "fresh-heldout-topic (looked at once per release, each look logged); train; or the "
            "old 50/50 halves tune, test, all."
        ),
    ] = "dev",
    data_dir: Annotated[Path | None, typer.Option(help="Folder holding moderation/.")] = None,
    server_url: Annotated[
        str | None, typer.Option(help="Also run the model through this server.")
    ] = None,
    limit: Annotated[
        int, typer.Option(help="Posts the model judges (spread over the split).")
    ] = 60,
    concurrency: Annotated[int, typer.Option(help="Model requests in flight.")] = 8,
    database_url: TelemetryDbOption = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write the report here.")
    ] = None,
    brief: Annotated[
        bool, typer.Option("--brief", help="Print only the per-dataset summary table.")
    ] = False,
    log: Annotated[
        Path, typer.Option(help="Where a look at test or heldout-topic is recorded.")
    ] = LOOKS_LOG,
) -> None:
    """P/R/F1 per label and the protocol's per-dataset summary: lexicon alone, scorer alone
    and both on the whole split; with --server-url also the model alone and the combination
    on --limit posts of it. A look at ``test``, ``heldout-topic`` or a fresh part is appended
    to --log."""
    if split not in ("test", "tune", "all", *PARTS):
        raise fail(f"--split must be one of {', '.join(PARTS)}, tune or all", 2)
    if limit < 1 or concurrency < 1:
        raise fail("--limit and --concurrency must be at least 1", 2)
    settings = settings_from_flags(
        server_url=server_url, database_url=database_url, data_dir=data_dir
    )
    try:
        posts = load_moderation_set(settings.data_dir, split)
        with working(f"lexicon on {len(posts)} posts"):
            report = evaluate_lexicon(posts, split=split)
        print_report(report, brief=brief)
        if split in LOGGED_PARTS:
            record_look(log, report, " ".join(sys.argv[1:]))
        if server_url is None:
            console.print(
                "[bold yellow]note:[/] no --server-url: the lexicon alone was evaluated; pass "
                "--server-url to add the model alone and the combination."
            )
        else:
            step = max(1, len(posts) // limit)
            subset = posts[::step][:limit]
            model_report = asyncio.run(_with_model(settings, subset, concurrency, split))
            print_report(model_report)
            report = report.model_copy(update={"systems": report.systems + model_report.systems,
                                               "model_rows": model_report.model_rows,
                                               "model_status": model_report.model_status,
                                               "note": model_report.note,
                                               "seconds": model_report.seconds})  # fmt: skip
    except (OrchestratorError, ValueError) as exc:
        raise fail(exc, 2) from exc
    if json_path is not None:
        write_json(json_path, report)
        console.print(f"report written to {json_path}")


async def _with_model(
    settings: Settings, posts: list[LabelledPost], concurrency: int, split: str
) -> EvalReport:
    """The model alone and the combination on ``posts``, through ``settings.server_url``."""
    store = TelemetryStore(settings.database_url)
    client = make_client(settings)
    try:
        await client.check()
        with working(f"model on {len(posts)} posts via {settings.server_url}"):
            return await evaluate_with_model(
                posts, client, store, concurrency=concurrency, split=split
            )
    finally:
        await client.aclose()
        store.close()


def fit(
    data_dir: Annotated[Path | None, typer.Option(help="Folder holding moderation/.")] = None,
    out: Annotated[Path, typer.Option(help="Scorer file to write.")] = DEFAULT_SCORER_PATH,
    seed: Annotated[int, typer.Option(help="Seed of the folds and the solver.")] = SEED,
) -> None:
    """Fit the learned risk scorer (logistic regression over words and Chinese character
    n-grams, cues and lexicon hits) on the TRAIN part of COLD, Davidson and Jigsaw, calibrate
    it and choose its thresholds on the DEV part, with customer_service/ as ordinary (negative)
    sentences, and write it."""
    settings = settings_from_flags(data_dir=data_dir)
    try:
        with working("fitting the risk scorer on the tune split"):
            scorer = fit_and_save(settings.data_dir, out, seed=seed)
    except (OrchestratorError, ValueError) as exc:
        raise fail(exc, 2) from exc
    console.print(f"risk scorer {scorer.version} written to {out}")
    for key, m in scorer.meta["models"].items():
        console.print(
            f"  {key}: n={m['n']} positive={m['positives']} review≥{m['review']:.2f} "
            f"high≥{m['high']:.2f}; with the lexicon on {m['oof'].get('on', 'tune')}: {m['oof']}"
        )


group.command("fit")(fit)
