"""Memory planners over plain buffers (sizes and lifetimes; nothing here knows models).

Ports of TFLM's GreedyMemoryPlanner and LinearMemoryPlanner, the live-bytes lower bound, a
plan verifier and TFLM's ASCII plan picture.
"""

from __future__ import annotations

from tinyarena.planning.ascii import render_memory_plan
from tinyarena.planning.bounds import lower_bound
from tinyarena.planning.buffers import Buffer, BufferArrays, Plan, buffer_arrays
from tinyarena.planning.greedy import (
    GREEDY_BYTES_PER_BUFFER,
    GreedyPlanner,
    greedy_max_buffers,
    greedy_order,
    plan_greedy,
)
from tinyarena.planning.linear import LINEAR_MAX_BUFFERS, LinearPlanner, plan_linear
from tinyarena.planning.verify import AllowedOverlaps, verify_plan

__all__ = [
    "AllowedOverlaps",
    "Buffer",
    "BufferArrays",
    "GREEDY_BYTES_PER_BUFFER",
    "GreedyPlanner",
    "LINEAR_MAX_BUFFERS",
    "LinearPlanner",
    "Plan",
    "buffer_arrays",
    "greedy_max_buffers",
    "greedy_order",
    "lower_bound",
    "plan_greedy",
    "plan_linear",
    "render_memory_plan",
    "verify_plan",
]
