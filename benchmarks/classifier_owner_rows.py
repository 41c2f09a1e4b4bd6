"""Whose service thing a request is about (issue 46 item 9, rounds 15-16): study rows for the
learned tier, in the shape of the labelled set's ``oos_service_word`` rows (:func:`owner_rows`).

Each template is one writing shape (a texting one-liner, voice dictation, a forwarded notice,
two numbered issues, a formal letter, a long backstory, code-switched Chinese...) with two
slots: ``{who}``, the party the customer deals with, and ``{word}``, a service word (a refund,
a bill, a fee, a booking). Four sides:

* the shapes filled with **another business** (:data:`OTHER_BUSINESSES`: a gym, an airline, a
  landlord, 物业, 驾校...) and that business's words: a question for someone else, fallback;
* filled with **the shop itself** (:data:`THE_SHOP`: you, your store, the courier, 你们店,
  快递员...) and the shop's words: the desk's own customer service;
* the same shapes written with **no party named** (:data:`NO_PARTY_SHAPES`) and the shop's
  words (:data:`UNNAMED_WORDS`: an order, a parcel, a delivery fee, 退款, 运费): customer
  service too, since most real asks of the shop name no one (round 16);
* shapes where another business is only **mentioned** beside a thing bought from the shop
  (:data:`MENTIONED_SHAPES`, :data:`MENTIONED_ITEMS`: "my gym recommended the kettle, I ordered
  it here and it arrived broken"): customer service (round 16).

The same shapes and many of the same words (refund, charge, fee, membership, 退款, 会员费)
sit on several sides, so the learned tier learns from *who* is named, not from the service
word. Written from the issue's description and kinds of business in general; no family of
``classifier_oos_families_test15.json`` or ``..._test16.json`` was read. All rows are for the
``tune`` split.

Status (2026-12-06, round 16): NOT part of ``labelled_set.build_labelled_set`` and not in the
shipped model. Round 16's candidates (these rows at :data:`ROW_WEIGHT`, each customer-service
row also submitted as a post for review, row weights in the threshold search too) kept the
eval's held-out accuracy and the main job's routes, but customer-service precision on the
held-out split stayed one or two decisions under round 13's 0.9842 (best 0.9838), so nothing
was shipped; ``benchmarks/results/classifier_oos_round16_2026-12-06d.md`` has the figures and
``classifier_oos_round16_library.patch`` beside it the library change the candidates were
fitted with (``classifier fit --fast-min 0.85``).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator

from orchestrator.classifier.labelled_phrases import Lang, Split
from orchestrator.classifier.labelled_set import LabelledRequest, written_rows
from orchestrator.routes import FALLBACK, Route

#: Writing shapes; ``{who}`` is the party named, ``{word}`` the service word.
OWNER_SHAPES: dict[Lang, tuple[str, ...]] = {
    "en": (
        "{who} charged me twice for the {word}, how do I get my money back?",
        "hey so {who} still hasnt refunded my {word}?? what do i do",
        "hi {who} took the {word} 2x from me, how do i get it back lol",
        "so um {who} sent me a {word} i dont recognise what am i supposed to do about it",
        "1) {who} took the {word} without asking 2) nobody answers the phone. What now?",
        "Dear Sir or Madam, I am writing regarding the {word} from {who}, which has still not "
        "been refunded. Could you advise me on the next steps? Kind regards",
        "Last month we moved house and everything was chaos. The kids changed schools, my "
        "partner started a new job and I barely opened the post. Yesterday I finally saw that "
        "{who} had taken a {word} I never agreed to. Can I get that back?",
        "FW: {word} notice\n\n> Dear customer, {who} has added a {word} to your account.\n\n"
        "what is this and do I have to pay it?",
        "Is it normal that {who} wants a {word} before they do anything?",
        "{who} says the {word} is non-refundable. Is that even allowed?",
        "Quick one: how do I cancel the {word} with {who}?",
        "Why did {who} put up the {word} again this month?",
        "I've been waiting three weeks for {who} to sort out my {word}. Who do I complain to?",
        "can u help, {who} double billed me for the {word}",
    ),
    "zh": (
        "{who}一直不给我退{word}，怎么办？",
        "您好，关于{who}的{word}问题，我已经等了两周了，请问该如何处理？谢谢。",
        "{who}乱扣{word}！！！",
        "事情是这样的：上个月我搬家，忙得焦头烂额，孩子也刚转学。昨天才发现{who}多扣了我一笔{word}，"
        "能退回来吗？",
        "{who}的{word}被扣了两次，how can I get it back?",
        "请问{who}的{word}可以退吗",
        "{who}说{word}不退，这合理吗？",
        "{who}这个{word}怎么取消啊",
        "尊敬的工作人员：{who}至今未退还{word}，恳请告知下一步应如何办理。此致敬礼",
        "{who}这个月又涨{word}了，凭什么？",
        "转发：【{word}通知】{who}提醒您尽快缴纳{word}。这个要交吗？",
    ),
}

#: The shapes of :data:`OWNER_SHAPES`, one for one, written with no party named.
NO_PARTY_SHAPES: dict[Lang, tuple[str, ...]] = {
    "en": (
        "I was charged twice for the {word}, how do I get my money back?",
        "hey so my {word} still hasnt been refunded?? what do i do",
        "hi the {word} got taken 2x from me, how do i get it back lol",
        "so um i got a {word} i dont recognise what am i supposed to do about it",
        "1) the {word} was taken without asking 2) nobody answers the phone. What now?",
        "Dear Sir or Madam, I am writing regarding my {word}, which has still not been "
        "refunded. Could you advise me on the next steps? Kind regards",
        "Last month we moved house and everything was chaos. The kids changed schools, my "
        "partner started a new job and I barely opened the post. Yesterday I finally saw a "
        "{word} I never agreed to. Can I get that back?",
        "FW: {word} notice\n\n> Dear customer, a {word} has been added to your account.\n\n"
        "what is this and do I have to pay it?",
        "Is it normal to wait this long for the {word}?",
        "It says the {word} is non-refundable. Is that even allowed?",
        "Quick one: how do I cancel the {word}?",
        "Why did the {word} go up again this month?",
        "I've been waiting three weeks for my {word} to be sorted out. Who do I complain to?",
        "can u help, i was double billed for the {word}",
    ),
    "zh": (
        "{word}一直没退给我，怎么办？",
        "您好，关于我的{word}问题，我已经等了两周了，请问该如何处理？谢谢。",
        "凭什么乱扣我{word}！！！",
        "事情是这样的：上个月我搬家，忙得焦头烂额，孩子也刚转学。昨天才发现多扣了我一笔{word}，"
        "能退回来吗？",
        "{word}被扣了两次，how can I get it back?",
        "请问{word}可以退吗",
        "说{word}不退，这合理吗？",
        "这个{word}怎么取消啊",
        "尊敬的工作人员：我的{word}至今未退还，恳请告知下一步应如何办理。此致敬礼",
        "这个月{word}又涨了，凭什么？",
        "转发：【{word}通知】您的{word}有变动，请及时查看。这是什么意思？",
    ),
}

#: Another business and its service words: who -> words. No bank, card or wallet (the desk
#: serves those: BANKING77, ATEC) and no shop selling goods.
OTHER_BUSINESSES_TEXT: dict[Lang, str] = {
    "en": """
