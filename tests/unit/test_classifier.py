"""The rule classifier: routes, signals, fuzzy/Chinese matching, bad input, rules file, reload.

Texts are short real-style requests written here; the routing-set tests cite the data files.
"""

from __future__ import annotations

import json
import logging
import os
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from orchestrator.classifier import (
    Classification,
    Rule,
    RuleClassifier,
    RulesError,
    Signal,
    default_rules_path,
    load_calibration,
    load_rules,
)
from orchestrator.request import Attachment, Request
from orchestrator.routes import Route


@pytest.fixture(scope="module")
def clf() -> RuleClassifier:
    return RuleClassifier(reload_interval=None)


@pytest.fixture(scope="module")
def rules() -> RuleClassifier:
    """The rules tier alone (no learned or fast tier): the tests of what the rules match."""
    return RuleClassifier(reload_interval=None, model_path=False)


def route(clf: RuleClassifier, text: str, **kw) -> Classification:
    return clf.classify(Request(text=text, **kw))


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("what is the boiling point of water", Route("fallback")),
        ("please moderate this post: you are all idiots", Route("content_moderation")),
        ("I was charged twice for my order, refund please", Route("customer_service")),
        ("my card payment failed", Route("customer_service")),
        ("where is my order", Route("customer_service")),
        ("我的退款什么时候到账？", Route("customer_service")),
        ("花呗怎么还款", Route("customer_service")),
        ("请审核这条帖子：今天天气不错", Route("content_moderation")),
        ("帮我汇总一下这个表格", Route("excel_report")),
        ("Summarise the attached spreadsheet by month", Route("excel_report")),
    ],
)
def test_routes(clf: RuleClassifier, text: str, expected: Route) -> None:
    assert route(clf, text).route == expected


def test_result_shape_and_signals(rules: RuleClassifier) -> None:
    r = route(rules, "I was charged twice for my order, refund please")
    assert 0.0 <= r.confidence <= 1.0
    assert list(r.scores.values()) == sorted(r.scores.values(), reverse=True)
    assert r.runner_up is not None and r.runner_up[0] != Route("customer_service")
    assert [x.route for x in r.runner_ups] == [k for k in r.scores if k != r.route]
    norm = rules.normalise("I was charged twice for my order, refund please")
    for s in r.signals:
        assert isinstance(s, Signal)
        assert s.span is not None and norm[s.span[0] : s.span[1]] == s.matched
    ids = {s.rule_id for s in r.signals}
    assert {"cs.payment.en", "cs.commerce.en"} <= ids
    dumped = [s.model_dump(mode="json") for s in r.signals]  # what telemetry stores
    assert json.loads(json.dumps(dumped))[0]["rule_id"]


def test_fuzzy_typo_fullwidth_and_spacing(rules: RuleClassifier) -> None:
    typo = route(rules, "I need my refnud now")
    fuzzy = [s for s in typo.signals if s.matched == "refnud"]
    assert typo.route == Route("customer_service") and fuzzy and 0.5 < fuzzy[0].similarity < 1.0
    full = route(rules, "ＲＥＦＵＮＤ　ｐｌｅａｓｅ")  # full-width letters and space
    assert any(s.matched == "refund" for s in full.signals)
    spaced = route(rules, "I cannot log in")
    joined = route(rules, "I cannot login")
    assert {s.rule_id for s in spaced.signals} == {s.rule_id for s in joined.signals}
    assert route(rules, "how do I top-up?").route == Route("customer_service")


def test_chinese_substring_inside_run(rules: RuleClassifier) -> None:
    r = route(rules, "我昨天申请了退款但是一直没到账")
    matched = {s.matched for s in r.signals}
    assert {"退款", "到账"} <= matched
    text = rules.normalise("我昨天申请了退款但是一直没到账")
    s = next(s for s in r.signals if s.matched == "退款")
    assert text[s.span[0] : s.span[1]] == "退款"


def test_attachment_is_strong_excel_evidence(rules: RuleClassifier) -> None:
    r = route(rules, "see attached", attachments=(Attachment(filename="Q3 sales.XLSX"),))
    assert r.route == Route("excel_report")
    sig = next(s for s in r.signals if s.rule_id == "xl.attachment")
    assert sig.span is None and sig.weight >= 0.9


