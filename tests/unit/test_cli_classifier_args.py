"""``orchestrator classifier``'s options refuse bad values and name the right files."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.classifier.learned import VERSION
from orchestrator.classifier.semantic import SemanticTier
from orchestrator.cli.app import app
from orchestrator.exceptions import UserError


def test_a_negative_cap_is_refused() -> None:
    result = CliRunner().invoke(app, ["classifier", "eval", "--cap", "-5"])
    assert result.exit_code == 2
    assert "--cap" in result.output


def test_the_help_names_the_model_file_that_ships() -> None:
    for command in ("eval", "fit"):
        result = CliRunner().invoke(app, ["classifier", command, "--help"], terminal_width=200)
        assert f"learned.v{VERSION}.npz" in result.output, command
        assert "learned.v1.npz" not in result.output or VERSION == 1
    fit = CliRunner().invoke(app, ["classifier", "fit", "--help"], terminal_width=200)
    assert "replaced" in fit.output  # it says that the default overwrites the shipped model


def test_a_file_that_is_no_model_is_named_without_numpys_pickle_advice(tmp_path: Path) -> None:
    bad = tmp_path / "model.txt"
    bad.write_text("not a model")
    result = CliRunner().invoke(app, ["classifier", "eval", "--model", str(bad)])
    assert result.exit_code == 2
    assert "not a NumPy .npz archive" in result.output
    assert "allow_pickle" not in result.output and "unsafely" not in result.output


def test_help_text_reflows_and_shows_code_without_backticks() -> None:
    result = CliRunner().invoke(app, ["run", "--help"])
    assert result.exit_code == 0
    assert "``" not in result.output and "--restart" in result.output
    text = " ".join(result.output.split())
    assert "printed within a second and the job stops" in text


def test_semantic_without_its_extra_warns_on_stderr(monkeypatch: pytest.MonkeyPatch) -> None:
    def missing(*_: object) -> None:
        raise UserError("the semantic tier needs the [semantic] extra (No module named 'x')")

    monkeypatch.setattr(SemanticTier, "scores", missing)
    result = CliRunner().invoke(app, ["classify", "--semantic", "hello"])
    assert result.exit_code == 0
    assert "warning:" in result.stderr and "[semantic] extra" in result.stderr
    quiet = CliRunner().invoke(app, ["classify", "where is my parcel"])
    assert "warning:" not in quiet.stderr


def test_classify_reads_the_installed_workflows_routes(monkeypatch: pytest.MonkeyPatch) -> None:
    from orchestrator.cli import classifier as cli
    from orchestrator.routes import Route, RouteSpec

    rule = {"id": "opening_hours.named", "weight": 0.9, "keywords": ["opening hours"]}
    spec = RouteSpec(name=Route("opening_hours"), rules=(rule,))
    monkeypatch.setattr(cli, "plugin_route_specs", lambda: (spec,))  # an installed package's
    result = CliRunner().invoke(app, ["classify", "opening hours"], terminal_width=200)
    assert result.exit_code == 0, result.output
    assert '"opening_hours"' in result.stdout  # its route is one of the classifier's (as run's)


def test_a_bad_route_is_one_line_and_exit_2_as_in_batch(monkeypatch: pytest.MonkeyPatch) -> None:
    """A plugin route with a rule the rules file would refuse (a weight over 1): classify said
    it with exit 1, batch with 2 (user49); both are the user's input."""
    from orchestrator.cli import classifier as cli
    from orchestrator.routes import Route, RouteSpec

    rule = {"id": "faq.x", "weight": 2.0, "keywords": ["x"]}
    bad = RouteSpec(name=Route("faq"), rules=(rule,))
    monkeypatch.setattr(cli, "plugin_route_specs", lambda: (bad,))
    result = CliRunner().invoke(app, ["classify", "opening hours"], terminal_width=200)
    assert result.exit_code == 2, result.output
    assert result.stderr.count("error:") == 1 and "faq" in result.stderr
    assert "Traceback" not in result.output
