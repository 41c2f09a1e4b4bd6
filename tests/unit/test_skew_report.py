"""The skew report end to end on a real SQLite file filled through the store's public API.

Ground truth is planted in synthetic routing (tests/unit/skew_data.py): a hot and a dead
expert, a workflow that over-uses one expert, a drift in one workflow's layer, and two
requests that route unlike their workflow.
"""

from __future__ import annotations

import errno
import json
from collections.abc import Callable
from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest
from skew_data import EXPERTS, T0, add_request, freeze_time, trace
from typer.testing import CliRunner

from orchestrator import TelemetryStore
from orchestrator.analysis.skew import ReportOptions, SkewReport, Thresholds, build_report
from orchestrator.analysis.skew.window import parse_duration, parse_until, resolve
from orchestrator.cli import app
from orchestrator.exceptions import UserError

L = 3


def _shares(**weights: float) -> np.ndarray:
    """Uniform shares with some (layer, expert) weights changed: key ``l1e3=50``."""
    w = np.ones((L, EXPERTS))
    for key, value in weights.items():
        layer, expert = key[1:].split("e")
        w[int(layer) - 1, int(expert)] = value
    return w / w.sum(axis=1, keepdims=True)


BASE = dict(l1e3=1e6, l1e7=0.0)  # layer 1: expert 3 always chosen, expert 7 never
CS = _shares(**BASE)
MOD = _shares(**BASE, l2e5=1.6, l3e5=1.6)
MOD_DRIFTED = _shares(**BASE, l2e5=1.6, l3e5=1.6, l2e9=4.0)
ODD = _shares(
    **BASE, **{f"l{layer}e{e}": 0.0 for layer in (2, 3) for e in range(12)}
)  # L2-3: e12-15 only


@pytest.fixture(scope="module")
def db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("skew") / "telemetry.db"
    store = TelemetryStore(f"sqlite:///{path}")
    rng = np.random.default_rng(42)
    with pytest.MonkeyPatch.context() as mp:
        for week in (0, 1):
            for i in range(40):
                freeze_time(mp, store, T0 + timedelta(days=7 * week, hours=4 * i))
                add_request(
                    store,
                    f"refund please {week}-{i}",
                    "customer_service",
                    [("triage", trace(rng, CS, 60)), ("reply", trace(rng, CS, 40))],
                )
                shares = MOD_DRIFTED if week else MOD
                add_request(
                    store,
                    f"is this post ok {week}-{i}",
                    "moderation",
                    [("judge", trace(rng, shares, 50, confidence=0.4))],
                )
        for i in range(2):
            freeze_time(mp, store, T0 + timedelta(days=10, hours=i))
            add_request(
                store,
                f"<script>alert({i})</script> asdf",
                "customer_service",
                [("triage", trace(rng, ODD, 60)), ("reply", trace(rng, CS, 40))],
            )
    store.close()
    return path


@pytest.fixture(scope="module")
def report(db: Path) -> SkewReport:
    store = TelemetryStore(f"sqlite:///{db}")
    try:
        return build_report(store, ReportOptions(window="7d", until=T0 + timedelta(days=14)))
    finally:
        store.close()


def test_planted_hot_and_dead_experts_are_found_and_nothing_else(report: SkewReport) -> None:
    assert report.overall.hot() == [(1, 3)]
    assert report.overall.dead() == [(1, 7)]
    for profile in report.workflows + report.nodes:
        # moderation's drifted expert (weight 4 of 19: 3.4x uniform) stays under hot_factor 4
        assert profile.hot() == [(1, 3)] and profile.dead() == [(1, 7)], profile.name
        for m in profile.layers:  # every share inside its interval, the bounds ordered
            assert all(
                lo <= s <= hi for lo, s, hi in zip(m.share_low, m.shares, m.share_high, strict=True)
            )
    layer1 = report.overall.layers[0]
    assert layer1.shares[3] == pytest.approx(1 / 2)  # top-2: chosen by every token
    assert layer1.shares[7] == 0 and layer1.judgeable
    assert report.window.end - report.window.start == timedelta(days=7)
    assert report.overall.calls == 40 * 3 + 2 * 2


