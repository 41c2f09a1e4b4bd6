"""The phrasings of the labelled request set (:mod:`orchestrator.classifier.labelled_set`):
wrappers, ask texts and requests written for it, by language and split. Each tuple is one
phrasing family, on one side of the split only (so a rule or threshold fitted on ``tune``
cannot have seen the phrasing of a ``test`` request)."""

from __future__ import annotations

from typing import Literal

Split = Literal["tune", "test"]
Lang = Literal["en", "zh"]

#: Review-request wrappers, by language and split: each wrapper is one phrasing family (its own
#: framing verbs and sentence shape); a family is on one side of the split only. ``{post}`` is
#: the post; ``None`` = bare post on the moderation channel.
MODERATION_WRAPPERS: dict[Lang, dict[Split, tuple[str | None, ...]]] = {
    "en": {
        "tune": (
            "Please review this post before it goes live:\n\n{post}",
            'Can you check whether this comment breaks our community guidelines? "{post}"',
            "Flagged by a user, needs a moderation decision: {post}",
            "Is this tweet OK to publish?\n{post}",
            "A user reported the following reply as abusive. Take a look: {post}",
            "Is it fine to leave this up on the forum? {post}",
            "Decide whether this reply can stay visible: {post}",
            "Mod check please - allowed or not? {post}",
            "Would this comment be acceptable on our page: {post}",
            "Quick moderation call on this one: {post}",
            "Can this go on the public wall? {post}",
            "Someone posted this in the group chat, should it be hidden? {post}",
            "Approve this user submission or not: {post}",
            "Is the following message safe to show other users? {post}",
            "Vet this caption before we publish it: {post}",
            "Does this post cross the line? {post}",
            "Okay to run this reader letter in the newsletter? {post}",
            "Before this testimonial shows on the landing page, is it acceptable: {post}",
            "Can this feedback be displayed publicly on the product page? {post}",
            "Check if this chat message is fit for the public lobby: {post}",
            "Is this review clean enough to publish: {post}",
            "Would our moderators allow this reply? {post}",
            "Green light or not for this forum post: {post}",
            "Have a look at this user comment and tell me if it can stay: {post}",
            "Is this bio appropriate for a public profile? {post}",
            "Pending comment, allow it on the blog? {post}",
            "Any reason to hold back this post from the feed? {post}",
            "Sanity check this before it appears in the thread: {post}",
            # added 2026-12-02 (tune): the post first or in the middle, the ask after it, and
            # the asker's role or the place the post would show up said first
            '"{post}" - left by a shopper on our store page. Fine to keep it up?',
            "As admin of a neighbourhood group I have to rule on this member post: {post}. "
            "Leave it or take it down?",
            "{post}\n\n^ came in as a reply on our live stream, should it stay?",
            "One of our buyers wrote the review below; may I delete it? '{post}'",
            "I look after the comments on a cooking blog. Would you remove this one: {post}",
            "Our spam filter held back this comment, release it? {post}",
            "A follower answered our announcement with '{post}'. Does it need to go?",
            "Community team here, can we publish the following or not? {post}",
            "User caption waiting for sign-off: {post}",
            "This came through the suggestions form for the notice wall - '{post}' - put it up?",
            None,
        ),
        "test": (
            "New item in the review queue, approve or remove?\n{post}",
            "Should we take this down? {post}",
            "Could you screen this user comment for hate speech or harassment: «{post}»",
            'Reported content: "{post}" - please assess.',
            "Does this violate the content policy? {post}",
            "Can I let this through to the comments section? {post}",
            "Keep or delete this forum reply: {post}",
            "Is this alright to appear under our video? {post}",
            "Safe to pin this message in the channel? {post}",
            "Let me know if this listing description is okay to show: {post}",
            "Can this stay in the public guestbook: {post}",
            "Approve for the community board? {post}",
            # added 2026-12-02 (test): shapes of the tune additions, in other words
            "Someone in our members' forum wrote this: '{post}' - let it stand or delete it?",
            "{post}\n(left under our latest product video; does it stay?)",
            "I manage the reviews for a small cafe. This one came in: {post}. Remove or keep?",
            None,
        ),
    },
    "zh": {
        "tune": (
            "请审核这条帖子：{post}",
            "这条评论是否违规？\n{post}",
            "用户举报了以下内容，请判断是否需要删除：{post}",
            "帮忙看一下这段话能不能发：{post}",
            "这条回复有没有问题，能通过吗？{post}",
            "这段文字可以公开显示吗：{post}",
            "看看这条动态要不要隐藏：{post}",
            "这句话放在群里合适吗？{post}",
            "请判断这条弹幕能否保留：{post}",
            "这条内容允许发布吗：{post}",
            "检查一下这个评论是否可以上线：{post}",
            "网友发了这个，需要处理吗？{post}",
            "这条买家评价能放到商品详情页吗：{post}",
            "帮我过一下这条回复，能发出去吗：{post}",
            "这段用户留言适合公开吗？{post}",
            "请看下这条帖子可不可以置顶展示：{post}",
            "这条弹幕发出去没问题吧：{post}",
            "评论区新来的这条要不要放行：{post}",
            "这条内容能不能在首页展示：{post}",
            "帮忙审一下这句话是否合规：{post}",
            # added 2026-12-02 (tune): 帖子在前、问题在后，或先说自己的身份
            "“{post}”——这是顾客在店铺主页留下的，要不要删掉？",
            "我负责管理一个业主群，有人发了这样一段：{post}，该不该撤回？",
            "这段留言被系统自动拦下来了，要放出来吗：{post}",
            "粉丝在我们的公告下面回复了“{post}”，需要处理吗",
            "{post}\n——以上是用户的评论，可以公开展示吗",
            "这条用户反馈能挂到官网的案例页吗：{post}",
            "作为版主，我该怎么处理这条回帖：{post}",
            None,
        ),
        "test": (
            "以下内容被举报，请复核：「{post}」",
            "这条微博要不要下架？{post}",
            "请判断这条留言是否包含攻击性或歧视性言论：{post}",
            "待审内容：{post}",
            "这个帖子需要屏蔽吗？\n{post}",
            "这条评论能放出来吗：{post}",
            "这条评价可以展示给其他用户看吗：{post}",
            "这条发言能不能上墙：{post}",
            "请确认这段话是否适合发布：{post}",
            # added 2026-12-02 (test)
            "有网友在直播间刷了这句：{post}，要不要禁言删除？",
            "“{post}”这条点评能留在小程序里吗",
            None,
        ),
    },
}

