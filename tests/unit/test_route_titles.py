"""What a reply calls a part of a compound request that another workflow would run: the route's
own declaration says it (``titles``), so no workflow names another's route in its code."""

from __future__ import annotations

import pytest

from orchestrator.core.registry import file_routes
from orchestrator.routes import RouteSpec
from workflows.customer_service.notes import reply_notes, route_title


def test_a_declared_title_is_used_per_language() -> None:
    spec = RouteSpec(name="faq_bot", titles={"en": "a question about our FAQ", "zh": "常见问题"})
    assert (spec.title("en"), spec.title("zh")) == ("a question about our FAQ", "常见问题")
    assert spec.title("fr") == "a question about our FAQ"  # English when the language has none
    assert RouteSpec(name="faq_bot").title("zh") == "faq bot"  # the name when none is declared


@pytest.mark.parametrize("spec", file_routes(), ids=lambda s: s.name)
def test_every_packaged_route_has_a_title_in_both_languages(spec: RouteSpec) -> None:
    assert spec.titles.keys() >= {"en", "zh"}
    assert route_title(spec.name, "zh") == spec.titles["zh"]


def test_a_compound_note_names_the_part_by_its_title() -> None:
    state = {"route": "customer_service", "secondary_routes": ["excel_report", "faq_bot"]}
    en = reply_notes(state, "en_US")  # type: ignore[arg-type]
    zh = reply_notes(state, "zh_CN")  # type: ignore[arg-type]
    assert [n.split(" was not done")[0] for n in en] == [
        "The part of your request about a spreadsheet report",
        "The part of your request about faq bot",
    ]
    assert "表格报表" in zh[0] and "excel_report" not in "".join(zh)
