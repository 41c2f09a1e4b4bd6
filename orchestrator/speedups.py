"""Compiled twins of the classifier's hot modules, built from the unchanged Python sources.

The classifier's default path (:mod:`orchestrator.classifier`) is per-request Python over
precomputed tables; what is left of its time is the interpreter's own (issue 14 asks for p50
≤ 25 µs). :func:`build` compiles the modules in :data:`MODULES` with Cython, as they are (no
``.pyx``, no type declarations, ``annotation_typing`` off, so every line keeps Python's
meaning), into ``orchestrator/_compiled/``; on this project's 2-core host that takes a
fifth off the median classification (``benchmarks/classifier_bench.py``). pydantic 1.x shipped
its pure-Python modules compiled the same way.

The ``.py`` files stay the source of truth. A compiled module is imported only while its source
is byte for byte the one it was built from (a SHA-256 in the build's manifest), so an edited
module runs as Python, never as a stale build; a changed source, a build for another
interpreter or a failed build each leave that module in Python, with one log line that says
why. ``ORCH_PURE_PYTHON=1`` turns all of them off (to debug, profile or measure the Python
path). :func:`install` runs on ``import orchestrator``, before any of the modules loads; it
reads the environment itself, since :class:`orchestrator.config.Settings` is not loaded yet.

Usage::

    orchestrator classifier compile          # scripts/install.sh runs it (30-60 s)
    orchestrator classifier compile --check  # which modules run compiled, and why not
    orchestrator classifier compile --clean

Tests: ``tests/unit/test_speedups.py`` checks that the compiled and the Python classifier give
the same classification of every labelled request, and that a changed source is not shadowed.
"""

from __future__ import annotations

import hashlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

log = logging.getLogger(__name__)

#: The modules compiled: the classifier's per-request path (the read, the rules, the n-gram
#: scorer, negation scopes, the regex prefilter, text folding).
MODULES = (
    "orchestrator.classifier.core",
    "orchestrator.classifier.engine",
    "orchestrator.classifier.learned",
    "orchestrator.classifier.negation",
    "orchestrator.classifier.prefilter",
    "orchestrator.textnorm",
)
#: Set to ``1`` to import every module from its Python source.
PURE_ENV = "ORCH_PURE_PYTHON"
#: Where the builds and their manifest live (ignored by git; made by :func:`build`).
COMPILED_DIR = Path(__file__).resolve().parent / "_compiled"
_MANIFEST = "manifest.json"
#: Cython's compiler directives: Python semantics throughout (annotations are not C types).
_DIRECTIVES = {
    "language_level": 3,
    "binding": True,
    "annotation_typing": False,
    "autotestdict": False,  # doctests are collected from the functions, once
}
_PACKAGE_ROOT = Path(__file__).resolve().parent.parent
_REBUILD = "run `orchestrator classifier compile`"


@dataclass(frozen=True)
class ModuleStatus:
    """How one module of :data:`MODULES` is imported.

    Attributes:
        name: The module's dotted name.
        compiled: True when its compiled build is (or will be) imported.
        reason: Why not, when not (``""`` when compiled).
        build: The compiled file to import, when compiled.
    """

    name: str
    compiled: bool
    reason: str = ""
    build: Path | None = None


def _pure() -> bool:
    return os.environ.get(PURE_ENV, "") not in ("", "0")


