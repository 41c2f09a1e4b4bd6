"""The routes a request can take. A route names the workflow that handles it."""

from __future__ import annotations

from enum import StrEnum


class Route(StrEnum):
    """Where the classifier sends a request.

    ``FALLBACK`` means "not confident enough to automate": ask the user to clarify or hand the
    request to a person. It never calls the model.
    """

    CUSTOMER_SERVICE = "customer_service"
    CONTENT_MODERATION = "content_moderation"
    EXCEL_REPORT = "excel_report"
    FALLBACK = "fallback"
