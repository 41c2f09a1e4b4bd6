"""The training rows of issue 46 item 9 (benchmarks/classifier_product_rows.py): stable,
split by family, no row the held-out round-4 families hold, and both routes in both languages."""

from __future__ import annotations

from collections import Counter

from benchmarks.classifier_oos_families import families
from benchmarks.classifier_product_rows import (
    CUSTOMER_ASKS,
    OUT_OF_SCOPE,
    PER_TEMPLATE,
    fill,
    product_rows,
)
from orchestrator.classifier.labelled_set import family_split
from orchestrator.routes import Route


def _test4_texts() -> set[str]:
    return {t for _, _, texts in families("test_4").values() for t in texts}


def test_rows_are_the_same_on_every_build() -> None:
    first = [(r.id, r.text, r.split) for r in product_rows()]
    assert first == [(r.id, r.text, r.split) for r in product_rows()]


def test_a_family_lies_on_one_side_of_the_split_and_both_sides_are_used() -> None:
    sides: dict[str, set[str]] = {}
    for row in product_rows():
        sides.setdefault(row.family, set()).add(row.split)
        assert row.split == family_split(row.family)
    assert all(len(s) == 1 for s in sides.values())
    assert {next(iter(s)) for s in sides.values()} == {"tune", "test"}


def test_both_routes_in_both_languages_with_many_rows() -> None:
    counts = Counter((r.route, r.lang) for r in product_rows())
    for route in (Route("fallback"), Route("customer_service")):
        for lang in ("en", "zh"):
            assert counts[(route, lang)] >= 300, (route, lang, counts[(route, lang)])


def test_every_template_is_filled_without_a_left_over_slot() -> None:
    for table in (OUT_OF_SCOPE, CUSTOMER_ASKS):
        for lang, templates in table.items():
            for t, template in enumerate(templates):
                texts = list(fill(template, lang, t))
                assert 1 <= len(texts) <= PER_TEMPLATE
                assert len(set(texts)) == len(texts)
                assert not any("{" in x or "}" in x for x in texts), template


def test_no_row_is_a_held_out_round_4_text() -> None:
    held = _test4_texts()
    assert len(held) >= 80
    assert not held & {r.text for r in product_rows()}
