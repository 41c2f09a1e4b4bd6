"""``orchestrator classifier ...``: evaluate and tune the request classifier.

Commands (the ``classifier`` group):
    classify        route one text given as an argument, a file (--file PATH) or stdin (-)
    eval            rules vs learned vs combined on held-out phrasings; per-route P/R, ECE
    fit             fit the learned tier, thresholds and calibration on ``tune`` (cross-fitted)
    fit-thresholds  refit the thresholds (by cost) and calibration on ``tune`` only
    build-set       write the labelled request set as JSON lines
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from functools import partial
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from orchestrator.classifier import RuleClassifier, default_calibration_path, fit_semantic
from orchestrator.classifier.evaluation import (
    TARGET_ACCURACY,
    TARGET_CS_PRECISION,
    TARGET_FALLBACK_RECALL,
    EvalReport,
    TierRow,
    evaluate,
    floors,
    tier_row,
)
from orchestrator.classifier.examples import fit_examples, per_route_accuracy, save_fit
from orchestrator.classifier.fitting import (
    cross_fit,
    fit_all,
    fit_decisions,
    gather,
    rules_only,
)
from orchestrator.classifier.labelled_set import LabelledRequest, load_split
from orchestrator.classifier.learned import VERSION, LearnedModel, load_model
from orchestrator.classifier.loader import dump_calibration, load_calibration, load_rules
from orchestrator.classifier.models import CalibrationFile
from orchestrator.classifier.oof import FILE as OOF_FILE
from orchestrator.classifier.oof import OutOfFold, load_oof
from orchestrator.classifier.paths import (
    FITTED_DIR_ENV,
    default_model_path,
    default_rules_path,
)
from orchestrator.cli.common import console, err, fail
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.core.registry import plugin_route_specs
from orchestrator.exceptions import OrchestratorError, UserError
from orchestrator.outfiles import atomic_write_text
from orchestrator.request import Request
from orchestrator.routes import FALLBACK, Route, RouteSpec, the_route

group = typer.Typer(no_args_is_help=True, help="Evaluate and tune the request classifier.")

DataDir = Annotated[
    Path, typer.Option(help="Folder with customer_service/, moderation/, spreadsheets/.")
]
RulesOpt = Annotated[Path | None, typer.Option(help="Rules file (default: the packaged one).")]
CapOpt = Annotated[int, typer.Option(min=0, help="Most rows per source file and split (0 = all).")]
JobsOpt = Annotated[
    int,
    typer.Option(
        min=1, help="Processes that fit the cross-fitting folds' models (default: the CPU cores)."
    ),
]
#: The CPU cores this process may use.
CORES = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


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
            m.route,
            f"{m.precision:.3f}",
            f"{m.recall:.3f}",
            f"{m.f1:.3f}",
            str(m.support),
            str(m.predicted),
        )
    out.print(table)
    names = list(rep.confusion)
    confusion = Table("true \\ predicted", *names)
    for t in names:
        confusion.add_row(t, *(str(rep.confusion[t][p]) for p in names))
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


def read_request_text(text: str | None, file: Path | None) -> str | bytes:
    """The request text from exactly one of: the argument, ``--file PATH``, or ``-`` (stdin).

    A long request (a 300,000-character paste) cannot be passed as an argument (the OS limits
    one argument to about 128 KiB), so it comes from a file or standard input. The bytes are
    returned undecoded: :meth:`RuleClassifier.classify_text` says what is wrong with text that
    is not UTF-8.

    Raises:
        typer.BadParameter: None or both given, or the file cannot be read (says which).
    """
    if file is not None and text not in (None, ""):
        raise typer.BadParameter("give the text as an argument or with --file, not both")
    if file is not None:
        if str(file) == "-":
            return sys.stdin.buffer.read()
        try:
            return file.read_bytes()
        except OSError as exc:
            raise typer.BadParameter(f"cannot read --file {file}: {exc.strerror or exc}") from exc
    if text == "-":
        return sys.stdin.buffer.read()
    if text is None:
        raise typer.BadParameter(
            "no request text: pass it as an argument, with --file PATH, or '-' to read stdin"
        )
    return text


@group.command("classify")
def classify_cmd(
    text: Annotated[
        str | None, typer.Argument(help="Request text, or '-' to read it from stdin.")
    ] = None,
    file: Annotated[
        Path | None,
        typer.Option("--file", "-f", help="Read the request text from this file ('-': stdin)."),
    ] = None,
    attachment: Annotated[
        list[str] | None, typer.Option(help="Attachment file name (repeatable).")
    ] = None,
    channel: Annotated[str | None, typer.Option(help="Channel of the request.")] = None,
    semantic: Annotated[
        bool, typer.Option(help="Consult the semantic tier (MiniLM) when the others are unsure.")
    ] = False,
) -> None:
    """Route one request: the route, confidence, each tier's contribution and fired signals.

    Text the classifier cannot read (empty, binary, not UTF-8, over the length limit) still
    prints its fallback result, and exits with status 2 and the reason on standard error.
    """
    try:
        body = read_request_text(text, file)
    except typer.BadParameter as exc:
        raise fail(str(exc), 2) from exc
    try:  # a bad routes file or plugin route: one line, exit 2, as `batch` says it
        _, routes = _declared(None)  # the installed workflows' routes, as run and batch see them
        clf = RuleClassifier(
            reload_interval=None, semantic=True if semantic else None, routes=routes
        )
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    result = clf.classify_text(body, attachments=attachment or (), channel=channel)
    console.print_json(result.model_dump_json())
    sem = result.tier("semantic")
    if semantic and sem is not None and not sem.consulted and "extra" in sem.note:
        err.print(f"[yellow]warning:[/] {escape(sem.note)}", highlight=False)  # not installed
    if result.fallback_reason == "invalid_input":
        raise fail(result.reason, 2)


def _rows(data_dir: Path, split: str, cap: int) -> list[LabelledRequest]:
    if split not in ("tune", "test", "all"):
        raise typer.BadParameter("split must be tune, test or all")
    return load_split(data_dir, split, cap=cap)  # type: ignore[arg-type]  # split is checked above


def _p50_us(fn: Callable[[Request], object], items: Sequence[Request]) -> float:
    """Median wall time of ``fn`` per item, in microseconds (one thread, one pass)."""
    samples: list[float] = []
    for item in items:
        t0 = time.perf_counter_ns()
        fn(item)
        samples.append((time.perf_counter_ns() - t0) / 1000)
    samples.sort()
    return samples[len(samples) // 2]


def print_tiers(
    rows: list[TierRow],
    out: Console = console,
    specs: Sequence[RouteSpec] = (),
) -> None:
    """The comparison table: accuracy, per route and language (with the floors ``specs``
    declare), fallback recall, the precision of the route that holds customers' threads."""
    floor_of = floors(specs)
    precise = the_route(specs, "holds_threads") or "the thread-holding route"
    cells = sorted({k for r in rows for k in r.by_route_lang})
    table = Table("", *(r.name for r in rows))
    table.add_row("accuracy", *(f"{r.accuracy:.3f}" for r in rows))
    for cell in cells:
        route, lang = cell.split("/")
        floor = floor_of.get((Route(route), lang))
        label = f"{cell} (floor {floor})" if floor is not None else cell
        table.add_row(
            label,
            *(
                ("[red]" if floor is not None and r.by_route_lang.get(cell, 1) < floor else "")
                + f"{r.by_route_lang.get(cell, float('nan')):.3f}"
                for r in rows
            ),
        )
    table.add_row(
        f"fallback recall (target {TARGET_FALLBACK_RECALL})",
        *(f"{r.fallback_recall:.3f}" for r in rows),
    )
    table.add_row(
        f"{precise} precision (target {TARGET_CS_PRECISION})",
        *(f"{r.cs_precision:.3f}" for r in rows),
    )
    tiers = sorted({k for r in rows for k in r.decided_by})
    for tier in tiers:
        table.add_row(
            f"decided by the {tier} tier",
            *(f"{r.decided_by[tier]:.1%}" if tier in r.decided_by else "-" for r in rows),
        )
    table.add_row(
        "p50 per request, one thread (µs)",
        *(f"{r.p50_us:.1f}" if r.p50_us is not None else "-" for r in rows),
    )
    out.print(table)
    out.print(f"target accuracy on unseen phrasings: {TARGET_ACCURACY}")


