"""The skew report as machine-readable JSON (the pydantic models of :mod:`.models`)."""

from __future__ import annotations

from pathlib import Path

from orchestrator.analysis.skew.models import SkewReport
from orchestrator.outfiles import atomic_write_text


def to_json(report: SkewReport) -> str:
    """The report as indented JSON; ``SkewReport.model_validate_json`` reads it back."""
    return report.model_dump_json(indent=2)


def write_json(report: SkewReport, path: Path | str) -> Path:
    """Write the JSON report atomically.

    Raises:
        UserError: ``path`` cannot be written (see :func:`atomic_write_text`).
    """
    return atomic_write_text(path, to_json(report) + "\n")
