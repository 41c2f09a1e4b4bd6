"""No text reader backtracks catastrophically (tester13 L: one message hung a turn for minutes).

Customer text, spreadsheet cells and model prose are read with Python's ``re``, which has no
time limit and cannot be interrupted: a pattern that backtracks exponentially on some input
(a repeated group whose alternatives overlap, ``(?:\\s+|…)*``) freezes the process that reads
it, and with it every customer of the UI service. This test searches every module-level
pattern of the library with adversarial probes (each character of the pattern repeated, each
pair of adjacent CJK characters repeated, a space run; then a character no pattern expects),
both as the pattern stands and anchored at the end, as a ``fullmatch`` reads it. The probes
run in a child process under a time limit: an exponential pattern never finishes a probe of
this length, and the child's last line names it. (The classifier's user-written rules are
probed the same way at load time, with the ``regex`` package's time limit:
:func:`orchestrator.classifier.loader.probe_backtracking`.)
"""

from __future__ import annotations

import importlib
import os
import pkgutil
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

#: Length of each probe: 2**PROBE_LENGTH steps is forever; a linear pattern takes microseconds.
PROBE_LENGTH = 40
#: The packages whose module-level patterns read text that users or the model wrote.
PACKAGES = ("workflows", "skills", "orchestrator")
#: Seconds the child may take for every pattern together (about 5 s on an idle 2-core host).
LIMIT_S = 240
_CJK = re.compile(r"[\u4e00-\u9fff]")
#: Inline global flags, which must stay at the start of a pattern: ``(?i)``.
_GLOBAL_FLAGS = re.compile(r"\(\?[aiLmsux]+\)")


def _patterns() -> Iterator[tuple[str, re.Pattern[str]]]:
    seen: set[int] = set()
    for package in PACKAGES:
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, package + "."):
            if info.name.endswith(".__main__") or ".migrations" in info.name:
                continue  # a command line, or Alembic's scripts: run, not imported
            module = importlib.import_module(info.name)
            for name, value in vars(module).items():
                if isinstance(value, re.Pattern) and id(value) not in seen:
                    seen.add(id(value))
                    if isinstance(value.pattern, str):
                        yield f"{info.name}.{name}", value
    # compiled from a data file when first read, so no module holds them (tester15 T15-3/4/5)
    from workflows.content_moderation.constructions import load_constructions

    for c in load_constructions().constructions:
        for i, part in enumerate([*c.parts, *([c.unless] if c.unless else [])]):
            yield f"constructions.toml {c.term!r} part {i}", part


def _probes(source: str) -> list[str]:
    source = source.lower()
    chars = {ch for ch in source if ch.isalnum()} | {" ", "a", "0"}
    pairs = {source[i : i + 2] for i in range(len(source) - 1)}
    pairs = {pair for pair in pairs if len(_CJK.findall(pair)) == 2}
    return [c * PROBE_LENGTH + "\x00" for c in sorted(chars)] + [
        p * (PROBE_LENGTH // 2) + "\x00" for p in sorted(pairs)
    ]


def _probe_all() -> None:
    """The child: print each pattern's name, then search its probes (hangs on a bad one)."""
    count = 0
    for name, pattern in _patterns():
        print(name, flush=True)
        head = _GLOBAL_FLAGS.match(pattern.pattern)
        at = head.end() if head else 0
        anchored = re.compile(f"{pattern.pattern[:at]}(?:{pattern.pattern[at:]})\\Z", pattern.flags)
        for probe in _probes(pattern.pattern):
            pattern.search(probe)
            anchored.match(probe)
        count += 1
    print(f"done {count}", flush=True)


def test_no_pattern_backtracks_exponentially() -> None:
    root = Path(__file__).resolve().parents[2]
    path = os.pathsep.join([str(root), os.environ.get("PYTHONPATH", "")])
    env = {**os.environ, "PYTHONPATH": path}
    try:
        done = subprocess.run(
            [sys.executable, __file__],
            capture_output=True,
            text=True,
            timeout=LIMIT_S,
            env=env,
            cwd=root,
        )
    except subprocess.TimeoutExpired as error:
        out = error.stdout.decode() if isinstance(error.stdout, bytes) else error.stdout or ""
        last = out.strip().splitlines()[-1:] or ["(none)"]
        raise AssertionError(f"pattern still searching after {LIMIT_S} s: {last[0]}") from None
    assert done.returncode == 0, done.stderr[-2000:]
    last = done.stdout.strip().splitlines()[-1]
    assert last.startswith("done ") and int(last.split()[1]) > 200, last


def test_the_probe_finds_an_exponential_pattern() -> None:
    """The probe catches the shape that hung tester13 L's turn (checked here on a short probe,
    with a time limit, so the test itself cannot hang)."""
    bad = r"(?:\s+|ok|好的|好)*"
    probes = _probes(bad)
    assert " " * PROBE_LENGTH + "\x00" in probes
    assert "好的" * (PROBE_LENGTH // 2) + "\x00" in probes
    code = f"import re; re.compile(r'(?:' + {bad!r} + r')\\Z').match(' ' * 40 + '\\x00')"
    try:
        subprocess.run([sys.executable, "-c", code], timeout=3, check=True)
    except subprocess.TimeoutExpired:
        return
    raise AssertionError("the exponential pattern finished: the probe would miss it")


if __name__ == "__main__":
    _probe_all()
