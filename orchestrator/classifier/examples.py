"""A user's labelled examples (``orchestrator classifier fit --examples my_routes.csv``).

The CSV has a header with the columns ``text`` and ``route``, and optionally ``lang`` (``en`` or
``zh``; when the column is missing or the cell blank, a text with a Chinese character is
``zh``, any other ``en``). Other columns are ignored. Each route needs at least
:data:`MIN_EXAMPLES` examples; a route must be declared (the routes file's ``[[route]]``
tables or an installed workflow's ``route_spec``), or be ``fallback`` (requests that no route
serves).

The examples are cut by a stable hash of each text into a part the fit learns from and a
held-out part (:data:`HELD_OUT`, at least :data:`MIN_HELD_OUT` per route): the fit never sees
the held-out part, and ``fit`` reports each route's accuracy on it
(:func:`per_route_accuracy`). The same file always gives the same cut.
"""

from __future__ import annotations

import csv
import hashlib
import json
import re
from collections import Counter, defaultdict
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import get_args

from orchestrator.classifier.fit_lexical import FILE as LEXICAL_FILE
from orchestrator.classifier.fit_lexical import LexicalIndex, fit_lexical
from orchestrator.classifier.fit_semantic import FILE as SEMANTIC_FILE
from orchestrator.classifier.fit_semantic import ExampleIndex
from orchestrator.classifier.labelled_phrases import Lang
from orchestrator.classifier.labelled_set import LabelledRequest
from orchestrator.classifier.learned import VERSION, LearnedModel
from orchestrator.classifier.loader import dump_calibration
from orchestrator.classifier.models import CalibrationFile
from orchestrator.classifier.oof import OutOfFold
from orchestrator.exceptions import UserError
from orchestrator.outfiles import atomic_write_text
from orchestrator.request import MAX_TEXT_CHARS
from orchestrator.routes import FALLBACK, ROUTE_NAME, Route, RouteSpec

#: Fewest examples a route needs (a few dozen do well; fewer cannot be split and learned).
MIN_EXAMPLES = 8
#: Share of each route's examples held out for the accuracy report.
HELD_OUT = 0.25
#: Fewest held-out examples per route.
MIN_HELD_OUT = 2
#: The languages a row may give.
LANGS: tuple[str, ...] = get_args(Lang)
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def _lang_of(text: str, given: str | None, line: int, path: Path) -> Lang:
    if given is None or not given.strip():
        return "zh" if _HAN.search(text) else "en"
    lang = given.strip().lower()
    if lang not in LANGS:
        raise UserError(
            f"{path}:{line}: unknown lang {given!r}; use one of {', '.join(LANGS)} "
            "or leave the cell blank"
        )
    return lang  # type: ignore[return-value]  # checked against Lang's values above


def read_examples(path: Path | str, declared: Collection[Route]) -> list[LabelledRequest]:
    """The examples of a CSV file as labelled requests (``source`` ``examples/<route>``,
    ``split`` ``tune`` or ``test``: the held-out part).

    Args:
        path: The CSV file (UTF-8, a header row).
        declared: The routes in use (``fallback`` is always allowed).

    Raises:
        UserError: One line naming the file (and row) and the fix: the file cannot be read, a
            column is missing, a text is blank or too long, a lang is unknown, a route is not
            declared, or a route has fewer than :data:`MIN_EXAMPLES` examples.
    """
    path = Path(path)
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            reader = csv.DictReader(handle)
            header = [h.strip().lower() for h in reader.fieldnames or ()]
            missing = [c for c in ("text", "route") if c not in header]
            if missing:
                raise UserError(
                    f"{path}: no {' or '.join(repr(c) for c in missing)} column (found: "
                    f"{', '.join(header) or 'no header'}); the header needs text, route and "
                    "optionally lang"
                )
            reader.fieldnames = header
            # line_num: a row's own line, where a quoted text spans lines or an empty line
            # was skipped. A row of blank cells only (",,", which spreadsheets export) is
            # skipped as csv skips an empty line.
            raw = [
                (reader.line_num, row)
                for row in reader
                if any(_cell_text(cell) for cell in row.values())
            ]
    except FileNotFoundError:
        raise UserError(f"{path}: no such file; give the CSV of examples") from None
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise UserError(f"{path}: cannot read it as a UTF-8 CSV ({exc})") from None
    rows = [_row(path, line, cells, declared) for line, cells in raw]
    _check_counts(path, rows)
    return _split(rows)