my gym: membership fee, joining fee, cancellation fee, annual fee
the airline: seat fee, baggage fee, flight refund, change fee
my landlord: deposit, rent, late fee, service charge
the letting agent: holding deposit, admin fee, tenancy renewal fee
my phone company: roaming charge, bill, early termination fee, contract
my broadband provider: installation fee, bill, price rise, router fee
the electric co: bill, standing charge, meter fee, final bill
the water company: bill, sewerage charge, late payment fee
the streaming service: subscription, monthly fee, premium plan
the hotel: room deposit, resort fee, booking, minibar charge
the holiday rental host: cleaning fee, security deposit, booking
my dentist: bill, missed appointment fee, treatment plan
the vet: bill, consultation fee, vaccination charge
the driving school: lesson package, booking fee, refund
the renovation firm: deposit, refund, invoice
the removal company: booking deposit, invoice, waiting charge
the language school: course fee, registration fee, refund
my kid's nursery: fees, late pick-up charge, deposit
the council: parking fine, council tax bill, permit fee
my insurer: premium, excess, claim, renewal price
the car rental place: damage charge, fuel charge, deposit, booking
the garage: repair bill, diagnostic fee, invoice
the concert ticket site: booking fee, ticket refund, service charge
the cinema: booking fee, membership, refund
the taxi app: cancellation fee, surge charge, ride refund
the ferry company: booking, change fee, vehicle charge
the music app: family plan, subscription, renewal
my yoga studio: class pass, membership fee, no-show fee
the wedding venue: deposit, booking, cancellation fee
the parking company: penalty charge, permit, overstay fee
the travel agent: booking fee, package holiday refund, amendment fee
the university: tuition fee, accommodation deposit, library fine
""",
    "zh": """
