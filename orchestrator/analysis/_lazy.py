"""Lazy public names of the analysis packages (PEP 562), defined once for both.

``orchestrator.analysis`` and ``orchestrator.analysis.skew`` export names whose modules are
costly to import (the skew report loads scipy's statistics, about 2 s of CPU on a cold start
here), so each name is imported on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any


def lazy_getattr(
    package: str, homes: Mapping[str, str], namespace: dict[str, Any]
) -> Callable[[str], Any]:
    """A module ``__getattr__`` that imports ``homes[name]`` on first use of ``name``, caches
    the value in ``namespace`` (the package's ``globals()``) and returns it.

    Raises (from the returned function):
        AttributeError: ``name`` is not one of ``homes``.
    """

    def getattr_(name: str) -> Any:
        home = homes.get(name)
        if home is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(home), name)
        namespace[name] = value
        return value

    return getattr_
