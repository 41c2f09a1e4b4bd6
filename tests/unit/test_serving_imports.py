"""Loading the vLLM plugin's entry point pulls in only what the plugin needs.

vLLM loads every ``vllm.general_plugins`` entry point in each of its server processes, so what
the plugin's import drags along (pydantic, httpx, the orchestrator, the classifier, LangGraph,
SQLAlchemy) would load, and run its import-time code, inside vLLM. Each check runs in a fresh
interpreter so the test process's own imports do not hide a module.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

# Before ``serving/__init__.py`` turned lazy the entry point pulled in about 400 modules
# (numpy alone is about 110 of them in a fresh interpreter, and the plugin needs numpy).
MODULE_BOUND = 160

_PROBE = """
import importlib.metadata, json, sys
before = set(sys.modules)
(ep,) = [e for e in importlib.metadata.entry_points(group="vllm.general_plugins")
         if e.value.startswith("serving.")]
ep.load()
print(json.dumps(sorted(set(sys.modules) - before)))
"""

FORBIDDEN = ("orchestrator", "langgraph", "sqlalchemy", "pydantic", "httpx", "torch", "re2")


def _new_modules(code: str) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def _under(modules: list[str], top: str) -> list[str]:
    return [m for m in modules if m == top or m.startswith(top + ".")]


def test_plugin_entry_point_loads_few_modules() -> None:
    new = _new_modules(_PROBE)
    assert "serving.vllm_plugin" in new
    assert len(new) < MODULE_BOUND, f"{len(new)} modules: {new}"
    for top in FORBIDDEN:
        assert not _under(new, top), f"the plugin loaded {_under(new, top)}"
    # of the serving package, only the package itself and the plugin
    assert set(_under(new, "serving")) == {"serving", "serving.vllm_plugin"}


def test_serving_names_load_on_first_use() -> None:
    code = (
        "import json, sys\n"
        "import serving\n"
        "assert 'serving.launcher' not in sys.modules\n"
        "from serving import ExpertRoutingSource, VLLMServer\n"
        "print(json.dumps([ExpertRoutingSource.__module__, VLLMServer.__module__,\n"
        "                  'serving.launcher' in sys.modules]))\n"
    )
    assert _new_modules(code) == ["serving.expert_routing", "serving.launcher", True]


def test_every_public_name_resolves() -> None:
    import serving

    for name in serving.__all__:
        assert getattr(serving, name) is not None, name
    assert set(serving.__all__) <= set(dir(serving))


def test_an_unknown_name_is_an_attribute_error() -> None:
    import serving

    with pytest.raises(AttributeError, match="NoSuchThing"):
        serving.NoSuchThing  # noqa: B018


def test_the_name_table_and_all_agree() -> None:
    import serving

    assert sorted(serving._SOURCES) == sorted(serving.__all__)
