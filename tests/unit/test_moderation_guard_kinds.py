"""Issue 47 (item 5 and the evaluation protocol): ordinary sentences that hold sensitive words
in ordinary senses (science, engineering, computing, farming, history, place names, food,
quoting), written for these tests in English and Chinese, stay allowed on the lexicon + scorer
path (never blocked, never reviewed)."""

from __future__ import annotations

import pytest

from tests.data.moderation_cases import flag_cases, judged
from workflows.content_moderation.graph import ContentModerationWorkflow

ORDINARY = [
    "The surgeon had to kill the nerve before the root canal.",
    "Shoot the photos in raw format for better dynamic range.",
    "We need to execute the migration script before midnight.",
    "The pigs on the Iowa farm weigh about 120 kg at market.",
    "In 1865 the Thirteenth Amendment abolished slavery in the United States.",
    "The Nazi invasion of Poland began on 1 September 1939.",
    "Dyke is a Dutch word for a dam or an embankment.",
    "Scunthorpe United won the match on Saturday.",
    "Blacklist the IP and whitelist the office range.",
    "The master and slave cylinders of the clutch need bleeding.",
    "Spotted dick is a traditional British pudding.",
    "Kill the process with SIGTERM, then restart the daemon.",
    "湖南和河南是两个不同的省份。",
    "这个进程卡死了，需要杀掉重启。",
    "猪肉价格今年下降了百分之十。",
    "二战时期日本侵华造成了巨大的伤亡。",
    "这把刀是用来切西瓜的。",
    "他在历史课上讲了种族隔离制度的起源。",
    "把线程干掉之后内存就释放了。",
    "黑龙江的冬天非常冷。",
    "新疆的哈密瓜特别甜。",
    "我们要打击电信诈骗犯罪。",
    "女性在科研领域的比例逐年上升。",
    "东北人说话很有意思，我很喜欢听。",
    "Retard the ignition timing by two degrees to stop the knocking.",
    "The flame retardant coating passed the fire test.",
    "The Niger river floods every autumn; Niger and Nigeria are neighbours.",
    "Niamey is the capital of Niger.",
    "Black holes retard the passage of time near the horizon.",
    "The gypsy moth caterpillar damages oak trees.",
    "Kill the process with SIGTERM before the upgrade.",
    "The dyke along the river was reinforced after the flood.",
    "Faggots of wood were used as fuel in medieval kitchens.",
    "The Nazi invasion of Poland began in September 1939.",
    "In 1963 Martin Luther King Jr. spoke against segregation in Washington.",
    "The novel quotes the slurs of its era so readers see the cruelty.",
    "Shoot the photos in raw format for better colour.",
    "Our chemistry class titrated the acid with sodium hydroxide.",
    "The bastard file is coarser than the smooth file.",
    "Cocktail bars in Essex close at midnight.",
    "黑人球员在这场比赛中拿下了三十分。",
    "河南是中国的人口大省，小麦产量很高。",
    "历史课讲了纳粹德国的种族灭绝政策。",
    "这篇论文研究了性别差异对薪资的影响。",
    "尼日尔河流经几内亚、马里和尼日尔。",
    "这把刀很锋利，切菜的时候小心。",
    "东北的冬天很冷，记得多穿衣服。",
    "他引用了一句古话：人不可貌相。",
    pytest.param(
        "白人和黑人的皮肤对紫外线的反应不同，这是生物学问题。",
        marks=pytest.mark.xfail(
            strict=True,
            reason="known miss (issue 47): the Chinese scorer rates two race words and a "
            "comparison 0.68, over its review threshold, with no lexicon term",
        ),
    ),
    "公司规定不得因性别、地域或民族拒绝求职者。",
    "请问上海到广州的高铁几点发车？",
    # the scorer alone (0.45) is under the probability where its dev precision reaches 0.75
    "黑人和白人运动员在奥运会上同场竞技。",
]


@pytest.mark.parametrize(("post", "flagged"), flag_cases((), ORDINARY))
def test_sensitive_words_in_ordinary_senses_are_allowed(
    post: str, flagged: bool, workflow: ContentModerationWorkflow
) -> None:
    judged(post, flagged, workflow)  # asserts the decision
