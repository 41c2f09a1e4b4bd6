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
4. **semantic** — a fit's user examples (:meth:`ExampleTier.review`, also over a built-in route
   taken with no sure reason), or the optional MiniLM router (``semantic=True``), consulted only
   when the tiers above end unsure (``low_confidence``/``ambiguous``, never on a tie).

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
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from orchestrator.classifier import learned as learned_tier
from orchestrator.classifier.compound import (
    MODERATION_LIKELY,
    asked_routes,
    asks_to_moderate,
    compound_routes,
    material,
    not_reviewed,
    other_asks,
    text_task,
)
from orchestrator.classifier.decide import (
    NOT_LOADED_FAST,
    Decision,
    RuleEvidence,
    fast_decision,
    fast_declines,
    learned_decision,
    overrule,
    part_decides,
    ranked_scores,
    rule_evidence,
    rule_scores,
    rules_decision,
    tier_record,
    unsupported,
)
from orchestrator.classifier.engine import CompiledRules, built_once, normalise
from orchestrator.classifier.fit_semantic import ExampleTier, example_files, examples_tier
from orchestrator.classifier.inputs import InvalidTextError, checked_input
from orchestrator.classifier.learned import FastScorer, LearnedModel, shared_model
from orchestrator.classifier.loader import (
    load_calibration,
    load_rules,
    routes_version,
    with_routes,
)
from orchestrator.classifier.models import (
    CalibrationFile,
    Classification,
    Rule,
    RulesFile,
    Thresholds,
    TierContribution,
)
from orchestrator.classifier.negation import clauses, mask
from orchestrator.classifier.others import named_elsewhere
from orchestrator.classifier.parts import (
    ASK_LOOK,
    ASK_MIN_CHARS,
    ASK_SURE,
    FastView,
    FrameRead,
    ask_spans,
    asks_past_prose,
    fold,
    framing,
    keeps,
    leans_nowhere,
    line_framings,
    scan,
    simplified,
)
from orchestrator.classifier.paths import (
    companion_path,
    default_calibration_path,
    default_model_path,
    default_rules_path,
)
from orchestrator.classifier.semantic import SemanticTier, enabled_by_env
from orchestrator.datafiles import HotReloaded, HotReloader
from orchestrator.request import Request
from orchestrator.routes import FALLBACK, Route, RouteSpec

__all__ = ["RuleClassifier", "default_calibration_path", "default_model_path",
           "default_rules_path", "overrule"]  # fmt: skip

log = logging.getLogger(__name__)

#: Most framings whose reads are remembered (the memo is cleared when full).
_FRAME_MEMO = 4096


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
    #: the fixed tail of the fast tier's note (`` >= fast_min 0.8``)
    fast_note: str = ""
    #: the user examples' tier that ``fit --examples`` wrote beside the model, if any
    examples: ExampleTier | None = None
    #: ``(framing, attachments, channel)`` -> its reads (:meth:`RuleClassifier._frame_of`):
    #: requests of one template share a framing, which reads the same every time
    frame_reads: dict[tuple[str, tuple[str, ...], str | None], FrameRead] = field(
        default_factory=dict
    )


