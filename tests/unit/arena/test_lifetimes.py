"""Lifetimes, offline offsets and planned records (facts 2.2, 2.3, 3), on built models."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from tinyarena.arena.lifetimes import ScratchRequest, allocation_records, planned_records
from tinyarena.builder import ModelBuilder
from tinyarena.errors import ModelError
from tinyarena.model import read_model
from tinyarena.model.metadata import offline_offsets


def _chain(extra_unused: bool = False) -> ModelBuilder:
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    c = b.add_constant("c", np.ones(4, np.float32))
    y = b.add_tensor("y", (4,), "float32")
    z = b.add_tensor("z", (4,), "float32")
    b.add_operator("ADD", [x, c], [y])
    b.add_operator("ADD", [y, c], [z])
    b.mark_output(z)
    if extra_unused:
        b.add_tensor("unused", (1000,), "float32")
    return b


def test_chain_lifetimes_and_constants() -> None:
    model = read_model(_chain(extra_unused=True).build())
    records = allocation_records(model)
    spans = [(r.index, r.first, r.last, r.needs_allocating) for r in records]
    # x born at 0, read by op 0 (scope 1); c constant; y [1, 2]; z [2, 2]; unused [-1, -1].
    assert spans == [(0, 0, 1, True), (1, -1, 2, False), (2, 1, 2, True), (3, 2, 2, True),
                     (4, -1, -1, True)]
    assert [r.planned_size for r in planned_records(records)] == [16, 16, 16, 4000]


def test_scratch_lifetime_is_its_node() -> None:
    model = read_model(_chain().build())
    records = allocation_records(model, [ScratchRequest(10, 1, 0), ScratchRequest(0, 0, 0)])
    scratch = [(r.kind, r.index, r.nbytes, r.first, r.last) for r in records[-2:]]
    assert scratch == [("scratch", 0, 10, 2, 2), ("scratch", 1, 0, 1, 1)]


def _offline(values: list[int]) -> bytes:
    return struct.pack(f"<3I{len(values)}i", 1, 1, len(values), *values)


def test_offline_offsets_read_as_tflm_reads_them() -> None:
    b = _chain()
    b.add_metadata("OfflineMemoryAllocation", _offline([1000, -1, 0, -1]))
    model = read_model(b.build())
    assert offline_offsets(model) == (1000, -1, 0, -1)
    buffers = [r.to_buffer() for r in planned_records(allocation_records(
        model, offsets=offline_offsets(model)))]
    assert [b.offset for b in buffers] == [1000, 0, None]


def test_offline_count_mismatch_and_name_rules() -> None:
    b = _chain()
    b.add_metadata("OfflineMemoryAllocation", _offline([1, 2, 3]))
    with pytest.raises(ModelError, match=r"offsets \(3\) in metadata not equal nbr tensors \(4\)"):
        offline_offsets(read_model(b.build()))
    b2 = _chain()
    b2.add_metadata("OfflineMemoryAllocationX", _offline([1, 2, 3]))
    assert offline_offsets(read_model(b2.build())) is None


def test_if_subgraph_lifetimes() -> None:
    """IF at scope 1: then-subgraph entered at 2 (its op at 3), else at 4 (its op at 5); the
    IF's inputs live until 5."""
    b = ModelBuilder()
    cond = b.add_input("cond", (1,), "bool")
    x = b.add_input("x", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    for name in ("then", "else"):
        sg = b.add_subgraph(name)
        i = sg.add_input("i", (4,), "float32")
        c = sg.add_constant("c", np.ones(4, np.float32))
        o = sg.add_tensor("o", (4,), "float32")
        sg.add_operator("ADD", [i, c], [o])
        sg.mark_output(o)
    b.add_operator("IF", [cond, x], [y], then_subgraph_index=1, else_subgraph_index=2)
    b.mark_output(y)
    records = allocation_records(read_model(b.build()))
    spans = {(r.subgraph, r.index): (r.first, r.last) for r in records}
    assert spans[(0, 0)] == (0, 5) and spans[(0, 1)] == (0, 5)
    assert spans[(0, 2)] == (1, 5)
    assert spans[(1, 0)] == (2, 3) and spans[(1, 2)] == (3, 3)
    assert spans[(2, 0)] == (4, 5) and spans[(2, 2)] == (5, 5)
