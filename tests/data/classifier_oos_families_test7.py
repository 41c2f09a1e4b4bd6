"""Issue 46 item 9, round 7: a held-out part written on 2026-12-05 at about 18:50 UTC, BEFORE any
round-7 change to the training data, the learned tier, the rules, the thresholds or the
calibration (the classifier was not run on any of these texts while they were written, and the
author did not run it on them afterwards until the one look).

It is run once, at the end, with
``python -m benchmarks.classifier_oos_families --part test_7 --look 1``; the look is recorded in
``benchmarks/results/``. Nothing is tuned on it, before or after that look.

The kind: a question or a request about ANOTHER business's or a public body's product, account
or service that holds a service word (refund, cancel, account, order, bill, card, parcel...);
no record of this shop answers it. Phrasing families new in round 7 (none of rounds 1-6 used
them): being locked out of another company's account, switching or porting a provider, "what
happens if ...", asking us to draft a letter to someone else, the status of something held by
another business, healthcare, education, car services, imperatives meant for an airline, hotel
or rail company, utilities at home, named marketplaces' returns and payments, government forms,
fines and benefits; Chinese in Simplified and Traditional over telecoms, government and social
insurance, healthcare, education, named platforms (拼多多, 淘宝, 美团, 蝦皮, 京东, 闲鱼), travel,
banks and fintech, car insurance and upkeep, utilities and streaming.

The controls are real asks to THIS shop: its orders, parcels, refunds, returns, invoices and
address, naming a product, a payment method (PayPal, Visa, Apple Pay, Klarna, 支付宝, 微信支付)
or a courier (DHL, Evri, UPS, 申通, 韵达, 顺丰), so that customer-service precision is measured
on requests that share the out-of-scope questions' words. They must stay customer service.
"""

from __future__ import annotations

from orchestrator.routes import Route

CS, FB = Route("customer_service"), Route("fallback")

Families = dict[str, tuple[str, Route, tuple[str, ...]]]