#: Ask texts that come with a spreadsheet, by language and split (one phrasing family each).
EXCEL_ASKS: dict[Lang, dict[Split, tuple[str, ...]]] = {
    "en": {
        "tune": (
            "Please turn the attached workbook into a short report.",
            "Summarise the data in this spreadsheet by month.",
            "Can you make a chart of the totals in the attached file?",
            "Build a pivot of sales by region from this.",
            "What are the key numbers in here?",
            "See attached.",
            "Give me the top five rows by revenue from this sheet.",
            "Compare this quarter with the last one using the table I sent.",
            "Which columns have missing values in this file?",
            "Turn these figures into a one-page summary.",
            "Average per customer, please, from the upload.",
            # added 2026-12-02 (tune): casual asks and an upload said in passing
            "quick one - weekly averages from the export pls",
            "I've uploaded the tracker; break it down by owner, would you?",
            "Could you pull the trend out of the numbers I just shared?",
            "Boss wants a summary of this by Friday, can you help?",
        ),
        "test": (
            "Here's the export from our system, give me the headline figures.",
            "Write up a summary of the attached sheet for the weekly meeting.",
            "Need a breakdown of this data by category, please.",
            "Analyse the attached and flag anything unusual.",
            "Quick overview of these numbers?",
            "FYI, file attached.",
            # added 2026-12-02 (test)
            "I've put the figures in a sheet, could you tell me what stands out?",
            "pls crunch these numbers into a few bullet points",
        ),
    },
    "zh": {
        "tune": (
            "请根据附件表格生成一份月度报表",
            "帮我汇总一下这个Excel里的数据",
            "把附件里的数据做个统计分析",
            "这份表格帮我整理成报告",
            "附件请查收",
            "按地区算一下这张表的合计",
            "这个文件里哪些列有空值",
            "用上传的数据对比一下两个季度",
            # added 2026-12-02 (tune)
            "刚上传了数据，帮我看看每周的平均值",
            "这份导出的明细麻烦按负责人拆一下",
            "领导要一份这个数据的小结，帮帮忙",
        ),
        "test": (
            "附件是本季度的销售数据，请写一份总结",
            "请统计附件中各部门的数量",
            "看一下这个文件，列出主要指标",
            "帮忙把这些数据做成图表",
            "文件见附件，谢谢",
            # added 2026-12-02 (test)
            "数据我放在表里了，帮我找找有什么规律",
        ),
    },
}

