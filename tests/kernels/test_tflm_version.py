"""The TFLM version is part of a target where it changes a result (issue 9, facts 6.5).

host-x64 (the wheel, TFLM 8f6596d) builds requantisation multipliers from the float32 scales
widened to double; the Cortex-M targets (the device builds, TFLM 90b983c2) multiply and divide
the float32 scales in float32 first, as 90b983c2's prepare code does. Each case uses scales on
which the two formulas give different multipliers (the same boundary cases the wheel
regressions use), computes both formulas here by hand in numpy float32/float64, and checks the
multiplier each target's prepare stores; the wheel side is checked against the live wheel by
test_multiplier_drift.py, test_elementwise_unary.py and test_sub_multipliers.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from tinyarena import Interpreter
from tinyarena.arena import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.kernels._quant import quantize_multiplier, quantize_multiplier_smaller_than_one_exp
from tinyarena.model import read_model
from unary_cases import single_op_model

F32 = np.float32
DEVICE, WHEEL_TARGET = "cortex-m4", "host-x64"


def _op_data(model: bytes, target: str) -> Any:
    return allocate_model(read_model(model), target=target).op_data[(0, 0)]


def _single(*ops: Any) -> float:
    """float32 arithmetic left to right: a, op, b, op, c ... with ops "*" or "/"."""
    acc = F32(ops[0])
    for sym, v in zip(ops[1::2], ops[2::2]):
        acc = F32(acc * F32(v)) if sym == "*" else F32(acc / F32(v))
    return float(acc)


def _double(*ops: Any) -> float:
    acc = float(F32(ops[0]))
    for sym, v in zip(ops[1::2], ops[2::2]):
        acc = acc * float(F32(v)) if sym == "*" else acc / float(F32(v))
    return acc


def _check(model: bytes, fields: tuple[str, str], single: float, double: float) -> None:
    want = {DEVICE: quantize_multiplier(single), WHEEL_TARGET: quantize_multiplier(double)}
    assert want[DEVICE] != want[WHEEL_TARGET]  # the case tells the versions apart
    for target, (m, s) in want.items():
        data = _op_data(model, target)
        assert (getattr(data, fields[0]), getattr(data, fields[1])) == (m, s), target


def test_relu() -> None:
    s_in, s_out = 0.0422043576836586, 0.01257151085883379
    model = single_op_model("RELU", (1, 256), "int8", (s_in, -41), (1, 256), "int8",
                            (s_out, -128))
    _check(model, ("output_multiplier", "output_shift"), _single(s_in, "/", s_out),
           _double(s_in, "/", s_out))
    # and the result: every int8 input through both builds, some outputs one step apart
    x = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
    outs = []
    for target in (DEVICE, WHEEL_TARGET):
        ip = Interpreter(model, target=target)
        ip.allocate_tensors()
        ip.set_input(0, x)
        ip.invoke()
        outs.append(ip.get_output(0).astype(np.int32))
    diff = np.abs(outs[0] - outs[1])
    assert diff.max() == 1 and 0 < np.count_nonzero(diff) < 256


@pytest.mark.parametrize("s_in,s_out,alpha", [
    (0.08839496225118637, 0.13062185049057007, 0.14391586184501648),
    (0.07558050751686096, 0.0808093473315239, 0.18351082503795624)])
def test_leaky_relu(s_in: float, s_out: float, alpha: float) -> None:
    model = single_op_model("LEAKY_RELU", (1, 8), "int8", (s_in, 1), (1, 8), "int8", (s_out, 1),
                            alpha=alpha)
    _check(model, ("output_multiplier_alpha", "output_shift_alpha"),
           _single(s_in, "*", alpha, "/", s_out), _double(s_in, "*", alpha, "/", s_out))


@pytest.mark.parametrize("s_in,s_out", [(0.16596315801143646, 0.21671713888645172),
                                        (0.9924404621124268, 0.6330568194389343)])
def test_abs(s_in: float, s_out: float) -> None:
    model = single_op_model("ABS", (8,), "int16", (s_in, 0), (8,), "int16", (s_out, 0))
    _check(model, ("multiplier", "shift"), _single(s_in, "/", s_out), _double(s_in, "/", s_out))


@pytest.mark.parametrize("s_in,s_out", [(0.00040044644265435636, 0.1730935424566269),
                                        (0.12160269170999527, 0.008586234413087368)])
def test_rsqrt(s_in: float, s_out: float) -> None:
    model = single_op_model("RSQRT", (8,), "int8", (s_in, -128), (8,), "int8", (s_out, -128))
    single = 1.0 / float(F32(np.sqrt(F32(s_in))) * F32(s_out))
    double = 1.0 / (float(np.sqrt(np.float64(F32(s_in)))) * float(F32(s_out)))
    _check(model, ("multiplier", "shift"), single, double)


def test_sub_output_multiplier() -> None:
    """sub_common.cc: twice_max / ((1 << 20) * out_scale), in float32 on 90b983c2; ADD keeps
    the double formula on both versions."""
    s1, s2, so = 0.05, 0.04, 0.06
    models = {}
    for op in ("SUB", "ADD"):
        b = ModelBuilder()
        x1 = b.add_input("x1", (1, 4), "int8", scale=s1, zero_point=-3)
        x2 = b.add_input("x2", (1, 4), "int8", scale=s2, zero_point=5)
        y = b.add_tensor("y", (1, 4), "int8", scale=so, zero_point=2)
        b.add_operator(op, [x1, x2], [y], fused_activation_function="NONE")
        b.mark_output(y)
        models[op] = b.build()
    twice = 2 * float(F32(s1))
    single = quantize_multiplier_smaller_than_one_exp(_single(twice, "/", (1 << 20) * F32(so)))
    double = quantize_multiplier_smaller_than_one_exp(_double(twice, "/", (1 << 20) * F32(so)))
    assert single != double
    got = {t: _op_data(models["SUB"], t).quant for t in (DEVICE, WHEEL_TARGET)}
    assert (got[DEVICE].output_multiplier, got[DEVICE].output_shift) == single
    assert (got[WHEEL_TARGET].output_multiplier, got[WHEEL_TARGET].output_shift) == double
    add = {t: _op_data(models["ADD"], t).quant for t in (DEVICE, WHEEL_TARGET)}
    assert (add[DEVICE].output_multiplier, add[DEVICE].output_shift) == double
    assert add[DEVICE] == add[WHEEL_TARGET]


def test_fully_connected_product_rounded_to_float32() -> None:
    """GetQuantizedConvolutionMultipler: float32(in * filter) / double(out) on 90b983c2."""
    rng = np.random.default_rng(11)
    s_in, s_out = 0.02, 0.1
    for s_w in rng.uniform(0.003, 0.02, 200):
        single = float(F32(F32(s_in) * F32(s_w))) / float(F32(s_out))
        double = float(F32(s_in)) * float(F32(s_w)) / float(F32(s_out))
        if quantize_multiplier(single) != quantize_multiplier(double):
            break
    else:
        pytest.fail("no weight scale among 200 separates the two formulas")
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "int8", scale=s_in, zero_point=0)
    w = b.add_constant("w", np.ones((3, 4), np.int8), scale=float(s_w), zero_point=0)
    y = b.add_tensor("y", (1, 3), "int8", scale=s_out, zero_point=0)
    b.add_operator("FULLY_CONNECTED", [x, w, None], [y])
    b.mark_output(y)
    model = b.build()
    for target, value in ((DEVICE, single), (WHEEL_TARGET, double)):
        rq = _op_data(model, target).rq
        m, shift = quantize_multiplier(value)
        got = (int(rq.multiplier[0]), int(rq.left[0]) - int(rq.right[0]))
        assert got == (m, shift), target


@pytest.mark.parametrize("s_in,s_out", [(0.0814516469836235, 0.09098527580499649),
                                        (0.0711798146367073, 0.09442805498838425)])
def test_hard_swish(s_in: float, s_out: float) -> None:
    """hires_input_scale / output_scale, then rounded to Q15: scales whose two quotients
    straddle a Q15 step."""
    from tinyarena.kernels.hard_swish import down_scale_int32_to_int16_multiplier as q15

    model = single_op_model("HARD_SWISH", (1, 8), "int8", (s_in, -49), (1, 8), "int8",
                            (s_out, -112))
    hires = F32(1.0) / F32(128.0) * F32(s_in)
    single = quantize_multiplier(_single(hires, "/", s_out))
    double = quantize_multiplier(_double(hires, "/", s_out))
    assert q15(single[0]) != q15(double[0])
    for target, (m, e) in ((DEVICE, single), (WHEEL_TARGET, double)):
        data = _op_data(model, target)
        assert (data.output_multiplier_fixedpoint_int16, data.output_multiplier_exponent) == (
            q15(m), e), target


def test_svdf_effective_scales() -> None:
    from tinyarena.kernels._svdf_math import svdf_quant
    from tinyarena.kernels._tflm_version import SCALE_ARITHMETIC

    s_in, s_wf, s_wt, s_st, s_out = (0.07816888391971588, 0.016819333657622337,
                                     4.830480975215323e-05, 0.0009286382119171321,
                                     0.28531476855278015)
    bias = float(F32(s_st) * F32(s_wt))
    want = {"90b983c2": (_single(s_in, "*", s_wf, "/", s_st),
                         _single(s_st, "*", s_wt, "/", s_out)),
            "8f6596d": (_double(s_in, "*", s_wf, "/", s_st),
                        _double(s_st, "*", s_wt, "/", s_out))}
    assert [quantize_multiplier(v) for v in want["90b983c2"]] != [
        quantize_multiplier(v) for v in want["8f6596d"]]
    for commit, (e1, e2) in want.items():
        q = svdf_quant(s_in, s_wf, s_st, s_wt, bias, s_out, 3, -5, 0, SCALE_ARITHMETIC[commit])
        assert (q.scale_1_a, q.scale_1_b) == quantize_multiplier(e1)
        assert (q.scale_2_a, q.scale_2_b) == quantize_multiplier(e2)
