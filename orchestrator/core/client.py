"""Async client for the OpenAI-compatible vLLM server, with routing capture on every call.

Built on the ``openai`` SDK (timeouts, retries with backoff, connection pooling). vLLM-specific
request fields travel in ``extra_body``: ``return_token_ids`` (the CPU replay needs the exact
token ids the server used). vLLM-specific response fields (``prompt_token_ids``, ``token_ids``,
``routed_experts``) are read from the response's extra fields.

Tests inject the transport: ``VLLMClient(..., http_client=httpx.AsyncClient(
transport=httpx.MockTransport(handler)))`` replays recorded response bodies with no server.
:data:`ALLOW_MODEL_REQUESTS` (after pydantic-ai's switch of the same name) lets a test suite
forbid real requests: the unit suite turns it off (``tests/unit/conftest.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections.abc import AsyncIterator, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import httpx
import openai
from pydantic import BaseModel, ConfigDict, Field

from orchestrator.exceptions import (
    ModelCallError,
    OrchestratorError,
    PromptTooLongError,
    ServerUnavailableError,
    UserError,
)
from serving.capture import CallTokens, EngineCapture, ExpertRoutingCapture
from serving.expert_routing import ExpertRoutingTrace
from serving.probe import empty_500_hint


class ChatMessage(BaseModel):
    """One chat turn."""

    model_config = ConfigDict(frozen=True)

    role: Literal["system", "user", "assistant"]
    content: str


class ChatOptions(BaseModel):
    """What one chat completion asks of the server besides its messages.

    One typed value crosses the :class:`ModelClient` boundary, so a client (or a test double)
    implements ``chat(messages, options)`` and takes each new option without a new signature.

    Attributes:
        max_tokens: Completion token limit (at least 1).
        json_schema: Constrain the output to this JSON schema (bound every string), or None
            for free text. Callers parse the text as untrusted data either way.
        temperature: Sampling temperature (0 is greedy); the client's default when None.
        tools: OpenAI function tools (``{"type": "function", "function": {...}}``); none
            by default.
        tool_choice: ``"required"``, ``"auto"``, ``"none"`` or a named tool
            (``{"type": "function", "function": {"name": ...}}``); sent only with ``tools``.
    """

    model_config = ConfigDict(frozen=True)

    max_tokens: int = Field(ge=1)
    json_schema: dict[str, Any] | None = None
    temperature: float | None = None
    tools: tuple[dict[str, Any], ...] = ()
    tool_choice: str | dict[str, Any] | None = None


class ToolCall(BaseModel):
    """One tool call the model asked for (OpenAI ``tools`` API).

    Attributes:
        id: The call id the server gave it.
        name: The function name.
        arguments: The arguments as the model wrote them: JSON *text*, untrusted data that the
            caller validates (pydantic) before anything runs.
    """

    model_config = ConfigDict(frozen=True)

    id: str = ""
    name: str
    arguments: str


class ModelCall(BaseModel):
    """The result of one model call.

    Attributes:
        model: Served model name.
        text: Completion text (model output: data, never code).
        finish_reason: ``stop``, ``length``...
        prompt_tokens: Prompt tokens (``usage.prompt_tokens``).
        completion_tokens: Completion tokens (``usage.completion_tokens``).
        latency_ms: Wall time of the HTTP call, milliseconds (replay time excluded).
        routing: The routing trace (its ``source`` says who filled it).
        tool_calls: The tool calls the model asked for (empty without ``tools``).
        ttft_ms: Streamed calls only: milliseconds from sending to the first content token.
    """

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    model: str
    text: str
    finish_reason: str | None
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    latency_ms: float = Field(ge=0)
    routing: ExpertRoutingTrace
    tool_calls: tuple[ToolCall, ...] = ()
    ttft_ms: float | None = None


class TextDelta(BaseModel):
    """One streamed piece of a completion: its text and the token ids the server sent."""

    model_config = ConfigDict(frozen=True)

    text: str
    token_ids: tuple[int, ...] = ()


#: What :meth:`VLLMClient.stream_chat` yields: text pieces, then the finished call once.
StreamItem = TextDelta | ModelCall

#: The ``finish_reason`` recorded for a stream that ended with neither a finish reason nor
#: ``[DONE]`` (the server stopped mid-answer): a failed call, never a whole reply.
TRUNCATED = "truncated"


class TruncatedStreamError(ModelCallError):
    """A streamed answer ended without a finish reason (the server stopped mid-stream).

    Attributes:
        call: The call as far as it came, its ``finish_reason`` :data:`TRUNCATED`; the gateway
            records it (a failed call in telemetry) before the error reaches the caller.
    """

    def __init__(
        self,
        message: str,
        call: ModelCall,
        *,
        request_id: str | None = None,
        node: str | None = None,
    ) -> None:
        super().__init__(message, request_id=request_id, node=node)
        self.call = call


#: When False, a :class:`VLLMClient` without an injected ``http_client`` refuses to send any
#: request (:class:`ModelRequestsBlockedError`); the unit suite sets it False so that no unit
#: test can reach a real server. Read at every request, so it can be switched at any time.
ALLOW_MODEL_REQUESTS = True


class ModelRequestsBlockedError(OrchestratorError, RuntimeError):
    """A request to a real model server was attempted while :data:`ALLOW_MODEL_REQUESTS` is
    False (in the unit suite). Deliberately not a :class:`ModelCallError`, so no skill's
    fallback swallows it."""


@contextmanager
def override_allow_model_requests(allow: bool) -> Iterator[None]:
    """Set :data:`ALLOW_MODEL_REQUESTS` to ``allow`` inside the block, then restore it.

    Example:
        >>> from orchestrator.core import client
        >>> with override_allow_model_requests(False):
        ...     client.ALLOW_MODEL_REQUESTS
        False
    """
    global ALLOW_MODEL_REQUESTS
    previous, ALLOW_MODEL_REQUESTS = ALLOW_MODEL_REQUESTS, allow
    try:
        yield
    finally:
        ALLOW_MODEL_REQUESTS = previous


@runtime_checkable
class ModelClient(Protocol):
    """What the orchestrator needs from a model: a health check, chat calls with their
    routing, and closing.

    :class:`VLLMClient` is the real one; :class:`~orchestrator.testing.ScriptedModel` is the
    test double. ``isinstance(x, ModelClient)`` checks that the members exist (not their
    signatures).
    """

    model_name: str
    base_url: str

    async def check(self) -> list[dict[str, Any]]:
        """The served models (``GET /v1/models`` entries); raises when the model is not served.

        Raises:
            ServerUnavailableError: The server cannot be reached.
            ModelCallError: It answers, but does not serve ``model_name``.
        """
        ...

    async def chat(self, messages: Sequence[ChatMessage], options: ChatOptions) -> ModelCall:
        """One chat completion with its routing trace.

        Raises:
            ServerUnavailableError: The server cannot be reached.
            ModelCallError: The server answered with an error status or a malformed body.
        """
        ...

    async def aclose(self) -> None:
        """Release connections; the client is not used afterwards."""
        ...


def _tool_calls(message: dict[str, Any]) -> tuple[ToolCall, ...]:
    """The ``tool_calls`` of a response message (arguments kept as text: untrusted data)."""
    calls: list[ToolCall] = []
    for raw in message.get("tool_calls") or []:
        function = raw.get("function") or {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = "" if arguments is None else json.dumps(arguments)
        calls.append(
            ToolCall(
                id=str(raw.get("id") or ""),
                name=str(function.get("name") or ""),
                arguments=arguments,
            )
        )
    return tuple(calls)


def json_schema_format(schema: dict[str, Any], name: str = "output") -> dict[str, Any]:
    """An OpenAI ``response_format`` for schema-constrained output (vLLM: xgrammar)."""
    return {"type": "json_schema", "json_schema": {"name": name, "schema": schema, "strict": True}}


@dataclass
class _Streamed:
    """What a stream has sent so far (:meth:`VLLMClient.stream_chat`)."""

    base_url: str
    started: float
    prompt_ids: list[int] = field(default_factory=list)
    completion_ids: list[int] = field(default_factory=list)
    parts: list[str] = field(default_factory=list)
    finish_reason: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)
    ttft_ms: float | None = None

    def add(self, chunk: object) -> Iterator[TextDelta]:
        """Take one chunk; yields its text pieces.

        Raises:
            ModelCallError: The chunk is not a JSON object, or its content is not text.
        """
        if not isinstance(chunk, dict):
            raise ModelCallError(f"malformed stream chunk from {self.base_url}: {chunk!r:.200}")
        if chunk.get("prompt_token_ids"):
            self.prompt_ids = list(chunk["prompt_token_ids"])
        if chunk.get("usage"):
            self.usage = chunk["usage"]
        for choice in chunk.get("choices") or ():
            ids = choice.get("token_ids") or ()
            self.completion_ids.extend(ids)
            text = (choice.get("delta") or {}).get("content") or ""
            if not isinstance(text, str):
                raise ModelCallError(
                    f"malformed stream chunk from {self.base_url}: content is "
                    f"{type(text).__name__}, not text"
                )
            if choice.get("finish_reason"):
                self.finish_reason = choice["finish_reason"]
            if text or ids:
                if self.ttft_ms is None:
                    self.ttft_ms = (time.perf_counter() - self.started) * 1000.0
                self.parts.append(text)
                # built without validation: text is checked above, the ids are the server's
                # own JSON ints (used only for the routing replay)
                yield TextDelta.model_construct(text=text, token_ids=tuple(ids))


class VLLMClient:
    """Calls a vLLM server and attaches a :class:`ExpertRoutingTrace` to every result.

    Args:
        base_url: ``http://host:port/v1``.
        model_name: The server's ``--served-model-name``.
        capture: How routing is obtained (engine capture on GPU, replay on CPU).
        timeout_s: Seconds per HTTP call.
        max_retries: Retries on connection errors and 5xx, with the SDK's backoff.
        temperature: Default sampling temperature.
        structured_output: Send ``response_format`` for schema-constrained calls (False:
            ``ORCH_STRUCTURED_OUTPUT=false``, for a server that cannot do it).
        http_client: The HTTP client the SDK sends through (tests inject one with an
            ``httpx.MockTransport``); the SDK's own pool when None. An injected client is
            closed by :meth:`aclose`, like the SDK's own.
        stream_interval: Tokens per chunk of a streamed call (vLLM's per-request
            ``stream_interval``, sent when above 1; the first and the last chunk still come at
            once, so TTFT is unchanged). 1, token by token, for a person watching (chat, UI);
            a batch, which nobody watches, sends fewer and larger chunks: each chunk costs the
            server's API process and this client a JSON event.

    Raises:
        UserError: ``stream_interval`` is below 1.
        ServerUnavailableError: From :meth:`chat` and :meth:`check`, when the server cannot
            be reached; it names the URL and the command that starts one.
        ModelCallError: From :meth:`chat`, on an HTTP error answer or a malformed response.
        ModelRequestsBlockedError: From :meth:`chat` and :meth:`check`, when
            :data:`ALLOW_MODEL_REQUESTS` is False and no ``http_client`` was injected.

    Example:
        >>> client = VLLMClient("http://127.0.0.1:8000/v1", "ernie", capture)  # doctest: +SKIP
        >>> call = await client.chat([ChatMessage(role="user", content="hi")],
        ...                          ChatOptions(max_tokens=8))  # doctest: +SKIP
        >>> call.routing.expert_counts().shape  # (moe layers, experts)  # doctest: +SKIP
    """

    def __init__(
        self,
        base_url: str,
        model_name: str,
        capture: ExpertRoutingCapture,
        *,
        timeout_s: float = 120.0,
        max_retries: int = 2,
        temperature: float = 0.7,
        structured_output: bool = True,
        http_client: httpx.AsyncClient | None = None,
        stream_interval: int = 1,
    ) -> None:
        if stream_interval < 1:
            raise UserError(f"stream_interval must be at least 1 token, got {stream_interval}")
        self.stream_interval = stream_interval
        self.temperature = temperature
        self.structured_output = structured_output
        self.base_url = base_url.rstrip("/")
        self.model_name = model_name
        self.capture = capture
        self._transport_injected = http_client is not None
        #: Bounds the HTTP calls in flight (:meth:`limit_in_flight`); None: no bound.
        self._slots: asyncio.Semaphore | None = None
        #: Fields every chat call sends: vLLM's token ids, and with an engine capture the
        #: routed-experts encoding it asks for (the project's vLLM plugin reads it).
        self._extra_body: dict[str, Any] = {"return_token_ids": True}
        #: A sampled engine capture draws per call (its fields then come from each call).
        self._sampled: EngineCapture | None = (
            capture if isinstance(capture, EngineCapture) and capture.per_call else None
        )
        if isinstance(capture, EngineCapture) and self._sampled is None:
            self._extra_body.update(capture.request_fields())
        self._client = openai.AsyncOpenAI(
            base_url=self.base_url,
            api_key="EMPTY",
            timeout=timeout_s,
            max_retries=max_retries,
            http_client=http_client,  # type: ignore[arg-type]  # hinted httpx2; httpx runs too
        )

    def limit_in_flight(self, slots: asyncio.Semaphore | None) -> None:
        """Bound this client's HTTP calls in flight by ``slots`` (None: no bound).

        Several clients may share one semaphore, so the bound holds over all of them (the
        batch runner: ``--concurrency`` model calls in flight over all endpoints, while more
        rows than that are in progress). A call waits for a slot before it is sent, and its
        ``latency_ms`` and ``ttft_ms`` count from the moment it has one; a streamed call holds
        its slot until its last chunk.
        """
        self._slots = slots

    def _slot(self) -> contextlib.AbstractAsyncContextManager[Any]:
        return self._slots if self._slots is not None else contextlib.nullcontext()

    def _check_allowed(self) -> None:
        """Refuse a real request while :data:`ALLOW_MODEL_REQUESTS` is False.

        Raises:
            ModelRequestsBlockedError: Requests are off and the transport is the real one.
        """
        if not ALLOW_MODEL_REQUESTS and not self._transport_injected:
            raise ModelRequestsBlockedError(
                f"real model requests are disabled (orchestrator.core.client."
                f"ALLOW_MODEL_REQUESTS is False, as in the unit suite), so nothing was sent "
                f"to {self.base_url}. Use orchestrator.testing.ScriptedModel, or pass "
                f"VLLMClient(http_client=httpx.AsyncClient(transport=httpx.MockTransport(...))); "
                f"tests that need a real server belong in tests/integration"
            )

    def _unavailable(self, exc: Exception) -> ServerUnavailableError:
        reason = type(exc).__name__
        if exc.__cause__ is not None:
            reason = f"{reason}: {exc.__cause__}"
        return ServerUnavailableError(self.base_url, reason)

    async def check(self) -> list[dict[str, Any]]:
        """List the served models (``GET /v1/models``); proves the server answers.

        Raises:
            ServerUnavailableError: The server cannot be reached.
            ModelCallError: It answers, but does not serve ``model_name``.
            CheckpointError: It serves a different checkpoint from the one routing is
                replayed through (the recorded experts would be wrong).
            ModelRequestsBlockedError: Real requests are disabled (the unit suite).
        """
        self._check_allowed()
        try:
            page = await self._client.models.list()
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise self._unavailable(exc) from exc
        models: list[dict[str, Any]] = [m.to_dict() for m in page.data]
        if not any(m.get("id") == self.model_name for m in models):
            names = ", ".join(str(m.get("id")) for m in models)
            raise ModelCallError(
                f"server at {self.base_url} serves [{names}], not {self.model_name!r}; set "
                "ORCH_SERVED_MODEL_NAME or start the server with --served-model-name"
            )
        served = next(m for m in models if m.get("id") == self.model_name)
        self.capture.verify_served_model(served.get("root"))
        return models

    async def chat(self, messages: Sequence[ChatMessage], options: ChatOptions) -> ModelCall:
        """One non-streaming chat completion, with its routing trace.

        Args:
            messages: The conversation, system turn first.
            options: The completion's limit, schema, temperature and tools. The schema is not
                sent when the client was made with ``structured_output=False``. vLLM needs
                ``--tool-call-parser`` for named and required tool choices, and
                ``--enable-auto-tool-choice`` for ``auto``.

        Raises:
            ServerUnavailableError: The server cannot be reached.
            ModelCallError: The server answered with an error status or a malformed body.
            ModelRequestsBlockedError: Real requests are disabled (the unit suite).
        """
        self._check_allowed()
        kwargs: dict[str, Any] = {}
        if options.json_schema is not None and self.structured_output:
            kwargs["response_format"] = json_schema_format(options.json_schema)
        if options.tools:
            kwargs["tools"] = list(options.tools)
            if options.tool_choice is not None:
                kwargs["tool_choice"] = options.tool_choice
        try:
            async with self._slot():
                started = time.perf_counter()
                # The SDK's documented raw path (client.post with cast_to=httpx.Response; its
                # timeouts, retries and error mapping still apply): the body is our plain dict,
                # sent as is, and the answer is parsed once, below. chat.completions.create walks
                # the params through the SDK's typed-dict transform (messages and the whole JSON
                # schema) and builds a pydantic ChatCompletion that to_dict() copied again: about
                # 1 ms of client CPU per call more (benchmarks/orch_client_cpu.py).
                raw = await self._client.post(
                    "/chat/completions",
                    body={
                        **self._body(messages, options),
                        **self._extra_body,
                        **(self._sampled.request_fields() if self._sampled is not None else {}),
                        **kwargs,
                    },
                    cast_to=httpx.Response,
                )
        except (openai.APIConnectionError, openai.APITimeoutError) as exc:
            raise self._unavailable(exc) from exc
        except openai.APIStatusError as exc:
            hint = ""
            if "response_format" in kwargs and exc.status_code >= 500:
                # seen on a vLLM 0.24.0 GPU build: every structured-output request got an empty
                # HTTP 500 (benchmarks/results/gpu_2026-11-29_session2.md)
                hint = (
                    "; the request asked for schema-constrained output: if this server cannot "
                    "do structured output, set ORCH_STRUCTURED_OUTPUT=false"
                )
            raise self._status_error(exc, hint) from exc
        latency_ms = (time.perf_counter() - started) * 1000.0
        return await self._chat_call(raw.content, latency_ms)

    def _body(self, messages: Sequence[ChatMessage], options: ChatOptions) -> dict[str, Any]:
        """The request body's fields that every chat request carries, streamed or not."""
        temperature = options.temperature
        return {
            "model": self.model_name,
            "messages": [m.model_dump() for m in messages],
            "max_tokens": options.max_tokens,
            "temperature": self.temperature if temperature is None else temperature,
        }

    def _status_error(self, exc: openai.APIStatusError, hint: str = "") -> ModelCallError:
        """The :class:`ModelCallError` of an HTTP error answer, with its status and body.

        An empty 5xx says nothing: the message names the vLLM flag that makes the server log
        the cause, before ``hint`` (both are ways out).
        """
        hint = empty_500_hint(exc.status_code, exc.body) + hint
        kind = (
            PromptTooLongError
            if PromptTooLongError.matches(exc.status_code, f"{exc.body} {exc.message}")
            else ModelCallError
        )
        return kind(
            f"server at {self.base_url} answered HTTP {exc.status_code}: {exc.message}{hint}",
            status_code=exc.status_code,
            body=exc.body,
        )

    async def _chat_call(self, content: bytes, latency_ms: float) -> ModelCall:
        """The :class:`ModelCall` of a non-streamed answer's body, with its routing.

        Raises:
            ModelCallError: The body is not JSON, or lacks its choice or usage.
        """
        try:
            body: dict[str, Any] = json.loads(content)
            choice = body["choices"][0]
            usage = body["usage"]
            prompt_tokens, completion_tokens = usage["prompt_tokens"], usage["completion_tokens"]
        except (KeyError, IndexError, TypeError, ValueError) as exc:
            # ValueError: not JSON (json.JSONDecodeError, UnicodeDecodeError)
            raise ModelCallError(f"malformed response from {self.base_url}: {exc!r}") from exc
        routing = await self.capture.capture(
            CallTokens(
                response=body,
                choice=choice,
                prompt_ids=body.get("prompt_token_ids") or [],
                completion_ids=choice.get("token_ids") or [],
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
        )
        message = choice.get("message") or {}
        return ModelCall(
            model=self.model_name,
            text=message.get("content") or "",
            finish_reason=choice.get("finish_reason"),
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=latency_ms,
            routing=routing,
            tool_calls=_tool_calls(message),
        )

    async def stream_chat(
        self, messages: Sequence[ChatMessage], options: ChatOptions
    ) -> AsyncIterator[StreamItem]:
        """A streamed chat completion: :class:`TextDelta` pieces as they arrive, then the
        finished :class:`ModelCall` (with ``ttft_ms``) once.

        **Expert routing of a streamed call.** vLLM sends no routed experts in streaming
        chunks. The stream asks for ``return_token_ids``: the first chunk carries
        ``prompt_token_ids`` and each chunk its ``token_ids``; the collected ids go to the
        client's capture after the last chunk. On CPU that is :class:`ReplayCapture`, so the
        trace is the transformers replay of exactly the streamed tokens, labelled ``replay``.
        On GPU (:class:`EngineCapture`) the client sends one more, non-streamed request: the
        prompt and completion token ids as a completion prompt with ``max_tokens=1``; the
        engine's ``routed_experts`` of that prefill covers the same tokens and is labelled
        ``engine`` (a re-prefill: the same tokens through the same engine, not the decode
        steps themselves; not verified on a GPU in this session).

        Raises:
            TruncatedStreamError: The stream ended with no finish reason (no ``[DONE]``
                either): the server stopped mid-answer; the error carries the partial call.
            ServerUnavailableError, ModelCallError, ModelRequestsBlockedError: As :meth:`chat`.
        """
        self._check_allowed()
        body: dict[str, Any] = {
            **self._body(messages, options),
            "stream": True,
            "stream_options": {"include_usage": True},
            "return_token_ids": True,
        }
        if self.stream_interval > 1:
            body["stream_interval"] = self.stream_interval
        async with self._slot():
            got = _Streamed(self.base_url, time.perf_counter())
            try:
                # The SDK's raw path again (as chat), streamed: its timeouts, retries before
                # the first byte, SSE decoding and error mapping (a timeout or a cut connection
                # mid-stream is APITimeoutError / APIConnectionError, an error event APIError),
                # with each chunk handed over as the parsed JSON dict (cast_to=object) instead
                # of a pydantic ChatCompletionChunk that to_dict() then copied back: that was
                # the largest part of a batch's client CPU (benchmarks/batch_throughput.py).
                stream = await self._client.post(
                    "/chat/completions",
                    body=body,
                    cast_to=object,
                    stream=True,
                    stream_cls=openai.AsyncStream[object],
                )
                async with stream:  # the connection goes back to the pool however it ends
                    async for chunk in stream:
                        for delta in got.add(chunk):
                            yield delta
            except (openai.APIConnectionError, openai.APITimeoutError) as exc:
                raise self._unavailable(exc) from exc
            except openai.APIStatusError as exc:
                raise self._status_error(exc) from exc
            except openai.APIError as exc:  # an error event in the stream (vLLM: mid-generation)
                raise ModelCallError(
                    f"server at {self.base_url} sent an error in the stream: {exc.message}"
                ) from exc
        yield await self._streamed_call(got, (time.perf_counter() - got.started) * 1000.0)

    async def _streamed_call(self, got: _Streamed, latency_ms: float) -> ModelCall:
        """The finished :class:`ModelCall` of a stream, with its routing (see
        :meth:`stream_chat`).

        Raises:
            TruncatedStreamError: The stream ended with no finish reason.
        """
        prompt_ids, completion_ids = got.prompt_ids, got.completion_ids
        prompt_tokens = int(got.usage.get("prompt_tokens") or len(prompt_ids))
        completion_tokens = int(got.usage.get("completion_tokens") or len(completion_ids))
        response: dict[str, Any] = {"prompt_token_ids": prompt_ids}
        choice_body: dict[str, Any] = {"token_ids": completion_ids}
        if isinstance(self.capture, EngineCapture) and prompt_ids:
            # the last sampled token never went through the model (it has no routing): the
            # prefill of prompt + completion[:-1] gives exactly the call's routed tokens. A call
            # the sample leaves out skips it (the capture labels it "not in the sample").
            fields = self.capture.request_fields()
            if fields["vllm_xargs"]["routed_experts"] != "none":
                response, choice_body = await self._reprefill(
                    prompt_ids + completion_ids[:-1], fields
                )
        routing = await self.capture.capture(
            CallTokens(
                response=response,
                choice=choice_body,
                prompt_ids=prompt_ids,
                completion_ids=completion_ids,
                prompt_tokens=prompt_tokens,
                completion_tokens=completion_tokens,
            )
        )
        call = ModelCall(
            model=self.model_name,
            text="".join(got.parts),
            finish_reason=got.finish_reason or TRUNCATED,
            prompt_tokens=prompt_tokens,
            completion_tokens=completion_tokens,
            latency_ms=latency_ms,
            routing=routing,
            ttft_ms=got.ttft_ms,
        )
        if got.finish_reason is None:  # every whole vLLM answer ends with one (stop, length...)
            raise TruncatedStreamError(
                f"the stream from {self.base_url} ended without a finish reason after "
                f"{len(completion_ids)} tokens: the answer was cut",
                call,
            )
        return call

    async def _reprefill(
        self, token_ids: list[int], fields: dict[str, Any]
    ) -> tuple[dict[str, Any], dict[str, Any]]:
        """GPU: the engine's routing of ``token_ids`` from one non-streamed prefill.

        Returns ``(response, choice)`` bodies for the capture; ``({}, {})`` on failure (the
        capture then records the routing as unavailable rather than inventing it).
        """
        try:
            async with self._slot():
                completion = await self._client.completions.create(
                    model=self.model_name,
                    prompt=token_ids,
                    max_tokens=1,
                    temperature=0.0,
                    extra_body=fields,
                )
        except openai.OpenAIError:
            return {}, {}
        body: dict[str, Any] = completion.to_dict()
        choices = body.get("choices") or [{}]
        return body, choices[0]

    async def aclose(self) -> None:
        """Close the connection pool (an injected ``http_client`` too)."""
        await self._client.close()
