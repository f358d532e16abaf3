"""The runtime: real tensors in one caller-supplied arena, kernels run through prebuilt views."""

from __future__ import annotations

from tinyarena.interpreter.interpreter import AllocationReport, Interpreter, render_allocations
from tinyarena.interpreter.placement import SharedAllocator
from tinyarena.interpreter.resolver import OpResolver

__all__ = ["AllocationReport", "Interpreter", "OpResolver", "SharedAllocator",
           "render_allocations"]
