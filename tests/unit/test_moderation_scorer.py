"""The learned risk scorer's file: the same data and seed give the same bytes and version; a
saved file loads back with the same predictions; the fit refuses the test split; English
terms that name a harm are mentions in sentences that condemn them."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tests.unit.moderation_data import DATA
from workflows.content_moderation.dataset import (
    LabelledPost,
    load_moderation_set,
    load_ordinary_set,
)
from workflows.content_moderation.fitting import fit_scorer
from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.scorer import (
    RiskScorer,
    ScorerError,
    load_scorer,
    save_scorer,
)
from workflows.content_moderation.service import moderate_lexicon_only
from workflows.content_moderation.verdict import Decision


def _sample(split: str = "tune") -> tuple[list[LabelledPost], list[LabelledPost]]:
    """Every 16th labelled post of ``split`` (both languages, all three sources) and every
    40th ordinary sentence: small enough to fit in seconds, with both classes everywhere."""
    if not (DATA / "moderation").is_dir() or not (DATA / "customer_service").is_dir():
        pytest.skip("../shared/data is not beside the repository")
    posts = load_moderation_set(DATA, split)  # type: ignore[arg-type]
    hate = [p for p in posts if p.truth.get("hate")]
    sample = posts[::16] + [p for p in hate if p not in posts[::16]]
    return sample, load_ordinary_set(DATA, split)[::40]  # type: ignore[arg-type]


def _fit(posts: list[LabelledPost], ordinary: list[LabelledPost], seed: int) -> RiskScorer:
    flags = [("idiot" in p.text.lower()) or ("傻" in p.text) for p in posts]
    return fit_scorer(posts, flags, [False] * len(posts), seed=seed, ordinary=ordinary)


@pytest.fixture(scope="module")
def sample() -> tuple[list[LabelledPost], list[LabelledPost]]:
    return _sample()


@pytest.fixture(scope="module")
def fitted(sample) -> RiskScorer:
    return _fit(*sample, seed=7)


def test_same_data_and_seed_give_the_same_file_and_version(
    sample, fitted: RiskScorer, tmp_path: Path
) -> None:
    posts, ordinary = sample
    a = save_scorer(fitted, tmp_path / "a.npz")
    b = save_scorer(_fit(posts, ordinary, seed=7), tmp_path / "b.npz")
    assert a.read_bytes() == b.read_bytes()
    assert load_scorer(a).version == load_scorer(b).version
    c = save_scorer(_fit(posts, ordinary, seed=8), tmp_path / "c.npz")
    assert load_scorer(c).version != load_scorer(a).version  # the seed is part of the file


def test_saved_file_loads_back_with_the_same_predictions(
    sample, fitted: RiskScorer, tmp_path: Path
) -> None:
    posts, ordinary = sample
    loaded = load_scorer(save_scorer(fitted, tmp_path / "s.npz"))
    texts = [p.text for p in posts[:200]] + ["have a nice day", "你好，请问怎么操作？"]
    assert loaded.score_many(texts) == fitted.score_many(texts)
    assert loaded.meta["ordinary_rows"] == len(ordinary) > 0
    for key, model in fitted.models.items():
        assert np.array_equal(loaded.models[key].columns, model.columns)
        assert loaded.models[key].review == model.review


def test_fit_refuses_test_rows(sample) -> None:
    posts, ordinary = sample
    test_posts, _ = _sample("test")
    with pytest.raises(ValueError, match="tune split only"):
        _fit(posts + test_posts[:1], ordinary, seed=7)
    with pytest.raises(ValueError, match="tune split only"):
        _fit(posts, ordinary + load_ordinary_set(DATA, "test")[:1], seed=7)


def test_the_ordinary_budget_bounds_the_review_threshold(fitted: RiskScorer) -> None:
    """Out of fold, the scorer sends at most 0.25% of ordinary sentences to review."""
    for key, model in fitted.models.items():
        assert model.oof["ordinary_review_rate"] <= 0.0025, key


def test_packaged_scorer_was_fitted_with_ordinary_sentences() -> None:
    scorer = load_scorer()
    assert scorer.meta["split"] == "train, calibrated on dev"
    assert scorer.meta["ordinary_rows"] > 1000
    # issue 47: the scorer sends a post to review alone only at a precision measured on dev
    for key in ("zh/flagged", "en/flagged"):
        figures = scorer.meta["models"][key]
        assert figures["oof"]["on"] == "dev"
        if figures["review"] < 1.0:
            assert figures["oof"]["solo_precision"] >= scorer.meta["min_solo_precision"] >= 0.75
    assert any(k.startswith("customer_service/") for k in scorer.meta["sources"])


def test_a_damaged_file_names_the_fix(tmp_path: Path) -> None:
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a zip")
    with pytest.raises(ScorerError, match="moderation fit"):
        load_scorer(bad)
    with pytest.raises(ScorerError, match="not found"):
        load_scorer(tmp_path / "missing.npz")


# ---- English terms that name a harm ----------------------------------------------------


@pytest.mark.parametrize(
    "post",
    [
        "racism is wrong",
        "stop the hate",
        "I'm against discrimination",
        "Sexism has no place in this office.",
        "We condemn homophobia in every form.",
        "Bigotry is unacceptable here.",
        "Never tolerate hate crimes.",
    ],
)
def test_an_english_condemned_harm_term_is_a_mention(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    v = moderate_lexicon_only(post, workflow, scorer=False)
    assert v.lexicon.mentions >= 1 and any(s.mention for s in v.spans), v.rationale
    assert v.decision.value == "allow", v.rationale
    assert "mention" in v.rationale


@pytest.mark.parametrize(
    "post",
    [
        "racism is great",
        "I'm not racist but those people are animals",
        "They discriminate against women and I love it",
    ],
)
def test_an_english_harm_term_used_is_no_mention(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    v = moderate_lexicon_only(post, workflow, scorer=False)
    assert v.lexicon.mentions == 0
    assert any(not s.mention for s in v.spans), v.rationale


def test_dense_weights_give_the_column_selected_decision_values(sample) -> None:
    """The packaged scorer's probabilities are the logistic of ``x[:, columns] @ weights``
    (the fitted sparse model as stored), for one post at a time and for many at once, on
    real posts of both languages; the dense product is only a faster way to that sum."""
    from workflows.content_moderation.scorer import (
        TARGETING_MODELS,
        flag_matrix,
        lexicon_spans,
        targeting_matrix,
    )

    posts, _ordinary = sample
    texts = [p.text for p in posts[:120]]
    scorer = load_scorer()
    spans = lexicon_spans(texts)
    words = flag_matrix(texts, spans)
    targeting = targeting_matrix(texts, spans)
    for key, model in scorer.models.items():
        rows = targeting if key in TARGETING_MODELS else words
        z = rows.tocsc()[:, model.columns] @ model.weights.astype(np.float64) + model.intercept
        expected = 1.0 / (1.0 + np.exp(-(model.platt_a * np.asarray(z).ravel() + model.platt_b)))
        assert np.allclose(model.probability(rows), expected, rtol=0, atol=1e-12), key
        singles = [model.probability(rows[i])[0] for i in range(rows.shape[0])]
        assert np.allclose(singles, expected, rtol=0, atol=1e-12), key
    assert len({round(float(p), 3) for p in expected}) > 5  # real, varied posts


def test_one_post_scores_as_the_sparse_matrix_path_does() -> None:
    """The per-post fast path (hashed columns, no sparse matrix) gives the probabilities of
    the scikit-learn matrix the models were fitted on, English and Chinese."""
    from workflows.content_moderation.scorer import (
        flag_matrix,
        lexicon_spans,
        targeting_matrix,
    )

    scorer = load_scorer()
    texts = [
        "you are a stupid idiot and all of them are animals",
        "have a nice day, see you tomorrow",
        "河南人都是骗子，一个个素质低",
        "今天天气不错，我们去公园吧",
        "RT @USER: that bitch ain't shit lol",
    ]
    spans = lexicon_spans(texts)
    fast = scorer.score_many(texts, spans)
    words = flag_matrix(texts, spans)
    hate = scorer.models["en/hate"].probability(targeting_matrix(texts, spans))
    for i, r in enumerate(fast):
        ref = scorer.models[f"{r.lang}/flagged"].probability(words)[i]
        assert abs(r.flagged - ref) < 1e-4
        if r.lang == "en":
            assert r.hate is not None and abs(r.hate - hate[i]) < 1e-4


# ---- issue 47: the stacked Chinese model and the `clear` state -----------------------------


def _judged(text: str, state: str, workflow=None):
    """The lexicon + a scorer judgement in ``state`` (no model), by the packaged policy."""
    from workflows.content_moderation.graph import ContentModerationWorkflow
    from workflows.content_moderation.inputs import prepare_post
    from workflows.content_moderation.judgement import build_verdict, lexicon_findings
    from workflows.content_moderation.verdict import ScorerJudgement

    workflow = workflow or ContentModerationWorkflow(scorer_path=None)
    matcher = workflow.lexicon.matcher()
    prepared = prepare_post(text, workflow.policy.limits)
    found = lexicon_findings(
        matcher.scan(prepared.normalized.original, prepared.normalized),
        matcher.version,
        matcher.names_harm,
    )
    scorer = ScorerJudgement(
        status="ok",
        lang="zh",
        flagged=0.1,
        state=state,
        version="test",
    )
    return build_verdict(
        prepared, workflow.policy, lexicon=found, model=None, source="lexicon", scorer=scorer
    )


@pytest.mark.parametrize(
    "text",
    ["这家店的菜真恶心，再也不来了", "他们说话素质低，我不想理", "看不起人的店员，服务很差"],
)
def test_a_medium_term_the_stacked_scorer_clears_is_allowed_and_low_is_not(text: str) -> None:
    cleared = _judged(text, "clear")
    assert cleared.decision is Decision.ALLOW and cleared.policy_rule == "medium-term-cleared"
    # the same post with an ordinary `low` (a model that does not read the terms) is reviewed
    assert _judged(text, "low").decision is Decision.REVIEW


@pytest.mark.parametrize("text", ["去死吧你这个畜生", "河南人偷井盖"])
def test_clear_never_lifts_a_high_or_critical_term(text: str) -> None:
    assert _judged(text, "clear").decision is Decision.BLOCK


def test_clear_does_not_lift_a_term_that_bidi_controls_raised() -> None:
    # a low-severity term counts as medium in a post with bidi controls; the scorer cannot
    # clear it (cleared_state reads `clear` as `low` there)
    from workflows.content_moderation.graph import ContentModerationWorkflow

    workflow = ContentModerationWorkflow(scorer_path=None)
    plain = "你真是个骗子"
    assert _judged(plain, "clear", workflow).decision is Decision.ALLOW
    disguised = "\u202e" + plain[::-1] + "\u202c"
    v = _judged(disguised, "clear", workflow)
    assert v.decision is Decision.REVIEW and v.input.bidi_controls


def test_only_the_stacked_model_gives_clear() -> None:
    scorer = load_scorer()
    assert scorer.models["zh/flagged"].clears and not scorer.models["en/flagged"].clears
    zh, en = scorer.score_many(["今天天气不错，我们去公园散步吧", "have a nice day, see you"])
    assert zh.state == "clear" and en.state == "low"


def test_lexicon_features_name_the_term_its_tier_and_mention() -> None:
    from workflows.content_moderation.scorer import flag_features, lexicon_features, lexicon_spans

    text, negated = "这种人真恶心", "我们反对歧视"
    spans, spans_neg = lexicon_spans([text, negated])
    feats = lexicon_features(spans)
    assert "l:t:恶心:0" in feats and "l:s:medium" in feats and "l:c:harassment:medium" in feats
    assert "l:s:m" in lexicon_features(spans_neg)  # a mention is its own tier
    assert set(feats) <= set(flag_features(text, spans))
    # English posts read no lexicon features (their model is not stacked)
    en = "you are disgusting"
    assert not any(f.startswith("l:") for f in flag_features(en, lexicon_spans([en])[0]))
