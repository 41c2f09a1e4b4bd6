"""Write asks that are not a present, own ask of the customer's (tester10 kinds A–E, cs10).

:func:`set_aside` is part of the conservative second reading
(:func:`~workflows.customer_service.asks.doubt`): one marker anywhere in a message that asks for
a write is enough to set every write aside (no confirmation, no write; the policy path reads the
same), so the customer is answered with a read or asked back:

* ``negated``: the write is EXCLUDED ("anything but a refund", "something other than a
  refund", "do anything besides cancelling", 退款以外的方案, 除了退款);
* ``quoted``: someone else wants it, said in Chinese without 说/让 (我妈妈想要…退款, 我老板希望…
  取消, 我室友需要…): another person's wish is not the customer's own ask; or the writer says
  they are someone other than the customer ("I'm her husband", "as the account holder's
  attorney", 我是账户主人的律师: tester11 E), or that the account, the login or the order is
  another's or that they act for its owner ("the company that owns this account", "using my
  boyfriend's account", "my aunt placed ORD-…", 这个账号是老板的: tester12 A);
* ``conditional``: it is asked for LATER, or after a wait ("cancel it tomorrow", "refund on
  the 15th", "next month", "wait before you refund", "hold off", "give me a day first",
  "let me check with my bank and then refund", 明天帮我退款, 下周一, 月底再取消, 过几天): the
  shop can only write now, so it is never confirmed as a write made now;
* ``unsure``: the customer asks for ADVICE ("would you recommend cancelling …?", "what do
  you suggest?", 你觉得要不要…): a "yes" after it answers their own question;
* ``unclear``: a joke or sarcasm said in words ("I'm being sarcastic", "pigs will fly", 开个
  玩笑, 笑死; tester10 N), and ``conditional`` for 若/倘若 conditions (若未送达请退款).

Other forms around a write (information about it, a form or a reminder, preventing it, an
earlier ask reported: tester10 F–L) are left to the allow-list of plain asks (gate10).

Hand-written patterns on normalised text (Traditional folded to Simplified), a safe default:
a false alarm costs the customer one more message, a miss a write they did not ask for.
"""

from __future__ import annotations

import re

#: People close to the customer (as :data:`workflows.customer_service.asks._KIN`) and others.
PEOPLE_ZH = (
    r"(?<!其)(?:他|她|他们|她们|有人|别人|朋友|同事|客户|顾客|老婆|老公|太太|先生|丈夫|妻子|"
    r"爱人|老妈|老爸|妈妈|爸爸|阿妈|阿爸|妈|爸|儿子|女儿|哥哥|姐姐|弟弟|妹妹|阿哥|家姐|爷爷|"
    r"奶奶|外婆|外公|老板|上司|领导|经理|室友|邻居|男朋友|女朋友|男友|女友|同学|家人|亲戚)"
)
_WRITE_EN = (
    r"(?:refund\w*|cancel\w*|money back|reimburs\w*|(?:change|update)\w* (?:the |my )?address)"
)
_WRITE_ZH = r"(?:退款|退钱|退货|取消|改地址|修改地址|换地址)"

