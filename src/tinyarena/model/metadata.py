"""TFLM's ``OfflineMemoryAllocation`` metadata: an offline arena plan stored in the model.

Format (TFLM ``micro/docs/memory_management.md``, read by
``AllocationInfoBuilder::GetOfflinePlannedOffsets``): the metadata entry named exactly
"OfflineMemoryAllocation" points at a buffer of little-endian int32 words

    [version, number of subgraphs, n, offset_0, ..., offset_{n-1}]

with one offset per tensor of every subgraph, in subgraph then tensor order: a byte offset from
the start of the arena's head section, or -1 for "plan this tensor online". TFLM takes the last
entry with that name and fails allocation when n differs from the model's tensor count; both are
mirrored here.
"""

from __future__ import annotations

import dataclasses
from typing import NamedTuple, Sequence

import numpy as np

from tinyarena.errors import BuildError, ModelError
from tinyarena.model.types import Model

OFFLINE_PLAN_NAME = "OfflineMemoryAllocation"
_HEADER_WORDS = 3


class OfflinePlan(NamedTuple):
    """A decoded OfflineMemoryAllocation buffer."""

    version: int
    subgraph_count: int
    offsets: tuple[int, ...]  # -1 = planned online


def decode_offline_plan(data: bytes | memoryview) -> OfflinePlan:
    """Decode the int32 words of an OfflineMemoryAllocation buffer; ModelError when malformed."""
    size = len(data)
    if size < 4 * _HEADER_WORDS:
        raise ModelError(f"OfflineMemoryAllocation metadata holds {size} bytes, fewer than the "
                         "12-byte header (version, subgraph count, offset count)")
    version, subgraphs, count = (int(v) for v in np.frombuffer(data, "<i4", _HEADER_WORDS))
    if count < 0 or size < 4 * (_HEADER_WORDS + count):
        raise ModelError(f"OfflineMemoryAllocation metadata announces {count} offsets but its "
                         f"{size} bytes hold only {max(size // 4 - _HEADER_WORDS, 0)}")
    offsets = np.frombuffer(data, "<i4", count, 4 * _HEADER_WORDS)
    if (offsets < -1).any():
        bad = int(offsets[np.argmax(offsets < -1)])
        raise ModelError(f"OfflineMemoryAllocation metadata has offset {bad}; offsets are byte "
                         "positions >= 0, or -1 for online planning")
    return OfflinePlan(version, subgraphs, tuple(offsets.tolist()))


def offline_plan(model: Model) -> OfflinePlan | None:
    """The model's offline plan, or None, read as GetOfflinePlannedOffsets reads it: every entry
    named exactly OfflineMemoryAllocation is checked (TFLM fails on any whose offset count is
    not the model's tensor count) and the last one is used."""
    plan = None
    for name, buffer in model.metadata:
        if name != OFFLINE_PLAN_NAME:
            continue
        if not 0 <= buffer < len(model.buffers):
            raise ModelError(f"OfflineMemoryAllocation metadata points at buffer {buffer}, "
                             "which does not exist")
        plan = decode_offline_plan(model.buffers[buffer])
        tensors = model.tensor_count
        if len(plan.offsets) != tensors:
            raise ModelError(
                f"OfflineMemoryAllocation metadata has {len(plan.offsets)} offsets but the model "
                f"has {tensors} tensors (all subgraphs); TFLM rejects such a model (\"Nbr of "
                f"offline buffer offsets ({len(plan.offsets)}) in metadata not equal nbr tensors "
                f"({tensors})\"): regenerate the plan")
    return plan


def without_offline_plan(model: Model) -> Model:
    """``model`` (in memory) with its OfflineMemoryAllocation entries dropped."""
    return dataclasses.replace(
        model, metadata=tuple(m for m in model.metadata if m[0] != OFFLINE_PLAN_NAME))


def offline_offsets(model: Model) -> tuple[int, ...] | None:
    """One offset per tensor (all subgraphs in order, -1 = online), or None without a plan."""
    plan = offline_plan(model)
    return None if plan is None else plan.offsets


def encode_offline_plan(offsets: Sequence[int], n_subgraphs: int, version: int = 1) -> bytes:
    """The OfflineMemoryAllocation buffer bytes for ``offsets`` (one per tensor, -1 = online).

    Raises BuildError for offsets outside -1..2**31-1 or fewer than one subgraph.
    """
    values = [int(v) for v in offsets]
    if any(v < -1 or v > 0x7FFFFFFF for v in values):
        raise BuildError("offline plan offsets must be -1 or byte offsets in 0..2**31-1")
    if n_subgraphs < 1:
        raise BuildError(f"an offline plan covers at least one subgraph, not {n_subgraphs}")
    if not -0x80000000 <= version <= 0x7FFFFFFF:
        raise BuildError(f"offline plan version {version} does not fit an int32")
    words = np.array([version, n_subgraphs, len(values), *values], dtype="<i4")
    return words.tobytes()


__all__ = [
    "OFFLINE_PLAN_NAME", "OfflinePlan", "decode_offline_plan", "encode_offline_plan",
    "offline_offsets", "offline_plan", "without_offline_plan",
]