def test_a_lower_hot_factor_flags_moderations_drifted_expert_too(db: Path) -> None:
    store = TelemetryStore(f"sqlite:///{db}")
    try:
        options = ReportOptions(
            window="7d", until=T0 + timedelta(days=14), thresholds=Thresholds(hot_factor=2.0)
        )
        report = build_report(store, options)
    finally:
        store.close()
    moderation = next(p for p in report.workflows if p.name == "moderation")
    assert moderation.hot() == [(1, 3), (2, 9)]
    assert any("Goodman-Wilson" in note and "2/E" in note for note in report.notes)


def test_workflows_nodes_and_sources_are_profiled(report: SkewReport) -> None:
    assert [p.name for p in report.workflows] == ["customer_service", "moderation"]
    assert [p.name for p in report.nodes] == [
        "customer_service/reply",
        "customer_service/triage",
        "moderation/judge",
    ]
    assert report.overall.sources == {"scripted": 124}
    conf = {p.name: p.confidence.mean for p in report.workflows}
    assert conf["moderation"] == pytest.approx(0.4, abs=0.01)
    assert conf["customer_service"] == pytest.approx(0.6, abs=0.01)
    hist = report.workflows[1].confidence
    assert sum(hist.histogram) == 40 and hist.p10 <= hist.p50 <= hist.p90


def test_fingerprint_names_what_sets_moderation_apart(report: SkewReport) -> None:
    prints = {f.name: f for f in report.fingerprints}
    mod = prints["moderation"]
    assert mod.jsd > prints["customer_service"].jsd
    top = {(d.layer, d.expert, d.direction) for d in mod.distinguishing[:3]}
    assert {(2, 5, "over"), (3, 5, "over"), (2, 9, "over")} & top


def test_drift_is_found_where_it_was_planted_only(report: SkewReport) -> None:
    assert report.drift is not None
    scopes = {s.name: s for s in report.drift.scopes}
    assert scopes["moderation"].status == "tested"
    assert scopes["moderation"].drifted_layers == [2]
    change = scopes["moderation"].largest_changes[0]
    assert (change.layer, change.expert) == (2, 9) and change.current_share > change.baseline_share
    assert scopes["customer_service"].drifted_layers == []
    assert report.drift.baseline.end == report.window.start
    assert report.drift.baseline_profile is not None
    assert report.drift.baseline_profile.calls == 40 * 3


def test_outliers_are_exactly_the_requests_that_route_differently(report: SkewReport) -> None:
    flagged = report.outliers.requests
    assert sorted(r.text for r in flagged) == [
        "<script>alert(0)</script> asdf",
        "<script>alert(1)</script> asdf",
    ]
    assert all(r.node == "triage" and r.z > report.thresholds.outlier_z for r in flagged)
    assert report.outliers.flagged_requests == 2
    assert report.outliers.scored_calls == report.overall.calls


def test_outlier_scoring_is_bounded_to_the_newest_calls(db: Path) -> None:
    store = TelemetryStore(f"sqlite:///{db}")
    try:
        small = build_report(store, ReportOptions(window="all", baseline="none", outlier_limit=30))
    finally:
        store.close()
    assert small.outliers.scored_calls == 30 and small.drift is None
    assert small.overall.calls == 40 * 6 + 4  # the profiles still cover every call


def test_one_workflow_keeps_the_global_reference(db: Path) -> None:
    store = TelemetryStore(f"sqlite:///{db}")
    try:
        only = build_report(
            store, ReportOptions(window="7d", until=T0 + timedelta(days=14), workflow="moderation")
        )
        with pytest.raises(UserError, match="known workflows: customer_service, moderation"):
            build_report(store, ReportOptions(workflow="billing"))
        with pytest.raises(UserError, match="no call with routing between"):
            build_report(store, ReportOptions(window="24h", until=T0 - timedelta(days=30)))
    finally:
        store.close()
    assert [p.name for p in only.workflows] == ["moderation"]
    assert [f.name for f in only.fingerprints] == ["moderation", "moderation/judge"]
    assert only.overall.calls == 124  # fingerprints still compare against all workflows
    assert {r.workflow for r in only.outliers.requests} <= {"moderation"}


