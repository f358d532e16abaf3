"""SignalFramer, SignalDelay, SignalStacker, SignalOverlapAdd (state kept between invokes)
and SignalIrfft against the live wheel, several invokes in a row, arena numbers included."""

from __future__ import annotations

import numpy as np
import pytest

from signal_cases import assert_matches_tflm, flex
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle


def _int16(rng: np.random.Generator, shape: tuple[int, ...]) -> np.ndarray:
    return rng.integers(-32768, 32768, shape).astype(np.int16)


def _framer(outer: tuple[int, ...], n_frames: int, size: int, step: int, prefill: bool
            ) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", outer + (n_frames * step,), "int16")
    y = b.add_tensor("y", outer + (n_frames, size), "int16")
    valid = b.add_tensor("valid", (), "bool")
    b.add_operator("SignalFramer", [x], [y, valid],
                   custom_options=flex(frame_size=size, frame_step=step, prefill=prefill))
    b.mark_output(y)
    b.mark_output(valid)
    return b.build()


@pytest.mark.parametrize("outer,n_frames,size,step,prefill", [
    ((), 1, 400, 160, True), ((), 2, 10, 4, False), ((3,), 1, 7, 7, False),
    ((2, 2), 3, 9, 2, True), ((), 1, 5, 8, False)])
def test_framer_matches_tflm(outer: tuple[int, ...], n_frames: int, size: int, step: int,
                             prefill: bool) -> None:
    rng = np.random.default_rng(size + step)
    model = _framer(outer, n_frames, size, step, prefill)
    steps = [[_int16(rng, outer + (n_frames * step,))] for _ in range(5)]
    got = assert_matches_tflm(model, steps)
    assert any(bool(g[1]) for g in got)


def test_framer_prefill_longer_than_frame_is_refused_like_tflm() -> None:
    """TFLM's Prepare then zero-fills a negative length (undefined behaviour): the wheel
    refuses at allocation or crashes; tinyarena names the cause."""
    from tflm_oracle import tflm_probe
    from tinyarena.arena.allocator import allocate_model
    from tinyarena.errors import KernelError
    from tinyarena.model import read_model

    model = _framer((), 1, 5, 8, True)
    wheel = tflm_probe(model)
    assert wheel.stage in ("allocate", "crash"), wheel.log
    with pytest.raises(KernelError, match="prefill"):
        allocate_model(read_model(model))


def _delay(shape: tuple[int, ...], delay: int) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", shape, "int16")
    y = b.add_tensor("y", shape, "int16")
    b.add_operator("SignalDelay", [x], [y], custom_options=flex(delay_length=delay))
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("shape,delay", [((8,), 3), ((2, 5), 12), ((4,), 0), ((3, 1, 6), 6)])
def test_delay_matches_tflm(shape: tuple[int, ...], delay: int) -> None:
    rng = np.random.default_rng(delay)
    model = _delay(shape, delay)
    assert_matches_tflm(model, [[_int16(rng, shape)] for _ in range(5)])


def _stacker(channels: int, left: int, right: int, step: int) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (channels,), "int16")
    y = b.add_tensor("y", (channels * (left + right + 1),), "int16")
    valid = b.add_tensor("valid", (), "bool")
    b.add_operator("SignalStacker", [x], [y, valid], custom_options=flex(
        num_channels=channels, stacker_left_context=left, stacker_right_context=right,
        stacker_step=step))
    b.mark_output(y)
    b.mark_output(valid)
    return b.build()


@pytest.mark.parametrize("channels,left,right,step", [
    (40, 3, 0, 1), (4, 0, 2, 1), (5, 2, 2, 3), (3, 1, 1, 1), (6, 0, 0, 1)])
def test_stacker_matches_tflm(channels: int, left: int, right: int, step: int) -> None:
    rng = np.random.default_rng(channels + left)
    model = _stacker(channels, left, right, step)
    steps = [[_int16(rng, (channels,))] for _ in range(7)]
    got = assert_matches_tflm(model, steps)
    assert any(bool(g[1]) for g in got)


def _overlap_add(dtype: str, outer: tuple[int, ...], n_frames: int, size: int, step: int
                 ) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", outer + (n_frames, size), dtype)
    y = b.add_tensor("y", outer + (n_frames * step,), dtype)
    b.add_operator("SignalOverlapAdd", [x], [y], custom_options=flex(
        T=7 if dtype == "int16" else 0, frame_step=step))
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("dtype", ["int16", "float32"])
@pytest.mark.parametrize("outer,n_frames,size,step", [((), 1, 8, 3), ((2,), 3, 6, 6),
                                                      ((2, 1), 2, 10, 1)])
