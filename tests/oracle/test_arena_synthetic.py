"""Synthetic edge cases against the live wheel: offline plans, control flow, variables, unused
tensors, several inputs and outputs, resource variables, int16 softmax, odd arena ends.

Every expected number comes from the wheel in the same run (``tflm_allocations``); nothing is
pasted from an earlier run.
"""

from __future__ import annotations

import struct
from typing import Callable

import numpy as np
import pytest

from concurrent.futures import ThreadPoolExecutor

from tflm_oracle import tflm_allocations, tflm_fits
from tinyarena.arena import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

F32 = "float32"


def _offline(offsets: list[int], subgraphs: int = 1) -> bytes:
    """OfflineMemoryAllocation payload: version, subgraph count, offset count, offsets."""
    return struct.pack(f"<3I{len(offsets)}i", 1, subgraphs, len(offsets), *offsets)


def _add_chain(b, n: int = 3, size: int = 100) -> list[int]:
    """x -> ADD(c) -> ... ; returns all activation tensor indices (input first)."""
    x = b.add_input("x", (size,), F32)
    c = b.add_constant("c", np.ones(size, np.float32))
    tensors = [x]
    for i in range(n):
        y = b.add_tensor(f"y{i}", (size,), F32)
        b.add_operator("ADD", [tensors[-1], c], [y], fused_activation_function="NONE")
        tensors.append(y)
    b.mark_output(tensors[-1])
    return tensors


def offline_mixed() -> bytes:
    """Tensor 0 pinned at 1000, tensor 2 at 0, the rest online (facts 3: head 1400)."""
    b = ModelBuilder()
    _add_chain(b)
    # tensors: 0 x, 1 c, 2 y0, 3 y1, 4 y2
    b.add_metadata("OfflineMemoryAllocation", _offline([1000, -1, 0, -1, -1]))
    return b.build()


def offline_unaligned() -> bytes:
    """A 400-byte tensor at offset 3: offline offsets are used verbatim."""
    b = ModelBuilder()
    _add_chain(b)
    b.add_metadata("OfflineMemoryAllocation", _offline([3, -1, -1, -1, -1]))
    return b.build()


def variables() -> bytes:
    """Variable tensors: one in the tail, one pinned in the head by the offline plan."""
    b = ModelBuilder()
    x = b.add_input("x", (24,), F32)
    v1 = b.add_tensor("v1", (24,), F32, is_variable=True)
    v2 = b.add_tensor("v2", (24,), F32, is_variable=True)
    y = b.add_tensor("y", (24,), F32)
    z = b.add_tensor("z", (24,), F32)
    b.add_operator("ADD", [x, v1], [y])
    b.add_operator("ADD", [y, v2], [z])
    b.mark_output(z)
    b.add_metadata("OfflineMemoryAllocation", _offline([-1, -1, 512, -1, -1]))
    return b.build()


def unused_tensor() -> bytes:
    """An unreferenced 4000-byte float tensor is still planned (lifetime [-1, -1])."""
    b = ModelBuilder()
    _add_chain(b, n=2, size=16)
    b.add_tensor("unused", (1000,), F32)
    return b.build()


def several_io() -> bytes:
    """Three inputs (one int8 quantized per-tensor), two outputs, one tensor in and out."""
    b = ModelBuilder()
    a = b.add_input("a", (1, 8), "int8", scale=0.5, zero_point=-1)
    c = b.add_input("c", (1, 8), "int8", scale=0.25, zero_point=2)
    d = b.add_input("d", (1, 4), F32)
    s = b.add_tensor("s", (1, 8), "int8", scale=0.75, zero_point=0)
    b.add_operator("ADD", [a, c], [s])
    b.mark_output(s, d)
    return b.build()


