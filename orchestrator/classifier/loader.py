"""Load and validate the rules file and the calibration file (TOML), with file:line errors.

Reading, validation and the ``file:line: reason`` errors come from :mod:`orchestrator.datafiles`
(shared with the moderation lexicon and policy); this module adds the regex safety checks.

Regular expressions are compiled with the third-party ``regex`` module (a drop-in superset of
``re`` that supports a per-search ``timeout``) and probed for catastrophic backtracking here,
at load: each pattern is searched in adversarial strings built from its own literal
characters (``aaaa…!``) under a time limit; a pattern that runs out of time is refused with
the rule's line. At run time every search also has a time limit, so a pattern the probe missed
costs at most that limit and is skipped with a logged warning. ``regex`` was chosen over
``google-re2`` (linear time by construction) because it keeps Python's regex syntax
(look-arounds included), has no per-call string re-encoding, and needs no compiled wheel
beyond the one the stack already installs (``transformers`` depends on it).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from functools import cache
from pathlib import Path

import regex
from pydantic import ValidationError

from orchestrator.classifier.models import CalibrationFile, Rule, RulesFile
from orchestrator.datafiles import content_hash, load_toml
from orchestrator.exceptions import DataFileError
from orchestrator.routes import RouteSpec

#: Probe time limit per pattern and probe string, seconds.
PROBE_TIMEOUT_S = 0.1
#: Tries per probe string before a pattern is refused.
PROBE_ATTEMPTS = 3
#: Length of each adversarial probe string.
PROBE_LENGTH = 3000

REGEX_FLAGS = regex.IGNORECASE | regex.UNICODE | regex.VERSION0


class RulesError(DataFileError):
    """A rules or calibration file is invalid (``file:line: reason``; see
    :class:`~orchestrator.exceptions.DataFileError` for the attributes)."""


#: The reason given for a rules or calibration file that does not exist.
_MISSING = "file not found; pass an existing rules file"


def probe_backtracking(pattern: regex.Pattern[str], timeout: float = PROBE_TIMEOUT_S) -> str | None:
    """Search adversarial strings with ``pattern`` under a time limit.

    Args:
        pattern: A compiled ``regex`` pattern.
        timeout: Seconds allowed per probe string.

    Returns:
        None when every probe finished in time, else the probe that timed out (shortened).
    """
    literals = sorted({ch for ch in pattern.pattern.lower() if ch.isalnum()} | {"a", " ", "0"})
    probes = [ch * PROBE_LENGTH + "\x00" for ch in literals]
    probes += ["".join(literals) * (PROBE_LENGTH // max(1, len(literals))) + "\x00"]
    for probe in probes:
        # The limit is wall-clock time, and a busy host can pause any search; only a probe
        # that runs out of time on every one of PROBE_ATTEMPTS tries counts as catastrophic.
        for _ in range(PROBE_ATTEMPTS):
            try:
                pattern.search(probe, timeout=timeout)
                break
            except TimeoutError:
                continue
        else:
            return repr(probe[:12]) + f"...({len(probe)} chars)"
    return None


#: Patterns whose backtracking probe passed in this process. Probing every regex rule of the
#: shipped file takes most of a classifier's construction (about 0.75 s of its 1.4 s), and a
#: process that builds several classifiers (the tests, a hot reload) would probe the same
#: patterns again; a failed probe is never remembered.
_PROBED_OK: set[str] = set()


@cache
def _probe_file() -> Path:
    """Where patterns that passed the probe on this machine are remembered across processes:
    one :func:`_probe_key` per line, under ``$XDG_CACHE_HOME`` (default ``~/.cache``). Every new
    process that builds a classifier (each CLI command) would otherwise probe every regex rule
    again: 1.8 s of CPU of its 2.4 s first build. Only passes are written; an edited file can
    skip the load-time probe, never the time limit of every search. A plain append-only file
    (one short line per write, atomic with ``O_APPEND``), not a cache library: it is one set."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "moe-orchestrator" / "regex-probed.txt"


