"""Time-window specs for the skew report: ``24h``, ``7d``, ``2w`` or ``all``.

Rollups are kept per UTC hour, so windows are whole hours: the end is rounded up to the next
hour boundary, and the start is ``end - duration``.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

from orchestrator.analysis.skew.models import TimeWindow
from orchestrator.exceptions import UserError
from orchestrator.telemetry import ROLLUP_BUCKET, bucket_start

_SPEC = re.compile(r"^\s*(\d+)\s*([hdw])\s*$", re.IGNORECASE)
_UNITS = {"h": timedelta(hours=1), "d": timedelta(days=1), "w": timedelta(weeks=1)}


def parse_duration(spec: str, what: str = "--window") -> timedelta | None:
    """``"7d"`` -> 7 days; ``"all"`` -> None.

    Raises:
        UserError: The spec is not ``<n>h``, ``<n>d``, ``<n>w`` (n >= 1) or ``all``.
    """
    if spec.strip().lower() == "all":
        return None
    match = _SPEC.match(spec)
    if not match or int(match.group(1)) < 1:
        raise UserError(
            f"{what} {spec!r} is not a window; write a whole number of hours, days or weeks "
            "such as 24h, 7d or 2w, or 'all'"
        )
    return int(match.group(1)) * _UNITS[match.group(2).lower()]


def parse_until(text: str) -> datetime:
    """An ISO 8601 date or time (naive = UTC) as an aware UTC datetime.

    Raises:
        UserError: The text is not ISO 8601.
    """
    try:
        moment = datetime.fromisoformat(text.strip())
    except ValueError as exc:
        raise UserError(
            f"--until {text!r} is not an ISO 8601 time; write e.g. 2026-11-29 or "
            "2026-11-29T18:00 (UTC unless an offset is given)"
        ) from exc
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def ceil_hour(moment: datetime) -> datetime:
    """The first hour boundary at or after ``moment``."""
    floor = bucket_start(moment)
    return floor if floor == moment.astimezone(UTC) else floor + ROLLUP_BUCKET


def resolve(
    window: str,
    baseline: str | None,
    *,
    until: datetime | None,
    span: tuple[datetime, datetime],
) -> tuple[TimeWindow, TimeWindow | None]:
    """The report window and the baseline window just before it.

    Args:
        window: Window spec (``7d``, ``all``...).
        baseline: Baseline spec, ``"none"`` for no drift, or None for "same length as
            ``window``" (no baseline when ``window`` is ``all``).
        until: Window end; None means the end of the newest rollup bucket.
        span: First and last rollup bucket start in the database.

    Raises:
        UserError: A spec is malformed, or ``baseline`` is given with ``window`` ``all``.
    """
    duration = parse_duration(window)
    end = ceil_hour(until) if until is not None else span[1] + ROLLUP_BUCKET
    start = end - duration if duration is not None else min(span[0], end - ROLLUP_BUCKET)
    current = TimeWindow(start=start, end=end, label=window.strip().lower())
    if baseline is not None and baseline.strip().lower() == "none":
        return current, None
    if baseline is None:
        if duration is None:
            return current, None
        base = duration
    else:
        parsed = parse_duration(baseline, "--baseline")
        if parsed is None:
            raise UserError("--baseline must be a length such as 7d, or 'none'; 'all' has none")
        base = parsed
    label = f"previous {(baseline or window).strip().lower()}"
    return current, TimeWindow(start=start - base, end=start, label=label)
