"""TFLM_DECODE (LUT and prune decoders) against the live wheel: decoded outputs and arena.

The encodings are built here from the format the decoders read (a 16-byte header, then the
tables; indices and masks most significant bit first), independently of tinyarena's decoder.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

from op_sweep import check_op
from tinyarena.builder import ModelBuilder

pytestmark = pytest.mark.oracle


def _pack_bits(values: np.ndarray, width: int) -> np.ndarray:
    bits = ((values[:, None] >> np.arange(width - 1, -1, -1)) & 1).astype(np.uint8)
    return np.packbits(bits.reshape(-1))


def _header(kind: int, byte5: int = 0, byte6: int = 0) -> np.ndarray:
    h = np.zeros(16, np.uint8)
    h[0], h[1], h[4], h[5], h[6] = kind, 1, 1, byte5, byte6
    return h


def _model(encoded: np.ndarray, ancillary: np.ndarray, shape: tuple[int, ...], dtype: str,
           quant: dict[str, Any]) -> bytes:
    """DECODE -> ADD(decoded, x): the decoded tensor feeds a real op, as in a compressed model;
    the decoded tensor is an output too."""
    b = ModelBuilder()
    x = b.add_input("x", shape, dtype, **quant)
    enc = b.add_constant("enc", encoded)
    anc = b.add_constant("anc", ancillary)
    dec = b.add_tensor("dec", shape, dtype, **quant)
    b.add_operator("TFLM_DECODE", [enc, anc], [dec])
    y = b.add_tensor("y", shape, dtype, **quant)
    b.add_operator("MAXIMUM", [dec, x], [y])
    b.mark_output(dec)
    b.mark_output(y)
    return b.build()


LUT_CASES = [(d, 1, 0) for d in ("int8", "int16", "int32", "float32")] + [
    (d, c, a) for d in ("int8", "int16") for c, a in ((3, 0), (4, 2))]


@pytest.mark.parametrize("width", [1, 2, 3, 4, 5, 7])
@pytest.mark.parametrize("dtype,channels,axis", LUT_CASES)
def test_lut(dtype: str, width: int, channels: int, axis: int) -> None:
    rng = np.random.default_rng(width * 10 + channels)
    shape = (channels, 5, 4) if axis == 0 else (3, 5, channels)
    count = int(np.prod(shape))
    stride = 1 << width
    table = (rng.standard_normal(channels * stride).astype(np.float32) if dtype == "float32"
             else rng.integers(-100, 100, size=channels * stride).astype(dtype))
    indices = rng.integers(0, stride, size=count)
    ancillary = np.concatenate([_header(0, width, stride), table.view(np.uint8)])
    quant: dict[str, Any] = {}
    if dtype in ("int8", "int16"):
        quant = {"scale": np.full(channels, 0.1, np.float32) if channels > 1 else 0.1,
                 "zero_point": np.zeros(channels, np.int64) if channels > 1 else 0}
        if channels > 1:
            quant["quantized_dimension"] = axis
    model = _model(_pack_bits(indices, width), ancillary, shape, dtype, quant)
    x = (rng.standard_normal(shape).astype(np.float32) if dtype == "float32"
         else rng.integers(-100, 100, size=shape).astype(dtype))
    check_op(model, [x])


PRUNE_CASES = [("int8", 1, 0, (0,)), ("int8", 1, 0, (-3,)), ("int8", 3, 0, (1, 0, -2)),
               ("int8", 4, 2, (2, 2, 0, 5)), ("int8", 3, 0, (0, 0, 0)), ("int16", 1, 0, (0,)),
               ("int16", 3, 0, (0, 0, 0)), ("int16", 4, 2, (0, 0, 0, 0)),
               ("float32", 1, 0, (0,))]


@pytest.mark.parametrize("dtype,channels,axis,zero_points", PRUNE_CASES)
def test_prune(dtype: str, channels: int, axis: int, zero_points: tuple[int, ...]) -> None:
    rng = np.random.default_rng(channels + 7)
    shape = (channels, 6, 4) if axis == 0 else (3, 6, channels)
    count = int(np.prod(shape))
    keep = rng.random(count) < 0.4
    values = (rng.standard_normal(int(keep.sum())).astype(np.float32) if dtype == "float32"
              else rng.integers(-100, 100, size=int(keep.sum())).astype(dtype))
    ancillary = np.concatenate([_header(2), values.view(np.uint8)])
    quant: dict[str, Any] = {}
    if dtype != "float32":
        if channels > 1:
            quant = {"scale": np.full(channels, 0.1, np.float32),
                     "zero_point": np.array(zero_points, np.int64), "quantized_dimension": axis}
        else:
            quant = {"scale": 0.1, "zero_point": zero_points[0]}
    model = _model(np.packbits(keep.astype(np.uint8)), ancillary, shape, dtype, quant)
    x = (rng.standard_normal(shape).astype(np.float32) if dtype == "float32"
         else rng.integers(-100, 100, size=shape).astype(dtype))
    check_op(model, [x])


def _huffman_case(table32: bool, dtype: str, seed: int
                  ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A prefix code A='0', B='10', C='110', D='1110', E='1111' as a two-bit first table with
    put-back (A: of the 2 bits read, 1 is used), a subtable (C) and a third level (D, E); a
    leaf's count field is the number of bits of its last lookup that belong to the code."""
    found, shift = (0x80000000, 27) if table32 else (0x8000, 11)
    mask = (1 << (16 if dtype == "int16" else 8)) - 1
    rng = np.random.default_rng(seed)
    info = np.iinfo(np.dtype(dtype))
    syms = rng.integers(info.min, info.max, size=5, endpoint=True)

    def leaf(symbol: int, residual: int) -> int:
        return found | (residual << shift) | (int(symbol) & mask)

    def link(extra_bits: int, jump: int) -> int:
        return ((extra_bits - 1) << shift) | jump

    table = [leaf(syms[0], 1), leaf(syms[0], 1), leaf(syms[1], 2),
             link(1, 1),                            # '11' -> entry 3 + 1 + next bit
             leaf(syms[2], 1),                      # 4: '110' (the 1 bit read is used)
             link(1, 1),                            # 5: '111' -> 5 + 1 + next bit
             leaf(syms[3], 1), leaf(syms[4], 1)]    # 6, 7: '1110', '1111'
    codes = ["0", "10", "110", "1110", "1111"]
    picks = rng.integers(0, 5, size=37)
    stream = "".join(codes[k] for k in picks)
    packed = np.packbits(np.array([int(c) for c in stream], np.uint8))
    packed = np.concatenate([packed, np.zeros(-packed.size % 4 + 4, np.uint8)])
    header = _header(1, (1 << 4) | int(table32))  # initial table of 2 bits (log2 - 1 = 1)
    entries = np.array(table, np.uint32 if table32 else np.uint16)
    return packed, np.concatenate([header, entries.view(np.uint8)]), syms[picks].astype(dtype)


