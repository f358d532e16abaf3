"""Zero-sized dimensions: TFLM refuses a zero-sized output after Prepare (CheckDynamicTensors,
"dynamic tensor"), and so does tinyarena; a zero-sized input reduced to a non-empty output runs
(the output keeps the reduction's initial value). Checked against the wheel."""

from __future__ import annotations

import numpy as np
import pytest

from op_sweep import check_op, one_op, random_array
from tflm_oracle import tflm_probe
from tinyarena.arena.allocator import allocate_model
from tinyarena.errors import KernelError
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

EMPTY_OUTPUTS = {
    "split_v": (one_op("SPLIT_V", [("x", ((2, 5), "float32")), ("s", np.array([0, 5], np.int32)),
                                   ("a", np.array([1], np.int32))],
                       [((2, 0), "float32"), ((2, 5), "float32")], num_splits=2)[0], 3),
    "slice": (one_op("SLICE", [("x", ((3, 4), "int8")), ("b", np.array([1, 1], np.int32)),
                               ("s", np.array([0, 2], np.int32))], [((0, 2), "int8")])[0], 3),
    "gather": (one_op("GATHER", [("x", ((4, 3), "float32")), ("p", np.zeros((0,), np.int32))],
                      [((0, 3), "float32")], axis=0)[0], 2),
    "pack": (one_op("PACK", [("a", ((0, 2), "int32")), ("b", ((0, 2), "int32"))],
                    [((2, 0, 2), "int32")], values_count=2, axis=0)[0], 2),
    "cast": (one_op("CAST", [("x", ((0, 3), "float32"))], [((0, 3), "int32")])[0], 1),
}


@pytest.mark.parametrize("name", sorted(EMPTY_OUTPUTS))
def test_zero_sized_output_is_refused_like_tflm(name: str) -> None:
    model, tensor = EMPTY_OUTPUTS[name]
    wheel = tflm_probe(model)
    assert wheel.refused
    assert wheel.crashed or f"has dynamic tensor #{tensor}" in wheel.log, wheel.log
    with pytest.raises(KernelError, match=rf"of subgraph 0 has dynamic tensor #{tensor}"):
        allocate_model(read_model(model))


@pytest.mark.parametrize("op", ["REDUCE_MAX", "REDUCE_MIN"])
def test_reduce_of_an_empty_axis(op: str) -> None:
    """The output is filled with the initial value (lowest / highest float)."""
    model, _ = one_op(op, [("x", ((3, 0), "float32")), ("a", np.array([1], np.int32))],
                      [((3,), "float32")])
    check_op(model, [np.zeros((3, 0), np.float32)])


def test_legacy_scalar_output_is_not_dynamic() -> None:
    """A [0]-shaped output is TFLM's legacy scalar, not a dynamic tensor: SHAPE of a scalar."""
    model, _ = one_op("SHAPE", [("x", ((), "float32"))], [((0,), "int32")], out_type="INT32")
    check_op(model, [random_array(np.random.default_rng(0), (), "float32")])