#: CLINC150 intents that a customer-service desk answers: its ``banking`` and ``credit_cards``
#: domains (less :data:`CLINC_OTHER_BUSINESS_INTENTS`), plus orders and pay paid into the
#: account (direct deposit, as BANKING77's receiving money). The other in-scope CLINC intents
#: (small talk, the assistant's own settings, timers, weather, recipes, calories, travel tips,
#: car care, HR questions) are out of scope for customer service: they fall back, like CLINC's
#: ``oos`` rows. A request can name a service word ("a joke about delivery drivers") and still
#: be out of scope.
CLINC_CS_DOMAINS = frozenset({"banking", "credit_cards"})
CLINC_CS_INTENTS = frozenset({"order", "order_status", "direct_deposit"})

#: CLINC150 intents of the customer-service domains above, or once counted as customer service,
#: that ask for a product or a service of ANOTHER kind of business (issue 46 item 9, audited
#: 2026-12-05): a new flight, hotel or rental car; a restaurant's tables (CLINC's
#: reservations are all at named restaurants); an airline's rules and times; exchange rates;
#: telling one's bank of a trip; an employer's insurance plan and 401k; utility, cable and
#: insurance bills; credit scores; a card's APR and interest rate (a product's rate, as
#: "the cashback rate of my credit card"). This desk serves its own orders, bookings, payment
#: account and card (as BANKING77 and ATEC do), so the account and card operations that
#: BANKING77 also serves stay customer service (balance, transactions, transfers, a new,
#: declined, lost, damaged or expiring card, its limit and rewards, PIN, fraud, fees abroad, a
#: frozen account, pay paid in). These rows fall back, source
#: ``clinc150_oos_sample.csv:other_business``.
CLINC_OTHER_BUSINESS_INTENTS = frozenset(
    {
        "restaurant_reservation", "accept_reservations", "confirm_reservation",
        "cancel_reservation", "book_flight", "book_hotel", "car_rental", "flight_status",
        "lost_luggage", "carry_on", "exchange_rate", "travel_notification", "insurance",
        "insurance_change", "rollover_401k", "bill_balance", "bill_due", "min_payment",
        "pay_bill", "credit_score", "improve_credit_score", "apr", "interest_rate",
    }
)  # fmt: skip