def if_model() -> bytes:
    """IF with two branch subgraphs of different sizes."""
    b = ModelBuilder()
    cond = b.add_input("cond", (1,), "bool")
    x = b.add_input("x", (64,), F32)
    y = b.add_tensor("y", (64,), F32)
    then = b.add_subgraph("then")
    tx = then.add_input("tx", (64,), F32)
    tc = then.add_constant("tc", np.full(64, 2.0, np.float32))
    t1 = then.add_tensor("t1", (64,), F32)
    t2 = then.add_tensor("t2", (64,), F32)
    then.add_operator("ADD", [tx, tc], [t1])
    then.add_operator("ADD", [t1, tc], [t2])
    then.mark_output(t2)
    other = b.add_subgraph("else")
    ex = other.add_input("ex", (64,), F32)
    ec = other.add_constant("ec", np.full(64, -1.0, np.float32))
    e1 = other.add_tensor("e1", (64,), F32)
    other.add_operator("ADD", [ex, ec], [e1])
    other.mark_output(e1)
    b.add_operator("IF", [cond, x], [y], then_subgraph_index=1, else_subgraph_index=2)
    b.mark_output(y)
    return b.build()


def while_model() -> bytes:
    """WHILE counting up to a bound, with a float payload carried through the body."""
    b = ModelBuilder()
    i0 = b.add_input("i", (1,), "int32")
    p0 = b.add_input("p", (32,), F32)
    i1 = b.add_tensor("i_out", (1,), "int32")
    p1 = b.add_tensor("p_out", (32,), F32)
    cond = b.add_subgraph("cond")
    ci = cond.add_input("ci", (1,), "int32")
    cp = cond.add_input("cp", (32,), F32)
    lim = cond.add_constant("limit", np.array([3], np.int32))
    cr = cond.add_tensor("cr", (1,), "bool")
    cond.add_operator("LESS", [ci, lim], [cr])
    cond.mark_output(cr)
    del cp
    body = b.add_subgraph("body")
    bi = body.add_input("bi", (1,), "int32")
    bp = body.add_input("bp", (32,), F32)
    one = body.add_constant("one", np.array([1], np.int32))
    half = body.add_constant("half", np.full(32, 0.5, np.float32))
    bi2 = body.add_tensor("bi2", (1,), "int32")
    bp2 = body.add_tensor("bp2", (32,), F32)
    body.add_operator("ADD", [bi, one], [bi2])
    body.add_operator("ADD", [bp, half], [bp2])
    body.mark_output(bi2, bp2)
    b.add_operator("WHILE", [i0, p0], [i1, p1], cond_subgraph_index=1, body_subgraph_index=2)
    b.mark_output(i1, p1)
    return b.build()


def call_once_resources() -> bytes:
    """CALL_ONCE initialises a resource variable that the main graph reads and updates."""
    b = ModelBuilder()
    x = b.add_input("x", (16,), F32)
    h = b.add_tensor("h", (), "resource")
    r = b.add_tensor("r", (16,), F32)
    y = b.add_tensor("y", (16,), F32)
    init = b.add_subgraph("init")
    ih = init.add_tensor("ih", (), "resource")
    iv = init.add_constant("iv", np.zeros(16, np.float32))
    init.add_operator("VAR_HANDLE", [], [ih], container="", shared_name="state")
    init.add_operator("ASSIGN_VARIABLE", [ih, iv], [])
    b.add_operator("CALL_ONCE", [], [], init_subgraph_index=1)
    b.add_operator("VAR_HANDLE", [], [h], container="", shared_name="state")
    b.add_operator("READ_VARIABLE", [h], [r])
    b.add_operator("ADD", [x, r], [y])
    b.add_operator("ASSIGN_VARIABLE", [h, y], [])
    b.mark_output(y)
    return b.build()


def int16_softmax() -> bytes:
    """int16 SOFTMAX allocates its two lookup tables in Prepare."""
    b = ModelBuilder()
    x = b.add_input("x", (1, 10), "int16", scale=1 / 4096, zero_point=0)
    y = b.add_tensor("y", (1, 10), "int16", scale=1 / 32768, zero_point=0)
    b.add_operator("SOFTMAX", [x], [y], beta=1.0)
    b.mark_output(y)
    return b.build()