def _probe_key(pattern: str) -> str:
    """SHA-256 of the pattern and of everything the probe's verdict depends on."""
    probe = f"{regex.__version__}|{REGEX_FLAGS}|{PROBE_TIMEOUT_S}|{PROBE_ATTEMPTS}|{PROBE_LENGTH}"
    return hashlib.sha256(f"{probe}|{pattern}".encode()).hexdigest()


@cache
def _probed_before() -> frozenset[str]:
    """The keys in :func:`_probe_file` when this process first needed them (none if unreadable)."""
    try:
        return frozenset(_probe_file().read_text(encoding="ascii").split())
    except (OSError, ValueError):
        return frozenset()


def _remember_probed(pattern: str) -> None:
    """Append ``pattern``'s key to :func:`_probe_file`; a cache, so any failure is ignored."""
    try:
        _probe_file().parent.mkdir(parents=True, exist_ok=True)
        with _probe_file().open("a", encoding="ascii") as handle:
            handle.write(_probe_key(pattern) + "\n")
    except OSError:
        pass


def compile_rule_regex(path: Path | str, rule: Rule) -> regex.Pattern[str]:
    """Compile a regex rule and refuse patterns that backtrack catastrophically.

    Raises:
        RulesError: The pattern does not compile, matches the empty string, or a probe
            string ran out of time.
    """
    assert rule.regex is not None
    try:
        compiled = regex.compile(rule.regex, REGEX_FLAGS)
    except regex.error as exc:
        raise RulesError(
            path, rule.line, f"rule {rule.id!r}: regex does not compile: {exc}"
        ) from exc
    if compiled.search("", timeout=PROBE_TIMEOUT_S) is not None:
        raise RulesError(
            path,
            rule.line,
            f"rule {rule.id!r}: regex matches the empty string, so it fires on "
            "every request; require at least one character",
        )
    if rule.regex in _PROBED_OK:  # the probe reads nothing but the pattern: once is enough
        return compiled
    if _probe_key(rule.regex) in _probed_before():  # passed in another process
        _PROBED_OK.add(rule.regex)
        return compiled
    slow = probe_backtracking(compiled)
    if slow is not None:
        raise RulesError(
            path,
            rule.line,
            f"rule {rule.id!r}: regex looks like catastrophic backtracking (search of the probe "
            f"{slow} took over {PROBE_TIMEOUT_S * 1000:.0f} ms); remove nested or overlapping "
            "quantifiers such as (a+)+ or (a|a)*",
        )
    _PROBED_OK.add(rule.regex)
    _remember_probed(rule.regex)
    return compiled


def load_rules(path: Path | str) -> tuple[RulesFile, str]:
    """Read, validate and regex-check a rules file.

    Args:
        path: The TOML rules file.

    Returns:
        The validated rules and a 12-hex-digit SHA-256 of the file's bytes.

    Raises:
        RulesError: Unreadable, not TOML, fails validation, or a regex is unsafe; the message
            names the file, the line when known, and the reason.
    """
    path = Path(path)
    loaded = load_toml(path, RulesFile, error=RulesError, missing_reason=_MISSING)
    rules = loaded.value
    located = tuple(
        rule.model_copy(update={"line": loaded.line_of("rule", i)})
        for i, rule in enumerate(rules.rule)
    )
    spec_lines = tuple(
        spec.model_copy(update={"line": loaded.line_of("route", i)})
        for i, spec in enumerate(rules.route)
    )
    rules = rules.model_copy(update={"rule": located, "route": spec_lines})
    _check_declared(rules, path, lambda i: loaded.line_of("rule", i, "route"))
    for rule in rules.rule:
        if rule.regex is not None:
            compile_rule_regex(path, rule)
    return rules, content_hash(loaded.text)


