"""Arithmetic that depends on the build, not on the kernel set: a hardware FPU's fused
multiply-add (``kernels._fma``) and newlib's soft-float ``expf`` (``_libm.expf_fdlibm``).

Both are checked end to end by tests/oracle/test_device_outputs.py (hello_world_float on the
Cortex-M4/M55 builds needs the fused sums, trained_lstm on the Cortex-M3 build the fdlibm
expf). Here each is checked against facts computed independently: fmaf against exact rational
arithmetic, expf_fdlibm against exp in double (fdlibm's bound: under one ulp) and its special
cases, and the targets' choices against what the device builds are.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pytest

from tinyarena.arena.targets import get_target
from tinyarena.kernels._fma import fma32
from tinyarena.kernels._libm import expf, expf_fdlibm, expf_for

F = np.float32


def _round_to_f32(q: Fraction) -> np.float32:
    """The float32 nearest to the rational q, ties to even (overflow to inf)."""
    guess = F(float(q))
    best = guess
    for cand in (np.nextafter(guess, F(-np.inf)), guess, np.nextafter(guess, F(np.inf))):
        if not np.isfinite(cand):
            continue
        d, db = abs(Fraction(float(cand)) - q), abs(Fraction(float(best)) - q)
        if d < db or (d == db and int(np.array([cand]).view(np.uint32)[0]) % 2 == 0):
            best = cand
    return best


def test_fma32_rounds_once() -> None:
    rng = np.random.default_rng(3)
    a = rng.normal(size=3000).astype(F) * F(1e3)
    b = rng.normal(size=3000).astype(F)
    c = rng.normal(size=3000).astype(F) * F(1e2)
    # Cases where the double sum is exactly a float32 midpoint but the exact sum is not: the
    # product's tail decides, which double rounding would lose.
    a = np.concatenate([a, np.array([1 + 2 ** -12, 1 + 2 ** -23], F)])
    b = np.concatenate([b, np.array([1 + 2 ** -12, 1 - 2 ** -24], F)])
    c = np.concatenate([c, np.array([2 ** -24, -1], F)])
    got = fma32(a, b, c)
    want = np.array([_round_to_f32(Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z)))
                     for x, y, z in zip(a, b, c)], F)
    assert np.array_equal(got.view(np.uint32), want.view(np.uint32))
    unfused = (a * b + c).astype(F)
    assert not np.array_equal(got, unfused)  # the cases above do tell the two apart


def test_expf_fdlibm_is_within_one_ulp_and_its_own_function() -> None:
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-103, 88.7, 200_000), rng.uniform(-1.1, 1.1, 50_000)]
                       ).astype(F)
    got = expf_fdlibm(x)
    exact = np.exp(x.astype(np.float64))
    ulp = np.abs(got.astype(np.float64) - exact) / np.spacing(got).astype(np.float64)
    assert ulp.max() < 1.0
    # not correctly rounded like glibc's: it is a different function on many inputs
    assert (got != expf(x, fused=False)).mean() > 0.01


def test_expf_fdlibm_special_values() -> None:
    x = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 89.0, -104.0, 1e-10, -1e-10], F)
    y = expf_fdlibm(x)
    assert y[0] == 1 and y[1] == 1 and y[2] == np.inf and y[3] == 0 and np.isnan(y[4])
    assert y[5] == np.inf and y[6] == 0 and y[7] == 1 and y[8] == 1


@pytest.mark.parametrize("target,fma,libm", [
    ("host-x64", False, "glibc"), ("arm32-short-enums", False, "glibc"),
    ("cortex-m0", False, "newlib-fdlibm"), ("cortex-m3", False, "newlib-fdlibm"),
    ("cortex-m4+fp", True, "newlib-fdlibm-fma"), ("cortex-m55", True, "newlib"),
    # TFLM's soft-float TARGET_ARCHs (cortex_m_generic_makefile.inc: FLOAT=soft, or softfp
    # without an FPU on cortex-m55+nofp): no FP instructions, so nothing is fused.
    ("cortex-m4", False, "newlib-fdlibm"), ("cortex-m7", False, "newlib-fdlibm"),
    ("cortex-m33+nodsp", False, "newlib-fdlibm"), ("cortex-m55+nofp", False, "newlib-fdlibm"),
    ("cortex-m4+sfp", True, "newlib-fdlibm-fma"), ("cortex-m7+fp", True, "newlib"),
    ("cortex-m33", True, "newlib-fdlibm-fma")])
def test_targets_name_their_float_arithmetic(target: str, fma: bool, libm: str) -> None:
    profile = get_target(target)
    assert profile.float_fma is fma and profile.libm == libm
    x = np.linspace(-20, 20, 101).astype(F)
    assert expf_for(libm)(x).dtype == F


def _output_per_target(model: bytes, inputs: list[np.ndarray]) -> dict[str, np.ndarray]:
    """Output 0 on an FPU target (Cortex-M4, hard float), one without (Cortex-M3) and the host,
    after one invoke per input in turn (variable tensors carry their state over)."""
    from tinyarena import Interpreter

    got = {}
    for target in ("cortex-m4+fp", "cortex-m3", "host-x64"):
        ip = Interpreter(model, target=target)
        ip.allocate_tensors()
        for x in inputs:
            ip.set_input(0, x)
            ip.invoke()
        got[target] = ip.get_output(0).copy()
    return got


def _assert_fused_only_with_fpu(got: dict[str, np.ndarray], want: np.ndarray) -> None:
    """The Cortex-M4 output is the fused reference bit for bit; the Cortex-M3 one is the
    host's (unfused), and the two targets do differ on this case."""
    assert np.array_equal(got["cortex-m4+fp"].view(np.uint32), want.view(np.uint32))
    assert np.array_equal(got["cortex-m3"], got["host-x64"])
    assert not np.array_equal(got["cortex-m4+fp"], got["cortex-m3"])


