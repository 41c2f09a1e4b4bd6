"""Issue 46, requests: kinds of input the classifier got wrong, on inputs written for this file.

Each kind has several inputs of its own, English and Chinese where it applies; none is the
example quoted in the issue only. The classifier is the shipped one (rules, calibration and
learned tiers).
"""

from __future__ import annotations

import pytest

from orchestrator.classifier import RuleClassifier
from orchestrator.routes import Route
from tests.data.classifier_unseen import CS, FB, MOD, XL

# --------------------------------------------------------------------- item 10: Traditional

#: (Traditional text, its Simplified twin, route): moderation asks, customer asks, reports and
#: out-of-scope questions written in Traditional characters.
TRADITIONAL = [
    ("請幫我審核這條留言是否違規：你們這群廢物", "请帮我审核这条留言是否违规：你们这群废物", MOD),
    ("這條評論可以公開顯示嗎：運費太貴了", "这条评论可以公开显示吗：运费太贵了", MOD),
    ("麻煩審核一下這個帖子：店員態度很差", "麻烦审核一下这个帖子：店员态度很差", MOD),
    ("我的訂單三天了還沒發貨，幫我查一下", "我的订单三天了还没发货，帮我查一下", CS),
    ("我的退款什麼時候到帳", "我的退款什么时候到账", CS),
    ("請把附件表格匯總成季度報表", "请把附件表格汇总成季度报表", XL),
    ("給我講一個關於銀行的笑話", "给我讲一个关于银行的笑话", FB),
]


@pytest.mark.parametrize(("traditional", "simplified", "route"), TRADITIONAL)
def test_traditional_chinese_routes_like_its_simplified_twin(
    clf: RuleClassifier, traditional: str, simplified: str, route: Route
) -> None:
    assert traditional != simplified
    t, s = clf.classify_text(traditional), clf.classify_text(simplified)
    assert t.route == route, t.reason
    assert s.route == route, s.reason
    assert abs(t.confidence - s.confidence) < 0.05


# --------------------------------------------------------------------- item 11: framings

#: A review queue's framing said first, in a word or two, before a post that reads like a
#: customer's words (the hard case: the post alone is a customer-service text).
MODERATION_FRAMINGS = [
    "Flag or approve: my parcel came late but the driver was nice",
    "Flag or approve: thanks for the fast refund",
    "Approve or flag this: where is my order",
    "Flag it or not: the app logs me out at checkout",
    "Allowed? my card got declined twice",
    "Keep or bin: the courier left my box in the rain",
    "Is this OK to post: the refund took two weeks",
    "Can this be published? the hotel room was dirty",
    "审核一下：外卖送得很慢",
    "帮忙审一下：快递三天了还没到",
    "标记还是通过：商品质量一般",
    "请审核这条评论：退款很快",
    "能过审吗：外卖小哥送得很快",
    "審核一下：客服態度很好",
]


@pytest.mark.parametrize("text", MODERATION_FRAMINGS)
def test_a_review_queue_framing_routes_to_moderation(clf: RuleClassifier, text: str) -> None:
    c = clf.classify_text(text)
    assert c.route == MOD, c.reason


#: Customer texts that start like a framing but ask the desk for something.
NOT_FRAMINGS = [
    ("Approve my refund please: order 5512", CS),
    ("Ok: my order came late, what now", CS),
    ("审核进度怎么样了？我的退款申请", CS),
    ("我想投诉：快递员态度差", CS),
    ("Please check: my parcel never arrived", CS),
]


@pytest.mark.parametrize(("text", "route"), NOT_FRAMINGS)
def test_a_customer_text_that_starts_like_a_framing_stays_customer_service(
    clf: RuleClassifier, text: str, route: Route
) -> None:
    c = clf.classify_text(text)
    assert c.route == route, c.reason


# --------------------------------------------------------------------- item 8: long prose

_STORY_EN = (
    "On Saturday we went to the old market in town. The stalls were full of apples, cheese "
    "and hand-made soap, and a man played the accordion by the fountain. We bought bread for "
    "the week and sat by the river for an hour, watching the ducks and talking about nothing. "
)
_STORY_ZH = (
    "周六我们去了镇上的老集市。摊位上摆满了苹果、奶酪和手工香皂，喷泉边有个人在拉手风琴。"
    "我们买了一周的面包，在河边坐了一个小时，看鸭子，随便聊聊天。"
)

#: (story, repeats, separator before the ask, ask, route): the ask after a story of 400 to
#: 3,500 characters, in one block or after a blank line.
LONG_PROSE_ASKS = [
    (_STORY_EN, 4, " ", "Can you refund order 88123? It never arrived.", CS),
    (_STORY_EN, 8, " ", "So my question is: why was my card charged twice for my booking?", CS),
    (_STORY_EN, 12, "\n\n", "Please cancel my subscription before it renews tomorrow.", CS),
    (_STORY_EN, 6, " ", "Anyway, where is my parcel? The tracking has not moved since Monday.", CS),
    (_STORY_ZH, 6, "", "请问我的订单88123什么时候退款？", CS),
    (_STORY_ZH, 8, "\n\n", "我的退款为什么还没到账？", CS),
    (_STORY_ZH, 6, "", "帮我把收货地址改成公司地址。", CS),
    (_STORY_EN, 6, " ", "Is this story OK to post on your community page?", MOD),
    (_STORY_ZH, 6, "", "这篇文章能发布在你们的社区吗？", MOD),
]


@pytest.mark.parametrize(("story", "n", "sep", "ask", "route"), LONG_PROSE_ASKS)
def test_an_ask_after_long_prose_decides_the_route(
    clf: RuleClassifier, story: str, n: int, sep: str, ask: str, route: Route
) -> None:
    text = story * n + sep + ask
    assert len(text) >= 400
    c = clf.classify_text(text)
    assert c.route == route, c.reason


def test_a_review_asked_first_keeps_a_long_post_in_moderation(clf: RuleClassifier) -> None:
    for text in (
        "Please review this post before it goes live:\n" + _STORY_EN * 5 + "Where is my refund?",
        "请审核这篇帖子：" + _STORY_ZH * 4 + "我的快递到哪了？",
    ):
        assert clf.classify_text(text).route == MOD


def test_a_story_without_an_ask_is_not_made_a_customer_request(clf: RuleClassifier) -> None:
    # its last sentence reads like a purchase ("we bought bread"), but asks nothing
    assert clf.classify_text(_STORY_EN * 5).route != CS


# --------------------------------------------------------------------- item 9: train/dev


def _families() -> dict[str, tuple[str, Route, tuple[str, ...]]]:
    from benchmarks.classifier_oos_families import data_file, load_families

    path = data_file("train_dev")
    # both rounds' train/dev parts; the test parts are looked at once, by the benchmark only
    return {
        **load_families(path, "TRAIN_DEV"),
        **{f"{k} (2)": v for k, v in load_families(path, "TRAIN_DEV_2").items()},
    }


def test_out_of_scope_service_questions_fall_back_on_the_train_dev_families(
    clf: RuleClassifier,
) -> None:
    rows = [(lang, route, text) for lang, route, texts in _families().values() for text in texts]
    got = [(lang, route, clf.classify_text(text).route) for lang, route, text in rows]
    fb_en = [g for lang, want, g in got if want == FB and lang == "en"]
    assert sum(g == FB for g in fb_en) / len(fb_en) >= 0.9
    said_cs = [want for _, want, g in got if g == CS]
    assert said_cs and sum(w == CS for w in said_cs) / len(said_cs) >= 0.97