def _cell_text(cell: str | list[str] | None) -> str:
    """A cell's text, stripped; the cells past the header's (a list) joined."""
    return (" ".join(cell) if isinstance(cell, list) else cell or "").strip()


def _row(
    path: Path, line: int, cells: dict[str, str | None], declared: Collection[Route]
) -> LabelledRequest:
    text = (cells.get("text") or "").strip()
    route = (cells.get("route") or "").strip()
    if not text:
        raise UserError(f"{path}:{line}: the text is blank; give each example a text")
    if len(text) > MAX_TEXT_CHARS:
        raise UserError(f"{path}:{line}: the text is over {MAX_TEXT_CHARS:,} characters")
    if not re.fullmatch(ROUTE_NAME, route):
        raise UserError(
            f"{path}:{line}: route {route!r} is not a route name (snake_case, e.g. faq)"
        )
    if route != FALLBACK and route not in declared:
        known = ", ".join(sorted(declared)) or "none"
        raise UserError(
            f"{path}:{line}: route {route!r} is not declared (declared: {known}); declare it "
            "in a [[route]] table of the routes file or install its workflow package"
        )
    lang = _lang_of(text, cells.get("lang"), line, path)
    digest = hashlib.sha256(text.encode()).hexdigest()[:12]
    return LabelledRequest(
        id=f"examples:{line}",
        text=text,
        route=Route(route),
        lang=lang,
        source=f"examples/{route}",
        split="tune",
        family=f"examples:{digest}",
    )


def _check_counts(path: Path, rows: Sequence[LabelledRequest]) -> None:
    if not rows:
        raise UserError(f"{path}: no examples; add rows of text,route")
    counts = Counter(r.route for r in rows)
    few = sorted((n, route) for route, n in counts.items() if n < MIN_EXAMPLES)
    if few:
        n, route = few[0]
        raise UserError(
            f"{path}: route {route!r} has {n} example(s); give each route at least "
            f"{MIN_EXAMPLES} (a few dozen is better)"
        )


def _split(rows: Sequence[LabelledRequest]) -> list[LabelledRequest]:
    """Each route's rows, the :data:`HELD_OUT` share with the lowest hash held out (``test``)."""
    by_route: dict[Route, list[LabelledRequest]] = defaultdict(list)
    for row in rows:
        by_route[row.route].append(row)
    held: set[str] = set()
    for group in by_route.values():
        ranked = sorted(group, key=lambda r: hashlib.sha256(r.text.encode()).digest())
        n = max(MIN_HELD_OUT, round(len(group) * HELD_OUT))
        held.update(r.id for r in ranked[:n])
    return [r.model_copy(update={"split": "test"}) if r.id in held else r for r in rows]


def per_route_accuracy(
    rows: Sequence[LabelledRequest], routes: Sequence[Route]
) -> dict[Route, tuple[float, int]]:
    """``route -> (accuracy, n)`` of the held-out rows: the share of each route's rows that
    ``routes`` (the classifier's decisions, one per row) got right."""
    right: dict[Route, list[bool]] = defaultdict(list)
    for row, route in zip(rows, routes, strict=True):
        right[row.route].append(route == row.route)
    return {r: (sum(v) / len(v), len(v)) for r, v in right.items()}


