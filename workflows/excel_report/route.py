"""The Excel-report workflow's route, by name. Its declaration (channels, rules, facts) is
the ``[[route]] name = "excel_report"`` table of the routes file
(``orchestrator/rules/routes.toml``)."""

from __future__ import annotations

from typing import Final

from orchestrator.routes import Route

ROUTE: Final = Route("excel_report")
