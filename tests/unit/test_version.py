"""One release number: ``orchestrator.__version__`` is pyproject's version, and the changelog
has a dated section for it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import orchestrator

ROOT = Path(__file__).resolve().parents[2]


def test_version_is_the_same_everywhere() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert orchestrator.__version__ == project["version"]
    changelog = (ROOT / "CHANGELOG.md").read_text(encoding="utf-8")
    section = rf"^## \[{re.escape(project['version'])}\] - \d{{4}}-\d{{2}}-\d{{2}}$"
    assert re.search(section, changelog, re.MULTILINE), "CHANGELOG.md lacks the release"
