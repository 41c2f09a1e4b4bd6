"""Content-moderation workflow: a term lexicon and the model judge a post together, and a
policy table (data) turns both judgements into one :class:`Verdict`.

Modules: :mod:`.verdict` (schema and taxonomy mapping), :mod:`.normalize` and
:mod:`.matcher` (lexicon matching), :mod:`.lexicon` (term files), :mod:`.policy` (decision
table), :mod:`.inputs` (decoding and truncation), :mod:`.judgement` (verdict assembly),
:mod:`.mention` (terms that name a harm), :mod:`.scorer` (the learned risk scorer) and
:mod:`.targeting` (its hate model's features: who a post aims at), :mod:`.graph` (LangGraph
workflow), :mod:`.service` (entry points), :mod:`.dataset` and :mod:`.evaluation` (labelled
set and metrics).
"""

from workflows.content_moderation.graph import ContentModerationWorkflow, build_graph
from workflows.content_moderation.lexicon import LexiconError, load_lexicon
from workflows.content_moderation.matcher import Lexicon
from workflows.content_moderation.policy import Policy, PolicyError, load_policy
from workflows.content_moderation.verdict import (
    TAXONOMY,
    Category,
    CategoryScore,
    Decision,
    InputReport,
    Severity,
    Span,
    Verdict,
)

__all__ = [
    "TAXONOMY",
    "Category",
    "CategoryScore",
    "ContentModerationWorkflow",
    "Decision",
    "InputReport",
    "Lexicon",
    "LexiconError",
    "Policy",
    "PolicyError",
    "Severity",
    "Span",
    "Verdict",
    "build_graph",
    "load_lexicon",
    "load_policy",
]