#: Out-of-scope requests in Chinese, written for this set (the data folder has none): by topic
#: family and split. They must fall back, some of them name a service word.
ZH_OUT_OF_SCOPE: dict[Split, dict[str, tuple[str, ...]]] = {
    "tune": {
        "joke": ("给我讲个笑话", "说个关于程序员的段子", "讲一个好笑的故事听听"),
        "weather": ("明天北京会下雨吗", "这周末天气怎么样", "今天要不要带伞"),
        "trivia": ("长城有多长", "世界上最高的山是哪座", "谁发明了电话", "月亮离地球多远"),
        "cooking": ("红烧肉怎么做", "煮鸡蛋要几分钟", "蛋糕用什么面粉比较好"),
        "health": ("一片披萨有多少卡路里", "每天喝多少水合适", "跑步能减肥吗"),
        "chat": ("你叫什么名字", "你是机器人吗", "你喜欢什么音乐", "晚安"),
        "study": ("帮我解释一下相对论", "英语单词怎么背得快", "推荐几本好看的小说"),
        "travel_tips": ("去云南旅游有什么好玩的", "日本有哪些必去的景点"),
        "sport": ("昨晚的球赛谁赢了", "篮球比赛一节多少分钟"),
        # added 2026-12-01 (tune only)
        "language": ("这个成语是什么意思：画蛇添足", "帮我把这句话翻译成英文：今天天气很好"),
        "science": ("为什么天空是蓝色的", "光速是多少", "黑洞是怎么形成的"),
        "geography": ("中国最长的河是哪条", "澳大利亚的首都是哪里"),
        "music": ("推荐几首适合跑步听的歌", "吉他怎么调音"),
        "advice": ("怎么才能早睡早起", "面试的时候穿什么比较好"),
    },
    "test": {
        "history": ("唐朝是哪一年建立的", "秦始皇统一六国是在哪一年"),
        "pets": ("猫咪为什么喜欢踩奶", "狗狗可以吃葡萄吗", "养金鱼要注意什么"),
        "math": ("一百以内有多少个质数", "圆的面积公式是什么"),
        "movies": ("最近有什么好看的电影", "推荐一部适合周末看的电视剧", "周杰伦有哪些好听的歌"),
        "misc": ("写一首关于秋天的诗", "外卖小哥的笑话有哪些", "快递这个词用英语怎么说"),
    },
}


#: Everyday customer requests, written for this set (added 2026-12-03): the kinds that the data
#: folder's sources lack (BANKING77 and ATEC are banking, waimai is food reviews, Bitext is
#: one shop's orders): a meal that came cold, a courier who left a parcel in the rain, an
#: angry customer who swears at the shop, a long polite e-mail, a change of delivery address,
#: a membership that renewed itself (its phone-bill and insurance families, and its hotel and
#: flight bookings, moved to :data:`OTHER_BUSINESS_WRITTEN`).
#: By language, split and phrasing family (a family is on one side of the split only).
CS_WRITTEN: dict[Lang, dict[Split, dict[str, tuple[str, ...]]]] = {
    "en": {
        "tune": {
            "food_delivery": (
                "my dinner showed up an hour late and stone cold",
                "The rider ate half my fries, I want my money back",
                "wrong meal again, I ordered the vegan bowl not chicken",
                "food came soggy and the drink was spilt all over the bag",
            ),
            "courier": (
                "the courier says he delivered but nothing is at my door",
                "driver left the box in the rain and the contents are ruined",
                "can the courier come tomorrow instead, nobody is home today",
                "your delivery guy threw my parcel over the fence",
            ),
            "angry": (
                "this is the third time you've screwed up my order, sort it out NOW",
                "absolutely useless service, where the hell is my refund",
                "I am fed up with being charged for a subscription I cancelled months ago",
                "your app is garbage, it keeps logging me out and I can't pay",
            ),
            "polite_long": (
                "Hello, I hope you are well. I placed an order last Tuesday and the tracking "
                "page has not changed since Thursday. Could you please look into it? Many thanks.",
                "Dear team, sorry to bother you. I was billed twice for my March invoice and "
                "would be grateful if one of the charges could be refunded. Kind regards.",
                "Hi there, thank you for the quick help last time. I now need to change the "
                "name on my booking for next month, is that possible? Best wishes.",
            ),
            "subscription": (
                "how do I stop my membership renewing automatically",
                "I was charged for premium even though I downgraded",
                "pause my plan for two months please",
            ),
            "short": ("refund pls", "where's my stuff", "order still not here", "human please"),
        },
        "test": {
            "food_order": (
                "half my order was missing when the takeaway arrived",
                "the restaurant sent someone else's food to me",
                "my pizza arrived cold and squashed",
            ),
            "complaint_rude": (
                "you people are hopeless, three weeks and still no parcel",
                "worst shop ever, give me my damn money back",
                "sick of waiting on hold, just cancel my account",
            ),
            "polite_email": (
                "Good afternoon, apologies for the trouble. The jacket I received is the wrong "
                "size; could you tell me how to exchange it? Thank you in advance.",
                "Dear support, I moved house last week. Would you kindly update the delivery "
                "address on my open order? Warm regards.",
            ),
        },
    },
    "zh": {
        "tune": {
            "logistics": (
                "物流三天没更新了，帮我查一下",
                "快递显示已签收但我没收到",
                "商家一直不发货怎么办",
                "包裹被放在驿站了，我想改成送货上门",
            ),
            "address": (
                "下单地址填错了，能改吗",
                "帮我把收货地址改成公司",
                "还没发货的话能换个地址吗",
            ),
            "membership": (
                "会员到期自动扣费了，能退吗",
                "怎么关闭自动续费",
                "我没开通会员为什么扣了我的钱",
            ),
            "goods": (
                "收到的商品有破损，怎么申请换货",
                "少发了一件，请补发",
                "买错颜色了可以换吗",
            ),
            "agent": ("人工客服在哪", "我要找人工", "能不能让真人来处理"),
            "polite_long": (
                "您好，不好意思打扰一下。我前天在你们店里买了一台电饭煲，今天到货发现外包装破了，"
                "里面的内胆也有划痕，想问一下能不能换一台新的，麻烦您了，谢谢！",
                "你好，我是老顾客了。这个月的账单里多了一笔我不认识的扣费，能帮我查一下是什么吗？"
                "辛苦了。",
            ),
        },
        "test": {
            "delivery_issue": (
                "快递员没打电话就把东西放门口了，现在丢了",
                "我的包裹一直在派送中，都三天了",
                "外卖送错了，不是我点的",
            ),
            "angry_zh": (
                "你们这什么破服务，退款拖了一个月了",
                "再不给我处理我就投诉到消协",
            ),
        },
    },
}


