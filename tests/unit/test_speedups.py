"""The compiled classifier modules (orchestrator.speedups): the same results as the Python
sources, and never a build of a source that has changed since."""

from __future__ import annotations

import hashlib
import importlib.machinery
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from orchestrator import speedups
from orchestrator.classifier import core
from orchestrator.exceptions import UserError

#: Classifies every labelled request (tune and test) and prints each result as JSON, with
#: whether the classifier's modules were compiled; run once compiled and once as Python.
_DUMP = """
import json, sys
from orchestrator import speedups
from orchestrator.classifier import RuleClassifier, core, engine, learned, negation
from orchestrator.classifier.labelled_set import load_split
from orchestrator.config import DEFAULT_DATA_DIR
rows = load_split(DEFAULT_DATA_DIR, "tune") + load_split(DEFAULT_DATA_DIR, "test")
clf = RuleClassifier(reload_interval=None)
mods = (core, engine, learned, negation)
print(json.dumps([speedups.compiled(m) for m in mods]))
for row in rows:
    print(clf.classify(row.to_request()).model_dump_json())
"""


def _dump(pure: bool) -> tuple[list[bool], list[str]]:
    env = {k: v for k, v in os.environ.items() if k != speedups.PURE_ENV}
    if pure:
        env[speedups.PURE_ENV] = "1"
    out = subprocess.run(
        [sys.executable, "-c", _DUMP], env=env, capture_output=True, text=True, check=True
    ).stdout.splitlines()
    return json.loads(out[0]), out[1:]


def test_the_compiled_classifier_gives_every_labelled_request_the_python_result() -> None:
    if not all(s.compiled for s in speedups.check()):
        pytest.skip("not compiled here: `orchestrator classifier compile` (install.sh runs it)")
    compiled_flags, compiled = _dump(pure=False)
    pure_flags, pure = _dump(pure=True)
    assert compiled_flags == [True] * 4
    assert pure_flags == [False] * 4
    assert len(compiled) == len(pure) > 5000
    differ = [(a, b) for a, b in zip(compiled, pure, strict=True) if a != b]
    assert not differ, differ[:3]


def test_this_test_run_uses_the_compiled_modules_when_they_are_built() -> None:
    # a fresh build must be what the suite exercises, not silently the Python fallback
    fresh = {s.name for s in speedups.check() if s.compiled}
    if "orchestrator.classifier.core" not in fresh:
        pytest.skip("not compiled here")
    assert speedups.compiled(core)
    assert isinstance(core.__loader__, importlib.machinery.ExtensionFileLoader)
    # the packaged rules are found from the package, not from the build's folder
    assert core.default_rules_path().is_file()


def _fake_build(tmp_path: Path, sha: dict[str, str] | None = None) -> Path:
    tmp_path.mkdir(parents=True, exist_ok=True)
    entries = {}
    for name in speedups.MODULES:
        file = f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}"
        (tmp_path / file).write_bytes(b"not a real build")
        digest = hashlib.sha256(speedups.source_of(name).read_bytes()).hexdigest()
        entries[name] = {"file": file, "sha256": (sha or {}).get(name, digest)}
    manifest = {"python": sys.implementation.cache_tag, "cython": "x", "modules": entries}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    return tmp_path


def test_a_build_of_the_current_sources_is_used(tmp_path: Path) -> None:
    statuses = speedups.check(_fake_build(tmp_path))
    assert [s.name for s in statuses] == list(speedups.MODULES)
    assert all(s.compiled and not s.reason for s in statuses)


def test_a_module_whose_source_changed_runs_as_python(tmp_path: Path) -> None:
    name = "orchestrator.classifier.learned"
    statuses = {s.name: s for s in speedups.check(_fake_build(tmp_path, {name: "0" * 64}))}
    assert not statuses[name].compiled
    assert "source changed" in statuses[name].reason
    assert all(s.compiled for n, s in statuses.items() if n != name)


def test_a_build_for_another_python_or_none_at_all_is_not_used(tmp_path: Path) -> None:
    assert all("not built" in s.reason for s in speedups.check(tmp_path))
    directory = _fake_build(tmp_path)
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["python"] = "cpython-99"
    (directory / "manifest.json").write_text(json.dumps(manifest))
    statuses = speedups.check(directory)
    assert not any(s.compiled for s in statuses)
    assert "cpython-99" in statuses[0].reason


def test_a_missing_build_file_is_not_used(tmp_path: Path) -> None:
    directory = _fake_build(tmp_path)
    name = "orchestrator.classifier.engine"
    (directory / f"{name}{importlib.machinery.EXTENSION_SUFFIXES[0]}").unlink()
    statuses = {s.name: s for s in speedups.check(directory)}
    assert not statuses[name].compiled
    assert statuses["orchestrator.classifier.core"].compiled


def test_the_pure_python_switch_turns_every_build_off(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(speedups.PURE_ENV, "1")
    statuses = speedups.check(_fake_build(tmp_path))
    assert not any(s.compiled for s in statuses)
    assert all(speedups.PURE_ENV in s.reason for s in statuses)


def test_install_puts_a_fresh_build_first_and_a_broken_manifest_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    others = [f for f in sys.meta_path if not isinstance(f, speedups._CompiledFinder)]
    monkeypatch.setattr(sys, "meta_path", list(others))
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "manifest.json").write_text(json.dumps({"python": sys.implementation.cache_tag}))
    assert not any(s.compiled for s in speedups.install(broken))  # no error on import
    assert sys.meta_path == others
    fresh = _fake_build(tmp_path / "fresh", {"orchestrator.textnorm": "0" * 64})
    statuses = speedups.install(fresh)
    finder = sys.meta_path[0]
    assert isinstance(finder, speedups._CompiledFinder)
    assert set(finder.builds) == {s.name for s in statuses if s.compiled}
    assert "orchestrator.textnorm" not in finder.builds  # its source is not the one built
    assert speedups.install(fresh) == statuses and sys.meta_path.count(finder) == 1


def test_the_finder_finds_only_the_modules_it_was_given(tmp_path: Path) -> None:
    so = tmp_path / f"m{importlib.machinery.EXTENSION_SUFFIXES[0]}"
    so.write_bytes(b"")
    finder = speedups._CompiledFinder({"orchestrator.classifier.core": so})
    spec = finder.find_spec("orchestrator.classifier.core")
    assert spec is not None and spec.origin == str(so)
    assert isinstance(spec.loader, importlib.machinery.ExtensionFileLoader)
    assert finder.find_spec("orchestrator.classifier.models") is None


def test_building_without_cython_says_what_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setitem(sys.modules, "Cython.Build", None)  # import Cython.Build fails
    with pytest.raises(UserError, match=r"\[speedups\]"):
        speedups.build(tmp_path)
    assert not (tmp_path / "manifest.json").exists()


def test_the_cli_says_which_modules_run_compiled_and_refuses_two_actions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from typer.testing import CliRunner

    from orchestrator.cli.app import app

    monkeypatch.setenv(speedups.PURE_ENV, "1")
    result = CliRunner().invoke(app, ["classifier", "compile", "--check"], terminal_width=200)
    assert result.exit_code == 0
    for name in speedups.MODULES:
        assert f"{name}" in result.output
    assert result.output.count(f"{speedups.PURE_ENV} is set") == len(speedups.MODULES)
    built = speedups.COMPILED_DIR.exists()
    both = CliRunner().invoke(app, ["classifier", "compile", "--check", "--clean"])
    assert both.exit_code == 2
    assert "exclude each other" in both.output
    assert speedups.COMPILED_DIR.exists() == built  # --clean did not run