def _fused_reference(x: np.ndarray, w: np.ndarray, b: np.ndarray, depthwise: bool
                     ) -> np.ndarray:
    """reference_ops::Conv / DepthwiseConv float with every ``total += a * b`` fused, VALID
    padding, stride 1, written here element by element in TFLM's loop order (taps ky, kx, then
    input channels for conv) with Python's exact rational arithmetic for each fmaf."""
    _, h, wd, cin = x.shape
    kh, kw = w.shape[1], w.shape[2]
    cout = w.shape[3] if depthwise else w.shape[0]
    out = np.zeros((1, h - kh + 1, wd - kw + 1, cout), F)
    for oy in range(out.shape[1]):
        for ox in range(out.shape[2]):
            for oc in range(cout):
                total = F(0)
                for ky in range(kh):
                    for kx in range(kw):
                        chans = [oc] if depthwise else range(cin)
                        for c in chans:
                            wv = w[0, ky, kx, oc] if depthwise else w[oc, ky, kx, c]
                            exact = (Fraction(float(x[0, oy + ky, ox + kx, c])) * Fraction(
                                float(wv)) + Fraction(float(total)))
                            total = _round_to_f32(exact)
                out[0, oy, ox, oc] = F(total + b[oc])
    return out


@pytest.mark.parametrize("depthwise", [False, True])
def test_float_convolutions_fuse_on_fpu_targets(depthwise: bool) -> None:
    """Cortex-M4 (FPU): conv/depthwise float sums fused, in TFLM's order; Cortex-M3: not."""
    from tinyarena.builder import ModelBuilder

    rng = np.random.default_rng(9)
    x = rng.normal(size=(1, 5, 5, 3)).astype(F)
    w = rng.normal(size=(1, 3, 3, 3) if depthwise else (4, 3, 3, 3)).astype(F)
    cout = 3 if depthwise else 4
    b = rng.normal(size=cout).astype(F)
    mb = ModelBuilder()
    xi = mb.add_input("x", x.shape, "float32")
    wt, bt = mb.add_constant("w", w), mb.add_constant("b", b)
    y = mb.add_tensor("y", (1, 3, 3, cout), "float32")
    op = "DEPTHWISE_CONV_2D" if depthwise else "CONV_2D"
    extra = {"depth_multiplier": 1} if depthwise else {}
    mb.add_operator(op, [xi, wt, bt], [y], padding="VALID", stride_w=1, stride_h=1, **extra)
    mb.mark_output(y)
    model = mb.build()
    got = _output_per_target(model, [x])
    _assert_fused_only_with_fpu(got, _fused_reference(x, w, b, depthwise))


def _fmaf(a: float, b: float, c: float) -> np.float32:
    return _round_to_f32(Fraction(float(a)) * Fraction(float(b)) + Fraction(float(c)))


