"""A classifier stand-in that sends every request to one route: an entry point where the caller
has already chosen the workflow (the UI's moderation panel, ``orchestrator moderate``)."""

from __future__ import annotations

from orchestrator.classification import Classification
from orchestrator.request import Request
from orchestrator.routes import Route


class FixedRoute:
    """Classifies every request as ``route`` with confidence 1.

    Args:
        route: The route every request takes (any declared route).
        reason: The classification's reason, shown and recorded.

    Example:
        >>> FixedRoute(Route("faq")).classify(Request(text="hi")).route
        'faq'
    """

    def __init__(self, route: Route, reason: str = "the caller fixed the route") -> None:
        self.route = route
        self.reason = reason

    def classify(self, request: Request) -> Classification:
        """Always :attr:`route`, confidence 1."""
        return Classification(
            route=self.route,
            confidence=1.0,
            scores={self.route: 1.0},
            reason=self.reason,
            rules_version="fixed",
        )
