"""The write gate's plain-form allow-list (gate10, ask_plain.py): every variant of a non-plain
form (exclusion, a later time, advice, someone else's wish, information about a write, a past
ask reported, preventing a write, cancelling something else, a meta-request) is asked back;
every plain ask is still offered for confirmation. One test over the case file."""

from __future__ import annotations

import tomllib
from pathlib import Path

from workflows.customer_service.asks import doubt, read_asks

_CASES = Path(__file__).resolve().parents[1] / "data/cases/cs_plain_asks10.toml"


def test_plain_forms_confirmed_and_others_asked_back() -> None:
    cases = tomllib.loads(_CASES.read_text(encoding="utf-8"))
    leaked = [
        (kind, text)
        for kind, texts in cases["kinds"].items()
        for text in texts
        if read_asks(text).writes and doubt(text) is None
    ]
    leaked += [("unclear", t) for t in cases["unclear"]["texts"] if read_asks(t).writes]
    plain = cases["plain"]["texts"]
    refused = [t for t in plain if not read_asks(t).writes or doubt(t) is not None]
    assert len(cases["kinds"]) == 9 and all(len(v) >= 15 for v in cases["kinds"].values())
    assert leaked == [] and refused == [], (leaked, refused)
    assert doubt("Please cancel the warranty for ORD-102091") == "unusual"  # no word list has it
