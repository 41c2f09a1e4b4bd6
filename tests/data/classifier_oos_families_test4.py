"""Issue 46 item 9, round 4: a held-out part written on 2026-12-05 at about 10:00 UTC, BEFORE any
round-4 change to the training data, the learned tier, the rules or the thresholds.

It is run once, at the end, with
``python -m benchmarks.classifier_oos_families --part test_4 --look 1``; the look is recorded in
``benchmarks/results/``. Nothing is tuned on it, before or after that look.

The kind is that of ``classifier_oos_families.py``: a question or ask about a service product in
general, or for a product or extra that no desk of ours sells (banking products, travel extras,
telecom plans, insurance, retail policies, how a thing works), which no record of the customer
answers. Sentence shapes new in round 4 (rounds 1-3 had rates, extras put on a flight or trip,
"in general", comparisons, definitions, advice, norms, hypotheticals, "include X"): pros and cons,
eligibility, signing up for a new product, "walk me through" a process, sums, myths, advice for
a persona, retail policy as the law or a rule. The controls are real customer-service asks that
name the same nouns (a bag fee, cashback, insurance add-on, warranty, plan, top-up, a return
under a policy), mostly with an order or booking reference, so that customer-service precision
is measured on requests that share the out-of-scope questions' words.
"""

from __future__ import annotations

from orchestrator.routes import Route

CS, FB = Route("customer_service"), Route("fallback")

Families = dict[str, tuple[str, Route, tuple[str, ...]]]

TEST_4: Families = {
    "pros_cons_en": (
        "en",
        FB,
        (
            "I'm thinking of getting a cashback credit card, what are the pros and cons",
            "pros and cons of a family mobile plan",
            "what are the downsides of an interest-only mortgage",
            "is there any catch with zero percent balance transfer offers",
            "what are the advantages of annual travel insurance over single trip cover",
        ),
    ),
    "eligibility_en": (
        "en",
        FB,
        (
            "what income do I need to qualify for a platinum credit card",
            "can a student with no job get a credit card",
            "who is eligible for a senior discount on train tickets",
            "what documents does a bank want when you open a current account",
            "how old do you have to be to rent a car in the US",
        ),
    ),
    "sign_up_new_product_en": (
        "en",
        FB,
        (
            "sign me up for an unlimited data plan",
            "get me a quote for home contents insurance",
            "open a high-yield savings account for me",
            "I need a bigger baggage allowance on my flight to Rome, sort it out",
            "switch me to a cheaper broadband package",
            "set up roaming on my phone before my trip",
        ),
    ),
    "walk_me_through_en": (
        "en",
        FB,
        (
            "walk me through how a mortgage application works",
            "what are the steps to move my number to a new mobile carrier",
            "explain the process of filing a travel insurance claim, step by step",
            "walk me through how airline upgrades with points work",
            "step by step, how does someone dispute an error on their credit report",
        ),
    ),
    "sums_en": (
        "en",
        FB,
        (
            "how much interest would I pay on 5000 dollars at 19.9 percent APR over a year",
            "if I earn 2 percent cashback, how much do I get back on 1200 dollars of spending",
            "how many miles do I need for a return flight to Tokyo",
            "what does a 300 pound a month car loan over five years cost in total",
            "how much data do 20 hours of video calls use",
        ),
    ),
    "myths_en": (
        "en",
        FB,
        (
            "is it true that checking your credit score lowers it",
            "my friend says extended warranties are a waste of money, is he right",
            "do airlines really overbook every flight",
            "is it a myth that phone insurance never pays out",
            "people say store cards are a rip-off, true or not",
        ),
    ),
    "persona_advice_en": (
        "en",
        FB,
        (
            "I'm a student who travels a lot, which phone plan suits me",
            "as a freelancer, what kind of bank account should I have",
            "I'm retiring next year, what insurance do I actually need",
            "for a family of four, which broadband speed is enough",
            "I fly twice a month for work, is a lounge membership worth it",
        ),
    ),
    "retail_policy_rules_en": (
        "en",
        FB,
        (
            "do shops have to give refunds on sale items by law",
            "how do price adjustment policies work at big retailers",
            "can stores refuse a return without a receipt",
            "how long do manufacturer warranties last on laptops",
        ),
    ),
    "sign_up_eligibility_zh": (
        "zh",
        FB,
        (
            "帮我开通一个国际漫游套餐",
            "给我报一份家庭财产保险的价格",
            "帮我把宽带换成更便宜的套餐",
            "给我的返程航班加购一个靠窗座位",
            "学生没有工作能办信用卡吗",
            "多大年纪才可以租车",
        ),
    ),
    "process_sums_myths_zh": (
        "zh",
        FB,
        (
            "买房贷款的流程是怎样的",
            "信用卡年化18%，借一万块一年要还多少利息",
            "听说查征信会降低信用分，是真的吗",
            "延保服务到底值不值得买",
            "一个月30G流量够不够看视频",
            "商场打折商品按规定能退吗",
            "自由职业者适合买什么保险",
            "航空公司的里程升舱是怎么操作的",
            "退休以后需要买哪些保险",
            "出国留学办哪家银行的卡比较好",
        ),
    ),
    "controls_same_nouns_en": (
        "en",
        CS,
        (
            "refund my bag fee for order 1234, the flight was cancelled",
            "the cashback on order 88213 was never credited to my card",
            "I unticked the insurance add-on at checkout but you still charged me for it",
            "I paid for the extended warranty with my laptop order and it's not on my account",
            "cancel the phone plan upgrade I ordered yesterday and refund the fee",
            "my card was declined paying for order 5521 even though I have funds",
            "I returned the headphones under your 30 day policy and still have no refund",
            "the seat upgrade on booking KX72P was charged twice",
            "you billed me an annual fee after I closed the card",
            "the late fee on my statement is wrong, I paid on time",
            "my data top-up was paid but never added to my account",
            "I was promised 5 percent cashback at checkout and got 1 percent",
            "please refund the baggage fee, my suitcase never arrived",
            "your store won't take back the sale item from order 3390",
            "I got charged a foreign fee on order 7712 though you said there was none",
            "my refund for the cancelled trip hasn't come through, reference TR-5567",
            "the price dropped after I bought it, refund the difference on order 6610",
            "add the missing loyalty points to my account for order 4410",
            "my bill shows a roaming charge but I never left the country",
            "I want to cancel order 2281 and get the money back on my credit card",
        ),
    ),
    "controls_same_nouns_zh": (
        "zh",
        CS,
        (
            "订单1234的行李费请退给我，航班取消了",
            "返现到现在没到账，订单号56789",
            "我没勾选保险，结账时却扣了保险费",
            "手机充值付了钱话费一直没到账",
            "我买的延保在订单里查不到",
            "退货已经签收一周了退款还没到",
            "我的信用卡被扣了两次年费，请退一笔",
            "订单8832降价了，能退差价吗",
            "流量包买了没生效，帮我查一下",
            "说好的积分没给我加上，订单号4410",
        ),
    ),
}
