"""``orchestrator classifier ...``: evaluate and tune the request classifier.

Commands (the ``classifier`` group):
    eval            accuracy, per-route precision/recall, confusion matrix and ECE on a split
    fit-thresholds  fit min_score, ambiguity_margin and the confidence calibration on ``tune``
    build-set       write the labelled request set as JSON lines
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from orchestrator.classifier import RuleClassifier, default_calibration_path
from orchestrator.classifier.evaluation import EvalReport, evaluate, fit_thresholds
from orchestrator.classifier.labelled_set import LabelledRequest, load_split
from orchestrator.classifier.loader import dump_calibration
from orchestrator.cli.common import console, fail
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.exceptions import OrchestratorError
from orchestrator.routes import Route

group = typer.Typer(no_args_is_help=True, help="Evaluate and tune the request classifier.")

DataDir = Annotated[
    Path, typer.Option(help="Folder with customer_service/, moderation/, spreadsheets/.")
]
RulesOpt = Annotated[Path | None, typer.Option(help="Rules file (default: the packaged one).")]
CapOpt = Annotated[int, typer.Option(help="Most rows per source file and split (0 = all).")]


def print_report(title: str, rep: EvalReport, out: Console = console) -> None:
    """Print an :class:`EvalReport` as rich tables."""
    langs = ", ".join(
        f"{k} {v:.3f} (n={rep.n_by_lang[k]})" for k, v in rep.accuracy_by_lang.items()
    )
    out.print(f"[bold]{title}[/]: n={rep.n}  accuracy {rep.accuracy:.3f}  ECE {rep.ece:.3f}")
    out.print(f"  by language: {langs}")
    out.print(f"  fallback reasons: {rep.fallback_reasons}")
    table = Table("route", "precision", "recall", "F1", "support", "predicted")
    for m in rep.routes:
        table.add_row(
            m.route.value,
            f"{m.precision:.3f}",
            f"{m.recall:.3f}",
            f"{m.f1:.3f}",
            str(m.support),
            str(m.predicted),
        )
    out.print(table)
    confusion = Table("true \\ predicted", *(r.value for r in Route))
    for t in Route:
        confusion.add_row(t.value, *(str(rep.confusion[t.value][p.value]) for p in Route))
    out.print(confusion)
    sources = Table("source", "accuracy")
    for k, v in rep.accuracy_by_source.items():
        sources.add_row(k, f"{v:.3f}")
    out.print(sources)
    rel = Table("confidence bin", "n", "mean confidence", "accuracy")
    for b in rep.reliability:
        rel.add_row(
            f"[{b.low:.1f}, {b.high:.1f})", str(b.count), f"{b.confidence:.3f}", f"{b.accuracy:.3f}"
        )
    out.print(rel)


def _rows(data_dir: Path, split: str, cap: int) -> list[LabelledRequest]:
    if split not in ("tune", "test", "all"):
        raise typer.BadParameter("split must be tune, test or all")
    return load_split(data_dir, split, cap=cap)  # type: ignore[arg-type]


@group.command("eval")
def eval_cmd(
    split: Annotated[str, typer.Option(help="tune, test (held out) or all.")] = "test",
    data_dir: DataDir = DEFAULT_DATA_DIR,
    rules: RulesOpt = None,
    calibration: Annotated[
        Path | None, typer.Option(help="Calibration file (default: the packaged one).")
    ] = None,
    cap: CapOpt = 400,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the report.")] = None,
    errors: Annotated[int, typer.Option(help="Print this many misrouted examples.")] = 0,
) -> None:
    """Accuracy, per-route precision/recall, confusion matrix and ECE on the labelled set."""
    try:
        rows = _rows(data_dir, split, cap)
        clf = RuleClassifier(
            rules_path=rules,
            calibration_path=calibration
            or (default_calibration_path() if default_calibration_path().exists() else False),
            reload_interval=None,
        )
        rep, preds = evaluate(rows, lambda r: clf.classify(r.to_request()))
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    print_report(f"rule classifier on {split} (rules {clf.version})", rep)
    shown = 0
    for row, p in zip(rows, preds, strict=True):
        if shown >= errors:
            break
        if p.route != row.route:
            shown += 1
            console.print(
                f"[red]{row.route.value} -> {p.route.value}[/] {row.source}: "
                f"{row.text[:100]!r} | {p.reason}"
            )
    if json_out:
        json_out.write_text(rep.model_dump_json(indent=2))


@group.command("fit-thresholds")
def fit_cmd(
    data_dir: DataDir = DEFAULT_DATA_DIR,
    rules: RulesOpt = None,
    out: Annotated[Path | None, typer.Option(help="Where to write the calibration file.")] = None,
    objective: Annotated[str, typer.Option(help="accuracy or balanced.")] = "accuracy",
    cap: CapOpt = 400,
) -> None:
    """Fit min_score, ambiguity_margin and the confidence calibration on the tune split only."""
    try:
        rows = _rows(data_dir, "tune", cap)
        clf = RuleClassifier(
            rules_path=rules,
            calibration_path=False,
            min_score=0.0,
            ambiguity_margin=0.0,
            reload_interval=None,
        )
        raw = [clf.classify(r.to_request()) for r in rows]
        fitted = fit_thresholds(
            rows,
            raw,
            objective=objective,
            fitted_on=f"tune split of {data_dir.name}/ (n={len(rows)}, cap={cap})",
            rules_sha=clf.version,
        )
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    target = out or (
        default_calibration_path() if rules is None else Path(rules).with_name("calibration.toml")
    )
    target.write_text(dump_calibration(fitted), encoding="utf-8")
    t = fitted.thresholds
    console.print(
        f"fitted on {len(rows)} tune requests: min_score {t.min_score}, "
        f"ambiguity_margin {t.ambiguity_margin} ({fitted.fitted_on}); wrote {target}"
    )


@group.command("build-set")
def build_set_cmd(
    out: Annotated[Path, typer.Argument(help="JSON-lines file to write.")],
    data_dir: DataDir = DEFAULT_DATA_DIR,
    split: Annotated[str, typer.Option(help="tune, test or all.")] = "all",
    cap: CapOpt = 400,
) -> None:
    """Write the labelled request set: each request with its route (one JSON object per line)."""
    try:
        rows = _rows(data_dir, split, cap)
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    with out.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row.model_dump(mode="json"), ensure_ascii=False) + "\n")
    console.print(f"wrote {len(rows)} rows to {out}")


def register(app: typer.Typer) -> None:
    """Add the ``classifier`` group to the root app."""
    app.add_typer(group, name="classifier")
