"""``tinyarena optimize`` against the live TFLM wheel.

For every model: the optimized model loads in the unmodified wheel, the head the wheel's
recording allocator reports equals tinyarena's prediction, and its outputs are bit-identical
to the original model's over several inputs. Overlap rules are each exercised by a model built
so that the rule decides the peak (tests/unit/optimize/optimize_models.py).
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from tflm_oracle import model_random_inputs, shared_model_bytes, tflm_allocations, tflm_run
from tinyarena import Interpreter
from tinyarena.arena import allocate_model
from tinyarena.builder.random_graphs import random_model
from tinyarena.model import read_model
from tinyarena.optimize import optimize_model

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "unit" / "optimize"))
from optimize_models import (  # noqa: E402
    BINARY_OPS,
    UNARY_OPS,
    elementwise_model,
    reorder_model,
    view_model,
    window_model,
)

pytestmark = pytest.mark.oracle


def _check(original: bytes, result, runs: int = 3) -> None:
    """Wheel head == prediction; wheel outputs identical; interpreter honours the plan."""
    report = tflm_allocations(result.model)
    assert (report.head, report.tail, report.total) == (
        result.after.head, result.after.tail, result.after.total)
    assert result.after.head <= result.before.head
    before = tflm_allocations(original)
    assert before.head == result.before.head
    for seed in range(runs):
        feed = model_random_inputs(original, seed)
        expected = tflm_run(original, feed)
        got = tflm_run(result.model, feed)
        assert len(expected) == len(got)
        for e, g in zip(expected, got):
            assert np.array_equal(e, g)
        # tinyarena's interpreter, its tensors placed at the optimized plan's overlapping
        # offsets, gives what it gives on the original.
        outs = []
        for model in (original, result.model):
            ip = Interpreter(model)
            ip.allocate_tensors()
            for i, x in enumerate(feed):
                ip.set_input(x, i)
            ip.invoke()
            outs.append([ip.get_output(i) for i in range(len(expected))])
        for e, g in zip(*outs):
            assert np.array_equal(e, g)


@pytest.mark.parametrize("overlap", ["none", "safe"])
def test_shared_models(shared_model_name: str, overlap: str) -> None:
    if shared_model_name.startswith("mobilenet_v2") and overlap == "none":
        pytest.skip("the large model runs once, with every rule on")
    data = shared_model_bytes(shared_model_name)
    result = optimize_model(data, overlap=overlap, time_budget_s=0.5, kernel_set="reference")
    assert result.lower_bound <= result.after.head <= result.before.head
    if not result.changed:
        assert result.model == data
        assert result.after == result.before
        return
    runs = 1 if shared_model_name.startswith("mobilenet_v2") else 3
    _check(data, result, runs=runs)


RANDOM_SEEDS = (13, 15, 18, 22, 36, 86, 3, 41)


@pytest.mark.parametrize("seed", RANDOM_SEEDS)
@pytest.mark.parametrize("overlap,reorder", [("none", False), ("views", True), ("safe", True)])
def test_random_graphs(seed: int, overlap: str, reorder: bool) -> None:
    rm = random_model(seed, max_blocks=6)
    result = optimize_model(rm.model, overlap=overlap, reorder=reorder, time_budget_s=0.3,
                            kernel_set="reference")
    assert result.after.head <= result.before.head
    if result.changed:
        _check(rm.model, result, runs=2)


@pytest.mark.parametrize("seed", (13, 15, 18, 22, 36, 86))
def test_stranded_greedy_is_planned_at_the_lower_bound(seed: int) -> None:
    """These generated graphs make TFLM's greedy strand a buffer (its head is above the
    live-bytes bound, as the wheel itself reports); the optimized model reaches the bound."""
    rm = random_model(seed, max_blocks=6)
    layout = allocate_model(read_model(rm.model))
    wheel = tflm_allocations(rm.model)
    assert wheel.head == layout.head > layout.lower_bound
    result = optimize_model(rm.model, overlap="none", reorder=False, time_budget_s=0.5)
    assert result.after.head == layout.lower_bound == result.lower_bound
    assert result.optimal
    assert tflm_allocations(result.model).head == layout.lower_bound


@pytest.mark.parametrize("op", ["RESHAPE", "EXPAND_DIMS", "SQUEEZE"])
def test_view_shares_its_input_bytes(op: str) -> None:
    data = view_model(op)
    plain = optimize_model(data, overlap="none", time_budget_s=0.3)
    result = optimize_model(data, overlap="views", time_budget_s=0.3)
    # 16x16x8 int8 conv output and its view are 2048 bytes each; the 1024-byte input is
    # gone by then: 4096 bytes at the view's step without aliasing, 3072 (conv step) with.
    assert plain.after.head == 4096
    assert result.after.head == 3072
    assert [a[2] for a in result.aliases] == ["view"]
    _check(data, result)


@pytest.mark.parametrize("op", UNARY_OPS + BINARY_OPS)
def test_elementwise_in_place(op: str) -> None:
    data = elementwise_model(op)
    result = optimize_model(data, overlap="safe", time_budget_s=0.3, kernel_set="reference")
    views_only = optimize_model(data, overlap="views", time_budget_s=0.3)
    assert views_only.after.head == (6144 if op in BINARY_OPS else 4096)
    assert result.after.head == (5120 if op in BINARY_OPS else 3072)
    assert [a[2] for a in result.aliases] == ["in-place"]
    _check(data, result)


def test_reordering_runs_each_branch_to_its_pool() -> None:
    data = reorder_model()
    result = optimize_model(data, overlap="none", reorder=True, time_budget_s=0.3)
    # Bytes: x 128, each conv output 1024, each pool output 256, the concatenation 512.
    # Written order conv, conv, pool, pool, concat: the first pool's step holds both conv
    # outputs and its own output, 2304. conv, pool, conv, pool, concat peaks at the second
    # pool: 1024 + 256 + 256 = 1536.
    assert (result.before.head, result.after.head) == (2304, 1536)
    assert result.reordered and result.order_exact
    assert result.order.index(2) < result.order.index(1)  # first branch's pool before conv 2
    _check(data, result)


WINDOW_CASES = [
    ("CONV_2D", 1, 1, "VALID", 1, "int8", 1),
    ("CONV_2D", 3, 1, "SAME", 1, "int8", 1),
    ("CONV_2D", 3, 2, "SAME", 1, "int8", 1),
    ("CONV_2D", 5, 1, "VALID", 1, "int8", 1),
    ("CONV_2D", 5, 2, "SAME", 1, "int8", 1),
    ("CONV_2D", 3, 1, "SAME", 2, "int8", 1),
    ("CONV_2D", 3, 1, "SAME", 1, "float32", 1),
    ("CONV_2D", 1, 2, "VALID", 1, "float32", 1),
    ("DEPTHWISE_CONV_2D", 3, 1, "SAME", 1, "int8", 1),
    ("DEPTHWISE_CONV_2D", 3, 2, "SAME", 1, "int8", 2),
    ("DEPTHWISE_CONV_2D", 3, 1, "VALID", 2, "int8", 1),
    ("DEPTHWISE_CONV_2D", 5, 1, "SAME", 2, "int8", 1),
    ("DEPTHWISE_CONV_2D", 3, 1, "SAME", 1, "float32", 2),
    ("AVERAGE_POOL_2D", 2, 2, "VALID", 1, "int8", 1),
    ("AVERAGE_POOL_2D", 3, 1, "SAME", 1, "float32", 1),
    ("MAX_POOL_2D", 3, 2, "SAME", 1, "int8", 1),
    ("MAX_POOL_2D", 2, 2, "VALID", 1, "float32", 1),
]


@pytest.mark.parametrize("op,k,stride,padding,dilation,dtype,multiplier", WINDOW_CASES)
def test_partial_overlap_of_window_ops(op: str, k: int, stride: int, padding: str,
                                       dilation: int, dtype: str, multiplier: int) -> None:
    """Rule (c): the op's output overlaps its dying input in the plan the wheel follows, and
    the wheel computes exactly what it computes on the original model."""
    data = window_model(op, k, stride, padding, dilation, dtype, multiplier)
    result = optimize_model(data, overlap="safe", time_budget_s=0.3, kernel_set="reference")
    views_only = optimize_model(data, overlap="views", time_budget_s=0.3)
    assert result.after.head < views_only.after.head
    assert 1 in [p.op for p in result.partial]  # the op under test shares bytes
    for p, shift in zip(result.partial, result.shifts):
        assert shift is not None and shift <= p.margin
    _check(data, result, runs=3)


@pytest.mark.parametrize("dtype,pads", [
    ("int8", ((0, 0), (1, 1), (1, 1), (0, 0))),
    ("float32", ((0, 0), (2, 1), (0, 3), (0, 0))),
])
def test_partial_overlap_of_pad(dtype: str, pads: tuple[tuple[int, int], ...]) -> None:
    data = window_model("PAD", dtype=dtype, pads=pads)
    result = optimize_model(data, overlap="safe", time_budget_s=0.3, kernel_set="reference")
    views_only = optimize_model(data, overlap="views", time_budget_s=0.3)
    assert result.after.head < views_only.after.head
    assert 1 in [p.op for p in result.partial]
    _check(data, result, runs=3)


@pytest.mark.parametrize("shift,identical", [(-111, True), (-110, False)])
def test_wheel_at_the_exact_margin(shift: int, identical: bool) -> None:
    """The real TFLM with the output pinned at exactly dF, and one byte higher.

    3x3 SAME conv, 12x12x8 int8 both sides. Worked by hand: output element (pixel p, channel
    j) is written after reading p's window; the next element (p, j+1) reads the window again
    from its first byte, 13 pixels (104 bytes) before p for interior pixels. So writing
    channel j <= 6 of p needs d + 8p + j + 1 <= 8p - 104, tightest at j = 6: d <= -111.
    At -110 the write of channel 6 lands on a byte channel 7 still reads: the wheel's output
    changes."""
    data = window_model("CONV_2D", 3, 1, "SAME", 1, "int8", 1)
    model = read_model(data)
    from tinyarena.optimize.margins import op_margin
    from tinyarena.model.metadata import encode_offline_plan
    from tinyarena.rewrite.rewriter import rewrite_model

    ops = model.subgraphs[0].operators
    assert op_margin(model, ops[1]) == -111
    x, a, b, y = ops[0].inputs[0], ops[1].inputs[0], ops[1].outputs[0], ops[2].outputs[0]
    offsets = [-1] * len(model.subgraphs[0].tensors)
    # x (144 B) and a (1152 B) are live together; b and y are placed after x has died.
    offsets[x], offsets[a], offsets[b], offsets[y] = 0, 400, 400 + shift, 2000
    pinned = rewrite_model(data, metadata={"OfflineMemoryAllocation":
                                           encode_offline_plan(offsets, 1)})
    same = True
    for seed in range(3):
        feed = model_random_inputs(data, seed)
        same &= all(np.array_equal(e, g) for e, g in zip(tflm_run(data, feed),
                                                         tflm_run(pinned, feed)))
    assert same == identical
