"""Workflows are plugins: found through entry points, checked against the declared routes.

A package registers a workflow in its ``pyproject.toml``::

    [project.entry-points."moe_orchestrator.workflows"]
    faq = "faq_workflow:FaqWorkflow"

The entry point names a :class:`~orchestrator.core.workflow.Workflow` subclass, a zero-argument
factory that returns one, or a workflow object. The built-in three register the same way in the
project's own ``pyproject.toml``; the core never imports them (an import-linter contract).

Start-up (:func:`load_workflows`): the workflows found, the routes declared (the routes file's
``[[route]]`` tables, then each workflow's own ``route_spec``), and :func:`check_routes`: a
declared route without a workflow, or a workflow whose route is not declared, is refused with
one line that names it and says how to fix it.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from importlib.metadata import EntryPoint, entry_points
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from orchestrator.config import Settings
from orchestrator.core.workflow import Workflow
from orchestrator.exceptions import UserError
from orchestrator.routes import ENTRY_POINT_GROUP, FALLBACK, Route, RouteSpec, the_route


def discover_workflows(group: str = ENTRY_POINT_GROUP) -> list[Workflow[Any, Any]]:
    """One workflow per entry point of ``group``, in the order the installed packages list
    them.

    Raises:
        UserError: An entry point does not load, or what it names is not a workflow (the
            message names the entry point and its value).
    """
    return [_load(ep) for ep in entry_points(group=group)]


def _load(ep: EntryPoint) -> Workflow[Any, Any]:
    try:
        target = ep.load()
        workflow = target() if callable(target) and not isinstance(target, Workflow) else target
    except Exception as exc:  # any import or construction error of a plugin, named in one line
        raise UserError(
            f"workflow entry point {ep.name} = {ep.value!r} failed to load: {_one_line(exc)}"
        ) from exc
    if not isinstance(workflow, Workflow):
        raise UserError(
            f"workflow entry point {ep.name} = {ep.value!r} gives a {type(workflow).__name__}, "
            "not an orchestrator.core.Workflow; name a Workflow subclass or a factory of one"
        )
    return workflow


def _one_line(exc: Exception) -> str:
    """``exc`` as one line: a pydantic error (a bad ``RouteSpec`` field) by its first problem,
    without pydantic's links; any other error's message with its line breaks folded."""
    if isinstance(exc, ValidationError):
        first = exc.errors(include_url=False)[0]
        field = ".".join(str(part) for part in first["loc"]) or "value"
        more = f" (and {exc.error_count() - 1} more)" if exc.error_count() > 1 else ""
        return f"{exc.title}: {field}: {first['msg']}{more}"
    return f"{type(exc).__name__}: {' '.join(str(exc).split())}"


def file_routes(rules_path: Path | str | None = None) -> tuple[RouteSpec, ...]:
    """The routes declared in the routes file (``[[route]]``): ``rules_path``, or the packaged
    ``routes.toml``.

    Raises:
        RulesError: The file is missing or invalid (file:line: reason).
    """
    from orchestrator.classifier.core import default_rules_path
    from orchestrator.classifier.loader import load_rules

    rules, _ = load_rules(rules_path or default_rules_path())
    return rules.route


def declared_routes(
    workflows: Iterable[Workflow[Any, Any]], file_specs: Iterable[RouteSpec]
) -> dict[Route, RouteSpec]:
    """Every declared route by name: those of the routes file, then the routes that workflows
    declare in Python (``route_spec``), in that order.

    Raises:
        UserError: A workflow declares a route the routes file declares too, or two workflows
            declare the same route.
    """
    routes = {spec.name: spec for spec in file_specs}
    by = dict.fromkeys(routes, "the routes file")  # who declared each route
    for workflow in workflows:
        spec = getattr(workflow, "route_spec", None)
        if spec is None:
            continue
        if spec.name in routes:
            raise UserError(
                f"route {spec.name!r} of workflow {workflow.name} is declared by "
                f"{by[spec.name]} too; declare each route once"
            )
        routes[spec.name], by[spec.name] = spec, f"workflow {workflow.name}"
    return routes


def check_declared(
    routes: Mapping[Route, RouteSpec], workflows: Iterable[Workflow[Any, Any]]
) -> None:
    """Refuse a workflow whose route is not declared, and two workflows of one route (an
    ``Orchestrator`` built in code may leave declared routes without a workflow: their
    requests end ``no_workflow``).

    Raises:
        UserError: One line naming the workflow and the fix.
    """
    seen: dict[Route, str] = {}
    for workflow in workflows:
        route = workflow.route
        if route == FALLBACK or route not in routes:
            known = ", ".join(routes) or "none"
            raise UserError(
                f"workflow {workflow.name} is for route {route!r}, which is not declared "
                f"(declared: {known}); add a [[route]] table to the routes file or give the "
                "workflow a route_spec"
            )
        if route in seen:
            raise UserError(
                f"workflows {seen[route]} and {workflow.name} are both for route {route!r}; "
                "install one of them"
            )
        seen[route] = workflow.name


def check_routes(
    routes: Mapping[Route, RouteSpec], workflows: Iterable[Workflow[Any, Any]]
) -> None:
    """The start-up check: :func:`check_declared`, and every declared route has a workflow.

    Raises:
        UserError: One line naming the route or workflow and the fix.
    """
    workflows = list(workflows)
    check_declared(routes, workflows)
    served = {w.route for w in workflows}
    missing = [name for name in routes if name not in served]
    if missing:
        raise UserError(
            f"route {missing[0]!r} is declared but no workflow is installed for it; install a "
            f"package whose {ENTRY_POINT_GROUP!r} entry point serves it, or remove its "
            "[[route]] table"
        )


def load_workflows(
    rules_path: Path | str | None = None, extra: Iterable[Workflow[Any, Any]] = ()
) -> list[Workflow[Any, Any]]:
    """The application's workflows at start-up: those registered through entry points, plus
    ``extra`` ones passed in code, checked against the declared routes (:func:`check_routes`).

    Raises:
        UserError: A plugin fails to load, or the routes and workflows do not match.
        RulesError: The routes file is invalid.
    """
    workflows = [*discover_workflows(), *extra]
    check_routes(declared_routes(workflows, file_routes(rules_path)), workflows)
    return workflows


def plugin_route_specs(group: str = ENTRY_POINT_GROUP) -> tuple[RouteSpec, ...]:
    """The routes the installed workflows declare themselves (their ``route_spec``), read from
    what each entry point names (a workflow class, or a factory carrying ``route_spec``) without
    starting any workflow: for the commands that need the routes but run no workflow
    (``classifier fit`` and ``eval``, listings). A plugin that does not load is skipped here;
    :func:`load_workflows` reports it at start-up."""
    specs: list[RouteSpec] = []
    for ep in entry_points(group=group):
        spec = getattr(_target(ep), "route_spec", None)
        if isinstance(spec, RouteSpec) and all(s.name != spec.name for s in specs):
            specs.append(spec)
    return tuple(specs)


def routes_in_use(rules_path: Path | str | None = None) -> tuple[Route, ...]:
    """The declared routes' names, without starting any workflow: those of the routes file,
    then those the installed workflows declare (:func:`plugin_route_specs`), for the views that
    list routes (``classifier eval``, telemetry tables, the UI)."""
    names = [spec.name for spec in file_routes(rules_path)]
    names += [spec.name for spec in plugin_route_specs() if spec.name not in names]
    return tuple(names)


@asynccontextmanager
async def opened_thread_workflow(
    settings: Settings, rules_path: Path | str | None = None
) -> AsyncIterator[Workflow[Any, Any]]:
    """The installed workflow of the route that holds conversations (``holds_threads``:
    customer service), opened on ``settings``' stores for the block (``Workflow.opened``):
    what ``chat``, ``handoff`` and ``storage`` work with. Only that workflow is started.

    Raises:
        UserError: No declared route holds threads, or no installed workflow serves it; a
            plugin fails to load; a store cannot be opened.
    """
    held = the_route([*file_routes(rules_path), *plugin_route_specs()], "holds_threads")
    for ep in entry_points(group=ENTRY_POINT_GROUP) if held is not None else ():
        if getattr(_target(ep), "route", None) == held:
            async with _load(ep).opened(settings) as opened:
                yield opened
            return
    raise UserError(
        "no installed workflow holds conversations: declare holds_threads = true on a route "
        "and install its workflow (the built-in customer_service does both)"
    )


def _target(ep: EntryPoint) -> Any:
    """What ``ep`` names, loaded (a class, factory or object); None when it does not load."""
    try:
        return ep.load()
    except Exception:  # reported by _load when this entry point is used
        return None