def test_float_svdf_fuses_both_dot_products_on_fpu_targets() -> None:
    """EvalFloatSvdfReference: ``dot_prod += w * x`` (feature) and ``scratch += w_time *
    state`` (time), each fused on the Cortex-M4; bias + scratch is a plain add. Two invokes
    from a zero state, rank 1, memory 2, written out here with exact-rational fmaf."""
    from tinyarena.builder import ModelBuilder

    rng = np.random.default_rng(12)
    n_in, units, memory = 24, 8, 2
    wf = rng.normal(size=(units, n_in)).astype(F)
    wt = rng.normal(size=(units, memory)).astype(F)
    bias = rng.normal(size=units).astype(F)
    xs = [rng.normal(size=(1, n_in)).astype(F) for _ in range(2)]
    mb = ModelBuilder()
    xi = mb.add_input("x", (1, n_in), "float32")
    st = mb.add_tensor("state", (1, memory * units), "float32", is_variable=True)
    y = mb.add_tensor("y", (1, units), "float32")
    mb.add_operator("SVDF", [xi, mb.add_constant("wf", wf), mb.add_constant("wt", wt),
                             mb.add_constant("b", bias), st], [y], rank=1,
                    fused_activation_function="NONE")
    mb.mark_output(y)
    model = mb.build()
    got = _output_per_target(model, xs)
    state = np.zeros((units, memory), F)
    for x in xs:
        state[:, :-1] = state[:, 1:]
        for i in range(units):
            acc = F(0)
            for j in range(n_in):
                acc = _fmaf(wf[i, j], x[0, j], acc)
            state[i, -1] = acc
    want = np.zeros(units, F)
    for i in range(units):
        acc = F(0)
        for j in range(memory):
            acc = _fmaf(wt[i, j], state[i, j], acc)
        want[i] = F(bias[i] + acc)
    _assert_fused_only_with_fpu(got, want.reshape(1, units))


def test_float_transpose_conv_fuses_on_fpu_targets() -> None:
    """reference_ops::TransposeConv scatters ``output += input * filter`` over input pixels
    (rows, columns, channels ascending): each a fused multiply-add on the Cortex-M4."""
    from tinyarena.builder import ModelBuilder

    rng = np.random.default_rng(21)
    h, w, cin, cout, k = 3, 3, 3, 2, 2
    x = rng.normal(size=(1, h, w, cin)).astype(F)
    filt = rng.normal(size=(cout, k, k, cin)).astype(F)
    oh, ow = h + k - 1, w + k - 1
    mb = ModelBuilder()
    shape = mb.add_constant("shape", np.array([1, oh, ow, cout], np.int32))
    xi = mb.add_input("x", x.shape, "float32")
    y = mb.add_tensor("y", (1, oh, ow, cout), "float32")
    mb.add_operator("TRANSPOSE_CONV", [shape, mb.add_constant("w", filt), xi], [y],
                    padding="VALID", stride_w=1, stride_h=1)
    mb.mark_output(y)
    model = mb.build()
    got = _output_per_target(model, [x])
    want = np.zeros((1, oh, ow, cout), F)
    for iy in range(h):
        for ix in range(w):
            for c in range(cin):
                for ky in range(k):
                    for kx in range(k):
                        for oc in range(cout):
                            want[0, iy + ky, ix + kx, oc] = _fmaf(
                                x[0, iy, ix, c], filt[oc, ky, kx, c],
                                want[0, iy + ky, ix + kx, oc])
    _assert_fused_only_with_fpu(got, want)


