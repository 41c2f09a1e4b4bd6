"""Unseen phrasings of each failing kind of issue 14, written for this test only.

None of these strings is in the labelled set or in ``routes.toml``; the fit never sees them.
Each entry is ``(text, expected route)``; ``ATTACHED`` entries also carry attachment names.
"""

from __future__ import annotations

from orchestrator.routes import Route

CS, MOD, XL, FB = (
    Route("customer_service"),
    Route("content_moderation"),
    Route("excel_report"),
    Route("fallback"),
)

#: Moderation asked in other words, about a harmless post (English and Chinese).
MODERATION_OTHER_WORDS: list[tuple[str, Route]] = [
    ("Is this fine to go up on our page: my parcel came a day early, great job", MOD),
    ("Can you vet this before it is shown publicly: the checkout button is hard to find", MOD),
    ("Please decide if this reply may remain online: loved the new menu, will come back", MOD),
    ("Mind checking if this review can be published: the delivery guy was very polite", MOD),
    ("Any problem with letting this comment appear? my order arrived cold but they refunded", MOD),
    ("Clear this for posting or not: the app keeps logging me out after the update", MOD),
    ("Okay to keep this under the video? great tutorial, thanks for sharing", MOD),
    ("Is the following user text acceptable to display: happy birthday to my sister!", MOD),
    ("Should this stay up on the board: does anyone know when the store opens on sunday", MOD),
    ("Judge whether we can show this to other members: the refund took two weeks", MOD),
    ("帮我看看这条评论能不能公开：物流很快，包装也很好", MOD),
    ("这句话可以放在商品页下面吗：味道一般，分量还行", MOD),
    ("请确认一下这段留言是否可以保留：客服回复挺及时的", MOD),
    ("下面这条用户发言可以上墙吗：今天天气真好，出去走走", MOD),
    ("这条回帖能不能显示出来：快递员态度很好，点赞", MOD),
    ("麻烦判断下这个帖子适不适合公开：这家店的奶茶太甜了", MOD),
]

#: Out-of-scope questions that contain a service word: they must fall back.
OUT_OF_SCOPE_SERVICE_WORD: list[tuple[str, Route]] = [
    ("write me a poem about a parcel lost at sea", FB),
    ("what is the history of the postal delivery service", FB),
    ("who invented the credit card", FB),
    ("give me a fun fact about airports", FB),
    ("what rhymes with refund", FB),
    ("how do bees deliver pollen between flowers", FB),
    ("what is the tallest hotel in the world", FB),
    ("explain how a bank vault lock works in physics terms", FB),
    ("tell me a story about a pizza delivery robot", FB),
    ("how many moons does jupiter have", FB),
    ("what year was the first online order ever placed", FB),
    ("recommend a podcast about history", FB),
    ("快递这个词最早出现在什么时候", FB),
    ("给我讲一个关于外卖的笑话", FB),
    ("信用卡是谁发明的", FB),
]

#: Negation of a cue word (English and Chinese): the negated route must not be chosen.
NEGATION: list[tuple[str, Route]] = [
    ("No need to moderate this, I just want my refund", CS),
    ("Don't review any posts, where is my package?", CS),
    ("please do not summarise anything, I was charged twice", CS),
    ("I don't need a report, my account is locked", CS),
    ("Don't check the comment, I need to change my delivery address", CS),
    ("Without any moderation, just tell me when my order ships", CS),
    ("不要审核，我只想查一下我的订单", CS),
    ("别做报表了，帮我退款", CS),
    ("无需审核，我的快递到哪了", CS),
    ("不用分析表格，我的花呗怎么还款", CS),
    ("不需要举报什么，我要修改收货地址", CS),
    ("不用审核这条，请帮我取消订单", CS),
]

#: Ties between two routes' rules: never acted on (always fallback).
TIES: list[tuple[str, Route]] = [
    ("contact attached", FB),
    ("service attached", FB),
    ("contact export", FB),
    ("agent attachment", FB),
    ("support team enclosed", FB),
    ("hotline uploaded", FB),
    ("operator attached", FB),
    ("complaint attached", FB),
    ("feedback attachment", FB),
    ("representative enclosed", FB),
    ("assistance uploaded", FB),
    ("call center export", FB),
]