def source_of(name: str) -> Path:
    """The ``.py`` source of module ``name`` (a dotted name under this repository's root)."""
    return _PACKAGE_ROOT.joinpath(*name.split(".")).with_suffix(".py")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _manifest(directory: Path) -> dict[str, object] | None:
    try:
        data = json.loads((directory / _MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def check(directory: Path = COMPILED_DIR) -> list[ModuleStatus]:
    """Which modules of :data:`MODULES` have a build in ``directory`` that may be imported:
    one for this interpreter (``sys.implementation.cache_tag``), from their current source."""
    if _pure():
        return [ModuleStatus(name, False, f"{PURE_ENV} is set") for name in MODULES]
    manifest = _manifest(directory)
    if manifest is None:
        why = f"not built: {_REBUILD}"
        return [ModuleStatus(name, False, why) for name in MODULES]
    if manifest.get("python") != sys.implementation.cache_tag:
        why = f"built for {manifest.get('python')}, not {sys.implementation.cache_tag}: {_REBUILD}"
        return [ModuleStatus(name, False, why) for name in MODULES]
    builds = manifest.get("modules")
    builds = builds if isinstance(builds, dict) else {}
    out = []
    for name in MODULES:
        entry = builds.get(name)
        if not isinstance(entry, dict) or not (directory / str(entry.get("file"))).is_file():
            out.append(ModuleStatus(name, False, f"no build of it: {_REBUILD}"))
        elif entry.get("sha256") != _digest(source_of(name)):
            out.append(ModuleStatus(name, False, f"its source changed since the build: {_REBUILD}"))
        else:
            out.append(ModuleStatus(name, True, build=directory / str(entry["file"])))
    return out


class _CompiledLoader(importlib.machinery.ExtensionFileLoader):
    """Loads a compiled build under its source's name: ``__file__`` is the ``.py`` (where
    pytest, doctest and tracebacks look for its lines); ``__spec__.origin`` is the build."""

    def __init__(self, fullname: str, path: str, source: Path) -> None:
        super().__init__(fullname, path)
        self.source = source

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        module = super().create_module(spec)
        module.__file__ = str(self.source)
        return module


class _CompiledFinder(importlib.abc.MetaPathFinder):
    """Finds the compiled build of a module whose source it was built from (checked once, by
    :func:`install`), ahead of the ``.py``; every other module is left to the usual finders."""

    def __init__(self, builds: dict[str, Path]) -> None:
        self.builds = builds

    def find_spec(
        self, fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        so = self.builds.get(fullname)
        if so is None:
            return None
        loader = _CompiledLoader(fullname, str(so), source_of(fullname))
        return importlib.util.spec_from_file_location(fullname, so, loader=loader)


def install(directory: Path = COMPILED_DIR) -> list[ModuleStatus]:
    """Put the fresh builds in ``directory`` ahead of their sources on the import path (once;
    a module already imported stays as it is). Logs one line when a build exists but some
    module cannot use it; says nothing when nothing was built.

    Returns:
        Each module's :class:`ModuleStatus`.
    """
    statuses = check(directory)
    if any(isinstance(f, _CompiledFinder) for f in sys.meta_path):
        return statuses
    stale = [s for s in statuses if s.build is None]
    if stale and not _pure() and (directory / _MANIFEST).exists():
        log.warning(
            "these modules run as Python, slower: %s",
            "; ".join(f"{s.name} ({s.reason})" for s in stale),
        )
    fresh = {s.name: s.build for s in statuses if s.build is not None}
    if fresh:
        sys.meta_path.insert(0, _CompiledFinder(fresh))
    return statuses


def compiled(module: ModuleType) -> bool:
    """Whether ``module`` was imported from a compiled build."""
    return isinstance(getattr(module, "__loader__", None), importlib.machinery.ExtensionFileLoader)


def build(directory: Path = COMPILED_DIR, *, jobs: int | None = None) -> list[ModuleStatus]:
    """Compile :data:`MODULES` with Cython into ``directory`` and write its manifest (the
    builds first, then the manifest, atomically: an interrupted build leaves the old one or
    none, never a manifest that names a missing file).

    Raises:
        UserError: Cython or a C compiler is missing, or compiling failed (the message says
            what to install; the classifier keeps running as Python).
    """
    from orchestrator.exceptions import UserError

    try:
        from Cython.Build import cythonize
        from setuptools import Distribution, Extension
    except ImportError as exc:
        raise UserError(
            f"cannot build the compiled classifier: {exc.name} is missing; install it with "
            "`pip install -e '.[speedups]'`"
        ) from exc
    jobs = jobs or os.cpu_count() or 1
    with tempfile.TemporaryDirectory(prefix="orch-speedups-") as tmp:
        work = Path(tmp)
        # -w: the warnings are about Cython's generated C, not about anything of this project
        extensions = [
            Extension(name, [str(source_of(name))], extra_compile_args=["-w"]) for name in MODULES
        ]
        try:
            modules = cythonize(
                extensions,
                build_dir=str(work / "c"),
                compiler_directives=_DIRECTIVES,
                nthreads=jobs,
                quiet=True,
            )
            dist = Distribution({"ext_modules": modules})
            dist.script_args = [
                "-q", "build_ext", "--build-lib", str(work / "lib"),
                "--build-temp", str(work / "tmp"), "--parallel", str(jobs),
            ]  # fmt: skip
            dist.parse_command_line()
            dist.run_commands()
        except (Exception, SystemExit) as exc:  # setuptools exits on a compiler error
            raise UserError(
                f"compiling the classifier failed ({type(exc).__name__}: {exc}); it keeps "
                "running as Python. Is a C compiler (gcc) and Python's headers installed?"
            ) from exc
        suffix = importlib.machinery.EXTENSION_SUFFIXES[0]
        entries = {}
        directory.mkdir(parents=True, exist_ok=True)
        for name in MODULES:
            built = (
                (work / "lib")
                .joinpath(*name.split("."))
                .with_name(name.rsplit(".", 1)[-1] + suffix)
            )
            target = f"{name}{suffix}"
            shutil.copyfile(built, directory / (target + ".part"))
            os.replace(directory / (target + ".part"), directory / target)
            entries[name] = {"file": target, "sha256": _digest(source_of(name))}
    manifest = {
        "python": sys.implementation.cache_tag,
        "cython": __import__("Cython").__version__,
        "modules": entries,
    }
    part = directory / (_MANIFEST + ".part")
    part.write_text(json.dumps(manifest, indent=1), encoding="utf-8")
    os.replace(part, directory / _MANIFEST)
    return check(directory)


def clean(directory: Path = COMPILED_DIR) -> None:
    """Remove every build (the modules then import from their sources)."""
    shutil.rmtree(directory, ignore_errors=True)
