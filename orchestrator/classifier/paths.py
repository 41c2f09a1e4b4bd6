"""Where the classifier's files are: the packaged rules, learned tier and calibration, or a
fitted classifier's folder (``$ORCH_CLASSIFIER_DIR``, written by ``orchestrator classifier fit
--examples``)."""

from __future__ import annotations

import os
from importlib.resources import files
from pathlib import Path

from orchestrator.classifier import learned as learned_tier

#: ``orchestrator/rules/``: shipped as package data (the ``*.toml`` glob in pyproject).
_RULES_DIR = Path(str(files("orchestrator").joinpath("rules")))


def default_rules_path() -> Path:
    """The rules file shipped in the package (``orchestrator/rules/routes.toml``)."""
    return _RULES_DIR / "routes.toml"


#: The environment variable naming the folder of a fitted classifier
#: (``orchestrator classifier fit --examples``): its learned tier and calibration are used
#: instead of the packaged ones.
FITTED_DIR_ENV = "ORCH_CLASSIFIER_DIR"


def fitted_dir() -> Path | None:
    """The folder ``$ORCH_CLASSIFIER_DIR`` names when it holds a fitted learned tier, else None."""
    folder = os.environ.get(FITTED_DIR_ENV)
    if not folder:
        return None
    path = Path(folder).expanduser()
    return path if (path / f"learned.v{learned_tier.VERSION}.npz").is_file() else None


def default_model_path() -> Path:
    """The learned tier in use by default: ``learned.v2.npz`` of ``$ORCH_CLASSIFIER_DIR`` when
    it holds one (:func:`fitted_dir`), else the packaged ``orchestrator/rules/learned.v2.npz``."""
    return (fitted_dir() or _RULES_DIR) / f"learned.v{learned_tier.VERSION}.npz"


def default_calibration_path() -> Path:
    """The calibration in use by default: ``calibration.toml`` of ``$ORCH_CLASSIFIER_DIR`` when
    it holds a fitted learned tier, else the packaged ``orchestrator/rules/calibration.toml``."""
    return (fitted_dir() or _RULES_DIR) / "calibration.toml"


def companion_path(
    given: Path | str | bool | None, default: Path, *, packaged: bool
) -> Path | None:
    """The calibration or learned-tier file a classifier uses.

    Args:
        given: ``False`` for none, a path for that file; ``None`` (or ``True``) for ``default``.
        default: The file in use by default (:func:`default_calibration_path`,
            :func:`default_model_path`).
        packaged: Whether the classifier uses the default rules; ``default`` goes only with them.

    Returns:
        The path, or None for no file (``False``, own rules, or ``default`` missing).
    """
    if given is False:
        return None
    if isinstance(given, str | Path):
        return Path(given)
    return default if packaged and default.exists() else None
