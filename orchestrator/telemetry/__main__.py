"""``python -m orchestrator.telemetry upgrade [URL]``: upgrade a telemetry database in place.

Brings the database to the newest schema revision (rows kept; a database made before
migrations is adopted first), what ``TelemetryStore(URL)`` does on open; read-only commands
(``orchestrator load``, ``orchestrator skew``) ask for it when a database is behind. URL
defaults to ``ORCH_DATABASE_URL`` or ``sqlite:///runs/telemetry.db`` (the settings' default).
Exit status 0 on success, 2 on a usage or database error (one line on stderr).
"""

from __future__ import annotations

import argparse
import sys

from orchestrator.config import Settings
from orchestrator.exceptions import OrchestratorError
from orchestrator.telemetry.migrate import current_revision
from orchestrator.telemetry.store import TelemetryStore


def main(argv: list[str] | None = None) -> int:
    """Run the command line with ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m orchestrator.telemetry",
        description="Upgrade a telemetry database to the newest schema revision (rows kept).",
    )
    parser.add_argument("action", choices=["upgrade"])
    parser.add_argument("url", nargs="?", help="SQLAlchemy URL (default: the settings' URL)")
    args = parser.parse_args(argv)
    try:
        url = args.url or Settings().database_url
        store = TelemetryStore(url)
        with store.engine.connect() as connection:
            revision = current_revision(connection)
        store.close()
    except (OrchestratorError, ValueError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(f"telemetry database {url}: at schema revision {revision} (the newest)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
