"""``orchestrator new workflow NAME``: the package it writes installs, registers its workflow
through its entry point, and its own ScriptedModel test passes as written."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from orchestrator.cli.app import app


def _new(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["new", "workflow", *args], terminal_width=200)
    return result.exit_code, result.output


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("Bad-Name", "is not a workflow name"),
        ("1faq", "is not a workflow name"),
        ("fallback", "is reserved"),
        ("class", "is reserved"),
        ("customer_service", "is already declared"),  # a built-in route: refused at start-up
    ],
)
def test_a_bad_name_gets_one_line(tmp_path: Path, name: str, says: str) -> None:
    code, out = _new(name, "--dir", str(tmp_path))
    assert code == 2
    assert says in out and "Traceback" not in out
    assert not any(tmp_path.iterdir())  # nothing written


def test_an_existing_folder_is_never_written_into(tmp_path: Path) -> None:
    (tmp_path / "faq").mkdir()
    (tmp_path / "faq" / "mine.txt").write_text("keep")
    code, out = _new("faq", "--dir", str(tmp_path))
    assert code == 2 and "already exists" in out
    assert [p.name for p in (tmp_path / "faq").iterdir()] == ["mine.txt"]


def _run(args: list[str], env_path: Path, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": str(env_path)}
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def test_the_package_installs_registers_and_its_test_passes(tmp_path: Path) -> None:
    code, out = _new("opening_hours", "--dir", str(tmp_path))
    assert code == 0, out
    package = tmp_path / "opening_hours"
    names = {p.relative_to(package).as_posix() for p in package.rglob("*") if p.is_file()}
    assert {
        "pyproject.toml",
        "examples.csv",
        "opening_hours_workflow/graph.py",
        "opening_hours_workflow/skill.py",
        "opening_hours_workflow/route.py",
        "tests/test_opening_hours.py",
    } <= names
    # a real install (pip builds the wheel with setuptools), into a folder of its own instead
    # of the shared virtual environment: nothing to clean up outside tmp_path
    site = tmp_path / "site"
    pip = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--no-index"]
    built = _run([*pip, "--no-build-isolation", "--target", str(site), str(package)], site, package)
    assert built.returncode == 0, built.stderr
    found = _run(
        [
            sys.executable,
            "-c",
            "from orchestrator.core.registry import discover_workflows\n"
            "w = [w for w in discover_workflows() if w.name == 'opening_hours'][0]\n"
            "print(w.route, w.route_spec.rules[0]['id'], len(w.route_spec.examples['en']))",
        ],
        site,
        tmp_path,
    )
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == ["opening_hours", "opening_hours.named", "3"]
    # the generated test, run against the installed package (not the source folder)
    tests = _run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(package / "tests")],
        site,
        tmp_path,
    )
    assert tests.returncode == 0, tests.stdout + tests.stderr
    assert "1 passed" in tests.stdout
    assert "loop scope" not in tests.stdout + tests.stderr  # no pytest-asyncio warning
