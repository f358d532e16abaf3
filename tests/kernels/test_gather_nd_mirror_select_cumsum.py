"""GATHER_ND, MIRROR_PAD, SELECT_V2 and CUMSUM against the live wheel."""

from __future__ import annotations

import numpy as np
import pytest

from op_sweep import check_op, one_op, random_array

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("params_shape,indices_shape", [((5,), (3, 1)), ((4, 3), (2, 2)),
                                                        ((4, 3, 2), (2, 2, 1)), ((3, 4), (2,)),
                                                        ((2, 3, 4), (5, 3))])
def test_gather_nd(dtype: str, params_shape: tuple[int, ...],
                   indices_shape: tuple[int, ...]) -> None:
    rng = np.random.default_rng(2)
    nd = indices_shape[-1]
    idx = np.stack([rng.integers(0, params_shape[j], size=indices_shape[:-1])
                    for j in range(nd)], axis=-1).astype(np.int32)
    out = indices_shape[:-1] + params_shape[nd:]
    model, _ = one_op("GATHER_ND", [("p", (params_shape, dtype)), ("i", idx)], [(out, dtype)])
    check_op(model, [random_array(rng, params_shape, dtype)])


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("pad_type", ["int32", "int64"])
@pytest.mark.parametrize("shape,pads", [((5,), ((2, 3),)), ((3, 4), ((1, 2), (0, 3))),
                                        ((1, 4, 4, 2), ((0, 0), (2, 1), (3, 0), (0, 1)))])
def test_mirror_pad(dtype: str, mode: str, pad_type: str, shape: tuple[int, ...],
                    pads: tuple[tuple[int, int], ...]) -> None:
    if mode == "REFLECT":  # reflection needs pads below the dimension
        pads = tuple((min(a, d - 1), min(b, d - 1)) for (a, b), d in zip(pads, shape))
    out = tuple(d + a + b for d, (a, b) in zip(shape, pads))
    model, _ = one_op("MIRROR_PAD", [("x", (shape, dtype)), ("p", np.array(pads, pad_type))],
                      [(out, dtype)], mode=mode)
    check_op(model, [random_array(np.random.default_rng(1), shape, dtype)])


@pytest.mark.parametrize("dtype", ["float32", "int8", "int16"])
@pytest.mark.parametrize("cond_shape,x_shape,y_shape", [((2, 3), (2, 3), (2, 3)),
                                                        ((2, 1), (1, 3), (2, 3)),
                                                        ((3,), (2, 3), ()),
                                                        ((1,), (1,), (1,)),
                                                        ((2, 1, 4, 1, 2), (1, 3, 1, 5, 1), (2,))])
def test_select_v2(dtype: str, cond_shape: tuple[int, ...], x_shape: tuple[int, ...],
                   y_shape: tuple[int, ...]) -> None:
    out = tuple(np.broadcast_shapes(cond_shape, x_shape, y_shape))
    model, _ = one_op("SELECT_V2", [("c", (cond_shape, "bool")), ("x", (x_shape, dtype)),
                                    ("y", (y_shape, dtype))], [(out, dtype)])
    rng = np.random.default_rng(4)
    check_op(model, [random_array(rng, cond_shape, "bool"), random_array(rng, x_shape, dtype),
                     random_array(rng, y_shape, dtype)])


@pytest.mark.parametrize("dtype", ["float32", "int8"])
@pytest.mark.parametrize("exclusive", [False, True])
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("shape,axis", [((7,), 0), ((3, 5), 1), ((3, 5), -2), ((2, 4, 3), 1),
                                        ((2, 40, 3), -2), ((2, 30, 50), 1)])
def test_cumsum(dtype: str, exclusive: bool, reverse: bool, shape: tuple[int, ...],
                axis: int) -> None:
    quant = (0.02, 5) if dtype == "int8" else None
    model, _ = one_op("CUMSUM", [("x", (shape, dtype)), ("a", np.array(axis, np.int32))],
                      [(shape, dtype)], quant=quant, out_quant=(0.1, -7) if quant else None,
                      exclusive=exclusive, reverse=reverse)
    data = random_array(np.random.default_rng(6), shape, dtype)
    if dtype == "float32":
        data.reshape(-1)[:2] = -0.0
    check_op(model, [data])


def test_cumsum_special_floats_quietly() -> None:
    data = np.array([[3e38, 3e38, -np.inf, 1.0], [np.nan, 1.0, -0.0, 2.0],
                     [np.inf, -np.inf, 5.0, -0.0]], np.float32)
    model, _ = one_op("CUMSUM", [("x", (data.shape, "float32")), ("a", np.array(1, np.int32))],
                      [(data.shape, "float32")])
    check_op(model, [data])


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
def test_mirror_pad_beyond_the_input(mode: str) -> None:
    """A right pad longer than the input repeats its first element (TFLM's clamp)."""
    shape, pads = (3, 2), ((1 if mode == "REFLECT" else 2, 6), (0, 4))
    out = tuple(d + a + b for d, (a, b) in zip(shape, pads))
    model, _ = one_op("MIRROR_PAD", [("x", (shape, "int8")), ("p", np.array(pads, np.int32))],
                      [(out, "int8")], mode=mode)
    check_op(model, [random_array(np.random.default_rng(2), shape, "int8")])


def test_int8_cumsum_output_multiplier_of_one_or_more_is_refused() -> None:
    """2 * in_scale / (2**20 * out_scale) >= 1 trips QuantizeMultiplierSmallerThanOneExp's
    check: the wheel aborts, tinyarena must refuse with an error (not run)."""
    from tflm_oracle import tflm_fits
    from tinyarena.errors import TinyArenaError
    from tinyarena.interpreter import Interpreter

    model, _ = one_op("CUMSUM", [("x", ((3,), "int8")), ("a", np.array(0, np.int32))],
                      [((3,), "int8")], quant=(300.0, 69), out_quant=(1e-5, 8))
    assert not tflm_fits(model, 1 << 20)[0]
    with pytest.raises(TinyArenaError, match="CUMSUM"):
        Interpreter(model).allocate_tensors()
