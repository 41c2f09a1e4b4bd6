"""The labelled request set, built from a small copy of the real data folder.

Data: the first rows of every file in ../shared/data/customer_service/*.csv and
../shared/data/moderation/*.csv (see its SOURCES.md), and the file names of
../shared/data/spreadsheets/ (contents are not read by the set builder).
"""

from __future__ import annotations

import shutil
from collections import Counter
from pathlib import Path

import pytest

from orchestrator.classifier.labelled_set import (
    EXCEL_ASKS,
    MODERATION_WRAPPERS,
    OOS_SERVICE_TEMPLATES,
    build_labelled_set,
    split_of,
)
from orchestrator.exceptions import UserError
from orchestrator.routes import Route


@pytest.fixture(scope="module")
def mini_data(data_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("data")
    for kind in ("customer_service", "moderation"):
        (out / kind).mkdir()
        for src in sorted((data_dir / kind).glob("*.csv")):
            lines = src.read_text(encoding="utf-8").splitlines(keepends=True)
            keep = lines[:61]
            if src.name.startswith("clinc150"):  # make sure out-of-scope rows are in
                keep += [line for line in lines if ",oos," in line][:20]
            (out / kind / src.name).write_text("".join(keep), encoding="utf-8")
    (out / "spreadsheets").mkdir()
    for src in sorted((data_dir / "spreadsheets").glob("calamine_*.xlsx"))[:3]:
        shutil.copy(src, out / "spreadsheets" / src.name)
    return out


def test_labels_follow_the_kind(mini_data: Path) -> None:
    rows = build_labelled_set(mini_data, cap=0)
    by_source = Counter((r.source, r.route) for r in rows)
    assert by_source[("clinc150_oos_sample.csv:oos", Route("fallback"))] == 20
    assert by_source[("banking77_sample.csv", Route("customer_service"))] == 60
    assert by_source[("waimai_10k_zh_sample.csv", Route("customer_service"))] == 60
    assert all(
        r.route == Route("content_moderation")
        for r in rows
        if "moderation" in r.id or r.source.startswith(("davidson", "jigsaw", "cold"))
    )
    excel = [r for r in rows if r.route == Route("excel_report")]
    assert excel and all(r.attachments or ".xlsx" in r.text for r in excel)
    assert {r.lang for r in rows} == {"en", "zh"}
    # ATEC: both questions of a pair, de-duplicated
    atec = [r for r in rows if r.source.startswith("atec")]
    assert len(atec) == len({r.text for r in atec}) > 60


def test_moderation_posts_are_wrapped_or_on_the_channel(mini_data: Path) -> None:
    rows = [r for r in build_labelled_set(mini_data, cap=0) if r.route == "content_moderation"]
    for r in rows:
        wrappers = MODERATION_WRAPPERS[r.lang][r.split]
        index = int(r.template.rsplit(".", 1)[1])
        if wrappers[index] is None:
            # a bare harmless post needs the queue's channel; a bare offensive one has none
            assert r.channel in ("moderation_queue", None)
        else:
            prefix = wrappers[index].split("{post}")[0]
            assert r.text.startswith(prefix) and r.channel is None


def test_no_channel_tells_the_route(mini_data: Path) -> None:
    """Only a bare harmless post carries a channel (the moderation queue): a channel that only
    some routes' rows carry is a label the learned tier would read instead of the text."""
    rows = build_labelled_set(mini_data, cap=0)
    assert {r.channel for r in rows} <= {None, "moderation_queue"}
    assert all(r.route == "content_moderation" for r in rows if r.channel == "moderation_queue")
    bare = [r for r in rows if r.route == Route("content_moderation") and r.channel is None]
    assert bare, "some moderation rows come without a channel"


def test_split_is_stable_and_templates_held_out(mini_data: Path) -> None:
    a = build_labelled_set(mini_data, cap=0)
    b = build_labelled_set(mini_data, cap=0)
    assert [r.model_dump() for r in a] == [r.model_dump() for r in b]
    families: dict[str, set[str]] = {}
    for r in a:
        assert r.family, r.id
        families.setdefault(r.family, set()).add(r.split)
    assert all(len(splits) == 1 for splits in families.values())  # held out by family
    # templated sources split by intent: no intent on both sides
    bitext = {r.family for r in a if r.source.startswith("bitext")}
    assert bitext and all(f.startswith("bitext_customer_support_sample.csv:") for f in bitext)
    waimai = [r for r in a if r.source.startswith("waimai")]
    assert all(r.split == split_of(r.source, r.text) for r in waimai)
    assert {"tune", "test"} == {r.split for r in a}
    for lang in ("en", "zh"):
        assert not set(EXCEL_ASKS[lang]["tune"]) & set(EXCEL_ASKS[lang]["test"])
        tune = {w for w in MODERATION_WRAPPERS[lang]["tune"] if w}
        assert not tune & set(MODERATION_WRAPPERS[lang]["test"])
    test_templates = {r.template for r in a if r.split == "test" and r.template}
    assert all(".test." in t for t in test_templates)


def test_cap_and_missing_folder(mini_data: Path, tmp_path: Path) -> None:
    capped = build_labelled_set(mini_data, cap=5)
    assert max(Counter((r.source, r.split) for r in capped).values()) <= 5
    with pytest.raises(UserError, match="customer_service"):
        build_labelled_set(tmp_path)


def test_customer_texts_submitted_for_review_and_service_word_asks(mini_data: Path) -> None:
    """Issue 14's two kinds in the set: a customer-like post under a moderation framing is a
    moderation request on its own row's side of the split; an out-of-scope ask that names a
    service word falls back, its template on one side only."""
    rows = build_labelled_set(mini_data, cap=0)
    by_id = {r.id: r for r in rows}
    wrapped = [r for r in rows if r.id.startswith("wrapped:")]
    assert len(wrapped) > 10
    for r in wrapped:
        original = by_id[r.id.removeprefix("wrapped:")]
        assert original.route == "customer_service" and r.route == "content_moderation"
        assert r.split == original.split and original.text in r.text
        assert r.text != original.text  # a framing asks for the decision
    oos = [r for r in rows if r.source.startswith("oos_service_word/")]
    assert {r.lang for r in oos} == {"en", "zh"} and all(r.route == Route("fallback") for r in oos)
    for lang, splits in OOS_SERVICE_TEMPLATES.items():
        assert not set(splits["tune"]) & set(splits["test"]), lang
    assert any("delivery drivers" in r.text or "快递" in r.text for r in oos)
