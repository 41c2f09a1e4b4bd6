"""What a person reads of a customer's text is what the customer wrote (tester14 G14).

Unicode format characters (bidi overrides and isolates, zero-width characters) passed through
to the operator: in ``orchestrator handoff list`` a right-to-left override made "evorppa
esaelp" read "please approve". Every line the CLI prints (``OutputConsole.print``) and every
text the chat UI shows (``ui/service_client.md``) now writes each as ``<U+202E>``; the CLI no
longer turns a customer's ``:warning:`` into an emoji either."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from test_handoff_withdraw import _say, waiting  # noqa: F401  (a fixture)
from test_ui_sign_in11 import run_ui_script
from typer.testing import CliRunner

from orchestrator.cli.common import OutputConsole
from orchestrator.config import Settings
from workflows.customer_service.store import OrderStore

#: A customer's messages with invisible characters: an override, an isolate, a zero-width
#: space inside a word, a byte-order mark, Traditional Chinese with a right-to-left mark.
SAID = [
    "I withdraw nothing, \u202eevorppa esaelp\u202c thanks :warning:",
    "\u2067refund\u2069 ok",
    "app\u200brove it",
    "\ufeffhello",
    "請\u200f退款",
]
FORMAT = {"\u202e", "\u202c", "\u2067", "\u2069", "\u200b", "\ufeff", "\u200f"}


def test_the_cli_shows_format_characters_as_code_points() -> None:
    out = io.StringIO()
    console = OutputConsole(file=out, width=200)
    for text in SAID:
        console.print(text)
    printed = out.getvalue()
    assert not FORMAT & set(printed), printed
    assert "<U+202E>evorppa esaelp<U+202C>" in printed and ":warning:" in printed
    assert "app<U+200B>rove" in printed and "請<U+200F>退款" in printed


def test_handoff_list_shows_what_the_customer_wrote(
    waiting: tuple[Settings, OrderStore, str, str],  # noqa: F811  (the imported fixture)
) -> None:
    from orchestrator.cli import app

    settings, _, customer, _ = waiting
    url = str(settings.cs_database_url)
    asyncio.run(_say(settings, customer, SAID[0]))
    listed = CliRunner().invoke(app, ["handoff", "list", "--db", url])
    assert "customer wrote since" in listed.output, listed.output
    assert "<U+202E>evorppa esaelp<U+202C>" in listed.output and ":warning:" in listed.output
    assert not FORMAT & set(listed.output)


_SCRIPT = """
import json
import service_client as sc
print("out " + json.dumps([sc.md(s) for s in json.loads({said!r})], ensure_ascii=False))
"""


def test_the_chat_ui_shows_format_characters_as_code_points(tmp_path: Path) -> None:
    got = json.loads(run_ui_script(tmp_path, _SCRIPT.format(said=json.dumps(SAID)))["out"])
    assert not FORMAT & set("".join(got)), got
    assert got[0].startswith("I withdraw nothing, \\<U\\+202E\\>evorppa esaelp\\<U\\+202C\\>")
    assert got[4] == "請\\<U\\+200F\\>退款"
