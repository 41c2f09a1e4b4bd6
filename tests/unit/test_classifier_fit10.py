"""``fit --examples`` round 10 (issue 49 item 2): the nearest-example tier over the user's
examples (:mod:`orchestrator.classifier.fit_semantic`), with a stub encoder: the
``[semantic]`` extra is optional. The anchor and the held-out floor are tested beside the
fitted library route in ``test_classifier_fit_new_routes``."""

from __future__ import annotations

import hashlib
import re

import numpy as np

from orchestrator.classifier import fit_semantic
from orchestrator.classifier.fit_semantic import ExampleIndex, ExampleTier, fit_index
from orchestrator.routes import FALLBACK, Route
from tests.unit.test_classifier_fit_new_routes import _row


class _Words:
    """A stub encoder: a normalised bag of hashed words (what MiniLM is to the tier)."""

    def encode(self, texts, normalize_embeddings=True, **_):
        out = np.zeros((len(texts), 64))
        for i, text in enumerate(texts):
            for w in re.findall(r"[a-z]+", text.lower()):
                out[i, int(hashlib.md5(w.encode()).hexdigest(), 16) % 64] += 1.0
        norm = np.linalg.norm(out, axis=1, keepdims=True)
        return out / np.where(norm == 0, 1.0, norm)


def _index() -> ExampleIndex:
    mine = [
        _row(i, t, r, f"examples/{r}")
        for i, (t, r) in enumerate(
            [
                ("when are your pottery workshops", "events"),
                ("book a place on the pottery workshop", "events"),
                ("is the workshop for kids", "events"),
                ("tell me a joke", FALLBACK),
                ("what is the capital of france", FALLBACK),
                ("目前有什么活动", "events"),
            ]
        )
    ]
    base = [
        _row(i, f"where is my refund for order {i}", "customer_service", "b") for i in range(40)
    ]
    return fit_index(mine, base, [Route("events")], _Words())


def test_the_index_takes_the_route_near_its_examples_and_abstains_otherwise() -> None:
    index = _index()
    enc = _Words()
    assert fit_semantic.FIT.floor <= index.thresholds[Route("events")] < 1.0
    assert Route("events") in index.labels and index.labels.count(FALLBACK) == 2
    assert len(index.labels) == 5  # the Chinese example is left out: the model is English only
    near = enc.encode(["pottery workshop for my kids"])[0]
    assert index.decide(near)[0] == Route("events")
    assert index.decide(enc.encode(["where is my refund"])[0])[0] is None
    assert index.decide(enc.encode(["tell me a joke about the capital"])[0])[0] is None


def test_the_tier_reads_the_file_beside_the_fitted_model(tmp_path, monkeypatch) -> None:
    _index().save(tmp_path / fit_semantic.FILE)
    monkeypatch.setattr(fit_semantic, "load_encoder", _Words)
    tier = fit_semantic.examples_tier(tmp_path / "learned.v2.npz", None)
    assert isinstance(tier, ExampleTier)
    record, decided = tier.consult("can my kids do the pottery workshop")
    assert decided is not None and decided[0] == Route("events") and record.decided
    record, decided = tier.consult("陶艺课什么时候")
    assert decided is None and not record.consulted and "English" in record.note
    assert fit_semantic.examples_tier(tmp_path / "learned.v2.npz", False) is None
    assert fit_semantic.examples_tier(tmp_path / "none" / "learned.v2.npz", None) is None


def test_without_the_extra_the_tier_decides_nothing_and_says_why(tmp_path, monkeypatch) -> None:
    _index().save(tmp_path / fit_semantic.FILE)
    monkeypatch.setattr(fit_semantic, "load_encoder", lambda: None)
    record, decided = ExampleTier(tmp_path / fit_semantic.FILE).consult("pottery workshop")
    assert decided is None and "not installed" in record.note
    (tmp_path / "bad.npz").write_bytes(b"not an index")
    record, decided = ExampleTier(tmp_path / "bad.npz", encoder=_Words()).consult("pottery")
    assert decided is None and "not an examples index" in record.note