@group.command("eval")
def eval_cmd(
    split: Annotated[str, typer.Option(help="tune, test (held out) or all.")] = "test",
    data_dir: DataDir = DEFAULT_DATA_DIR,
    rules: RulesOpt = None,
    calibration: Annotated[
        Path | None, typer.Option(help="Calibration file (default: the packaged one).")
    ] = None,
    model: Annotated[
        Path | None,
        typer.Option(help=f"Learned tier (default: the packaged learned.v{VERSION}.npz)."),
    ] = None,
    cap: CapOpt = 400,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the report.")] = None,
    errors: Annotated[int, typer.Option(help="Print this many misrouted examples.")] = 0,
) -> None:
    """Rules vs learned vs combined on the held-out split (split by phrasing family)."""
    try:
        rows = _rows(data_dir, split, cap)
        model_path = model or (default_model_path() if default_model_path().exists() else False)
        _, plugins = _declared(rules)
        make = partial(RuleClassifier, rules_path=rules, reload_interval=None, routes=plugins)
        clf = make(
            calibration_path=calibration
            or (default_calibration_path() if default_calibration_path().exists() else False),
            model_path=model_path if rules is None or model else False,
        )
        rules_only = make(calibration_path=False, model_path=False)
        requests = [r.to_request() for r in rows]
        rep, preds = evaluate(rows, lambda r: clf.classify(r.to_request()))
        rule_preds = [rules_only.classify(q) for q in requests]
        held = the_route(clf.route_specs, "holds_threads")
        tiers = [
            tier_row(
                "rules",
                rows,
                [p.route for p in rule_preds],
                _p50_us(rules_only.classify, requests),
                precise=held,
            )
        ]
        if clf.model is not None:
            learned_alone = [_learned_only(clf, q) for q in requests]
            tiers.append(tier_row("n-gram model alone", rows, learned_alone, precise=held))
        combined = tier_row(
            "combined",
            rows,
            [p.route for p in preds],
            _p50_us(clf.classify, requests),
            precise=held,
        )
        decided = Counter(next((t.tier for t in p.tiers if t.decided), "none") for p in preds)
        tiers.append(
            combined.model_copy(
                update={"decided_by": {k: v / len(preds) for k, v in sorted(decided.items())}}
            )
        )
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    print_tiers(tiers, specs=clf.route_specs)
    print_report(f"combined classifier on {split} (rules {clf.version})", rep)
    shown = 0
    for row, p in zip(rows, preds, strict=True):
        if shown >= errors:
            break
        if p.route != row.route:
            shown += 1
            console.print(
                f"[red]{row.route} -> {p.route}[/] {row.source}: {row.text[:100]!r} | {p.reason}"
            )
    if json_out:
        payload = {"report": rep.model_dump(mode="json"), "tiers": [t.model_dump() for t in tiers]}
        atomic_write_text(json_out, json.dumps(payload, indent=2))


