"""Smaller arenas than TFLM's greedy plan, in a model the unmodified TFLM runs (issue 5).

``optimize_model`` reorders operators, lets views and in-place element-wise ops share bytes,
lets conv/depthwise/pooling/PAD outputs start inside their dying input within a margin derived
from TFLM's reference loop order (``margins``), searches a placement certified against a
lower bound, and pins it in the model as
OfflineMemoryAllocation metadata. ``search_plan`` is the placement search on plain buffers.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from tinyarena._util import lazy_exports

if TYPE_CHECKING:
    from tinyarena.optimize.overlap import OVERLAP_MODES
    from tinyarena.optimize.pipeline import (
        ArenaNumbers,
        OptimizeResult,
        optimal_layout,
        optimize_model,
    )
    from tinyarena.optimize.placement import SearchResult, search_plan
    from tinyarena.optimize.reorder import OrderResult, best_order

# public name -> module defining it, imported on first use: ``size`` and ``plan`` import
# ``optimize.rules`` and ``optimize.safety`` only, and must not pay for the search.
_LAZY: dict[str, str] = {
    "OVERLAP_MODES": "tinyarena.optimize.overlap",
    "ArenaNumbers": "tinyarena.optimize.pipeline",
    "OptimizeResult": "tinyarena.optimize.pipeline",
    "optimal_layout": "tinyarena.optimize.pipeline",
    "optimize_model": "tinyarena.optimize.pipeline",
    "SearchResult": "tinyarena.optimize.placement",
    "search_plan": "tinyarena.optimize.placement",
    "OrderResult": "tinyarena.optimize.reorder",
    "best_order": "tinyarena.optimize.reorder",
}


__getattr__, __dir__ = lazy_exports("tinyarena.optimize", _LAZY, globals())


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
