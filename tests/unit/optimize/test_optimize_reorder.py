"""best_order against brute force over every topological order of small random graphs.

The brute force is independent of the module: it assigns TFLM's lifetimes (facts 2.3: graph
inputs born at step 0, op k's outputs at step k, last use = last reader's step, unread outputs
live one step, graph outputs to the end) and takes ``planning.lower_bound`` of those buffers
plus each op's one-step scratch.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from tinyarena.optimize.graph import OpGraph, is_topological
from tinyarena.optimize.reorder import best_order, order_peak
from tinyarena.planning import Buffer, lower_bound


def _random_graph(seed: int, n_ops: int) -> OpGraph:
    """Each op reads 1-2 earlier tensors and writes one new tensor (sizes multiples of 16)."""
    rng = np.random.default_rng(seed)
    n_in = int(rng.integers(1, 3))
    sizes = [int(rng.integers(1, 9)) * 16 for _ in range(n_in)]
    ins, outs = [], []
    for o in range(n_ops):
        k = int(rng.integers(1, 3))
        reads = tuple(sorted({int(t) for t in rng.integers(0, len(sizes), size=k)}))
        ins.append(reads)
        outs.append((len(sizes),))
        sizes.append(int(rng.integers(1, 9)) * 16)
    producer = [-1] * n_in + list(range(n_ops))
    consumers = [tuple(o for o in range(n_ops) if t in ins[o]) for t in range(len(sizes))]
    scratch = tuple(int(rng.integers(0, 3)) * 16 for _ in range(n_ops))
    preds = tuple(frozenset(producer[t] for t in ins[o] if producer[t] >= 0)
                  for o in range(n_ops))
    unread = [t for t in range(n_in, len(sizes)) if not consumers[t]]
    outputs = frozenset(unread[-1:]) | frozenset({len(sizes) - 1})
    return OpGraph(n_ops, ("OP",) * n_ops, tuple(ins), tuple(outs), tuple(sizes),
                   tuple(producer), tuple(consumers), frozenset(range(n_in)), outputs, scratch,
                   preds)


def _brute_peak(g: OpGraph, order: tuple[int, ...]) -> int:
    step = {op: k + 1 for k, op in enumerate(order)}
    n = len(order)
    buffers = []
    for t, size in enumerate(g.sizes):
        first = 0 if g.producer[t] < 0 else step[g.producer[t]]
        last = max([step[c] for c in g.consumers[t]], default=first)
        if t in g.graph_outputs:
            last = n
        buffers.append(Buffer(size, first, last))
    buffers += [Buffer(s, step[o], step[o]) for o, s in enumerate(g.scratch) if s]
    return lower_bound(buffers)


@pytest.mark.parametrize("seed", range(40))
def test_best_order_matches_brute_force(seed: int) -> None:
    n_ops = 3 + seed % 5  # 3..7 ops: every permutation can be tried
    g = _random_graph(seed, n_ops)
    orders = [p for p in itertools.permutations(range(n_ops)) if is_topological(g, p)]
    best = min(_brute_peak(g, p) for p in orders)
    identity = tuple(range(n_ops))
    result = best_order(g)
    assert result.exact
    assert is_topological(g, result.order)
    assert result.peak == best == _brute_peak(g, result.order)
    assert result.original_peak == _brute_peak(g, identity) == order_peak(g, identity)
    if best == result.original_peak:
        assert result.order == identity  # never move ops for nothing


def test_narrow_beam_is_a_heuristic_and_never_worse_than_the_original() -> None:
    g = _random_graph(3, 14)
    result = best_order(g, beam=2)
    assert is_topological(g, result.order)
    assert result.peak <= result.original_peak
    assert result.peak == _brute_peak(g, result.order)


def test_variable_sharers_keep_their_order() -> None:
    """Two ops touching one variable tensor: the second depends on the first even without a
    data edge (graph.op_graph adds it; here the precedence is given directly)."""
    g = _random_graph(5, 5)
    preds = list(g.preds)
    preds[4] = preds[4] | {3}
    g2 = OpGraph(g.n_ops, g.op_names, g.op_inputs, g.op_outputs, g.sizes, g.producer,
                 g.consumers, g.graph_inputs, g.graph_outputs, g.scratch, tuple(preds))
    result = best_order(g2)
    assert result.order.index(3) < result.order.index(4)
