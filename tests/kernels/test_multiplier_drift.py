"""Regression: requantisation multipliers computed the way the pinned TFLM wheel computes them.

The wheel is built from a TFLM commit newer than the repository snapshot we read. Where the
snapshot's prepare code computes ``static_cast<double>(a * b / c)`` on float32 scales (the
product and quotient rounded to float32), the wheel widens every scale to double first and
multiplies and divides in double (its disassembly shows ``cvtss2sd`` before ``mulsd``/
``divsd`` in CalculateReluOpData, CalculateOpDataLeakyRelu, HardSwishPrepare, PrepareSvdf and
GetQuantizedConvolutionMultipler, which the LSTM's gate FCs go through).

The two formulas give Q31 multipliers a few units apart, which changes an output only when it
sits on a rounding boundary, so random sweeps rarely notice. Each case below uses scales (and
inputs) found offline by evaluating both formulas and keeping the ones whose outputs differ;
each test first checks, by hand arithmetic in numpy float32/float64, that the float32 formula
really gives another multiplier there, then that tinyarena's kernels equal the live wheel on
every output. Each case fails with the float32 arithmetic (checked by reverting it).
"""

from __future__ import annotations

import numpy as np
import pytest

from stateful_runner import kernels_invokes
from tflm_oracle import tflm_invokes
from tinyarena.builder import ModelBuilder
from tinyarena.kernels._quant import quantize_multiplier
from unary_cases import compare, single_op_model

pytestmark = pytest.mark.oracle

F32 = np.float32


def _all_values(dtype: str) -> np.ndarray:
    """Every value of an integer type, as one (1, N) input row."""
    info = np.iinfo(dtype)
    return np.arange(info.min, info.max + 1).astype(dtype).reshape(1, -1)


def _double_ratio(*factors_then_divisor: float) -> float:
    """a * b * ... / d with each float32 scale widened to double first (the wheel)."""
    *factors, divisor = (float(F32(v)) for v in factors_then_divisor)
    product = 1.0
    for f in factors:
        product *= f
    return product / divisor


def _reduced_q15(multiplier: int) -> int:
    """MultiplyByQuantizedMultiplier(int64)'s 16-bit reduced multiplier (16x8 kernels)."""
    return (multiplier + (1 << 15)) >> 16 if multiplier < 0x7FFF0000 else 0x7FFF


# ----------------------------------------------------------------------------------------------
# RELU, LEAKY_RELU, HARD_SWISH: every input value of the type in one invoke
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype,in_q,out_q", [
    ("int8", (0.0422043576836586, -41), (0.01257151085883379, -128)),
    ("int16", (0.07160095870494843, 0), (0.05792437121272087, 0)),
])
def test_relu_ratio_divided_in_double(dtype: str, in_q: tuple[float, int],
                                      out_q: tuple[float, int]) -> None:
    """RELU: double(in_scale) / double(out_scale), not double(float32(in_scale / out_scale))."""
    old = quantize_multiplier(float(F32(in_q[0]) / F32(out_q[0])))
    assert old != quantize_multiplier(_double_ratio(in_q[0], out_q[0]))
    x = _all_values(dtype)
    compare(single_op_model("RELU", x.shape, dtype, in_q, x.shape, dtype, out_q), [x])


@pytest.mark.parametrize("dtype,in_q,out_q,alpha", [
    ("int8", (0.08839496225118637, 1), (0.13062185049057007, 1), 0.14391586184501648),
    ("int8", (0.07558050751686096, -4), (0.0808093473315239, -10), 0.18351082503795624),
    ("int16", (0.07022916525602341, 0), (0.06595088541507721, 0), 0.18005959689617157),
])
def test_leaky_relu_alpha_multiplier_in_double(dtype: str, in_q: tuple[float, int],
                                               out_q: tuple[float, int], alpha: float) -> None:
    """LEAKY_RELU: double(in) * double(alpha) / double(out), not float32(in * alpha / out)."""
    old = quantize_multiplier(float(F32(in_q[0]) * F32(alpha) / F32(out_q[0])))
    assert old != quantize_multiplier(_double_ratio(in_q[0], alpha, out_q[0]))
    x = _all_values(dtype)
    compare(single_op_model("LEAKY_RELU", x.shape, dtype, in_q, x.shape, dtype, out_q,
                            alpha=alpha), [x])


