"""Running subgraphs: TFLM's MicroInterpreterGraph::InvokeSubgraph over prebuilt steps.

Everything an invoke needs is computed when the tensors are allocated: per subgraph one context
(views into the arena) and a tuple of (eval, operator, op data) steps. Invoking a subgraph is
then a plain loop of kernel calls; IF, WHILE and CALL_ONCE re-enter it through
``ctx.invoke_subgraph``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tinyarena.errors import KernelError, TinyArenaError
from tinyarena.interpreter.context import ArenaEvalContext
from tinyarena.kernels.base import EvalFn, InvokeAbort, ResetFn
from tinyarena.model.types import Model, Operator


@dataclass(frozen=True)
class SubgraphViews:
    """Storage of one subgraph's tensors: typed views and flat byte views (None: no storage)."""

    arrays: tuple[np.ndarray | None, ...]
    byte_views: tuple[np.ndarray | None, ...]


class Graph:
    """All subgraphs of a model, ready to invoke. Built once per ``allocate_tensors``."""

    def __init__(self, *, model: Model, target: object,
                 evals: Sequence[Sequence[EvalFn]], op_data: Sequence[Sequence[Any]],
                 views: Sequence[SubgraphViews], scratch: Sequence[np.ndarray],
                 workspaces: Sequence[np.ndarray], resources: Sequence[np.ndarray],
                 resets: Sequence[Sequence[ResetFn | None]] = ()) -> None:
        self.subgraph_count = len(model.subgraphs)
        self._resets = tuple(tuple(r) for r in resets)
        self._resources = tuple(resources)
        contexts = []
        steps = []
        io = []
        for sg, sg_evals, sg_data, sg_views in zip(model.subgraphs, evals, op_data, views):
            contexts.append(ArenaEvalContext(
                target=target, subgraph_index=sg.index, tensors=sg.tensors,
                arrays=sg_views.arrays, byte_views=sg_views.byte_views, scratch=scratch,
                workspaces=workspaces, graph=self))
            steps.append(tuple(zip(sg_evals, sg.operators, sg_data)))
            io.append((tuple(_require(sg_views.byte_views, i, sg.index) for i in sg.inputs),
                       tuple(_require(sg_views.byte_views, i, sg.index) for i in sg.outputs)))
        self._contexts: tuple[ArenaEvalContext, ...] = tuple(contexts)
        self._steps: tuple[tuple[tuple[EvalFn, Operator, Any], ...], ...] = tuple(steps)
        self._io = tuple(io)

    def invoke_subgraph(self, index: int) -> None:
        """Run every operator of subgraph ``index`` in order (MicroInterpreterGraph)."""
        if not 0 <= index < self.subgraph_count:
            raise KernelError(
                f"subgraph {index} invoked, but the model has {self.subgraph_count} subgraphs")
        ctx = self._contexts[index]
        op: Operator | None = None
        try:
            for fn, op, data in self._steps[index]:
                fn(ctx, op, data)
        except InvokeAbort:  # kTfLiteAbort: the remaining operators do not run
            return
        except TinyArenaError:
            raise
        except Exception as exc:  # a foreign error inside a kernel: name the op
            where = "" if op is None else f"{op.name} (operator {op.index} of subgraph {index})"
            raise KernelError(f"{where} failed during invoke: {type(exc).__name__}: {exc}") \
                from exc

    def reset_kernels(self) -> None:
        """MicroInterpreterGraph::ResetSubgraphs: every kernel's reset, subgraph and op order."""
        for ctx, steps, resets in zip(self._contexts, self._steps, self._resets):
            for (_, op, data), reset in zip(steps, resets):
                if reset is not None:
                    reset(ctx, op, data)

    def io_bytes(self, index: int) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(inputs, outputs) of subgraph ``index`` as flat uint8 views."""
        return self._io[index]

    def resource_buffer(self, resource_id: int) -> np.ndarray:
        if not 0 <= resource_id < len(self._resources):
            raise KernelError(
                f"resource variable {resource_id} does not exist (the model has "
                f"{len(self._resources)}); was it assigned before being read?")
        return self._resources[resource_id]


def _require(byte_views: Sequence[np.ndarray | None], index: int, subgraph: int) -> np.ndarray:
    view = byte_views[index]
    if view is None:
        return np.zeros(0, dtype=np.uint8)
    return view
