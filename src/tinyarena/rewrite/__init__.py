"""Lossless edits of existing .tflite models: metadata, operator order, subgraph contents.

See ``tinyarena.rewrite._splice`` for how the bytes are laid out and why nothing else moves.
"""

from __future__ import annotations

from tinyarena.rewrite.rewriter import (
    KeptOperator,
    NewOperator,
    NewTensor,
    SubgraphReplacement,
    reorder_operators,
    replace_subgraph,
    rewrite_model,
    set_metadata,
)

__all__ = [
    "KeptOperator",
    "NewOperator",
    "NewTensor",
    "SubgraphReplacement",
    "reorder_operators",
    "replace_subgraph",
    "rewrite_model",
    "set_metadata",
]
