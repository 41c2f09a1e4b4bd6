"""Each package's ``__all__`` lists exactly its public names (after httpx's test of the same name).

A name defined or re-exported by a package ``__init__`` without an underscore is public, so it
must be in ``__all__``; every name in ``__all__`` must resolve; ``__all__`` is sorted.
"""

from __future__ import annotations
import __future__

import importlib
import pkgutil
import types

import pytest

ROOTS = ("orchestrator", "serving", "skills", "workflows")


def _packages() -> list[str]:
    names = []
    for root in ROOTS:
        names.append(root)
        package = importlib.import_module(root)
        for info in pkgutil.walk_packages(package.__path__, prefix=f"{root}."):
            if info.ispkg and not info.name.endswith(".migrations"):
                names.append(info.name)
    return sorted(names)


def _public_names(package: types.ModuleType) -> set[str]:
    return {
        name
        for name, value in vars(package).items()
        if not name.startswith("_")
        and name != "TYPE_CHECKING"
        and not isinstance(value, types.ModuleType | __future__._Feature)
    }


def _isort_key(name: str) -> tuple[int, str]:
    """isort-style order, as ruff's RUF022 wants: CONSTANTS, then Classes, then functions."""
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


@pytest.mark.parametrize("name", _packages())
def test_all_matches_the_public_names(name: str) -> None:
    package = importlib.import_module(name)
    exported = getattr(package, "__all__", None)
    public = _public_names(package)
    if exported is None:
        assert not public, f"{name} has public names {sorted(public)} but no __all__"
        return
    assert list(exported) == sorted(exported, key=_isort_key), f"{name}.__all__ is not sorted"
    for member in exported:
        assert getattr(package, member, None) is not None, f"{name}.{member} does not resolve"
    # A lazy package (PEP 562) holds only what was used so far; what it holds must be exported.
    assert public <= set(exported), f"{name}: public but not in __all__: {public - set(exported)}"
    if not hasattr(package, "__getattr__"):
        assert set(exported) == public, (
            f"{name}: in __all__ but not defined: {set(exported) - public}"
        )


def test_the_lazy_facade_exports_what_the_readme_uses() -> None:
    import orchestrator

    assert set(orchestrator.__all__) == set(orchestrator._EXPORTS)
    for member in orchestrator.__all__:  # classes and constants (FALLBACK) alike
        source = importlib.import_module(orchestrator._EXPORTS[member])
        assert getattr(orchestrator, member) is getattr(source, member)
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        _ = orchestrator.nope  # type: ignore[attr-defined]