#: Requests about a service of ANOTHER kind of business (a phone operator, a broadband
#: provider, an insurer), once written as customer service (2026-12-03) and moved here by the
#: audit of issue 46 item 9 (2026-12-05): this desk sells no phone plan, line or policy, so
#: they fall back. Test split only, as they were. Round 10 (2026-12-06) moved the tune split's
#: hotel and flight bookings here too (``cs_written`` families ``travel`` and ``booking``, six
#: rows, tune split as they were): docs/classifier.md's scope names an airline or hotel booking
#: as another business's product.
OTHER_BUSINESS_WRITTEN: dict[Lang, dict[Split, dict[str, tuple[str, ...]]]] = {
    "en": {
        "tune": {
            "travel": (
                "can I change the date of my hotel stay without paying extra",
                "my flight was cancelled, what are my options for a refund",
                "is breakfast included in my room booking",
            ),
        },
        "test": {
            "telecom": (
                "my phone bill is much higher than usual this month",
                "the broadband has been down since yesterday",
                "how do I add more mobile data to my plan",
            ),
        },
    },
    "zh": {
        "tune": {
            "booking": (
                "酒店订错日期了，可以改吗",
                "机票能退吗，要收多少手续费",
                "我订的房间可以提前入住吗",
            ),
        },
        "test": {
            "telecom_bill": (
                "这个月话费怎么这么多",
                "流量用超了，帮我看看怎么收费的",
                "宽带断网了，什么时候能修好",
            ),
            "insurance": ("理赔材料交了一周了还没消息", "保单能退吗"),
        },
    },
}

