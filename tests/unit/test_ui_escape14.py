"""Model output and customer text are shown as text: ``service_client.md`` escapes every ASCII
character that Markdown or HTML reads as mark-up (app14). A line of ``=`` under a line of text
made it a heading (setext): ``=`` was not escaped."""

from __future__ import annotations

import json
from pathlib import Path

from test_ui_sign_in11 import run_ui_script

#: What a model or a customer may write that Markdown would render: headings both ways,
#: links, images, HTML, code, tables, strikethrough, quotes, lists, entities, a rule.
SAMPLES = [
    "Refund done\n===",
    "Refund done\n---",
    "# big",
    "[click](http://x.test)",
    "![i](http://x.test/i.png)",
    "<b>bold</b> &amp;",
    "`code` and ```fence```",
    "| a | b |\n|---|---|",
    "~~gone~~ **b** _i_",
    "> quoted\n1. one\n+ two",
    "\\*not\\*",
]
#: ASCII punctuation that Markdown never reads as mark-up in running text.
PLAIN = set("\"',:;?/@$%^")

_SCRIPT = """
import json
import service_client as sc
print("out " + json.dumps([sc.md(s) for s in json.loads({samples!r})]))
"""


def test_every_markup_character_is_escaped(tmp_path: Path) -> None:
    got = run_ui_script(tmp_path, _SCRIPT.format(samples=json.dumps(SAMPLES)))
    for sample, shown in zip(SAMPLES, json.loads(got["out"]), strict=True):
        i = 0
        while i < len(shown):
            ch = shown[i]
            if ch == "\\":  # an escape: the next character is shown as it is
                i += 2
                continue
            markup = ch.isascii() and not ch.isalnum() and not ch.isspace() and ch not in PLAIN
            assert not markup, (sample, shown, ch)
            i += 1
        assert shown.replace("\\", "") == sample.replace("\\", "")  # nothing else changed
