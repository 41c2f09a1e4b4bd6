"""A one-pass RE2 prefilter for the regex rules.

Searching every regex rule in turn with the ``regex`` module (with its per-search timeout) was
the largest part of a classification's time (``python -m benchmarks.classifier_bench``
measures it: ``benchmarks/results/classifier_bench.md``). RE2 (Google's linear-time engine,
via the ``google-re2`` binding) matches all of them together in one pass (``re2.Set``); only
the rules it reports are then searched with ``regex`` for the matched
text and span, so results are exactly those of the ``regex`` module alone.

That holds because each pattern goes into the set *relaxed*: it accepts at least what the
``regex`` module would accept, never less.

* ``\\b`` and ``\\B`` are dropped (an assertion removed only widens);
* ``\\w``, ``\\d`` and ``\\s`` also accept every non-ASCII character (RE2's are ASCII-only;
  Python's are Unicode);
* ``\\uXXXX`` and ``\\UXXXXXXXX`` become RE2's ``\\x{...}``.

A pattern that cannot be relaxed this way (a class shorthand inside a negated class) or that
RE2 does not support (look-around, back-references, possessive or atomic groups, ``\\p{..}``)
gets no prefilter: its rule is always searched, as before.
"""

from __future__ import annotations

import re2

_ANY_NON_ASCII = r"\x{80}-\x{10FFFF}"
_WIDEN = frozenset("wds")  # Unicode in Python, ASCII in RE2
_SUPERSET = frozenset("WDS")  # RE2's complements already include every non-ASCII character
_UNSUPPORTED = frozenset("pPNXGKg123456789")
#: RE2's memory budget for a set, bytes (``RE2::Options::max_mem``; a cap, not an allocation).
#: The set's DFA states are built as texts need them; when they outgrow the budget RE2 drops
#: them and starts again. RE2's default (8 MiB) was too small on varied text: its DFA was
#: dropped and built again over and over, and one pass took many times longer than with
#: 64 MiB (the figures, from the batch benchmark's requests, are in
#: ``benchmarks/results/docs_history_2026-12-05.md``); the DFA stays
#: near 6 MiB on the project's data.
SET_MAX_MEM = 64 << 20


def relax(pattern: str) -> str | None:
    """The RE2 pattern that accepts at least what ``pattern`` accepts in the ``regex`` module.

    Returns:
        The relaxed pattern, or None when it cannot be built (see the module docstring).
    """
    out: list[str] = []
    in_class = negated = False
    i, n = 0, len(pattern)
    while i < n:
        ch = pattern[i]
        if ch == "\\" and i + 1 < n:
            esc = pattern[i + 1]
            i += 2
            if esc in ("u", "U"):
                width = 4 if esc == "u" else 8
                digits = pattern[i : i + width]
                if len(digits) != width:
                    return None
                out.append(f"\\x{{{digits}}}")
                i += width
            elif esc in "bB" and not in_class:
                continue
            elif esc in _WIDEN:
                if in_class:
                    if negated:
                        return None
                    out.append(f"\\{esc}{_ANY_NON_ASCII}")
                else:
                    out.append(f"[\\{esc}{_ANY_NON_ASCII}]")
            elif esc in _UNSUPPORTED or (esc in _SUPERSET and in_class and negated):
                return None
            else:
                out.append("\\" + esc)
            continue
        if in_class:
            if ch == "]" and not (out and out[-1] in ("[", "[^")):
                in_class = False
            out.append(ch)
        elif ch == "[":
            in_class = True
            negated = pattern.startswith("^", i + 1)
            out.append("[^" if negated else "[")
            i += 2 if negated else 1
            continue
        else:
            out.append(ch)
        i += 1
    return "".join(out)


class RegexPrefilter:
    """Which regex rules can match a text, in one RE2 pass.

    Args:
        patterns: ``(rule index, pattern)`` of every regex rule (case-insensitive, as the
            rules are compiled).

    Example:
        >>> pf = RegexPrefilter([(0, r"\\brefund\\w*"), (1, r"(?<=a)b")])
        >>> sorted(pf.candidates("refunds please")), sorted(pf.candidates("hello"))
        ([0, 1], [1])
    """

    def __init__(self, patterns: list[tuple[int, str]]) -> None:
        options = re2.Options()
        options.case_sensitive = False
        options.log_errors = False  # a pattern RE2 refuses is expected, not an error
        options.never_capture = True
        options.max_mem = SET_MAX_MEM  # RE2's default 8 MiB thrashes: see SET_MAX_MEM
        self._set = re2.Set.SearchSet(options)
        self._set_rules: list[int] = []
        always: list[int] = []
        for rule, pattern in patterns:
            relaxed = relax(pattern)
            try:
                if relaxed is None:
                    raise re2.error(pattern)
                self._set.Add(relaxed)
            except re2.error:
                always.append(rule)
                continue
            self._set_rules.append(rule)
        self._always = tuple(always)
        self._empty = not self._set_rules
        if not self._empty:
            self._set.Compile()

    @property
    def always(self) -> tuple[int, ...]:
        """Rules that RE2 cannot prefilter; they are searched on every text."""
        return self._always

    def candidates(self, text: str) -> list[int]:
        """Rule indices whose pattern may match ``text``, in rule order."""
        if self._empty:
            return list(self._always)
        hits = self._set.Match(text)
        if not hits:
            return list(self._always)
        found = [self._set_rules[j] for j in hits]
        found.extend(self._always)
        found.sort()
        return found
