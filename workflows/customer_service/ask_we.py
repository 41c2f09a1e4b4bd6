"""An ask the customer makes together with someone close is the customer's own (tester11 F8).

"My husband and I would like a refund for ORD-…", "me and my partner want …", 我和我老公想退款…,
我跟我太太想要退款… name the customer among those who ask: it is their own ask, as "we would
like …" / 我们想… is. :func:`joint_subject` reads such a joint subject as "we" / 我们 before the
write gate (:func:`~workflows.customer_service.asks.read_asks` and
:func:`~workflows.customer_service.asks.doubt`) reads the message.

Only the customer and a person close to them (an allow-list of relations) are joined: a
subject without the customer ("my sister and her husband want …", 我朋友和她老公想…) is not
rewritten and stays someone else's ask, and a word that is no relation ("my order and I")
is left as it is. A relation the list lacks costs the customer one more message, never a
write.
"""

from __future__ import annotations

import re

from workflows.customer_service.ask_later import PEOPLE_ZH

#: People close to the customer, English (one word of description may go before: "my dear
#: husband", "my two kids").
_RELATION_EN = (
    r"(?:[a-z]+\s+)?(?:husband|hubby|wife|wifey|partner|spouse|boyfriend|girlfriend|bf|gf|"
    r"fianc[eé]e?|other half|better half|missus|mum|mom|mummy|mommy|mother|dad|daddy|father|"
    r"parents?|son|daughter|kids?|child|children|brother|sister|siblings?|family|friend|"
    r"roommate|flatmate|housemate|colleague|grandma|grandmother|granny|grandpa|grandfather|"
    r"grandparents?|aunt|uncle|cousin|niece|nephew|twin)"
)
_JOINT_EN = re.compile(
    rf"\b(?:(?:my|our)\s+{_RELATION_EN}\s+(?:and|&)\s+(?:i|me|myself)|"
    rf"(?:i|me|myself)\s+(?:and|&)\s+(?:my|our)\s+{_RELATION_EN})\b(?:\s+(?:both|together)\b)?",
    re.I,
)
_JOINT_ZH = re.compile(
    rf"我(?:和|跟|与|同|还有)(?:我的?)?{PEOPLE_ZH}(?:俩|两个人?|两人)?(?:都|一起)?|"
    rf"(?:我的?)?{PEOPLE_ZH}(?:和|跟|与|同)我(?!的|{PEOPLE_ZH})(?:俩|两个人?|两人)?(?:都|一起)?"
)


def joint_subject(text: str) -> str:
    """``text`` (normalised: Traditional Chinese folded) with a subject that joins the customer
    and someone close read as "we" / 我们.

    Example:
        >>> joint_subject("My husband and I would like a refund for ORD-100076")
        'we would like a refund for ORD-100076'
        >>> joint_subject("我和我老公都想退款ORD-100076"), joint_subject("我朋友和她老公想退款")
        ('我们想退款ORD-100076', '我朋友和她老公想退款')
    """
    return _JOINT_ZH.sub("我们", _JOINT_EN.sub("we", text))