TEST_7: Families = {
    "locked_out_other_account_en": (
        "en",
        FB,
        (
            "I'm locked out of my PayPal account after too many password attempts",
            "forgot the password to my Netflix profile and the reset email never comes",
            "how do I get back into my Instagram after it got hacked",
            "my Venmo account got frozen, how long do they usually take to review it",
            "two-factor codes from my bank app stopped arriving on my new phone",
            "can't log in to my Xfinity account to see the bill",
        ),
    ),
    "switching_provider_en": (
        "en",
        FB,
        (
            "how do I keep my number when I switch from Verizon to T-Mobile",
            "what's the process to move my pension to a different provider",
            "switching electricity supplier mid-contract, will there be an exit fee",
            "transfer my ISA from Barclays to Nationwide, how long does it take",
            "moving my broadband to a new flat next month, what do I tell Virgin Media",
            "can I transfer my gym contract to a friend",
        ),
    ),
    "what_happens_if_en": (
        "en",
        FB,
        (
            "what happens if I miss a car loan payment by a week",
            "what happens to my frequent flyer miles if I don't fly for two years",
            "if I go over my data allowance abroad, how much will I be charged",
            "what happens to my health insurance if I quit my job",
            "what happens if I pay my council tax late",
            "if my flight is delayed five hours can I get a refund from the airline",
        ),
    ),
    "draft_letter_to_someone_else_en": (
        "en",
        FB,
        (
            "help me write a complaint email to my landlord about the broken boiler",
            "draft a letter to my insurer appealing a denied claim",
            "write a message to my internet provider asking them to waive the late fee",
            "can you write an email to the hotel asking for a late checkout",
            "help me word a request to my university for a tuition refund",
            "compose a note to the airline asking for compensation for my lost suitcase",
        ),
    ),
    "status_held_elsewhere_en": (
        "en",
        FB,
        (
            "has my dad's pension payment gone out this month",
            "is my prescription ready at the Walgreens on Main Street",
            "where is my Uber Eats order, it's been an hour",
            "what's the status of my home insurance claim after the flood",
            "has my residence permit application been processed yet",
            "my DoorDash driver is going the wrong way",
            "my eBay seller still hasn't shipped my headphones",
            "my Etsy order from a seller in Italy has been stuck in customs for two weeks",
        ),
    ),
    "healthcare_en": (
        "en",
        FB,
        (
            "does my health plan cover physiotherapy sessions",
            "how do I book a blood test at my GP",
            "reschedule my dentist appointment to next Friday",
            "can I get a refund for a cancelled MRI scan from the clinic",
            "my pharmacy charged me full price for my inhaler, is the copay wrong",
            "how do I order a replacement EHIC card",
        ),
    ),
    "education_en": (
        "en",
        FB,
        (
            "how do I request an official transcript from my college",
            "when is the tuition payment deadline for spring semester",
            "my student loan servicer applied my payment to the wrong loan",
            "can I get a refund if I drop a course after week two",
            "how do I reset my school email password",
            "my kid's school lunch account balance is negative, how do I top it up",
        ),
    ),
    "car_services_en": (
        "en",
        FB,
        (
            "my car has a recall notice, do I need to book it at the dealer",
            "how much does a tyre change cost at Kwik Fit",
            "cancel my roadside assistance membership with AAA",
            "when is my car's MOT due",
            "my car lease ends in March, what return charges should I expect",
            "the rental car company charged my card for a scratch I didn't make",
        ),
    ),
    "travel_provider_imperative_en": (
        "en",
        FB,
        (
            "upgrade my seat to business class on tomorrow's flight to Tokyo",
            "can I get an extra bed added to my hotel room",
            "change my train ticket to the 5 pm departure",
            "request a wheelchair at the gate for my mother's flight",
            "extend my Airbnb stay by two nights",
            "my boarding pass won't load in the airline app",
        ),
    ),
    "utilities_home_en": (
        "en",
        FB,
        (
            "there's a gas smell near my meter, who do I call",
            "my water bill has an estimated reading, how do I submit the real one",
            "set up a direct debit for my electricity bill",
            "when will the power come back in my area",
            "my internet keeps dropping every evening, is it the router",
            "how do I move my TV licence to my new address",
        ),
    ),
    "named_marketplace_en": (
        "en",
        FB,
        (
            "how do I return something I bought on Amazon with a gift card",
            "my Shein parcel came with the wrong size, how do I send it back to them",
            "does Costco refund the membership if I cancel halfway",
            "Best Buy price matched a TV for my friend, will they do it for me",
            "my AliExpress dispute was closed without a refund",
            "can I use my Target RedCard at Walmart",
            "how do I cancel my order on Temu",
        ),
    ),
    "government_forms_fines_en": (
        "en",
        FB,
        (
            "how do I pay a parking fine online",
            "is my child benefit payment going to be late this month",
            "what form do I need to register a birth",
            "how do I appeal a speeding ticket",
            "where do I report a change of address for my voter registration",
            "my social security card got stolen, how do I replace it",
            "how long does it take to get a refund of overpaid property tax",
        ),
    ),
    "telecom_zh": (
        "zh",
        FB,
        (
            "怎么把我的号码从移动携号转网到联通",
            "我的宽带到期了，续费找谁",
            "國際漫遊一天多少錢，中華電信的",
            "手机欠费停机了，怎么交话费",
            "我的流量包怎么退订",
        ),
    ),
    "government_social_insurance_zh": (
        "zh",
        FB,
        (
            "公积金怎么提取出来付房租",
            "社保卡丢了去哪里补办",
            "户口迁移需要带什么材料",
            "驾照到期了换证要多少钱",
            "勞保的老年給付要怎麼申請",
            "违章罚款在网上怎么交",
            "居住证怎么续签",
        ),
    ),
    "healthcare_zh": (
        "zh",
        FB,
        (
            "医院挂号怎么在网上预约",
            "体检报告什么时候能出来",
            "健保卡遺失要去哪裡補辦",
            "看牙医的费用商业保险能报销吗",
            "药店买药可以刷医保吗",
        ),
    ),
    "education_zh": (
        "zh",
        FB,
        (
            "学校的学费分期怎么申请",
            "怎么开在读证明和成绩单",
            "网课退课能退学费吗",
            "補習班的學費可以退嗎，我只上了兩堂課",
        ),
    ),
    "named_platform_zh": (
        "zh",
        FB,
        (
            "我在拼多多买的衣服怎么退货",
            "淘宝的订单卖家一直不发货怎么办",
            "美团外卖送错了，找谁退款",
            "蝦皮的訂單一直沒出貨，可以取消嗎",
            "京东plus会员怎么取消自动续费",
            "闲鱼上买的二手手机是坏的，能申请退款吗",
        ),
    ),
    "travel_zh": (
        "zh",
        FB,
        (
            "12306上的高铁票怎么改签",
            "酒店能不能帮我延迟退房到下午两点",
            "航班延误四个小时，航空公司要赔吗",
            "高鐵票退票手續費是多少",
            "网约车司机多收了我钱怎么投诉",
        ),
    ),
    "bank_fintech_zh": (
        "zh",
        FB,
        (
            "花呗逾期一天会影响征信吗",
            "银行卡被冻结了怎么解冻",
            "微信零钱提现到银行卡收手续费吗",
            "我的房贷能不能提前还一部分",
            "信用卡分期的手續費怎麼算",
        ),
    ),
    "car_insurance_upkeep_zh": (
        "zh",
        FB,
        (
            "车被刮了走保险划算还是自己修",
            "车险到期了在哪里续保便宜",
            "汽车4S店保养一次大概多少钱",
            "我的車子年檢要帶什麼",
        ),
    ),
    "utilities_streaming_zh": (
        "zh",
        FB,
        (
            "电费怎么在支付宝上交",
            "燃气表没气了去哪充值",
            "爱奇艺会员自动续费怎么关",
            "Netflix的帳號被別人登入了怎麼辦",
            "物业费一般多少钱一平",
        ),
    ),
    "payment_method_ours_en": (
        "en",
        CS,
        (
            "I paid for order 48213 with PayPal but my account still says awaiting payment",
            "there are two identical charges from your store on my Amex for one purchase",
            "can I switch the payment on my order from credit card to Apple Pay before it ships",
            "the Klarna instalment for my order was taken even though I returned everything",
            "my gift card balance didn't go towards my last order",
        ),
    ),
    "invoice_ours_en": (
        "en",
        CS,
        (
            "I need an invoice with my company's VAT number for the office chairs I ordered",
            "please send me a receipt for order 30917, I lost the email",
            "the invoice for my laptop stand shows the wrong billing address",
        ),
    ),
    "courier_parcel_ours_en": (
        "en",
        CS,
        (
            "DHL says my parcel is being held for import duties, is that from your side",
            "the Evri driver marked my order as delivered but nothing arrived",
            "my package from you has been sitting at the UPS depot since Monday",
            "can you ask the courier to leave my parcel with my neighbour at number 12",
            "the tracking link in my shipping email just says label created",
        ),
    ),
    "change_cancel_ours_en": (
        "en",
        CS,
        (
            "cancel the blue hoodie from my order but keep the rest",
            "I'm moving on Thursday, can order 66102 go to 4 Harbour Road instead",
            "I ordered the wrong size trainers, can I swap them for a 9 before they ship",
            "please cancel my order, I found it cheaper elsewhere",
            "add gift wrapping to my order if it hasn't been packed yet",
        ),
    ),
    "refund_return_ours_en": (
        "en",
        CS,
        (
            "how long until the refund for my returned headphones reaches my Mastercard",
            "I sent the coffee machine back two weeks ago and still no refund",
            "the phone case I ordered arrived cracked, I want my money back",
            "do I need to pay for return shipping on the jacket",
            "my refund came back to the wrong card",
        ),
    ),
    "status_ours_en": (
        "en",
        CS,
        (
            "when will my order of the garden hose ship",
            "is my order 71455 still on track for Friday",
            "my order says processing for five days now, what's going on",
            "I got an email saying my order was split into two parcels, where's the second one",
        ),
    ),
    "ours_zh": (
        "zh",
        CS,
        (
            "我用支付宝付的款，订单还显示待付款",
            "订单20931的收货地址帮我改成公司地址",
            "我买的电饭煲还没发货，什么时候发",
            "申通的物流停在派送中两天了，我在你们这买的台灯",
            "能开增值税专用发票吗，订单号44812",
            "退款是原路返回吗，我当时用的是微信支付",
            "刚下的单能取消吗，拍错颜色了",
            "收到的耳机有杂音，我要退货",
            "发票抬头写错了，能重开吗",
            "韵达的快递员说地址不详，麻烦你们联系一下",
            "退货的运费谁出",
            "订单里少了一件T恤",
            "你们发的顺丰到付，我不想付运费",
            "我的包裹卡在中转站三天没动了",
        ),
    ),
    "ours_zh_traditional": (
        "zh",
        CS,
        (
            "我的訂單什麼時候出貨",
            "我用信用卡付款被扣了兩次",
            "收到的杯子破了，可以換一個新的嗎",
            "幫我把訂單的收件地址改到台中",
        ),
    ),
}
