"""Tensors that may share bytes although TFLM's lifetimes say both are live.

Each rule below is a statement about how a TFLM kernel walks memory, so a plan that uses it is
only as safe as the kernels that run it:

(a) views (``VIEW_OPS``): the output of RESHAPE, SQUEEZE or EXPAND_DIMS has exactly its input's
    bytes. Placed at the input's offset, TFLM's RESHAPE (``EvalReshapeReference``) sees equal
    pointers and skips the copy; EXPAND_DIMS copies element i onto itself (``memCopyN``);
    SQUEEZE calls ``memcpy(p, p, n)``, which leaves the bytes as they are. The three kernels
    are shared by every TFLM kernel set, so views are safe for any target.
(b) element-wise in place (``INPLACE_OPS``): the reference kernels of these ops compute output
    element i from input element i (same shape, no broadcast) in one forward loop, reading it
    before writing (``reference_integer_ops::ElementWise``, ``ReluQuantized``,
    ``reference_integer_ops::Logistic``, ``Tanh``, ``HardSwish``, ``QuantizeLeakyRelu``,
    ``Requantize``). With the output at the input's offset and the same element size, each
    write lands on an element already read, so an input that dies at the op can hold the
    output. Only for the ops each kernel set is proven to run in that order
    (``safety.RULE_SETS``; CMSIS-NN's ADD and MUL read each block before writing it).
(c) partial overlap of an op's output with its own input (``PARTIAL_OPS``): the reference
    CONV_2D, DEPTHWISE_CONV_2D, AVERAGE_POOL_2D, MAX_POOL_2D and PAD kernels write output
    elements in address order, each after reading its receptive field, so the output may
    start up to dF bytes above the input's start (dF from shapes, strides, dilation, padding
    and element sizes: ``optimize.margins``; usually negative, i.e. below) while the input
    still holds what later elements read. Only when the input (its whole alias group) dies at
    that op and holds no graph input or output, and only for kernel sets whose loop order
    the margin was derived for (``safety.RULE_SETS``: TFLM's reference kernels, and CMSIS-NN's
    code paths whose order is the reference one coarsened; CMSIS-NN paths that write inside a
    block while still reading it get the smaller block margin of their scheme,
    ``margins.block_margin``, and paths whose loop order forbids it none).

Rules (a) and (b) put the two tensors at the same offset, so they are expressed as alias
groups: a group is planned as one buffer of the group's size over the union of its members'
lifetimes. Rule (c) is a link between two groups (``PartialOverlap``): the placement search
may overlap them as long as the output group starts at most ``max_delta`` (dF rounded down to
the 16-byte plan alignment) above the input group. Graph inputs and graph outputs are never
overwritten by rules (b) and (c).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from tinyarena.errors import PlanError
from tinyarena.model.types import Model
from tinyarena.optimize.graph import PLAN_ALIGNMENT, OpGraph
from tinyarena.optimize.margins import op_margin
from tinyarena.optimize.safety import (
    INPLACE_OPS,
    PARTIAL_OPS,
    VIEW_OPS,
    allows,
    kernel_set_key,
    matched_key,
    op_keys,
    rule_set,
)

OVERLAP_MODES = ("none", "views", "safe")


@dataclass(frozen=True)
class PartialOverlap:
    """Rule (c) for one op: ``output`` may start at most ``max_delta`` bytes above ``input``
    (``margin`` is the exact dF; ``max_delta`` rounds it down to the plan alignment)."""

    op: int
    op_name: str
    input: int
    output: int
    margin: int
    max_delta: int
    rule: str = ""
    """The rule key that allowed it (``safety.op_keys``, e.g. ``CONV_2D:INT8:1x1``)."""
    scheme: str | None = None
    """The CMSIS-NN block scheme the margin was derived for (None: reference order)."""


@dataclass(frozen=True)
class AliasGroups:
    """Which tensors of subgraph 0 share one buffer, and why.

    ``root[t]`` is the representative tensor of t's group (t itself when alone). ``reasons``
    lists each merge as (op index, op name, rule, kept tensor, merged tensor).
    """

    root: tuple[int, ...]
    reasons: tuple[tuple[int, str, str, int, int], ...]

    def members(self, root: int) -> tuple[int, ...]:
        return tuple(t for t, r in enumerate(self.root) if r == root)

    def same(self, a: int, b: int) -> bool:
        return self.root[a] == self.root[b]


def no_aliases(n_tensors: int) -> AliasGroups:
    return AliasGroups(tuple(range(n_tensors)), ())


def check_mode(mode: str, kernel_set: str) -> None:
    """Refuse an unknown mode or kernel set ("safe" then means: the rules ``kernel_set`` is
    proven to tolerate, ``safety.RULE_SETS``)."""
    if mode not in OVERLAP_MODES:
        raise PlanError(f"unknown overlap mode {mode!r}; use one of {', '.join(OVERLAP_MODES)}")
    kernel_set_key(kernel_set)


class _UnionFind:
    def __init__(self, n: int) -> None:
        self.parent = list(range(n))

    def find(self, a: int) -> int:
        while self.parent[a] != a:
            self.parent[a] = self.parent[self.parent[a]]
            a = self.parent[a]
        return a

    def union(self, keep: int, merge: int) -> None:
        self.parent[self.find(merge)] = self.find(keep)


def view_groups(model: Model, graph: OpGraph) -> AliasGroups:
    """Rule (a): every view op's output joins its input's group (equal planned sizes)."""
    sg = model.subgraphs[0]
    uf = _UnionFind(len(sg.tensors))
    reasons = []
    for op in sg.operators:
        if op.name not in VIEW_OPS or not op.inputs or not op.outputs:
            continue
        x, y = op.inputs[0], op.outputs[0]
        if x < 0 or y < 0 or x == y:
            continue
        tx, ty = sg.tensors[x], sg.tensors[y]
        if graph.sizes[x] == 0 or graph.sizes[y] == 0 or tx.tflm_nbytes != ty.tflm_nbytes:
            continue
        if y in graph.graph_inputs:
            continue
        uf.union(x, y)
        reasons.append((op.index, op.name, "view", x, y))
    return AliasGroups(tuple(uf.find(t) for t in range(len(sg.tensors))), tuple(reasons))


def inplace_groups(model: Model, graph: OpGraph, views: AliasGroups,
                   ops: frozenset[str] = INPLACE_OPS) -> AliasGroups:
    """Rule (b) on top of ``views``, for the current operator order: an element-wise op's
    output (``ops``: those the kernel set is proven for) joins the group of a same-shape,
    same-type input whose whole group dies at that op and holds no graph input or output."""
    sg = model.subgraphs[0]
    n_t = len(sg.tensors)
    uf = _UnionFind(n_t)
    for t, r in enumerate(views.root):
        uf.union(r, t)
    reasons = list(views.reasons)
    last_use = _group_last_use(graph, uf, n_t)
    protected = graph.graph_inputs | graph.graph_outputs
    for op in sg.operators:
        if len(graph.op_outputs[op.index]) != 1 or not allows(ops, op_keys(model, op)):
            continue
        y = graph.op_outputs[op.index][0]
        ty = sg.tensors[y]
        if graph.sizes[y] == 0 or y in graph.graph_inputs:
            continue
        for x in graph.op_inputs[op.index]:
            tx = sg.tensors[x]
            if (graph.sizes[x] == 0 or tx.shape != ty.shape or tx.tflm_nbytes != ty.tflm_nbytes
                    or tx.type != ty.type):
                continue
            gx = uf.find(x)
            if gx == uf.find(y) or last_use[gx] != op.index:
                continue
            if any(uf.find(t) == gx for t in protected):
                continue
            uf.union(x, y)
            reasons.append((op.index, op.name, "in-place", x, y))
            last_use = _group_last_use(graph, uf, n_t)
            break
    return AliasGroups(tuple(uf.find(t) for t in range(n_t)), tuple(reasons))


def partial_overlaps(model: Model, graph: OpGraph, groups: AliasGroups,
                     ops: frozenset[str] = PARTIAL_OPS,
                     schemes: Mapping[str, str] | None = None) -> tuple[PartialOverlap, ...]:
    """Rule (c) for the current operator order, on top of ``groups`` (rules (a) and (b)), for
    the ops ``ops`` allows (``safety.allows``: those the kernel set is proven for, by input
    type where the kernel set's code differs by type). ``schemes`` (``RuleSet.schemes``) names,
    for the keys whose code writes inside blocks while still reading them, the block scheme
    whose margin applies (``margins.block_margin``); other keys get the reference margin.

    The input's group must die at the op and hold no graph input or output; the output must
    not be a graph input; each group is the input side of at most one link and the output
    side of at most one (a chain).
    """
    sg = model.subgraphs[0]
    n_t = len(sg.tensors)
    uf = _UnionFind(n_t)
    for t, r in enumerate(groups.root):
        uf.union(r, t)
    last_use = _group_last_use(graph, uf, n_t)
    protected = {uf.find(t) for t in graph.graph_inputs | graph.graph_outputs}
    used_in: set[int] = set()
    used_out: set[int] = set()
    links = []
    for op in sg.operators:
        if op.name not in PARTIAL_OPS or not op.inputs or len(graph.op_outputs[op.index]) != 1:
            continue
        x, y = op.inputs[0], graph.op_outputs[op.index][0]
        keys = op_keys(model, op)
        if x < 0 or not allows(ops, keys):
            continue
        if x < 0 or graph.sizes[x] == 0 or graph.sizes[y] == 0 or y in graph.graph_inputs:
            continue
        if x in op.inputs[1:]:
            continue
        gx, gy = groups.root[x], groups.root[y]
        if gx == gy or gx in protected or last_use.get(gx) != op.index:
            continue
        if gx in used_in or gy in used_out:
            continue
        rule = matched_key(ops, keys)
        scheme = (schemes or {}).get(rule)
        margin = op_margin(model, op, scheme)
        if margin is None:
            continue
        used_in.add(gx)
        used_out.add(gy)
        aligned = (margin // PLAN_ALIGNMENT) * PLAN_ALIGNMENT
        links.append(PartialOverlap(op.index, op.name, x, y, margin, aligned, rule, scheme))
    return tuple(links)


def _group_last_use(graph: OpGraph, uf: _UnionFind, n_t: int) -> dict[int, int]:
    """Last op (in the current order) that reads or writes any member of each group."""
    last: dict[int, int] = {}
    for t in range(n_t):
        uses = list(graph.consumers[t])
        if graph.producer[t] >= 0:
            uses.append(graph.producer[t])
        if uses:
            g = uf.find(t)
            last[g] = max(last.get(g, -1), max(uses))
    return last


def alias_groups(model: Model, graph: OpGraph, mode: str, kernel_set: str) -> AliasGroups:
    """The alias groups ``mode`` permits for this order ("none", "views" or "safe")."""
    check_mode(mode, kernel_set)
    n_t = len(model.subgraphs[0].tensors)
    if mode == "none":
        return no_aliases(n_t)
    views = view_groups(model, graph)
    if mode == "views":
        return views
    return inplace_groups(model, graph, views, rule_set(kernel_set).inplace_ops)


def kernel_partial_overlaps(model: Model, graph: OpGraph, groups: AliasGroups,
                            kernel_set: str) -> tuple[PartialOverlap, ...]:
    """Rule (c) as the kernel set ``kernel_set`` (a ``safety.RULE_SETS`` key) allows it."""
    rs = rule_set(kernel_set)
    return partial_overlaps(model, graph, groups, rs.partial_ops, rs.schemes)


__all__ = ["AliasGroups", "INPLACE_OPS", "OVERLAP_MODES", "PARTIAL_OPS",
           "PartialOverlap", "VIEW_OPS", "alias_groups", "check_mode", "inplace_groups",
           "kernel_partial_overlaps",
           "no_aliases", "partial_overlaps", "view_groups"]
