"""Compiled signal-library kernels (``kernels.native.signal``) bit for bit against the numpy
kernels (which tests/kernels/test_signal_*.py check against the wheel): Rfft in its three
builds over every kissfft radix, zero padding and several rows; the audio front end's ops on
seeded random one-op models and the front-end chain, over several invokes (spectral
subtraction keeps its noise estimate between them), on the host and Cortex-M targets."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("numba")

from native_compare import compiled_ops, native_matches_numpy  # noqa: E402
from signal_cases import FFT_T, fft_samples, flex, rfft_model  # noqa: E402
from tinyarena.builder import ModelBuilder  # noqa: E402
from tinyarena.interpreter import Interpreter  # noqa: E402

TARGETS = ("host-x64", "cortex-m4", "cortex-m0")


# radix 4 and 2 (8, 16, 64, 512), 3 (6, 24, 48), 5 (10, 40, 100), 3 and 5 (30, 60, 480)
RFFT_CASES = [(4, 3), (6, 6), (8, 8), (10, 7), (16, 16), (24, 20), (30, 30), (40, 33),
              (48, 48), (60, 48), (64, 1), (100, 100), (480, 400), (512, 480)]


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_native_rfft_matches_numpy(dtype: str) -> None:
    rng = np.random.default_rng(70 + FFT_T[dtype])
    for fft_length, in_len in RFFT_CASES:
        rows = 1 + fft_length % 3
        model = rfft_model(dtype, rows, in_len, fft_length)
        feeds = [[fft_samples(dtype, (rows, in_len), rng)] for _ in range(2)]
        if dtype != "float32":  # full-scale constant rows: every sum saturates the same way
            info = np.iinfo(dtype)
            feeds.append([np.full((rows, in_len), info.min, dtype)])
            feeds.append([np.full((rows, in_len), info.max, dtype)])
        native_matches_numpy(model, "SignalRfft", inputs=feeds)
    # wider output rows: each row at its own offset, the tail of a row left as it was
    model = rfft_model(dtype, 3, 16, 16, out_len=12)
    native_matches_numpy(model, "SignalRfft", inputs=[[fft_samples(dtype, (3, 16), rng)]])


def test_native_rfft_on_cortex_m_targets() -> None:
    rng = np.random.default_rng(74)
    for dtype in ("int16", "float32"):
        model = rfft_model(dtype, 2, 60, 60)
        for target in TARGETS[1:]:
            native_matches_numpy(model, "SignalRfft", target,
                                 inputs=[[fft_samples(dtype, (2, 60), rng)]])


def _float_bits_match(a: np.ndarray, b: np.ndarray) -> None:
    """Same NaN positions and the same bits elsewhere (a NaN's sign is the compiler's)."""
    nan = np.isnan(a)
    assert np.array_equal(nan, np.isnan(b))
    assert np.array_equal(a.view(np.uint32)[~nan], b.view(np.uint32)[~nan])


def test_native_float_rfft_specials() -> None:
    """Infinities, NaN and overflowing sums through the float build."""
    rng = np.random.default_rng(75)
    x = rng.normal(0, 1, (2, 30)).astype(np.float32)
    x[0, :4] = [np.inf, -np.inf, np.nan, 3e38]
    x[1, :3] = [3e38, 3e38, -np.inf]
    model = rfft_model("float32", 2, 30, 30)
    got = []
    for native_on in (True, False):
        ip = Interpreter(model, native=native_on)
        ip.allocate_tensors()
        if native_on:
            assert compiled_ops(ip)["SignalRfft"]
        ip.set_input(0, x)
        ip.invoke()
        got.append(np.array(ip.get_output(0)))
    _float_bits_match(*got)


def test_native_rfft_declines_lengths_the_wheel_cannot_run() -> None:
    """fft_length 14 needs kissfft's generic radix: no compiled step, eval refuses to run."""
    ip = Interpreter(rfft_model("int16", 1, 14, 14), native=True)
    ip.allocate_tensors()
    assert not compiled_ops(ip)["SignalRfft"]


# -- the front end's per-channel ops ------------------------------------------------------------

def _u32(rng: np.random.Generator, n: int, top_bits: int = 32) -> np.ndarray:
    """uint32 values of every bit length up to ``top_bits``."""
    bits = rng.integers(0, top_bits + 1, n).astype(np.uint64)
    return (rng.integers(0, 2**32, n, dtype=np.uint64) >> (np.uint64(32) - bits)).astype(
        np.uint32)


