"""Issue 46 item 9, round 3: a held-out part written on 2026-12-05 at 07:05 UTC, before the
round-3 rule work began, by someone who did not read the rules.

Whoever tunes the classifier for item 9 must not open this file. It is run once, at the end,
with ``python -m benchmarks.classifier_oos_families --part test_3 --look 1``; the look is
recorded in ``benchmarks/results/``.

The kind is that of ``classifier_oos_families.py``: a question about a service product in
general (what a term means, which option is better, tips, what usually happens, extras added
to a trip that no desk of ours sells), which no record of the customer answers and no desk
action of ours settles. New sentence shapes here: comparisons, definitions, advice, industry
norms, hypotheticals and "include X in my Y". The controls are the customer's own charge,
delivery, account, return or booking gone wrong, in shapes not used in rounds 1 and 2.
"""

from __future__ import annotations

from orchestrator.routes import Route

CS, FB = Route("customer_service"), Route("fallback")

Families = dict[str, tuple[str, Route, tuple[str, ...]]]

TEST_3: Families = {
    "comparisons_en": (
        "en",
        FB,
        (
            "is a debit card or a credit card better for travelling abroad",
            "which is cheaper for sending a parcel overseas, a courier or the post office",
            "is it better to lease or to buy a car",
            "are yearly subscriptions usually cheaper than monthly ones",
            "should I choose a fixed or a variable rate loan",
            "which airline alliance has the most generous miles",
        ),
    ),
    "definitions_en": (
        "en",
        FB,
        (
            "what does APR mean on a credit card statement",
            "what is a chargeback, in simple terms",
            "what does the term restocking fee mean",
            "what is a grace period on a loan",
            "explain what a price match guarantee is",
            "what is the difference between a refund and store credit in general",
        ),
    ),
    "advice_en": (
        "en",
        FB,
        (
            "tips for getting a cheaper car insurance quote",
            "how can I lower my phone bill in general",
            "how do people build a credit history with a secured card",
            "what is the best way to avoid airline baggage fees",
            "any advice for choosing a good savings account",
            "how do I negotiate a better broadband deal when my contract ends",
        ),
    ),
    "industry_norms_en": (
        "en",
        FB,
        (
            "how long do airlines usually take to refund a cancelled flight",
            "how long does an international bank transfer normally take",
            "what is the typical return window for electronics in the US",
            "how much do couriers usually charge for next-day delivery",
            "do most banks charge for a replacement debit card",
            "is it normal for hotels to hold a deposit on your card",
        ),
    ),
    "hypotheticals_en": (
        "en",
        FB,
        (
            "if someone misses a credit card payment, what happens to their credit score",
            "what happens to a phone contract if you move abroad",
            "would travel insurance pay out if a volcano grounded my flight",
            "what would happen to my savings if a bank went bust",
        ),
    ),
    "include_extras_en": (
        "en",
        FB,
        (
            "include breakfast in my hotel stay",
            "can my rental car come with a child seat",
            "I'd like a sea view cabin on my cruise instead",
            "get me priority boarding on tomorrow's flight",
            "add a spa day to my weekend getaway",
            "throw in travel insurance with my ski trip",
        ),
    ),
    "general_zh": (
        "zh",
        FB,
        (
            "出国旅游用借记卡好还是信用卡好",
            "什么是退货运费险",
            "怎么提高自己的信用分",
            "换手机套餐有什么省钱技巧",
            "银行跨境转账一般要几天",
            "房贷提前还款划算吗",
        ),
    ),
    "include_extras_zh": (
        "zh",
        FB,
        (
            "给我的火车票加一个托运行李额度",
            "酒店住宿帮我加上早餐",
            "给我的自驾游租车配一个儿童座椅",
            "在我的滑雪行程里加一份旅游保险",
        ),
    ),
    "controls_en": (
        "en",
        CS,
        (
            "the cashback promised on my last order never showed up",
            "my card was charged but the order page says payment failed",
            "I sent the item back two weeks ago, where is my money",
            "the courier left my parcel at the wrong address",
            "I can't get into my account since I reset the password",
            "you charged me a restocking fee nobody told me about",
            "my subscription renewed even though auto-renew was off",
            "please change the delivery address on order 4471",
            "I received somebody else's order in my box",
            "the discount code failed at checkout and I paid full price",
            "tracking says delivered but nothing is at my door",
            "one of the three items in my order is missing",
            "I was charged twice for the same order",
            "the jacket I got is the wrong size, how do I swap it",
        ),
    ),
    "controls_zh": (
        "zh",
        CS,
        (
            "包裹显示已签收，但我根本没收到",
            "付款成功了订单却显示未支付",
            "退货寄回去半个月了钱还没退",
            "优惠券没用上，多扣了我钱",
            "收货地址填错了，帮我改一下",
            "会员自动续费了，可我早就关掉了",
        ),
    ),
}