def _learned_only(clf: RuleClassifier, request: Request) -> Route:
    """The text-only model's decision (no rule features), with the live thresholds."""
    assert clf.model is not None
    feats, _, _ = clf.evidence(request)
    probs = clf.model.probabilities(feats, combined=False)
    order = probs.argsort()[::-1]
    c1, p1, p2 = clf.model.classes[order[0]], float(probs[order[0]]), float(probs[order[1]])
    t = clf.thresholds
    if c1 == FALLBACK or p1 < t.min_score or p1 - p2 < t.ambiguity_margin:
        return FALLBACK
    return c1


Cost = Annotated[float, typer.Option(help="Cost of a wrong route (must exceed --handoff).")]
_OUT_DIR_HELP = (
    f"Folder for learned.v{VERSION}.npz and calibration.toml (default: the rules file's folder; "
    "for the packaged rules, orchestrator/rules/: the shipped model and calibration are "
    "replaced, and a running classifier reloads them)."
)
_OUT_HELP = (
    "Where to write the calibration file (default: calibration.toml beside the rules file; for "
    "the packaged rules, the shipped one is replaced)."
)
Handoff = Annotated[float, typer.Option(help="Cost of handing a request to a person.")]


@group.command("fit")
def fit_model_cmd(
    data_dir: DataDir = DEFAULT_DATA_DIR,
    rules: RulesOpt = None,
    out_dir: Annotated[Path | None, typer.Option(help=_OUT_DIR_HELP)] = None,
    wrong_route: Cost = 5.0,
    handoff: Handoff = 1.0,
    folds: Annotated[
        int | None,
        typer.Option(min=2, help="Cross-fitting folds (by family); default 5, 3 with --examples."),
    ] = None,
    seed: Annotated[int, typer.Option(help="Orders the cross-fitting folds.")] = 0,
    cap: CapOpt = 400,
    jobs: JobsOpt = CORES,
    examples: Annotated[
        Path | None,
        typer.Option(
            help="CSV of your own examples (columns text, route, optionally lang): learn "
            "your routes besides the built-in ones. Writes to --out-dir (default "
            f"${FITTED_DIR_ENV}, else runs/classifier), never over the packaged files."
        ),
    ] = None,
    full: Annotated[
        bool,
        typer.Option(
            "--full",
            help="With --examples: refit every route on the built-in rows and your examples "
            "(minutes) instead of adding your new routes to the packaged model (seconds).",
        ),
    ] = False,
) -> None:
    """Fit the learned tier, thresholds (by cost) and calibration on the tune split only;
    with ``--examples``, on your routes' examples too (a held-out part of them is scored)."""
    if examples is not None:
        _fit_examples(
            examples,
            data_dir,
            rules,
            out_dir,
            (folds or 3, seed, cap, jobs),
            (wrong_route, handoff),
            full,
        )
        return
    try:
        rows = _rows(data_dir, "tune", cap)
        model, fitted = fit_all(
            rows,
            rules_path=str(rules) if rules else None,
            folds=folds or 5,
            seed=seed,
            wrong_route=wrong_route,
            handoff=handoff,
            fitted_on=f"tune split of {data_dir.name}/ (n={len(rows)}, cap={cap})",
            workers=jobs,
            oof_out=_folder(out_dir, rules) / OOF_FILE,
        )
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    folder = _folder(out_dir, rules)
    model.save(folder / f"learned.v{VERSION}.npz")
    atomic_write_text(folder / "calibration.toml", dump_calibration(fitted))
    t = fitted.thresholds
    console.print(
        f"fitted on {len(rows)} tune requests: {model.meta['n_features']} features; "
        f"sure_score {t.sure_score}, min_score {t.min_score}, ambiguity_margin "
        f"{t.ambiguity_margin} ({fitted.fitted_on}); wrote {folder}"
    )