#: How a request comes wrapped (added 2026-12-03): a long polite e-mail (greeting, thanks,
#: apologies for the bother), a story of what happened before the ask, a note after it. The
#: data folder's requests are short, and long prose is otherwise only ever a post under review,
#: so without these the n-gram model reads a polite e-mail as a post. The wrapper says nothing
#: of the route: it wraps customer texts, out-of-scope questions and spreadsheet asks alike
#: (``labelled_set._wrapped_requests``), each keeping its route. ``{req}`` is the request; each
#: wrapper is one phrasing family, on one side of the split.
REQUEST_WRAPPERS: dict[Lang, dict[Split, tuple[str, ...]]] = {
    "en": {
        "tune": (
            "Good morning, I hope you are keeping well. I'm sorry to trouble you with this, "
            "but I could use your help. {req} Thank you very much in advance for your time.",
            "Dear Sir or Madam, I hope this finds you well. {req} I look forward to hearing "
            "from you. Kind regards",
            "Hi there! Hope your week is going well. Quick question from me: {req} Thanks a "
            "million, you're a star.",
            "Hello, first of all thank you for the help last time, it was much appreciated. "
            "I have another matter now. {req} Best wishes and have a lovely day.",
            "So here's what happened: I was talking about this with a friend yesterday and we "
            "could not work it out. {req} Any help would be great.",
            "Apologies for the long message, I'm not very good with these things and my son "
            "usually helps me. {req} Thank you for your patience with me.",
            "{req} Sorry if this is a silly question, I just couldn't find it anywhere. Thanks "
            "so much!",
            "Hey, hope you're having a good day! {req} Cheers!",
            "To whom it may concern, I am writing with a question. {req} Yours faithfully",
            "Hi, hope you don't mind me asking. {req} Appreciate it, thanks.",
            "Dear team, thank you for taking the time to read this. {req} I would be grateful "
            "for a reply at your earliest convenience.",
            "Morning! Sorry, me again. {req} Thanks for putting up with me.",
            "My wife told me to write to you, so here goes. {req} Thanks, both of us appreciate "
            "it.",
            "{req} I hope that makes sense, English is not my first language. Thank you.",
            "Hello again, following up on last week. {req} Many thanks.",
        ),
        "test": (
            "Good afternoon, I hope all is well with you and the team. {req} Many thanks for "
            "looking into this, warm regards.",
            "Hi, sorry to bother you on a busy day. {req} Thank you kindly.",
            "Long story short, my friend and I have a bet on this one. {req} Cheers for any help.",
        ),
    },
    "zh": {
        "tune": (
            "您好，不好意思打扰您了。{req}麻烦您帮忙看一下，非常感谢！",
            "你好，想咨询一下，{req}希望能尽快回复，谢谢。",
            "亲，在吗？{req}辛苦啦~",
            "事情是这样的，我昨天和朋友聊到这个，半天也没弄明白。{req}麻烦帮帮忙。",
            "不好意思，我年纪大了不太会用这些东西，平时都是孩子帮我弄的。{req}谢谢您的耐心。",
            "{req}不好意思问题有点多，网上实在找不到，谢谢！",
            "早上好！{req}谢谢啦。",
            "麻烦问一下，{req}感谢感谢！",
            "我老婆让我来问问，{req}谢谢你们。",
            "{req}我不太懂这些，麻烦说得简单一点，谢谢。",
        ),
        "test": (
            "您好，打扰一下，{req}谢谢您，祝您工作顺利！",
            "你好，是这样的，我在网上查了很久都没找到答案。{req}麻烦了。",
        ),
    },
}

