"""Evaluate the moderation on the labelled set: precision, recall and F1 per label for the
lexicon alone, the model alone and their combination.

Precision = TP / (TP + FP), recall = TP / (TP + FN), F1 = their harmonic mean (van Rijsbergen,
*Information Retrieval*, 1979); a ratio with a zero denominator is reported as 0. Each label is
scored only on rows whose source annotates it (:mod:`.dataset`). ``allow`` is scored too, as
the negative of ``flagged`` (how well clean posts get through).

The three systems come from one run per post: the combined workflow's verdict carries the
lexicon's and the model's judgements, and :func:`~.judgement.build_verdict` re-decides each
alone with the other side ``absent`` under the same policy table.

With the offline random-weight checkpoint the model's answers are noise: its figures measure
the harness, not a model, and :data:`NOISE_WARNING` says so wherever they are printed.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from orchestrator.core.client import ModelClient
from orchestrator.outfiles import atomic_write_text
from orchestrator.telemetry import TelemetryStore
from workflows.content_moderation.dataset import EVAL_LABELS, LabelledPost, predicted
from workflows.content_moderation.fitting import fit_scorer
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.inputs import prepare_post
from workflows.content_moderation.judgement import build_verdict, lexicon_findings, lexicon_state
from workflows.content_moderation.scorer import (
    SEED,
    RiskScorer,
    file_sha256,
    save_scorer,
)
from workflows.content_moderation.service import Moderator, moderate_lexicon_only
from workflows.content_moderation.verdict import Category, Decision, Severity, Span, Verdict

NOISE_WARNING = (
    "The model figures come from the offline random-weight checkpoint: its answers are noise "
    "(schema-valid only because the server enforces the schema; an answer the token limit "
    "cuts short, finish_reason=length, counts as unparsed and the lexicon decides). They test "
    "the harness, not a model; expect them near the base rate."
)
SYSTEMS = ("lexicon", "model", "combined")
#: Systems that need no server: the lexicon alone, the scorer alone, and both (what
#: ``orchestrator moderate`` does without a server).
OFFLINE_SYSTEMS = ("lexicon", "scorer", "lexicon+scorer")
ScoredLabel = str  # an EvalLabel or "allow"


class LabelMetrics(BaseModel):
    """Precision/recall/F1 of one label.

    Attributes:
        label: ``flagged``, ``hate``, ``offensive`` or ``allow``.
        n: Rows scored for this label.
        support: Rows whose true label is positive.
        predicted: Rows predicted positive.
        tp: True positives.
        precision: TP / predicted (0 when nothing is predicted).
        recall: TP / support (0 when there is no support).
        f1: Harmonic mean of precision and recall (0 when both are 0).
    """

    model_config = ConfigDict(frozen=True)

    label: ScoredLabel
    n: int
    support: int
    predicted: int
    tp: int
    precision: float
    recall: float
    f1: float


class DatasetSummary(BaseModel):
    """The protocol's figures of one dataset (issue 47): the flagged class and macro F1.

    Attributes:
        dataset: A source file name, or ``zh (all COLD)`` for every Chinese post.
        n: Posts.
        precision: Flagged-class precision (0..1).
        recall: Flagged-class recall.
        f1: Flagged-class F1.
        macro_f1: Mean of the flagged-class F1 and the allowed-class F1 (COLD's paper reports
            this).
        anti_bias: ``[flagged, total]`` of COLD's anti-bias posts (fine label 3), when present.
        safe: ``[flagged, total]`` of the other safe COLD posts, when present.
    """

    model_config = ConfigDict(frozen=True)

    dataset: str
    n: int
    precision: float
    recall: float
    f1: float
    macro_f1: float
    anti_bias: tuple[int, int] | None = None
    safe: tuple[int, int] | None = None


class SystemReport(BaseModel):
    """Metrics of one system on a set of rows: overall, per language, per source."""

    model_config = ConfigDict(frozen=True)

    system: str
    n: int
    labels: list[LabelMetrics]
    by_lang: dict[str, list[LabelMetrics]]
    by_source: dict[str, list[LabelMetrics]]
    confusion: dict[str, dict[str, int]] = {}
    summary: list[DatasetSummary] = []


class EvalReport(BaseModel):
    """A whole evaluation.

    Attributes:
        split: The split evaluated (``test`` is held out).
        systems: One report per system that ran.
        model_rows: Rows the model judged (the lexicon judges every row of the split).
        model_status: Counts of the model's answer status (ok / unparsed / error).
        note: Warnings to print with the figures (the noise warning when the model ran).
        seconds: Wall time of the model run, when it ran.
    """

    model_config = ConfigDict(frozen=True)

    split: str
    systems: list[SystemReport]
    model_rows: int = 0
    model_status: dict[str, int] = {}
    note: list[str] = []
    seconds: float | None = None


def label_metrics(pairs: Iterable[tuple[bool, bool]], label: ScoredLabel) -> LabelMetrics:
    """Metrics from ``(true, predicted)`` pairs."""
    n = support = pred = tp = 0
    for truth, guess in pairs:
        n += 1
        support += truth
        pred += guess
        tp += truth and guess
    precision = tp / pred if pred else 0.0
    recall = tp / support if support else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return LabelMetrics(
        label=label,
        n=n,
        support=support,
        predicted=pred,
        tp=tp,
        precision=round(precision, 4),
        recall=round(recall, 4),
        f1=round(f1, 4),
    )


def score(posts: Sequence[LabelledPost], verdicts: Sequence[Verdict]) -> list[LabelMetrics]:
    """Per-label metrics of ``verdicts`` (same order as ``posts``); labels with no scored row
    are left out."""
    guesses = [predicted(v) for v in verdicts]
    out = []
    for label in EVAL_LABELS:
        pairs = [(p.truth[label], g[label]) for p, g in zip(posts, guesses, strict=True)
                 if label in p.truth]  # fmt: skip
        if pairs:
            out.append(label_metrics(pairs, label))
    allow = [
        (not p.truth["flagged"], not g["flagged"]) for p, g in zip(posts, guesses, strict=True)
    ]
    if allow:
        out.append(label_metrics(allow, "allow"))
    return out


def dataset_summary(
    name: str, posts: Sequence[LabelledPost], verdicts: Sequence[Verdict]
) -> DatasetSummary:
    """The protocol's figures of one group of posts (see :class:`DatasetSummary`)."""
    flags = [v.decision is not Decision.ALLOW for v in verdicts]
    truth = [p.truth["flagged"] for p in posts]
    pos = label_metrics(zip(truth, flags, strict=True), "flagged")
    neg = label_metrics(((not t, not f) for t, f in zip(truth, flags, strict=True)), "allow")

    def rate(keep: Callable[[LabelledPost], bool]) -> tuple[int, int] | None:
        chosen = [f for p, f in zip(posts, flags, strict=True) if keep(p)]
        return (sum(chosen), len(chosen)) if chosen else None

    return DatasetSummary(
        dataset=name,
        n=len(posts),
        precision=pos.precision,
        recall=pos.recall,
        f1=pos.f1,
        macro_f1=round((pos.f1 + neg.f1) / 2, 4),
        anti_bias=rate(lambda p: p.fine == "anti-bias"),
        safe=rate(
            lambda p: p.topic is not None and not p.truth["flagged"] and p.fine != "anti-bias"
        ),
    )


