"""The request classifier: declarative rules (``orchestrator/rules/routes.toml``), fuzzy and regex
matching in English and Chinese, calibrated confidence, explained decisions, hot reload.

Public API::

    from orchestrator.classifier import RuleClassifier, Classification, Signal, Rule

    result = RuleClassifier().classify(request)      # a Request
    result = RuleClassifier().classify_text(b"...")  # raw text or bytes, bad input included

Names are imported on first use (PEP 562): ``from orchestrator.classifier import
Classification`` loads only :mod:`orchestrator.classification` (pydantic), not RE2, rapidfuzz
or the learned tier.

See :mod:`orchestrator.classifier.core` for the scoring, decision and confidence, and
:mod:`orchestrator.classifier.engine` for how text is matched.
"""

from __future__ import annotations

import typing

from orchestrator._lazy import lazy_getattr as _lazy_getattr

if typing.TYPE_CHECKING:
    from orchestrator.classification import (
        Classification,
        FallbackReason,
        RouteScore,
        Signal,
    )
    from orchestrator.classifier.core import (
        RuleClassifier,
        default_calibration_path,
        default_rules_path,
    )
    from orchestrator.classifier.engine import normalise
    from orchestrator.classifier.loader import RulesError, load_calibration, load_rules
    from orchestrator.classifier.models import (
        CalibrationFile,
        RouteSpec,
        Rule,
        RulesFile,
        Thresholds,
    )

#: Public name -> the module that defines it.
_EXPORTS: dict[str, str] = {
    "CalibrationFile": "orchestrator.classifier.models",
    "Classification": "orchestrator.classification",
    "FallbackReason": "orchestrator.classification",
    "RouteScore": "orchestrator.classification",
    "RouteSpec": "orchestrator.classifier.models",
    "Rule": "orchestrator.classifier.models",
    "RuleClassifier": "orchestrator.classifier.core",
    "RulesError": "orchestrator.classifier.loader",
    "RulesFile": "orchestrator.classifier.models",
    "Signal": "orchestrator.classification",
    "Thresholds": "orchestrator.classifier.models",
    "default_calibration_path": "orchestrator.classifier.core",
    "default_rules_path": "orchestrator.classifier.core",
    "load_calibration": "orchestrator.classifier.loader",
    "load_rules": "orchestrator.classifier.loader",
    "normalise": "orchestrator.classifier.engine",
}

__all__ = [
    "CalibrationFile",
    "Classification",
    "FallbackReason",
    "RouteScore",
    "RouteSpec",
    "Rule",
    "RuleClassifier",
    "RulesError",
    "RulesFile",
    "Signal",
    "Thresholds",
    "default_calibration_path",
    "default_rules_path",
    "load_calibration",
    "load_rules",
    "normalise",
]


# A public name is imported on first use (PEP 562); AttributeError for any other name.
__getattr__ = _lazy_getattr(__name__, _EXPORTS, globals())


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
