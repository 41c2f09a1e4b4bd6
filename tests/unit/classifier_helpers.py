"""Shared checks for the classifier's unit tests (issue 48: one copy, not one per file).

The ``clf`` fixture (the shipped classifier) lives in ``tests/unit/conftest.py``.
"""

from __future__ import annotations

from collections.abc import Callable

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.routes import Route
from tests.unit.case_tables import cases


def routed_to(route: Route, *texts: str) -> list[tuple[str, Route]]:
    """``[(text, route), ...]``: each of ``texts`` with the one route it should get."""
    return [(text, route) for text in texts]


def share_right(clf: RuleClassifier, cases: list[tuple[str, Route]]) -> tuple[float, list]:
    """``(share, wrong)``: the share (0..1) of ``cases`` routed to their wanted route, and each
    miss as ``(text, wanted route, got route, reason)``."""
    wrong = []
    for text, want in cases:
        got = clf.classify_text(text)
        if got.route != want:
            wrong.append((text, want, got.route, got.reason))
    return 1 - len(wrong) / len(cases), wrong


def assert_share(clf: RuleClassifier, cases: list[tuple[str, Route]], floor: float) -> None:
    """Fail, listing the misses, unless at least ``floor`` (0..1) of ``cases`` route right."""
    share, wrong = share_right(clf, cases)
    assert share >= floor, wrong


def share_test(cases: list[tuple[str, Route]], floor: float) -> Callable[[RuleClassifier], None]:
    """A test, bound as ``test_name = share_test(CASES, 0.9)``, that at least ``floor`` (0..1)
    of ``cases`` route right on the ``clf`` fixture; pytest names it by the module attribute."""

    def test(clf: RuleClassifier) -> None:
        assert_share(clf, cases, floor)

    return test


def share_tests(file: str) -> Callable[..., None]:
    """A test, bound as ``test_each_kind_routes_right = share_tests("x.toml")``, with one case
    per ``[[shares]]`` table of ``tests/data/cases/<file>`` (``name``, ``route``, ``floor``,
    ``texts``): at least ``floor`` (0..1) of ``texts`` route to ``route`` on the ``clf``
    fixture. pytest names each case by the table's ``name``."""
    kinds = [
        pytest.param(routed_to(Route(t["route"]), *t["texts"]), t["floor"], id=t["name"])
        for t in cases(file, "shares")
    ]

    @pytest.mark.parametrize(("kind", "floor"), kinds)
    def test(clf: RuleClassifier, kind: list[tuple[str, Route]], floor: float) -> None:
        assert_share(clf, kind, floor)

    return test
