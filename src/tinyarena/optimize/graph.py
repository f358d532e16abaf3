"""Subgraph 0 as the optimizer sees it: which op makes and which ops read each planned tensor.

TFLM's lifetime rules (facts 2.3, ``MarkAllocationLifetimes``) depend on the operator order;
everything the reordering and the overlap rules need is the dependency structure behind them:
producers, consumers, graph inputs and outputs, and the 16-rounded size of each tensor the
planner will see. Models whose subgraph 0 runs other subgraphs (IF, WHILE, CALL_ONCE) are not
reordered or overlapped here: their lifetimes interleave scopes of several subgraphs.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Sequence

from tinyarena._util import align_up
from tinyarena.arena.layout import ArenaLayout
from tinyarena.arena.lifetimes import called_subgraphs
from tinyarena.errors import PlanError
from tinyarena.model.metadata import without_offline_plan
from tinyarena.model.types import Model

PLAN_ALIGNMENT = 16
RESOURCE_OPS = frozenset({"VAR_HANDLE", "ASSIGN_VARIABLE", "READ_VARIABLE"})
"""Ops on resource variables: their order is their meaning, so they keep it among themselves."""


@dataclass(frozen=True)
class OpGraph:
    """Dependency facts of subgraph 0 (tensor indices are subgraph-local).

    ``sizes[t]`` is the 16-rounded byte size TFLM's planner gets for tensor t, 0 for tensors it
    does not plan (constants, variables, empty tensors). ``scratch[i]`` is the 16-rounded sum of
    op i's scratch requests. ``preds[i]`` are the ops that must run before op i: producers of
    its inputs, and the previous op touching the same variable tensor or resource.
    """

    n_ops: int
    op_names: tuple[str, ...]
    op_inputs: tuple[tuple[int, ...], ...]  # planned-or-not tensor indices, -1 removed, unique
    op_outputs: tuple[tuple[int, ...], ...]
    sizes: tuple[int, ...]
    producer: tuple[int, ...]  # op index, -1 for graph inputs and tensors nobody writes
    consumers: tuple[tuple[int, ...], ...]
    graph_inputs: frozenset[int]
    graph_outputs: frozenset[int]
    scratch: tuple[int, ...]
    preds: tuple[frozenset[int], ...]


def supports_graph_edits(model: Model) -> bool:
    """True when subgraph 0 calls no other subgraph, so its op order alone sets lifetimes."""
    if not model.subgraphs:
        return False
    return not any(called_subgraphs(op.name, op.options) for op in model.subgraphs[0].operators)


def op_graph(model: Model, layout: ArenaLayout) -> OpGraph:
    """The dependency facts of subgraph 0; scratch sizes come from ``layout`` (the kernels'
    Prepare decided them), matched to ops by their one-step lifetime (op i runs at step i+1)."""
    if not supports_graph_edits(model):
        raise PlanError("subgraph 0 runs other subgraphs (IF/WHILE/CALL_ONCE); reordering and "
                        "overlap need a model whose subgraph 0 calls none: use --no-reorder "
                        "--overlap none")
    sg = model.subgraphs[0]
    n = len(sg.operators)
    sizes = [0] * len(sg.tensors)
    for b in layout.buffers:
        if b.kind == "tensor" and b.subgraph == 0:
            sizes[b.index] = b.size
    scratch = [0] * n
    for b in layout.buffers:
        if b.kind == "scratch" and b.subgraph == 0 and 1 <= b.first <= n:
            scratch[b.first - 1] += align_up(b.size, PLAN_ALIGNMENT)
    producer = [-1] * len(sg.tensors)
    consumers: list[list[int]] = [[] for _ in sg.tensors]
    ins: list[tuple[int, ...]] = []
    outs: list[tuple[int, ...]] = []
    for op in sg.operators:
        i_unique = tuple(dict.fromkeys(t for t in op.inputs if t >= 0))
        o_unique = tuple(dict.fromkeys(t for t in op.outputs if t >= 0))
        ins.append(i_unique)
        outs.append(o_unique)
        for t in o_unique:
            if producer[t] == -1:
                producer[t] = op.index
        for t in i_unique:
            consumers[t].append(op.index)
    preds: list[set[int]] = [set() for _ in range(n)]
    for op in sg.operators:
        for t in ins[op.index]:
            if producer[t] != -1 and producer[t] != op.index:
                preds[op.index].add(producer[t])
    _chain_shared_state(model, ins, outs, preds)
    return OpGraph(n, tuple(op.name for op in sg.operators), tuple(ins), tuple(outs),
                   tuple(sizes), tuple(producer), tuple(tuple(c) for c in consumers),
                   frozenset(sg.inputs), frozenset(sg.outputs), tuple(scratch),
                   tuple(frozenset(p) for p in preds))


def _chain_shared_state(model: Model, ins: Sequence[tuple[int, ...]],
                        outs: Sequence[tuple[int, ...]], preds: list[set[int]]) -> None:
    """Ops touching the same variable tensor, and all resource-variable ops, keep their order:
    each depends on the previous one (the issue's "operators that share a variable tensor")."""
    sg = model.subgraphs[0]
    last_user: dict[object, int] = {}
    for op in sg.operators:
        keys: list[object] = [t for t in ins[op.index] + outs[op.index]
                              if sg.tensors[t].is_variable]
        if op.name in RESOURCE_OPS:
            keys.append("resource")
        for key in keys:
            if key in last_user:
                preds[op.index].add(last_user[key])
            last_user[key] = op.index


def is_topological(graph: OpGraph, order: Sequence[int]) -> bool:
    """Does ``order`` run every op once, each after all its predecessors?"""
    if sorted(order) != list(range(graph.n_ops)):
        return False
    position = {op: k for k, op in enumerate(order)}
    return all(position[p] < position[op] for op in order for p in graph.preds[op])


def reordered_model(model: Model, order: Sequence[int]) -> Model:
    """``model`` with subgraph 0's operators in ``order`` (indices renumbered), in memory.

    Only what the arena emulation and the interpreter read is changed; the file itself is
    rewritten by ``tinyarena.rewrite``. An OfflineMemoryAllocation entry is dropped, since its
    offsets were planned for the old lifetimes.
    """
    sg = model.subgraphs[0]
    ops = tuple(dataclasses.replace(sg.operators[old], index=new)
                for new, old in enumerate(order))
    sg0 = dataclasses.replace(sg, operators=ops)
    return dataclasses.replace(without_offline_plan(model),
                               subgraphs=(sg0,) + tuple(model.subgraphs[1:]))


__all__ = ["OpGraph", "is_topological", "op_graph", "reordered_model", "supports_graph_edits"]