def summaries(posts: Sequence[LabelledPost], verdicts: Sequence[Verdict]) -> list[DatasetSummary]:
    """One :class:`DatasetSummary` per source file, then one for every Chinese post."""
    groups: dict[str, list[int]] = {}
    for i, p in enumerate(posts):
        groups.setdefault(p.source, []).append(i)
    zh = [i for i, p in enumerate(posts) if p.lang == "zh"]
    if zh:
        groups["zh (all COLD)"] = zh
    return [
        dataset_summary(name, [posts[i] for i in idx], [verdicts[i] for i in idx])
        for name, idx in groups.items()
    ]


def system_report(
    system: str, posts: Sequence[LabelledPost], verdicts: Sequence[Verdict]
) -> SystemReport:
    """Overall, per-language and per-source metrics of one system."""

    def by(key: Callable[[LabelledPost], str]) -> dict[str, list[LabelMetrics]]:
        groups: dict[str, list[int]] = {}
        for i, p in enumerate(posts):
            groups.setdefault(key(p), []).append(i)
        return {
            k: score([posts[i] for i in idx], [verdicts[i] for i in idx])
            for k, idx in sorted(groups.items())
        }

    return SystemReport(
        system=system,
        n=len(posts),
        labels=score(posts, verdicts),
        by_lang=by(lambda p: p.lang),
        by_source=by(lambda p: p.source),
        confusion=fine_confusion(posts, verdicts),
        summary=summaries(posts, verdicts),
    )