def test_channel_hint_routes_bare_post(rules: RuleClassifier) -> None:
    bare = "you people never learn anything"
    assert route(rules, bare).route == Route("fallback")
    hinted = route(rules, bare, channel="moderation_queue")
    assert hinted.route == Route("content_moderation")
    assert any(s.rule_id == "channel.content_moderation" for s in hinted.signals)


def test_negative_pattern_lowers_route(rules: RuleClassifier) -> None:
    r = route(rules, "I want to report a stolen card")
    neg = [s for s in r.signals if s.negative]
    assert neg and neg[0].rule_id == "neg.xl.report_problem"
    assert r.route == Route("customer_service")
    assert r.scores[Route("excel_report")] < 0.1


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ("", "empty"),
        ("   \n\t", "empty"),
        (b"\xff\xfe\x00abc", "not valid UTF-8"),
        ("café".encode("utf-16"), "it starts like UTF-16: save it as UTF-8"),
        ("abc\x00\x01\x02\x03", "binary"),
        ("a" * 1_000_001, "over the 1,000,000 limit"),
        ("bad \ud800 surrogate", "errors='replace'"),
    ],
)
def test_bad_input_gets_a_clear_result(
    clf: RuleClassifier, text: str | bytes, fragment: str
) -> None:
    r = clf.classify_text(text)
    assert r.route == Route("fallback") and r.fallback_reason == "invalid_input"
    assert fragment in r.reason


def test_text_at_the_limit_is_read_as_a_request_would_be(clf: RuleClassifier) -> None:
    text = "refund " + "a" * (1_000_000 - 7)
    assert clf.classify_text(text).fallback_reason != "invalid_input"
    assert clf.classify_text(text).route == clf.classify(Request(text=text)).route


@pytest.mark.parametrize(
    ("call", "fragment"),
    [
        (lambda c: c.classify("refund my order"), "classify_text for a plain string"),
        (lambda c: c.classify_text("summarise", attachments="a.xlsx"), "pass ['a.xlsx']"),
        (lambda c: c.classify_text("summarise", attachments=[3]), "file names (str)"),
        (lambda c: c.classify_text("refund", channel=5), "channel must be a str"),
    ],
)
def test_a_wrong_argument_type_says_what_to_pass(
    clf: RuleClassifier, call: Callable[[RuleClassifier], object], fragment: str
) -> None:
    with pytest.raises(TypeError, match=re.escape(fragment)):
        call(clf)


def test_no_attachments_may_be_none(clf: RuleClassifier) -> None:
    assert clf.classify_text("where is my parcel", attachments=None).route == "customer_service"


def test_emoji_only_and_bytes(clf: RuleClassifier) -> None:
    r = clf.classify_text("😡😡🔥")
    assert r.route == Route("fallback") and r.fallback_reason == "no_signal"
    assert "no word of it is one the n-gram model knows" in r.reason
    # a known word that asks for nothing is out of scope, not "no signal"
    assert clf.classify_text("hello").fallback_reason == "out_of_scope"
    ok = clf.classify_text("我的退款什么时候到账".encode(), attachments=["a.csv"])
    assert ok.route in (Route("customer_service"), Route("excel_report"))
    tiers = [t for t in ok.tiers if t.decided]
    assert tiers and tiers[0].scores[Route("excel_report")] > 0.0  # the attachment counted


def test_near_limit_text_is_bounded() -> None:
    clf = RuleClassifier(reload_interval=None)
    text = ("where is my order " * 60_000)[:999_999]
    started = time.perf_counter()
    r = clf.classify(Request(text=text))
    assert r.route == Route("customer_service")
    limit = load_rules(default_rules_path())[0].settings.max_scan_chars
    assert all(s.span is None or s.span[1] <= limit for s in r.signals)  # only the head
    assert time.perf_counter() - started < 5.0  # loose: a full scan of 1 MB took far longer


def test_thresholds_give_fallback_with_reason() -> None:
    rules = [
        Rule(id="a", route=Route("customer_service"), weight=0.5, keywords=("invoice",)),
        Rule(id="b", route=Route("excel_report"), weight=0.45, keywords=("spreadsheet",)),
    ]
    clf = RuleClassifier(rules, min_score=0.4, ambiguity_margin=0.1, reload_interval=None)
    amb = clf.classify(Request(text="invoice spreadsheet"))
    assert amb.route == Route("fallback") and amb.fallback_reason == "ambiguous"
    assert "margin" in amb.reason
    low = RuleClassifier(rules, min_score=0.6, reload_interval=None).classify(
        Request(text="invoice")
    )
    assert low.fallback_reason == "low_confidence" and "min_score 0.6" in low.reason