健身房：会员费、年卡、私教课费、押金
航空公司：行李费、改签费、机票退款、选座费
房东：押金、房租、违约金
物业：物业费、停车费、滞纳金
电信公司：话费、月租、流量费、套餐费
电力公司：电费、滞纳金、账单
燃气公司：燃气费、开户费、账单
酒店：房费、押金、预订、服务费
民宿：订金、清洁费、押金
牙科诊所：治疗费、挂号费、预约费
宠物医院：诊疗费、疫苗费、住院押金
驾校：学费、补考费、报名费
装修公司：定金、尾款、设计费
搬家公司：搬运费、订金、加价
培训机构：课时费、学费、退费
幼儿园：保育费、伙食费、押金
视频网站：会员费、自动续费、包月费
保险公司：保费、理赔款、续保费
停车场：停车费、月卡费、罚款
4S店：保养费、维修费、定金
旅行社：团费、订金、签证费
租车公司：车损费、押金、油费
瑜伽馆：会员卡、课时费、年费
电影院：会员卡、退票费、服务费
学校：学费、住宿费、资料费
婚庆公司：定金、违约金、服务费
""",
}

#: The shop itself (the desk's own business) and its own service words.
THE_SHOP_TEXT: dict[Lang, str] = {
    "en": """
you: order, refund, delivery fee, return
your store: order, refund, shipping charge, invoice
your website: order, membership fee, delivery charge, gift card
your shop: refund, order, restocking fee, parcel
your app: order, delivery fee, refund, coupon
your company: invoice, refund, return shipping fee, order
this shop: refund, delivery charge, order
the seller: refund, order, replacement, shipping fee
your support team: refund, return, exchange, order
your courier: delivery fee, parcel, redelivery charge
the courier: delivery fee, parcel, redelivery charge
the delivery driver: parcel, delivery charge, order
""",
    "zh": """