def test_overlap_add_matches_tflm(dtype: str, outer: tuple[int, ...], n_frames: int,
                                  size: int, step: int) -> None:
    rng = np.random.default_rng(size)
    model = _overlap_add(dtype, outer, n_frames, size, step)
    shape = outer + (n_frames, size)
    if dtype == "int16":
        steps = [[_int16(rng, shape)] for _ in range(4)]  # sums saturate often
    else:
        steps = [[rng.normal(0, 3, shape).astype(np.float32)] for _ in range(4)]
    assert_matches_tflm(model, steps)


def _irfft(dtype: str, rows: int, fft_length: int, out_len: int) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (rows, 2 * (fft_length // 2 + 1)), dtype)
    y = b.add_tensor("y", (rows, out_len), dtype)
    b.add_operator("SignalIrfft", [x], [y], custom_options=flex(
        T={"int16": 7, "int32": 2, "float32": 0}[dtype], fft_length=fft_length))
    b.mark_output(y)
    return b.build()


@pytest.mark.parametrize("dtype", ["int16", "int32", "float32"])
def test_irfft_matches_tflm(dtype: str) -> None:
    rng = np.random.default_rng(len(dtype))
    for fft_length in (4, 6, 8, 10, 16, 24, 30, 40, 64, 100, 250, 512):
        model = _irfft(dtype, 2, fft_length, fft_length)
        shape = (2, 2 * (fft_length // 2 + 1))
        if dtype == "float32":
            x = rng.normal(0, 100, shape).astype(np.float32)
        else:
            info = np.iinfo(dtype)
            x = rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)
        assert_matches_tflm(model, [[x]])


def test_reset_restarts_every_stateful_signal_op() -> None:
    """MicroInterpreter::Reset calls each kernel's reset: rings refilled (Framer prefill,
    Delay zeros), Stacker waits for a first frame again, OverlapAdd buffers zeroed."""
    from signal_cases import assert_reset_matches_tflm

    rng = np.random.default_rng(21)
    cases = [(_framer((), 1, 10, 4, True), (4,)), (_delay((6,), 4), (6,)),
             (_stacker(3, 2, 1, 1), (3,))]
    for model, shape in cases:
        steps = [[_int16(rng, shape)] for _ in range(6)]
        assert_reset_matches_tflm(model, steps[:3], steps[3:])
    model = _overlap_add("int16", (), 1, 8, 3)
    steps = [[_int16(rng, (1, 8))] for _ in range(4)]
    assert_reset_matches_tflm(model, steps[:2], steps[2:])


@pytest.mark.parametrize("target,ptr,ring,framer,delay,oa", [
    ("arm32", 4, 24, 28, 20, 24), ("arm32-short-enums", 4, 24, 28, 20, 24)])
def test_ring_ops_tail_on_32_bit_targets(target: str, ptr: int, ring: int, framer: int,
                                         delay: int, oa: int) -> None:
    """The persistent bytes of Framer, Delay, Stacker and OverlapAdd on a 32-bit target,
    from the C layouts (4-byte pointers and size_t): params, the two pointer arrays, one
    CircularBuffer (3 size_t, 2 int32, a pointer) + two copies of the ring per outer row."""
    from tinyarena.arena.allocator import allocate_model
    from tinyarena.model import read_model

    def requested(model: bytes) -> int:
        read = read_model(model)
        layout = allocate_model(read, target=target)
        io = len(read.subgraphs[0].inputs) + len(read.subgraphs[0].outputs)
        return layout.categories["Persistent buffer data"].requested - io * ptr  # IO arrays

    outer, size, step = 3, 9, 4
    capacity = (size + step - 1) // step * step
    assert requested(_framer((outer,), 2, size, step, True)) == \
        framer + 2 * outer * ptr + outer * (ring + 4 * capacity)
    assert requested(_delay((outer, 5), 7)) == delay + 2 * outer * ptr + outer * (ring + 4 * 12)
    assert requested(_stacker(4, 2, 1, 1)) == 36 + ring + 4 * 4 * 4
    assert requested(_overlap_add("int16", (outer,), 2, 8, 3)) == oa + outer * ptr + outer * 16
