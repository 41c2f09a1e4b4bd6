"""Issue 14, session 6: the packaged classifier on a fourth set of phrasings of each failing kind.

Written in this session before the classifier was measured on them, in forms that neither
``labelled_set`` (the fit's data) nor ``tests/data/classifier_unseen.py`` has; no threshold,
rule or fit was chosen by looking at them (the refit's L2 was chosen on the tune split's
out-of-fold predictions). Each kind's share of right answers has a floor. Measured with the
shipped model (l2 3e-5 refit): moderation 11/12, out of scope 10/12, negation 8/8 (6/8
before the Chinese scope fix: 不要帮我审核 left 审核 outside the scope), compound 5/5, ids
4/5 routed right and 5/5 without the hashtag rule, ties 6/6 never acted on.
"""

from __future__ import annotations

from pathlib import Path

from orchestrator.classifier import RuleClassifier
from orchestrator.classifier.core import default_calibration_path, default_model_path
from orchestrator.routes import Route
from tests.data.classifier_unseen import CS, FB, MOD, XL
from tests.unit.classifier_helpers import assert_share, share_test

#: Moderation asked in words no rule lists, about a harmless post that reads like a customer
#: message (English and Chinese).
MODERATION_ASKED_4: list[tuple[str, Route]] = [
    ("Are we fine letting this go public on the help forum: my voucher code expired early", MOD),
    ("Before I approve it for the Q&A page, anything wrong with: how do I reset my pin?", MOD),
    ("Would this be acceptable as a pinned answer: you can track parcels in the app", MOD),
    ("New member wrote this on the noticeboard, keep it visible? lost my receipt, help", MOD),
    ("Is it safe to feature this on the homepage: best customer support I have ever had", MOD),
    ("Can this message go out to the whole group: my package is stuck in customs again", MOD),
    ("Quick yes or no on showing this under the product: the zip broke after a week", MOD),
    ("Should this user remark remain on our timeline: the refund form would not load", MOD),
    ("这条读者来信可以刊登吗：快递包装破了，但东西没坏", MOD),
    ("帮忙判断这条弹幕适不适合播出：退货流程太麻烦了", MOD),
    ("这段买家留言放到问答区没问题吧：请问什么时候发货", MOD),
    ("这个网友的回复要不要删掉：骑手迟到了半小时", MOD),
]

#: Out-of-scope asks that name a service word: general knowledge, creative writing, advice.
OUT_OF_SCOPE_4: list[tuple[str, Route]] = [
    ("write a lullaby for a tired parcel sorter", FB),
    ("what animals did people use to deliver mail in ancient times", FB),
    ("give me three adjectives that describe a busy airport", FB),
    ("how do you pronounce invoice in spanish", FB),
    ("what is the difference between a bank and a credit union in economics class", FB),
    ("suggest a name for my goldfish, something to do with coupons", FB),
    ("how many hotels are there in las vegas roughly", FB),
    ("teach me a card trick with a deck of cards", FB),
    ("快递的英文缩写有哪些", FB),
    ("帮我给外卖这个词想一个押韵的词", FB),
    ("历史上第一张信用卡长什么样", FB),
    ("讲一个银行劫案题材的电影剧情", FB),
]

#: A cue word of another route in the scope of a negation; the request is customer service.
NEGATED_4: list[tuple[str, Route]] = [
    ("no need to review my comment, I just want the delivery date", CS),
    ("do not moderate this, my card payment keeps failing", CS),
    ("I do not need a spreadsheet summary, please refund the late order", CS),
    ("never mind moderating anything, how do I change my password", CS),
    ("不要帮我审核帖子，我要查退款进度", CS),
    ("别管评论了，我的订单怎么还没到", CS),
    ("无需整理报表，帮我改一下收货地址", CS),
    ("不用看这个表格，我的信用卡被多扣了一笔钱", CS),
]