#: Two intents in one request: (text, primary, secondary).
TWO_INTENTS: list[tuple[str, Route, Route]] = [
    ("Refund my last order and summarise the attached sheet", CS, XL),
    ("Cancel my subscription, and also chart the numbers in the spreadsheet", CS, XL),
    ("Where is my parcel? Also make a pivot of the workbook by region", CS, XL),
    ("Summarise this spreadsheet by month and refund the duplicate charge on my card", XL, CS),
    ("Build a chart from the excel file; then tell me why my payment failed", XL, CS),
    ("Reset my password and analyse the attached csv", CS, XL),
    ("帮我退款，另外把这个表格汇总一下", CS, XL),
    ("查一下我的快递，还有把附件表格做个统计", CS, XL),
    ("把这份报表汇总一下，顺便帮我取消订单", XL, CS),
    ("我的花呗还款失败了，同时帮我分析一下这个表格", CS, XL),
    ("Track my delivery and give me totals from the spreadsheet", CS, XL),
    ("Update my shipping address; also summarise the worksheet", CS, XL),
]

TWO_INTENTS_TEXTS: list[tuple[str, Route]] = [(t, first) for t, first, _ in TWO_INTENTS]

#: Order and ticket ids (not hashtags) vs real hashtags.
IDS_NOT_HASHTAGS: list[tuple[str, Route]] = [
    ("Order #A1234 never arrived", CS),
    ("my order #B7781 is late", CS),
    ("refund for order #12345 please", CS),
    ("ticket #ORD-2291 is still open, any news on my refund", CS),
    ("where is package #ZX9911", CS),
    ("invoice #INV2024001 was charged twice", CS),
    ("cancel order #C001234", CS),
    ("the parcel #AB12345 shows delivered but it is not here", CS),
    ("订单#A8812还没发货", CS),
    ("my delivery #D55120 has the wrong address", CS),
    ("payment for #P4410 failed", CS),
    ("return label for #R77001 please", CS),
]
HASHTAGS: list[str] = [
    "#blessed", "#mondays", "#covid19", "#nofilter", "#tbt", "#gameday", "#love", "#fail",
]  # fmt: skip

#: Long requests whose ask is only at the end (filler is neutral prose).
LONG_ASKS: list[tuple[str, Route]] = [
    ("I was charged twice for my order, please refund me.", CS),
    ("Where is my parcel? It should have arrived last week.", CS),
    ("Please summarise the attached spreadsheet by month.", XL),
    ("我要退款，订单一直没有发货。", CS),
    ("请审核这条帖子是否违规：你们都是垃圾", MOD),
    ("Can you reset my password, I am locked out of my account.", CS),
    ("请帮我把附件表格汇总成月度报表", XL),
    ("Is this comment OK to publish? you people are idiots", MOD),
    ("My card was declined at checkout, why?", CS),
    ("我的花呗为什么降额了", CS),
    ("Build a pivot of the workbook by region.", XL),
    ("Could you check my refund status for the returned shoes?", CS),
]
FILLER = (
    "The committee met on Tuesday to discuss the garden project. Several neighbours brought "
    "plants, and the weather stayed dry for most of the afternoon. "
)

# ---------------------------------------------------------------------------------------------
# Held-out phrasings written in session 4 (issue 14), after the training families of
# ``labelled_set.MODERATION_WRAPPERS`` / ``OOS_SERVICE_TEMPLATES`` were fixed and never
# used to choose anything: no fit, threshold or feature was tuned on them. The posts are
# harmless and read like customer-service text; the out-of-scope asks name a service word.