def _folder(out_dir: Path | None, rules: Path | None) -> Path:
    """Where ``fit`` writes the model (made if missing): ``out_dir``, else beside the rules."""
    folder = out_dir or (default_model_path().parent if rules is None else Path(rules).parent)
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _declared(rules: Path | None) -> tuple[tuple[RouteSpec, ...], tuple[RouteSpec, ...]]:
    """The routes the rules file declares, and those installed workflows declare besides."""
    file_specs = load_rules(rules or default_rules_path())[0].route
    taken = {s.name for s in file_specs}
    return file_specs, tuple(p for p in plugin_route_specs() if p.name not in taken)


def _base_model(rules: Path | None) -> tuple[LearnedModel, CalibrationFile, OutOfFold | None]:
    """The fitted model, calibration and out-of-fold logits (:mod:`~.classifier.oof`, None
    when absent) that ``fit --examples`` adds routes to: those beside ``rules`` (the packaged
    ones for the packaged rules; never ``$ORCH_CLASSIFIER_DIR``'s, which may hold an earlier
    fit of the same routes).

    Raises:
        UserError: No model or calibration there (says to pass --full).
        RulesError: A file is unreadable.
    """
    folder = (rules or default_rules_path()).parent
    model_path, cal_path = folder / f"learned.v{VERSION}.npz", folder / "calibration.toml"
    if not model_path.exists() or not cal_path.exists():
        raise UserError(
            f"no fitted model and calibration in {folder} to add routes to; pass --full to fit "
            "every route"
        )
    return load_model(model_path), load_calibration(cal_path), load_oof(folder / OOF_FILE)


