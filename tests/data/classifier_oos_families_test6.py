"""Issue 46 item 9, round 6: a held-out part written on 2026-12-05 at about 15:45 UTC, BEFORE any
round-6 change to the training data, the learned tier, the rules, the thresholds or the
calibration (the classifier was not run on any of these texts while they were written).

It is run once, at the end, with
``python -m benchmarks.classifier_oos_families --part test_6 --look 1``; the look is recorded in
``benchmarks/results/``. Nothing is tuned on it, before or after that look.

The kind: a question about ANOTHER business's product or service, or a general question, that
holds a service word (banks, cards, airlines, telecoms, insurance, utilities, other shops,
government services); no record of this shop answers it. Phrasing families new in round 6:
the customer's OWN product with another business ("my bank", "my carrier"), government
services (a tax refund, a passport, a change of address at the post office), troubleshooting
another company's product, "how much does X cost", terse keyword queries, cancelling another
company's subscription, named other stores' return rules, "should I ...", "where can I ...".
The controls are real customer-service asks about THIS shop's orders, parcels, refunds,
returns, account and address, many of which name a product (a suitcase, a phone charger, a
credit-card holder, travel insurance added at checkout) or another company as the courier (DHL,
UPS, FedEx, Royal Mail, 顺丰, 中通), so that customer-service precision is measured on requests
that share the out-of-scope questions' words.
"""

from __future__ import annotations

from orchestrator.routes import Route

CS, FB = Route("customer_service"), Route("fallback")

Families = dict[str, tuple[str, Route, tuple[str, ...]]]