#: An angry customer's framing of a request (added 2026-12-03): a rant before the ask, a
#: threat to leave after it. Customer texts only: anger at the desk is the desk's business.
COMPLAINT_WRAPPERS: dict[Lang, dict[Split, tuple[str, ...]]] = {
    "en": {
        "tune": (
            "This is absolutely ridiculous. I have been waiting for days and nobody answers. "
            "{req} Sort this out today or I am taking my business elsewhere!",
            "Seriously?! Third time I'm writing about this. {req} Fix it. Now.",
            "I'm really disappointed, to be honest. I expected better from you. {req}",
            "I've had enough. Your website is useless and your phone line just rings. {req} "
            "Answer me properly this time.",
            "Unbelievable. I pay you every month for this. {req} Get it sorted or I cancel "
            "everything.",
            "Not happy at all. {req} I expect a reply within 24 hours.",
            "I was on hold for forty minutes this morning and then got cut off. {req} Please "
            "just email me back.",
        ),
        "test": (
            "I can't believe how bad this is. Nobody has replied to my emails. {req} I want an "
            "answer today.",
        ),
    },
    "zh": {
        "tune": (
            "你们这服务真的太让人失望了，等了好几天都没人管。{req}今天必须给我处理！",
            "我真的很生气，已经是第三次联系你们了。{req}",
            "你好，我之前打过电话但是没人接，只好在这里留言。{req}请尽快联系我。",
            "受不了了，打了好几次电话都没解决。{req}给个说法！",
        ),
        "test": ("太离谱了，一直没人回复。{req}再不处理我就投诉了！",),
    },
}

#: Sources whose texts are also sent wrapped (one in three): customer texts in either kind of
#: wrapper, out-of-scope questions in a neutral one.
WRAPPED_REQUEST_SOURCES = (
    "banking77_sample.csv",
    "bitext_customer_support_sample.csv",
    "atec_zh_customer_questions_sample.csv",
    "waimai_10k_zh_sample.csv",
    "clinc150_oos_sample.csv:oos",
    "clinc150_oos_sample.csv:assistant",
    "zh_out_of_scope",
    "oos_service_word/en",
    "oos_service_word/zh",
)