_EXCLUDED = (
    r"\b(?:anything|something|everything|whatever|all)\s+(?:else\s+)?but\b|"
    r"\b(?:other than|besides|except(?: for)?|apart from|aside from|in place of|as opposed to|"
    r"excluding|save for)\s+(?:\w+\s+){0,2}?" + _WRITE_EN + "|"
    r"(?:退款|退钱|取消|改地址|退货)(?:以外|之外)|除了[^，。,.!?！？]{0,10}?" + _WRITE_ZH
)
_SOMEONE_WANTS = (
    PEOPLE_ZH + r"(?:也|还|就|很|一直|非常|特别|真的|都)?(?:想要|想|需要|希望|打算|要求|准备|"
    r"决定|同意|非要|吵着要|急着要|盼着|请求|申请|让我|叫我)"
)
#: The writer says they are someone other than the customer (tester11 E): another person's
#: somebody ("I'm her husband", "as the account holder's attorney", "I'm Mary's PA", 我是她老公,
#: 我是账户主人的律师), one who acts for them ("I represent the customer", "the lawyer for the
#: owner", 我替我妈来的, 代表客户申请), or the account is someone else's ("the account owner is
#: my dad"). Any role word: what marks it is the other person it belongs to, not the role.
_NOT_THE_CUSTOMER = (
    r"\b(?:i am|i'm|im|as|speaking as|writing as|this is)\s+(?:(?:the|a|an)\s+)?"
    r"(?:her|his|their|[a-z]+(?:\s+(?:owner|holder))?'s?)\s+(?!(?:own|order|orders|parcel|"
    r"package|item|gift|purchase|fault|problem|money|card|account|birthday|request)\b)[a-z]+|"
    r"\bi (?:represent|act for|(?:am )?act(?:ing)? on behalf of|speak for|am writing for)\b|"
    r"\b(?:lawyer|attorney|solicitor|agent|representative|guardian|executor|proxy|carer|"
    r"caregiver|secretary|assistant|power of attorney)\s+(?:of|for)\s+(?:the|my|her|his|their|"
    r"a)\b|\b(?:the\s+)?(?:account|card)\s*(?:owner|holder)\s+is\s+(?:my|our)\b|"
    # the account holder named in the third person (not "I'm the account holder"), or the
    # writer acting for someone ("writing for Jane", "Jane's assistant here", "I'm handling
    # her mail", "This is Bob, Jane's partner": tester11's retest of E)
    r"(?<!i'm the )(?<!i am the )(?<!im the )(?<!as the )(?<!this is the )(?<!i'm )(?<!i am )"
    r"\b(?:account|card)[ -]?(?:owner|holder)s?\b|"
    r"\b(?:writing|acting|messaging|emailing|asking|here|speaking) (?:for|on behalf of) "
    r"(?!(?:a|an|the|my|your|our|this|that|some|any|help|information|info|me|myself|us|"
    r"refund\w*|cancel\w*|(?:an? )?update|news)\b)[a-z]+|"
    r"\b(?:her|his|their|[a-z]+'s) [a-z]+ here\b|\bthis is [a-z]+,? (?:her|his|their|[a-z]+'s) "
    r"[a-z]+|\b(?:i'?m|i am) (?:handling|managing|looking after|taking care of|dealing with|"
    r"sorting out) (?:her|his|their|[a-z]+'s) |"
    r"(?:我|本人)(?:是|系)(?:她|他|他们|她们|佢|佢哋)|(?:我|本人)(?:是|系)(?:账户|账号|帐户|户主|机主|"
    r"卡主|客户|顾客|买家|用户|订单主人|[\u4e00-\u9fff]{1,3}(?:先生|女士|小姐))[\u4e00-\u9fff]{0,4}的|"
    r"替(?:我|他|她)?(?!我)[\u4e00-\u9fff]{1,4}(?:来|问|申请|办|退|取消)|"
    r"代(?:表|理)?(?!金|码|购|价)[^，。,.!?！？]{1,6}"
    r"(?:申请|办理|来|退|取消)|"
    # the account owned by another party, or the writer in a role for one (tester12 A: "As
    # procurement officer for the company that owns this account"): any role, any party
    r"\b(?:who|that|which) owns? (?:this|the|my|our) (?:account|login|order)s?\b|"
    r"\b(?:account|login|order)s?(?: is| was)? (?:owned by|registered (?:to|under)|in the name of|"
    r"belongs? to)\b(?! me\b| myself\b)|\bas (?!(?:the |a |an |their |its )?(?:[a-z-]+ )?"
    r"(?:account |card )?(?:owner|holder|customer|user|buyer|purchaser|member|one)\b)"
    r"(?:the |a |an |their |its )?(?:[a-z-]+ ){0,2}?[a-z-]+ (?:for|of|at|to) "
    r"(?:the|a|an|our|this|that|my|his|her|their) "
    r"(?:[a-z-]+ ){0,2}?(?:company|firm|business|corporation|organi[sz]ation|employer|office|"
    r"estate|family|household|client|owner|holder|charity|school|team|shop|store|account)\b|"
    r"\b(?!my\b|our\b|your\b)[a-z]+'s (?:own )?(?:account|login|profile|card)\b|"
    r"\b(?<!\bi )(?<!\bi'm )(?:owns?|holds?|shares?) (?:this|the|our) (?:account|login)\b|"
    r"\b(?:manag|handl|run|look(?:ing)? after|operat|us)\w* (?:this|the) (?:account|login) for\b|"
    r"\bacting for (?:the|my|our|a) \w+|\b(?:person|one) who (?:paid for|placed|ordered|bought)\b|"
    r"\b(?:my|our|his|her) [a-z]+ (?:placed|paid for|ordered) "
    r"(?:ord-\d+|the order|this order|it)\b|"
    r"(?:账户|账号|帐户|帐号)(?:是|属于|归)(?!我)[\u4e00-\u9fff]{1,6}的?|"
    r"作为(?![^，,。]{0,8}(?:顾客|客户|用户|买家|会员))[\u4e00-\u9fff]{1,8}的[\u4e00-\u9fff]{1,6}"
)
#: Another person, and a word of whose account or login it is, in one sentence ("Logged in as
#: my wife", "The buyer was my late father", "the account is in the owner's name", "writing
#: from the account of my flatmate": tester12 A, re-test): the writer says the account is not
#: theirs however it is put, so the rule reads the two together instead of listing phrasings.
#: Someone a writer may be, or write for: family, a friend, a helper at work or at home.
_SOMEBODY = (
    r"husband|wife|partner|son|daughter|mum|mom|mother|dad|father|brother|sister|friend|"
    r"assistant|secretary|carer|caregiver|colleague|boss|nanny|flatmate|roommate"
)
#: Another person than the writer (public: plain_talk reads the same people).
OTHER_PERSON = (
    rf"(?:{_SOMEBODY}|spouse|boyfriend|girlfriend|parents?|kids?|child(?:ren)?|sibling|aunt|"
    r"uncle|cousin|grand\w+|niece|nephew|in-laws?|housemate|neighbou?r|co-?worker|employer|"
    r"client|landlord|landlady|tenant|owner's|holder's)"
)
_WHOSE_ACCOUNT = (
    r"(?:account|login|log-?in|logged in|signed in|profile|whose|on behalf|behalf of|buyer|"
    r"purchaser|access to)"
)
_NOT_THE_CUSTOMER += (
    rf"|\b{OTHER_PERSON}\b[^.!?;\n]{{0,60}}?\b{_WHOSE_ACCOUNT}\b"
    rf"|\b{_WHOSE_ACCOUNT}\b[^.!?;\n]{{0,60}}?\b{OTHER_PERSON}(?!\w)"
    # the writer names themselves as someone's somebody ("hi, I'm Tom, Jane's husband")
    rf"|\b(?:i'?m|i am|it'?s)\s+[a-z]+,?\s+(?:her|his|their|[a-z]+'s)\s+(?:{_SOMEBODY})\b"
    # 这号是我哥的 (号 alone for the account), 我帮我妈问的 (asking for a relative: tester12 I)
    r"|(?:这个?|该|此)号(?:是|属于|归)(?!我的)[\u4e00-\u9fff]{1,4}的"
    rf"|帮(?:我的?)?(?:{PEOPLE_ZH}|哥|姐|弟|妹)[\u4e00-\u9fff]{{0,2}}?(?:来|问|申请|办|退|取消|操作|弄)"
)
#: Someone a writer may act for, in Chinese: the people of :data:`PEOPLE_ZH` and kin written
#: short (舅舅, 表姐, 外婆, 老板).
_PERSON_ZH = (
    rf"(?:{PEOPLE_ZH}|[表堂]?[哥姐弟妹]|舅舅?|姨妈?|阿姨|叔叔?|伯伯?|婶婶?|姑姑?|外?[婆公]|爷爷|奶奶|"
    r"老板|助理|秘书|家里人)"
)
#: What the account is, in Chinese: the account, the login, the phone it is on.
_ACCOUNT_ZH = r"(?:账号|帐号|账户|帐户|号(?!码?[:：]?\s*ord)|登录|名下|身份)"
#: The writer is not the holder, as a kind rather than phrasings (tester13 A and I): another
#: person's account, phone or login (我在用我爷爷的手机和账号, 这是我同事的帐号); the writer
#: someone's somebody (我是张丽华的老公, 我是王芳的助理); acting for another person in any
#: verb but buying for them (我替我妈操作, 我是帮朋友看订单的; 帮妈妈买的 is the buyer's own);
#: "not my account"; a role of or for anyone ("executor of Thomas Marsh's estate", "assistant
#: to …"); a dead person's estate or affairs; "I'm not the account holder / the person who …";
#: acting for someone ("doing this for my grandma", "handling the orders for Dana").
_NOT_THE_CUSTOMER += (
    rf"|{_PERSON_ZH}的[^，。,.!?！？;；]{{0,8}}?{_ACCOUNT_ZH}|(?:用|拿)(?:的是)?(?:我的?)?{_PERSON_ZH}的(?:手机|电脑)"
    rf"|(?:我|本人)(?:是|系)[^，。,.!?！？]{{1,8}}?的(?:{_PERSON_ZH}|律师|代理人?|员工|下属|保姆|"
    r"管家|家属|亲属|孩子|孙子|孙女|侄子|侄女|外甥女?)"
    rf"|(?:帮|替|代)(?:我的?)?{_PERSON_ZH}(?!买|购|订|选|挑|送|寄)"
    r"|(?:不是|并非|不属于)我(?:本人|自己)?的?(?:账号|帐号|账户|帐户|号)|"
    r"(?:账号|帐号|账户|帐户)(?:不是|并非|不属于)我"
    r"|\b(?:lawyer|attorney|solicitor|agent|representative|guardian|executor|executrix|proxy|"
    r"carer|caregiver|secretary|assistant|trustee|administrator|power of attorney)\s+"
    r"(?:of|for|to)\b"
    r"|(?<!real )\bestate\b(?! agent)|\b(?:his|her|their|[a-z]+'s) affairs\b"
    rf"|\b(?:my|our|his|her|their|the) late (?:{OTHER_PERSON}|mr|mrs|ms|dr)\b"
    r"|\b(?:i'?m|i am) not (?:the |a |an )?(?:account |card )?(?:holder|owner|customer|buyer|"
    r"purchaser|user)\b|\b(?:i'?m|i am) not the (?:person|one) who (?:opened|owns|made|set up|"
    r"holds|registered|placed|paid)\b"
    r"|\b(?:doing|handling|managing|sorting out|looking after|taking care of|placing|running) "
    r"(?:this|it|that|things|everything|(?:the |their |his |her )?(?:orders?|account|shopping))"
    r" (?:for|on behalf of) (?!me\b|myself\b|us\b)"
)
#: The writer says they are not a named person ("I am not Thomas Marsh"): case kept.
_NOT_NAMED = re.compile(r"\b[Ii](?:'m|’m| am|m) not (?:[A-Z][a-z]+|[\u4e00-\u9fff]{2,3}\b)")
_DAY = r"(?:mon|tues|wednes|thurs|fri|satur|sun)day"
_LATER = (
    r"\b(?<!by )(?<!before )(?:tomorrow|tmrw?|tonight|later (?:today|on|this \w+|in the \w+)|"
    r"at a later (?:date|time)|some other time|next (?:week|month|year|time|" + _DAY + r")|"
    r"this (?:weekend|evening|afternoon|" + _DAY + r")|(?:after|from|until|till|starting) "
    r"(?:the )?\d{1,2}(?:st|nd|rd|th)\b|from next|"
    r"in (?:a couple of|a few|a|an|one|two|three|four|five|six|"
    r"couple of|\d+) (?:more )?(?:days?|weeks?|months?|hours?)|(?:at )?the end of (?:the |this |"
    r"next )?(?:week|month|year)|wait (?:for|until|till|before|a (?:bit|while|day|moment|few|"
    r"little|couple)|and then)|hold (?:off|on|before|it)|give me (?:a|some|one|two|a few) "
    r"(?:day|days|moment|while|time|minute|week|hours?)|sleep on it|let me (?:first )?(?:check|"
    r"confirm|think|talk|ask|see|discuss|speak)|when i (?:move|get back|return|say so|tell you|"
    r"confirm|decide)|once i (?:\w+ )?(?:confirm|check|decide|tell|say|hear|know)|"
    r"until i (?:\w+ )?(?:confirm|check|decide|tell|say|hear|know))\b|"
    + _WRITE_EN
    + r"[^.!?\n,;，。]{0,40}?\bon (?:the \d{1,2}(?:st|nd|rd|th)|"
    + _DAY
    + r")\b|"
    r"明天|明早|明晚|后天|下周|下星期|下礼拜|下个?月|月底|月初|年底|周末再|过几天|过两天|过一阵|"
    r"晚点|晚些|稍后|等我|先等|之后再|以后再|回头再|到时候?再|(?:以后|之后|回头)再说|"
    r"(?:\d+|[一二三四五六七八九十两几]+)(?:号|日)(?:再|的时候|之后|以后)|"
    r"[一二三四五六七八九十两几\d]+(?:天|周|个月|个星期)(?:后|之后|以后)"
)
_ADVICE = (
    r"\b(?:would|do|can|could|will|what would) you (?:\w+ )?(?:recommend|advise|suggest)\w*\b|"
    r"\b(?:your|any) (?:recommendation|advice|suggestion|opinion|thoughts)\b|"
    r"\bwhat do you (?:think|recommend|suggest|advise)\b|"
    r"\b(?:is it|would it be|is that) (?:wise|smart|better|worth it|a good idea|advisable)\b|"
    r"\bwould you (?:personally|yourself) \w+|\bif you were me\b|\bin my (?:shoes|place)\b|"
    r"你(?:们)?(?:建议|推荐|觉得|认为)|值得吗|划算吗|明智吗|好不好呢"
)
#: N: a joke or sarcasm said in words ("I'm being sarcastic", "pigs will fly", 开个玩笑, 笑死).
_JOKING = (
    r"\b(?<!not )(?<!n't )(?:sarcas\w*|jok(?:e|es|ing)|kidding|trolling)\b|pigs (?:will|might|can|"
    r"would) fly|that'?ll be the day|brilliant idea|\bgenius\b|\bnot serious\b|"
    r"开个?玩笑|闹[着著]玩|说[着著]玩|笑死|骗你|逗你玩|整蛊"
)
#: A condition in a Chinese written form the gate's reader does not know (若未送达请退款).
_IF_ZH = r"若(?:是|未|没|不|要|有|果)|倘若|如若"
#: Each kind, in the order read (its label is what ``doubt`` returns).
_KINDS = (
    ("negated", re.compile(_EXCLUDED, re.I)),
    ("quoted", re.compile(_SOMEONE_WANTS)),
    ("quoted", re.compile(_NOT_THE_CUSTOMER, re.I)),
    ("quoted", _NOT_NAMED),
    ("unclear", re.compile(_JOKING, re.I)),
    ("conditional", re.compile(_LATER, re.I)),
    ("conditional", re.compile(_IF_ZH)),
    ("unsure", re.compile(_ADVICE, re.I)),
)