def _fit_examples(
    examples: Path,
    data_dir: Path,
    rules: Path | None,
    out_dir: Path | None,
    fitting: tuple[int, int, int, int],
    costs: tuple[float, float],
    full: bool,
) -> None:
    """``fit --examples``: fit, write the versioned files, score the held-out examples."""
    folds, seed, cap, jobs = fitting
    t0 = time.perf_counter()
    try:
        file_specs, plugins = _declared(rules)
        base = None if full else _base_model(rules)
        fit = fit_examples(
            examples,
            _rows(data_dir, "tune", cap),
            routes=plugins,
            declared=[s.name for s in file_specs],
            rules_path=str(rules) if rules else None,
            folds=folds,
            seed=seed,
            wrong_route=costs[0],
            handoff=costs[1],
            workers=jobs,
            base=base[:2] if base is not None else None,
            oof=base[2] if base is not None else None,
        )
        folder = out_dir or Path(os.environ.get(FITTED_DIR_ENV) or "runs/classifier")
        kept = save_fit(fit, folder, examples)
        clf = RuleClassifier(
            rules_path=rules,
            calibration_path=folder / "calibration.toml",
            model_path=folder / f"learned.v{VERSION}.npz",
            reload_interval=None,
            routes=plugins,
        )
        held = fit.held_out
        accuracy = per_route_accuracy(held, [clf.classify(r.to_request()).route for r in held])
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    table = Table("route", "held-out accuracy", "n")
    for route, (acc, n) in sorted(accuracy.items()):
        table.add_row(route, f"{acc:.3f}", str(n))
    console.print(table)
    overlaps = fit.model.meta.get("overlaps")
    for line in overlaps if isinstance(overlaps, list) else ():  # fitting.overlaps: examples
        console.print(f"[yellow]warning:[/] {escape(str(line))}")  # a built-in route keeps
    if fit.semantic is None and fit_semantic.load_encoder() is None:  # cached by the fit
        console.print(f"[yellow]note:[/] {escape(fit_semantic.MISSING)}")
    console.print(
        f"fitted {fit.version} on {fit.calibration.fitted_on} in "
        f"{time.perf_counter() - t0:.1f} s: classes {', '.join(fit.model.classes)}; wrote "
        f"{folder} (kept in {kept})"
    )
    if Path(os.environ.get(FITTED_DIR_ENV) or "").resolve() != folder.resolve():
        console.print(f"use it: export {FITTED_DIR_ENV}={folder.resolve()}")


@group.command("fit-thresholds")
def fit_cmd(
    data_dir: DataDir = DEFAULT_DATA_DIR,
    rules: RulesOpt = None,
    out: Annotated[Path | None, typer.Option(help=_OUT_HELP)] = None,
    wrong_route: Cost = 5.0,
    handoff: Handoff = 1.0,
    folds: Annotated[int, typer.Option(min=2, help="Cross-fitting folds (by family).")] = 5,
    cap: CapOpt = 400,
    jobs: JobsOpt = CORES,
) -> None:
    """Refit thresholds (by cost) and calibration on the tune split only (cross-fitted)."""
    try:
        rows = _rows(data_dir, "tune", cap)
        clf = rules_only(rules)
        ev = gather(clf, rows)
        fitted = fit_decisions(
            rows,
            ev,
            *cross_fit(rows, ev, folds=folds, workers=jobs),
            wrong_route=wrong_route,
            handoff=handoff,
            fitted_on=f"tune split of {data_dir.name}/ (n={len(rows)}, cap={cap})",
            rules_sha=clf.version,
        )
    except OrchestratorError as exc:
        raise fail(exc, 2) from exc
    target = out or (
        default_calibration_path() if rules is None else Path(rules).with_name("calibration.toml")
    )
    atomic_write_text(target, dump_calibration(fitted))
    t = fitted.thresholds
    console.print(
        f"fitted on {len(rows)} tune requests: min_score {t.min_score}, "
        f"ambiguity_margin {t.ambiguity_margin}, sure_score {t.sure_score} "
        f"({fitted.fitted_on}); wrote {target}"
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
    lines = (json.dumps(row.model_dump(mode="json"), ensure_ascii=False) + "\n" for row in rows)
    atomic_write_text(out, "".join(lines))
    console.print(f"wrote {len(rows)} rows to {out}")


def register(app: typer.Typer) -> None:
    """Add the ``classifier`` group to the root app."""
    app.add_typer(group, name="classifier")