def test_packaged_calibration_matches_rules() -> None:
    """Guards against editing routes.toml without re-running fit-thresholds."""
    _, sha = load_rules(default_rules_path())
    cal = load_calibration(default_rules_path().with_name("calibration.toml"))
    assert cal.rules_sha == sha, "run `orchestrator classifier fit-thresholds`"
    assert (
        RuleClassifier(reload_interval=None).classify(Request(text="where is my order")).calibrated
    )


# ---------------------------------------------------------------- rules file validation

GOOD = """\
version = 1

[[rule]]
id = "cs.a"
route = "customer_service"
weight = 0.6
keywords = ["refund"]
"""


def _write(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "routes.toml"
    path.write_text(body, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("body", "line", "fragment"),
    [
        (GOOD.replace("weight = 0.6", "weight = 0.6 0.7"), 6, "not valid TOML"),
        (GOOD.replace("weight = 0.6", "weight = 1.5"), 6, "weight"),
        (  # with [[route]] tables, a rule's route must be one of them
            GOOD.replace('route = "customer_service"', 'route = "nowhere"')
            + '\n[[route]]\nname = "customer_service"\n',
            5,
            "route 'nowhere' is not declared",
        ),
        (  # the route's name, so a long file's mistake is found (user49)
            GOOD + '\n[[route]]\nname = "customer_service"\n' * 2,
            None,
            "route 'customer_service' is declared more than once",
        ),
        (GOOD + 'colour = "red"\n', 8, "colour"),
        (GOOD + GOOD.split("\n", 2)[2], None, "used twice"),
        (GOOD.replace('keywords = ["refund"]', "regex = '(a+)+$'"), 3, "catastrophic"),
        (GOOD.replace('keywords = ["refund"]', "regex = '(unclosed'"), 3, "does not compile"),
        (GOOD.replace('"refund"', '"excel表格"'), 3, "mixes Chinese and Latin"),
    ],
)
def test_bad_rules_file_names_file_line_reason(
    tmp_path: Path, body: str, line: int | None, fragment: str
) -> None:
    path = _write(tmp_path, body)
    with pytest.raises(RulesError) as info:
        RuleClassifier(rules_path=path, reload_interval=None)
    err = info.value
    assert err.path == path and fragment in str(err)
    if line is not None:
        assert err.line == line and f"{path}:{line}" in str(err)


def test_pathological_regex_rejected_quickly(tmp_path: Path) -> None:
    path = _write(tmp_path, GOOD.replace('keywords = ["refund"]', "regex = '(x+x+)+y'"))
    started = time.perf_counter()
    with pytest.raises(RulesError, match="catastrophic"):
        load_rules(path)
    assert time.perf_counter() - started < 15.0  # 3 tries x 0.1 s per probe, loaded host


# ---------------------------------------------------------------- hot reload


def _touch(path: Path, body: str, step: int) -> None:
    path.write_text(body, encoding="utf-8")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + step * 1_000_000_000))


def test_hot_reload_and_broken_edit_keeps_last_good(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    path = _write(tmp_path, GOOD)
    clf = RuleClassifier(rules_path=path, reload_interval=0)
    assert clf.classify(Request(text="refund")).route == Route("customer_service")
    assert clf.classify(Request(text="spreadsheet")).route == Route("fallback")
    v1 = clf.version

    _touch(
        path,
        GOOD.replace('"customer_service"', '"excel_report"').replace('"refund"', '"spreadsheet"'),
        1,
    )
    assert clf.classify(Request(text="spreadsheet")).route == Route("excel_report")
    assert clf.version != v1

    with caplog.at_level(logging.ERROR, logger="orchestrator.classifier.core"):
        _touch(path, GOOD.replace("weight = 0.6", "weight = -1"), 2)
        r = clf.classify(Request(text="spreadsheet"))
    assert r.route == Route("excel_report")  # last good rules still live
    assert clf.last_error and "weight" in clf.last_error
    assert any("keeping the last good rules" in rec.message for rec in caplog.records)