#: Someone else's wish in English ("My neighbour wants a refund", "my friend needs …").
_SOMEONE_WANTS_EN = (
    r"\b(?:my|our|his|her|their) (?!(?:own|order|package|parcel|item|product|account|refund|"
    r"money|card|delivery|shipment|box|phone|laptop|device)\b)[a-z]+ "
    r"(?:wants|needs|would like|asked me to|asks)\b"
)
_NOT_HOLDER = re.compile(
    "|".join(
        (
            _NOT_THE_CUSTOMER,
            _SOMEONE_WANTS,
            _SOMEONE_WANTS_EN,
            r"\baccount is (?!mine\b)"
            r"(?:my|our|his|her|their) [a-z]+'s?\b|账号是(?!我的)[\u4e00-\u9fff]{1,4}的",
        )
    ),
    re.I,
)


def not_the_holder(text: str) -> bool:
    """Whether ``text`` (normalised) says the writer is not the account holder or that the ask
    is someone else's ("This account is my dad's", "I'm her husband", "My neighbour wants a
    refund", 我朋友想退款): the conversation remembers it, and no write of it is offered, nor
    the plain words that would ask for one (tester12 I)."""
    return bool(_NOT_HOLDER.search(text) or _NOT_NAMED.search(text))


def set_aside(text: str) -> str | None:
    """Why a message asking for a write (``text``: normalised) is not a present, own ask of
    the customer's (module docstring), or None.

    Example:
        >>> set_aside("i want anything but a refund for ord-100076")
        'negated'
        >>> set_aside("please cancel ord-102091 tomorrow"), set_aside("refund ord-100076")
        ('conditional', None)
    """
    for kind, pattern in _KINDS:
        if pattern.search(text):
            return kind
    return None