@dataclass(frozen=True)
class ExamplesFit:
    """What :func:`fit_examples` fitted.

    Attributes:
        model: The learned tier (the built-in routes, the user's, ``fallback``).
        calibration: Its thresholds and calibration maps.
        held_out: The user's held-out examples (never fitted on).
        n_fitted: Requests fitted on (the built-in tune rows plus the user's fitting part).
        examples_sha: SHA-256 of the examples file (its first 12 hex digits name the version).
        semantic: The new routes' English examples embedded, with a threshold per route
            (:func:`~.fit_semantic.fit_index`), when the ``[semantic]`` extra is installed.
        lexical: The new routes' examples by character n-grams, with a threshold per route
            (:func:`~.fit_lexical.fit_lexical`); needs no extra.
    """

    model: LearnedModel
    calibration: CalibrationFile
    held_out: list[LabelledRequest]
    n_fitted: int
    examples_sha: str
    #: the user examples' embeddings (:mod:`.fit_semantic`), None without the extra
    semantic: ExampleIndex | None = None
    #: the user examples by character n-grams (:mod:`.fit_lexical`)
    lexical: LexicalIndex | None = None

    @property
    def version(self) -> str:
        """12 hex digits naming this fit: the rules', the built-in rows' and the examples'
        hashes."""
        rules = str(self.model.meta.get("rules_sha", ""))
        base = str(self.model.meta.get("base_rows_sha256", ""))
        return hashlib.sha256(f"{rules}|{base}|{self.examples_sha}".encode()).hexdigest()[:12]


def fit_examples(
    path: Path | str,
    base_rows: Sequence[LabelledRequest],
    *,
    routes: Sequence[RouteSpec] = (),
    declared: Collection[Route] = (),
    rules_path: str | None = None,
    folds: int = 5,
    seed: int = 0,
    wrong_route: float = 5.0,
    handoff: float = 1.0,
    workers: int = 1,
    base: tuple[LearnedModel, CalibrationFile] | None = None,
    semantic: bool = True,
    oof: OutOfFold | None = None,
) -> ExamplesFit:
    """Fit the learned tier, thresholds and calibration on ``base_rows`` (the built-in routes'
    tune rows) plus the fitting part of the examples in ``path`` (:func:`read_examples`).

    Args:
        routes: Routes declared outside the routes file (installed workflows' ``route_spec``):
            their rules join the rules file's.
        declared: Every declared route's name (the routes file's and ``routes``).
        workers: Processes that fit the models (:func:`~.learned_fit.train_many`).
        base: A fitted model and its calibration (the packaged ones): only the routes it
            lacks are fitted, onto it (:func:`~.fit_routes.fit_new_routes`, seconds); None: all
            routes are refitted on ``base_rows`` and the examples (:func:`~.fitting.fit_all`).
        oof: ``base``'s out-of-fold logits on its tune rows (:mod:`.oof`; the packaged
            ``learned.oof.npz``), which the new routes' budget is checked on.
        semantic: Also index the new routes' examples for the examples tier: by character
            n-grams (:func:`~.fit_lexical.fit_lexical`) and, when the ``[semantic]`` extra is
            installed, by meaning (:func:`~.fit_semantic.fit_index`).

    Raises:
        UserError: A bad examples file (see :func:`read_examples`), or see
            :func:`~orchestrator.classifier.fitting.fit_all`.
    """
    from orchestrator.classifier.fit_routes import fit_new_routes  # scipy, when fitting
    from orchestrator.classifier.fitting import fit_all

    path = Path(path)
    rows = read_examples(path, {*declared, *(spec.name for spec in routes)})
    mine = [r for r in rows if r.split == "tune"]
    held = [r for r in rows if r.split == "test"]
    fitted_on = (
        f"{len(base_rows)} built-in tune rows + {len(mine)} examples of {path.name} "
        f"({len(held)} held out)"
    )
    if base is not None:
        model, calibration = fit_new_routes(
            [*base_rows, *mine],
            *base,
            rules_path=rules_path,
            routes=routes,
            folds=folds,
            fitted_on=fitted_on,
            oof=oof,
        )
    else:
        model, calibration = fit_all(
            [*base_rows, *mine],
            row_weight=example_weights(base_rows, mine),
            rules_path=rules_path,
            folds=folds,
            seed=seed,
            wrong_route=wrong_route,
            handoff=handoff,
            fitted_on=fitted_on,
            routes=routes,
            workers=workers,
        )
    index = lexical = None
    new = [c for c in model.classes if c not in {r.route for r in base_rows}]
    if semantic:
        from orchestrator.classifier.fit_semantic import fit_index, load_encoder

        encoder = load_encoder()
        index = fit_index(mine, base_rows, new, encoder) if encoder is not None else None
        lexical = fit_lexical([*mine, *_declared(rules_path, routes, new)], base_rows, new)
    model.meta["semantic_thresholds"] = dict(index.thresholds) if index is not None else {}
    model.meta["lexical_thresholds"] = dict(lexical.thresholds) if lexical is not None else {}
    sha = hashlib.sha256(path.read_bytes()).hexdigest()
    model.meta["examples_sha256"] = sha
    model.meta["base_rows_sha256"] = hashlib.sha256(
        "\n".join(f"{r.id}|{r.route}|{r.text}" for r in base_rows).encode()
    ).hexdigest()
    n = len(base_rows) + len(mine)
    return ExamplesFit(model, calibration, held, n, sha, index, lexical)


