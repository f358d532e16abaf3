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




# -- the kernel sets a tinyarena plan is safe for --------------------------------------------

PLAN_SAFETY_NAME = "tinyarena.plan_safety"
"""Metadata entry ``tinyarena optimize`` writes beside OfflineMemoryAllocation: which kernel sets
the pinned plan is proven safe for. TFLM reads metadata only by the names it knows, so the
entry costs the device nothing; tinyarena's ``size``/``run``/``plan`` read it to warn."""


class PlanSafety(NamedTuple):
    """A decoded plan-safety entry. ``safe_for`` holds kernel-set keys (``"reference"``,
    ``"cmsis-nn:dsp"``, ...) or ``("any",)`` when the plan uses no kernel-specific rule;
    ``planned_for`` is the key the plan was made for and ``target`` the target named (if any)."""

    safe_for: tuple[str, ...]
    planned_for: str
    target: str | None
    rules: tuple[str, ...]


def encode_plan_safety(safety: PlanSafety) -> bytes:
    """The entry's bytes: UTF-8 JSON, so a user can read it with any flatbuffer tool."""
    import json

    return json.dumps({"format": 1, "safe_for": list(safety.safe_for),
                       "planned_for": safety.planned_for, "target": safety.target,
                       "rules": list(safety.rules)}, sort_keys=True).encode()


def plan_safety(model: Model) -> PlanSafety | None:
    """The model's plan-safety entry (the last one), or None when it has none; ModelError when
    it is not the JSON ``encode_plan_safety`` writes."""
    import json

    found = None
    for name, buffer in model.metadata:
        if name != PLAN_SAFETY_NAME:
            continue
        if not 0 <= buffer < len(model.buffers):
            raise ModelError(f"{PLAN_SAFETY_NAME} metadata points at buffer {buffer}, which does "
                             "not exist")
        found = buffer
    if found is None:
        return None
    try:
        data = json.loads(bytes(model.buffers[found]).decode())
        safe_for = tuple(str(s) for s in data["safe_for"])
        rules = tuple(str(r) for r in data.get("rules", ()))
        target = data.get("target")
        return PlanSafety(safe_for, str(data["planned_for"]),
                          None if target is None else str(target), rules)
    except (ValueError, KeyError, TypeError, UnicodeDecodeError) as exc:
        raise ModelError(f"{PLAN_SAFETY_NAME} metadata is not the JSON tinyarena writes "
                         f"({type(exc).__name__}: {exc}); re-run tinyarena optimize on the "
                         "original model") from None


__all__ = [
    "OFFLINE_PLAN_NAME", "OfflinePlan", "PLAN_SAFETY_NAME", "PlanSafety", "decode_offline_plan",
    "encode_offline_plan", "encode_plan_safety", "offline_offsets", "offline_plan",
    "plan_safety", "without_offline_plan",
]
