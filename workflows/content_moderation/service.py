"""Entry points: moderate one post (text or bytes) or many, through the dispatcher, so each
post gets a ``requests`` row holding its verdict and each model call a ``model_calls`` row
with its experts and router confidence.

The route is fixed by the caller (a moderation API call *is* a moderation request), so the
classifier is replaced by :class:`FixedRoute`; the rest is the ordinary
:class:`~orchestrator.core.dispatcher.Orchestrator` and :func:`~orchestrator.core.batch.run_batch`.

Bad input:

* an empty or whitespace-only post gets a verdict (``allow``, ``input.empty=True``, rule
  ``empty-post``) without a model call or a stored row: :class:`~orchestrator.request.Request`
  refuses empty text, and there is nothing to store;
* bytes that are not valid UTF-8 are decoded with U+FFFD replacements and the verdict counts
  them (``input.invalid_utf8_bytes``);
* a post over :data:`~orchestrator.request.MAX_TEXT_CHARS` is refused with a
  :class:`~orchestrator.exceptions.UserError` that says the limit.
"""

from __future__ import annotations

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from orchestrator.core.batch import run_batch
from orchestrator.core.client import ModelClient
from orchestrator.core.dispatcher import Orchestrator, RequestOutcome
from orchestrator.core.fixed import FixedRoute as CoreFixedRoute
from orchestrator.core.gateway import CallSummary
from orchestrator.exceptions import UserError
from orchestrator.request import MAX_TEXT_CHARS, Request
from orchestrator.telemetry import TelemetryStore
from workflows.content_moderation.graph import INVALID_BYTES_KEY, ContentModerationWorkflow
from workflows.content_moderation.inputs import decode_post, prepare_post
from workflows.content_moderation.judgement import (
    build_verdict,
    lexicon_findings,
    scorer_findings,
)
from workflows.content_moderation.route import ROUTE
from workflows.content_moderation.verdict import Verdict

#: Channel recorded for posts sent through these entry points.
CHANNEL = "moderation_api"


class FixedRoute(CoreFixedRoute):
    """A classifier stand-in that sends every request to content moderation (confidence 1):
    the caller asked for moderation."""

    def __init__(self) -> None:
        super().__init__(ROUTE, reason="moderation entry point: the caller fixed the route")


class ModerationOutcome(BaseModel):
    """One moderated post.

    Attributes:
        request_id: Id of its ``requests`` row (None for an empty post: nothing stored).
        status: The request's status (``succeeded``, or ``failed`` with ``error``).
        verdict: The verdict (None when the request failed).
        error: Why it failed.
        calls: Its model calls (node, tokens, latency, top experts, router confidence).
    """

    model_config = ConfigDict(frozen=True)

    request_id: str | None
    status: str
    verdict: Verdict | None = None
    error: str | None = None
    calls: list[CallSummary] = []


Post = str | bytes


