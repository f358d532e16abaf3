"""The context kernels see at invoke time, backed by real numpy views of one arena.

TFLM hands each kernel a ``TfLiteContext`` whose eval tensors point into the arena
(``tflite::micro::GetEvalInput``). Here every lookup is a list index into views built once at
allocation time, so an invoke creates no arrays: kernels read and write the arena through them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Sequence

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.model.types import Tensor

if TYPE_CHECKING:  # pragma: no cover
    from tinyarena.interpreter.graph import Graph


class ArenaEvalContext:
    """One per subgraph: the EvalContext of ``kernels.base`` over arena views.

    ``tensor_data(i)`` is the tensor's view (shape and dtype of the tensor) in the arena, or the
    read-only zero-copy view of a constant in the model bytes; ``tensor_bytes(i)`` the same
    memory as flat uint8 (what TFLM's memcpy-based kernels copy).
    """

    __slots__ = ("target", "subgraph_index", "native", "_tensors", "_arrays", "_bytes",
                 "_scratch", "_workspaces", "_graph")

    def __init__(self, *, target: object, subgraph_index: int, tensors: Sequence[Tensor],
                 arrays: Sequence[np.ndarray | None], byte_views: Sequence[np.ndarray | None],
                 scratch: Sequence[np.ndarray], workspaces: Sequence[np.ndarray],
                 graph: Graph, native: bool = False) -> None:
        self.target = target
        self.subgraph_index = subgraph_index
        self.native = native  # kernels may bind compiled steps (kernels.native)
        self._tensors = tuple(tensors)
        self._arrays = tuple(arrays)
        self._bytes = tuple(byte_views)
        self._scratch = tuple(scratch)
        self._workspaces = tuple(workspaces)
        self._graph = graph

    # -- EvalContext protocol -------------------------------------------------------------
    def tensor(self, index: int) -> Tensor | None:
        return None if index < 0 else self._tensors[index]

    def tensor_data(self, index: int) -> np.ndarray:
        array = self._arrays[index]
        if array is None:
            raise KernelError(
                f"tensor {index} of subgraph {self.subgraph_index} has no storage (it is not "
                f"planned in the arena)")
        return array

    def tensor_bytes(self, index: int) -> np.ndarray:
        """The tensor's memory as a flat uint8 array (for byte copies between tensors)."""
        view = self._bytes[index]
        if view is None:
            raise KernelError(
                f"tensor {index} of subgraph {self.subgraph_index} has no storage")
        return view

    def scratch(self, handle: int) -> np.ndarray:
        return self._scratch[handle]

    def workspace(self, handle: int) -> np.ndarray:
        return self._workspaces[handle]

    def invoke_subgraph(self, index: int) -> None:
        self._graph.invoke_subgraph(index)

    # -- what control-flow and resource kernels need ----------------------------------------
    def subgraph_count(self) -> int:
        return self._graph.subgraph_count

    def subgraph_input_bytes(self, subgraph: int) -> tuple[np.ndarray, ...]:
        """Flat uint8 views of another subgraph's inputs (TFLM's GetSubgraphInput)."""
        return self._graph.io_bytes(subgraph)[0]

    def subgraph_output_bytes(self, subgraph: int) -> tuple[np.ndarray, ...]:
        """Flat uint8 views of another subgraph's outputs (TFLM's GetSubgraphOutput)."""
        return self._graph.io_bytes(subgraph)[1]

    def resource_buffer(self, resource_id: int) -> np.ndarray:
        """The tail buffer of resource variable ``resource_id`` (MicroResourceVariables)."""
        return self._graph.resource_buffer(resource_id)

    def resource_buffers(self) -> tuple[np.ndarray, ...]:
        """Every resource variable's tail buffer, by resource id (for kernels' bind)."""
        return self._graph.resource_buffers()

