"""A prepare context that rewrites the scratch requests of a reference prepare.

Several cmsis_nn kernels run the reference kernel's Prepare and differ only in their scratch
requests (fewer LSTM buffers, two TRANSPOSE_CONV buffers instead of one). Rather than copying
those prepares, the CMSIS-NN module runs the reference one through this adapter, whose
``rewrite`` maps the n-th reference request (its byte count) to the requests the CMSIS-NN kernel
makes in its place.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from tinyarena.kernels.base import PrepareContext, Target
from tinyarena.model.types import Tensor

Rewrite = Callable[[int, int], tuple[int, ...]]  # (request number, bytes) -> bytes requested


class ScratchRewrite:
    """``ctx`` with its ``request_scratch`` calls passed through ``rewrite``."""

    def __init__(self, ctx: PrepareContext, rewrite: Rewrite) -> None:
        self._ctx = ctx
        self._rewrite = rewrite
        self._count = 0

    @property
    def target(self) -> Target:
        return self._ctx.target

    def allocate_persistent(self, nbytes: int) -> int:
        return self._ctx.allocate_persistent(nbytes)

    def tensor(self, index: int) -> Tensor | None:
        return self._ctx.tensor(index)

    def allocate_temp_tensor(self, index: int) -> None:
        self._ctx.allocate_temp_tensor(index)

    def request_scratch(self, nbytes: int, *, eval_writes: int = 0) -> int:
        """The first replacement's handle (-1 when the request is dropped)."""
        handles = [self._ctx.request_scratch(n, eval_writes=eval_writes)
                   for n in self._rewrite(self._count, nbytes)]
        self._count += 1
        return handles[0] if handles else -1

    def request_workspace(self, shape: tuple[int, ...], dtype: Any, *,
                          persistent: bool = True,
                          initial: np.ndarray | Callable[[], np.ndarray] | None = None) -> int:
        return self._ctx.request_workspace(shape, dtype, persistent=persistent,
                                           initial=initial)

    def subgraph_count(self) -> int:
        return self._ctx.subgraph_count()

    def reset_decompression_memory(self) -> None:
        self._ctx.reset_decompression_memory()

    def decompress_into_alternate_memory(self, tensor_index: int) -> bool:
        return self._ctx.decompress_into_alternate_memory(tensor_index)
