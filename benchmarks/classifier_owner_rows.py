"""Whose service thing a request is about (issue 46 item 9, round 15): study rows for the
learned tier, in the shape of the labelled set's ``oos_service_word`` rows (:func:`owner_rows`).

Each template is one writing shape (a texting one-liner, voice dictation, a forwarded notice,
two numbered issues, a formal letter, a long backstory, code-switched Chinese...) with two
slots: ``{who}``, the party the customer deals with, and ``{word}``, a service word (a refund,
a bill, a fee, a booking). Filled with another business (:data:`OTHER_BUSINESSES`: a gym, an
airline, a landlord, 物业, 驾校...) and that business's words it is a question for someone else
and falls back; filled with the shop itself (:data:`THE_SHOP`: you, your store, 你们店...) and
the shop's words it is the desk's own customer service. The same shapes and many of the same
words (refund, charge, fee, membership, 退款, 会员费) sit on both sides, so the learned tier
learns from *who* is named, not from the service word.

Written for round 15 from the issue's description and kinds of business in general; the
round-15 held-out families (``classifier_oos_families_test15.json``) were never read. All rows
are for the ``tune`` split: the held-out split of the labelled set stays as it was, so the
eval's figures before and after a refit compare the same rows.

Status (2026-12-06, round 15): NOT part of ``labelled_set.build_labelled_set`` and not in the
shipped model. A refit with these rows at weight :data:`ROW_WEIGHT` raised item 9's figures on
every spent part and kept the eval's held-out guardrails (accuracy -0.0023, customer-service
precision not down), but 8 classifier unit tests of other kinds failed (compound asks, plain
parcel asks, round 12's gate), so it was not shipped;
``benchmarks/results/classifier_oos_round15_2026-12-06c.md`` has the figures. To use them: add
``*owner_rows()`` to the out-of-scope rows of ``build_labelled_set``, pass
``row_weight=[ROW_WEIGHT if r.source.startswith(SOURCES) else 1.0 for r in rows]`` to
``fitting.fit_all`` and refit.

It lives in ``benchmarks/`` (moved from ``orchestrator/classifier/`` on 2026-12-06, issue 48:
the library holds no code that nothing calls); to ship the rows, move it back beside
``labelled_set.py`` with the hook-up above.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from orchestrator.classifier.labelled_phrases import Lang, Split
from orchestrator.routes import FALLBACK, Route

if TYPE_CHECKING:
    from orchestrator.classifier.labelled_set import LabelledRequest

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
""",
}


def _table(text: str) -> dict[str, tuple[str, ...]]:
    """``who: word, word`` lines (Chinese: ``who：word、word``) as who -> words."""
    pairs = (re.split(r": |：", line, maxsplit=1) for line in text.strip().splitlines())
    return {who: tuple(re.split(r", |、", words)) for who, words in pairs}


#: Another business -> its service words (parsed from :data:`OTHER_BUSINESSES_TEXT`).
OTHER_BUSINESSES = {lang: _table(text) for lang, text in OTHER_BUSINESSES_TEXT.items()}
#: The shop -> its own service words (parsed from :data:`THE_SHOP_TEXT`).
THE_SHOP = {lang: _table(text) for lang, text in THE_SHOP_TEXT.items()}

#: The weight of these rows in the learned tier's fit (others weigh 1): at full weight they
#: taught the n-grams that a bill, a fee or a deposit is someone else's even in the eval's
#: own in-scope asks (round 15: held-out accuracy -0.004 to -0.006); at 0.35 item 9's spent
#: families still gain and held-out accuracy stays within 0.003.
ROW_WEIGHT = 0.35

#: The labelled set's sources of these rows (fallback, customer service).
SOURCES = ("oos_service_other/", "cs_service_own/")

#: Fills per shape and side (at most): 14 x 18 English and 11 x 18 Chinese rows on each side
#: (as many of the shop's own as of another business's, so that a shape leans to no side).
PER_SHAPE = {"other": 18, "own": 18}


def _stable(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:8], "big")


def owner_rows() -> Iterator[LabelledRequest]:
    """Each shape of :data:`OWNER_SHAPES` filled with another business and its service words
    (source ``oos_service_other/<lang>``, fallback) and with the shop and its own (source
    ``cs_service_own/<lang>``, customer service), :data:`PER_SHAPE` fills each, picked by a
    stable hash; every row in the ``tune`` split, a shape one phrasing family."""
    from orchestrator.classifier.labelled_set import written_rows

    sides = (
        ("other", OTHER_BUSINESSES, FALLBACK, SOURCES[0]),
        ("own", THE_SHOP, Route("customer_service"), SOURCES[1]),
    )
    for side, table, route, source in sides:
        filled: dict[Lang, dict[Split, dict[str, tuple[str, ...]]]] = {}
        for lang, shapes in OWNER_SHAPES.items():
            pairs = [(who, word) for who, words in table[lang].items() for word in words]
            families = filled.setdefault(lang, {}).setdefault("tune", {})
            for s, shape in enumerate(shapes):
                ranked = sorted(pairs, key=lambda pair: _stable("owner", shape, *pair))
                texts = [shape.format(who=who, word=word) for who, word in ranked]
                families[str(s)] = tuple(
                    t[:1].upper() + t[1:] if k % 3 == 0 else t
                    for k, t in enumerate(texts[: PER_SHAPE[side]])
                )
        yield from written_rows(filled, route, source.rstrip("/"), "owner")
