"""``orchestrator classifier ...`` commands (evaluation and threshold fitting)."""

from __future__ import annotations

import typer

app = typer.Typer(no_args_is_help=True, help="Evaluate and tune the request classifier.")