你们：订单、退款、运费、货款
你们店：退款、运费、订单、发票
贵店：货款、退款、运费、退货运费
你们商城：会员费、订单、优惠券、退款
你们平台：配送费、退款、订单、包裹
店里：退款、运费、货款
商家：退款、运费、换货、餐费
卖家：退款、退货运费、货款、换货
客服：退款、订单、换货、运费
快递员：运费、包裹、快递费
骑手：配送费、外卖餐费、订单
""",
}


#: The shop's own service words for :data:`NO_PARTY_SHAPES` (nothing another business sells).
UNNAMED_WORDS_TEXT: dict[Lang, str] = {
    "en": "order, refund, delivery fee, shipping charge, restocking fee, return shipping fee, "
    "order refund, redelivery charge, refund for the shoes, refund for my order, express delivery "
    "charge, order total, gift card, parcel, return, replacement order",
    "zh": "订单、退款、运费、货款、退货运费、配送费、订单退款、鞋子的退款、退货退款、"
    "快递费、订单金额、包裹、换货、外卖餐费",
}


#: Shapes where another business is only mentioned (the story's gym, landlord or 物业) and
#: the ask is about ``{word}``, a thing bought from the shop: the desk's own customer service.
MENTIONED_SHAPES: dict[Lang, tuple[str, ...]] = {
    "en": (
        "{who} said the {word} I bought is fine, but where is my refund for it?",
        "the courier left the {word} I ordered with {who}, can you send it again?",
        "I need the {word} I ordered before my appointment with {who} on Friday. Where is it?",
        "{who} recommended the {word}, so I ordered it here, and it arrived broken. Can I return "
        "it?",
        "Paid {who} already this month so money is tight: when will the refund for the {word} "
        "I sent back come?",
        "had to cancel with {who} cos i waited in all day for the {word} i ordered. where is it??",
    ),
    "zh": (
        "{who}的人说我买的{word}没问题，可我申请的退款到哪了？",
        "快递员把我买的{word}放到{who}那儿了，能重新派送吗？",
        "下周要去{who}，我买的{word}能在那之前送到吗？",
        "{who}推荐的{word}，我在你们这买了，结果收到是坏的，能退吗？",
        "这个月刚交完{who}的钱，手头紧，我退回去的{word}什么时候退款？",
    ),
}

#: Things bought from the shop, for :data:`MENTIONED_SHAPES`.
MENTIONED_ITEMS_TEXT: dict[Lang, str] = {
    "en": "toothbrush heads, running shoes, kettle, phone case, winter jacket, blender, desk "
    "lamp, yoga mat, suitcase, baby monitor, printer ink, bath towels",
    "zh": "电动牙刷、跑鞋、电水壶、手机壳、羽绒服、榨汁机、台灯、瑜伽垫、行李箱、婴儿监视器、"
    "墨盒、浴巾",
}


def _table(text: str) -> dict[str, tuple[str, ...]]:
    """``who: word, word`` lines (Chinese: ``who：word、word``) as who -> words."""
    pairs = (re.split(r": |：", line, maxsplit=1) for line in text.strip().splitlines())
    return {who: tuple(re.split(r", |、", words)) for who, words in pairs}


#: Another business -> its service words (parsed from :data:`OTHER_BUSINESSES_TEXT`).
OTHER_BUSINESSES = {lang: _table(text) for lang, text in OTHER_BUSINESSES_TEXT.items()}
#: The shop -> its own service words (parsed from :data:`THE_SHOP_TEXT`).
THE_SHOP = {lang: _table(text) for lang, text in THE_SHOP_TEXT.items()}
#: The shop's words for :data:`NO_PARTY_SHAPES` (parsed from :data:`UNNAMED_WORDS_TEXT`).
UNNAMED_WORDS = {lang: tuple(re.split(r", |、", text)) for lang, text in UNNAMED_WORDS_TEXT.items()}
#: Things bought from the shop (parsed from :data:`MENTIONED_ITEMS_TEXT`).
MENTIONED_ITEMS = {
    lang: tuple(re.split(r", |、", text)) for lang, text in MENTIONED_ITEMS_TEXT.items()
}

#: The weight of these rows in the learned tier's fit (others weigh 1): at full weight they
#: taught the n-grams that a bill, a fee or a deposit is someone else's even in the eval's
#: own in-scope asks (round 15: held-out accuracy -0.004 to -0.006); at 0.35 item 9's spent
#: families still gain and held-out accuracy stays within 0.003.
ROW_WEIGHT = 0.35

#: The labelled set's names of the four sides: their sources are ``<name>/<lang>``.
SIDES = ("oos_service_other", "cs_service_own", "cs_service_unnamed", "cs_service_mentioned")

#: Fills per shape and side (at most).
PER_SHAPE = 18


def _stable(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:8], "big")


Tables = dict[Lang, dict[Split, dict[str, tuple[str, ...]]]]


def _filled(
    shapes_of: dict[Lang, tuple[str, ...]], table: dict[Lang, dict[str, tuple[str, ...]]], tag: str
) -> Tables:
    """Each shape filled with :data:`PER_SHAPE` (who, word) pairs of ``table`` at most, picked by
    a stable hash; a shape is the phrasing family ``<tag><index>``, all in the ``tune`` split."""
    filled: Tables = {}
    for lang, shapes in shapes_of.items():
        pairs = [(who, word) for who, words in table[lang].items() for word in words]
        families = filled.setdefault(lang, {}).setdefault("tune", {})
        for s, shape in enumerate(shapes):
            ranked = sorted(pairs, key=lambda pair: _stable("owner", shape, *pair))
            texts = [shape.format(who=who, word=word) for who, word in ranked]
            families[f"{tag}{s}"] = tuple(
                t[:1].upper() + t[1:] if k % 3 == 0 else t for k, t in enumerate(texts[:PER_SHAPE])
            )
    return filled


def owner_tables() -> Iterator[tuple[str, Route, Tables]]:
    """The four sides as (name of :data:`SIDES`, route, language -> split -> family -> texts),
    for :func:`~.labelled_set.written_rows`: each shape of :data:`OWNER_SHAPES` filled with
    another business and its service words (fallback) and with the shop and its own (customer
    service); each of :data:`NO_PARTY_SHAPES` with the shop's words and each of
    :data:`MENTIONED_SHAPES` with another business and a thing bought from the shop (customer
    service). A shape's first three sides are one phrasing family (``<index>``), a mentioned
    shape one of its own (``m<index>``)."""
    cs = Route("customer_service")
    unnamed = {lang: {"": words} for lang, words in UNNAMED_WORDS.items()}
    mentioned = {
        lang: {who: MENTIONED_ITEMS[lang] for who in others}
        for lang, others in OTHER_BUSINESSES.items()
    }
    yield SIDES[0], FALLBACK, _filled(OWNER_SHAPES, OTHER_BUSINESSES, "")
    yield SIDES[1], cs, _filled(OWNER_SHAPES, THE_SHOP, "")
    yield SIDES[2], cs, _filled(NO_PARTY_SHAPES, unnamed, "")
    yield SIDES[3], cs, _filled(MENTIONED_SHAPES, mentioned, "m")


def owner_rows() -> Iterator[LabelledRequest]:
    """The four sides' rows (:func:`owner_tables`), tune only; sources ``<side>/<lang>``,
    families ``owner.<lang>.<shape>``. In round 16's candidates each weighed
    :data:`ROW_WEIGHT` in the fit."""
    for name, route, tables in owner_tables():
        yield from written_rows(tables, route, name, "owner")
