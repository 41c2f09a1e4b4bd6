"""The request classifier: declarative rules (``orchestrator/rules/routes.toml``), fuzzy and regex
matching in English and Chinese, calibrated confidence, explained decisions, hot reload.

Public API::

    from orchestrator.classifier import RuleClassifier, Classification, Signal, Rule

    result = RuleClassifier().classify(request)      # a Request
    result = RuleClassifier().classify_text(b"...")  # raw text or bytes, bad input included

See :mod:`orchestrator.classifier.core` for the scoring, decision and confidence, and
:mod:`orchestrator.classifier.engine` for how text is matched.
"""

from orchestrator.classifier.core import (
    RuleClassifier,
    default_calibration_path,
    default_rules_path,
)
from orchestrator.classifier.engine import normalise
from orchestrator.classifier.loader import RulesError, load_calibration, load_rules
from orchestrator.classifier.models import (
    CalibrationFile,
    Classification,
    FallbackReason,
    RouteScore,
    RouteSpec,
    Rule,
    RulesFile,
    Signal,
    Thresholds,
)

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