def test_window_specs() -> None:
    assert parse_duration("7d") == timedelta(days=7)
    assert parse_duration(" 24H ") == timedelta(hours=24)
    assert parse_duration("2w") == timedelta(weeks=2)
    assert parse_duration("all") is None
    for bad in ("7", "0d", "1.5d", "7x", "-1d", ""):
        with pytest.raises(UserError, match="24h, 7d or 2w"):
            parse_duration(bad)
    with pytest.raises(UserError, match="ISO 8601"):
        parse_until("last tuesday")
    until = parse_until("2026-11-09T10:30")
    now, base = resolve("1d", None, until=until, span=(T0, T0 + timedelta(days=20)))
    assert now.end == T0.replace(day=9, hour=11) and now.start == now.end - timedelta(days=1)
    assert base is not None and base.end == now.start
    assert resolve("all", None, until=None, span=(T0, T0))[1] is None
    with pytest.raises(UserError, match="'all' has none"):
        resolve("7d", "all", until=None, span=(T0, T0))


runner = CliRunner()


def test_cli_writes_html_and_json_reports(db: Path, tmp_path: Path) -> None:
    html, out = tmp_path / "skew.html", tmp_path / "skew.json"
    result = runner.invoke(
        app,
        [
            "skew",
            "--db",
            str(db),
            "--window",
            "7d",
            "--until",
            (T0 + timedelta(days=14)).isoformat(),
            "--html",
            str(html),
            "--json",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    assert "L1:e3" in result.output and "L1:e7" in result.output
    loaded = SkewReport.model_validate_json(out.read_text())
    assert loaded.overall.hot() == [(1, 3)] and loaded.outliers.flagged_requests == 2
    assert json.loads(out.read_text())["shape"]["num_experts"] == EXPERTS
    page = html.read_text()
    assert page.count('class="plotly-graph-div"') >= 5
    assert "<script src" not in page and "<link" not in page  # nothing loaded from outside
    assert "&lt;script&gt;alert(0)&lt;/script&gt; asdf" in page  # request text is escaped
    assert "<script>alert(" not in page
    assert not list(tmp_path.glob(".*.tmp"))  # atomic writes leave no temporary file


def test_cli_rejects_bad_input_with_exit_code_2(db: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty.db"
    TelemetryStore(f"sqlite:///{empty}").close()
    cases = [
        (["--db", str(tmp_path / "missing.db")], "does not exist"),
        (["--db", str(empty)], "no model call with routing"),
        (["--db", str(db), "--workflow", "billing"], "known workflows"),
        (["--db", str(db), "--window", "7days"], "is not a window"),
        (["--db", str(db), "--until", "yesterday"], "ISO 8601"),
        (["--db", str(db), "--baseline", "x"], "--baseline 'x'"),
        (["--db", str(db), "--hot-factor", "0.5"], "hot_factor"),
        (["--db", str(db), "--dead-factor", "1.5"], "dead_factor"),
        (["--db", str(db), "--confidence", "1"], "confidence"),
        (["--db", str(db), "--prom-file", str(tmp_path)], "it is a folder"),
        (["--db", str(db), "--json", str(tmp_path / "nope" / "r.json")], "does not exist"),
        (["--db", str(db), "--database-url", "sqlite://"], "not both"),
    ]
    for args, message in cases:
        result = runner.invoke(app, ["skew", *args])
        assert result.exit_code == 2, (args, result.output)
        assert message in " ".join(result.output.split()), (args, result.output)
    assert not (tmp_path / "missing.db").exists()  # a missing database is not created


@pytest.mark.parametrize("flag", ["--prom-file", "--html", "--json"])
def test_an_unwritable_output_is_refused_in_one_line_before_the_report(
    tmp_path: Path,
    flag: str,
    unwritable_paths: list[Path],
    must_not_run: Callable[[object, str, str], None],
) -> None:
    import orchestrator.cli.skew as skew_cli

    why = "the report was computed before the output path was checked"
    must_not_run(skew_cli, "_report", why)
    for target in unwritable_paths:
        result = runner.invoke(app, ["skew", "--db", str(tmp_path / "none.db"), flag, str(target)])
        text = " ".join(result.output.split())
        assert result.exit_code == 2, (target, result.output)
        assert text.startswith(f"error: cannot write {target}"), text
        assert "Traceback" not in result.output  # (rich wraps the one line at 80 columns)


def test_the_prom_file_is_written_atomically(
    db: Path,
    tmp_path: Path,
    failing_replace: Callable[[int], None],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    prom = tmp_path / "skew.prom"
    prom.write_text("old\n")
    failing_replace(errno.ENOSPC)
    result = runner.invoke(
        app, ["skew", "--db", str(db), "--window", "all", "--prom-file", str(prom)]
    )
    assert result.exit_code == 2, result.output
    assert "No space left on device" in " ".join(result.output.split())
    assert prom.read_text() == "old\n"  # the old file stays whole
    assert not list(tmp_path.glob(".*.tmp"))  # and no temporary file is left
    monkeypatch.undo()
    result = runner.invoke(
        app, ["skew", "--db", str(db), "--window", "all", "--prom-file", str(prom)]
    )
    assert result.exit_code == 0, result.output
    assert "orchestrator_expert_hot_experts" in prom.read_text()


def test_load_and_run_give_the_verdicts_of_skew_on_the_same_calls(db: Path) -> None:
    from orchestrator.analysis.load import expert_load

    store = TelemetryStore(f"sqlite:///{db}")
    try:
        load = expert_load(store)
        overall = build_report(store, ReportOptions(window="all")).overall
    finally:
        store.close()
    assert [(m.layer, m.hot, m.dead, m.judgeable) for m in overall.layers] == [
        (x.layer, x.hot, x.dead, x.judged) for x in load.layers
    ]
    assert [(x.layer, e) for x in load.layers for e in x.hot] == [(1, 3)]
    assert [(x.layer, e) for x in load.layers for e in x.dead] == [(1, 7)]
    result = runner.invoke(app, ["load", "--db", str(db)])
    assert result.exit_code == 0, result.output
    text = " ".join(result.output.split())
    assert "the rule of `orchestrator skew`" in text and "hot = share >" not in text
    assert text.count("1: e3") == 1 and text.count("1: e7") == 1


@pytest.mark.parametrize(
    ("hostile", "inner"),
    [
        ('<a href="https://evil.example/">pay here</a><b>bold</b>', "pay here"),
        ('<span style="color:red">客服</span><b>!', "客服"),
    ],
)
def test_workflow_names_reach_plotly_titles_legends_and_hovers_escaped(
    tmp_path: Path, hostile: str, inner: str
) -> None:
    import re

    from orchestrator.analysis.skew.report_html import render_html

    store = TelemetryStore(f"sqlite:///{tmp_path / 't.db'}")
    rng = np.random.default_rng(3)
    with pytest.MonkeyPatch.context() as mp:
        for i in range(24):  # two weeks: the drift figure has a baseline
            freeze_time(mp, store, T0 + timedelta(hours=14 * i))
            add_request(store, f"q {i}", hostile, [("n", trace(rng, CS, 40, confidence=0.5))])
            add_request(store, f"r {i}", "plain", [("n", trace(rng, CS, 40, confidence=0.5))])
        report = build_report(store, ReportOptions(window="7d"))
    store.close()
    assert report.drift is not None and hostile in [p.name for p in report.workflows]
    page = render_html(report)
    # plotly renders <a>, <b>, <span> of its JSON strings (where < is only \u003c), so every
    # place the name's text appears must follow an HTML-escaped tag, "&gt;"
    found = [m.start() for m in re.finditer(re.escape(inner), page)]
    assert len(found) >= 8  # the tables, and the titles, legends and hovers of the figures
    assert all(page[i - 4 : i] == "&gt;" for i in found), [page[i - 12 : i] for i in found]
