"""Per-family parts of the offline checkpoint builder (:mod:`serving.checkpoint`).

* :mod:`serving.families.configs`: the transformers config of each family for a
  :class:`~serving.checkpoint.CheckpointSpec`, and each family's cheapest CPU shape.
* :mod:`serving.families.planting`: planted hot and dead experts for routers without ERNIE's
  correction bias (gpt-oss through its router bias, the others through the gate rows).

The routing rule of each family is described by :class:`serving.architecture.MoEArchitecture`;
``docs/moe_families.md`` says how to add a family.
"""

from __future__ import annotations

from serving.families.configs import CPU_SHAPES, family_config

__all__ = ["CPU_SHAPES", "family_config"]
