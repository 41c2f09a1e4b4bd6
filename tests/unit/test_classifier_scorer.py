"""The learned tier's plain-Python scorer agrees with the numpy scorer on every labelled request.

The per-request path (:class:`orchestrator.classifier.learned.FastScorer`) sums precomputed,
fixed-point packed weight sums per token; the reference is :meth:`LearnedModel.logits` (numpy,
float64) over the bag of :func:`learned.features`. Both must give the same logits (to 1e-6)
and rule share, for the combined and the text-only (fast tier) weights.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from orchestrator.classifier import RuleClassifier, learned
from orchestrator.classifier.labelled_set import LabelledRequest, load_split
from orchestrator.classifier.learned import FastScorer, LearnedModel
from orchestrator.classifier.learned_fit import train
from orchestrator.classifier.parts import framing, scan
from orchestrator.config import DEFAULT_DATA_DIR
from orchestrator.request import Request
from orchestrator.routes import Route

pytestmark = pytest.mark.skipif(
    not (DEFAULT_DATA_DIR / "customer_service").is_dir(), reason="labelled data not present"
)

#: the classes of the packaged model, in column order
CLASSES = tuple(map(Route, ("customer_service", "content_moderation", "excel_report", "fallback")))


@pytest.fixture(scope="module")
def clf() -> RuleClassifier:
    c = RuleClassifier(reload_interval=None)
    assert c.model is not None, "the packaged learned tier is missing"
    return c


@pytest.fixture(scope="module")
def rows() -> list[LabelledRequest]:
    return load_split(DEFAULT_DATA_DIR, "all", cap=0)


ODD = [
    "Would you let this comment through: the new update broke my save files again",
    "帮我判断一下这句话能不能留在评论区：今天的快递又晚到了两天",
    "Don't moderate anything, I only need to track my parcel",
    "refund refund refund order orders ordered #A1234 退款退款",
    "x" * 5000 + " please summarise the attached sheet " + "订单" * 400,
    "a b c d e : 1",
    "🙂🙂🙂",
]


def test_logits_equal_numpy_on_every_labelled_request(
    clf: RuleClassifier, rows: list[LabelledRequest]
) -> None:
    """Same logits and rule share as numpy (both weight sets), and fast() = text-only score."""
    model = clf.model
    assert model is not None
    sc = model.scorer()
    limit = clf._state.compiled.max_scan_chars
    reqs = [r.to_request() for r in rows] + [Request(text=t) for t in ODD]
    worst = 0.0
    for req in reqs:
        norm = scan(req.text, limit)[0]
        c = clf.classify(req)
        rules = c.tier("rules")
        kw = {
            "attachments": tuple(a.extension for a in req.attachments),
            "channel": "Web",
            "rule_ids": tuple(s.rule_id for s in c.signals if not s.negative),
            "rule_scores": rules.scores if rules is not None and rules.consulted else {},
        }
        feats = learned.features(norm, **kw)  # type: ignore[arg-type]
        for combined in (True, False):
            ref, ref_share = model.logits(feats, combined=combined)
            got, share = sc.score(norm, combined=combined, **kw)  # type: ignore[arg-type]
            worst = max(worst, float(np.abs(np.asarray(got) - ref).max()))
            assert share == pytest.approx(ref_share, abs=1e-6), norm[:80]
        fast, _ = sc.fast(norm, attachments=kw["attachments"], channel="Web")  # type: ignore[arg-type]
        text_only, _ = sc.score(norm, combined=False, **kw)  # type: ignore[arg-type]
        z = np.exp(np.asarray(text_only) - max(text_only))
        assert fast == pytest.approx((z / z.sum()).tolist(), abs=1e-12)  # softmax of the logits
        ref_fast = model.probabilities(feats, combined=False)
        assert fast == pytest.approx(ref_fast.tolist(), abs=1e-6), norm[:80]
        logits = sc.logits_fast(norm, attachments=kw["attachments"], channel="Web")  # type: ignore[arg-type]
        assert logits == pytest.approx(text_only, abs=1e-12)
    assert len(reqs) > 2000
    assert worst <= 1e-6, f"largest logit difference {worst}"


def test_classify_uses_the_same_probabilities(
    clf: RuleClassifier, rows: list[LabelledRequest]
) -> None:
    model = clf.model
    assert model is not None
    consulted = 0
    for row in rows[::7]:
        if framing(row.text) is not None:
            continue  # its framing may be read alone and decide (another text's probabilities)
        req = row.to_request()
        feats, _, _ = clf.evidence(req)
        out = clf.classify(req)
        tier = out.tier("learned")
        assert tier is not None
        if not tier.consulted:
            continue
        consulted += 1
        probs = model.probabilities(feats)
        for k, route in enumerate(CLASSES):
            assert tier.scores[route] == pytest.approx(round(float(probs[k]), 4), abs=1.01e-4)
    assert consulted > 100


def test_fast_tier_cues_send_negation_and_compound_requests_on() -> None:
    assert learned.cues("don't moderate this") & learned.NEGATION
    assert learned.cues("不要审核，帮我退款") & learned.NEGATION
    assert learned.cues("refund me and summarise the sheet") & learned.COMPOUND
    assert learned.cues("帮我退款，另外把表格汇总一下") & learned.COMPOUND
    stops = learned.NEGATION | learned.COMPOUND | learned.SHORT
    assert learned.cues("where is my parcel") & stops == 0
    assert learned.cues("where is my parcel") & learned.FEW  # 4 words: the rules' tie is checked
    assert not learned.cues("where is my parcel, it was due on monday") & learned.FEW
    assert learned.cues("退款表格") & learned.FEW
    assert not learned.cues("我的快递三天了还没有到") & learned.FEW  # 11 characters


def test_rows_keep_sign_and_magnitude() -> None:
    """Random weights, including the extremes of the exact range, give the numpy logits."""
    rng = np.random.default_rng(7)
    vocab = {f"w{i}": i for i in range(300)}
    w = rng.normal(0, 3, size=(300, len(CLASSES)))
    w[0] = [-255.9, 255.9, 0.0, -1e-13]
    model = LearnedModel(
        vocab=vocab,
        w_text=w,
        b_text=np.zeros(4),
        w_comb=w,
        b_comb=np.array([1.0, -2, 0, 3]),
        meta={"classes": list(CLASSES)},
    )
    sc = FastScorer(model)
    for n in (1, 2, 17, 300):
        words = [f"w{i}" for i in rng.choice(300, size=n, replace=False)]
        ref, _ = model.logits(["w" + t for t in words])
        got, _ = sc.score(" ".join(words) + " unknown")
        assert np.abs(np.asarray(got) - ref).max() <= 1e-8 * max(1.0, float(np.abs(ref).max()))
    # a full window of repeats of the extreme row
    text = " ".join(["w0"] * 400)
    ref, _ = model.logits(["w" + t for t in learned.window(text).split()])
    got, _ = sc.score(text)
    assert np.abs(np.asarray(got) - ref).max() <= 1e-6 * float(np.abs(ref).max())
    too_big = LearnedModel(
        vocab={"a": 0},
        w_text=np.full((1, 4), 300.0),
        b_text=np.zeros(4),
        w_comb=np.full((1, 4), 300.0),
        b_comb=np.zeros(4),
        meta={"classes": list(CLASSES)},
    )
    with pytest.raises(ValueError, match="exact range"):
        FastScorer(too_big)


def test_empty_request_gives_the_bias() -> None:
    docs = [["wa"], ["wb"], ["wc"], ["wd"]] * 3
    labels = [*CLASSES] * 3
    model = train(docs, labels, min_count=1, max_iter=20)
    got, share = model.scorer().score("nothing known")
    assert share == 0.0
    assert got == pytest.approx(model.b_comb.astype(float).tolist(), abs=1e-12)
    assert math.isfinite(sum(got))
    assert Route("fallback") in CLASSES