class RuleClassifier(HotReloaded[_State]):
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
        routes: Routes declared outside the rules file (a workflow package's
            :class:`~orchestrator.routes.RouteSpec`, ``Workflow.route_spec``): their
            ``[[route]]`` settings and rules join the rules file's (validated the same way).

    Raises:
        RulesError: The initial rules or calibration file is invalid (file, line, reason).

    Example:
        >>> from orchestrator import Request, RuleClassifier
        >>> RuleClassifier().classify(Request(text="Where is my refund?")).route
        'customer_service'
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
        routes: Sequence[RouteSpec] = (),
    ) -> None:
        on = enabled_by_env() if semantic is None else semantic
        self.semantic: SemanticTier | None = (
            on if isinstance(on, SemanticTier) else SemanticTier() if on else None
        )
        self._semantic_off = tier_record(
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
        self._extra_routes = tuple(routes)
        if self._rules is not None:
            self.rules_path: Path | None = None
        else:
            self.rules_path = Path(rules_path) if rules_path else default_rules_path()
        packaged = rules_path is None and rules is None
        self.calibration_path = companion_path(
            calibration_path, default_calibration_path(), packaged=packaged
        )
        self.model_path = companion_path(model_path, default_model_path(), packaged=packaged)
        # The example indexes sit beside the model in use, the default one too: _load, watched.
        self._examples_from = (self.model_path, semantic)
        files = (self.rules_path, self.calibration_path, self.model_path)
        self._live = HotReloader(
            self._load,
            [*(p for p in files if p is not None), *example_files(*self._examples_from)],
            interval_s=reload_interval,
            what="rules",
            version=lambda state: state.version,
            logger=log,
        )

    # ------------------------------------------------------------------ loading

    def _load(self) -> _State:
        if self._rules is not None:
            rules_file = with_routes(RulesFile(rule=self._rules), self._extra_routes)
            compiled = CompiledRules.build(rules_file)
            version = "inline"
        else:
            assert self.rules_path is not None
            rules_file, version = load_rules(self.rules_path)
            rules_file = with_routes(rules_file, self._extra_routes, self.rules_path)
            compiled = built_once(rules_file, self.rules_path, version)
        calibration = load_calibration(self.calibration_path) if self.calibration_path else None
        base = calibration.thresholds if calibration else Thresholds()
        thresholds = base.model_copy(update=self._overrides)
        # a calibration fitted with the extra routes (`fit --examples`) or without them
        combined = routes_version(version, self._extra_routes) if self._extra_routes else version
        if calibration is not None and calibration.rules_sha not in ("", version, combined):
            log.warning(
                "calibration %s was fitted for rules and routes %s, but those in use are %s; "
                "refit with `orchestrator classifier fit` (`--examples` for your own routes)",
                self.calibration_path,
                calibration.rules_sha,
                combined,  # what was compared: the rules with the routes declared in code
            )
        version = combined
        model = shared_model(self.model_path) if self.model_path else None
        # the per-request lookup tables, built aside like the rules
        scorer = model.scorer() if model is not None else None
        return _State(
            compiled,
            calibration,
            thresholds,
            version,
            model,
            scorer,
            fast_on=scorer is not None and thresholds.fast_min <= 1.0,
            fast_note=f" >= fast_min {thresholds.fast_min}",
            examples=examples_tier(*self._examples_from),
        )

    @property
    def _state(self) -> _State:
        """The live state, without looking at the files."""
        return self._live.value

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The live rules."""
        return self._state.compiled.rules

    @property
    def route_specs(self) -> tuple[RouteSpec, ...]:
        """The declared routes the live rules hold (the rules file's, then ``routes``)."""
        return self._state.compiled.specs

    @property
    def thresholds(self) -> Thresholds:
        """The live thresholds."""
        return self._state.thresholds

    @property
    def examples_tier(self) -> ExampleTier | None:
        """The live tier over the user examples (reloaded with the model after a new fit)."""
        return self._state.examples

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
        try:
            text, exts = checked_input(text, attachments, channel)
        except InvalidTextError as exc:
            return self._invalid(str(exc))
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
        compiled = self._live.get().compiled
        exts = tuple(a.extension for a in request.attachments)
        text = simplified(request.text)
        norm, _ = scan(text, compiled.max_scan_chars)
        ev = rule_evidence(compiled, norm, exts, request.channel)
        rules = self._read(text, exts, request.channel)
        feats = learned_tier.features(
            mask(norm, ev.scopes),
            attachments=exts,
            channel=request.channel,
            rule_ids=ev.rule_ids,
            rule_scores=rule_scores(rules),
        )
        return feats, rules, ev.n_negated > 0

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
        text = simplified(text)
        whole = self._read(text, exts, channel)
        if not whole.truncated and len(text) >= ASK_MIN_CHARS:  # prose with an ask (issue 46)
            whole = self._ask_of(text, exts, channel, whole, "", asks_only=text.count("\n\n") < 2)
        if not whole.truncated:
            whole = self._not_a_review(
                text, exts, channel, self._frame_of(text, exts, channel, whole)
            )
        whole = named_elsewhere(compiled := self._live.get().compiled, text, whole)
        return whole if (tier := self.examples_tier) is None else tier.review(text, whole, compiled)

    def _not_a_review(
        self, text: str, exts: tuple[str, ...], channel: str | None, c: Classification
    ) -> Classification:
        """``c``, unless it is content moderation for a text that asks to repeat, translate or
        explain what it quotes and asks for no review (:func:`text_task`, tester7 F15): then
        the request's own words read alone ("where is my parcel? also repeat this:") or else
        what it quotes ("repeat this: where is my order ORD-1?") decide when they ask for
        another route, else the text is out of scope."""
        wraps = self._live.get().compiled.wraps_content
        if wraps is None or c.route != wraps:
            return c
        words = text_task(self._live.get().compiled, text, exts)
        if words is None:
            return c
        parts = ((other_asks(words), "in its other clauses"), (material(text), "as what it quotes"))
        for part, how in parts:
            read = self._read(part, exts, channel) if part else c
            if read.route not in (FALLBACK, wraps):
                return part_decides(read, c, f"{how} ({words!r} asks no review)")
        return not_reviewed(c, words)

    def _frame_of(
        self, text: str, exts: tuple[str, ...], channel: str | None, whole: Classification
    ) -> Classification:
        """The request's own words read without the material it quotes.

        A request that quotes a text ("“配送很快，味道一般”这条点评能留在小程序里吗",
        ``Reported content: "i wanna cancel my account" - please assess``) or labels one
        (``待审内容：味道还不错``) asks about that text; read as one, the quoted words may speak
        louder than the ask (a customer's complaint under review reads as a customer-service
        request). So the framing (:func:`framing`: the text with each quotation's content
        replaced by an ellipsis, or the label before the colon) is classified on its own too,
        and decides when it picks another route than the whole text, surely
        (:data:`ASK_SURE`). A framing that falls back never overrules a route.

        A text of a few lines with nothing quoted or labelled may carry its ask on a line of
        its own, before or after the post (``Flag or keep?\\n{post}``); its first and its last
        line are read alone too (:func:`line_framings`), and the surer of them decides when it
        asks to moderate: a line of the post itself reads as what the post says, which must
        not overrule the whole.

        Requests of one template (a moderation queue's ``Keep or delete this forum reply:``)
        share their framing, so each framing's reads are remembered with the loaded files
        (:data:`_FRAME_MEMO` of them; a reload starts afresh): its fast view, and its full read
        once one is needed. A framing reads the same whatever it framed.
        """
        frame = framing(text)
        wraps = self._live.get().compiled.wraps_content
        # a quoted or labelled text's framing may pick any route; a line read alone may only
        # be an ask to moderate the lines around it (moderation takes a post as its object;
        # a post's own line reads as what the post says: a customer's question, a joke)
        if frame is not None:
            frames, only = [frame], None
        elif wraps is None or whole.route == wraps:
            return whole  # a line could only ask for what the whole text got
        else:
            frames, only = line_framings(text), wraps
        best: tuple[Classification, str] | None = None
        memo = self._live.get().frame_reads
        # a route the whole text fell back from by a veto (a negative rule of that route fired
        # on it: "booking ref QX7PLM: can I move the flight?") is no route its label alone may
        # give: the veto read what the label is about
        vetoed = (
            {s.route for s in whole.signals if s.negative and not s.negated}
            if whole.route == FALLBACK
            else set()
        )
        for frame in frames:
            key = (frame, exts, channel)
            read = memo.get(key)
            if read is None:
                if len(memo) >= _FRAME_MEMO:
                    memo.clear()
                read = memo[key] = FrameRead(self._fast_view(frame, exts, channel))
            seen = read.seen
            if seen is not None and (keeps(seen, whole.route) or leans_nowhere(seen, whole, only)):
                continue
            c = read.full
            if c is None:
                c = read.full = self._read(frame, exts, channel)
            if c.route in (FALLBACK, whole.route) or c.route in vetoed or c.confidence < ASK_SURE:
                continue
            if only is not None and c.route != only:
                continue
            if best is None or c.confidence > best[0].confidence:
                best = (c, frame)
        if best is None:
            return whole
        c, frame = best
        return part_decides(c, whole, f"without the text it quotes ({frame!r})")

    def _fast_view(self, part: str, exts: tuple[str, ...], channel: str | None) -> FastView | None:
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
        norm = fold(part)
        probs, flag = scorer.fast(norm, attachments=exts, channel=channel)
        p1 = max(probs)
        c1 = scorer.classes[probs.index(p1)]
        return FastView(probs, flag, c1, _fast_sure(state, norm, flag, p1, c1), scorer.classes)

    def _read(self, text: str, exts: tuple[str, ...], channel: str | None) -> Classification:
        """The text read as one (its head and tail windows when over the scan limit)."""
        state = self._live.get()  # looks at the files at most once per reload_interval
        limit, n = state.compiled.max_scan_chars, len(text)
        if n <= limit:
            norm = fold(text)
            scanned: tuple[tuple[int, int], ...] = ((0, n),)
            cut = ""
        else:
            norm, scanned = scan(text, limit)
            cut = f"; read {sum(b - a for a, b in scanned):,} of {n:,} characters " + (
                "(head and tail)" if len(scanned) > 1 else "(without its blank padding)"
            )
        scorer = state.scorer
        fast_tier = NOT_LOADED_FAST
        if scorer is not None and state.fast_on and n <= limit:
            probs, flag = scorer.fast(norm, attachments=exts, channel=channel)
            p1 = max(probs)
            c1 = scorer.classes[probs.index(p1)]  # the first of equals, as a stable argsort
            compiled = state.compiled
            sheet_and_more = _sheet_and_more(compiled, c1, exts, norm)
            why_not = (
                ""
                if not sheet_and_more and _fast_sure(state, norm, flag, p1, c1)
                else fast_declines(
                    compiled,
                    state.thresholds,
                    (norm, exts, channel),
                    probs,
                    flag,
                    sheet_and_more,
                    scorer.classes,
                )
            )
            if not why_not:
                return fast_decision(
                    c1,
                    p1,
                    probs,
                    scanned,
                    scorer.classes,
                    cmap=state.calibration.fast_maps.get(c1) if state.calibration else None,
                    fast_note=state.fast_note,
                    version=state.version,
                    semantic_tier=self._semantic_off,
                )
            fast_tier = tier_record(
                "fast", True, ranked_scores(probs, scorer.classes), False, why_not
            )
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
        reads as an ask (:data:`ASK_LOOK`: a question, a request word), so that the last
        sentence of a story with no ask never speaks for it.

        A long request, or one of a few paragraphs (:data:`ASK_MIN_CHARS` or more, two blank
        lines or more), is mostly material (a pasted diary, a log, a thread, a meeting's notes)
        with the ask before or after it. Read as one, the material speaks louder than the ask:
        a pasted story reads as a post to review, a complaint's thread as a report. So the first
        and the last paragraph (or line, or two sentences, whichever unit is short enough:
        :func:`ask_spans`) are classified on their own too, and the surer of them decides when
        it picks a route, or when it is out of scope more surely than the whole text picks one.
        A story read as one reads as a post to review; an ask after it for another route
        decides when it is fairly sure (:func:`asks_past_prose`, issue 46).
        Over the scan limit (``whole.truncated``) the whole text was only partly read, so that
        is all; within it, the ask decides only when it is sure (:data:`ASK_SURE`), since the
        whole text was read too. The result keeps ``truncated`` and the ranges that were read
        (both paragraphs lie inside them).
        """
        best: tuple[Classification, tuple[int, int], str] | None = None
        for (a, b), where in ask_spans(text):
            if asks_only and ASK_LOOK.search(text, a, b) is None:
                continue
            c = self._read(text[a:b], exts, channel)
            if best is None or (c.route != FALLBACK, c.confidence) > (
                best[0].route != FALLBACK,
                best[0].confidence,
            ):
                best = (c, (a, b), where)
        if best is None:
            return whole
        c, (a, b), where = best
        if not whole.truncated and (
            c.route == whole.route
            or (
                c.confidence < ASK_SURE
                and not (
                    asks_past_prose(c, whole, self._live.get().compiled.wraps_content)
                    and channel is None
                    and not asks_to_moderate(self._live.get().compiled, text, exts)
                )
            )
        ):
            return whole
        if c.route == FALLBACK and (
            c.fallback_reason != "out_of_scope" or c.confidence <= whole.confidence
        ):
            return whole
        return part_decides(c, whole, f"on its own ({where}, characters {a:,}-{b:,})", cut)

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
        """The rules, then the combined learned tier when the rules are unsure; then the
        clauses of a compound request, and the semantic tier when all are unsure.

        ``blank``: the fast tier knew no feature of the text (:data:`~orchestrator.classifier.
        learned.BLANK`: emoji, an id, a word no request used); with no rule fired either, the
        learned tier would only restate its prior, so the result is a ``no_signal`` fallback.
        """
        compiled, t = state.compiled, state.thresholds
        ev = rule_evidence(compiled, norm, exts, channel)
        parts = clauses(norm) if ev.s2 > 0.0 else None
        asked = asked_routes(compiled, norm, parts, ev.signals, ev.scopes, t.secondary_min)
        sure = ev.s1 >= t.sure_score and ev.s2 <= 0.0 and not ev.n_negated and not asked
        # over the scan limit the rules decide whenever they found anything: they read 4,000
        # characters of head and tail (a rule fires once however often its word repeats); the
        # learned tier reads only 2 x 320 of them and never saw a long paste in training (it
        # sent "<ask> + 300,000 characters of prose" to moderation)
        long_rules = n > compiled.max_scan_chars and ev.s1 >= t.min_score and not sure
        long_rules = long_rules and not asked
        unknown = blank and ev.s1 <= 0.0  # nothing any tier knows: no signal, not out of scope
        if state.model is None or sure or long_rules or unknown:
            alone = (
                "no model" if state.model is None else "sure" if sure else "unknown" if unknown
                else "long"
            )  # fmt: skip
            d = rules_decision(
                ev, t, state.calibration, fast_tier,
                alone=alone, unknown=unknown, long_rules=long_rules,
            )  # fmt: skip
        else:
            assert state.scorer is not None
            d = learned_decision(
                ev, t, state.calibration, state.scorer, compiled, (norm, exts, channel),
                fast_tier, tie_acts=ev.tie and not asked,
            )  # fmt: skip
        if not asked and parts is not None:
            asked = _moderation_asked(compiled, norm, parts, ev, d, t.secondary_min)
        secondary: tuple[Route, ...] = ()
        route, why, reason = d.route, d.why, d.reason
        scores, confidence, calibrated = d.scores, d.confidence, d.calibrated
        if asked:
            # the tiers above read the text as one request; a compound's figures are each
            # asked route's evidence in its own clause (the tiers' views stay in ``tiers``)
            evidence = dict(asked)
            route, secondary, why = asked[0][0], tuple(r for r, _ in asked[1:]), None
            reason = "compound request: " + " then ".join(
                f"{r} ({e:.2f} in its clause)" for r, e in asked
            )
            scores = dict(
                sorted(
                    ((r, round(evidence.get(r, 0.0), 4)) for r in compiled.routes),
                    key=lambda item: item[1],
                    reverse=True,
                )
            )
            confidence, calibrated = round(evidence[route], 4), False
        if not why and (gate := unsupported(compiled, route, fast_tier, ev, norm)):
            reason, confidence = f"{gate[0]}; it fell back ({reason})", gate[1]
            route, why, secondary, calibrated = FALLBACK, "low_confidence", (), False
        semantic_tier, decided = self._semantic_off, None
        if why in ("low_confidence", "ambiguous", "out_of_scope", "no_signal") and not ev.tie:
            if self.examples_tier is not None:
                semantic_tier, decided = self.examples_tier.consult(norm, exts)
            if self.semantic is not None and decided is None:
                semantic_tier, decided = self.semantic.consult(norm, exts)
            if decided is not None:
                route, why, p_sem = decided
                reason = (
                    f"{route} by the semantic tier (nearest examples, score {p_sem}; "
                    f"{semantic_tier.note}); the fast tiers were unsure: {reason}"
                )
                confidence, calibrated = p_sem, False
        return Classification(
            route=route,
            confidence=max(0.0, min(1.0, confidence)),
            scores=scores,
            signals=tuple(ev.signals),
            reason=reason + cut,
            fallback_reason=why,
            calibrated=calibrated,
            rules_version=state.version,
            secondary_routes=secondary,
            tiers=(*d.tiers, semantic_tier),
            truncated=n > compiled.max_scan_chars,
            scanned=scanned,
        )


def _moderation_asked(
    compiled: CompiledRules,
    norm: str,
    parts: list[tuple[int, int]],
    ev: RuleEvidence,
    d: Decision,
    secondary_min: float,
) -> tuple[tuple[Route, float], ...]:
    """A request before a moderation ask that the rules' evidence alone missed: the clauses
    read again (:func:`~orchestrator.classifier.compound.compound_routes`) when the tiers
    decided moderation, or another route with moderation likely (:data:`MODERATION_LIKELY`);
    () otherwise."""
    if ev.s2 <= 0.0:
        return ()
    wraps = compiled.wraps_content
    if wraps is None:
        return ()
    p_moderation = (d.learned_probs or {}).get(wraps, 0.0)
    mode: Literal["decided", "likely"] | None = (
        "decided" if d.route == wraps else "likely" if p_moderation >= MODERATION_LIKELY else None
    )
    if mode is None:
        return ()
    return compound_routes(
        norm,
        parts,
        ev.signals,
        secondary_min,
        moderation=mode,
        content=compiled.content_ids,
        wraps=wraps,
    )


def _sheet_and_more(
    compiled: CompiledRules, route: Route, exts: tuple[str, ...], norm: str
) -> bool:
    """Whether a spreadsheet request may ask for something else too: the fast tier chose a
    report for a request with an attachment, and the text has more than one clause. The
    attachment makes the n-grams so sure of the report that a second request in the text
    ("请汇总附件表格，还有我的订单要退款") never reaches the rules' clause reading (issue 46);
    such a request is read by the rules, which find each clause's route."""
    return route in compiled.attachment_routes and bool(exts) and len(clauses(norm)) > 1


def _fast_sure(state: _State, norm: str, flag: int, p1: float, best: Route) -> bool:
    """Whether the fast tier decides ``best`` alone on ``norm``: no cue flag, ``p1`` at least
    ``fast_min``, and no decisive rule that may overrule it (one RE2 set pass; when one may,
    the rules and the combined model read the text, and the rule has its say)."""
    return (
        not flag
        and p1 >= state.thresholds.fast_min
        and not state.compiled.decisive_may_fire(norm, best)
    )
