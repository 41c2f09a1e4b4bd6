"""`orchestrator load --model`: calls of two model shapes in one database are refused in one
line that gives the fix once, and `--model` reads one of them (as `orchestrator skew --model`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from orchestrator import TelemetryStore
from orchestrator.cli import app
from tests.unit.skew_data import EXPERTS, add_request, trace, uniform

runner = CliRunner()


@pytest.fixture(scope="module")
def two_shapes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("shapes") / "t.db"
    store = TelemetryStore(f"sqlite:///{path}")
    rng = np.random.default_rng(10)
    small = uniform(layers=2)
    small[1, 5], small[1, 11] = 30.0, 0.0  # layer 2 of the small model: e5 hot, e11 dead
    small /= small.sum(axis=1, keepdims=True)
    for i in range(40):
        big = trace(rng, uniform(), 30)
        add_request(store, f"big {i}", "customer_service", [("n", big)], model="big-moe")
        little = trace(rng, small, 60, layers=(1, 2))
        add_request(store, f"小 {i}", "customer_service", [("n", little)], model="small-moe")
    store.close()
    return path


def test_two_shapes_are_refused_in_one_line_with_the_fix_once(two_shapes: Path) -> None:
    result = runner.invoke(app, ["load", "--db", str(two_shapes)])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert said.startswith("error: calls of different model shapes are stored")
    assert said.count("one database per model") == 1 and said.count("--model") == 1
    assert "filter by model" not in said and "Traceback" not in result.output


def test_model_selects_one_shape(two_shapes: Path) -> None:
    result = runner.invoke(app, ["load", "--db", str(two_shapes), "--model", "small-moe"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.strip().startswith("│")]
    assert any("1: e5" in r and "1: e11" in r for r in rows)
    assert "40 calls" in result.output and f"{EXPERTS} routed experts" in result.output
    result = runner.invoke(app, ["load", "--db", str(two_shapes), "--model", "big-moe"])
    assert result.exit_code == 0, result.output
    assert "1: e5" not in result.output  # uniform routing: no verdict


def test_an_unknown_model_is_named_in_one_line(two_shapes: Path) -> None:
    result = runner.invoke(app, ["load", "--db", str(two_shapes), "--model", "gpt-x"])
    assert result.exit_code == 2, result.output
    said = " ".join(result.output.split())
    assert "'gpt-x'" in said and "--model" in said and "Traceback" not in result.output


def _closed_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_postgres_connection_error_is_one_line() -> None:
    from orchestrator.exceptions import UserError
    from orchestrator.telemetry.readonly import open_readonly

    url = f"postgresql+psycopg://u@127.0.0.1:{_closed_port()}/telemetry"
    for open_store in (open_readonly, TelemetryStore):  # load/skew, and skew --rebuild/run
        with pytest.raises(UserError) as caught:
            open_store(url)
        message = str(caught.value)
        assert "\n" not in message and "\t" not in message, message
        assert "Connection refused" in message and "Is the server running" in message
    for command in (["load"], ["skew"], ["skew", "--rebuild"]):
        result = CliRunner().invoke(app, [*command, "--db", url])
        assert result.exit_code == 2 and "Traceback" not in result.output, result.output
        assert result.output.startswith("error: cannot ")