#: Moderation asked in yet other words (en and zh), about a harmless post.
MODERATION_OTHER_WORDS_2: list[tuple[str, Route]] = [
    ("Can we put this visitor note on the wall of fame: your courier saved my weekend", MOD),
    ("Is this okay to appear in the reviews carousel? shipping took ages but worth it", MOD),
    ("Please tell me whether this may be shown under the article: where is my refund??", MOD),
    ("Would it be alright to publish this customer quote: the app crashes at checkout", MOD),
    ("Moderation question, can this reply be visible: my card got declined twice today", MOD),
    ("Should I allow this to appear on the fan page: the delivery was late again", MOD),
    ("Does this comment pass our rules for the public feed: thanks for the fast refund", MOD),
    ("Is the following review fine to leave on the store page: parcel arrived damaged", MOD),
    ("是否可以把这条评论展示在首页：退款到账很快，谢谢", MOD),
    ("这条用户评价能发布到店铺主页吗：送餐太慢了，汤都洒了", MOD),
    ("请问这句留言可以公开吗：快递三天了还没到", MOD),
    ("这个回帖要不要放出来：客服态度一般，但问题解决了", MOD),
    ("帮我审一下能不能展示这条：我的订单怎么还没发货", MOD),
    ("这段话适合挂在评论区吗：外卖小哥送得很快", MOD),
]

#: Out-of-scope questions with a service word, phrased unlike any training template.
OUT_OF_SCOPE_SERVICE_WORD_2: list[tuple[str, Route]] = [
    ("sing me a song about my package", FB),
    ("what is the plural of parcel", FB),
    ("how fast can a delivery drone fly in theory", FB),
    ("which country uses the most credit cards per person", FB),
    ("draw me an ascii picture of a bank", FB),
    ("what did people use before paper receipts were invented", FB),
    ("is pizza healthier than a burger", FB),
    ("translate 'refund' into japanese", FB),
    ("why do couriers wear bright vests", FB),
    ("tell me something funny about airport queues", FB),
    ("用快递两个字造个句子", FB),
    ("外卖这个行业是哪一年出现的", FB),
    ("讲讲银行的起源", FB),
    ("给我写一段关于退款的绕口令", FB),
]

# ---------------------------------------------------------------------------------------------
# Held-out phrasings written in session 5 (2026-12-01), after that session's tune-only
# templates were added to ``labelled_set.OOS_SERVICE_TEMPLATES`` / ``ZH_OUT_OF_SCOPE``, in forms
# none of those templates has; never used to choose anything.

#: Out-of-scope asks that name a service word (or a route's cue word), third set.
OUT_OF_SCOPE_SERVICE_WORD_3: list[tuple[str, Route]] = [
    ("who would win a race, a cheetah or a delivery van", FB),
    ("summarise the plot of the movie cast away", FB),
    ("quiz me on european capitals before my flight", FB),
    ("what is the best way to fold a paper airplane", FB),
    ("explain compound interest the way a pirate would", FB),
    ("write a motivational quote for bank tellers", FB),
    ("which bird could carry the heaviest package", FB),
    ("how loud is a jet engine at the airport gate", FB),
    ("make a pun about online shopping carts", FB),
    ("is it true that gold bars are stored under new york", FB),
    ("外卖小哥和快递小哥谁更辛苦，说说你的看法", FB),
    ("网购对环境有什么影响", FB),
    ("给我推荐一本讲物流发展史的书", FB),
    ("发票上的防伪技术是怎么做到的", FB),
    ("用外卖两个字写一首藏头诗", FB),
    ("银行的金库一般建在地下多深", FB),
]


#: Very long or repetitive inputs: ``(text, expected route)``; the route is what a person reading
#: the text would pick (a pasted document with the ask at its start or end, one word or line
#: repeated, an endless run of one character or emoji).
def long_and_repetitive() -> list[tuple[str, Route]]:
    """Built on call (the texts are large)."""
    prose = FILLER * 2000  # about 270,000 characters of neutral prose
    return [
        ("refund " * 50_000, CS),
        ("退款" * 100_000, CS),
        ("Where is my parcel?\n" * 20_000, CS),
        ("我的快递到哪了？" * 30_000, CS),
        ("Please refund my order, it never arrived. " + prose, CS),
        (prose + " Please summarise the attached spreadsheet by region.", XL),
        ("请审核这条评论是否违规：" + "你们都是垃圾" * 20_000, MOD),
        ("a" * 300_000, FB),
        ("\U0001f642" * 200_000, FB),
        (" " * 100_000 + "where is my refund" + " " * 100_000, CS),
        ("lol " * 80_000, FB),
        ("hello?\n" * 30_000 + "my card was charged twice, please help", CS),
    ]
