"""Unit-suite fixtures: no unit test may reach a real model server.

Like pydantic-ai's ``ALLOW_MODEL_REQUESTS``, :data:`orchestrator.core.client.ALLOW_MODEL_REQUESTS`
is turned off around every unit test, so a :class:`~orchestrator.core.client.VLLMClient`
built on the real transport raises ``ModelRequestsBlockedError`` before sending anything. Unit
tests use :class:`~orchestrator.testing.ScriptedModel`, or a ``VLLMClient`` with an injected
``httpx.MockTransport``; tests that need a server live in ``tests/integration``.

The switch is set per test (function scope) rather than once per session: a plain ``pytest``
runs ``tests/integration`` in the same session, and a session-scoped switch set by the first
unit test would stay off for every integration test collected after it.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from orchestrator.core.client import override_allow_model_requests


@pytest.fixture(autouse=True)
def _no_model_requests() -> Iterator[None]:
    """Block real model requests for the duration of each unit test."""
    with override_allow_model_requests(False):
        yield
