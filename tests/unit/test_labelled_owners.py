"""Round 15's study rows (issue 46 item 9, not in the labelled set): whose service thing."""

from __future__ import annotations

from benchmarks.classifier_owner_rows import (
    OTHER_BUSINESSES,
    OWNER_SHAPES,
    PER_SHAPE,
    THE_SHOP,
    owner_rows,
)
from orchestrator.routes import Route


def test_every_shape_is_filled_on_both_sides_by_who_is_named() -> None:
    """Every writing shape comes filled with another business (fallback) and with the shop
    itself (customer service), in English and Chinese, tune only; the side is told by who is
    named, and a service word may sit on both sides."""
    rows = list(owner_rows())
    other = [r for r in rows if r.source.startswith("oos_service_other/")]
    own = [r for r in rows if r.source.startswith("cs_service_own/")]
    sides = ((other, "fallback", OTHER_BUSINESSES), (own, "customer_service", THE_SHOP))
    for side, route, table in sides:
        assert {r.route for r in side} == {Route(route)} and {r.split for r in side} == {"tune"}
        for lang, shapes in OWNER_SHAPES.items():
            texts = [r.text.lower() for r in side if r.lang == lang]
            assert len(texts) == len(shapes) * PER_SHAPE["other" if side is other else "own"]
            assert all(any(n.lower() in t for n in table[lang]) for t in texts), lang
    assert len({r.id for r in rows}) == len(rows)
    assert not {r.text for r in other} & {r.text for r in own}
    words = {w for t in OTHER_BUSINESSES["en"].values() for w in t}
    assert words & {w for t in THE_SHOP["en"].values() for w in t}  # refund, fee...