def test_native_square_root_matches_numpy() -> None:
    from test_signal_filter_bank import _square_root

    rng = np.random.default_rng(80)
    feeds = []
    for shift in (0, 3, 15, 31):
        bits = rng.integers(0, 65, 64)
        x = rng.integers(0, 2**63, 64, dtype=np.uint64) >> (64 - bits).astype(np.uint64)
        x[:9] = [0, 1, 2, 3, 2**32 - 1, 2**32, 2**64 - 1, (2**32 - 1) ** 2, 2**62]
        feeds.append([x.astype(np.uint64), np.array(shift, np.int32)])
    native_matches_numpy(_square_root(64), "SignalFilterBankSquareRoot", inputs=feeds)


@pytest.mark.parametrize("shift", [-1, 32])
def test_native_square_root_still_refuses_a_bad_scale(shift: int) -> None:
    from test_signal_filter_bank import _square_root

    from tinyarena.errors import KernelError

    ip = Interpreter(_square_root(4), native=True)
    ip.allocate_tensors()
    assert compiled_ops(ip)["SignalFilterBankSquareRoot"]
    ip.set_input(0, np.arange(4, dtype=np.uint64))
    ip.set_input(1, np.array(shift, np.int32))
    with pytest.raises(KernelError, match="scale_bits"):
        ip.invoke()


def test_native_pcan_matches_numpy() -> None:
    from test_signal_filter_bank import _pcan

    rng = np.random.default_rng(81)
    for snr_shift in (0, 6, 20, 63):
        lut = rng.integers(-32768, 32768, 125).astype(np.int16)  # int32 wrap paths too
        feeds = []
        for k in range(4):
            noise = _u32(rng, 40)
            noise[:4] = [0, 1, 2, 3]
            feeds.append([_u32(rng, 40, 8 * k + 8), noise])
        native_matches_numpy(_pcan(40, snr_shift, lut), "SignalPCAN", inputs=feeds)


def test_native_pcan_still_refuses_a_short_gain_table() -> None:
    """A noise estimate of bit length L > 1 reads gain_lut up to index 4L - 4: with 22
    entries 63 (L = 6, index 20) fits and 64 (index 24) does not."""
    from test_signal_filter_bank import _pcan

    from tinyarena.errors import KernelError

    lut = np.arange(22, dtype=np.int16)
    model = _pcan(4, 6, lut)
    ok = [np.full(4, 1000, np.uint32), np.array([0, 2, 32, 63], np.uint32)]
    native_matches_numpy(model, "SignalPCAN", inputs=[ok])
    for native_on in (True, False):
        ip = Interpreter(model, native=native_on)
        ip.allocate_tensors()
        ip.set_input(0, ok[0])
        ip.set_input(1, np.array([0, 2, 64, 128], np.uint32))
        with pytest.raises(KernelError, match="gain_lut"):
            ip.invoke()


def test_native_filter_bank_log_matches_numpy() -> None:
    from test_signal_filter_bank import _log

    rng = np.random.default_rng(82)
    for correction, scale in ((3, 64), (0, 1), (12, 1600), (0, 2**20 + 7), (31, 2**32 - 1)):
        x = _u32(rng, 512)
        x[:6] = [0, 1, 2, 3, 2**31, 2**32 - 1]
        native_matches_numpy(_log(512, correction, scale), "SignalFilterBankLog", inputs=[[x]])


def test_native_energy_window_auto_scale_match_numpy() -> None:
    from test_signal_basic import _auto_scale, _auto_scale_inputs, _energy, _window

    rng = np.random.default_rng(83)
    for n, out, start, end in ((257, 257, 0, 257), (33, 33, 0, 30), (20, 20, 5, 12)):
        x = rng.integers(-32768, 32768, 2 * n).astype(np.int16)
        x[:4] = (-32768, -32768, 32767, -32768)
        native_matches_numpy(_energy(n, out, start, end), "SignalEnergy", inputs=[[x]])
    for shape, n, shift in (((16,), 16, 12), ((3, 10), 10, 0), ((2, 2, 8), 4, 15),
                            ((480,), 480, 31)):
        x = rng.integers(-32768, 32768, shape).astype(np.int16)
        x.reshape(-1)[:2] = (-32768, 32767)
        native_matches_numpy(_window(shape, n, shift, rng), "SignalWindow", inputs=[[x]])
    feeds = [[x] for x in _auto_scale_inputs(rng)]
    feeds.append([np.full(12, -32768, np.int16)])
    native_matches_numpy(_auto_scale(12), "SignalFftAutoScale", inputs=feeds)


