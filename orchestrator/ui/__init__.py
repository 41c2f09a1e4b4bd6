"""The chat front end's back end: :func:`build_app` serves the framework's event stream to the
Chainlit app (``ui/app.py``, run by ``orchestrator ui`` in its own environment ``.venv-ui``).
See :mod:`orchestrator.ui.service` for the endpoints and why Chainlit runs apart."""

from __future__ import annotations

from orchestrator.ui.service import PRESETS, DecisionIn, ResumeIn, TurnIn, build_app, expert_grid

__all__ = ["PRESETS", "DecisionIn", "ResumeIn", "TurnIn", "build_app", "expert_grid"]
