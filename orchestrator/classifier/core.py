"""The request classifier: four tiers, thresholds, calibrated confidence, reload.

Tiers, in the order they run (each one's part is in :attr:`Classification.tiers`):

1. **fast** — the learned tier's n-gram model alone (:meth:`FastScorer.fast`: a dictionary
   lookup per token into a table of precomputed weight sums). It decides when its best class
   (a route, or out of scope) has probability ``>= fast_min`` and the text has no negation cue
   (the rules must read the scope) and no joining cue with a second route likely (the rules
   split the clauses), and is within the scan limit. Most requests end here.
2. **rules** — ``routes.toml``: evidence per route (below). They decide alone when sure.
3. **learned** — the combined model (n-grams plus the rules' evidence as features) decides
   when the rules are unsure.
4. **semantic** — optional (``semantic=True`` or ``ORCH_CLASSIFIER_SEMANTIC=1``, the
   ``[semantic]`` extra; off by default): the MiniLM nearest-example router, consulted only when
   the tiers above end unsure (``low_confidence``/``ambiguous``, never on a tie).

Scoring. Each fired rule gives evidence ``w = weight * similarity`` for its route. A route's
score is the noisy-OR of its positive evidence, ``1 - prod(1 - w)`` (independent weak signals
add up but never pass 1), multiplied by ``prod(1 - w)`` of its fired negative rules. A channel
named in a route's ``channels`` adds that route's ``channel_weight``.

Decision. With the best score ``s1`` and the runner-up ``s2`` (ties broken by route priority):
no rule fired -> fallback (``no_signal``); ``s1 < min_score`` -> fallback (``low_confidence``);
``s1 - s2 < ambiguity_margin`` -> fallback (``ambiguous``); else the best route.

Confidence. The estimated probability that the decision is right: an isotonic map, fitted on
the tune split of the labelled request set, from the raw evidence (``s1 - s2`` for a route,
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
import re
from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass, field
from importlib.resources import files
from math import exp
from pathlib import Path
from typing import Literal, NamedTuple

from orchestrator.classifier import learned as learned_tier
from orchestrator.classifier.engine import CompiledRules, normalise
from orchestrator.classifier.learned import FastScorer, LearnedModel, load_model
from orchestrator.classifier.loader import load_calibration, load_rules
from orchestrator.classifier.models import (
    CalibrationFile,
    Classification,
    FallbackReason,
    Rule,
    RulesFile,
    Signal,
    Thresholds,
    TierContribution,
    TierName,
)
from orchestrator.classifier.negation import (
    clauses,
    joined_after_post,
    joined_before_post,
    joins,
    mask,
    negated_scopes,
)
from orchestrator.classifier.semantic import SemanticTier, enabled_by_env
from orchestrator.datafiles import HotReloader
from orchestrator.exceptions import UserError
from orchestrator.request import MAX_TEXT_CHARS, Request
from orchestrator.routes import Route
from orchestrator.textnorm import to_simplified

log = logging.getLogger(__name__)
#: C0 control characters other than tab, line feed and carriage return.
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f]")

FALLBACK = Route.FALLBACK
_MODERATION = Route.CONTENT_MODERATION
_CLASSES = learned_tier.CLASSES
_FALLBACK_COL = _CLASSES.index(FALLBACK)
#: The n-gram moderation probability under which a line is not read alone as an ask to
#: moderate the lines around it (:meth:`RuleClassifier._frame_of`).
_LINE_MODERATION_P = 0.2
#: The n-gram probability of another route under which a framing is not read in full.
_FRAME_OTHER_P = 0.1
#: Most framings whose reads are remembered (the memo is cleared when full).
_FRAME_MEMO = 4096
#: ``orchestrator/rules/``: shipped as package data (the ``*.toml`` glob in pyproject).
_RULES_DIR = Path(str(files("orchestrator").joinpath("rules")))


def default_rules_path() -> Path:
    """The rules file shipped in the package (``orchestrator/rules/routes.toml``)."""
    return _RULES_DIR / "routes.toml"


def default_model_path() -> Path:
    """The learned tier shipped in the package (``orchestrator/rules/learned.v2.npz``)."""
    return _RULES_DIR / f"learned.v{learned_tier.VERSION}.npz"


def default_calibration_path() -> Path:
    """The fitted calibration shipped in the package (``orchestrator/rules/calibration.toml``)."""
    return _RULES_DIR / "calibration.toml"


class _FastView(NamedTuple):
    """The fast tier's view of a part of a request (:meth:`RuleClassifier._fast_view`)."""

    #: class probabilities, :data:`_CLASSES` order
    probs: list[float]
    #: cue flags (:data:`~orchestrator.classifier.learned.NEGATION` ...)
    flag: int
    #: the most probable class
    best: Route
    #: whether :meth:`RuleClassifier._read` would end with the fast decision for ``best``
    sure: bool


class _FrameRead:
    """What one framing read as, filled as it is needed: its fast view, then its full read."""

    __slots__ = ("full", "seen")

    def __init__(self, seen: _FastView | None) -> None:
        self.seen = seen
        self.full: Classification | None = None


@dataclass(frozen=True)
class _State:
    """Everything one decision needs; replaced as a whole on reload."""

    compiled: CompiledRules
    calibration: CalibrationFile | None
    thresholds: Thresholds
    version: str
    model: LearnedModel | None
    scorer: FastScorer | None = None
    #: the fast tier runs (a scorer is loaded and ``fast_min <= 1``)
    fast_on: bool = False
    #: fast-tier calibration maps as plain ``(xs, ys)`` tuples, per route
    fast_knots: dict[Route, tuple[tuple[float, ...], tuple[float, ...]]] = field(
        default_factory=dict
    )
    #: the fixed tail of the fast tier's note (`` >= fast_min 0.8``)
    fast_note: str = ""
    #: ``(framing, attachments, channel)`` -> its reads (:meth:`RuleClassifier._frame_of`):
    #: requests of one template share a framing, which reads the same every time
    frame_reads: dict[tuple[str, tuple[str, ...], str | None], _FrameRead] = field(
        default_factory=dict
    )


