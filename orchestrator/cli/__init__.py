"""The command-line application, ``orchestrator`` (Typer + rich): the top layer of the project.

:mod:`orchestrator.cli.app` creates the Typer root and calls ``register(app)`` of each command
module; each module owns its commands, options and messages:

* :mod:`~orchestrator.cli.run`: ``run`` (the main job: real requests end to end, then the
  expert load table), ``classify`` (how the classifier routes one text);
* :mod:`~orchestrator.cli.load`: ``load`` (the load table of a telemetry database);
* :mod:`~orchestrator.cli.serve`: ``build-checkpoint`` (the offline ERNIE-4.5 MoE checkpoint),
  ``serve`` (the co-hosted vLLM server in the foreground);
* :mod:`~orchestrator.cli.skew`: ``skew`` (the expert-skew report: terminal, HTML, JSON);
* :mod:`~orchestrator.cli.classifier`: the ``classifier`` group (``eval``,
  ``fit-thresholds``, ``build-set``);
* :mod:`~orchestrator.cli.batch`: ``batch`` (a sheet of requests or a folder of workbooks,
  concurrent and resumable, with a results workbook);
* :mod:`~orchestrator.cli.status`: ``status`` (the model server's health, from vLLM's
  ``/metrics``);
* :mod:`~orchestrator.cli.chat`: ``chat`` (streamed replies on a checkpointed thread of the
  installed workflow that holds conversations).

A workflow's own commands live in its package and are mounted through the
``moe_orchestrator.commands`` entry points (:data:`~orchestrator.cli.app.PLUGIN_GROUP`): the
built-ins' ``report FILE`` (``workflows.excel_report.cli``), the ``store`` and ``handoff``
groups (``workflows.customer_service.cli``), and ``moderate`` with the ``moderation`` group
(``eval``, ``check``, ``fit``; ``workflows.content_moderation.cli``). The ``train`` group
(``prepare``, ``fit``, ``card``) is mounted the same way from ``training.cli``: the offline
model's fine-tuning data is built from the built-ins' own prompts, so it sits above them.

The root (:mod:`~orchestrator.cli.app`) imports a module only when one of its commands runs.

Shared by them: :mod:`~orchestrator.cli.common` (the consoles, ``settings_from_flags``,
``fail``, ``model_server``) and :mod:`~orchestrator.cli.console` (rendering of request lines
and the expert load table).

Run it as ``orchestrator ...`` (the console script, :func:`main`) or ``python -m
orchestrator.cli ...``.
"""

from orchestrator.cli.app import app, main

__all__ = ["app", "main"]
