"""``orchestrator new workflow NAME``: write a workflow package to start from.

The package (``NAME/`` in ``--dir``) holds a LangGraph graph of one node that calls one skill
(a prompt and a typed pydantic answer), the route's declaration (description, channel, a rule
and example utterances), ``examples.csv`` for ``orchestrator classifier fit --examples``, a
test with the library's :class:`~orchestrator.testing.ScriptedModel` that passes as written,
and a ``pyproject.toml`` whose entry point (``moe_orchestrator.workflows``) registers the
workflow once the package is installed (``pip install -e NAME``).

The files are rendered from the templates in ``orchestrator/cli/workflow_template/`` with the
standard library's :class:`string.Template` (``${name}`` placeholders): nothing in them needs
more than substitution.
"""

from __future__ import annotations

import keyword
import re
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import Annotated

import typer

from orchestrator.cli.common import console, fail
from orchestrator.core.registry import routes_in_use
from orchestrator.exceptions import OrchestratorError
from orchestrator.routes import FALLBACK, ROUTE_NAME

group = typer.Typer(no_args_is_help=True, help="Write a new workflow package to start from.")

#: template file (relative to ``workflow_template/``) -> the file it becomes (``{package}``
#: is the package's import name)
FILES: dict[str, str] = {
    "pyproject.toml.tmpl": "pyproject.toml",
    "examples.csv.tmpl": "examples.csv",
    "package/__init__.py.tmpl": "{package}/__init__.py",
    "package/route.py.tmpl": "{package}/route.py",
    "package/skill.py.tmpl": "{package}/skill.py",
    "package/graph.py.tmpl": "{package}/graph.py",
    "tests/test_workflow.py.tmpl": "tests/test_{name}.py",
}
#: The example rows ``examples.csv`` starts with (``{words}``: the route's name in words);
#: the classifier needs at least 8 per route, a few dozen do better.
EXAMPLE_ROWS = (
    "I have a question about {words}",
    "can you help me with {words}",
    "tell me more about {words}",
    "what should I know about {words}",
    "I need information on {words}",
    "explain {words} to me please",
    "where can I read about {words}",
    "a quick question on {words}",
    "help with {words} please",
    "could you tell me about {words}",
)


def check_name(name: str) -> str:
    """``name`` when it can name a route and a Python package, and no declared route has it.

    Raises:
        typer.BadParameter: It cannot (says why and what would do).
    """
    if not re.fullmatch(ROUTE_NAME, name):
        raise typer.BadParameter(
            f"{name!r} is not a workflow name: use snake_case letters, digits and _ starting "
            "with a letter (e.g. faq or invoice_question)"
        )
    if name == FALLBACK or keyword.iskeyword(name):
        raise typer.BadParameter(f"{name!r} is reserved; choose another name")
    if name in routes_in_use():  # its workflow would be refused at start-up
        raise typer.BadParameter(
            f"route {name!r} is already declared (the routes file or an installed workflow); "
            "choose another name"
        )
    return name


def render(name: str, target: Path) -> list[Path]:
    """Write the package of workflow ``name`` into the new folder ``target``.

    Returns:
        The files written.

    Raises:
        FileExistsError: ``target`` exists.
    """
    words = name.replace("_", " ")
    values = {
        "name": name,
        "words": words,
        "package": f"{name}_workflow",
        "cls": "".join(part.capitalize() for part in name.split("_")) + "Workflow",
        "dist": f"{name.replace('_', '-')}-workflow",
        "examples": "\n".join(f"{row.format(words=words)},{name},en" for row in EXAMPLE_ROWS),
    }
    source = files("orchestrator.cli").joinpath("workflow_template")
    target.mkdir(parents=True)  # raises FileExistsError: never writes into an existing folder
    written = []
    for template, dest in FILES.items():
        text = Template(source.joinpath(template).read_text(encoding="utf-8")).substitute(values)
        path = target / dest.format(**values)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        written.append(path)
    return written


@group.command("workflow")
def workflow_cmd(
    name: Annotated[str, typer.Argument(help="The workflow's and its route's name (snake_case).")],
    directory: Annotated[
        Path, typer.Option("--dir", help="Folder to write the package folder NAME/ into.")
    ] = Path("."),
) -> None:
    """Write a workflow package: a LangGraph graph with one skill, the route's declaration with
    rules and example utterances, a ScriptedModel test, and its entry point."""
    try:
        check_name(name)
    except (typer.BadParameter, OrchestratorError) as exc:  # a bad name; a bad routes file
        raise fail(str(exc), 2) from exc
    target = directory / name
    try:
        written = render(name, target)
    except FileExistsError:
        raise fail(f"{target} already exists; choose another name or --dir", 2) from None
    except OSError as exc:
        raise fail(f"cannot write {target}: {exc.strerror or exc}", 2) from None
    console.print(f"wrote {len(written)} files to {target}:")
    for path in written:
        console.print(f"  {path.relative_to(target)}")
    console.print(
        f"next: pip install -e {target} && pytest {target / 'tests'}, then "
        f"orchestrator classifier fit --examples {target / 'examples.csv'}"
    )


def register(app: typer.Typer) -> None:
    """Add the ``new`` group to the root app."""
    app.add_typer(group, name="new")
