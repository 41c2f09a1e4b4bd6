"""Probe a started vLLM server with one structured-output request, and say why it failed.

vLLM 0.24.0 answered every structured-output request with an empty HTTP 500 when one of the
structured-output backend packages was missing (``lm-format-enforcer``; ``shared/FACTS.md``).
The response said nothing; the cause reached the server log only with
``--enable-log-requests`` (and the stack with ``--log-error-stack``). So a launcher should:

1. start vLLM with ``--enable-log-requests``;
2. call :func:`probe_structured_output` once the server answers ``/health``;
3. on failure, raise with :meth:`StructuredOutputProbe.explain`: the status, the body, and the
   server log lines written while the probe ran (the error lines first).

>>> probe = probe_structured_output("http://127.0.0.1:8000/v1", "ernie",
...                                 log_path="runs/vllm-server.log")  # doctest: +SKIP
>>> probe.ok, probe.status  # doctest: +SKIP
(True, 200)
"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path
from typing import Any

import httpx
from pydantic import BaseModel, ConfigDict

__all__ = [
    "EMPTY_500_HINT",
    "LOG_REQUESTS_FLAG",
    "PROBE_SCHEMA",
    "StructuredOutputProbe",
    "empty_500_hint",
    "error_lines",
    "probe_structured_output",
]

#: The vLLM flag without which a failed request's cause is not logged.
LOG_REQUESTS_FLAG = "--enable-log-requests"
#: A small schema with every string bounded, so that even a random-weight model terminates.
PROBE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"label": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["label"],
    "additionalProperties": False,
}
#: What a client adds to its error for an HTTP 5xx whose message is empty.
EMPTY_500_HINT = (
    "; the server gave no reason: vLLM logs the cause of a failed request only when started "
    f"with {LOG_REQUESTS_FLAG} (add --log-error-stack for the stack), so read the server log "
    "(on vLLM 0.24.0 an empty 500 to every structured-output request meant a missing "
    "structured-output backend package, lm-format-enforcer)"
)
_ERROR = re.compile(r"\b(ERROR|CRITICAL|Traceback|Exception|Error)\b|ModuleNotFoundError|500")


class StructuredOutputProbe(BaseModel):
    """The outcome of one structured-output probe.

    Attributes:
        ok: HTTP 200 and the reply parses as JSON matching :data:`PROBE_SCHEMA`'s enum.
        status: HTTP status, or None when the server could not be reached.
        body: The first 500 characters of the response body (or the connection error).
        content: The reply's message content (model output: data), when 200.
        seconds: Wall time of the request.
        log_lines: Server log lines written during the probe (at most 60, 400 chars each).
        log_flag_missing: The server command (when given) lacks :data:`LOG_REQUESTS_FLAG`.
    """

    model_config = ConfigDict(frozen=True)

    ok: bool
    status: int | None
    body: str
    content: str | None = None
    seconds: float
    log_lines: tuple[str, ...] = ()
    log_flag_missing: bool = False

    def explain(self) -> str:
        """A message for a failed probe: what was sent, what came back, the log lines that name
        the cause (error lines first), and what to do when the log is silent."""
        if self.ok:
            return f"structured output works (HTTP {self.status}, {self.seconds:.2f} s)"
        head = (
            f"the server failed a structured-output request (response_format json_schema): "
            f"HTTP {self.status}, body {self.body[:200]!r}"
        )
        errors = error_lines(self.log_lines)
        if errors:
            cause = "server log:\n  " + "\n  ".join(errors[:8])
        elif self.log_flag_missing:
            cause = (
                f"the server log names no cause: start vLLM with {LOG_REQUESTS_FLAG} (and "
                "--log-error-stack for the stack) to log it; an empty 500 on vLLM 0.24.0 came from "
                "a missing structured-output backend package (lm-format-enforcer)"
            )
        else:
            cause = "the server log names no cause (no error line while the probe ran)"
        return f"{head}\n{cause}\nserve without schemas meanwhile: ORCH_STRUCTURED_OUTPUT=false"


def empty_500_hint(status_code: int, body: object) -> str:
    """:data:`EMPTY_500_HINT` when ``status_code`` is 5xx and ``body`` carries no message, else
    ``""``.

    Args:
        status_code: The HTTP status.
        body: The parsed error body as the ``openai`` SDK keeps it (``APIStatusError.body``:
            vLLM's ``{"message": "", "type": ..., "code": 500}``, or the whole
            ``{"error": {...}}``), a string, or None.
    """
    if status_code < 500:
        return ""
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
    else:
        message = body
    return EMPTY_500_HINT if not str(message or "").strip() else ""


def error_lines(lines: tuple[str, ...] | list[str]) -> list[str]:
    """The lines of ``lines`` that look like an error (ERROR, Traceback, an exception name, a
    500 status), in order."""
    return [line for line in lines if _ERROR.search(line)]


def _log_size(path: Path | None) -> int:
    try:
        return path.stat().st_size if path is not None else 0
    except OSError:
        return 0


def _log_since(path: Path | None, offset: int) -> tuple[str, ...]:
    if path is None:
        return ()
    try:
        with path.open("rb") as handle:
            handle.seek(offset)
            text = handle.read(200_000).decode("utf-8", errors="replace")
    except OSError:
        return ()
    return tuple(line[:400] for line in text.splitlines() if line.strip())[-60:]


def probe_structured_output(
    base_url: str,
    model: str,
    *,
    log_path: Path | str | None = None,
    command: list[str] | None = None,
    timeout_s: float = 120.0,
    settle_s: float = 0.5,
    client: httpx.Client | None = None,
) -> StructuredOutputProbe:
    """Send one chat request with a ``json_schema`` response format and report.

    Args:
        base_url: ``http://host:port/v1``.
        model: The served model name.
        log_path: The server's log file; the lines it gains during the probe are kept.
        command: The server's command line, to say whether :data:`LOG_REQUESTS_FLAG` is on.
        timeout_s: Seconds for the request.
        settle_s: Seconds to wait after a failed answer for the log to be written.
        client: An ``httpx.Client`` to send through (tests pass one with a mock transport).

    Returns:
        A :class:`StructuredOutputProbe`; never raises for a server error or an unreachable
        server (``ok`` False, ``status`` None), so the caller decides.
    """
    path = Path(log_path) if log_path is not None else None
    offset = _log_size(path)
    body = {
        "model": model,
        "messages": [{"role": "user", "content": "Answer yes or no: is the sky blue?"}],
        "max_tokens": 16,
        "temperature": 0.0,
        "response_format": {
            "type": "json_schema",
            "json_schema": {"name": "probe", "schema": PROBE_SCHEMA, "strict": True},
        },
    }
    own = client is None
    http = client or httpx.Client(timeout=timeout_s)
    started = time.perf_counter()
    status: int | None = None
    text = ""
    content: str | None = None
    try:
        response = http.post(f"{base_url.rstrip('/')}/chat/completions", json=body)
        status, text = response.status_code, response.text
    except httpx.HTTPError as exc:
        text = f"{type(exc).__name__}: {exc}"
    finally:
        if own:
            http.close()
    seconds = time.perf_counter() - started
    ok = False
    if status == 200:
        try:
            content = json.loads(text)["choices"][0]["message"]["content"]
            ok = json.loads(content or "").get("label") in ("yes", "no")
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            ok = False
    if not ok and settle_s > 0:
        time.sleep(settle_s)
    return StructuredOutputProbe(
        ok=ok,
        status=status,
        body=text[:500],
        content=content,
        seconds=round(seconds, 3),
        log_lines=() if ok else _log_since(path, offset),
        log_flag_missing=command is not None and LOG_REQUESTS_FLAG not in command,
    )
