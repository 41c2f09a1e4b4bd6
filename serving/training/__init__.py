"""Training of the trained offline ERNIE-MoE (issue 20): :mod:`serving.training.train` (the
training loop, a plain script on torch + transformers), :mod:`serving.training.generate` (greedy
answers to held-out prompts, no grammar) and :mod:`serving.training.card` (the model card).

The training data comes from :mod:`training` (it needs the skills' prompts, which
sit above this layer).
"""

from serving.training.card import LIMITATIONS, is_trained, write_card

__all__ = ["LIMITATIONS", "is_trained", "write_card"]