class RuleClassifier:
    """Picks a route for a request from the rules file; explains and calibrates the choice.

    Args:
        rules: Rules to use instead of a file (no reload then).
        rules_path: Rules file; the packaged ``routes.toml`` when both this and ``rules`` are
            None.
        calibration_path: Fitted thresholds and calibration maps; the packaged
            ``calibration.toml`` (when it exists) if None and the rules are the packaged ones.
            Pass ``False`` for none.
        model_path: The learned tier (``learned.v2.npz``); the packaged one (when it exists)
            if None and the rules are the packaged ones. ``False``: rules only.
        min_score: Overrides the calibration file's threshold.
        ambiguity_margin: Overrides the calibration file's margin.
        reload_interval: Seconds between checks of the files for changes; 0 checks on every
            call, None never.
        semantic: The optional semantic tier (MiniLM nearest examples, the ``[semantic]``
            extra), consulted only when the fast tiers end unsure (``low_confidence`` or
            ``ambiguous``; never on a tie). ``True``: a :class:`SemanticTier` built lazily
            from the labelled set; an instance: that one; ``False``: off; None (default): on
            only when the environment variable ``ORCH_CLASSIFIER_SEMANTIC`` is ``1``.

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
        model_path: Path | str | bool | None = None,
        min_score: float | None = None,
        ambiguity_margin: float | None = None,
        reload_interval: float | None = 1.0,
        semantic: bool | SemanticTier | None = None,
    ) -> None:
        if semantic is None:
            semantic = enabled_by_env()
        self.semantic: SemanticTier | None = (
            semantic if isinstance(semantic, SemanticTier) else SemanticTier() if semantic else None
        )
        self._semantic_off = _tier(
            tier="semantic",
            consulted=False,
            scores={},
            decided=False,
            note="off (semantic=False; ORCH_CLASSIFIER_SEMANTIC=1 switches it on)"
            if self.semantic is None
            else "not needed: the fast tiers were sure",
        )
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
        if model_path is False:
            self.model_path: Path | None = None
        elif model_path not in (None, True):
            self.model_path = Path(model_path)  # type: ignore[arg-type]
        elif rules_path is None and rules is None and default_model_path().exists():
            self.model_path = default_model_path()
        else:
            self.model_path = None
        self._live = HotReloader(
            self._load,
            [p for p in (self.rules_path, self.calibration_path, self.model_path) if p is not None],
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
        model = load_model(self.model_path) if self.model_path else None
        # the per-request lookup tables, built aside like the rules
        scorer = model.scorer() if model is not None else None
        fast_knots = (
            {r: (m.x, m.y) for r, m in calibration.fast_maps.items()} if calibration else {}
        )
        return _State(
            compiled,
            calibration,
            thresholds,
            version,
            model,
            scorer,
            fast_on=scorer is not None and thresholds.fast_min <= 1.0,
            fast_knots=fast_knots,
            fast_note=f" >= fast_min {thresholds.fast_min}",
        )

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
    def model(self) -> LearnedModel | None:
        """The live learned tier (None: rules only)."""
        return self._state.model

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
        """Route one request; never raises for a valid :class:`Request`.

        Raises:
            TypeError: ``request`` is not a :class:`Request` (for a plain string, use
                :meth:`classify_text`).
        """
        if not isinstance(request, Request):
            raise TypeError(
                f"classify takes a Request, got {type(request).__name__}: build one with "
                "Request(text=...), or call classify_text for a plain string"
            )
        attachments = request.attachments
        exts = tuple(a.extension for a in attachments) if attachments else ()
        return self._classify(request.text, exts, request.channel)

    def classify_text(
        self,
        text: str | bytes,
        *,
        attachments: Sequence[str] | None = (),
        channel: str | None = None,
    ) -> Classification:
        """Route raw text or bytes, including input that :class:`Request` would refuse.

        Empty or whitespace-only text, text of more than :data:`MAX_TEXT_CHARS` characters,
        bytes that are not UTF-8, binary data (NUL or many control characters) and strings with
        lone surrogates get a fallback result with ``fallback_reason="invalid_input"`` and a
        reason that says what was wrong. Emoji-only text is classified normally (nothing in it
        is a known word and no rule fires, so it falls back with ``no_signal``).

        Args:
            text: The user's message, as ``str`` or UTF-8 ``bytes``.
            attachments: Attachment file names (a list, not one string); None for none.
            channel: Channel of the request.

        Returns:
            The classification; never raises for bad text.

        Raises:
            TypeError: ``attachments`` is a single string or holds something other than
                strings, or ``channel`` is not a string (the message says what to pass).
        """
        if isinstance(attachments, str | bytes):
            raise TypeError(
                f"attachments must be a list of file names, got the single {attachments!r}: "
                f"pass [{attachments!r}]"
            )
        names = tuple(attachments or ())
        if not all(isinstance(name, str) for name in names):
            raise TypeError(f"attachments must be file names (str), got {names!r}")
        if channel is not None and not isinstance(channel, str):
            raise TypeError(f"channel must be a str or None, got {type(channel).__name__}")
        if isinstance(text, bytes | bytearray | memoryview):
            raw = bytes(text)
            try:
                text = raw.decode("utf-8")
            except UnicodeDecodeError as exc:
                utf16 = raw[:2] in (b"\xff\xfe", b"\xfe\xff")  # a UTF-16 byte-order mark
                return self._invalid(
                    f"text is not valid UTF-8 (byte 0x{raw[exc.start]:02x} at offset "
                    f"{exc.start}); send UTF-8 text"
                    + ("; it starts like UTF-16: save it as UTF-8" if utf16 else "")
                )
        if not isinstance(text, str):
            return self._invalid(f"text must be str or bytes, got {type(text).__name__}")
        if not text.strip():
            return self._invalid("text is empty or whitespace; send the user's message")
        if len(text) > MAX_TEXT_CHARS:
            return self._invalid(
                f"text has {len(text):,} characters, over the {MAX_TEXT_CHARS:,} limit; "
                "send long content as an attachment"
            )
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return self._invalid(
                "text has lone surrogate code points (not valid Unicode); decode the source "
                "with errors='replace' (or 'surrogatepass' and re-encode) before sending it"
            )
        head = text[:4096]
        controls = len(_CONTROL.findall(head))
        if "\x00" in head or controls > len(head) // 10:
            return self._invalid(
                f"text looks binary ({controls} control characters in the first "
                f"{len(head)}); send text, or the file as an attachment"
            )
        exts = tuple(name.rsplit(".", 1)[-1].lower() if "." in name else "" for name in names)
        return self._classify(text, exts, channel)

    def evidence(self, request: Request) -> tuple[list[str], Classification, bool]:
        """What the learned tier reads for ``request``, for fitting it.

        Returns:
            ``(features, classification, negated)``: the learned tier's feature names (see
            :func:`orchestrator.classifier.learned.features`; rule ids included), this
            classifier's classification of the text read as one, as the features are (not of
            its framing or its ask read alone; its first tier holds the rule scores), and
            whether any match was negated.
        """
        state = self._live.get()
        compiled = state.compiled
        exts = tuple(a.extension for a in request.attachments)
        text = _simplified(request.text)
        norm, _ = _scan(text, compiled.max_scan_chars)
        scopes = negated_scopes(norm)
        ids: list[str] = []
        negated = False
        for index, (_, _, span) in compiled.match(norm, exts, request.channel).items():
            rule = compiled.rules[index]
            if (
                scopes
                and span is not None
                and rule.negatable
                and not rule.negative
                and any(x <= span[0] and span[1] <= y for x, y in scopes)
            ):
                negated = True
                continue
            if not rule.negative:
                ids.append(rule.id)
        rules = self._read(text, exts, request.channel)
        feats = learned_tier.features(
            mask(norm, scopes),
            attachments=exts,
            channel=request.channel,
            rule_ids=ids,
            rule_scores=_rule_scores(rules),
        )
        return feats, rules, negated

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
        text = _simplified(text)
        whole = self._read(text, exts, channel)
        if whole.truncated:
            return whole
        if len(text) >= _ASK_MIN_CHARS:  # prose with an ask, in paragraphs or not (issue 46)
            whole = self._ask_of(text, exts, channel, whole, "", asks_only=text.count("\n\n") < 2)
        return self._frame_of(text, exts, channel, whole)

    def _frame_of(
        self, text: str, exts: tuple[str, ...], channel: str | None, whole: Classification
    ) -> Classification:
        """The request's own words read without the material it quotes.

        A request that quotes a text ("“配送很快，味道一般”这条点评能留在小程序里吗",
        ``Reported content: "i wanna cancel my account" - please assess``) or labels one
        (``待审内容：味道还不错``) asks about that text; read as one, the quoted words may speak
        louder than the ask (a customer's complaint under review reads as a customer-service
        request). So the framing (:func:`_framing`: the text with each quotation's content
        replaced by an ellipsis, or the label before the colon) is classified on its own too,
        and decides when it picks another route than the whole text, surely
        (:data:`_ASK_SURE`). A framing that falls back never overrules a route.

        A text of a few lines with nothing quoted or labelled may carry its ask on a line of
        its own, before or after the post (``Flag or keep?\\n{post}``); its first and its last
        line are read alone too (:func:`_line_framings`), and the surer of them decides when it
        asks to moderate: a line of the post itself reads as what the post says, which must
        not overrule the whole.

        Requests of one template (a moderation queue's ``Keep or delete this forum reply:``)
        share their framing, so each framing's reads are remembered with the loaded files
        (:data:`_FRAME_MEMO` of them; a reload starts afresh): its fast view, and its full read
        once one is needed. A framing reads the same whatever it framed.
        """
        frame = _framing(text)
        # a quoted or labelled text's framing may pick any route; a line read alone may only
        # be an ask to moderate the lines around it (moderation takes a post as its object;
        # a post's own line reads as what the post says: a customer's question, a joke)
        if frame is not None:
            frames, only = [frame], None
        elif whole.route is _MODERATION:  # a line could only ask for what the whole text got
            return whole
        else:
            frames, only = _line_framings(text), _MODERATION
        best: tuple[Classification, str] | None = None
        memo = self._live.get().frame_reads
        for frame in frames:
            key = (frame, exts, channel)
            read = memo.get(key)
            if read is None:
                if len(memo) >= _FRAME_MEMO:
                    memo.clear()
                read = memo[key] = _FrameRead(self._fast_view(frame, exts, channel))
            seen = read.seen
            if seen is not None and (
                _keeps(seen, whole.route) or _leans_nowhere(seen, whole, only)
            ):
                continue
            c = read.full
            if c is None:
                c = read.full = self._read(frame, exts, channel)
            if c.route is FALLBACK or c.route is whole.route or c.confidence < _ASK_SURE:
                continue
            if only is not None and c.route is not only:
                continue
            if best is None or c.confidence > best[0].confidence:
                best = (c, frame)
        if best is None:
            return whole
        c, frame = best
        return _part_decides(c, whole, f"without the text it quotes ({frame!r})")

    def _fast_view(self, part: str, exts: tuple[str, ...], channel: str | None) -> _FastView | None:
        """The fast tier's view of ``part`` (a part of a request): its probabilities, cue
        flags, best class and ``sure``, what :meth:`_read` needs to end with the fast decision
        for that class (``p >= fast_min``, no cue flag, no decisive rule that may
        overrule it); None when the fast tier is off or the part is over the scan limit. One
        framed request in five is read twice: this makes the second read cheap when its fast
        tier keeps the whole text's route."""
        state = self._live.get()
        scorer = state.scorer
        if scorer is None or not state.fast_on or len(part) > state.compiled.max_scan_chars:
            return None
        norm = _fold(part)
        probs, flag = scorer.fast(norm, attachments=exts, channel=channel)
        p1 = max(probs)
        c1 = _CLASSES[probs.index(p1)]
        return _FastView(probs, flag, c1, _fast_sure(state, norm, flag, p1, c1))

    def _read(self, text: str, exts: tuple[str, ...], channel: str | None) -> Classification:
        """The text read as one (its head and tail windows when over the scan limit)."""
        state = self._live.get()  # looks at the files at most once per reload_interval
        limit, n = state.compiled.max_scan_chars, len(text)
        if n <= limit:
            norm = _fold(text)
            scanned: tuple[tuple[int, int], ...] = ((0, n),)
            cut = ""
        else:
            norm, scanned = _scan(text, limit)
            cut = f"; read {sum(b - a for a, b in scanned):,} of {n:,} characters " + (
                "(head and tail)" if len(scanned) > 1 else "(without its blank padding)"
            )
        scorer = state.scorer
        fast_tier = _NOT_LOADED_FAST
        if scorer is not None and state.fast_on and n <= limit:
            probs, flag = scorer.fast(norm, attachments=exts, channel=channel)
            p1 = max(probs)
            c1 = _CLASSES[probs.index(p1)]  # the first of equals, as a stable argsort
            compiled = state.compiled
            sheet_and_more = _sheet_and_more(c1, exts, norm)
            if not sheet_and_more and _fast_sure(state, norm, flag, p1, c1):
                return self._fast_decision(state, c1, p1, probs, scanned)
            # a second request is possible when a cue joins clauses and a second route has
            # some probability; a negation scope may hold a cue word: the rules read both
            why_not = ""
            if sheet_and_more:
                why_not = "a spreadsheet and more than one clause: the rules read the clauses"
            elif flag & learned_tier.NEGATION:
                why_not = "a negation cue: the rules read its scope"
            elif flag & learned_tier.SHORT:
                why_not = "too short for the n-grams alone: the rules read it"
            elif flag & learned_tier.COMPOUND and (
                max(p for p, c in zip(probs, _CLASSES) if c is not c1 and c is not FALLBACK)  # noqa: B905
                >= _COMPOUND_P
                # a moderation ask may follow a request of another route, however sure the
                # n-grams are of moderation: the rules split the clauses
                or (
                    c1 is Route.CONTENT_MODERATION
                    and (joined_before_post(norm) or joined_after_post(norm) is not None)
                )
            ):
                why_not = "two requests may be joined: the rules read the clauses"
            elif p1 < state.thresholds.fast_min:
                why_not = f"unsure: {c1} p={p1:.4f} < fast_min {state.thresholds.fast_min}"
            elif (
                flag & learned_tier.FEW
                and c1 is not FALLBACK
                and _rules_tie(compiled, norm, exts, channel)
            ):
                why_not = "a few words that the rules score as a tie: the rules call it"
            elif compiled.decisive_may_fire(norm, c1):
                why_not = (
                    "a decisive rule may overrule "
                    + ("a fallback" if c1 is FALLBACK else c1.value)
                    + ": the rules read it"
                )
            if not why_not:
                return self._fast_decision(state, c1, p1, probs, scanned)
            fast_tier = _tier("fast", True, _ranked_scores(probs), False, why_not)
            blank = bool(flag & learned_tier.BLANK)
        else:
            blank = False
        result = self._slow(state, norm, exts, channel, n, scanned, cut, fast_tier, blank)
        return self._ask_of(text, exts, channel, result, cut) if n > limit else result

    def _ask_of(
        self,
        text: str,
        exts: tuple[str, ...],
        channel: str | None,
        whole: Classification,
        cut: str,
        *,
        asks_only: bool = False,
    ) -> Classification:
        """The ask of a request that is mostly material, read on its own: its first or last
        paragraph.

        With ``asks_only`` (prose not laid out in paragraphs), a unit is read only when it
        reads as an ask (:data:`_ASK_LOOK`: a question, a request word), so that the last
        sentence of a story with no ask never speaks for it.

        A long request, or one of a few paragraphs (:data:`_ASK_MIN_CHARS` or more, two blank
        lines or more), is mostly material (a pasted diary, a log, a thread, a meeting's notes)
        with the ask before or after it. Read as one, the material speaks louder than the ask:
        a pasted story reads as a post to review, a complaint's thread as a report. So the first
        and the last paragraph (or line, or two sentences, whichever unit is short enough:
        :func:`_ask_spans`) are classified on their own too, and the surer of them decides when
        it picks a route, or when it is out of scope more surely than the whole text picks one.
        A story read as one reads as a post to review; an ask after it for another route
        decides when it is fairly sure (:func:`_asks_past_prose`, issue 46).
        Over the scan limit (``whole.truncated``) the whole text was only partly read, so that
        is all; within it, the ask decides only when it is sure (:data:`_ASK_SURE`), since the
        whole text was read too. The result keeps ``truncated`` and the ranges that were read
        (both paragraphs lie inside them).
        """
        best: tuple[Classification, tuple[int, int], str] | None = None
        for (a, b), where in _ask_spans(text):
            if asks_only and _ASK_LOOK.search(text, a, b) is None:
                continue
            c = self._read(text[a:b], exts, channel)
            if best is None or (c.route is not FALLBACK, c.confidence) > (
                best[0].route is not FALLBACK,
                best[0].confidence,
            ):
                best = (c, (a, b), where)
        if best is None:
            return whole
        c, (a, b), where = best
        if not whole.truncated and (
            c.route is whole.route
            or (
                c.confidence < _ASK_SURE
                and not (
                    _asks_past_prose(c, whole)
                    and channel is None
                    and not self._asks_to_moderate(text, exts)
                )
            )
        ):
            return whole
        if c.route is FALLBACK and (
            c.fallback_reason != "out_of_scope" or c.confidence <= whole.confidence
        ):
            return whole
        return _part_decides(c, whole, f"on its own ({where}, characters {a:,}-{b:,})", cut)

    def _asks_to_moderate(self, text: str, exts: tuple[str, ...]) -> bool:
        """Whether a moderation rule that asks for a review or names abuse
        (:data:`_MODERATION_ASK_RULES`) fires on ``text`` outside a negation's scope."""
        compiled = self._live.get().compiled
        norm, _ = _scan(text, compiled.max_scan_chars)
        scopes = negated_scopes(norm)
        for index, (_, _, span) in compiled.match(norm, exts, None).items():
            rule = compiled.rules[index]
            if (
                rule.route is _MODERATION
                and not rule.negative
                and rule.id.startswith(_MODERATION_ASK_RULES)
                and not (
                    rule.negatable
                    and span is not None
                    and any(x <= span[0] and span[1] <= y for x, y in scopes)
                )
            ):
                return True
        return False

    def _fast_decision(
        self,
        state: _State,
        route: Route,
        p1: float,
        probs: list[float],
        scanned: tuple[tuple[int, int], ...],
    ) -> Classification:
        """The fast tier's decision (the text is within the scan limit: never truncated).

        Two requests in three end here, so it is built with as few steps as this host's
        Python allows (each ``round`` or float format costs about a microsecond on it): the
        scores are the model's probabilities as computed (not rounded), ordered once by a
        stable sort of four indices; the calibration map is a plain tuple interpolation; the
        reason and the tier's note share one formatted probability and precomputed text.
        """
        order = sorted(_INDICES, key=probs.__getitem__, reverse=True)  # stable: ties by class
        scores = {_CLASSES[i]: probs[i] for i in order}
        knots = state.fast_knots.get(route)
        shown = f"{p1:.4f}"
        head, tail = _FAST_REASON[route]
        if route is FALLBACK:
            out_scores = {c: p for c, p in scores.items() if c is not FALLBACK}
            why: FallbackReason | None = "out_of_scope"
        else:
            out_scores = scores.copy()
            del out_scores[FALLBACK]
            why = None
        return Classification(
            route=route,
            confidence=_interp(knots, p1) if knots is not None else p1,
            scores=out_scores,
            reason=head + shown + tail,
            fallback_reason=why,
            calibrated=knots is not None,
            rules_version=state.version,
            tiers=(
                _tier("fast", True, scores, True, "sure: p=" + shown + state.fast_note),
                _SKIPPED_RULES,
                _SKIPPED_LEARNED,
                self._semantic_off,
            ),
            scanned=scanned,
        )

    def _slow(
        self,
        state: _State,
        norm: str,
        exts: tuple[str, ...],
        channel: str | None,
        n: int,
        scanned: tuple[tuple[int, int], ...],
        cut: str,
        fast_tier: TierContribution,
        blank: bool = False,
    ) -> Classification:
        """The rules, then the combined learned tier when the rules are unsure.

        ``blank``: the fast tier knew no feature of the text (:data:`~orchestrator.classifier.
        learned.BLANK`: emoji, an id, a word no request used); with no rule fired either, the
        learned tier would only restate its prior, so the result is a ``no_signal`` fallback.
        """
        compiled = state.compiled
        limit = compiled.max_scan_chars
        fired = compiled.match(norm, exts, channel)
        scopes = negated_scopes(norm)
        rules = compiled.rules
        miss = dict.fromkeys(compiled.routes, 1.0)
        veto = dict.fromkeys(compiled.routes, 1.0)
        signals: list[Signal] = []
        rule_ids: list[str] = []
        n_negated = 0
        decisive: list[Rule] = []
        for index, (sim, matched, span) in fired.items():
            rule = rules[index]
            w = rule.weight * sim
            negated = False
            if scopes and span is not None and rule.negatable and not rule.negative:
                a, b = span
                negated = any(x <= a and b <= y for x, y in scopes)
            if rule.decisive and not negated:
                decisive.append(rule)
            if negated:
                n_negated += 1
            elif rule.negative:
                veto[rule.route] *= 1.0 - w
            else:
                miss[rule.route] *= 1.0 - w
                rule_ids.append(rule.id)
            signals.append(
                Signal(
                    rule_id=rule.id,
                    route=rule.route,
                    weight=round(w, 4),
                    matched=matched,
                    span=span,
                    negative=rule.negative,
                    similarity=sim,
                    negated=negated,
                )
            )
        if channel is not None:
            for route, w in compiled.channels.get(channel.lower(), ()):
                miss[route] *= 1.0 - w
                signals.append(
                    Signal(rule_id=f"channel.{route}", route=route, weight=w, matched=channel)
                )
        # best first: score, then priority, then Route order (no key function: plain
        # tuples sort faster)
        ranked = sorted(
            [
                # a route no rule fired for scores 0.0 (rounding it costs a microsecond)
                (0.0 if miss[r] == 1.0 else round((1.0 - miss[r]) * veto[r], 4), p, -i, r)
                for i, (r, p) in enumerate(compiled.ranking)
            ],
            reverse=True,
        )
        scores = {r: score for score, _, _, r in ranked}
        (s1, _, _, best), (s2, _, _, second) = ranked[0], ranked[1]
        t = state.thresholds
        tie = s1 > 0.0 and s1 == s2
        parts = clauses(norm) if s2 > 0.0 else None
        asked = _asked(compiled, norm, parts, signals, scopes, t.secondary_min)
        model = state.model
        sure = s1 >= t.sure_score and s2 <= 0.0 and not n_negated and not asked
        # over the scan limit the rules decide whenever they found anything: they read 4,000
        # characters of head and tail (a rule fires once however often its word repeats); the
        # learned tier reads only 2 x 320 of them and never saw a long paste in training (it
        # sent "<ask> + 300,000 characters of prose" to moderation). The rules' calibration
        # maps were fitted on sure decisions only, so such a decision's confidence is its raw
        # margin, uncalibrated ("refund " * 50000 had confidence 0.0 from the sure-range map).
        long_rules = n > limit and s1 >= t.min_score and not sure and not asked
        neg_note = f", {n_negated} negated" if n_negated else ""
        why: FallbackReason | None = None
        cal = state.calibration
        learned_probs: dict[Route, float] | None = None
        unknown = blank and s1 <= 0.0  # nothing any tier knows: no signal, not "out of scope"
        if model is None or sure or long_rules or unknown:
            if s1 <= 0.0:
                why, reason = (
                    "no_signal",
                    "no rule fired"
                    + (" and no word of it is one the n-gram model knows" if unknown else ""),
                )
            elif tie:
                why = "ambiguous"
                reason = f"tie: {best} {s1} = {second} {s2}; a tie never acts"
            elif s1 < t.min_score:
                why = "low_confidence"
                reason = f"best route {best} scored {s1} < min_score {t.min_score}"
            elif s1 - s2 < t.ambiguity_margin:
                why = "ambiguous"
                reason = (
                    f"ambiguous: {best} {s1} vs {second} {s2} "
                    f"(margin {round(s1 - s2, 4)} < {t.ambiguity_margin})"
                )
            else:
                reason = f"{best} scored {s1} (runner-up {second} {s2})"
            route = FALLBACK if why else best
            raw = s1 if why else s1 - s2
            cmap = cal.maps.get(route) if cal is not None and not long_rules else None
            uncalibrated = 1.0 - s1 if why else raw
            tiers = (
                fast_tier,
                _tier(
                    tier="rules",
                    consulted=True,
                    scores=scores,
                    decided=True,
                    note=(
                        "no learned tier loaded"
                        if model is None
                        else "sure"
                        if sure
                        else "decides: no rule fired on a text the n-grams do not know"
                        if unknown
                        else "decides: text over the scan limit (confidence uncalibrated)"
                    )
                    + neg_note,
                ),
                _tier(
                    tier="learned",
                    consulted=False,
                    scores={},
                    decided=False,
                    note="not loaded"
                    if model is None
                    else "not run: the rules were sure"
                    if sure
                    else "not run: no feature of the text is known (its prior is no signal)"
                    if unknown
                    else "not run: text over the scan limit, the rules read more of it",
                ),
            )
            out_scores = scores
        else:
            assert state.scorer is not None
            z, share = state.scorer.score(
                mask(norm, scopes),
                attachments=exts,
                channel=channel,
                rule_ids=rule_ids,
                rule_scores=scores,
            )
            probs = _softmax(z)
            order = sorted(_INDICES, key=probs.__getitem__, reverse=True)  # stable, as argsort
            c1, c2 = _CLASSES[order[0]], _CLASSES[order[1]]
            p1, p2 = probs[order[0]], probs[order[1]]
            p_fallback = probs[_FALLBACK_COL]
            learned_probs = {_CLASSES[i]: probs[i] for i in order}
            if tie and not asked:
                why = "ambiguous"
                reason = f"tie in the rules: {best} {s1} = {second} {s2}; a tie never acts"
            elif c1 is FALLBACK:
                why = "out_of_scope"
                reason = (
                    f"learned tier: out of scope for every route (p={p1:.4f}, next {c2} {p2:.4f})"
                )
            elif p1 < t.min_score:
                why = "low_confidence"
                reason = f"learned tier: best route {c1} p={p1:.4f} < min_score {t.min_score}"
            elif p1 - p2 < t.ambiguity_margin:
                why = "ambiguous"
                reason = (
                    f"ambiguous: {c1} p={p1:.4f} vs {c2} p={p2:.4f} "
                    f"(margin {p1 - p2:.4f} < {t.ambiguity_margin})"
                )
            else:
                reason = f"{c1} p={p1:.4f} (learned tier; runner-up {c2} {p2:.4f})"
            route = FALLBACK if why else c1
            raw = p_fallback if route is FALLBACK else p1 - p2
            cmap = cal.learned_maps.get(route) if cal is not None else None
            uncalibrated = p_fallback if route is FALLBACK else p1
            out_scores = {r: p for r, p in learned_probs.items() if r is not FALLBACK}
            overruled = (
                overrule(route, learned_probs, decisive, compiled.ranking)
                if decisive and not (tie and not asked)
                else None
            )
            if overruled is not None:
                by, rule = overruled
                reason = f"{by} by decisive rule {rule.id}, overruling the learned tier ({reason})"
                # confidence, uncalibrated: a route rescued from fallback gets the learned
                # tier's own mass on "this route or no route" (the rule rules out no route);
                # a veto gets the negative rule's weight
                cmap = None
                uncalibrated = (
                    rule.weight if by is FALLBACK else learned_probs[by] + learned_probs[FALLBACK]
                )
                route, why = by, ("out_of_scope" if by is FALLBACK else None)
            tiers = (
                fast_tier,
                _tier(
                    tier="rules",
                    consulted=True,
                    scores=scores,
                    decided=False,
                    note=(
                        f"unsure: {best} {s1}, {second} {s2}" + (", tie" if tie else "") + neg_note
                    ),
                ),
                _tier(
                    tier="learned",
                    consulted=True,
                    scores=learned_probs,
                    decided=True,
                    note=f"{share:.0%} of its evidence for {c1} came from the fired rules",
                ),
            )
        confidence = round(cmap(raw) if cmap is not None else uncalibrated, 4)
        secondary: tuple[Route, ...] = ()
        if not asked and s2 > 0.0:
            # a request before a moderation ask that the rules' evidence alone missed
            p_moderation = (learned_probs or {}).get(Route.CONTENT_MODERATION, 0.0)
            mode: Literal["decided", "likely"] | None = (
                "decided"
                if route is Route.CONTENT_MODERATION
                else "likely"
                if p_moderation >= _MODERATION_LIKELY
                else None
            )
            if mode is not None and parts is not None:
                asked = _compound(
                    norm,
                    parts,
                    signals,
                    t.secondary_min,
                    moderation=mode,
                    content=compiled.content_ids,
                )
        if asked:
            # the tiers above read the text as one request; a compound's figures are each
            # asked route's evidence in its own clause (the tiers' views stay in ``tiers``)
            evidence = dict(asked)
            route, secondary, why = asked[0][0], tuple(r for r, _ in asked[1:]), None
            reason = "compound request: " + " then ".join(
                f"{r} ({e:.2f} in its clause)" for r, e in asked
            )
            out_scores = dict(
                sorted(
                    ((r, round(evidence.get(r, 0.0), 4)) for r in compiled.routes),
                    key=lambda item: item[1],
                    reverse=True,
                )
            )
            confidence, cmap = round(evidence[route], 4), None
        semantic_tier = self._semantic_off
        if why in ("low_confidence", "ambiguous", "out_of_scope", "no_signal") and not tie:
            semantic_tier, decided = self._consult_semantic(norm, exts)
            if decided is not None:
                route, why, p_sem = decided
                reason = (
                    f"{route} by the semantic tier (MiniLM nearest examples, score "
                    f"{p_sem}); the fast tiers were unsure: {reason}"
                )
                confidence, cmap = p_sem, None
        return Classification(
            route=route,
            confidence=max(0.0, min(1.0, confidence)),
            scores=out_scores,
            signals=tuple(signals),
            reason=reason + cut,
            fallback_reason=why,
            calibrated=cmap is not None,
            rules_version=state.version,
            secondary_routes=secondary,
            tiers=(*tiers, semantic_tier),
            truncated=n > limit,
            scanned=scanned,
        )

    def _consult_semantic(
        self, norm: str, exts: tuple[str, ...]
    ) -> tuple[TierContribution, tuple[Route, None, float] | None]:
        """The semantic tier's view of an unsure request: its tier record, and a decision
        ``(route, None, score)`` when its best route reaches its threshold."""
        sem = self.semantic
        if sem is None:
            return self._semantic_off, None
        try:
            scores = sem.scores(norm, [f"file.{e}" for e in exts])
        except UserError as exc:
            return _tier(
                tier="semantic", consulted=False, scores={}, decided=False, note=str(exc)
            ), None
        rounded = {r: round(v, 4) for r, v in scores.items()}
        best, score = next(iter(rounded.items()))
        if score >= sem.threshold:
            note = f"decided: {best} {score} >= threshold {sem.threshold}"
            return _tier(
                tier="semantic", consulted=True, scores=rounded, decided=True, note=note
            ), (best, None, score)
        note = f"abstained: best {best} {score} < threshold {sem.threshold}"
        return _tier(
            tier="semantic", consulted=True, scores=rounded, decided=False, note=note
        ), None


_COMPOUND_P = 0.01
#: The learned tier's probability of moderation from which :func:`_compound` reads a clause's
#: moderation evidence as an ask (``moderation="likely"``) when it decided another route:
#: "update my address; also, would you let this comment through: nice" (moderation 0.25).
_MODERATION_LIKELY = 0.2


def overrule(
    route: Route,
    probs: dict[Route, float],
    decisive: Sequence[Rule],
    ranking: Sequence[tuple[Route, int]],
) -> tuple[Route, Rule] | None:
    """The decisive rules' say on a learned-tier decision: ``(new route, rule)``, or None.

    * A **fallback** becomes the route of a positive decisive rule that fired, when no
      negative decisive rule against that route fired too. With one such route, only when it
      is the learned tier's most probable *route* (the rule settles fallback-or-this-route,
      never this-route-or-another) or when the rule ``settles`` (:class:`Rule`); with
      several, the one of the highest priority (a post under review may mention anything).
    * A **route** becomes fallback when a negative decisive rule against it fired and no
      positive decisive rule of it did; that fallback then goes to a positive decisive rule
      that ``settles`` and fired too ("Flag or approve: my parcel is late": the review-queue
      framing vetoes customer service, and settles moderation).

    Args:
        route: The learned tier's decision.
        probs: Its class probabilities (fallback included).
        decisive: The decisive rules that fired outside any negation scope.
        ranking: ``(route, priority)`` of every route (:attr:`CompiledRules.ranking`).
    """
    positive = {r.route: r for r in decisive if not r.negative}
    against = {r.route: r for r in decisive if r.negative}
    if route is FALLBACK:
        candidates = [r for r in positive if r not in against]
        if not candidates:
            return None
        if len(candidates) == 1:
            best_route = max(
                (r for r in probs if r is not FALLBACK), key=probs.__getitem__, default=None
            )
            if candidates[0] is not best_route and not positive[candidates[0]].settles:
                return None
            return candidates[0], positive[candidates[0]]
        priority = dict(ranking)
        winner = max(candidates, key=lambda r: priority.get(r, 0))
        return winner, positive[winner]
    if route in against and route not in positive:
        then = overrule(FALLBACK, probs, decisive, ranking)
        if then is not None and then[1].settles:
            return then
        return FALLBACK, against[route]
    return None


def _sheet_and_more(route: Route, exts: tuple[str, ...], norm: str) -> bool:
    """Whether a spreadsheet request may ask for something else too: the fast tier chose a
    report for a request with an attachment, and the text has more than one clause. The
    attachment makes the n-grams so sure of the report that a second request in the text
    ("请汇总附件表格，还有我的订单要退款") never reaches the rules' clause reading (issue 46);
    such a request is read by the rules, which find each clause's route."""
    return route is Route.EXCEL_REPORT and bool(exts) and len(clauses(norm)) > 1


def _simplified(text: str) -> str:
    """Traditional Chinese folded to Simplified (OpenCC t2s, :func:`to_simplified`) before any
    rule, n-gram or framing reads the text: the rules, the lexicon of the learned tiers and the
    labelled set are Simplified, and a request in Traditional characters must route like its
    Simplified twin (issue 46). ASCII text is returned as it is, without a lookup."""
    return text if text.isascii() else to_simplified(text)


def _fold(text: str) -> str:
    """:func:`normalise`, with fold_text's own ASCII fast path inlined: plain printable ASCII
    needs no homoglyph, zero-width or NFKC folding, only lower case."""
    return text.lower() if text.isascii() and text.isprintable() else normalise(text)


def _fast_sure(state: _State, norm: str, flag: int, p1: float, best: Route) -> bool:
    """Whether the fast tier decides ``best`` alone on ``norm``: no cue flag, ``p1`` at least
    ``fast_min``, and no decisive rule that may overrule it (one RE2 set pass; when one may,
    the rules and the combined model read the text, and the rule has its say)."""
    return (
        not flag
        and p1 >= state.thresholds.fast_min
        and not state.compiled.decisive_may_fire(norm, best)
    )


def _leans_nowhere(seen: _FastView, whole: Classification, only: Route | None) -> bool:
    """Whether a part's n-grams barely lean to any route it could decide (``only``, or any
    route but the whole text's), so that its full read (~60 µs) is spared: a framing that
    decided had p >= 0.18 for its route on every labelled request and test case
    (:data:`_FRAME_OTHER_P` 0.1; 381 of 654 full reads spared, no decision lost), a line that
    asked to moderate p >= 0.5 (:data:`_LINE_MODERATION_P` 0.2)."""
    probs = seen.probs
    if only is not None:
        return probs[_CLASSES.index(only)] < _LINE_MODERATION_P
    other = max(
        (
            p
            for p, c in zip(probs, _CLASSES, strict=True)
            if c is not whole.route and c is not FALLBACK
        ),
        default=0.0,
    )
    return other < _FRAME_OTHER_P


def _keeps(seen: _FastView, route: Route) -> bool:
    """Whether a part's fast view (:meth:`RuleClassifier._fast_view`) is a sure fast decision
    for ``route`` or for fallback: its full read would keep the whole text's ``route``."""
    return seen.sure and (seen.best is route or seen.best is FALLBACK)


def _part_decides(
    part: Classification, whole: Classification, how: str, cut: str = ""
) -> Classification:
    """``part`` (a part of the request read alone: its ask, its framing) as the decision, its
    reason saying how the ask was read and what the whole text read as; ``truncated`` and
    ``scanned`` stay the whole text's (the part lies inside what was read)."""
    return part.model_copy(
        update={
            "reason": f"the ask read {how}: {part.reason}; the whole text read as "
            f"{whole.route.value}{cut}",
            "truncated": whole.truncated,
            "scanned": whole.scanned,
        }
    )


def _tier(
    tier: TierName, consulted: bool, scores: dict[Route, float], decided: bool, note: str
) -> TierContribution:
    """A :class:`TierContribution` from its fields in declaration order."""
    return TierContribution(
        tier=tier, consulted=consulted, scores=scores, decided=decided, note=note
    )


_INDICES = tuple(range(len(_CLASSES)))
#: The fixed parts of a fast-tier decision's reason, per route: ``head + p + tail``.
_FAST_REASON: dict[Route, tuple[str, str]] = {
    r: (
        ("fast tier: out of scope for every route (p=", ")")
        if r is FALLBACK
        else (
            f"{r.value} p=",
            " (fast tier: n-gram model, no negation or second request for the rules to read)",
        )
    )
    for r in _CLASSES
}


def _ranked_scores(probs: list[float]) -> dict[Route, float]:
    """Class probabilities (:data:`_CLASSES` order) as a dict, highest first (ties in class
    order, as a stable argsort)."""
    return {_CLASSES[i]: probs[i] for i in sorted(_INDICES, key=probs.__getitem__, reverse=True)}


def _rules_tie(
    compiled: CompiledRules, norm: str, exts: tuple[str, ...], channel: str | None
) -> bool:
    """Whether the rules' two best routes score the same (above 0) on a short text: the
    fast tier's check before it acts on a text of a few words (a tie never acts). The scores
    are :meth:`RuleClassifier._slow`'s (noisy-OR, negative rules, channel hints, rounded to
    4 places); negation is not read (a text with a negation cue never gets here)."""
    rules = compiled.rules
    miss = dict.fromkeys(compiled.routes, 1.0)
    veto = dict.fromkeys(compiled.routes, 1.0)
    for index, (sim, _, _) in compiled.match(norm, exts, channel).items():
        rule = rules[index]
        if rule.negative:
            veto[rule.route] *= 1.0 - rule.weight * sim
        else:
            miss[rule.route] *= 1.0 - rule.weight * sim
    if channel is not None:
        for route, w in compiled.channels.get(channel.lower(), ()):
            miss[route] *= 1.0 - w
    top = sorted((round((1.0 - miss[r]) * veto[r], 4) for r in compiled.routes), reverse=True)
    return top[0] > 0.0 and top[0] == top[1]


def _interp(knots: tuple[tuple[float, ...], tuple[float, ...]], value: float) -> float:
    """:meth:`IsotonicMap.__call__ <orchestrator.classifier.calibration.IsotonicMap.__call__>`
    on its knots as plain tuples (no attribute lookups on the hot path)."""
    xs, ys = knots
    if value <= xs[0]:
        return ys[0]
    if value >= xs[-1]:
        return ys[-1]
    i = bisect_right(xs, value)
    x0, y0 = xs[i - 1], ys[i - 1]
    return y0 + (ys[i] - y0) * (value - x0) / (xs[i] - x0)


_NOT_LOADED_FAST = _tier(
    tier="fast",
    consulted=False,
    scores={},
    decided=False,
    note="not run (no learned tier, fast_min > 1, or a text over the scan limit)",
)
_SKIPPED_RULES = _tier(
    tier="rules", consulted=False, scores={}, decided=False, note="not run: the fast tier was sure"
)
_SKIPPED_LEARNED = _tier(
    tier="learned",
    consulted=False,
    scores={},
    decided=False,
    note="not run: the fast tier was sure",
)


def _rule_scores(c: Classification) -> dict[Route, float]:
    tier = c.tier("rules")
    return tier.scores if tier is not None else {}


def _softmax(z: list[float]) -> list[float]:
    """Softmax of four logits (:data:`_CLASSES`), written out: the learned tier's hot path."""
    a, b, c, d = z
    top = max(z)
    a, b, c, d = exp(a - top), exp(b - top), exp(c - top), exp(d - top)
    total = a + b + c + d
    return [a / total, b / total, c / total, d / total]


def _scan(text: str, limit: int) -> tuple[str, tuple[tuple[int, int], ...]]:
    """The normalised text that is read, and the ranges of ``text`` it came from.

    A text over ``limit`` characters is read without its leading and trailing whitespace (a
    request padded with blank lines is not cut inside the padding), in two windows: the first
    ``limit // 2`` characters and the last ``limit - limit // 2`` of what remains, joined by a
    blank line so that no phrase spans the cut (one window when what remains fits).
    """
    n = len(text)
    if n <= limit:
        return normalise(text), ((0, n),)
    a = n - len(text.lstrip())
    b = len(text.rstrip())
    if b - a <= limit:
        return normalise(text[a:b]), ((a, b),)
    head, tail = limit // 2, limit - limit // 2
    norm = normalise(text[a : a + head]) + "\n\n" + normalise(text[b - tail : b])
    return norm, ((a, a + head), (b - tail, b))


#: Shortest request whose first and last paragraph are read on their own too (characters,
#: with two blank lines or more): shorter ones are an ask, not material with an ask in it.
_ASK_MIN_CHARS = 400
#: Confidence the ask of a request within the scan limit needs to overrule the whole text.
_ASK_SURE = 0.85
#: Longest ask unit that :func:`_ask_spans` reads on its own (characters): a paragraph longer
#: than this is material, not an ask.
_ASK_MAX_CHARS = 1000
#: Units of a long text, coarse to fine: paragraphs, lines, sentences.
_ASK_UNITS = (
    re.compile(r"\n[ \t\r\f\v]*\n\s*"),
    re.compile(r"\n\s*"),
    re.compile(r"(?<=[.!?。！？])\s*"),
)


#: What an ask looks like in a sentence of prose: a question mark, or a request's words
#: (English, Chinese). A story's sentence without one is material, not an ask.
_ASK_LOOK = re.compile(
    r"[?？]|(?i:\b(please|pls|kindly|can you|could you|would you|will you|i need|i want|"
    r"i'?d like|i would like|help me|where is|when will|why (is|was|did|has|hasn'?t|have)|"
    r"how (do|can|long|much)|cancel|refund|resend|re-send|send me|change my|update my|"
    r"summari[sz]e|analy[sz]e|reset|fix)\b)|请|帮我|帮忙|麻烦|我要|我想|为什么|怎么|吗|呢"
)

#: Moderation rules (id prefixes) that ask for a review or name abuse: a long text where one
#: fires is a post to review, whatever its last sentence asks. What a post is called ("post",
#: "comment": ``mod.object``) and the swearing of an angry customer are not among them.
_MODERATION_ASK_RULES = ("mod.request", "mod.framing", "mod.decisive", "mod.harm", "mod.tweet")


def _asks_past_prose(ask: Classification, whole: Classification) -> bool:
    """Whether ``ask`` (the first or last unit of a long text, read alone) may overrule
    ``whole`` though it is not sure: the whole text read as moderation, and the ask decided
    customer service or a report (it passed the classifier's own thresholds: not a fallback).
    A story read as one reads as a post to review, however plainly the sentence after it asks
    for a refund (issue 46: "...600 words of a story... Can you refund order X?"); the caller
    also checks that no moderation rule asks for a review (only the n-grams of prose made the
    whole text a post) and that the request came on no channel."""
    return whole.route is _MODERATION and ask.route is not FALLBACK and ask.route is not _MODERATION


def _ask_spans(text: str) -> list[tuple[tuple[int, int], str]]:
    """Where a long text's ask may be: its first and its last unit, as ``(start, end)`` ranges.

    A unit is the coarsest of paragraph, line and sentences that is non-blank, at most
    :data:`_ASK_MAX_CHARS` long and at most half the text (a unit that is most of the text is
    the material itself); for sentences, the last one and the last two (the first one and the
    first two), since an ask is often one sentence after a story (issue 46). Only the first
    and the last ``2 * _ASK_MAX_CHARS`` characters are searched, so a 200,000-character text
    costs what a short one does.
    """
    window = 2 * _ASK_MAX_CHARS
    longest = min(_ASK_MAX_CHARS, len(text) // 2)
    out: list[tuple[tuple[int, int], str]] = []
    tail_off = max(0, len(text) - window)
    for end, piece, off in (("first", text[:window], 0), ("last", text[tail_off:], tail_off)):
        for unit, name in zip(_ASK_UNITS, ("paragraph", "line", "sentences"), strict=True):
            parts = _letter_body(piece, [m for m in _split_spans(piece, unit) if m[1] > m[0]])
            if len(parts) < 2:  # the piece is one unit: no ask of its own in it
                continue
            edge = parts[0] if end == "first" else parts[-1]
            if edge[1] - edge[0] > longest:
                continue
            spans = [edge]
            if name == "sentences":
                pair = (parts[0][0], parts[1][1]) if end == "first" else (parts[-2][0], edge[1])
                if pair[1] - pair[0] <= longest:
                    spans.append(pair)
            out += [((a + off, b + off), f"{end} {name}") for a, b in spans]
            break
    return out


#: A letter's salutation and sign-off (English, Chinese), each a short unit of its own: read
#: on its own it is out of scope, though the letter is not. Longest unit taken for one.
_COURTESY_MAX_CHARS = 60
_SALUTATION = re.compile(
    r"(?i)(?:(?:hi|hello|hey|dear|good (?:morning|afternoon|evening)|greetings)"
    r"(?:[\s,]+[^\s?,.!]+){0,3}|to whom it may concern)[\s,!:.]*"
    r"|(?:您好|你好|客服你好|客服您好|亲爱的客服|亲|各位好|大家好|尊敬的[^，,：:。？?]{0,12})"
    r"[，,！!：:。\s]*"
)
_SIGN_OFF = re.compile(
    r"(?i)(?:(?:many |warm |kind |best )?(?:thanks|thank you|regards|wishes)|cheers|best"
    r"|sincerely|yours(?: truly| sincerely)?|all the best|thx|ta)[\s,.!]*(?:[^\s?]+[\s,.]*){0,3}"
    r"|(?:谢谢|多谢|感谢|此致|祝好|辛苦了)[^？?]{0,8}"
)


def _letter_body(text: str, parts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """``parts`` (``(start, end)`` in ``text``) less a leading salutation and a trailing
    sign-off, so that the first and last units are the letter's body (all of them when that
    would leave none)."""
    a, b = 0, len(parts)
    if b - a > 1 and _courtesy(text, parts[a], _SALUTATION):
        a += 1
    if b - a > 1 and _courtesy(text, parts[b - 1], _SIGN_OFF):
        b -= 1
    return parts[a:b]


def _courtesy(text: str, span: tuple[int, int], pattern: re.Pattern[str]) -> bool:
    a, b = span
    return b - a <= _COURTESY_MAX_CHARS and pattern.fullmatch(text, a, b) is not None


#: A quotation of a text (four characters or more) inside a request: paired marks only, so
#: that an apostrophe never opens one.
_QUOTED = re.compile(r'“[^”]{4,}”|"[^"\n]{4,}"|「[^」]{4,}」|『[^』]{4,}』|«[^»]{4,}»')
#: A short label and a colon before a text: ``待审内容：...``, ``Flagged comment: ...``.
_LABEL = re.compile(r"\s*([^\n:：?？!！。.\"“「]{2,40}?)\s*[:：]\s*\S.{3,}", re.DOTALL)
#: Fewest characters a framing keeps outside the quotation (an ellipsis and a mark do not ask).
_FRAME_MIN_CHARS = 4


#: Longest line that :func:`_framings` reads as the ask of a post on the other lines.
_FRAME_LINE_MAX = 120


def _line_framings(text: str) -> list[str]:
    """For a text of two lines or more with nothing quoted or labelled, its last line and its
    first line, each with the rest as ``…``: where a post's ask on a line of its own may be
    (``{post}\\n(left under our video; does it stay?)``, ``Flag or keep?\\n{post}``). Only a
    line of at most :data:`_FRAME_LINE_MAX` characters."""
    if "\n" not in text:
        return []
    lines = [line.strip() for line in text.split("\n") if line.strip()]
    if len(lines) < 2:
        return []
    out = []
    if len(lines[-1]) <= _FRAME_LINE_MAX:
        out.append("…\n" + lines[-1])
    if len(lines[0]) <= _FRAME_LINE_MAX:
        out.append(lines[0] + "\n…")
    return out


def _framing(text: str) -> str | None:
    """The words of ``text`` around the material it quotes or labels, or None when it has none.

    With a quotation (:data:`_QUOTED`), the text with each quotation's content replaced by
    ``…``; else with a label before a colon (:data:`_LABEL`), the label and the colon.
    """
    if not ('"' in text or "“" in text or "「" in text or "『" in text or "«" in text):
        m = _LABEL.match(text) if (":" in text or "：" in text) else None
        return m.group(1) + ":" if m else None
    frame, n = _QUOTED.subn(lambda q: q.group()[0] + "…" + q.group()[-1], text)
    if not n or len(frame.strip()) - 3 * n < _FRAME_MIN_CHARS:
        return None
    return frame


def _split_spans(text: str, sep: re.Pattern[str]) -> list[tuple[int, int]]:
    """``(start, end)`` of the pieces of ``text`` between matches of ``sep``, stripped."""
    spans, start = [], 0
    for m in sep.finditer(text):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out = []
    for a, b in spans:
        piece = text[a:b]
        lead = len(piece) - len(piece.lstrip())
        out.append((a + lead, a + len(piece.rstrip())))
    return out


def _compound(
    norm: str,
    parts: list[tuple[int, int]],
    signals: list[Signal],
    min_score: float,
    *,
    moderation: Literal["decided", "likely"] | None = None,
    content: frozenset[str] = frozenset(),
) -> tuple[tuple[Route, float], ...]:
    """Routes asked for in separate clauses, in the order asked, each with its evidence in
    the clause that asks for it (in [0, 1]); () unless two or more.

    A clause asks for a route when that route's evidence in the clause (noisy-OR of the
    non-negated positive signals whose span lies in it) reaches ``min_score`` and beats every
    other route's there by 0.2. Evidence of what a post says (the ``content`` rules: profanity,
    slurs, hashtags) never makes a clause an ask, and a clause that opens with a quotation mark
    is quoted content, never an ask.

    Moderation is read apart, because what follows its ask is the post under review, and a post
    may mention anything ("moderate this: where is my refund" is one request). The clauses
    after the one that asks for moderation are therefore never asks of their own, unless the
    post is quoted and a joining word follows its closing mark (``moderate this: "..." and
    then reset my password``: :func:`~orchestrator.classifier.negation.joined_after_post`). Clauses
    before it are asks only when the moderation clause opens with a joining word: in "where is
    my parcel? also, is it ok to post this: ..." the parcel is a request of its own, while in
    "where is my refund, you thieves. remove it?" it is the post. A moderation ask in the
    first clause leaves a single route.

    Args:
        norm: The normalised text.
        parts: Its :func:`~orchestrator.classifier.negation.clauses`.
        signals: The rules' signals on ``norm``.
        min_score: The evidence a clause needs to ask for a route (``secondary_min``).
        moderation: ``"decided"``: the tiers decided content_moderation for the whole text;
            ``"likely"``: they decided another route but find moderation likely
            (:data:`_MODERATION_LIKELY`). Then a clause asks for moderation when it holds
            moderation evidence that reaches ``min_score`` or the post itself (after a ``:`` or
            a quotation mark), whatever other routes score there: the ask may be in words no
            rule lists ("tell me if this *post* breaks our rules: ..."), and the post's own
            words may score for another route; "and also *post* the chart to our channel"
            holds neither.
        content: Ids of the rules whose evidence is what a post says (profanity, slurs,
            hashtags): never evidence that a clause asks for moderation.
    """
    if len(parts) < 2:
        return ()
    asked: list[tuple[Route, float]] = []
    for j, (a, b) in enumerate(parts):
        if norm[a:b].lstrip()[:1] in _QUOTES:
            continue
        miss = _clause_miss(signals, a, b, content)
        if not miss:
            continue
        if (
            moderation is not None
            and Route.CONTENT_MODERATION in miss
            and (1.0 - miss[Route.CONTENT_MODERATION] >= min_score or _POST.search(norm, a, b))
        ):
            route: Route | None = Route.CONTENT_MODERATION
        else:
            route = _clause_ask(miss, min_score)
            if route is None:
                continue
        assert route is not None
        ask = (route, 1.0 - miss[route])
        if route is Route.CONTENT_MODERATION:
            joined = j > 0 and joins(norm, parts[j - 1][1], a)
            out = [*asked, ask] if asked and joined else [ask]
            # a quoted post that closes, then a joining word: the clauses after it are asks
            closed = joined_after_post(norm, a)
            if closed is not None:
                for c, d in parts[j + 1 :]:
                    if c > closed and norm[c:d].lstrip()[:1] not in _QUOTES:
                        after = _clause_ask(_clause_miss(signals, c, d, content), min_score)
                        if after is not None and all(r is not after for r, _ in out):
                            out.append((after, 1.0 - _clause_miss(signals, c, d, content)[after]))
            return tuple(out) if len(out) >= 2 else ()
        if all(r is not route for r, _ in asked):
            asked.append(ask)
    return tuple(asked) if len(asked) >= 2 else ()


def _asked(
    compiled: CompiledRules,
    norm: str,
    parts: list[tuple[int, int]] | None,
    signals: list[Signal],
    scopes: list[tuple[int, int]],
    min_score: float,
) -> tuple[tuple[Route, float], ...]:
    """:func:`_compound` on the rules' signals; when that finds one route, again with the
    rules that fire once more in a later clause (:func:`_repeats_in_clauses`): a rule fires
    once, at its first match, so a second clause that repeats a word of the first
    ("汇总附件里的发票表格，还有我的订单要退款") had no evidence of its own (issue 46)."""
    if parts is None:
        return ()
    content = compiled.content_ids
    asked = _compound(norm, parts, signals, min_score, content=content)
    if asked or len(parts) < 2:
        return asked
    more = _repeats_in_clauses(compiled, norm, parts, signals, scopes)
    return _compound(norm, parts, signals + more, min_score, content=content) if more else ()


def _repeats_in_clauses(
    compiled: CompiledRules,
    norm: str,
    parts: list[tuple[int, int]],
    signals: list[Signal],
    scopes: list[tuple[int, int]],
) -> list[Signal]:
    """Signals of the positive rules that fire again in a later clause than their first
    match (``signals`` holds one signal per rule, at its first match), with spans in
    ``norm``; for :func:`_compound` only (what the classification reports is unchanged)."""
    first = {s.rule_id: s.span for s in signals if s.span is not None}
    extra: list[Signal] = []
    for a, b in parts[1:]:
        for index, (sim, matched, span) in compiled.match(norm[a:b]).items():
            rule = compiled.rules[index]
            at = first.get(rule.id)
            if rule.negative or span is None or at is None or at[0] >= a:
                continue
            x, y = span[0] + a, span[1] + a
            negated = rule.negatable and any(p <= x and y <= q for p, q in scopes)
            extra.append(
                Signal(
                    rule_id=rule.id,
                    route=rule.route,
                    weight=round(rule.weight * sim, 4),
                    matched=matched,
                    span=(x, y),
                    similarity=sim,
                    negated=negated,
                )
            )
    return extra


def _clause_miss(
    signals: list[Signal], a: int, b: int, content: frozenset[str]
) -> dict[Route, float]:
    """Per route, ``prod(1 - w)`` of the positive, non-negated signals inside ``[a, b)``
    (what a post says, the ``content`` rules, excluded): 1 minus its evidence there."""
    miss: dict[Route, float] = {}
    for sig in signals:
        if sig.span is None or sig.negative or sig.negated or sig.rule_id in content:
            continue
        if a <= sig.span[0] and sig.span[1] <= b:
            miss[sig.route] = miss.get(sig.route, 1.0) * (1.0 - sig.weight)
    return miss


def _clause_ask(miss: dict[Route, float], min_score: float) -> Route | None:
    """The route a clause asks for: its evidence reaches ``min_score`` and beats every other
    route's there by 0.2 (``miss`` from :func:`_clause_miss`); None when no route does."""
    if not miss:
        return None
    ranked = sorted(((1.0 - m, r) for r, m in miss.items()), reverse=True)
    top, route = ranked[0]
    runner = ranked[1][0] if len(ranked) > 1 else 0.0
    return route if top >= min_score and top - runner >= 0.2 else None


#: Opening quotation marks (normalised text: NFKC has made full-width ones half-width).
_QUOTES = frozenset("\"'“‘「『«")
#: Where a post under review begins inside a clause that asks for moderation.
_POST = re.compile('[:："“「『«]')