# expf on TFLM's hard-float Cortex-M4 (cortex-m4+fp): newlib 3.3.0 of Debian's arm-none-eabi-gcc
# 12.2.1 (multilib thumb/v7e-m+fp/hard), measured in QEMU 7.2 mps2-an386 on x = -87 + 175*i/200000
# (float32 arithmetic), i < 200,000: the result equals the fused fdlibm port on all 200,000. Below,
# (bits of x, bits of expf(x) on the device): the 91 inputs where the unfused fdlibm code gives
# other bits, then 9 where the double-based newlib expf does.
M4_HARD_EXPF = (
    (0xC2A59A7F, 0x03BA68A2), (0xC2A2ED81, 0x04B19919), (0xC2A2E48B, 0x04B4BBD3),
    (0xC2A2E083, 0x04B6298D), (0xC29EA1AA, 0x063E3984), (0xC29DB4AC, 0x0697194D),
    (0xC29D3656, 0x06C1629C), (0xC2952D91, 0x09A7D381), (0xC2923DD3, 0x0AB628C1),
    (0xC290DE25, 0x0B350526), (0xC28F7106, 0x0BB8AC5C), (0xC28E3B02, 0x0C292D16),
    (0xC28CDD92, 0x0CA76234), (0xC2887C39, 0x0E3AF9C9), (0xC27DD354, 0x11AF125D),
    (0xC27BEB02, 0x120D05EB), (0xC2780CEE, 0x12B96CC6), (0xC26CFD92, 0x14B805E0),
    (0xC26CBB44, 0x14C45533), (0xC24030C5, 0x1CCD591B), (0xC235BF1B, 0x1EAEB553),
    (0xC227C47B, 0x2133DA0B), (0xC2224958, 0x2230FD41), (0xC2112CCD, 0x25475A85),
    (0xC20EC28F, 0x25B64E43), (0xC20C6148, 0x26254334), (0xC205B581, 0x275AFB8A),
    (0xC203BDF4, 0x27B30989), (0xC1AE5168, 0x2FBD3C39), (0xC1A95580, 0x30306A7E),
    (0xC1A42B04, 0x30A83F9C), (0xC19E7128, 0x312C1850), (0xC1993688, 0x31A56D16),
    (0xC1921D70, 0x3248DD4D), (0xC157E350, 0x35B94CE0), (0xC14C9708, 0x363BB86E),
    (0xC141F6C8, 0x36B659B5), (0xC1369168, 0x3739DE05), (0xC12A4DD0, 0x37C8039D),
    (0xC10B60C8, 0x392CBEAC), (0xC0D34DD0, 0x3AB1BA54), (0xC0A827F0, 0x3BAB1D4B),
    (0xC08FB640, 0x3C37A7E1), (0xC02243A0, 0x3DA24449), (0xC0171080, 0x3DC14C7A),
    (0xC0123120, 0x3DD0970B), (0x3F8FDB40, 0x4044E9B4), (0x4072E560, 0x4231F519),
    (0x40FCE140, 0x45290062), (0x40FD5B30, 0x452B8931), (0x40FE23E0, 0x452FCA43),
    (0x410A3330, 0x45B03993), (0x410B8418, 0x45BF5529), (0x4158A458, 0x49395EDC),
    (0x4187EC08, 0x4BB67FE0), (0x418D0664, 0x4C2CAF73), (0x4192BAE0, 0x4CB02B99),
    (0x419F40C0, 0x4DD2B810), (0x41A8CD0C, 0x4EADC53F), (0x41AB3020, 0x4EEA2F7A),
    (0x41B47850, 0x4FBACE27), (0x41C56004, 0x514134F7), (0x41D590E4, 0x52B6C312),
    (0x41E06E14, 0x53B1A9E5), (0x41F1420C, 0x5535FD67), (0x41F53684, 0x55952ED4),
    (0x420B922E, 0x58A1F8E4), (0x421A0B24, 0x5B3CA29B), (0x421F8812, 0x5C39F550),
    (0x4227DAC0, 0x5DBA3341), (0x4232D74C, 0x5FB56DB2), (0x42359874, 0x60349C52),
    (0x4235FF7C, 0x6047BA8C), (0x42389688, 0x60BED162), (0x42488A80, 0x63A0E273),
    (0x425C7DB4, 0x673839B3), (0x425E4958, 0x67904C49), (0x4269ED70, 0x69A59817),
    (0x426FC6A8, 0x6AB2A3DB), (0x427ADB64, 0x6CB238F4), (0x42846B76, 0x6F37A1BF),
    (0x4284BD70, 0x6F57848B), (0x4287326E, 0x70380EC5), (0x42875AC0, 0x7047236B),
    (0x428CE99A, 0x72486BAC), (0x42935062, 0x7499C3E4), (0x4297C168, 0x76311A7E),
    (0x429AB9AA, 0x774373E4), (0x42A269BA, 0x7A0EA33B), (0x42A8673A, 0x7C322FF9),
    (0x42AC7E36, 0x7DAC22DA), (0xC2ADFB85, 0x00B4C9C4), (0xC2888852, 0x0E369C0E),
    (0xC24A36E9, 0x1B060AB0), (0xC200CD50, 0x283AB088), (0xC1606668, 0x3559B34A),
    (0x4079C8C0, 0x42462DE6), (0x41AEA1CC, 0x4F3417A8), (0x42216128, 0x5C939494),
    (0x426A13F8, 0x69ABF19E),
)


def test_hard_float_m4_expf_is_fdlibm_with_fused_multiply_adds() -> None:
    x = np.array([a for a, _ in M4_HARD_EXPF], np.uint32).view(F)
    want = np.array([b for _, b in M4_HARD_EXPF], np.uint32)
    got = expf_for(get_target("cortex-m4+fp").libm)(x).view(np.uint32)
    assert np.array_equal(got, want)
    assert np.count_nonzero(expf_fdlibm(x).view(np.uint32) != want) == 91
    assert np.count_nonzero(expf_for("newlib")(x).view(np.uint32) != want) >= 9
