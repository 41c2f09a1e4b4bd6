"""Lazy public names of the project's packages (PEP 562), defined once for all of them.

``orchestrator``, ``orchestrator.classifier``, ``orchestrator.analysis`` and
``orchestrator.analysis.skew`` export names whose modules are costly to import (the classifier
loads RE2, rapidfuzz and its learned tier; the skew report scipy's statistics), so each name is
imported on first use. (``serving`` keeps its own: the vLLM plugin loads it without the
``orchestrator`` package.)
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
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


def lazy_dir(namespace: dict[str, Any], public: Sequence[str]) -> Callable[[], list[str]]:
    """A module ``__dir__`` that lists what is already in ``namespace`` (the package's
    ``globals()``) and the ``public`` names (its ``__all__``) that :func:`lazy_getattr` has not
    imported yet, sorted.
    """

    def dir_() -> list[str]:
        return sorted(set(namespace) | set(public))

    return dir_
