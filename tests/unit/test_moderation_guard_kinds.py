"""Issue 47, item 5: ordinary sentences that hold sensitive words in ordinary senses (science,
engineering, computing, farming, history, place names, food), written for this file in English
and Chinese, stay allowed on the lexicon + scorer path (never blocked, never reviewed)."""

from __future__ import annotations

import pytest

from workflows.content_moderation.graph import ContentModerationWorkflow
from workflows.content_moderation.service import moderate_lexicon_only

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
    pytest.param(
        "黑人和白人运动员在奥运会上同场竞技。",
        marks=pytest.mark.xfail(
            strict=True,
            reason="known miss (issue 47): the Chinese scorer reviews two race words side by "
            "side (0.45, over its review threshold) with no lexicon term; same kind as the "
            "strict xfail of test_moderation_protocol",
        ),
    ),
]


@pytest.mark.parametrize("post", ORDINARY)
def test_sensitive_words_in_ordinary_senses_are_allowed(
    post: str, workflow: ContentModerationWorkflow
) -> None:
    v = moderate_lexicon_only(post, workflow)
    assert v.decision.value == "allow", v.rationale