@pytest.mark.parametrize("in_q,out_q", [
    ((0.0814516469836235, -49), (0.09098527580499649, -112)),
    ((0.0711798146367073, -43), (0.09442805498838425, -69)),
])
def test_hard_swish_output_multiplier_in_double(in_q: tuple[float, int],
                                                out_q: tuple[float, int]) -> None:
    """HARD_SWISH: double(in_scale / 128) / double(out_scale), not the float32 quotient.

    The Q31 multiplier is then rounded to Q15, so only scales whose two quotients straddle a
    Q15 rounding step show the difference.
    """
    hires = F32(1.0) / F32(128.0) * F32(in_q[0])
    old = quantize_multiplier(float(hires / F32(out_q[0])))
    new = quantize_multiplier(float(hires) / float(F32(out_q[0])))
    assert _reduced_q15(old[0]) != _reduced_q15(new[0])
    x = _all_values("int8")
    compare(single_op_model("HARD_SWISH", x.shape, "int8", in_q, x.shape, "int8", out_q), [x])


# ----------------------------------------------------------------------------------------------
# SVDF and UNIDIRECTIONAL_SEQUENCE_LSTM: every pair of two int8 inputs (or every int16 input)
# as one batch row each, one invoke from a zero state
# ----------------------------------------------------------------------------------------------


def _int8_pairs() -> np.ndarray:
    a = np.arange(-128, 128)
    return np.stack(np.meshgrid(a, a, indexing="ij"), -1).reshape(-1, 2).astype(np.int8)


def _assert_same_as_wheel(model: bytes, x: np.ndarray) -> None:
    ours = kernels_invokes(model, [[x]])[0][0]
    want = tflm_invokes(model, [[x]])[0][0]
    assert ours.dtype == want.dtype and ours.shape == want.shape
    assert np.array_equal(ours, want), f"{int(np.count_nonzero(ours != want))} outputs differ"


SVDF_SEED = 37  # weights found (with both formulas) to put 4 outputs on a boundary


def test_svdf_effective_scales_in_double() -> None:
    """SVDF (int16 state): effective_scale_1 = double(in) * double(w_feature) / double(state)
    and effective_scale_2 = double(state) * double(w_time) / double(out), not the float32
    products and quotients of the snapshot's svdf_common.cc (4 of 262144 outputs differ)."""
    s_in, s_wf, s_wt, s_st, s_out = (0.07816888391971588, 0.016819333657622337,
                                     4.830480975215323e-05, 0.0009286382119171321,
                                     0.28531476855278015)
    old1 = quantize_multiplier(float(F32(F32(s_in) * F32(s_wf)) / F32(s_st)))
    old2 = quantize_multiplier(float(F32(F32(s_st) * F32(s_wt)) / F32(s_out)))
    assert (old1, old2) != (quantize_multiplier(_double_ratio(s_in, s_wf, s_st)),
                            quantize_multiplier(_double_ratio(s_st, s_wt, s_out)))
    x = _int8_pairs()
    _assert_same_as_wheel(_svdf_model(x.shape[0], (s_in, s_wf, s_wt, s_st, s_out), seed=SVDF_SEED),
                          x)


def _svdf_model(batch: int, scales: tuple[float, float, float, float, float], seed: int
                ) -> bytes:
    """Rank-1 SVDF, 2 inputs, 4 units, memory 2, int16 weights_time and state."""
    s_in, s_wf, s_wt, s_st, s_out = scales
    units, memory = 4, 2
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    xin = b.add_input("x", (batch, 2), "int8", scale=s_in, zero_point=3)
    wf = b.add_constant("wf", rng.integers(-127, 128, (units, 2)).astype(np.int8), scale=s_wf,
                        zero_point=0)
    wt = b.add_constant("wt", rng.integers(-16384, 16384, (units, memory)).astype(np.int16),
                        scale=s_wt, zero_point=0)
    bias = b.add_constant("b", rng.integers(-5000, 5000, units).astype(np.int32),
                          scale=float(F32(s_st) * F32(s_wt)), zero_point=0)
    st = b.add_tensor("state", (batch, memory * units), "int16", scale=s_st, zero_point=0,
                      is_variable=True)
    y = b.add_tensor("y", (batch, units), "int8", scale=s_out, zero_point=-5)
    b.add_operator("SVDF", [xin, wf, wt, bias, st], [y], rank=1, fused_activation_function="NONE")
    b.mark_output(y)
    return b.build()