#: Two requests in one message: (text, first route, second route).
COMPOUND_4: list[tuple[str, Route, Route]] = [
    ("Please refund the broken kettle and then total the columns in the attached excel", CS, XL),
    ("Change my delivery slot, plus make a chart from the spreadsheet", CS, XL),
    ("Summarise the workbook by quarter and also tell me why my card was declined", XL, CS),
    ("帮我查一下订单物流，然后把附件表格按月汇总", CS, XL),
    ("把这个表格做成图表，另外我的退款还没到账", XL, CS),
]

#: A request of another route, then a moderation ask joined to it: (text, first, second).
#: Written before the rule that reads them (session 2026-12-02); the fast tier decided four of
#: them as moderation alone, and the rules never split a request that held a moderation ask.
COMPOUND_MODERATION: list[tuple[str, Route, Route]] = [
    ("Where is my parcel? Also, is it ok to post this review: the courier was rude", CS, MOD),
    ("Please cancel my order, and also check whether this comment is fine to publish: ok", CS, MOD),
    ("Refund the damaged blender, then tell me if this post breaks our rules: scammers", CS, MOD),
    ("Track my package and moderate this reply: thanks for nothing", CS, MOD),
    ("My card got charged twice. Also can you screen this comment before it goes live", CS, MOD),
    ("Update my billing address; also, would you let this comment through: nice", CS, MOD),
    ("Summarise the attached sales sheet and then check if this post is acceptable: hi", XL, MOD),
    ("帮我查一下退款进度，另外看看这条评论能不能发：这家店服务很好", CS, MOD),
    ("我的快递还没到，顺便帮我审核一下这条留言：客服态度太差了", CS, MOD),
    ("我的信用卡被多扣钱了，还有这个帖子需要屏蔽吗：楼主是骗子", CS, MOD),
]

#: One moderation request whose post holds service words and joining words: never split.
MODERATION_NOT_SPLIT: list[str] = [
    "Please review this comment: I ordered a lamp and also a chair, both broken, refund me",
    "Can this go on our page? My parcel was late and then the driver threw it over the fence",
    'Moderate: "cancel my subscription and refund me, you crooks"',
    "Is this review fine to publish? The courier lost my box, and also support hung up on me",
    "帮我审核这条评论：快递太慢了，另外客服也不回消息",
    "这条留言能发吗：退款一直没到，还有客服态度很差",
    'Is it okay to show this under the product? "The refund took ages and then failed"',
    "New post in the queue, approve or remove? Where is my refund, and also why is my card off?",
    "Is this ok under our video? I want a refund and you are all fucking idiots",
    "Is this fine to keep on the forum? I can't log in and also my refund is late",
]

#: Requests of another route whose later clause names a post, a comment or a review: no
#: moderation was asked.
NO_MODERATION_ASKED: list[str] = [
    "My order is late and I want to leave a comment about the driver",
    "Refund my order, and also how do I post a review of the product?",
    "Where is my parcel? Also, I posted a reply on your forum and nobody answered",
    "Cancel my booking and then delete my account please",
    "I was charged twice, and also your post office location is closed",
    "Can you check my delivery? Also I want to report a rude courier",
    "我的订单还没到，另外我想给骑手写个评论",
    "帮我退款，然后删除我的账户",
    "Summarise this spreadsheet and also post the chart to our team channel",
    "Change my password and also remove my old phone number",
]

#: A bare abusive, threatening or spam post with no channel and no request around it: for
#: moderation (written 2026-12-02 with the decisive abuse rules, not tuned on: measured 3 of 6;
#: two threats fall back, the Chinese spam offer goes to customer service).
BARE_ABUSE: list[str] = [
    "nobody wants you here you pathetic loser",
    "i'm gonna find you and hurt you",
    "kys nobody would miss you",
    "FREE followers!!! DM me now for 10k likes",
    "去死吧你这个人渣",
    "加微信领取免费红包，日结兼职",
]
#: A customer who swears at the shop is still a customer.
SWEARING_CUSTOMERS: list[str] = [
    "where is my fucking refund, you idiots",
    "you guys are useless, my parcel is 2 weeks late",
    "你们客服都是废物吗，我的退款呢",
]