def fine_confusion(
    posts: Sequence[LabelledPost], verdicts: Sequence[Verdict]
) -> dict[str, dict[str, int]]:
    """Decisions by fine label: ``{fine label: {allow|review|block: count}}``, for posts whose
    source has one (COLD's ``fine-grained-label`` when the file has that column: attack on an
    individual, attack on a group, anti-bias, other safe; else COLD's ``topic`` with its
    coarse label, e.g. ``region/offensive``)."""
    out: dict[str, dict[str, int]] = {}
    for p, v in zip(posts, verdicts, strict=True):
        if p.fine is None:
            continue
        row = out.setdefault(p.fine, {"allow": 0, "review": 0, "block": 0})
        row[v.decision.value] += 1
    return dict(sorted(out.items()))


def evaluate_lexicon(
    posts: Sequence[LabelledPost], workflow: ContentModerationWorkflow | None = None, *,
    split: str = "test",
) -> EvalReport:  # fmt: skip
    """The lexicon alone on ``posts`` (no server)."""
    workflow = workflow or ContentModerationWorkflow()
    lex = [moderate_lexicon_only(p.text, workflow, scorer=False) for p in posts]
    if workflow.scorer is None:
        return EvalReport(
            split=split,
            systems=[system_report("lexicon", posts, lex)],
            note=[f"scorer unavailable: {workflow.scorer_note}"],
        )
    both = [moderate_lexicon_only(p.text, workflow) for p in posts]
    alone = [
        build_verdict(
            prepare_post(p.text, workflow.policy.limits), workflow.policy, lexicon=None,
            model=None, source="model", scorer=v.scorer,
        )
        for p, v in zip(posts, both, strict=True)
    ]  # fmt: skip
    return EvalReport(
        split=split,
        systems=[
            system_report("lexicon", posts, lex),
            system_report("scorer", posts, alone),
            system_report("lexicon+scorer", posts, both),
        ],
    )


def critical_hate(span: Span) -> bool:
    """A critical hate term that is no mention: the verdict labels it hate whatever the
    scorer's hate model says (:func:`~.judgement.build_verdict`)."""
    critical = span.severity is Severity.CRITICAL
    return span.category is Category.HATE and critical and not span.mention


def fit_and_save(data_dir: Path, out: Path, *, seed: int | None = None) -> RiskScorer:
    """Fit the risk scorer on the **train** part of ``data_dir/moderation``, calibrate it on
    the **dev** part (:mod:`.dataset`: protocol parts) and write it.

    The lexicon-alone verdicts of the tune posts are passed to the fit so that the review
    threshold is chosen for the combination the policy makes; their lexicon spans feed the
    hate model's targeting features, and a critical hate term counts as the lexicon's own hate
    label (the verdict keeps it whatever the hate model says). The tune half of
    ``data_dir/customer_service`` joins as ordinary (negative) sentences
    (:func:`~.dataset.load_ordinary_set`).

    Raises:
        UserError: The data folder is missing or unreadable.
        ValueError: A model has too few rows or one class only.
    """
    from workflows.content_moderation.dataset import (
        ORDINARY_FOLDER,
        load_moderation_set,
        load_ordinary_set,
        predicted,
    )

    # the protocol (issue 47): fit on train, calibrate on dev; the held-out topic's tune half
    # ("unused") is read by neither. The train part includes COLD's fine-labelled file's train
    # rows (anti-bias posts among them); its dev rows calibrate, its test rows stay unread.
    posts = [
        *load_moderation_set(Path(data_dir), "train"),
        *load_moderation_set(Path(data_dir), "dev"),
    ]
    # without a customer_service/ folder the fit has no ordinary negatives (header: 0 rows)
    has_ordinary = (Path(data_dir) / ORDINARY_FOLDER).is_dir()
    ordinary = load_ordinary_set(Path(data_dir), "tune") if has_ordinary else []
    workflow = ContentModerationWorkflow(scorer_path=None)
    alone = [moderate_lexicon_only(p.text, workflow, scorer=False) for p in posts]
    matcher = workflow.lexicon.matcher()
    spans = [
        lexicon_findings(matcher.scan(p.text), matcher.version, matcher.names_harm)[1]
        for p in [*posts, *ordinary]
    ]
    files = sorted((Path(data_dir) / "moderation").glob("*.csv"))
    files += sorted((Path(data_dir) / ORDINARY_FOLDER).glob("*.csv"))
    scorer = fit_scorer(
        posts,
        [predicted(v)["flagged"] for v in alone],
        [any(critical_hate(s) for s in found) for found in spans[: len(posts)]],
        seed=SEED if seed is None else seed,
        sources={f"{f.parent.name}/{f.name}": file_sha256(f) for f in files},
        ordinary=ordinary,
        spans=spans,
        lexicon_strong=[lexicon_state(v.lexicon) in ("high", "critical") for v in alone],
        speech=[v.lexicon.speech_about_harm for v in alone],
    )
    save_scorer(scorer, out)
    return scorer


