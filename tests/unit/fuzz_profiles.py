"""Hypothesis settings of the fuzz tests (``tests/unit/test_fuzz_*.py``, issue 18).

Two profiles, chosen with ``ORCH_FUZZ_PROFILE``:

* ``fuzz-ci`` (default): a modest number of examples per test, so the unit suite stays fast;
* ``fuzz-deep``: many examples, run by hand once in a while::

      ORCH_FUZZ_PROFILE=fuzz-deep .venv/bin/python -m pytest tests/unit/test_fuzz_*.py \\
          -p no:cacheprovider --hypothesis-show-statistics

``--hypothesis-show-statistics`` prints how many examples each test ran (passing, failing,
invalid) and how long they took; the fuzz tests also count the examples they ran themselves
(:data:`EXAMPLES`) and print the count in a summary at the end of each module (``-s``).

The profiles are used as ``@settings(parent=FUZZ)`` on each test, not loaded globally, so the
project's other hypothesis tests keep their own settings.

Last ``fuzz-deep`` run (2026-12-01, this 2-core box, load average 12-22 from other work), every
example passing after the fixes of that session: damaged real .xlsx 3,000; arbitrary bytes
under spreadsheet names 2,000; CSV fields and encodings 2,000; ``Request`` 2,000;
``classify_text`` 2,000; ``normalize`` 2,000; ``Matcher.scan`` 2,000;
``decode_routed_experts`` 2,000; ``ExpertRoutingTrace`` 2,000; count codec round trip 2,000
and decoders 2,000; ``load_toml`` 2,000; rules, calibration, policy and mention files 1,500
each; lexicon folders 1,000; risk-scorer file 1,000 (plus 4,026 inputs skipped as the known
finding F3). Wall time: 7.5 min (spreadsheet) and 30.6 min (entry points).
"""

from __future__ import annotations

import os
from collections import Counter

from hypothesis import HealthCheck, settings

settings.register_profile(
    "fuzz-ci",
    max_examples=40,
    deadline=None,
    derandomize=True,  # CI runs the same examples every time: a failure reproduces
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    print_blob=True,
)
settings.register_profile(
    "fuzz-deep",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
    print_blob=True,
)

#: The profile in force for the fuzz tests.
PROFILE = os.environ.get("ORCH_FUZZ_PROFILE", "fuzz-ci")
FUZZ = settings.get_profile(PROFILE)

#: Examples run per test in this process (test name -> count).
EXAMPLES: Counter[str] = Counter()


def scaled(n: int) -> settings:
    """``FUZZ`` with ``max_examples`` scaled by ``n / 40`` (slow targets get fewer)."""
    return settings(FUZZ, max_examples=max(1, FUZZ.max_examples * n // 40))


def report_examples(module: str) -> None:
    """Print the examples each test of ``module`` ran; also append them as JSON lines to the
    file named by ``ORCH_FUZZ_RECORD`` when it is set."""
    import json

    rows = {name: count for name, count in sorted(EXAMPLES.items()) if name.startswith(module)}
    for name, count in rows.items():
        print(f"fuzz examples [{PROFILE}] {name}: {count}")
    target = os.environ.get("ORCH_FUZZ_RECORD")
    if target and rows:
        with open(target, "a", encoding="utf-8") as out:
            out.write(json.dumps({"profile": PROFILE, "examples": rows}) + "\n")