#: Ids with a hash sign are not hashtags.
IDS_4: list[tuple[str, Route]] = [
    ("parcel #QX40021 has not moved for a week", CS),
    ("refund request #RF2291 was rejected, why", CS),
    ("my booking #HT7730 shows the wrong date", CS),
    ("case #C12 is still open", CS),
    ("退款单#TK5521还没处理", CS),
]

#: Cue words of two routes whose rules weigh the same, and little else: a tie in the rules,
#: which must never act, whichever tier runs first (3-word ties included: the fast tier's
#: SHORT cue hands on only texts under 3 words).
TIES_4: list[str] = [
    "missing totals",
    "broken dashboard figures",
    "our luggage export",
    "damaged chart today",
]

#: Once ties too; since issue 46 item 9's round 5 the rule neg.cs.other_business.en weighs
#: against customer service on a flight or a hotel (another business's product), so the rules
#: no longer tie on them: they still fall back, and never act.
ONCE_TIES_NOW_VETOED: list[str] = ["flight itinerary uploaded", "the hotel enclosed"]


test_moderation_asked_in_a_fourth_set_of_words = share_test(MODERATION_ASKED_4, 0.75)

test_out_of_scope_fourth_set_falls_back = share_test(OUT_OF_SCOPE_4, 0.6)


def test_negated_cue_words_fourth_set(clf: RuleClassifier) -> None:
    assert_share(clf, NEGATED_4, 0.75)
    for text, _ in NEGATED_4:  # the rules read the scope: the fast tier never decides these
        assert clf.classify_text(text).decided_by != "fast", text


def test_compound_fourth_set_gives_a_secondary_route(clf: RuleClassifier) -> None:
    right = 0
    for text, first, second in COMPOUND_4:
        got = clf.classify_text(text)
        right += (got.route, got.secondary_routes) == (first, (second,))
    assert right / len(COMPOUND_4) >= 0.6


def test_a_request_before_a_moderation_ask_is_kept(clf: RuleClassifier) -> None:
    """Measured 10 of 10 (0 before: any moderation ask made the request a single route)."""
    got = [(t, clf.classify_text(t)) for t, _, _ in COMPOUND_MODERATION]
    wrong = [
        (t, c.route, c.secondary_routes)
        for (t, first, second), (_, c) in zip(COMPOUND_MODERATION, got, strict=True)
        if (c.route, c.secondary_routes) != (first, (second,))
    ]
    assert len(wrong) <= 2, wrong


def test_a_compound_request_states_its_clauses_evidence(clf: RuleClassifier) -> None:
    """A compound's confidence and scores are each asked route's evidence in its own clause:
    the whole-text tiers read "where is my parcel? also, is it ok to post this: ..." as
    moderation (0.98), which said customer_service with confidence 0.997 beside a score of
    0.01 for it."""
    compounds = 0
    for text, _, _ in [*COMPOUND_MODERATION, *COMPOUND_4]:
        got = clf.classify_text(text)
        if not got.secondary_routes:
            continue
        compounds += 1
        asked = (got.route, *got.secondary_routes)
        assert not got.calibrated, text
        assert got.confidence == got.scores[got.route] > 0.0, (text, got.scores)
        # the first ask reaches secondary_min; a moderation ask may hold less ("... check
        # whether this comment is fine to publish: ok": only "comment", 0.35)
        assert got.scores[got.route] >= clf.thresholds.secondary_min, (text, got.scores)
        assert all(got.scores[r] > 0.0 for r in asked), (text, got.scores)
        assert all(s == 0.0 for r, s in got.scores.items() if r not in asked), got.scores
        assert list(got.scores.values()) == sorted(got.scores.values(), reverse=True)
        assert all(f"{r} (" in got.reason for r in asked), got.reason
    assert compounds >= len(COMPOUND_MODERATION)


def test_a_post_under_review_is_never_split(clf: RuleClassifier) -> None:
    """What follows a moderation ask is the post, however many requests it seems to hold."""
    for text in MODERATION_NOT_SPLIT:
        got = clf.classify_text(text)
        assert got.secondary_routes == (), (text, got.reason)
        assert got.route != Route("excel_report"), text