def _lstm_model(kind: str, batch: int, n_input: int, n_state: int, input_weight_scales:
                tuple[float, ...], seed: int) -> bytes:
    """One-step LSTM: int8 (8x8->16) or int16 (16x8->16) activations, int16 cell at 2**-11."""
    rng = np.random.default_rng(seed)
    act = "int8" if kind == "8x8_16" else "int16"
    bias_dt = np.int32 if kind == "8x8_16" else np.int64
    s_in, zp_in = (0.02, 7) if act == "int8" else (0.0005, 0)
    s_h, zp_h = (0.008, -3) if act == "int8" else (0.00004, 0)
    b = ModelBuilder()
    x = b.add_input("x", (batch, 1, n_input), act, scale=s_in, zero_point=zp_in)
    wi, wr, bias = [], [], []
    for g, sw in enumerate(input_weight_scales):
        wi.append(b.add_constant(f"wi{g}", rng.integers(-127, 128, (n_state, n_input))
                                 .astype(np.int8), scale=sw, zero_point=0))
        wr.append(b.add_constant(f"wr{g}", rng.integers(-127, 128, (n_state, n_state))
                                 .astype(np.int8), scale=0.01, zero_point=0))
        bias.append(b.add_constant(f"b{g}", rng.integers(-3000, 3000, n_state).astype(bias_dt),
                                   scale=float(F32(s_in) * F32(sw)), zero_point=0))
    h = b.add_tensor("h", (batch, n_state), act, scale=s_h, zero_point=zp_h, is_variable=True)
    c = b.add_tensor("c", (batch, n_state), "int16", scale=2.0 ** -11, zero_point=0,
                     is_variable=True)
    y = b.add_tensor("y", (batch, 1, n_state), act, scale=s_h, zero_point=zp_h)
    inputs = [x, *wi, *wr, None, None, None, *bias, None, None, h, c, None, None, None, None]
    b.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", inputs, [y], fused_activation_function="TANH",
                   cell_clip=0.0, time_major=False)
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("kind", ["8x8_16", "16x8_16"])
def test_lstm_gate_fc_multiplier_in_double(kind: str) -> None:
    """LSTM gate FCs: double(in_scale) * double(weight_scale) / 2**-12, not the float32
    product widened (GetQuantizedConvolutionMultipler, reached through
    CalculateOpDataFullyConnected in CreateGateParams)."""
    if kind == "8x8_16":
        # Gate weights scales 0.007..0.014: every int8 multiplier moves by a few Q31 units.
        s_in, scales = 0.02, (0.0112, 0.0071, 0.0136, 0.0093)
        x = _int8_pairs().reshape(-1, 1, 2)
    else:
        # The 16x8 kernel reduces the multiplier to Q15; these weight scales straddle a step.
        s_in, scales = 0.0005, (0.011666444130241871, 0.013275769539177418,
                                0.011197523213922977, 0.011107650585472584)
        x = _all_values("int16").reshape(-1, 1, 1)
    for sw in scales:
        old = quantize_multiplier(float(F32(F32(s_in) * F32(sw))) * 4096.0)
        new = quantize_multiplier(_double_ratio(s_in, sw, 2.0 ** -12))
        assert (old != new) if kind == "8x8_16" else (_reduced_q15(old[0]) !=
                                                     _reduced_q15(new[0]))
    model = _lstm_model(kind, x.shape[0], x.shape[2], 16 if kind == "8x8_16" else 4, scales,
                        seed=20261202)
    _assert_same_as_wheel(model, x)