#: Out-of-scope asks about a service *topic* (issue 14: "tell me a joke about delivery
#: drivers"): general knowledge, entertainment and trivia that merely name a word a
#: customer-service desk also uses. Each template is one phrasing family, on one side of the
#: split; ``{x}`` is a service topic of :data:`SERVICE_TOPICS`.
OOS_SERVICE_TEMPLATES: dict[Lang, dict[Split, tuple[str, ...]]] = {
    "en": {
        "tune": (
            "tell me a joke about {x}",
            "write a short poem about {x}",
            "what is the history of {x}",
            "give me a fun fact about {x}",
            "who came up with the idea of {x}",
            "how do you say {x} in french",
            "what rhymes with {x}",
            "make up a bedtime story about {x}",
            "is there a famous song about {x}",
            "what does the word {x} come from",
            "how many calories are in {food}",
            "what wine goes well with {food}",
            "recommend a novel where {x} play a big part",
            "write a limerick about {x}",
            # added 2026-12-01 (tune only): more forms of general knowledge and creative asks
            "write a rap verse about {x}",
            "what would a world without {x} look like",
            "describe {x} to a five year old",
            "are there any good documentaries about {x}",
            "spell {x} backwards",
            "create a crossword clue for {x}",
            "how did {x} change during the industrial revolution",
            "invent a board game about {x}",
            "what is a synonym for {x}",
            "write a short scene for a play about {x}",
            "paint me a word picture of {x} at sunset",
            "what country invented {food}",
            "how much protein does {food} have",
            "is {food} vegetarian",
            # added 2026-12-02 (tune): general questions about how a service thing works in
            # the world, for school or out of curiosity, and etiquette
            "how did {x} first get started",
            "why are {x} called that",
            "for a school project, explain how {x} work in general",
            "just curious, what is the economics behind {x}",
            "is it polite to talk about {x} at a dinner party",
            "what did people do before {x} existed",
            "what careers have to do with {x}",
            "which famous painting shows {x}",
            # added 2026-12-03 (tune): translation, writing for someone, how things work in
            # nature or engineering, etiquette and planning, about a service topic
            "translate the word {x} into spanish",
            "write a cover letter for a job that deals with {x}",
            "how do {x} actually work, physically",
            "is it rude to bring up {x} on a first date",
            "help me plan a party themed around {x}",
            "write an essay introduction about {x}",
        ),
        "test": (
            "do you know any riddles about {x}",
            "compose a haiku on {x}",
            "what is the etymology of {x}",
            "how much sugar is in {food}",
            "what movie features {x}",
            "give me trivia about {x}",
            # added 2026-12-02 (test)
            "out of curiosity, how have {x} changed over the last century",
            "for my homework: what role do {x} play in an economy",
            # added 2026-12-03 (test)
            "how would you say {x} in german",
            "is it customary to tip for {x} abroad",
        ),
    },
    "zh": {
        "tune": (
            "讲一个关于{x}的笑话",
            "写一首关于{x}的诗",
            "{x}的历史是怎样的",
            "{x}用英语怎么说",
            "给我讲个{x}的小故事",
            "有哪些关于{x}的冷知识",
            "{food}有多少热量",
            "{food}怎么做才好吃",
            "推荐一部讲{x}的电影",
            # added 2026-12-01 (tune only)
            "用{x}写一句广告语",
            "{x}在古代叫什么",
            "给小朋友解释一下什么是{x}",
            "以{x}为题写一篇作文的开头",
            "关于{x}有什么成语或者俗语",
            "{x}的拼音怎么写",
            "有哪些关于{x}的诗句",
            "{x}这个行业以后会怎么发展",
            "{food}是哪个国家发明的",
            "{food}和什么饮料最配",
            # added 2026-12-02 (tune)
            "{x}最早是怎么出现的",
            "帮孩子出一道和{x}有关的数学应用题",
            "写作业用：简单介绍一下{x}在社会里的作用",
            "{x}为什么叫这个名字",
            "以前没有{x}的时候人们怎么办",
            # added 2026-12-03 (tune)
            "{food}的家常做法是什么",
            "做和{x}有关的工作有前途吗",
            "去{x}相关的公司面试要准备什么",
            "把“{x}”翻译成日语",
        ),
        "test": (
            "编一个和{x}有关的谜语",
            "{x}这个词是怎么来的",
            "吃{food}会长胖吗",
            "有没有关于{x}的歌",
            # added 2026-12-02 (test)
            "好奇问一下，{x}这些年有什么变化",
            # added 2026-12-03 (test)
            "怎样在家做出好吃的{food}",
        ),
    },
}
#: Service topics for :data:`OOS_SERVICE_TEMPLATES` (``x``: things; ``food``: dishes). The
#: issue's own examples ("a joke about delivery drivers", "calories in a slice of pizza") are
#: deliberately not among the combinations, so that they stay unseen.
SERVICE_TOPICS: dict[Lang, dict[str, tuple[str, ...]]] = {
    "en": {
        "x": (
            "bike couriers",
            "parcels",
            "credit cards",
            "banks",
            "refunds",
            "couriers",
            "online shopping",
            "call centres",
            "passwords",
            "invoices",
            "airports",
            "hotels",
            "the post office",
            "debit cards",
            "shipping containers",
            "receipts",
            "subscriptions",
            "coupons",
            "vending machines",
            "cash machines",
        ),
        "food": (
            "a pizza margherita",
            "a burger",
            "a bowl of ramen",
            "a milkshake",
            "takeaway fries",
            "a chocolate bar",
            "a donut",
            "a bag of chips",
        ),
    },
    "zh": {
        "x": (
            "快递",
            "外卖",
            "信用卡",
            "银行",
            "退款",
            "快递员",
            "网购",
            "邮局",
            "支付宝",
            "花呗",
            "订单",
            "发票",
            "优惠券",
            "外卖小哥",
            "物流",
        ),
        "food": ("一块披萨", "一碗米饭", "一杯奶茶", "炸鸡", "一个汉堡", "麻辣烫"),
    },
}

#: Ordinary customer texts (a review, a complaint) submitted *for moderation*: the post reads
#: like a customer-service request, the framing asks for a moderation decision (issue 14:
#: "Would you let this comment through: the new update broke my save files again"). Posts come
#: from these customer-service sources, each on its own row's side of the split.
WRAPPED_POST_SOURCES = (
    "waimai_10k_zh_sample.csv",
    "bitext_customer_support_sample.csv",
    "banking77_sample.csv",
)
