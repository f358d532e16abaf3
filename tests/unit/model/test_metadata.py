"""OfflineMemoryAllocation metadata: bytes checked against struct-packed words (the format in
TFLM's memory_management.md), models written with the wheel's generated schema writer."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

import pytest
from tflm_oracle import shared_model_bytes

from tinyarena.errors import BuildError, ModelError
from tinyarena.model import read_model
from tinyarena.model.metadata import (
    OfflinePlan,
    decode_offline_plan,
    encode_offline_plan,
    offline_offsets,
    offline_plan,
)


def words(*values: int) -> bytes:
    return struct.pack(f"<{len(values)}i", *values)


def test_encode_matches_the_documented_layout() -> None:
    assert encode_offline_plan([0, -1, 64], 1) == words(1, 1, 3, 0, -1, 64)
    assert encode_offline_plan((), 2, version=7) == words(7, 2, 0)


def test_decode_roundtrip() -> None:
    data = words(1, 2, 4, 16, -1, 0, 1024)
    assert decode_offline_plan(data) == OfflinePlan(1, 2, (16, -1, 0, 1024))
    assert decode_offline_plan(memoryview(data + b"\0\0")).offsets == (16, -1, 0, 1024)


@pytest.mark.parametrize("data, message", [
    (b"", "fewer than the 12-byte header"),
    (words(1, 1), "fewer than the 12-byte header"),
    (words(1, 1, 3, 0, 0), "announces 3 offsets"),
    (words(1, 1, -1), "announces -1 offsets"),
    (words(1, 1, 2, 0, -5), "offset -5"),
])
def test_malformed_buffers_raise(data: bytes, message: str) -> None:
    with pytest.raises(ModelError, match=message):
        decode_offline_plan(data)


def test_encode_rejects_bad_arguments() -> None:
    with pytest.raises(BuildError):
        encode_offline_plan([-2], 1)
    with pytest.raises(BuildError):
        encode_offline_plan([2**31], 1)
    with pytest.raises(BuildError):
        encode_offline_plan([0], 0)


def add_metadata(model_t: Any, schema_fb: Any, name: str, data: bytes) -> None:
    buffer = schema_fb.BufferT()
    buffer.data = list(data)
    model_t.buffers.append(buffer)
    entry = schema_fb.MetadataT()
    entry.name, entry.buffer = name, len(model_t.buffers) - 1
    model_t.metadata = (model_t.metadata or []) + [entry]


def test_plan_in_a_model(tiny_model_t: Any, pack: Any, schema_fb: Any) -> None:
    add_metadata(tiny_model_t, schema_fb, "OfflineMemoryAllocation", words(1, 1, 3, 0, -1, 16))
    model = read_model(pack(tiny_model_t))
    assert offline_offsets(model) == (0, -1, 16)
    assert offline_plan(model) == OfflinePlan(1, 1, (0, -1, 16))
    assert model.metadata_bytes("OfflineMemoryAllocation") == words(1, 1, 3, 0, -1, 16)


def test_last_entry_wins_and_names_must_match_exactly(tiny_model_t: Any, pack: Any,
                                                      schema_fb: Any) -> None:
    """TFLM's GetOfflinePlannedOffsets keeps scanning: the last exact match is used."""
    add_metadata(tiny_model_t, schema_fb, "OfflineMemoryAllocation", words(1, 1, 3, 0, 0, 0))
    add_metadata(tiny_model_t, schema_fb, "OfflineMemoryAllocation", words(1, 1, 3, 8, 8, 8))
    add_metadata(tiny_model_t, schema_fb, "OfflineMemoryAllocationX", words(1, 1, 1, 4))
    assert offline_offsets(read_model(pack(tiny_model_t))) == (8, 8, 8)


def test_count_must_equal_the_tensor_count(tiny_model_t: Any, pack: Any, schema_fb: Any) -> None:
    add_metadata(tiny_model_t, schema_fb, "OfflineMemoryAllocation", words(1, 1, 2, 0, 16))
    with pytest.raises(ModelError, match="2 offsets but the model has 3 tensors"):
        offline_offsets(read_model(pack(tiny_model_t)))


def test_shared_models_have_no_plan(shared_model_name: str, shared_models: Path) -> None:
    assert offline_offsets(read_model(shared_model_bytes(shared_model_name))) is None
