"""Smaller arenas than TFLM's greedy plan, in a model the unmodified TFLM runs (issue 5).

``optimize_model`` reorders operators, lets views and in-place element-wise ops share bytes,
lets conv/depthwise/pooling/PAD outputs start inside their dying input within a margin derived
from TFLM's reference loop order (``margins``), searches a placement certified against a
lower bound, and pins it in the model as
OfflineMemoryAllocation metadata. ``search_plan`` is the placement search on plain buffers.
"""

from __future__ import annotations

from tinyarena.optimize.overlap import OVERLAP_MODES
from tinyarena.optimize.pipeline import (
    ArenaNumbers,
    OptimizeResult,
    optimal_layout,
    optimize_model,
)
from tinyarena.optimize.placement import SearchResult, search_plan
from tinyarena.optimize.reorder import OrderResult, best_order

__all__ = [
    "ArenaNumbers",
    "OVERLAP_MODES",
    "OptimizeResult",
    "OrderResult",
    "SearchResult",
    "best_order",
    "optimal_layout",
    "optimize_model",
    "search_plan",
]
