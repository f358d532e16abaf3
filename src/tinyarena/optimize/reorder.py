"""The operator order with the smallest peak of live bytes.

Under TFLM's lifetime rules (facts 2.3) the bytes live while op o runs, after the set S of ops
already run, are: every planned buffer that exists and is still needed after S (graph inputs,
outputs of ops in S, read by some op not in S or a graph output), plus o's outputs and o's
scratch. That total depends only on S and o, so the smallest peak over all topological orders
is a shortest-path problem over the sets of ops already run (the graph's down-sets):
``peak(S + o) = max(peak(S), live(S) + out(o) + scratch(o))``.

``best_order`` walks these sets one step at a time, keeping for each set its best peak. It is
exact when every step has at most ``beam`` sets (always true for graphs of up to 12 ops,
2**12 = 4096, and for chain-like graphs of any size); beyond that it keeps the ``beam`` sets
with the smallest (peak, live) and is a heuristic (``OrderResult.exact`` says which). Alias groups (views) count once: a group's
bytes appear when its first member is written and go when no member is needed any more.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Callable, Sequence

from tinyarena.optimize.graph import OpGraph
from tinyarena.optimize.overlap import AliasGroups, no_aliases

DEFAULT_BEAM = 4096
BEAM_WORK = 2_000_000  # beam * ops**2 stays under this: about a second of Python
EXACT_OPS = 12  # 2**12 sets of ops at most: always exact with the default beam


@dataclass(frozen=True)
class OrderResult:
    """The best order found, its peak, the original order's peak, and whether it is proven."""

    order: tuple[int, ...]
    peak: int
    original_peak: int
    exact: bool

    @property
    def changed(self) -> bool:
        return self.order != tuple(range(len(self.order)))


@dataclass(frozen=True)
class _Tables:
    """Per-op bitmask tables over alias groups."""

    pred_mask: tuple[int, ...]
    new_bytes: tuple[int, ...]  # bytes of groups op o creates (+ its scratch)
    scratch: tuple[int, ...]
    touched: tuple[tuple[int, ...], ...]  # groups op o reads or writes
    group_size: dict[int, int]
    group_users: dict[int, int]  # bitmask of ops reading or writing the group
    keep_to_end: frozenset[int]  # groups holding a graph output
    start_live: int  # after step 0
    step0: int  # every graph input, read or not


def _tables(graph: OpGraph, groups: AliasGroups) -> _Tables:
    root = groups.root
    inputs = _input_groups(graph, root)
    size: dict[int, int] = {}
    users: dict[int, int] = {}
    creator: dict[int, int] = {}  # the first member's producer; dependencies fix which it is
    for t, s in enumerate(graph.sizes):
        if s == 0:
            continue
        g = root[t]
        size[g] = max(size.get(g, 0), s)
        mask = 0
        for c in graph.consumers[t]:
            mask |= 1 << c
        p = graph.producer[t]
        if p >= 0:
            mask |= 1 << p
            if g not in inputs:
                creator[g] = min(creator.get(g, p), p)
        users[g] = users.get(g, 0) | mask
    new = [0] * graph.n_ops
    for g, op in creator.items():
        if op >= 0:
            new[op] += size[g]
    touched = tuple(
        tuple(dict.fromkeys(root[t] for t in graph.op_inputs[o] + graph.op_outputs[o]
                            if graph.sizes[t]))
        for o in range(graph.n_ops))
    keep = frozenset(root[t] for t in graph.graph_outputs if graph.sizes[t])
    # Graph inputs are born at step 0; one nobody reads is gone by step 1.
    start = sum(size[g] for g in inputs if users.get(g, 0) or g in keep)
    step0 = sum(size[g] for g in inputs)
    preds = tuple(sum(1 << p for p in graph.preds[o]) for o in range(graph.n_ops))
    return _Tables(preds, tuple(new[o] + graph.scratch[o] for o in range(graph.n_ops)),
                   graph.scratch, touched, size, users, keep, start, step0)


def _input_groups(graph: OpGraph, root: Sequence[int]) -> set[int]:
    return {root[t] for t in graph.graph_inputs if graph.sizes[t]}


def _step(tab: _Tables, done: int, live: int, op: int) -> tuple[int, int]:
    """(bytes live while ``op`` runs after ``done``, bytes live after it)."""
    during = live + tab.new_bytes[op]
    after = during - tab.scratch[op]
    now = done | (1 << op)
    for g in tab.touched[op]:
        if g not in tab.keep_to_end and tab.group_users[g] & ~now == 0:
            after -= tab.group_size[g]
    return during, after


def order_peak(graph: OpGraph, order: Sequence[int], groups: AliasGroups | None = None) -> int:
    """Peak of live bytes over the op steps of ``order`` (step 0, graph inputs only, included)."""
    tab = _tables(graph, groups or no_aliases(len(graph.sizes)))
    done, live, peak = 0, tab.start_live, tab.step0
    for op in order:
        during, live = _step(tab, done, live, op)
        peak = max(peak, during)
        done |= 1 << op
    return peak


def best_order(graph: OpGraph, groups: AliasGroups | None = None, *,
               beam: int | None = None, time_budget_s: float = 1.0,
               clock: Callable[[], float] = time.perf_counter) -> OrderResult:
    """The topological order with the smallest peak found (see the module docstring).

    ``beam`` defaults to ``DEFAULT_BEAM``, narrowed for large graphs so that the work stays
    near ``BEAM_WORK``; once ``time_budget_s`` is spent the remaining steps keep one set each
    (a greedy completion). The original order is kept unless another one is strictly better,
    so a model whose order is already optimal is left untouched. ``clock`` measures the budget
    (a ``planning.clock.WorkClock`` makes the result independent of the machine).
    """
    groups = groups or no_aliases(len(graph.sizes))
    tab = _tables(graph, groups)
    n = graph.n_ops
    if beam is None:
        beam = max(8, min(DEFAULT_BEAM, BEAM_WORK // max(n * n, 1)))
    deadline = clock() + max(time_budget_s, 0.0)
    identity = tuple(range(n))
    original = order_peak(graph, identity, groups)
    # layer: done-mask -> (peak, live, order so far)
    layer: dict[int, tuple[int, int, tuple[int, ...]]] = {0: (tab.step0, tab.start_live, ())}
    exact = True
    for _ in range(n):
        nxt: dict[int, tuple[int, int, tuple[int, ...]]] = {}
        for done, (peak, live, seq) in layer.items():
            for op in range(n):
                bit = 1 << op
                if done & bit or tab.pred_mask[op] & ~done:
                    continue
                during, after = _step(tab, done, live, op)
                cand = (max(peak, during), after, seq + (op,))
                key = done | bit
                old = nxt.get(key)
                if old is None or cand[:2] < old[:2]:
                    nxt[key] = cand
        width = beam if clock() < deadline else 1
        if len(nxt) > width:
            exact = False
            kept = sorted(nxt.items(), key=lambda kv: kv[1][:2])[:width]
            nxt = dict(kept)
        layer = nxt
    if not layer:  # a cycle: nothing is ever ready (not a valid TFLM graph)
        return OrderResult(identity, original, original, False)
    peak, _, seq = min(layer.values(), key=lambda v: v[:2])
    if peak < original:
        return OrderResult(seq, peak, original, exact)
    return OrderResult(identity, original, original, exact)


__all__ = ["DEFAULT_BEAM", "EXACT_OPS", "OrderResult", "best_order", "order_peak"]