def _check_declared(
    rules: RulesFile, path: Path | str, line_of: Callable[[int], int | None] = lambda i: None
) -> None:
    """Refuse a rule whose route no ``[[route]]`` table declares (when the file declares any:
    a file of rules alone names its routes by its rules).

    Raises:
        RulesError: Names the rule, its route and the line of its ``route`` key.
    """
    names = {spec.name for spec in rules.route}
    for i, rule in enumerate(rules.rule):
        if names and rule.route not in names:
            raise RulesError(
                path,
                line_of(i),
                f"rule {rule.id!r}: route {rule.route!r} is not declared; add a [[route]] "
                f"table for it or use one of {', '.join(sorted(names))}",
            )


def with_routes(
    rules_file: RulesFile, routes: Sequence[RouteSpec], path: Path | str = "<routes>"
) -> RulesFile:
    """``rules_file`` with more declared routes (a workflow package's ``route_spec``): each
    route's ``[[route]]`` settings and its rules (:meth:`RouteSpec.rule_tables`) join the
    file's, validated as the file's are (regexes are checked when compiled).

    Raises:
        RulesError: A route the file declares too, a rule that is invalid, an id used twice.
    """
    if not routes:
        return rules_file
    taken = {spec.name for spec in rules_file.route}
    for spec in routes:
        if spec.name in taken:
            raise RulesError(path, None, f"route {spec.name!r} is declared twice; declare it once")
        taken.add(spec.name)
    try:
        extra = [Rule(**table) for spec in routes for table in spec.rule_tables()]
        merged = RulesFile(
            version=rules_file.version,
            settings=rules_file.settings,
            route=(*rules_file.route, *routes),
            rule=(*rules_file.rule, *extra),
        )
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(x) for x in first["loc"])
        names = ", ".join(spec.name for spec in routes)
        raise RulesError(
            path, None, f"rules of route(s) {names}: {where}: {first['msg']}"
        ) from None
    _check_declared(merged, path)
    return merged


def routes_version(version: str, routes: Sequence[RouteSpec]) -> str:
    """A 12-hex-digit version of the rules file's ``version`` and the extra declared routes."""
    digest = hashlib.sha256(version.encode())
    for spec in routes:
        digest.update(spec.model_dump_json().encode())
    return digest.hexdigest()[:12]


def load_calibration(path: Path | str) -> CalibrationFile:
    """Read and validate a calibration file written by ``orchestrator classifier fit-thresholds``.

    Raises:
        RulesError: Unreadable, not TOML, or fails validation (file, line, reason).
    """
    return load_toml(path, CalibrationFile, error=RulesError, missing_reason=_MISSING).value


def dump_calibration(calibration: CalibrationFile) -> str:
    """TOML text of a calibration file (tomllib has no writer; the shape is flat enough)."""
    t = calibration.thresholds
    out = [
        "# Written by `orchestrator classifier fit` / `fit-thresholds`; do not edit by hand.",
        f"fitted_on = {_q(calibration.fitted_on)}",
        f"rules_sha = {_q(calibration.rules_sha)}",
        "",
        "[thresholds]",
        f"min_score = {t.min_score}",
        f"ambiguity_margin = {t.ambiguity_margin}",
        f"sure_score = {t.sure_score}",
        f"secondary_min = {t.secondary_min}",
        f"fast_min = {t.fast_min}",
    ]
    if calibration.cost:
        out += ["", "[cost]"] + [f"{k} = {float(v)}" for k, v in calibration.cost.items()]
    for table, maps in (
        ("maps", calibration.maps),
        ("learned_maps", calibration.learned_maps),
        ("fast_maps", calibration.fast_maps),
    ):
        for route, m in maps.items():
            out += [
                "",
                f"[{table}.{route}]",
                f"n = {m.n}",
                "x = [" + ", ".join(repr(float(v)) for v in m.x) + "]",
                "y = [" + ", ".join(repr(float(v)) for v in m.y) + "]",
            ]
    return "\n".join(out) + "\n"


def _q(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
