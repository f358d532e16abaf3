"""allocate_model on the facts sheet's worked examples (section 8) and its error paths."""

from __future__ import annotations

import pytest

from tinyarena.arena import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.errors import ArenaTooSmallError, PlanError, UnsupportedOpError
from tinyarena.model import read_model

from small_models import hello_world_like


@pytest.fixture(scope="module")
def hello():
    return read_model(hello_world_like(1))


def test_wheel_worked_example(hello) -> None:
    """Facts 8, wheel: tail 1408, head 128; placement order id2, id1, id3, id0 gets offsets
    0, 64, 64, 0, i.e. 0, 64, 0, 64 in addition order."""
    layout = allocate_model(hello)
    assert (layout.head, layout.tail, layout.total) == (128, 1408, 1536)
    steps = [a.used for a in layout.tail_allocations]
    assert sum(steps[:3]) == 448
    assert [b.size for b in layout.buffers] == [16, 64, 64, 16]
    assert [(b.first, b.last) for b in layout.buffers] == [(0, 1), (1, 2), (2, 3), (3, 3)]
    assert [b.offset for b in layout.buffers] == [0, 64, 0, 64]
    assert layout.min_arena == 1936  # facts 1.4/1.5: hello_world_float needs 1936


def test_arm32_production_worked_example(hello) -> None:
    """Facts 8: arm32 production path, head 128, tail 648, arena_used_bytes 776."""
    layout = allocate_model(hello, target="arm32")
    assert (layout.head, layout.tail, layout.total) == (128, 648, 776)
    used = [a.used for a in layout.tail_allocations]
    assert used == [36, 44, 36, 8, 8, 120, 96, 16, 16, 16, 52, 48, 48, 16, 40, 8, 40]


def test_short_enums_shrink_tensor_and_fc_params(hello) -> None:
    """With -fshort-enums TfLiteTensor is 32 bytes and the FC params 5/1 (facts 5.1, 8)."""
    full = allocate_model(hello, target="arm32")
    short = allocate_model(hello, target="arm32-short-enums")
    assert short.head == full.head
    labels = [a.label.split(" (")[0] for a in short.tail_allocations]
    requested = dict(zip(labels, (a.requested for a in short.tail_allocations)))
    assert requested["TfLiteTensor"] == 32
    assert requested["TfLiteFullyConnectedParams"] == 5


def test_absolute_offsets_refer_to_the_given_arena(hello) -> None:
    layout = allocate_model(hello, arena_size=4096)
    assert layout.arena_size == 4096
    assert layout.tensor_offsets[(0, 0)] == 0  # the input: first planned buffer, offset 0
    assert layout.tail_allocations[0].address == 4096 - 104
    small = allocate_model(hello)
    assert small.arena_size == small.min_arena


def test_too_small_raises_with_needed_and_missing(hello) -> None:
    with pytest.raises(ArenaTooSmallError) as info:
        allocate_model(hello, arena_size=1920)
    assert (info.value.needed, info.value.missing) == (1936, 16)
    assert "Too many buffers (max is 3)" in str(info.value)


def test_linear_planner_uses_the_plain_allocator(hello) -> None:
    layout = allocate_model(hello, planner="linear")
    assert layout.head == 16 + 64 + 64 + 16
    assert layout.tail_allocations[1].requested == 8216
    with pytest.raises(PlanError):
        allocate_model(hello, planner="best")


def test_unknown_op_is_unsupported() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator("NOT_A_BUILTIN_OP", [x], [y], custom_options=b"")
    b.mark_output(y)
    with pytest.raises(UnsupportedOpError):
        allocate_model(read_model(b.build()))
