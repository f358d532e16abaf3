"""Running subgraphs: TFLM's MicroInterpreterGraph::InvokeSubgraph over prebuilt steps.

Everything an invoke needs is computed when the tensors are allocated: per subgraph one context
(views into the arena) and an ``invoke_plan.InvokePlan`` (one bound callable per operator).
Invoking a subgraph is then a plain loop of calls; IF, WHILE and CALL_ONCE re-enter it through
``ctx.invoke_subgraph``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.interpreter.context import ArenaEvalContext
from tinyarena.interpreter.invoke_plan import InvokePlan, compile_plan
from tinyarena.kernels.base import BindFn, EvalFn, ResetFn
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
                 resets: Sequence[Sequence[ResetFn | None]] = (),
                 binds: Sequence[Sequence[BindFn | None]] = (), native: bool = False) -> None:
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
                workspaces=workspaces, graph=self, native=native))
            steps.append((sg_evals, sg_data))
            io.append((tuple(_require(sg_views.byte_views, i, sg.index) for i in sg.inputs),
                       tuple(_require(sg_views.byte_views, i, sg.index) for i in sg.outputs)))
        self._contexts: tuple[ArenaEvalContext, ...] = tuple(contexts)
        self._nodes: tuple[tuple[tuple[Operator, Any], ...], ...] = tuple(
            tuple(zip(sg.operators, sg_data)) for sg, (_, sg_data) in zip(model.subgraphs, steps))
        self._io = tuple(io)
        # Bound last: a kernel's bind may ask the context for anything built above.
        self._plans: tuple[InvokePlan, ...] = tuple(
            compile_plan(ctx, sg.operators, sg_evals, binds[sg.index] if sg.index < len(binds)
                         else (), sg_data, sg.index)
            for ctx, sg, (sg_evals, sg_data) in zip(contexts, model.subgraphs, steps))
        self.invoke_main = self._plans[0].run if self._plans else _nothing

    def invoke_subgraph(self, index: int) -> None:
        """Run every operator of subgraph ``index`` in order (MicroInterpreterGraph)."""
        if not 0 <= index < self.subgraph_count:
            raise KernelError(
                f"subgraph {index} invoked, but the model has {self.subgraph_count} subgraphs")
        self._plans[index].run()  # an aborting kernel ends its subgraph (InvokePlan.run)

    def steps(self) -> tuple[Any, ...]:
        """Every bound step of every subgraph (for accounting, never for running)."""
        return tuple(step for plan in self._plans for step in plan.steps)

    def reset_kernels(self) -> None:
        """MicroInterpreterGraph::ResetSubgraphs: every kernel's reset, subgraph and op order."""
        for ctx, nodes, resets in zip(self._contexts, self._nodes, self._resets):
            for (op, data), reset in zip(nodes, resets):
                if reset is not None:
                    reset(ctx, op, data)

    def io_bytes(self, index: int) -> tuple[tuple[np.ndarray, ...], tuple[np.ndarray, ...]]:
        """(inputs, outputs) of subgraph ``index`` as flat uint8 views."""
        return self._io[index]

    def resource_buffers(self) -> tuple[np.ndarray, ...]:
        return self._resources

    def resource_buffer(self, resource_id: int) -> np.ndarray:
        if not 0 <= resource_id < len(self._resources):
            raise KernelError(
                f"resource variable {resource_id} does not exist (the model has "
                f"{len(self._resources)}); was it assigned before being read?")
        return self._resources[resource_id]


def _nothing() -> None:
    return None


def _require(byte_views: Sequence[np.ndarray | None], index: int, subgraph: int) -> np.ndarray:
    view = byte_views[index]
    if view is None:
        return np.zeros(0, dtype=np.uint8)
    return view