class Moderator:
    """Moderates posts against a model server and records everything in a telemetry store.

    Args:
        client: The model client (``VLLMClient``; ``ScriptedModel`` in unit tests).
        store: The telemetry store.
        workflow: The moderation workflow (a default one otherwise).
        max_tokens: Default completion limit (the workflow's assess_risk sets its own).

    Example:
        >>> moderator = Moderator(make_client(settings), TelemetryStore(url))  # doctest: +SKIP
        >>> (await moderator.moderate("is this comment OK?")).verdict.decision  # doctest: +SKIP
        <Decision.ALLOW: 'allow'>
    """

    def __init__(
        self,
        client: ModelClient,
        store: TelemetryStore,
        *,
        workflow: ContentModerationWorkflow | None = None,
        max_tokens: int = 48,
    ) -> None:
        self.workflow = workflow or ContentModerationWorkflow()
        self.orchestrator = Orchestrator(
            client,
            store,
            [self.workflow],
            classifier=FixedRoute(),
            max_tokens=max_tokens,
        )

    def _request(self, post: Post, metadata: dict[str, str] | None) -> Request | Verdict:
        text, invalid = post_text(post)
        if len(text) > MAX_TEXT_CHARS:
            raise UserError(
                f"post of {len(text):,} characters is over the {MAX_TEXT_CHARS:,}-character "
                "limit of a request; split it or send its first part"
            )
        meta = dict(metadata or {})
        if invalid:
            meta[INVALID_BYTES_KEY] = str(invalid)
        if not text.strip():
            return self.empty_verdict(text, invalid)
        prepared = prepare_post(text, self.workflow.policy.limits)
        if prepared.report.empty:  # only invisible characters
            return self.empty_verdict(text, invalid)
        return Request(text=prepared.text, channel=CHANNEL, metadata=meta)

    def empty_verdict(self, text: str = "", invalid: int = 0) -> Verdict:
        """The verdict of an empty post (allow, ``input.empty=True``; no model call)."""
        prepared = prepare_post(text, self.workflow.policy.limits, invalid_utf8_bytes=invalid)
        return build_verdict(
            prepared, self.workflow.policy, lexicon=None, model=None, source="combined"
        )

    @staticmethod
    def _outcome(outcome: RequestOutcome) -> ModerationOutcome:
        verdict = Verdict.model_validate(outcome.result) if outcome.result else None
        return ModerationOutcome(
            request_id=outcome.request_id,
            status=outcome.status,
            verdict=verdict,
            error=outcome.error,
            calls=outcome.calls,
        )

    async def moderate(
        self, post: Post, *, metadata: dict[str, str] | None = None
    ) -> ModerationOutcome:
        """Moderate one post (``str``, or ``bytes`` decoded as UTF-8 with replacement).

        Raises:
            UserError: ``post`` is neither str nor bytes, or is over the request size limit.
            ServerUnavailableError: The model server cannot be reached (the request is
                recorded as failed first).
            TelemetryError: The store cannot be written.
        """
        request = self._request(post, metadata)
        if isinstance(request, Verdict):
            return ModerationOutcome(request_id=None, status="succeeded", verdict=request)
        return self._outcome(await self.orchestrator.handle(request))

    async def moderate_many(
        self, posts: Sequence[Post], *, concurrency: int = 8
    ) -> list[ModerationOutcome]:
        """Moderate ``posts`` with at most ``concurrency`` in flight; results in input order.

        When the server becomes unreachable mid-batch, posts not started get
        ``status="not_started"`` and the error.

        Raises:
            UserError: A post is neither str nor bytes or over the size limit, or
                ``concurrency`` is below 1 (checked before anything is sent).
        """
        prepared = [self._request(p, None) for p in posts]
        requests = [r for r in prepared if isinstance(r, Request)]
        report = await run_batch(self.orchestrator, requests, concurrency=concurrency)
        by_id = {o.request_id: self._outcome(o) for o in report.outcomes}
        out = []
        for item in prepared:
            if isinstance(item, Verdict):
                out.append(ModerationOutcome(request_id=None, status="succeeded", verdict=item))
            else:
                out.append(
                    by_id.get(item.id)
                    or ModerationOutcome(
                        request_id=item.id, status="not_started", error=report.aborted
                    )
                )
        return out


def post_text(post: Post) -> tuple[str, int]:
    """The text of a post and how many invalid UTF-8 bytes were replaced in it.

    Raises:
        UserError: ``post`` is neither str nor bytes.
    """
    if isinstance(post, bytes | bytearray):
        return decode_post(bytes(post))
    if isinstance(post, str):
        return post, 0
    raise UserError(f"a post is str or bytes, got {type(post).__name__}")


def moderate_lexicon_only(
    post: Post, workflow: ContentModerationWorkflow | None = None, *, scorer: bool = True
) -> Verdict:
    """The verdict of the lexicon and the learned scorer (``scorer=False``: the lexicon
    alone) for one post: no model, no server, nothing stored. Its rationale says the model
    was not called.

    Raises:
        UserError: ``post`` is neither str nor bytes.
    """
    workflow = workflow or ContentModerationWorkflow()
    text, invalid = post_text(post)
    prepared = prepare_post(text, workflow.policy.limits, invalid_utf8_bytes=invalid)
    matcher = workflow.lexicon.matcher()
    scan = matcher.scan(prepared.normalized.original, prepared.normalized)
    found = lexicon_findings(scan, matcher.version, matcher.names_harm)
    return build_verdict(
        prepared,
        workflow.policy,
        lexicon=found,
        model=None,
        source="lexicon",
        scorer=(
            scorer_findings(
                workflow.scorer, prepared.normalized.original, workflow.scorer_note, found[1]
            )
            if scorer
            else None
        ),
    )
