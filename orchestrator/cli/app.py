"""The ``orchestrator`` Typer root: it creates the app, and each feature module adds its own
commands through its ``register(app)`` (the list is in :mod:`orchestrator.cli`).

The order of registration is the order ``orchestrator --help`` lists the commands in (single
commands first, then the groups).
"""

from __future__ import annotations

import logging

import typer

from orchestrator.cli import (  # customer service (issue 12)
    batch,
    chat,
    classifier,
    handoff,
    moderation,
    report,
    run,
    serve,
    skew,
    status,
    store,
    telemetry,
    train,
    ui,
)

app = typer.Typer(
    add_completion=False,
    no_args_is_help=True,
    help="Route requests into LangGraph workflows on a self-hosted ERNIE-4.5 MoE "
    "and record which experts the router used.",
)
classifier.register(app)  # the classifier group
moderation.register(app)  # moderate, and the moderation group
report.register(app)  # report
skew.register(app)  # skew
serve.register(app)  # build-checkpoint, serve
run.register(app)  # run, load, classify
batch.register(app)  # batch
store.register(app)  # store seed, store info (customer service)
handoff.register(app)  # handoff list, handoff resume
chat.register(app)  # chat
status.register(app)  # status (vLLM server health, issue 17)
ui.register(app)  # ui (Chainlit chat front end, issue 17)
train.register(app)  # train prepare / fit / card (trained offline checkpoint, issue 20)
telemetry.register(app)  # telemetry pending / fill-routing (deferred expert routing, issue 13)


def main() -> None:  # pragma: no cover
    """The ``orchestrator`` console script and ``python -m orchestrator.cli``: warnings and
    errors of the libraries' loggers go to standard error, then the app runs."""
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    app()
