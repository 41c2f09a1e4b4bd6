"""``python -m orchestrator.cli``: the same as the ``orchestrator`` command."""

from orchestrator.cli.app import main

main()
