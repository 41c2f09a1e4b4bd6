"""One error tree: every exception class of the project is an OrchestratorError, drawn in place.

The tree is the one in :mod:`orchestrator.exceptions`' docstring; these tests parse it, so the
drawing cannot drift from the code.
"""

from __future__ import annotations

import builtins
import importlib
import inspect
import pkgutil
import re
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import orchestrator.exceptions
from orchestrator.exceptions import (
    DataFileError,
    OrchestratorError,
    ServerUnavailableError,
    UnknownRouteError,
    UserError,
)

PACKAGES = ("orchestrator", "serving", "skills", "workflows")
#: Modules that are scripts, not importable libraries: ``__main__`` runs the CLI on import, and
#: the Alembic ``env`` script needs Alembic's migration context.
SCRIPTS = re.compile(r"(^|\.)__main__$|^orchestrator\.telemetry\.migrations\.env$")


def _project_exception_classes() -> dict[str, type[BaseException]]:
    """``{qualified name: class}`` of every exception class defined in the four packages."""
    found: dict[str, type[BaseException]] = {}
    failed: list[str] = []
    for name in PACKAGES:
        package = importlib.import_module(name)
        modules = [name] + [
            info.name
            for info in pkgutil.walk_packages(package.__path__, f"{name}.", onerror=failed.append)
            if not SCRIPTS.search(info.name)
        ]
        for module_name in modules:
            module = importlib.import_module(module_name)
            for obj in vars(module).values():
                if (
                    inspect.isclass(obj)
                    and issubclass(obj, BaseException)
                    and obj.__module__.split(".")[0] in PACKAGES
                ):
                    found[f"{obj.__module__}.{obj.__qualname__}"] = obj
    assert not failed, f"packages that could not be walked: {failed}"
    return found


@dataclass
class Node:
    """One class as drawn: its parent, the built-ins in parentheses and the ``[module]``."""

    name: str
    parent: str | None
    builtins: tuple[str, ...]
    module: str = "orchestrator.exceptions"
    children: list[str] = field(default_factory=list)


def _drawn_tree() -> dict[str, Node]:
    doc = orchestrator.exceptions.__doc__ or ""
    block = doc.split("::\n\n", 1)[1].split("\n\n", 1)[0]
    nodes: dict[str, Node] = {}
    stack: list[str] = []  # names by depth
    last: Node | None = None
    for line in block.splitlines():
        drawn = re.match(r"^ *(?:[│ ]   )*(?:[├└]── )?([A-Z]\w+)(?: \(([\w, ]+)\))?", line)
        if drawn:
            depth = (drawn.start(1) - 4) // 4  # the root's name starts in column 4
            name = drawn.group(1)
            assert name not in nodes, f"{name} is drawn twice"
            del stack[depth:]
            parent = stack[-1] if stack else None
            bases = tuple(b.strip() for b in (drawn.group(2) or "").split(",") if b.strip())
            last = nodes[name] = Node(name, parent, bases)
            if parent is not None:
                nodes[parent].children.append(name)
            stack.append(name)
        module = re.search(r"\[([\w.]+)\]", line)
        if module and last is not None:
            last.module = module.group(1)
    return nodes


@pytest.fixture(scope="module")
def classes() -> dict[str, type[BaseException]]:
    return _project_exception_classes()


@pytest.fixture(scope="module")
def tree() -> dict[str, Node]:
    return _drawn_tree()


def test_the_walk_finds_the_known_errors(classes: dict[str, type[BaseException]]) -> None:
    names = {cls.__name__ for cls in classes.values()}
    assert {"OrchestratorError", "RulesError", "LexiconError", "PolicyError"} <= names
    assert {"ServingError", "CheckpointError", "SpreadsheetError"} <= names


def test_every_project_exception_is_an_orchestrator_error(
    classes: dict[str, type[BaseException]],
) -> None:
    outside = sorted(
        name for name, cls in classes.items() if not issubclass(cls, OrchestratorError)
    )
    assert outside == [], f"not under OrchestratorError: {outside}"


def test_every_project_exception_is_drawn_where_it_is_defined(
    classes: dict[str, type[BaseException]], tree: dict[str, Node]
) -> None:
    for qualified, cls in classes.items():
        assert cls.__name__ in tree, f"{qualified} is missing from orchestrator.exceptions' tree"
        assert tree[cls.__name__].module == cls.__module__, qualified
    drawn_only = set(tree) - {cls.__name__ for cls in classes.values()}
    assert not drawn_only, f"drawn but not defined anywhere: {sorted(drawn_only)}"


def test_the_drawing_matches_the_class_hierarchy(
    classes: dict[str, type[BaseException]], tree: dict[str, Node]
) -> None:
    by_name = {cls.__name__: cls for cls in classes.values()}
    roots = [node.name for node in tree.values() if node.parent is None]
    assert roots == ["OrchestratorError"]
    for node in tree.values():
        cls = by_name.get(node.name)
        assert cls is not None, f"{node.name} is drawn but not defined in the project"
        if node.parent is not None:
            assert by_name[node.parent] in cls.__bases__, f"{node.name} under {node.parent}"
        shown = {getattr(builtins, b) for b in node.builtins}
        direct = {b for b in cls.__bases__ if b.__module__ == "builtins"} - {Exception}
        assert shown == direct, f"{node.name}: drawn {node.builtins}, bases {cls.__bases__}"


def test_usage_errors_are_value_errors_and_runtime_errors_are_not(
    classes: dict[str, type[BaseException]],
) -> None:
    for cls in classes.values():
        if issubclass(cls, UserError):
            assert issubclass(cls, ValueError), cls
    assert issubclass(UnknownRouteError, KeyError)
    assert issubclass(ServerUnavailableError, ConnectionError)
    assert not issubclass(ServerUnavailableError, UserError)


@pytest.mark.parametrize(
    ("line", "message"),
    [(7, "rules.toml:7: weight: too big"), (None, "rules.toml: weight: too big")],
)
def test_data_file_error_message_is_file_line_reason(line: int | None, message: str) -> None:
    err = DataFileError("rules.toml", line, "weight: too big")
    assert str(err) == message
    assert err.path == Path("rules.toml") and err.line == line and err.reason == "weight: too big"
    assert isinstance(err, UserError) and isinstance(err, ValueError)


def test_the_data_file_errors_are_thin_subclasses_of_one_base() -> None:
    from orchestrator.classifier.loader import RulesError
    from workflows.content_moderation.lexicon import LexiconError
    from workflows.content_moderation.policy import PolicyError

    for cls in (RulesError, LexiconError, PolicyError):
        assert cls.__bases__ == (DataFileError,)
        assert str(cls("x.toml", 3, "bad")) == "x.toml:3: bad"
    assert not issubclass(PolicyError, LexiconError)


def test_serving_errors_are_orchestrator_errors() -> None:
    from serving.errors import CheckpointError, ServerStartError, ServingError

    err = CheckpointError("/ckpt", "config.json is missing")
    assert isinstance(err, OrchestratorError) and isinstance(err, ValueError)
    assert str(err) == "checkpoint /ckpt: config.json is missing"
    assert issubclass(ServerStartError, RuntimeError) and issubclass(ServingError, Exception)
