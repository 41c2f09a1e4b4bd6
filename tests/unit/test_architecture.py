"""The layout's rules, checked: import-linter contracts and a runtime-free spreadsheet reader."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
#: The library's packages (``[tool.setuptools.packages.find]`` of ``pyproject.toml``).
LIBRARY = ("orchestrator", "serving", "skills", "training", "workflows")


def test_import_linter_contracts_are_kept() -> None:
    """Layers import one way, analysis and the reader stay off the runtime, no cycles.

    The contracts live in ``[tool.importlinter]`` of ``pyproject.toml``.
    """
    lint = Path(sys.executable).with_name("lint-imports")
    done = subprocess.run(
        [str(lint), "--no-cache"], cwd=ROOT, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-2000:]
    assert " 0 broken" in done.stdout, done.stdout[-2000:]


def _modules_after_import(module: str) -> set[str]:
    code = f"import sys, {module}; print('\\n'.join(sorted(sys.modules)))"
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    return {name.split(".")[0] for name in done.stdout.split()}


def test_the_spreadsheet_reader_imports_without_the_runtime() -> None:
    loaded = _modules_after_import("orchestrator.spreadsheet")
    assert loaded.isdisjoint({"sqlalchemy", "openai", "langgraph", "torch", "transformers"})
    assert loaded.isdisjoint({"serving", "skills", "workflows"})


def test_the_analysis_imports_without_the_model_runtime() -> None:
    loaded = _modules_after_import("orchestrator.analysis.skew")
    assert loaded.isdisjoint({"openai", "langgraph", "skills", "workflows"})


def test_ruff_lint_and_format_are_clean() -> None:
    """The style rules of ``[tool.ruff]`` hold on the whole tree (lint and format)."""
    ruff = Path(sys.executable).with_name("ruff")
    for args in (["check", "."], ["format", "--check", "."]):
        done = subprocess.run(
            [str(ruff), *args], cwd=ROOT, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-1000:]


def test_the_core_loads_no_workflow_or_skill_by_import() -> None:
    """Issue 49: the dispatcher, the batch, the UI service and the run command reach workflows
    through entry points only (contract ``core-without-workflows``): importing them loads none."""
    loaded = _modules_after_import(
        "orchestrator.core.dispatcher, orchestrator.core.registry, orchestrator.batch.factory, "
        "orchestrator.batch.results, orchestrator.ui.service, orchestrator.cli.run"
    )
    assert loaded.isdisjoint({"workflows", "skills"})


def test_no_module_over_800_lines_and_no_function_over_100() -> None:
    """Issue 48: a library module is at most 800 lines and a function at most 100 (decorators
    included); a longer function says why in a comment that starts ``# long only by`` (a typer
    command whose options are its signature)."""
    too_long = []
    for package in LIBRARY:
        for path in sorted((ROOT / package).rglob("*.py")):
            source = path.read_text(encoding="utf-8")
            lines = source.splitlines()
            name = path.relative_to(ROOT)
            if len(lines) > 800:
                too_long.append(f"{name}: {len(lines)} lines")
            for node in ast.walk(ast.parse(source)):
                if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                    continue
                start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
                end = node.end_lineno or node.lineno
                said = any("# long only by" in line for line in lines[start - 1 : end])
                if end - start + 1 > 100 and not said:
                    too_long.append(f"{name}:{node.lineno} {node.name}: {end - start + 1} lines")
    assert not too_long, "split these (or say why in a '# long only by' comment):\n" + "\n".join(
        too_long
    )