def test_a_post_word_in_a_later_clause_is_no_moderation_ask(clf: RuleClassifier) -> None:
    """Measured 8 of 10 with the model refitted on the channel-free labelled set (2026-12-02):
    "... also, I posted a reply on your forum and nobody answered" and "... and also post the
    chart to our team channel" are routed to moderation by the learned tier (0.99, 0.86); no
    request of the ten gets moderation as a secondary route."""
    wrong = [
        t
        for t in NO_MODERATION_ASKED
        if Route("content_moderation") in (got := clf.classify_text(t)).secondary_routes
        or got.route == Route("content_moderation")
    ]
    assert len(wrong) <= 2, wrong
    assert not any(
        Route("content_moderation") in clf.classify_text(t).secondary_routes
        for t in NO_MODERATION_ASKED
    )


def test_bare_abuse_goes_to_moderation_and_swearing_customers_stay(clf: RuleClassifier) -> None:
    right = [t for t in BARE_ABUSE if clf.classify_text(t).route == Route("content_moderation")]
    assert len(right) >= 3, right
    for text in SWEARING_CUSTOMERS:
        assert clf.classify_text(text).route == Route("customer_service"), text


def test_ids_fourth_set_are_not_hashtags(clf: RuleClassifier) -> None:
    """No id fires the hashtag rule; at least 4 of 5 are routed right (measured 4 of 5: "case
    #C12 is still open" is read as out of scope, which is a handoff, not a wrong route)."""
    rules = RuleClassifier(reload_interval=None, model_path=False)
    for text, _ in IDS_4:
        assert "mod.tweet.en" not in {s.rule_id for s in rules.classify_text(text).signals}
    assert_share(clf, IDS_4, 0.8)


def test_a_tie_never_acts_whichever_tier_runs(clf: RuleClassifier, tmp_path: Path) -> None:
    """The packaged classifier, and one whose fast tier would decide every request
    (``fast_min = 0``): a text of a few words that the rules tie on is never acted on. The fast
    tier either finds it out of scope (a fallback, which acts on nothing) or, when its best
    class is a route, checks the rules first and hands the tie to them."""
    eager_cal = tmp_path / "calibration.toml"
    text = default_calibration_path().read_text(encoding="utf-8")
    assert "fast_min = " in text
    eager_cal.write_text(
        "\n".join(
            "fast_min = 0.0" if line.startswith("fast_min = ") else line
            for line in text.splitlines()
        ),
        encoding="utf-8",
    )
    eager = RuleClassifier(
        reload_interval=None, model_path=default_model_path(), calibration_path=eager_cal
    )
    assert eager.thresholds.fast_min == 0.0
    # a text that no decisive rule could overrule (those hand even an eager fast tier's
    # decision to the rules: tests/unit/test_classifier_decisive.py)
    assert eager.classify_text("the card was declined at the shop").decided_by == "fast"
    rules_only = RuleClassifier(reload_interval=None, model_path=False)
    for text in TIES_4:
        scores = rules_only.classify_text(text).scores
        top = sorted(scores.values(), reverse=True)
        assert top[0] == top[1] > 0, (text, scores)  # really a tie in the rules
        for c in (clf, eager):
            got = c.classify_text(text)
            assert got.route == Route("fallback"), (text, got.reason)
            if got.decided_by == "fast":  # out of scope for the n-grams: acts on nothing
                assert got.fallback_reason == "out_of_scope", got.reason
            else:  # the fast tier handed it on: the rules call the tie
                assert got.fallback_reason == "ambiguous" and "tie" in got.reason, got.reason
        # the eager fast tier would route it (its best class is a route) but checked the rules
        eager_fast = eager.classify_text(text).tier("fast")
        assert eager_fast is not None
        if not eager_fast.decided:
            assert "tie" in eager_fast.note or "short" in eager_fast.note, eager_fast.note


def test_a_few_words_naming_another_business_fall_back(clf: RuleClassifier) -> None:
    for text in ONCE_TIES_NOW_VETOED:
        got = clf.classify_text(text)
        assert got.route == Route("fallback"), (text, got.reason)