def test_native_filter_bank_matches_numpy() -> None:
    from test_signal_filter_bank import _filter_bank

    rng = np.random.default_rng(84)
    for channels, spectrum, outputs, negative in ((40, 257, 40, False), (8, 33, 8, True),
                                                  (16, 64, 10, False), (1, 16, 1, True)):
        model = _filter_bank(channels, spectrum, outputs, rng, negative)
        x = rng.integers(0, 2**32, spectrum, dtype=np.uint64).astype(np.uint32)
        x[:3] = 2**32 - 1
        native_matches_numpy(model, "SignalFilterBank", inputs=[[x], [x // 7]])


@pytest.mark.parametrize("options", [
    {}, {"clamping": True}, {"smoothing_bits": 0, "spectral_subtraction_bits": 0},
    {"smoothing": 2**31 + 5, "one_minus_smoothing": 2**32 - 1, "min_signal_remaining": 0},
    {"smoothing_bits": 20, "alternate_smoothing": 0, "alternate_one_minus_smoothing": 16384}])
def test_native_spectral_subtraction_matches_numpy_across_invokes(options: dict[str, int]
                                                                 ) -> None:
    """Five invokes: the noise estimate carried between them must evolve identically."""
    from test_signal_filter_bank import _spectral_subtraction

    rng = np.random.default_rng(85 + len(options))
    feeds = [[rng.integers(0, 2**(8 + 4 * k), 40, dtype=np.uint64).astype(np.uint32)]
             for k in range(5)]
    feeds[2][0][:2] = 2**32 - 1
    native_matches_numpy(_spectral_subtraction(40, **options),
                         "SignalFilterBankSpectralSubtraction", inputs=feeds)


# -- the chain, as the audio_frontend families build it -----------------------------------------

SIGNAL_OPS = ("SignalWindow", "SignalFftAutoScale", "SignalRfft", "SignalEnergy",
              "SignalFilterBank", "SignalFilterBankSquareRoot",
              "SignalFilterBankSpectralSubtraction", "SignalPCAN", "SignalFilterBankLog")


def _chain(frame: int, fft_length: int, channels: int, seed: int) -> bytes:
    from model_families import add_signal_chain

    b = ModelBuilder()
    audio = b.add_input("audio", (1, frame), "int16")
    log = add_signal_chain(b, audio, np.random.default_rng(seed), frame=frame,
                           fft_length=fft_length, channels=channels, min_signal_remaining=1638,
                           output_scale=1600)
    b.mark_output(log)
    return b.build()


@pytest.mark.parametrize("frame,fft_length,channels", [(480, 512, 40), (400, 480, 24)])
def test_native_front_end_chain_matches_numpy(frame: int, fft_length: int, channels: int
                                              ) -> None:
    """Every signal op of the chain compiled; six frames (quiet, loud, full scale) in a row
    on the host and Cortex-M targets."""
    model = _chain(frame, fft_length, channels, frame)
    ip = Interpreter(model, native=True)
    ip.allocate_tensors()
    steps = compiled_ops(ip)
    assert all(steps[name] for name in SIGNAL_OPS), steps
    rng = np.random.default_rng(frame)
    feeds = [[(rng.normal(0, scale, (1, frame))).clip(-32768, 32767).astype(np.int16)]
             for scale in (3, 300, 3000, 30000, 100)]
    feeds.append([np.full((1, frame), -32768, np.int16)])
    for target in TARGETS:
        native_matches_numpy(model, "SignalRfft", target, inputs=feeds)


# -- Irfft ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_native_irfft_matches_numpy(dtype: str) -> None:
    from test_signal_stateful import _irfft

    rng = np.random.default_rng(88 + FFT_T[dtype])
    for fft_length in (4, 6, 8, 10, 16, 24, 30, 40, 64, 100, 250, 512):
        bins = 2 * (fft_length // 2 + 1)
        rows = 1 + fft_length % 3
        model = _irfft(dtype, rows, fft_length, fft_length)
        feeds = [[fft_samples(dtype, (rows, bins), rng)] for _ in range(2)]
        native_matches_numpy(model, "SignalIrfft", inputs=feeds)
    # output rows wider than fft_length: each row at its own offset, its tail left alone
    model = _irfft(dtype, 3, 16, 20)
    native_matches_numpy(model, "SignalIrfft", inputs=[[fft_samples(dtype, (3, 18), rng)]])


# -- the ring-buffer ops: Framer, Stacker, Delay (state across invokes, reset) ---------------------

def _int16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-32768, 32768, shape).astype(np.int16)


def test_native_ring_ops_match_numpy_across_invokes() -> None:
    from test_signal_stateful import _delay, _framer, _stacker

    rng = np.random.default_rng(89)
    for outer, n_frames, size, step, prefill in (((), 1, 400, 160, True), ((), 2, 10, 4, False),
                                                 ((3,), 1, 7, 7, False), ((2, 2), 3, 9, 2, True),
                                                 ((), 1, 5, 8, False), ((), 3, 12, 5, True)):
        feeds = [[_int16(rng, outer + (n_frames * step,))] for _ in range(6)]
        native_matches_numpy(_framer(outer, n_frames, size, step, prefill), "SignalFramer",
                             inputs=feeds)
    for channels, left, right, step in ((40, 3, 0, 1), (4, 0, 2, 1), (5, 2, 2, 3), (3, 1, 1, 1),
                                        (6, 0, 0, 1), (2, 4, 1, 5)):
        feeds = [[_int16(rng, (channels,))] for _ in range(8)]
        native_matches_numpy(_stacker(channels, left, right, step), "SignalStacker",
                             inputs=feeds)
    for shape, length in (((8,), 3), ((2, 5), 12), ((4,), 0), ((3, 1, 6), 6)):
        feeds = [[_int16(rng, shape)] for _ in range(6)]
        native_matches_numpy(_delay(shape, length), "SignalDelay", inputs=feeds)


def test_native_ring_ops_reset() -> None:
    """Invokes, reset, invokes: the compiled loops keep their state in the same workspaces
    the kernels' reset clears, so both paths agree after it (outputs a not-yet-valid stack
    leaves alone keep the arena's old bytes in both)."""
    from test_signal_stateful import _delay, _framer, _overlap_add, _stacker

    rng = np.random.default_rng(90)
    for model, shape, name in ((_framer((), 1, 10, 4, True), (4,), "SignalFramer"),
                               (_delay((6,), 4), (6,), "SignalDelay"),
                               (_stacker(3, 2, 1, 1), (3,), "SignalStacker"),
                               (_overlap_add("int16", (), 1, 8, 3), (1, 8), "SignalOverlapAdd"),
                               (_spectral(), (16,), "SignalFilterBankSpectralSubtraction")):
        dtype = np.uint32 if name.endswith("Subtraction") else np.int16
        feeds = [_int16(rng, shape).astype(dtype) for _ in range(6)]
        fast = Interpreter(model, native=True)
        ref = Interpreter(model, native=False)
        for ip in (fast, ref):
            ip.allocate_tensors()
        assert compiled_ops(fast)[name]
        for k, x in enumerate(feeds):
            for ip in (fast, ref):
                if k == 3:
                    ip.reset()
                ip.set_input(0, x)
                ip.invoke()
            for i in range(ref.outputs_size()):
                assert np.array_equal(fast.get_output(i), ref.get_output(i)), (name, k)


def _spectral() -> bytes:
    from test_signal_filter_bank import _spectral_subtraction

    return _spectral_subtraction(16)


@pytest.mark.parametrize("dtype", ["int16", "float32"])
def test_native_overlap_add_matches_numpy(dtype: str) -> None:
    """Several invokes (the buffers carry the frames' tails); int16 sums saturate often."""
    from test_signal_stateful import _overlap_add

    rng = np.random.default_rng(91)
    for outer, n_frames, size, step in (((), 1, 8, 3), ((2,), 3, 6, 6), ((2, 1), 2, 10, 1),
                                        ((), 2, 480, 160)):
        shape = outer + (n_frames, size)
        if dtype == "int16":
            feeds = [[_int16(rng, shape)] for _ in range(4)]
        else:
            feeds = [[rng.normal(0, 3, shape).astype(np.float32)] for _ in range(3)]
            feeds.append([np.full(shape, 3e38, np.float32)])  # sums overflow to inf
        native_matches_numpy(_overlap_add(dtype, outer, n_frames, size, step),
                             "SignalOverlapAdd", inputs=feeds)


def test_native_filter_bank_declines_bands_given_at_invoke_time() -> None:
    """Band tensors that are graph inputs cannot be checked at bind: numpy runs them (and
    raises, as before, for a band reaching past the spectrum)."""
    from tinyarena.errors import KernelError

    b = ModelBuilder()
    x = b.add_input("x", (16,), "uint32")
    widths = b.add_input("widths", (3,), "int16")
    tensors = [x, b.add_constant("w", np.arange(12, dtype=np.int16)),
               b.add_constant("u", np.arange(12, dtype=np.int16)),
               b.add_constant("fs", np.array([0, 4, 8], np.int16)),
               b.add_constant("ws", np.array([0, 4, 8], np.int16)), widths]
    y = b.add_tensor("y", (2,), "uint64")
    b.add_operator("SignalFilterBank", tensors, [y], custom_options=flex(num_channels=2))
    b.mark_output(y)
    model = b.build()
    ip = Interpreter(model, native=True)
    ip.allocate_tensors()
    assert not compiled_ops(ip)["SignalFilterBank"]
    ip.set_input(0, np.arange(16, dtype=np.uint32))
    ip.set_input(1, np.array([4, 4, 9], np.int16))
    with pytest.raises(KernelError, match="band"):
        ip.invoke()
