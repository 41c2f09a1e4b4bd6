"""The command-line application (``orchestrator``): one Typer app, one module per feature."""

from orchestrator.cli.app import app, main

__all__ = ["app", "main"]
