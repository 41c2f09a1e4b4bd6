"""Training data for issue 46 item 9: questions about a service product in general, and real
customer-service asks that name the same products and fees (added 2026-12-05, round 4).

Why. The learned tier had seen few questions about banking, telecom, insurance or travel
products *in general* (what a card earns, how a plan works, an extra put on a flight), so the
words "card", "fee", "flight" alone carried it to customer service. Hand-written veto rules
fitted their own phrasings and did not carry to new ones (round 3). Here the model is shown many
such questions as ``fallback``, next to many customer asks as ``customer_service`` that name the
same nouns (a bag fee, cashback, an insurance add-on, a warranty, a top-up) with the customer's
own order, booking or charge, so that it learns the difference from the rest of the sentence.

Rows come from templates filled from the pools below (a stable hash picks the fills; faker,
seeded per template, writes order numbers, references, amounts and cities). Each template is
one phrasing family and lies wholly on one side of the tune/test split
(:func:`~orchestrator.classifier.labelled_set.family_split`), so the held-out half of these rows
measures phrasings the model never saw. Nothing here was written from the held-out round-4
families (``tests/data/classifier_oos_families_test4.json``).

Status (2026-12-05): NOT yet part of ``labelled_set.build_labelled_set``
and not in the shipped model. A model fitted with these rows (tune split, 7,649 rows) improved
item 9 on the dev families and the labelled set's fallback recall, but regressed three existing
classifier tests of other kinds (review-queue framings, a Chinese 审核进度 status ask, ids in a
status ask), so it was not shipped; ``benchmarks/results/classifier_oos_round4_2026-12-05.md``
has the figures. To use them: add ``*product_rows()`` to the rows of ``build_labelled_set``
and refit (``orchestrator classifier fit``).

It lives in ``benchmarks/`` (moved from ``orchestrator/classifier/`` on 2026-12-06, issue 48:
the library holds no code that nothing calls); to ship the rows, move it back beside
``labelled_set.py`` with the hook-up above.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from functools import partial
from string import Formatter
from typing import TYPE_CHECKING

from faker import Faker

from orchestrator.classifier.labelled_phrases import MODERATION_WRAPPERS, Lang
from orchestrator.routes import Route

if TYPE_CHECKING:
    from orchestrator.classifier.labelled_set import LabelledRequest

CS, FB = Route("customer_service"), Route("fallback")

#: Fills per template (at most): 60 templates x 14 ~ 840 rows a language and route, about
#: half of them in each split (the labelled set keeps 400 per source and split).
PER_TEMPLATE = 14

#: Pools of slot values, by language. ``p``/``q``: a product with its article; ``b``: one no
#: desk of ours sells (no card or account: asking for one is a banking desk's business);
#: ``pn``: a product named as a kind; ``extra``: something added to a trip; ``trip``: what it
#: is added to; ``firms``: a kind of provider; ``term``: a product term; ``fee``: a charge;
#: ``addon``: an add-on bought with an order; ``item``: goods; ``pay``: where money goes back;
#: ``own``: the customer's own membership or account with the shop.
POOLS: dict[Lang, dict[str, tuple[str, ...]]] = {
    "en": {
        "p": (
            "a cashback credit card", "a premium credit card", "a travel credit card",
            "a student bank account", "a high-interest savings account", "a fixed-rate mortgage",
            "a personal loan", "a balance transfer card", "an arranged overdraft",
            "a prepaid debit card", "a joint bank account", "a store card",
            "an unlimited data plan", "a pay-as-you-go SIM", "a family phone plan",
            "fibre broadband", "a 5G contract", "an eSIM", "a SIM-only deal",
            "travel insurance", "pet insurance", "home insurance", "car insurance",
            "life insurance", "phone insurance", "an extended warranty", "dental cover",
            "a frequent flyer membership", "a rail card", "a hotel loyalty scheme",
            "an airport lounge membership", "a buy now pay later plan",
        ),
        "b": (
            "an unlimited data plan", "a pay-as-you-go SIM", "a family phone plan",
            "fibre broadband", "a 5G contract", "a roaming pass", "travel insurance",
            "pet insurance", "home insurance", "car insurance", "phone insurance",
            "a gym membership", "a rail card", "an airport lounge membership",
            "a streaming bundle", "a satellite TV package",
        ),
        "pn": (
            "credit cards", "savings accounts", "mortgages", "car loans", "overdrafts",
            "mobile phone plans", "broadband deals", "data bundles", "roaming packages",
            "travel insurance", "health insurance", "car insurance", "extended warranties",
            "airline tickets", "checked bags", "seat upgrades", "hotel rooms", "rental cars",
            "rail passes", "loyalty points", "air miles", "gift cards", "store cards",
        ),
        "extra": (
            "a checked bag", "extra legroom", "a window seat", "lounge access",
            "a vegetarian meal", "breakfast", "a late checkout", "a child seat",
            "fast track security", "onboard wifi", "a sea view", "an airport transfer",
            "priority boarding", "a second suitcase", "a ski bag", "a bigger car",
            "an upgrade to premium economy", "a bottle of champagne in the room",
        ),
        "trip": (
            "flight", "train ticket", "hotel stay", "cruise", "holiday", "rental car",
            "ferry crossing", "city break", "coach trip", "flight to Madrid",
        ),
        "firms": (
            "banks", "airlines", "insurers", "mobile networks", "broadband providers",
            "hotels", "car rental firms", "credit card companies", "big retailers",
            "online shops", "courier companies", "energy suppliers",
        ),
        "term": (
            "APR", "a credit limit", "the excess on an insurance policy", "a no-claims discount",
            "compound interest", "a chargeback", "a grace period", "a fare class", "a data cap",
            "a cooling-off period", "a restocking fee", "a deductible", "an overdraft limit",
            "price protection", "a credit score", "a balance transfer fee", "a roaming charge",
        ),
        "fee": (
            "bag fee", "delivery fee", "late fee", "annual fee", "restocking fee",
            "foreign transaction fee", "service charge", "seat selection fee",
            "cancellation fee", "booking fee", "roaming charge", "processing fee",
            "express shipping charge", "insurance add-on",
        ),
        "addon": (
            "extended warranty", "gift wrap", "insurance add-on", "express shipping",
            "protection plan", "installation service", "priority delivery", "data add-on",
        ),
        "item": (
            "headphones", "phone case", "charger", "jacket", "blender", "backpack", "kettle",
            "desk lamp", "running shoes", "smart watch", "suitcase", "router",
        ),
        "pay": ("card", "credit card", "bank account", "wallet", "original payment method"),
        "own": (
            "membership", "premium membership", "loyalty account", "gold account",
            "subscription", "store card", "rewards account", "plus membership",
        ),
    },
    "zh": {
        "p": (
            "白金信用卡", "留学生信用卡", "房贷", "车贷", "定期存款", "理财产品", "大额存单",
            "手机套餐", "国际漫游套餐", "宽带", "5G套餐", "流量卡", "旅游保险", "重疾险", "车险",
            "宠物保险", "医疗险", "延保服务", "机场贵宾厅会员", "航空公司会员", "酒店会员卡",
            "ETC卡", "出国用的银行卡", "意外险", "家庭财产保险", "手机碎屏险",
        ),
        "b": (
            "手机套餐", "国际漫游套餐", "宽带", "5G套餐", "流量卡", "旅游保险", "车险", "宠物保险",
            "医疗险", "机场贵宾厅会员", "健身卡", "高铁会员", "视频会员", "家庭财产保险",
        ),
        "extra": (
            "托运行李", "靠窗座位", "早餐", "接机服务", "儿童座椅", "机上餐食", "贵宾休息室",
            "延迟退房", "额外行李额", "优先登机", "海景房", "一日游", "接送站服务", "滑雪装备",
        ),
        "trip": ("机票", "航班", "酒店预订", "高铁票", "邮轮行程", "租车", "旅行团", "自由行"),
        "firms": (
            "银行", "航空公司", "保险公司", "运营商", "酒店", "租车公司", "电商平台", "快递公司",
        ),
        "term": (
            "年化利率", "信用额度", "免赔额", "等额本息", "复利", "宽限期", "犹豫期", "退票费",
            "征信", "滞纳金", "里程累积", "保费", "流量封顶", "预授权",
        ),
        "fee": (
            "行李费", "运费", "配送费", "滞纳金", "年费", "手续费", "服务费", "退票费",
            "选座费", "保险费", "会员费", "包装费",
        ),
        "addon": ("延保", "运费险", "包装服务", "安装服务", "加急配送", "流量包", "会员"),
        "item": ("耳机", "手机壳", "充电器", "外套", "电饭煲", "背包", "台灯", "运动鞋", "手表"),
        "pay": ("银行卡", "信用卡", "原支付账户", "余额"),
        "own": ("会员", "年卡", "积分账户", "超级会员", "订阅", "会员卡"),
    },
}  # fmt: skip

#: Questions about a product in general, and asks for a product or extra no desk of ours sells:
#: ``fallback``. One template = one phrasing family.
OUT_OF_SCOPE: dict[Lang, tuple[str, ...]] = {
    "en": (
        "what should I know before getting {p}",
        "is {p} a good idea for someone on a low income",
        "how does {p} work",
        "what are the main benefits of {p}",
        "what are the risks of {p}",
        "is {p} worth paying for",
        "how much does {p} usually cost",
        "who actually needs {p}",
        "can you compare {p} with {q}",
        "which is better, {p} or {q}",
        "I'm trying to decide whether to get {p}, any thoughts",
        "what's the catch with {p}",
        "explain {p} like I'm new to this",
        "what questions should I ask before signing up for {p}",
        "how do I find the cheapest {pn}",
        "which {firms} have the best deals on {pn}",
        "why do {firms} charge so much for {pn}",
        "how do {firms} decide what to charge for {pn}",
        "are {firms} allowed to change the price of {pn} whenever they like",
        "what does {term} mean",
        "can someone explain {term} to me",
        "how is {term} worked out",
        "get me {b}",
        "I'd like to sign up for {b}",
        "I want to apply for {b}",
        "set me up with {b}",
        "add {extra} to my {trip}",
        "can I get {extra} on my {trip}",
        "please book {extra} for my {trip} next week",
        "upgrade my {trip} with {extra}",
        "how much is {extra} on a {trip} usually",
        "is {extra} normally included with a {trip}",
        "do I need {p} for a trip to {country}",
        "what's a sensible monthly budget for {pn}",
        "if I had {p}, would I save money",
        "my sister asks whether {p} makes sense for her, what would you say",
        "what happens if you cancel {p} early",
        "what are the rules on {pn} in the EU",
        "what's the minimum age for {p}",
        "what do I need to qualify for {p}",
        "how long does it take to get approved for {p}",
        "are online reviews of {firms} trustworthy",
        "what's the price difference between {p} and {q}",
        "is it cheaper to get {p} online or in person",
        "what mistakes do people make with {pn}",
        "how have {pn} changed in the last ten years",
        "is {p} better value in {country} than here",
        "give me a quick summary of how {pn} are priced",
        "what's the smartest way to use {p}",
        "do {firms} make much profit on {pn}",
        "could you find me {b} with no fees",
        "where can I buy {extra} for my {trip}",
        "I'm a nurse working nights, is {p} right for me",
        "what fees come with {p} in general",
        "what are the alternatives to {p}",
        "what do experts recommend instead of {p}",
        "how do you cancel {p} with most providers",
        "what's a reasonable price for {extra} these days",
    ),
    "zh": (
        "{p}有什么优缺点",
        "{p}到底有没有必要办",
        "{p}一般怎么收费",
        "办{p}需要什么条件",
        "{p}是怎么运作的",
        "{p}和{q}哪个好",
        "{p}有哪些坑要避开",
        "帮我办一个{b}",
        "我想申请{b}",
        "给我的{trip}加{extra}",
        "{trip}能加{extra}吗",
        "{extra}一般要多少钱",
        "{term}是什么意思",
        "{term}怎么计算",
        "{firms}为什么收费这么高",
        "{firms}一般怎么定价",
        "{p}适合什么样的人",
        "买{p}之前要考虑什么",
        "年轻人有必要买{p}吗",
        "{p}的申请流程是怎样的",
        "{p}中途取消会怎么样",
        "在国外用{p}方便吗",
        "大家都说{p}不划算，是真的吗",
        "{p}每个月大概花多少钱",
        "怎么挑选合适的{p}",
        "帮我找一个便宜的{b}",
        "{p}的价格这几年涨了吗",
        "我妈想办{p}，你觉得可以吗",
        "{p}和{q}有什么差别",
        "去{country}旅游需要{p}吗",
        "给我订一个{extra}",
        "{extra}值不值得加钱买",
        "订{trip}的时候怎么选{extra}",
        "{firms}一般多久能处理完申请",
        "{term}对普通人有什么影响",
        "上班族适合办哪种{p}",
        "{p}有没有年龄限制",
        "怎么用{p}最省钱",
        "{p}有哪些替代方案",
        "{firms}的{term}是怎么规定的",
    ),
}

#: The customer's own order, charge, refund or booking gone wrong, naming the same products and
#: fees: ``customer_service``. ``oid``/``ref``/``amount``/``day``/``city`` come from faker.
CUSTOMER_ASKS: dict[Lang, tuple[str, ...]] = {
    "en": (
        "refund the {fee} on order {oid}",
        "I was charged the {fee} twice on order {oid}",
        "the {fee} on my last bill is wrong, please fix it",
        "I paid for {extra} on booking {ref} but never got it, refund me",
        "cancel the {addon} I added to order {oid}",
        "where is the cashback for order {oid}",
        "my card was charged {amount} for order {oid} but the order shows as failed",
        "you took {amount} from my account for a subscription I cancelled",
        "the refund for order {oid} still hasn't reached my {pay}",
        "I returned order {oid} on {day} and have heard nothing since",
        "order {oid} arrived damaged, I want a replacement",
        "the {item} from order {oid} is missing from the box",
        "please change the delivery address on order {oid} to {city}",
        "why was I charged a {fee} on order {oid}",
        "the discount on order {oid} was not applied",
        "I can't see the loyalty points for order {oid}",
        "my top-up of {amount} has not shown up",
        "the tracking for order {oid} hasn't moved since {day}",
        "I was told the {fee} would be waived for order {oid}",
        "the price of order {oid} dropped the next day, can I get the difference back",
        "please cancel order {oid} before it ships",
        "I ordered a {item} but received the wrong one, order {oid}",
        "I need an invoice for order {oid}",
        "my account was locked right after I paid for order {oid}",
        "the {extra} I paid for on reservation {ref} is not showing",
        "get me a refund for the {fee}, the service was never provided",
        "your site charged me {amount} in fees I didn't agree to",
        "I was billed for the {addon} on order {oid} but I never asked for it",
        "please remove the {fee} from my account, it was a mistake",
        "the courier lost order {oid}, what now",
        "the {addon} I bought with order {oid} doesn't show on my account",
        "I returned the {item} under your return policy and I'm still waiting for {amount}",
        "booking {ref} was cancelled by you, when do I get my {amount} back",
        "the {item} I got in order {oid} stopped working after two days",
        "order {oid} says delivered but it never came to {city}",
        "I got charged {amount} for the {addon} though I unticked it at checkout",
        "you promised cashback on order {oid} and it never came",
        "the {fee} was taken from my {pay} without warning",
        "I want to return the {item} from order {oid}, how do I start",
        "my payment of {amount} went through twice for order {oid}",
        # the customer's own booking, account, policy or bill: an action on it, or what went
        # wrong with it (the labelled set's banking and travel desks serve these)
        "please change the dates on my booking {ref} to {day}",
        "my flight {ref} was cancelled and I want my money back",
        "my suitcase didn't arrive with flight {ref}",
        "the hotel says it has no reservation under {ref}",
        "I was charged for a hotel night I cancelled, booking {ref}",
        "what did I spend on my {pay} last month",
        "what's the interest rate on my savings account right now",
        "my insurance claim {ref} has been pending since {day}",
        "I need a copy of my last phone bill",
        "update the billing address on my account to {city}",
        "why is my account balance {amount} lower than it should be",
        "my direct debit for {amount} bounced",
        "I lost my card, please block it",
        "my new card hasn't arrived yet",
        "I'd like to raise the credit limit on my card",
        "can you confirm my booking {ref} for {day}",
        "my rental car booking {ref} was charged {amount} too much",
        "the seat I paid for on booking {ref} was given to someone else",
        # the customer's own membership or account with the shop, asked about
        "what perks do I get with my {own}",
        "does my {own} include free delivery",
        "when does my {own} renew",
        "how many points are on my {own}",
        "what's included in my {own} with you",
        "can I pause my {own} for a month",
    ),
    "zh": (
        "订单{oid}的{fee}请退给我",
        "订单{oid}被扣了两次钱",
        "我的退款还没到账，订单号{oid}",
        "订单{oid}的返现一直没到",
        "我买的{addon}在订单里找不到",
        "充值了{amount}元一直没到账",
        "订单{oid}显示已签收但我没收到",
        "我没买{addon}为什么扣了钱",
        "订单{oid}降价了能退差价吗",
        "帮我取消订单{oid}",
        "订单{oid}的{item}坏了，要换货",
        "收货地址填错了，订单{oid}帮我改成{city}",
        "订单{oid}的积分没加上",
        "{fee}扣错了，帮我退回来",
        "订单{oid}少发了一件{item}",
        "会员自动续费扣了{amount}元，退给我",
        "快递单{oid}好几天没更新了",
        "付款成功了订单{oid}还显示未支付",
        "为什么订单{oid}多收了{fee}",
        "我取消了订单{oid}，钱什么时候退到{pay}",
        "订单{oid}的{addon}我没勾选却被收费了",
        "退货寄回去了，{amount}元退款还没到{pay}",
        "订单{oid}的{item}发错颜色了",
        "我在你们这买的{addon}怎么用不了",
        "订单{oid}付了{fee}但是没有发货",
        "订单{oid}的优惠券没用上，多扣了{amount}元",
        "帮我查一下订单{oid}到哪了",
        "订单{oid}的发票怎么开",
        "我的账户被冻结了，订单{oid}付不了款",
        "{item}收到就是坏的，订单号{oid}",
        "我的机票{ref}被取消了，钱什么时候退",
        "帮我把预订{ref}的日期改到{day}",
        "我的行李没有跟航班{ref}一起到",
        "酒店说查不到我的预订{ref}",
        "我上个月在{pay}上花了多少钱",
        "我的理赔申请{ref}一直没有处理",
        "我的卡丢了，帮我挂失",
        "我的账户余额少了{amount}元",
        "我的话费账单多扣了{amount}元",
        "帮我查一下预订{ref}有没有成功",
        "我的{own}有哪些权益",
        "我的{own}什么时候到期",
        "我的{own}包含免运费吗",
        "我的{own}里还有多少积分",
    ),
}

#: Countries for ``{country}``.
COUNTRIES: dict[Lang, tuple[str, ...]] = {
    "en": ("Japan", "Canada", "Spain", "Thailand", "Mexico", "Italy", "Brazil", "Kenya"),
    "zh": ("日本", "泰国", "美国", "法国", "澳大利亚", "新加坡", "英国", "意大利"),
}

_LOCALES: dict[Lang, str] = {"en": "en_US", "zh": "zh_CN"}


def _stable(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("|".join(parts).encode()).digest()[:8], "big")


def _faked(fake: Faker, lang: Lang) -> dict[str, str]:
    """The faker-written slots of one row (order number, reference, amount, day, city)."""
    amount = fake.pydecimal(left_digits=3, right_digits=2, positive=True, min_value=5)
    return {
        "oid": fake.bothify("#####" if lang == "zh" else "##-####"),
        "ref": fake.bothify("??###").upper(),
        "amount": f"{amount}" if lang == "zh" else f"${amount}",
        "day": fake.day_of_week(),
        "city": fake.city(),
        "country": fake.random_element(COUNTRIES[lang]),
    }


def fill(template: str, lang: Lang, t: int) -> Iterator[str]:
    """Up to :data:`PER_TEMPLATE` distinct texts of one template: its pool slots filled in a
    stable-hash order (``q`` is a second product, never the same as ``p``), the rest by a faker
    seeded with the template's number."""
    fake = Faker(_LOCALES[lang])
    fake.seed_instance(t)
    slots = [s for _, s, _, _ in Formatter().parse(template) if s]
    pools = POOLS[lang]
    seen: set[str] = set()
    for k in range(PER_TEMPLATE * 3):
        values = _faked(fake, lang)
        for slot in slots:
            if slot in values:
                continue
            pool = pools["p" if slot == "q" else slot]
            ranked = sorted(pool, key=partial(_stable, template, slot))
            values[slot] = ranked[(k + (len(pool) // 2 if slot == "q" else 0)) % len(pool)]
        text = template.format(**values)
        if text not in seen:
            seen.add(text)
            yield text
        if len(seen) >= PER_TEMPLATE:
            return


def product_rows() -> Iterator[LabelledRequest]:
    """The rows of both tables: ``oos_product/<lang>`` (fallback) and ``cs_product/<lang>``
    (customer service); a template's rows share its family and its side of the split. One
    customer ask in three also comes wrapped for moderation (``cs_product_post/<lang>``)."""
    for row in _rows():
        yield row
        if row.route == CS and _stable("post?", row.id) % 3 == 0:
            yield _as_post(row)


def _as_post(row: LabelledRequest) -> LabelledRequest:
    """A customer ask submitted *for moderation* (one in three), as the labelled set does with
    the customer texts of its data files (``wrapped_customer_text``): the framing, not the
    customer's words, tells the route. Its own source, so that the other sources' rows stay."""
    wrappers = [w for w in MODERATION_WRAPPERS[row.lang][row.split] if w is not None]
    wrapper = wrappers[_stable("wrap", row.id) % len(wrappers)]
    return row.model_copy(
        update={
            "id": f"cs_product_post:{row.id}",
            "text": wrapper.format(post=row.text),
            "route": Route("content_moderation"),
            "source": f"cs_product_post/{row.lang}",
        }
    )


def _rows() -> Iterator[LabelledRequest]:
    from orchestrator.classifier.labelled_set import LabelledRequest, family_split

    tables = (("oos_product", FB, OUT_OF_SCOPE), ("cs_product", CS, CUSTOMER_ASKS))
    for name, route, table in tables:
        for lang, templates in table.items():
            for t, template in enumerate(templates):
                family = f"{name}.{lang}.{t}"
                split = family_split(family)
                for k, text in enumerate(fill(template, lang, t)):
                    yield LabelledRequest(
                        id=f"{name}:{lang}.{t}.{k}",
                        text=text,
                        route=route,
                        lang=lang,
                        source=f"{name}/{lang}",
                        split=split,
                        template=f"{name}.{lang}.{split}.{t}",
                        family=family,
                    )