@pytest.mark.parametrize("table32,dtype", [(False, "int8"), (True, "int8"), (True, "int16")])
def test_huffman(table32: bool, dtype: str) -> None:
    encoded, ancillary, expected = _huffman_case(table32, dtype, 5)
    shape = expected.shape
    model = _model(encoded, ancillary, shape, dtype, {"scale": 0.1, "zero_point": 0})
    x = np.full(shape, np.iinfo(np.dtype(dtype)).min, dtype)
    decoded = check_op(model, [x])[0]
    assert np.array_equal(decoded, expected)  # the hand-made table means what it should


def test_a_bad_stream_still_sizes_and_fails_at_invoke() -> None:
    """TFLM's Prepare never decodes: a LUT whose indices point past its table sizes like the
    wheel (which then decodes garbage); tinyarena refuses to run it."""
    from tinyarena.errors import KernelError
    from tinyarena.interpreter import Interpreter
    from tinyarena.model import read_model
    from op_sweep import assert_arena_matches
    from tflm_oracle import tflm_probe

    indices = np.full(12, 7)  # 3-bit indices, but a table of 4 entries
    ancillary = np.concatenate([_header(0, 3, 4), np.arange(4, dtype=np.int8).view(np.uint8)])
    model = _model(_pack_bits(indices, 3), ancillary, (12,), "int8", {"scale": 0.1,
                                                                      "zero_point": 0})
    wheel = tflm_probe(model, [[np.zeros(12, np.int8)]], report=True)  # it reads past the table
    assert_arena_matches(model, wheel.allocations())
    interpreter = Interpreter(read_model(model))
    interpreter.allocate_tensors()
    with pytest.raises(KernelError, match="past the value table"):
        interpreter.invoke()