async def evaluate_with_model(
    posts: Sequence[LabelledPost],
    client: ModelClient,
    store: TelemetryStore,
    *,
    workflow: ContentModerationWorkflow | None = None,
    concurrency: int = 8,
    split: str = "test",
) -> EvalReport:
    """All three systems on ``posts``, the model judging each post once through the server.

    Every call is recorded in ``store`` like any request (verdict in ``requests.result``).

    Raises:
        ServerUnavailableError: The server cannot be reached.
    """
    workflow = workflow or ContentModerationWorkflow()
    moderator = Moderator(client, store, workflow=workflow)
    loop = asyncio.get_running_loop()
    started = loop.time()
    outcomes = await moderator.moderate_many([p.text for p in posts], concurrency=concurrency)
    seconds = loop.time() - started
    kept = [(p, o.verdict) for p, o in zip(posts, outcomes, strict=True) if o.verdict is not None]
    rows = [p for p, _ in kept]
    per_system: dict[str, list[Verdict]] = {s: [] for s in SYSTEMS}
    status: dict[str, int] = {}
    for post, combined in kept:
        assert combined is not None
        prepared = prepare_post(post.text, workflow.policy.limits)
        matcher = workflow.lexicon.matcher()
        lex = lexicon_findings(
            matcher.scan(post.text, prepared.normalized), matcher.version, matcher.names_harm
        )
        model = combined.assessment
        key = model.status if model is not None else "none"
        status[key] = status.get(key, 0) + 1
        per_system["lexicon"].append(
            build_verdict(
                prepared,
                workflow.policy,
                lexicon=lex,
                model=None,
                source="lexicon",
                scorer=combined.scorer,
            )
        )
        per_system["model"].append(
            build_verdict(prepared, workflow.policy, lexicon=None, model=model, source="model")
        )
        per_system["combined"].append(combined)
    return EvalReport(
        split=split,
        systems=[system_report(s, rows, per_system[s]) for s in SYSTEMS],
        model_rows=len(rows),
        model_status=status,
        note=[NOISE_WARNING],
        seconds=round(seconds, 2),
    )


#: Protocol parts whose every look is recorded (issue 47: test is touched once per release).
LOGGED_PARTS = ("test", "heldout-topic", "fresh", "fresh-heldout-topic")
#: The record of those looks.
LOOKS_LOG = Path(__file__).resolve().parents[2] / "benchmarks" / "results" / "moderation_looks.log"


def record_look(log: Path, report: EvalReport, command: str) -> None:
    """Append one JSON line to ``log``: UTC time, the command, the split, the scorer version
    and every system's per-dataset summary (a look at held-out data is never silent)."""
    import datetime
    import json

    from workflows.content_moderation.scorer import DEFAULT_SCORER_PATH, file_sha256

    scorer = file_sha256(DEFAULT_SCORER_PATH)[:12] if DEFAULT_SCORER_PATH.is_file() else None
    line = {
        "utc": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "command": f"orchestrator {command}".strip(),
        "split": report.split,
        "scorer_sha256": scorer,
        "summary": {s.system: [d.model_dump() for d in s.summary] for s in report.systems},
    }
    Path(log).parent.mkdir(parents=True, exist_ok=True)
    with Path(log).open("a", encoding="utf-8") as handle:
        handle.write(json.dumps(line, ensure_ascii=False) + "\n")


def write_json(path: Path, report: EvalReport) -> None:
    """Write ``report`` as JSON whole or not at all (a link is followed, a device or a pipe
    is written, never replaced: :func:`orchestrator.outfiles.atomic_write_text`).

    Raises:
        UserError: ``path`` cannot be written (a folder, a full disk): one line."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_text(path, report.model_dump_json(indent=2))
