"""The embedding-router baseline's pure helpers (no model is loaded)."""

from __future__ import annotations

import numpy as np

from benchmarks.classifier_fit_embedding_baseline import (
    CachedEncoder,
    HeldRow,
    _sum,
    held_out_figures,
)
from orchestrator.routes import Route


def test_held_out_figures_count_phrasings_chinese_near_misses_and_where_misses_went() -> None:
    new, cs, fb = Route("gift_cards"), Route("customer_service"), Route("fallback")
    rows = [
        HeldRow("balance on my card", new, "en"),
        HeldRow("卡里还剩多少钱", new, "zh"),
        HeldRow("禮券能用嗎", new, "zh"),
        HeldRow("gift ideas for a teenager", fb, "en"),
        HeldRow("微信红包怎么发", fb, "zh"),
    ]
    got = [new, cs, new, fb, new]
    assert held_out_figures(rows, got) == {
        "phrasings": "2/3",
        "zh": "1/2",
        "near_misses": "1/2",
        "misses": "customer_service 1",
    }
    assert held_out_figures(rows[:1], [new])["misses"] == "none"


def test_sum_adds_ratios() -> None:
    assert _sum(["1/2", "3/4", "0/5"]) == "4/11"


class _Model:
    def __init__(self) -> None:
        self.seen: list[str] = []

    def encode(self, texts: list[str], **_: object) -> np.ndarray:
        self.seen += texts
        return np.array([[float(len(t)), 1.0] for t in texts], dtype=np.float32)


def test_cached_encoder_encodes_each_distinct_text_once_and_keeps_order() -> None:
    model = _Model()
    enc = CachedEncoder(model)
    first = enc.encode(["ab", "c", "ab"])
    second = enc.encode(["c", "def"])
    assert model.seen == ["ab", "c", "def"]
    assert first[:, 0].tolist() == [2.0, 1.0, 2.0]
    assert second[:, 0].tolist() == [1.0, 3.0]