def _declared(
    rules_path: str | None, routes: Sequence[RouteSpec], new: Collection[Route]
) -> list[LabelledRequest]:
    """The ``new`` routes' declarations as rows (:func:`~.fit_routes.declared_rows`)."""
    from orchestrator.classifier.fit_routes import declared_rows
    from orchestrator.classifier.fitting import rules_only

    return declared_rows([s for s in rules_only(rules_path, routes).route_specs if s.name in new])


def example_weights(
    base_rows: Sequence[LabelledRequest], mine: Sequence[LabelledRequest]
) -> list[float]:
    """A weight per row of ``[*base_rows, *mine]``: 1, except the examples of a route the
    built-in rows do not have, which together weigh as much as the smallest built-in route's
    rows (a route of 30 examples beside routes of thousands of rows would otherwise be a
    rounding error to the model, and its requests would go elsewhere)."""
    base = Counter(r.route for r in base_rows if r.route != FALLBACK)
    smallest = min(base.values(), default=1)
    new = Counter(r.route for r in mine if r.route not in base and r.route != FALLBACK)
    weights = [1.0] * len(base_rows)
    weights += [max(1.0, smallest / new[r.route]) if r.route in new else 1.0 for r in mine]
    return weights


def save_fit(fit: ExamplesFit, folder: Path, examples: Path) -> Path:
    """Write a fit into ``folder`` (``learned.v2.npz``, ``calibration.toml`` and the manifest
    ``fitted.json``: version, examples file and hash, classes), each file replaced atomically
    so a running classifier hot-reloads them; a copy of the three is kept in
    ``folder/versions/<version>/``; the examples' indexes too (``examples.lexical.npz`` and
    ``examples.semantic.npz``, when fitted). Returns that copy's folder.

    Raises:
        UserError: The folder cannot be written.
    """
    version = fit.version
    manifest = {
        "version": version,
        "examples": str(examples),
        "examples_sha256": fit.examples_sha,
        "classes": list(fit.model.classes),
        "fitted_on": fit.calibration.fitted_on,
        "n_fitted": fit.n_fitted,
        "n_held_out": len(fit.held_out),
    }
    kept = folder / "versions" / version
    try:
        for target in (kept, folder):
            target.mkdir(parents=True, exist_ok=True)
            fit.model.save(target / f"learned.v{VERSION}.npz")
            _replace(target / "calibration.toml", dump_calibration(fit.calibration))
            _replace(target / "fitted.json", json.dumps(manifest, indent=2) + "\n")
            _save_index(fit.semantic, target / SEMANTIC_FILE)
            _save_index(fit.lexical, target / LEXICAL_FILE)
    except OSError as exc:
        raise UserError(f"cannot write the fitted classifier to {folder}: {exc}") from None
    return kept


def _save_index(index: ExampleIndex | LexicalIndex | None, path: Path) -> None:
    """Write the examples index beside the model (atomically), or remove a stale one."""
    if index is None:
        path.unlink(missing_ok=True)
        return
    tmp = path.with_name(path.name + ".tmp.npz")
    index.save(tmp)
    tmp.replace(path)


def _replace(path: Path, text: str) -> None:
    """Write ``text`` beside ``path``, then rename it over ``path`` (readers see one or the
    other; the classifier's hot reload never reads half a file)."""
    atomic_write_text(path, text)
