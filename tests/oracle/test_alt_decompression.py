"""The alternate decompression memory of compressed models against the live wheel
(``alt_decompression_memory_size``, TFLM's ``MicroInterpreter::SetDecompressionMemory``).

Models: TFLM_DECODE operators built here (LUT encodings written from the format the decoder
reads, several outputs per DECODE and several DECODEs, odd byte counts so that the 16-byte
alignment of each output shows), and a model compressed by TFLM's own compression tool (the
wheel's ``tflite_micro...compression.compress``, which inserts one DECODE before each
consumer). For each: the memory ``size`` says the model needs, the arena with and without it
and the outputs all equal the wheel's; in the arena sized for it the wheel works with exactly
that memory and fails with 16 bytes less.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from typing import Any, Callable

import numpy as np
import pytest

from tflm_oracle import captured_stderr, model_random_inputs, parse_allocations
from tinyarena.arena import allocate_model
from tinyarena.arena.other_memory import alt_decompression
from tinyarena.builder import ModelBuilder
from tinyarena.errors import InterpreterError
from tinyarena.interpreter import Interpreter
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

ARENA = 64 * 1024


def _header(kind: int, byte5: int, byte6: int) -> np.ndarray:
    h = np.zeros(16, np.uint8)
    h[0], h[1], h[4], h[5], h[6] = kind, 1, 1, byte5, byte6
    return h


def _lut(b: ModelBuilder, name: str, count: int, rng: np.random.Generator) -> tuple[int, int]:
    """Encoded and ancillary constants of a 2-bit LUT (per tensor) over ``count`` int8s."""
    idx = rng.integers(0, 4, count)
    bits = ((idx[:, None] >> np.arange(1, -1, -1)) & 1).astype(np.uint8)
    enc = b.add_constant(f"{name}_enc", np.packbits(bits.reshape(-1)))
    table = rng.integers(-100, 100, 4).astype(np.int8).view(np.uint8)
    anc = b.add_constant(f"{name}_anc", np.concatenate([_header(0, 2, 4), table]))
    return enc, anc


def _decode_chain(sizes: tuple[tuple[int, ...], ...]) -> bytes:
    """x -> MAXIMUM with every decoded tensor in turn; ``sizes`` gives, per DECODE operator,
    the element counts of its outputs (each output reshaped to the input's width)."""
    rng = np.random.default_rng(sum(map(sum, sizes)))
    b = ModelBuilder()
    width = 20
    q = {"scale": 0.1, "zero_point": 0}
    x = b.add_input("x", (1, width), "int8", **q)
    y = x
    for k, counts in enumerate(sizes):
        pairs = [_lut(b, f"w{k}_{j}", n, rng) for j, n in enumerate(counts)]
        outs = [b.add_tensor(f"d{k}_{j}", (1, n), "int8", **q) for j, n in enumerate(counts)]
        b.add_operator("TFLM_DECODE", [t for p in pairs for t in p], outs)
        for j, (out, n) in enumerate(zip(outs, counts)):
            cut = b.add_tensor(f"c{k}_{j}", (1, width), "int8", **q)
            b.add_operator("STRIDED_SLICE", [out, b.add_constant(f"b{k}_{j}", np.array(
                [0, 0], np.int32)), b.add_constant(f"e{k}_{j}", np.array([1, width], np.int32)),
                b.add_constant(f"s{k}_{j}", np.array([1, 1], np.int32))], [cut])
            z = b.add_tensor(f"z{k}_{j}", (1, width), "int8", **q)
            b.add_operator("MAXIMUM", [cut, y], [z])
            y = z
    b.mark_output(y)
    return b.build()


def _compressed_by_tflm() -> bytes:
    """Two FULLY_CONNECTED layers whose weights take four values per channel, compressed
    (2-bit LUT per channel) by the wheel's compression tool."""
    compression = pytest.importorskip(
        "tflite_micro.tensorflow.lite.micro.compression",
        reason="the wheel's compression tool is not importable")
    from tflite_micro.tensorflow.lite.micro.compression import spec

    rng = np.random.default_rng(0)
    b = ModelBuilder()
    x = b.add_input("x", (1, 24), "int8", scale=0.05, zero_point=0)
    w1 = b.add_constant("w1", rng.choice(np.array([-60, -7, 9, 55], np.int8), size=(40, 24)),
                        scale=np.full(40, 0.01, np.float32), zero_point=np.zeros(40, np.int64),
                        quantized_dimension=0)
    b1 = b.add_constant("b1", rng.integers(-100, 100, 40).astype(np.int32),
                        scale=np.full(40, 0.0005, np.float32),
                        zero_point=np.zeros(40, np.int64))
    h = b.add_tensor("h", (1, 40), "int8", scale=0.1, zero_point=-3)
    b.add_operator("FULLY_CONNECTED", [x, w1, b1], [h], fused_activation_function="RELU")
    w2 = b.add_constant("w2", rng.choice(np.array([-20, 3, 30, 90], np.int8), size=(10, 37)),
                        scale=np.full(10, 0.02, np.float32), zero_point=np.zeros(10, np.int64),
                        quantized_dimension=0)
    h2 = b.add_tensor("h2", (1, 37), "int8", scale=0.1, zero_point=-3)
    b.add_operator("SLICE", [h, b.add_constant("begin", np.array([0, 0], np.int32)),
                             b.add_constant("size", np.array([1, 37], np.int32))], [h2])
    y = b.add_tensor("y", (1, 10), "int8", scale=0.2, zero_point=1)
    b.add_operator("FULLY_CONNECTED", [h2, w2, None], [y])
    b.mark_output(y)
    model = b.build()
    names = {t.name: t.index for t in read_model(model).subgraphs[0].tensors}
    specs = (compression.SpecBuilder()
             .add_tensor(subgraph=0, tensor=names["w1"])
             .with_lut(index_bitwidth=2, mode=spec.PerChannel(axis=0))
             .add_tensor(subgraph=0, tensor=names["w2"])
             .with_lut(index_bitwidth=2, mode=spec.PerChannel(axis=0))
             .build())
    return bytes(compression.compress(model, specs))


CASES: dict[str, Callable[[], bytes]] = {
    "one_decode_three_outputs": lambda: _decode_chain(((20, 37, 53),)),
    "two_decodes": lambda: _decode_chain(((20, 33), (81,))),
    "decodes_growing": lambda: _decode_chain(((24,), (20, 20, 21), (100,))),
    "tflm_compression_tool": _compressed_by_tflm,
}


def _wheel(model: bytes, alt: int, inputs: list[np.ndarray] | None = None
           ) -> tuple[Any, list[np.ndarray]]:
    """The wheel's recording report (after one invoke) and outputs, with ``alt`` bytes of
    alternate decompression memory."""
    from tflite_micro.python.tflite_micro import runtime as rt

    with captured_stderr() as err:
        ip = rt.Interpreter.from_bytes(
            model, arena_size=ARENA, intrepreter_config=rt.InterpreterConfig.kAllocationRecording,
            alt_decompression_memory_size=alt)
        for i, x in enumerate(inputs or []):
            ip.set_input(x, i)
        ip.invoke()
        ip.print_allocations()
        outputs = [ip.get_output(0)]
    return parse_allocations(err[0]), outputs


_PROBE = r"""
import sys, numpy as np
from tflite_micro.python.tflite_micro import runtime
model = open(sys.argv[1], 'rb').read()
try:
    ip = runtime.Interpreter.from_bytes(model, arena_size=int(sys.argv[2]),
                                        alt_decompression_memory_size=int(sys.argv[3]))
    d = ip.get_input_details(0)
    ip.set_input(np.zeros(d['shape'], dtype=d['dtype']), 0)
    ip.invoke()
except Exception as exc:
    print('FAIL', exc)
    sys.exit(3)
print('OK')
"""


def _wheel_fits(model: bytes, arena: int, alt: int) -> bool:
    """Does the wheel allocate and invoke with these sizes? In a child process: an arena too
    small for TFLM's own objects crashes it."""
    with tempfile.NamedTemporaryFile(suffix=".tflite", delete=False) as f:
        f.write(model)
        path = f.name
    try:
        proc = subprocess.run([sys.executable, "-c", _PROBE, path, str(arena), str(alt)],
                              capture_output=True, text=True, timeout=120)
    finally:
        os.unlink(path)
    return proc.returncode == 0 and "OK" in proc.stdout


@pytest.mark.parametrize("case", sorted(CASES))
def test_arena_with_and_without_alternate_memory_matches_the_wheel(case: str) -> None:
    model = CASES[case]()
    need = alt_decompression(read_model(model), target="host-x64")
    assert need is not None and need.nbytes > 0 and need.with_memory is not None
    for alt in sorted({0, 16, need.nbytes - 16, need.nbytes - 1, need.nbytes,
                       need.nbytes + 100}):
        if alt < 0:
            continue
        ours = allocate_model(model, alt_decompression_memory=alt)
        theirs, _ = _wheel(model, alt)
        assert (ours.head, ours.tail, ours.total) == (theirs.head, theirs.tail, theirs.total), alt
        assert {k: (c.used, c.requested, c.count) for k, c in ours.categories.items()} == \
            theirs.categories, alt
    exact = allocate_model(model, alt_decompression_memory=need.nbytes)
    assert (exact.head, exact.tail, exact.total, exact.min_arena) == (
        need.with_memory.head, need.with_memory.tail, need.with_memory.total,
        need.with_memory.min_arena)
    assert exact.head < allocate_model(model).head  # the decoded tensors left the arena


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_minimum_alternate_memory_is_exact(case: str) -> None:
    """In the arena sized for it, the wheel works with exactly the memory ``size`` reports and
    fails with 16 bytes less (an output then falls back into the full arena)."""
    model = CASES[case]()
    need = alt_decompression(read_model(model), target="host-x64")
    assert need is not None and need.with_memory is not None
    arena = need.with_memory.min_arena
    assert _wheel_fits(model, arena, need.nbytes)
    assert not _wheel_fits(model, arena, need.nbytes - 16)


@pytest.mark.parametrize("case", sorted(CASES))
def test_outputs_identical_with_the_alternate_memory(case: str) -> None:
    model = CASES[case]()
    need = alt_decompression(read_model(model), target="host-x64")
    assert need is not None
    inputs = model_random_inputs(model, seed=3)
    for alt in (need.nbytes - 16, need.nbytes):
        ip = Interpreter.from_bytes(model, alt_decompression_memory_size=alt)
        for i, x in enumerate(inputs):
            ip.set_input(x, i)
        ip.invoke()
        _, theirs = _wheel(model, alt, inputs)
        assert np.array_equal(ip.get_output(0), theirs[0])
        assert ip.arena_used_bytes() == allocate_model(
            model, alt_decompression_memory=alt).total


def test_bad_alternate_memory_sizes_are_refused() -> None:
    model = CASES["two_decodes"]()
    for bad in (-16, 1.5, True, "64"):
        with pytest.raises(InterpreterError, match="alt_decompression_memory_size"):
            Interpreter(model, alt_decompression_memory_size=bad)  # type: ignore[arg-type]


def test_a_model_without_decode_needs_none() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "int8", scale=0.1, zero_point=0)
    y = b.add_tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    b.add_operator("RELU", [x], [y])
    b.mark_output(y)
    assert alt_decompression(read_model(b.build()), target="host-x64") is None


def test_size_and_run_give_and_take_the_alternate_memory(tmp_path: Any, capsys: Any) -> None:
    """`size --json` reports the wheel-checked need and the arena with it; `run` accepts it."""
    import json

    from tinyarena.cli import main

    model = CASES["two_decodes"]()
    path = tmp_path / "compressed.tflite"
    path.write_bytes(model)
    assert main(["size", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    theirs, _ = _wheel(model, data["alt_decompression_memory"])
    assert data["arena_with_alt_decompression_memory"]["total"] == theirs.total
    assert data["total"] == _wheel(model, 0)[0].total
    assert main(["run", str(path), "--json", "--alt-decompression-memory",
                 str(data["alt_decompression_memory"])]) == 0
    ran = json.loads(capsys.readouterr().out)
    assert ran["allocation"]["total"] == theirs.total  # the decoded tensors left the arena