TEST_6: Families = {
    "own_thing_other_business_en": (
        "en",
        FB,
        (
            "my bank charged me a $35 overdraft fee, is that even legal",
            "why does my phone carrier slow my data down after 20GB",
            "my airline cancelled my connecting flight, am I owed compensation under EU rules",
            "my car insurance premium went up after a crash that wasn't my fault, why",
            "my electricity bill doubled this winter, how do I read the meter myself",
            "my mortgage lender is asking for proof of income again, is that normal",
        ),
    ),
    "government_services_en": (
        "en",
        FB,
        (
            "when will my tax refund from the IRS arrive",
            "how long does a passport renewal take at the moment",
            "what do I need to bring to renew my driver's license",
            "how do I apply for unemployment benefits",
            "can I track my visa application online",
            "how do I change my address with the post office when I move",
        ),
    ),
    "troubleshoot_other_product_en": (
        "en",
        FB,
        (
            "no signal on my phone since I landed in Spain, how do I turn on roaming",
            "the router my internet provider gave me keeps dropping, how do I reset it",
            "my boarding pass won't load in the airline app",
            "my Chase debit card doesn't work at ATMs abroad, what setting do I change",
            "my prepaid gas meter shows emergency credit, what does that mean",
        ),
    ),
    "how_much_cost_en": (
        "en",
        FB,
        (
            "how much does it cost to change the date on a Ryanair ticket",
            "how much is a second checked bag on Delta",
            "what's the usual fee for an international wire transfer at a bank",
            "how much does renters insurance cost a month, roughly",
            "how much is roaming per day in Canada with AT&T",
        ),
    ),
    "terse_keywords_en": (
        "en",
        FB,
        (
            "airline pet policy cabin",
            "best savings account rates",
            "prepaid sim card usa tourist",
            "travel insurance covid cover",
            "credit card annual fee waiver",
            "water bill payment plan",
        ),
    ),
    "cancel_other_subscription_en": (
        "en",
        FB,
        (
            "how do I cancel my gym membership without paying the exit fee",
            "cancel my Spotify premium",
            "how to stop my car insurance from renewing automatically",
            "what's the notice period to end a broadband contract",
            "I want to close my savings account at Barclays, how do I do that",
        ),
    ),
    "named_other_store_policy_en": (
        "en",
        FB,
        (
            "does Costco take returns on electronics after 90 days",
            "can Walmart refuse a refund if you lost the receipt",
            "what's IKEA's return policy on mattresses",
            "do Apple stores price match",
            "are returns free with Amazon Prime",
        ),
    ),
    "should_i_en": (
        "en",
        FB,
        (
            "should I pay off my credit card or my car loan first",
            "should I buy travel insurance for a weekend in Paris",
            "is it worth upgrading to business class on a long-haul flight",
            "should I switch energy supplier now or wait for the price cap",
            "should I take the extended warranty the car dealer is offering",
        ),
    ),
    "where_can_i_en": (
        "en",
        FB,
        (
            "where can I change dollars into euros without a big commission",
            "where do I report a lost passport when I'm abroad",
            "where can I get a replacement Medicare card",
            "where's the nearest bank branch that opens on Sunday",
        ),
    ),
    "own_thing_government_zh": (
        "zh",
        FB,
        (
            "我的手机号停机了，营业厅几点开门",
            "我的医保卡丢了去哪里补办",
            "我的航班延误了四个小时，航空公司应该赔多少钱",
            "我的车险快到期了，续保哪家便宜",
            "个税退税一般多久能到账",
            "护照过期了怎么续签",
            "公积金怎么提取出来交房租",
            "社保断缴一个月有影响吗",
            "驾照到期换证需要带什么材料",
        ),
    ),
    "cost_terse_zh": (
        "zh",
        FB,
        (
            "国际漫游一天多少钱",
            "高铁票改签收手续费吗",
            "信用卡年费怎么免",
            "现在房贷利率多少",
            "电费阶梯价怎么算",
        ),
    ),
    "other_store_should_zh": (
        "zh",
        FB,
        (
            "宜家的床垫买了不满意能退吗",
            "京东的七天无理由退货包括生鲜吗",
            "超市买的打折商品可以退换吗",
            "要不要给父母买重疾险",
            "宽带办一年的划算还是按月交划算",
            "银行定期存款提前取出来利息怎么算",
        ),
    ),
    "own_order_names_product_en": (
        "en",
        CS,
        (
            "the travel insurance I added at checkout isn't on my order confirmation",
            "the phone charger I ordered last week still says processing",
            "the credit card holder wallet from order 88213 came with a broken zip",
            "I bought a suitcase from you and a wheel snapped on the first trip, send a new one",
            "the SIM card adapter set was missing from my parcel",
            "the coffee machine I got from you leaks, can I return it",
        ),
    ),
    "courier_named_en": (
        "en",
        CS,
        (
            "DHL says my package was delivered but it's not here, order 40917",
            "the UPS tracking for my order hasn't updated in 5 days",
            "Royal Mail sent my parcel back to you, can you send it again",
            "FedEx wants me to pay customs fees on my order, is that right",
            "your courier left my parcel with a neighbour I don't even know",
        ),
    ),
    "refund_timing_en": (
        "en",
        CS,
        (
            "When will the money for order ORD-100231 be back on my card?",
            "how long until my refund for the returned jacket shows up",
            "it's been 10 days since you got my return and still no refund",
            "has the refund for ORD-100377 been sent yet",
        ),
    ),
    "address_account_return_en": (
        "en",
        CS,
        (
            "please change the delivery address on my order to 12 Elm Street",
            "I moved, update the shipping address on my account",
            "I can't log into my account on your site, the password reset email never comes",
            "can I swap the shoes from my order for a bigger size",
            "I need a return label for order 55102",
            "I paid with my credit card, can the refund go to PayPal instead",
            "you charged my Visa twice for the same order",
        ),
    ),
    "own_order_courier_refund_zh": (
        "zh",
        CS,
        (
            "我在你们店买的充电宝还没发货",
            "顺丰显示已签收，但是我没收到，订单号20931",
            "订单ORD-100512的退款什么时候能到账",
            "退回去的手机壳你们收到了吗，退款还没到",
            "帮我把订单的收货地址改成北京市朝阳区建国路88号",
            "我的账号登录不上了，验证码收不到",
            "买的行李箱轮子坏了，想换一个",
            "快递员把包裹放在门口被偷了",
            "中通三天没更新物流了，是在你们这买的耳机",
            "我用信用卡付的款，退款会退回信用卡吗",
            "你们多扣了我一次钱",
            "我想取消昨天下的单",
            "收到的保温杯是坏的，要退货",
        ),
    ),
}
