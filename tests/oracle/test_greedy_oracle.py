"""The greedy planner against the live wheel: random float graphs, TFLM's recorded head.

Each model is built here with the wheel's generated schema classes: float32 ADD, MAXIMUM,
MINIMUM (with broadcasting, so tensor sizes vary) and RESHAPE (constant shape input), which
request no scratch buffers, so the head TFLM records is exactly its greedy plan's maximum.
The buffers handed to ``plan_greedy`` are derived independently from the graph with the
lifetime rules of facts sheet 2.3 (inputs born at 0, op i at step i+1, outputs live to the
end, untouched tensors [-1, -1]), sizes rounded up to 16, in tensor index order; some models
also pin tensors with an OfflineMemoryAllocation metadata entry (facts section 3).
"""

from __future__ import annotations

import random
import struct
from dataclasses import dataclass, field

import pytest

from tflm_oracle import tflm_allocations
from tinyarena._util import align_up
from tinyarena.planning import Buffer, plan_greedy

pytestmark = pytest.mark.oracle

_OPS = ("ADD", "MAXIMUM", "MINIMUM", "RESHAPE")


@dataclass
class _Graph:
    """A single-subgraph float model under construction (tensor 0.. in creation order)."""

    shapes: list[tuple[int, ...]] = field(default_factory=list)
    constant: list[bytes | None] = field(default_factory=list)
    ops: list[tuple[str, list[int], list[int]]] = field(default_factory=list)
    inputs: list[int] = field(default_factory=list)
    outputs: list[int] = field(default_factory=list)
    offline: dict[int, int] = field(default_factory=dict)

    def tensor(self, shape: tuple[int, ...], data: bytes | None = None) -> int:
        self.shapes.append(shape)
        self.constant.append(data)
        return len(self.shapes) - 1


