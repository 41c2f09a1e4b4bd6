"""How the customer-service write gate treats plain asks and non-plain forms (gate10).

A message "gets a confirmation" when ``read_asks(m).writes`` is non-empty and ``doubt(m)`` is
None: the documented gate (docs/customer_service_safety.md §1). Three sets:

* leak variants (``tests/data/cases/cs_plain_asks10.toml``, ``[kinds]``): forms that are no
  plain ask of the customer's own, now; the first 8 of each kind are dev, the rest held out
  (``--split test``). Every one that gets a confirmation is a leak.
* test asks: every string literal of the cs unit tests and case files (placeholders filled in
  with an order id) that the gate without the plain-form allow-list lets through; how many it
  now asks back.
* real texts (``/work/shared/data/customer_service/*.csv``): which share of the texts that
  got a confirmation without the allow-list are now asked back.

"Before" is the same working tree with :func:`~workflows.customer_service.ask_plain.unusual`
switched off (``--before`` prints the leak counts that way).

Run: ``.venv/bin/python -m benchmarks.cs_plain_asks [--split dev|test] [--show] [--before]``.
"""

from __future__ import annotations

import argparse
import ast
import csv
import re
import tomllib
from pathlib import Path

from workflows.customer_service import asks
from workflows.customer_service.asks import doubt, read_asks

ROOT = Path(__file__).resolve().parents[1]
CASES = ROOT / "tests/data/cases/cs_plain_asks10.toml"
REAL = Path("/work/shared/data/customer_service")
_DEV = 8  # the first _DEV variants of each kind are dev


def confirms(message: str) -> bool:
    """Whether the gate offers a write of ``message`` for confirmation."""
    return bool(read_asks(message).writes) and doubt(message) is None


def leaks(split: str, show: bool) -> dict[str, tuple[int, int]]:
    """Per kind of the case file: (let through, variants) of ``split``."""
    kinds = tomllib.loads(CASES.read_text(encoding="utf-8"))["kinds"]
    out = {}
    for kind, texts in kinds.items():
        part = texts[:_DEV] if split == "dev" else texts[_DEV:]
        through = [t for t in part if confirms(t)]
        if show:
            for text in through:
                print(f"  LEAK {kind}: {text}")
        out[kind] = (len(through), len(part))
    return out


def test_strings() -> list[str]:
    """String literals of the cs unit tests and case files (8 to 300 characters)."""
    paths = [
        *ROOT.glob("tests/unit/test_asks*.py"),
        *ROOT.glob("tests/unit/test_customer_service*.py"),
        *ROOT.glob("tests/unit/test_cs_*.py"),
        *ROOT.glob("tests/unit/test_refund*.py"),
        *ROOT.glob("tests/unit/test_withdraw*.py"),
        *ROOT.glob("tests/data/cases/*.toml"),
    ]
    found: list[str] = []
    for path in sorted(paths):
        if path.name.startswith(("cs_plain_asks10", "test_asks_plain10")):
            continue
        text = path.read_text(encoding="utf-8")
        if path.suffix == ".py":
            tree = ast.parse(text)
            nodes = list(ast.walk(tree))
            parts = {id(v) for n in nodes if isinstance(n, ast.JoinedStr) for v in n.values}
            for n in nodes:
                if isinstance(n, ast.JoinedStr):  # an f-string: its fields are placeholders
                    found.append("".join(_piece(v) for v in n.values))
                elif isinstance(n, ast.Constant) and isinstance(n.value, str):
                    found += [] if id(n) in parts else [n.value]
        else:
            found += re.findall(r'"((?:[^"\\\n]|\\.)*)"', text)
    for pattern in (re.compile(r"ord-?\{[^}]*\}", re.I), re.compile(r"\{[^}]*\}")):
        found = [pattern.sub("ORD-100076", s) for s in found]
    message = re.compile(r"\s|[\u4e00-\u9fff]")  # a message, not a key ("refund_id")
    return sorted({s for s in found if 8 <= len(s) <= 300 and message.search(s)})


def _piece(node: ast.expr) -> str:
    """A piece of an f-string: its text, or ``{x}`` for a field."""
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else "{x}"


def real_texts() -> list[str]:
    """The real customers' texts, placeholders ({{Order Number}}) filled in."""
    texts: list[str] = []
    for path in sorted(REAL.glob("*.csv")):
        with path.open(encoding="utf-8") as f:
            for row in csv.DictReader(f):
                for key in ("utterance", "text", "sentence1", "sentence2", "review"):
                    if row.get(key):
                        texts.append(row[key])
    fill = re.compile(r"\{\{\s*order (?:number|id)\s*\}\}", re.I)
    return [re.sub(r"\{\{[^}]*\}\}", "it", fill.sub("ORD-100076", t)) for t in texts]


def without_plain(texts: list[str]) -> set[str]:
    """The texts the gate confirms with the plain-form allow-list switched off."""
    kept = asks.unusual
    asks.unusual = lambda *_: False
    try:
        return {t for t in texts if confirms(t)}
    finally:
        asks.unusual = kept


def asked_back(texts: list[str], show: str) -> tuple[int, int]:
    """(now asked back, confirmed without the allow-list) over ``texts``."""
    before = without_plain(texts)
    was = [t for t in texts if t in before]
    now_back = [t for t in was if not confirms(t)]
    for text in now_back if show else []:
        print(f"  BACK {show}: {text}")
    return len(now_back), len(was)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--show", action="store_true", help="print each leak / ask-back")
    parser.add_argument("--before", action="store_true", help="leaks without the allow-list")
    args = parser.parse_args()
    kept = asks.unusual
    if args.before:
        asks.unusual = lambda *_: False
    counts = leaks(args.split, args.show)
    asks.unusual = kept
    for kind, (n, total) in counts.items():
        print(f"leaks {args.split} {kind}: {n}/{total}")
    print(
        f"leaks {args.split} all: {sum(n for n, _ in counts.values())}/"
        f"{sum(t for _, t in counts.values())}"
    )
    n, was = asked_back(test_strings(), "test" if args.show else "")
    print(f"test asks confirmed without the allow-list, now asked back: {n}/{was}")
    n, was = asked_back(real_texts(), "real" if args.show else "")
    print(f"real texts confirmed without the allow-list, now asked back: {n}/{was}")


if __name__ == "__main__":
    main()
