"""The rule classifier: evidence from the rules file, thresholds, calibrated confidence, reload.

Scoring. Each fired rule gives evidence ``w = weight * similarity`` for its route. A route's
score is the noisy-OR of its positive evidence, ``1 - prod(1 - w)`` (independent weak signals
add up but never pass 1), multiplied by ``prod(1 - w)`` of its fired negative rules. A channel
named in a route's ``channels`` adds that route's ``channel_weight``.

Decision. With the best score ``s1`` and the runner-up ``s2`` (ties broken by route priority):
no rule fired -> fallback (``no_signal``); ``s1 < min_score`` -> fallback (``low_confidence``);
``s1 - s2 < ambiguity_margin`` -> fallback (``ambiguous``); else the best route.

Confidence. The estimated probability that the decision is right: an isotonic map, fitted on
the tune split of the labelled routing set, from the raw evidence (``s1 - s2`` for a route,
``s1`` for fallback) to the observed accuracy of such decisions. Without a calibration file the
raw evidence is returned (``s1 - s2``, or ``1 - s1`` for fallback) and ``calibrated`` is False.

Hot reload (:class:`orchestrator.datafiles.HotReloader`). The rules and calibration files are
checked (one ``stat`` each) at most once per ``reload_interval`` seconds, on the next call. A
changed file is loaded and compiled *aside*; only a fully valid result replaces the live one
(one reference swap, so a concurrent call sees either the old or the new rules, never a mix).
A broken edit (a ``RulesError`` or ``OSError``) is logged at ERROR level, kept in
:attr:`RuleClassifier.last_error`, and the last good rules stay live.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from orchestrator.classifier.engine import CompiledRules, normalise
from orchestrator.classifier.loader import load_calibration, load_rules
from orchestrator.classifier.models import (
    CalibrationFile,
    Classification,
    FallbackReason,
    Rule,
    RulesFile,
    Signal,
    Thresholds,
)
from orchestrator.datafiles import HotReloader
from orchestrator.request import MAX_TEXT_CHARS, Request
from orchestrator.routes import Route

log = logging.getLogger(__name__)

FALLBACK = Route.FALLBACK
#: ``orchestrator/rules/``: shipped as package data (the ``*.toml`` glob in pyproject).
_RULES_DIR = Path(__file__).resolve().parent.parent / "rules"


def default_rules_path() -> Path:
    """The rules file shipped in the package (``orchestrator/rules/routes.toml``)."""
    return _RULES_DIR / "routes.toml"


def default_calibration_path() -> Path:
    """The fitted calibration shipped in the package (``orchestrator/rules/calibration.toml``)."""
    return _RULES_DIR / "calibration.toml"


@dataclass(frozen=True)
class _State:
    """Everything one decision needs; replaced as a whole on reload."""

    compiled: CompiledRules
    calibration: CalibrationFile | None
    thresholds: Thresholds
    version: str


class RuleClassifier:
    """Picks a route for a request from the rules file; explains and calibrates the choice.

    Args:
        rules: Rules to use instead of a file (no reload then).
        rules_path: Rules file; the packaged ``routes.toml`` when both this and ``rules`` are
            None.
        calibration_path: Fitted thresholds and calibration maps; the packaged
            ``calibration.toml`` (when it exists) if None and the rules are the packaged ones.
            Pass ``False`` for none.
        min_score: Overrides the calibration file's threshold.
        ambiguity_margin: Overrides the calibration file's margin.
        reload_interval: Seconds between checks of the files for changes; 0 checks on every
            call, None never.

    Raises:
        RulesError: The initial rules or calibration file is invalid (file, line, reason).

    Example:
        >>> from orchestrator import Request, RuleClassifier
        >>> RuleClassifier().classify(Request(text="Where is my refund?")).route
        <Route.CUSTOMER_SERVICE: 'customer_service'>
    """

    def __init__(
        self,
        rules: Sequence[Rule] | None = None,
        *,
        rules_path: Path | str | None = None,
        calibration_path: Path | str | bool | None = None,
        min_score: float | None = None,
        ambiguity_margin: float | None = None,
        reload_interval: float | None = 1.0,
    ) -> None:
        self._overrides = {
            k: v
            for k, v in (("min_score", min_score), ("ambiguity_margin", ambiguity_margin))
            if v is not None
        }
        self._rules = tuple(rules) if rules is not None else None
        if self._rules is not None:
            self.rules_path: Path | None = None
        else:
            self.rules_path = Path(rules_path) if rules_path else default_rules_path()
        if calibration_path is False:
            self.calibration_path: Path | None = None
        elif calibration_path not in (None, True):
            self.calibration_path = Path(calibration_path)  # type: ignore[arg-type]
        elif rules_path is None and rules is None and default_calibration_path().exists():
            self.calibration_path = default_calibration_path()
        else:
            self.calibration_path = None
        self._live = HotReloader(
            self._load,
            [p for p in (self.rules_path, self.calibration_path) if p is not None],
            interval_s=reload_interval,
            what="rules",
            version=lambda state: state.version,
            logger=log,
        )

    # ------------------------------------------------------------------ loading

    def _load(self) -> _State:
        if self._rules is not None:
            rules_file = RulesFile(rule=self._rules)
            compiled = CompiledRules.build(rules_file)
            version = "inline"
        else:
            assert self.rules_path is not None
            rules_file, version = load_rules(self.rules_path)
            compiled = CompiledRules.build(rules_file, self.rules_path)
        calibration = load_calibration(self.calibration_path) if self.calibration_path else None
        base = calibration.thresholds if calibration else Thresholds()
        thresholds = base.model_copy(update=self._overrides)
        if calibration is not None and calibration.rules_sha and calibration.rules_sha != version:
            log.warning(
                "calibration %s was fitted for rules %s but the rules are now %s; "
                "run `orchestrator classifier fit-thresholds` to refit",
                self.calibration_path,
                calibration.rules_sha,
                version,
            )
        return _State(compiled, calibration, thresholds, version)

    def reload(self) -> bool:
        """Reload the files now if they changed.

        Returns:
            True when new rules went live; False when nothing changed or the new files were
            invalid (then the error is logged and kept in :attr:`last_error`).
        """
        return self._live.reload()

    @property
    def reload_interval(self) -> float | None:
        """Seconds between checks of the files for changes (0: every call, None: never)."""
        return self._live.interval_s

    @reload_interval.setter
    def reload_interval(self, seconds: float | None) -> None:
        self._live.interval_s = seconds

    @property
    def last_error(self) -> str | None:
        """The error of the last failed reload; None once new files have gone live."""
        return self._live.last_error

    @property
    def _state(self) -> _State:
        """The live state, without looking at the files."""
        return self._live.value

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The live rules."""
        return self._state.compiled.rules

    @property
    def thresholds(self) -> Thresholds:
        """The live thresholds."""
        return self._state.thresholds

    @property
    def version(self) -> str:
        """Short hash of the live rules file (``inline`` for rules passed in code)."""
        return self._state.version

    @staticmethod
    def normalise(text: str) -> str:
        """NFKC (full-width to half-width) and lower case."""
        return normalise(text)

    # ------------------------------------------------------------------ classify

    def classify(self, request: Request) -> Classification:
        """Route one request; never raises for a valid :class:`Request`."""
        attachments = request.attachments
        exts = tuple(a.extension for a in attachments) if attachments else ()
        return self._classify(request.text, exts, request.channel)

    def classify_text(
        self,
        text: str | bytes,
        *,
        attachments: Sequence[str] = (),
        channel: str | None = None,
    ) -> Classification:
        """Route raw text or bytes, including input that :class:`Request` would refuse.

        Empty or whitespace-only text, text of :data:`MAX_TEXT_CHARS` characters or more,
        bytes that are not UTF-8, binary data (NUL or many control characters) and strings with
        lone surrogates get a fallback result with ``fallback_reason="invalid_input"`` and a
        reason that says what was wrong. Emoji-only text is classified normally (no rule fires,
        so it falls back with ``no_signal``).

        Args:
            text: The user's message, as ``str`` or UTF-8 ``bytes``.
            attachments: Attachment file names.
            channel: Channel of the request.

        Returns:
            The classification; never raises for bad text.
        """
        if isinstance(text, bytes | bytearray | memoryview):
            raw = bytes(text)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                return self._invalid(
                    f"text is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                    f"{exc.start}); send UTF-8 text"
                )
        if not isinstance(text, str):
            return self._invalid(f"text must be str or bytes, got {type(text).__name__}")
        if not text.strip():
            return self._invalid("text is empty or whitespace; send the user's message")
        if len(text) >= MAX_TEXT_CHARS:
            return self._invalid(
                f"text has {len(text):,} characters, over the {MAX_TEXT_CHARS:,} limit; "
                "send long content as an attachment"
            )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return self._invalid("text has lone surrogate code points (not valid Unicode)")
        head = text[:4096]
        controls = sum(1 for ch in head if ch < " " and ch not in "\t\n\r")
        if "\x00" in head or controls > len(head) // 10:
            return self._invalid(
                f"text looks binary ({controls} control characters in the first "
                f"{len(head)}); send text, or the file as an attachment"
            )
        exts = tuple(name.rsplit(".", 1)[-1].lower() if "." in name else "" for name in attachments)
        return self._classify(text, exts, channel)

    def _invalid(self, reason: str) -> Classification:
        state = self._state
        return Classification(
            route=FALLBACK,
            confidence=1.0,
            scores=dict.fromkeys(state.compiled.routes, 0.0),
            signals=(),
            reason=reason,
            fallback_reason="invalid_input",
            calibrated=False,
            rules_version=state.version,
        )

    def _classify(self, text: str, exts: tuple[str, ...], channel: str | None) -> Classification:
        state = self._live.get()  # looks at the files at most once per reload_interval
        compiled = state.compiled
        norm = normalise(text[: compiled.max_scan_chars])
        fired = compiled.match(norm, exts, channel)
        rules = compiled.rules
        miss = dict.fromkeys(compiled.routes, 1.0)
        veto = dict.fromkeys(compiled.routes, 1.0)
        signals: list[Signal] = []
        for index, (sim, matched, span) in fired.items():
            rule = rules[index]
            w = rule.weight * sim
            if rule.negative:
                veto[rule.route] *= 1.0 - w
            else:
                miss[rule.route] *= 1.0 - w
            signals.append(
                Signal(
                    rule_id=rule.id,
                    route=rule.route,
                    weight=round(w, 4),
                    matched=matched,
                    span=span,
                    negative=rule.negative,
                    similarity=sim,
                )
            )
        if channel is not None:
            for route, w in compiled.channels.get(channel.lower(), ()):
                miss[route] *= 1.0 - w
                signals.append(
                    Signal(
                        rule_id=f"channel.{route.value}",
                        route=route,
                        weight=w,
                        matched=channel,
                        span=None,
                        negative=False,
                        similarity=1.0,
                    )
                )
        # best first: score, then priority, then Route order (no key function: plain
        # tuples sort faster, and this runs on every request)
        ranked = sorted(
            [
                (round((1.0 - miss[r]) * veto[r], 4), p, -i, r)
                for i, (r, p) in enumerate(compiled.ranking)
            ],
            reverse=True,
        )
        scores = {r: score for score, _, _, r in ranked}
        (s1, _, _, best), (s2, _, _, second) = ranked[0], ranked[1]
        t = state.thresholds
        why: FallbackReason | None = None
        if s1 <= 0.0:
            why, reason = "no_signal", "no rule fired"
        elif s1 < t.min_score:
            why = "low_confidence"
            reason = f"best route {best.value} scored {s1} < min_score {t.min_score}"
        elif s1 - s2 < t.ambiguity_margin:
            why = "ambiguous"
            reason = (
                f"ambiguous: {best.value} {s1} vs {second.value} {s2} "
                f"(margin {round(s1 - s2, 4)} < {t.ambiguity_margin})"
            )
        route = FALLBACK if why else best
        raw = s1 if why else s1 - s2
        cal = state.calibration
        cmap = cal.maps.get(route) if cal is not None else None
        uncalibrated = 1.0 - s1 if why else raw
        confidence = round(cmap(raw) if cmap is not None else uncalibrated, 4)
        if not why:
            reason = f"{best.value} scored {s1} (runner-up {second.value} {s2})"
        return Classification(
            route=route,
            confidence=confidence,
            scores=scores,
            signals=tuple(signals),
            reason=reason,
            fallback_reason=why,
            calibrated=cmap is not None,
            rules_version=state.version,
        )