def per_channel_conv() -> bytes:
    """int8 CONV_2D with per-channel weights, then MEAN, PAD and TRANSPOSE."""
    rng = np.random.default_rng(0)
    b = ModelBuilder()
    x = b.add_input("x", (1, 6, 6, 3), "int8", scale=0.1, zero_point=-2)
    w = b.add_constant("w", rng.integers(-100, 100, (4, 3, 3, 3), dtype=np.int8),
                       scale=np.array([0.01, 0.02, 0.03, 0.04], np.float32),
                       zero_point=np.zeros(4, np.int64), quantized_dimension=0)
    bias = b.add_constant("b", np.zeros(4, np.int32),
                          scale=np.array([0.001, 0.002, 0.003, 0.004], np.float32),
                          zero_point=np.zeros(4, np.int64))
    c = b.add_tensor("c", (1, 6, 6, 4), "int8", scale=0.2, zero_point=1)
    b.add_operator("CONV_2D", [x, w, bias], [c], padding="SAME", stride_w=1, stride_h=1)
    pads = b.add_constant("pads", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
    p = b.add_tensor("p", (1, 8, 8, 4), "int8", scale=0.2, zero_point=1)
    b.add_operator("PAD", [c, pads], [p])
    perm = b.add_constant("perm", np.array([0, 3, 1, 2], np.int32))
    t = b.add_tensor("t", (1, 4, 8, 8), "int8", scale=0.2, zero_point=1)
    b.add_operator("TRANSPOSE", [p, perm], [t])
    axis = b.add_constant("axis", np.array([2, 3], np.int32))
    m = b.add_tensor("m", (1, 4), "int8", scale=0.2, zero_point=1)
    b.add_operator("MEAN", [t, axis], [m], keep_dims=False)
    b.mark_output(m)
    return b.build()


CASES: dict[str, Callable[[], bytes]] = {
    "offline_mixed": offline_mixed,
    "offline_unaligned": offline_unaligned,
    "variables": variables,
    "unused_tensor": unused_tensor,
    "several_io": several_io,
    "if_model": if_model,
    "while_model": while_model,
    "call_once_resources": call_once_resources,
    "int16_softmax": int16_softmax,
    "per_channel_conv": per_channel_conv,
}


def _ours(model: bytes, arena_size: int | None = None):
    return allocate_model(read_model(model), arena_size=arena_size)


@pytest.mark.parametrize("case", sorted(CASES))
def test_synthetic_matches_wheel(case: str) -> None:
    model = CASES[case]()
    wheel = tflm_allocations(model)
    ours = _ours(model)
    assert (ours.head, ours.tail, ours.total) == (wheel.head, wheel.tail, wheel.total)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert got == wheel.categories


@pytest.mark.parametrize("remainder", [4, 12, 7])
@pytest.mark.parametrize("case", ["variables", "call_once_resources", "per_channel_conv"])
def test_synthetic_odd_arena_end(case: str, remainder: int) -> None:
    """Arena sizes that are not a multiple of 16: the tail absorbs the end padding."""
    model = CASES[case]()
    size = 64 * 1024 * 1024 + remainder
    wheel = tflm_allocations(model, arena_size=size)
    ours = _ours(model, arena_size=size)
    assert (ours.head, ours.tail, ours.total) == (wheel.head, wheel.tail, wheel.total)
    got = {k: (v.used, v.requested, v.count) for k, v in ours.categories.items()}
    assert got == wheel.categories


# The one case where TFLM's real minimum is not a check TFLM makes: int16 SOFTMAX allocates its
# lookup tables in Prepare while its temp tensors are live, and TFLM does not check persistent
# allocations against temp ones (facts 1.5). min_arena is then the overlap-free size (safe), the
# size TFLM's own checks accept is lower, and the wheel's real threshold lies in between.
HAZARD = "int16_softmax"


def test_synthetic_min_arena() -> None:
    names = sorted(CASES)

    def probe(name: str) -> tuple[str, int, int, str, bool, bool, bool]:
        model = CASES[name]()
        layout = _ours(model)
        m, checked = layout.min_arena, layout.tflm_checked_min_arena
        return (name, m, checked, layout.min_arena_note, tflm_fits(model, m)[0],
                tflm_fits(model, m - 16)[0], tflm_fits(model, checked)[0])

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(probe, names))
    for name, m, checked, note, fits, fits_below, fits_checked in results:
        assert fits, (name, m)
        if name == HAZARD:
            # 3120 passes TFLM's checks on paper but fails, 3136 works by luck, 3152 is safe.
            assert checked < m and not fits_checked, (name, checked, m)
            assert "SOFTMAX" in note and f"{checked:,}" in note
        else:
            assert checked == m and not note and not fits_below, (name, m)