def _broadcast(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[int, ...] | None:
    if len(a) != len(b) or any(x != y and 1 not in (x, y) for x, y in zip(a, b)):
        return None
    return tuple(max(x, y) for x, y in zip(a, b))


def _random_graph(seed: int) -> _Graph:
    rng = random.Random(seed)
    g = _Graph()
    dims = [rng.choice([1, 2, 3, 5, 7, 8]) for _ in range(3)]
    for _ in range(rng.randint(1, 3)):
        shape = (1,) + tuple(d if rng.random() < 0.5 else 1 for d in dims)
        g.inputs.append(g.tensor(shape))
    pool = list(g.inputs)
    for _ in range(rng.randint(2, 9)):
        op = rng.choice(_OPS)
        a = rng.choice(pool)
        if op == "RESHAPE":
            shape = g.shapes[a]
            new_shape = (1, 1, 1, shape[1] * shape[2] * shape[3])
            if rng.random() < 0.5:
                new_shape = (1, shape[3], shape[2], shape[1])
            target = g.tensor((4,), struct.pack("<4i", *new_shape))
            out = g.tensor(new_shape)
            g.ops.append((op, [a, target], [out]))
            pool.append(out)
            continue
        partners = [b for b in pool if _broadcast(g.shapes[a], g.shapes[b]) is not None]
        b = rng.choice(partners)
        out = g.tensor(_broadcast(g.shapes[a], g.shapes[b]))  # type: ignore[arg-type]
        g.ops.append((op, [a, b], [out]))
        pool.append(out)
    g.outputs = [g.ops[-1][2][0]]
    produced = [o for _, _, outs in g.ops[:-1] for o in outs]
    if produced and rng.random() < 0.4:
        g.outputs.append(rng.choice(produced))
    if rng.random() < 0.3:
        g.tensor((1, rng.randint(1, 40)))  # referenced by nothing: lifetime [-1, -1]
    return g


def _pin_some(g: _Graph, seed: int) -> None:
    rng = random.Random(seed + 1000)
    planned = [i for i, c in enumerate(g.constant) if c is None]
    for i in rng.sample(planned, k=min(len(planned), rng.randint(1, 3))):
        g.offline[i] = rng.choice([0, 3, 16, 100, 512, 1000, rng.randrange(0, 4000)])


def _model_bytes(g: _Graph) -> bytes:
    import flatbuffers
    from tflite_micro.tensorflow.lite.micro.python import schema_py_generated as fb

    model = fb.ModelT()
    model.version = 3
    codes = {name: getattr(fb.BuiltinOperator, name) for name in _OPS}
    used = sorted({op for op, _, _ in g.ops})
    model.operatorCodes = []
    for name in used:
        code = fb.OperatorCodeT()
        code.builtinCode = codes[name]
        code.deprecatedBuiltinCode = min(codes[name], 127)
        code.version = 1
        model.operatorCodes.append(code)
    model.buffers = [fb.BufferT()]
    sub = fb.SubGraphT()
    sub.tensors = []
    for i, (shape, data) in enumerate(zip(g.shapes, g.constant)):
        t = fb.TensorT()
        t.shape = list(shape)
        t.type = fb.TensorType.INT32 if data is not None else fb.TensorType.FLOAT32
        t.name = f"t{i}"
        t.buffer = 0
        if data is not None:
            buf = fb.BufferT()
            buf.data = list(data)
            model.buffers.append(buf)
            t.buffer = len(model.buffers) - 1
        sub.tensors.append(t)
    sub.operators = []
    for name, ins, outs in g.ops:
        op = fb.OperatorT()
        op.opcodeIndex = used.index(name)
        op.inputs, op.outputs = list(ins), list(outs)
        if name == "RESHAPE":
            op.builtinOptionsType = fb.BuiltinOptions.ReshapeOptions
            op.builtinOptions = fb.ReshapeOptionsT()
            op.builtinOptions.newShape = list(g.shapes[outs[0]])
        sub.operators.append(op)
    sub.inputs, sub.outputs = list(g.inputs), list(g.outputs)
    model.subgraphs = [sub]
    if g.offline:
        words = [1, 1, len(g.shapes)] + [g.offline.get(i, -1) for i in range(len(g.shapes))]
        buf = fb.BufferT()
        buf.data = list(struct.pack(f"<{len(words)}i", *words))
        model.buffers.append(buf)
        meta = fb.MetadataT()
        meta.name = "OfflineMemoryAllocation"
        meta.buffer = len(model.buffers) - 1
        model.metadata = [meta]
    builder = flatbuffers.Builder(1024)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def _buffers(g: _Graph) -> list[Buffer]:
    """Facts 2.3 (MarkAllocationLifetimes) for one subgraph, then facts 2.2's filter."""
    first = [-1] * len(g.shapes)
    last = [-1] * len(g.shapes)
    count = 0
    for i in g.inputs:
        if first[i] == -1:
            first[i] = count
        last[i] = count
    for _, ins, outs in g.ops:
        count += 1
        for o in outs:
            if first[o] == -1:
                first[o] = count
        for i in ins:
            last[i] = count
        for o in outs:
            last[o] = count
    for o in g.outputs:
        if first[o] == -1:
            first[o] = count
        last[o] = count
    return [
        Buffer(align_up(4 * _elements(shape), 16), first[i], last[i], g.offline.get(i))
        for i, shape in enumerate(g.shapes) if g.constant[i] is None
    ]


def _elements(shape: tuple[int, ...]) -> int:
    n = 1
    for d in shape:
        n *= d
    return n


@pytest.mark.parametrize("seed", range(20))
def test_greedy_head_matches_wheel(seed: int) -> None:
    g = _random_graph(seed)
    assert tflm_allocations(_model_bytes(g)).head == plan_greedy(_buffers(g)).head_size


@pytest.mark.parametrize("seed", range(20, 32))
def test_greedy_head_matches_wheel_with_offline_plan(seed: int) -> None:
    g = _random_graph(seed)
    _pin_some(g, seed)
    assert tflm_allocations(_model_bytes(g)).head == plan_greedy(_buffers(g)).head_size


def test_facts_sheet_pinned_chain() -> None:
    # Facts 3: a 100-float chain with tensor 0 pinned at 1000 and tensor 2 at 0: head 1400.
    g = _Graph()
    t0 = g.tensor((1, 100))
    t1 = g.tensor((1, 100))
    t2 = g.tensor((1, 100))
    g.inputs, g.outputs = [t0], [t2]
    g.ops = [("MAXIMUM", [t0, t0], [t1]), ("MINIMUM", [t1, t1], [t2])]
    g.offline = {t0: 1000, t2: 0}
    assert plan_greedy(_buffers(g)).head_size == 1400
    assert tflm_allocations(_model_bytes(g)).head == 1400
