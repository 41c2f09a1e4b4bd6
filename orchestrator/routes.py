"""Routes are data: a route is a name and a declaration (:class:`RouteSpec`), never a fixed list.

The API (issue 49), in one place:

* :data:`Route` is a plain ``str`` (a ``NewType``): a route's name, snake_case
  (:data:`ROUTE_NAME`). The core knows one route by name, :data:`FALLBACK` ("not confident
  enough to automate": ask the user or hand the request to a person; it never calls the model
  and has no workflow). Compare routes with ``==``, never ``is``.
* :class:`RouteSpec` (pydantic, frozen) declares a route: ``name``, ``description``,
  ``channels`` (with ``channel_weight``), ``priority``, ``rules`` (the rules file's
  ``[[rule]]`` shape; ``route`` may be left out), ``examples`` (utterances per language), and
  the facts the core needs about a route, as data (:attr:`RouteSpec.wraps_content`,
  :attr:`RouteSpec.holds_threads`, :attr:`RouteSpec.floors`). The routes file
  (``orchestrator/rules/routes.toml``) declares routes in ``[[route]]`` tables with the same
  fields (its rules stay in top-level ``[[rule]]`` tables); a workflow may declare its own
  route from Python (:attr:`route_spec` below).
* A workflow (:class:`orchestrator.core.workflow.Workflow`) names its route in ``route`` (a
  :data:`Route`) and may carry ``route_spec``: the :class:`RouteSpec` of a route the routes
  file does not declare.
* Workflows are plugins: they register through the entry-point group
  :data:`ENTRY_POINT_GROUP` (``moe_orchestrator.workflows``), each entry point naming a
  workflow class, a zero-argument factory or a workflow object; or they are passed to
  ``Orchestrator(client, store, workflows=[...])`` in code.
  :mod:`orchestrator.core.registry` discovers them (``discover_workflows``), merges the
  declared routes (``declared_routes``: the routes file's, then the workflows' own) and checks
  at start-up that every declared route has a workflow and every workflow's route is declared
  (``check_routes``: one clear line, :class:`~orchestrator.exceptions.UserError`);
  ``load_workflows`` does all three for an application, ``plugin_route_specs`` reads the
  plugins' routes without starting them, ``opened_thread_workflow`` opens the workflow of the
  route that holds threads (``chat``, ``handoff``).
* A workflow's optional hooks: ``output`` (a batch's ``output`` column), ``configured`` and
  ``opened`` (settings, stores), ``warm`` (before a batch's first row). Guide:
  ``docs/plugins.md``.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final, NewType

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

#: A route's name: a plain string, snake_case (:data:`ROUTE_NAME`).
Route = NewType("Route", str)

#: Not confident enough to automate: handed to a person or asked to clarify; no workflow.
FALLBACK: Final[Route] = Route("fallback")

#: The pattern of a route's name (snake_case, at most 64 characters).
ROUTE_NAME: Final = r"^[a-z][a-z0-9_]{0,63}$"

#: The entry-point group through which a package registers its workflows.
ENTRY_POINT_GROUP: Final = "moe_orchestrator.workflows"


class RouteSpec(BaseModel):
    """A route's declaration (a ``[[route]]`` table of the routes file, or built in Python).

    Attributes:
        name: The route (snake_case; not ``fallback``, which is chosen by thresholds).
        description: What the route is for (one sentence, shown by ``classifier routes``).
        priority: Breaks ties between equal rule scores (higher wins).
        channels: Channels (``Request.channel``) that hint at this route.
        channel_weight: Evidence a hinted channel gives, in (0, 1).
        rules: Rules for this route, each a mapping of the rules file's ``[[rule]]`` shape
            (``id``, ``weight``, one of ``keywords``/``regex``/``attachments``...); ``route``
            may be left out (it is this route). The classifier validates them when it loads
            the route. Routes of the routes file keep theirs in ``[[rule]]`` tables.
        examples: Example utterances per language code (``{"en": [...], "zh": [...]}``):
            what ``orchestrator classifier fit`` learns the route from.
        wraps_content: A request of this route quotes content under review after its ask (a
            post to moderate): what follows the ask is content, never a request of its own,
            and content rules (``negatable = false``) are never an ask. At most one route.
        holds_threads: A customer's conversation (a request with ``thread_id`` and
            ``customer_id``) stays on this route whatever the classifier says, and its workflow
            resumes handed-off threads (``Orchestrator.resume``). At most one route.
        floors: The accuracy ``orchestrator classifier eval`` expects of this route per
            language on the test split (``{"en": 0.9}``); none when empty.
        titles: What a reply calls a request of this route, per language (``{"en": "a
            spreadsheet report", "zh": "表格报表"}``): another workflow names a part it did
            not run with it (:meth:`title`).
        own_things: A regex (the ``regex`` module, case-insensitive, on the folded text) of
            the things this route's desk deals in (its orders, parcels, accounts...), or None.
            With it, a decision for this route that the fast tier gave less than even odds,
            with no positive decisive rule of the route behind it and none of these things
            named, falls back (``low_confidence``): an unsure guess on a question about
            something else (issue 46 item 9, round 12). An allow-list, not a list of others.
        others: A regex (as ``own_things``) of another business named as the one asked about:
            an addressee (``@handle``) or a kind of business outside this desk's scope (an
            airline, a landlord, an insurer, a utility, a public body...), or None; needs
            ``own_things``. A decision for this route, however sure, whose text names one and
            none of ``own_things`` falls back (``out_of_scope``): a question for that business
            (issue 46 item 9, round 13).
        line: Line of the table in the routes file (set by the loader).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Route = Field(pattern=ROUTE_NAME)
    description: str = ""
    priority: int = 0
    channels: tuple[str, ...] = ()
    channel_weight: float = Field(0.5, gt=0, lt=1)
    rules: tuple[dict[str, Any], ...] = ()
    examples: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    wraps_content: bool = False
    holds_threads: bool = False
    floors: dict[str, float] = Field(default_factory=dict)
    titles: dict[str, str] = Field(default_factory=dict)
    own_things: str | None = None
    others: str | None = None
    line: int | None = Field(default=None, exclude=True)

    @field_validator("name")
    @classmethod
    def _not_fallback(cls, name: str) -> str:
        if name == FALLBACK:
            raise ValueError("fallback is chosen by thresholds and cannot be declared")
        return name

    @field_validator("floors")
    @classmethod
    def _floors_in_range(cls, floors: dict[str, float]) -> dict[str, float]:
        for lang, floor in floors.items():
            if not 0.0 <= floor <= 1.0:
                raise ValueError(f"floor of {lang!r} must be in [0, 1], got {floor}")
        return floors

    @model_validator(mode="after")
    def _rules_are_this_route(self) -> RouteSpec:
        for rule in self.rules:
            if rule.get("route", self.name) != self.name:
                raise ValueError(
                    f"rule {rule.get('id')!r} of route {self.name!r} names route "
                    f"{rule['route']!r}; leave route out or name {self.name!r}"
                )
        if self.others and not self.own_things:
            raise ValueError(
                f"route {self.name!r} declares others but no own_things: name what the desk "
                "deals in, or leave others out"
            )
        return self

    def title(self, lang: str) -> str:
        """What a reply in ``lang`` calls a request of this route: its title in ``lang``,
        else its English one, else its name with spaces (``excel report``)."""
        return self.titles.get(lang) or self.titles.get("en") or self.name.replace("_", " ")

    def rule_tables(self) -> tuple[dict[str, Any], ...]:
        """The rules as ``[[rule]]`` tables, each with ``route`` set to this route."""
        return tuple({**rule, "route": self.name} for rule in self.rules)


def the_route(specs: Iterable[RouteSpec], fact: str) -> Route | None:
    """The route whose declaration sets the boolean ``fact`` (``"wraps_content"``,
    ``"holds_threads"``), or None.

    Raises:
        ValueError: Two routes set it (each of these facts belongs to one route at most).
    """
    found = [spec.name for spec in specs if getattr(spec, fact)]
    if len(found) > 1:
        raise ValueError(f"{fact} is set on routes {', '.join(found)}; set it on one route only")
    return found[0] if found else None
