"""Load and validate the rules file and the calibration file (TOML), with file:line errors.

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
import re
import tomllib
from pathlib import Path
from typing import Any

import regex
from pydantic import ValidationError

from orchestrator.classifier.models import CalibrationFile, Rule, RulesFile
from orchestrator.exceptions import UserError

#: Probe time limit per pattern and probe string, seconds.
PROBE_TIMEOUT_S = 0.1
#: Tries per probe string before a pattern is refused.
PROBE_ATTEMPTS = 3
#: Length of each adversarial probe string.
PROBE_LENGTH = 3000

REGEX_FLAGS = regex.IGNORECASE | regex.UNICODE | regex.VERSION0


class RulesError(UserError):
    """A rules or calibration file is invalid.

    Attributes:
        path: The file.
        line: 1-based line of the problem, or None when unknown.
        reason: What is wrong and how to fix it.
    """

    def __init__(self, path: Path | str, line: int | None, reason: str) -> None:
        self.path = Path(path)
        self.line = line
        self.reason = reason
        where = f"{path}:{line}" if line else f"{path}"
        super().__init__(f"{where}: {reason}")


def _locate(text: str, loc: tuple[Any, ...]) -> int | None:
    """Best-effort line of a pydantic error location such as ``('rule', 3, 'weight')``."""
    if not loc:
        return None
    lines = text.splitlines()
    table = str(loc[0])
    if len(loc) >= 2 and isinstance(loc[1], int):
        count = -1
        start = None
        for i, line in enumerate(lines):
            stripped = line.strip()
            if stripped == f"[[{table}]]":
                count += 1
                if count == loc[1]:
                    start = i
                    continue
            if start is not None and stripped.startswith("["):
                break
            if (
                start is not None
                and len(loc) >= 3
                and re.match(rf"{re.escape(str(loc[2]))}\s*=", stripped)
            ):
                return i + 1
        return start + 1 if start is not None else None
    key = table if len(loc) == 1 else str(loc[-1])
    for i, line in enumerate(lines):
        if re.match(rf"\s*(\[{re.escape(table)}\]|{re.escape(key)}\s*=)", line):
            return i + 1
    return None


def _read(path: Path) -> tuple[str, dict[str, Any]]:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError as exc:
        raise RulesError(path, None, "file not found; pass an existing rules file") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise RulesError(path, None, f"cannot read as UTF-8 text: {exc}") from exc
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        raise RulesError(
            path, int(found.group(1)) if found else None, f"not valid TOML: {exc}"
        ) from exc
    return text, data


def _validation_error(path: Path, text: str, exc: ValidationError) -> RulesError:
    first = exc.errors()[0]
    loc = tuple(first.get("loc", ()))
    field = ".".join(str(p) for p in loc) or "(file)"
    more = f" (and {exc.error_count() - 1} more problem(s))" if exc.error_count() > 1 else ""
    return RulesError(path, _locate(text, loc), f"{field}: {first['msg']}{more}")


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
    slow = probe_backtracking(compiled)
    if slow is not None:
        raise RulesError(
            path,
            rule.line,
            f"rule {rule.id!r}: regex looks like catastrophic backtracking (search of the probe "
            f"{slow} took over {PROBE_TIMEOUT_S * 1000:.0f} ms); remove nested or overlapping "
            "quantifiers such as (a+)+ or (a|a)*",
        )
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
    text, data = _read(path)
    try:
        rules = RulesFile.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(path, text, exc) from exc
    located = []
    for i, rule in enumerate(rules.rule):
        located.append(rule.model_copy(update={"line": _locate(text, ("rule", i))}))
    spec_lines = [
        spec.model_copy(update={"line": _locate(text, ("route", i))})
        for i, spec in enumerate(rules.route)
    ]
    rules = rules.model_copy(update={"rule": tuple(located), "route": tuple(spec_lines)})
    for rule in rules.rule:
        if rule.regex is not None:
            compile_rule_regex(path, rule)
    return rules, hashlib.sha256(text.encode()).hexdigest()[:12]


def load_calibration(path: Path | str) -> CalibrationFile:
    """Read and validate a calibration file written by ``orchestrator classifier fit-thresholds``.

    Raises:
        RulesError: Unreadable, not TOML, or fails validation (file, line, reason).
    """
    path = Path(path)
    text, data = _read(path)
    try:
        return CalibrationFile.model_validate(data)
    except ValidationError as exc:
        raise _validation_error(path, text, exc) from exc


def dump_calibration(calibration: CalibrationFile) -> str:
    """TOML text of a calibration file (tomllib has no writer; the shape is flat enough)."""
    t = calibration.thresholds
    out = [
        "# Written by `orchestrator classifier fit-thresholds`; do not edit by hand.",
        f"fitted_on = {_q(calibration.fitted_on)}",
        f"rules_sha = {_q(calibration.rules_sha)}",
        "",
        "[thresholds]",
        f"min_score = {t.min_score}",
        f"ambiguity_margin = {t.ambiguity_margin}",
    ]
    for route, m in calibration.maps.items():
        out += [
            "",
            f"[maps.{route.value}]",
            f"n = {m.n}",
            "x = [" + ", ".join(repr(float(v)) for v in m.x) + "]",
            "y = [" + ", ".join(repr(float(v)) for v in m.y) + "]",
        ]
    return "\n".join(out) + "\n"


def _q(value: str) -> str:
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
