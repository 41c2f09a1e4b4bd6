"""Rounds 15-16's study rows (issue 46 item 9, not in the labelled set): whose service thing."""

from __future__ import annotations

from benchmarks.classifier_owner_rows import (
    MENTIONED_ITEMS,
    MENTIONED_SHAPES,
    NO_PARTY_SHAPES,
    OTHER_BUSINESSES,
    OWNER_SHAPES,
    PER_SHAPE,
    SIDES,
    THE_SHOP,
    UNNAMED_WORDS,
    owner_rows,
)
from orchestrator.routes import Route


def test_every_shape_is_filled_on_its_sides_by_who_is_named() -> None:
    """Every writing shape comes filled with another business (fallback), with the shop itself,
    with no party at all and with another business only mentioned beside a thing bought here
    (customer service), in English and Chinese, tune only; the side is told by who is named,
    and a service word may sit on several sides."""
    rows = list(owner_rows())
    other, own, unnamed, mentioned = (
        [r for r in rows if r.source.startswith(f"{s}/")] for s in SIDES
    )
    assert len(other) + len(own) + len(unnamed) + len(mentioned) == len(rows)
    sides = (
        (other, "fallback", OWNER_SHAPES, OTHER_BUSINESSES),
        (own, "customer_service", OWNER_SHAPES, THE_SHOP),
        (
            unnamed,
            "customer_service",
            NO_PARTY_SHAPES,
            {k: {w: () for w in v} for k, v in UNNAMED_WORDS.items()},
        ),
        (
            mentioned,
            "customer_service",
            MENTIONED_SHAPES,
            {k: {w: () for w in v} for k, v in MENTIONED_ITEMS.items()},
        ),
    )
    for side, route, shapes_of, table in sides:
        assert {r.route for r in side} == {Route(route)} and {r.split for r in side} == {"tune"}
        for lang, shapes in shapes_of.items():
            texts = [r.text.lower() for r in side if r.lang == lang]
            assert len(shapes) * 8 <= len(texts) <= len(shapes) * PER_SHAPE
            assert all(any(n.lower() in t for n in table[lang]) for t in texts), lang
    assert [len(s) for s in OWNER_SHAPES.values()] == [len(s) for s in NO_PARTY_SHAPES.values()]
    assert not any("{who}" in s for shapes in NO_PARTY_SHAPES.values() for s in shapes)
    assert len({r.id for r in rows}) == len(rows)
    assert not {r.text for r in other} & {r.text for r in [*own, *unnamed, *mentioned]}
    words = {w for t in OTHER_BUSINESSES["en"].values() for w in t}
    assert words & {w for t in THE_SHOP["en"].values() for w in t}  # refund, fee...
