"""ArenaLayout: everything TFLM's AllocateTensors decided, as plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

from tinyarena.arena.recording import CategoryUsage


@dataclass(frozen=True)
class PlannedBuffer:
    """One buffer the memory planner placed in the head (offset relative to the head start)."""

    kind: str  # "tensor" or "scratch"
    subgraph: int
    index: int  # tensor index within its subgraph, or scratch request index
    size: int  # 16-rounded, as the planner saw it
    offset: int
    first: int
    last: int
    nbytes: int = 0  # unrounded size
    offline: bool = False  # placed by the OfflineMemoryAllocation metadata

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "subgraph": self.subgraph, "index": self.index,
                "size": self.size, "offset": self.offset, "first": self.first,
                "last": self.last}


@dataclass(frozen=True)
class TailAllocation:
    """One persistent (tail) allocation, in allocation order: what, how big, where."""

    label: str
    requested: int
    alignment: int
    used: int  # bytes the tail grew by, padding included
    address: int  # absolute byte offset in the arena
    category: str | None  # recording category, None when TFLM does not itemise it
    # the node it was made for, (subgraph, operator index), None for model-wide objects; and
    # why: "op data" (init), "persistent buffer" (prepare), "builtin data", "variable"
    op: tuple[int, int] | None = None
    role: str = ""

    def to_dict(self) -> dict[str, Any]:
        return {"label": self.label, "requested": self.requested, "alignment": self.alignment,
                "used": self.used, "address": self.address, "category": self.category,
                "op": None if self.op is None else list(self.op), "role": self.role}


@dataclass(frozen=True)
class VariablesArena:
    """The second arena that holds ``MicroResourceVariables`` when a firmware creates it over
    its own MicroAllocator (ESPHome's micro_wake_word): ``used`` bytes taken from it, ``min``
    the smallest 16-byte multiple that holds them, for a table of ``max_resource_variables``
    entries, in a 16-byte aligned buffer (``min_4_aligned``: in one only 4-byte aligned, as a
    heap block may be). ``allocations`` in order, addresses in an arena of ``min`` bytes."""

    max_resource_variables: int
    used: int
    min: int
    allocations: tuple[TailAllocation, ...] = field(repr=False)
    min_4_aligned: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {"used": self.used, "min": self.min,
                "max_resource_variables": self.max_resource_variables,
                "min_4_aligned": self.min_4_aligned,
                "note": f"min assumes a 16-byte aligned buffer; one only 4-byte aligned (a "
                        f"heap block) needs {self.min_4_aligned}",
                "allocations": [t.to_dict() for t in self.allocations]}


@dataclass(frozen=True)
class ArenaLayout:
    """The arena after TFLM's AllocateTensors for one model, target and arena size.

    ``head`` is the planned non-persistent section, ``tail`` the persistent section and
    ``total`` their sum (``arena_used_bytes()``). ``min_arena`` is the number to declare: the
    smallest arena (a multiple of 16) in which AllocateTensors succeeds, transient peaks
    included, AND every kernel's persistent Prepare allocations stay clear of its live temp
    tensors (TFLM does not check that, facts 1.5; below it TFLM works or crashes by luck).
    ``tflm_checked_min_arena`` is the smallest arena TFLM's own checks accept (equal to
    ``min_arena`` unless such an overlap exists; ``min_arena_note`` then says which allocation).
    ``overlap_free_arena`` equals ``min_arena`` (kept for callers). ``temp_peak`` is the largest
    non-persistent use at any moment (head plus temp, the planner's working area counted as
    the 40 bytes per buffer it needs).
    """

    target: str
    allocator: str  # "recording" or "production"
    planner: str
    arena_size: int  # the arena the absolute offsets refer to
    head: int
    tail: int
    total: int
    min_arena: int
    overlap_free_arena: int
    temp_peak: int
    lower_bound: int  # largest sum of planned sizes live at one time step
    categories: Mapping[str, CategoryUsage]
    buffers: tuple[PlannedBuffer, ...]
    tensor_offsets: Mapping[tuple[int, int], int]
    scratch_offsets: tuple[int, ...]
    op_data: Mapping[tuple[int, int], Any] = field(repr=False)
    workspaces: tuple[tuple[tuple[int, ...], Any], ...] = field(repr=False)
    tail_allocations: tuple[TailAllocation, ...] = field(repr=False)
    resource_offsets: tuple[int, ...] = ()
    # tensors a kernel pointed at its own OpData during Prepare (VAR_HANDLE), not planned:
    # (subgraph, tensor) -> absolute offset of that OpData in the tail
    bound_tensor_offsets: Mapping[tuple[int, int], int] = field(default_factory=dict)
    workspace_owners: tuple[tuple[int, int], ...] = ()  # (subgraph, op) that requested each
    # per workspace: True = private and kept between evals; False = scratch in the shared pool
    workspace_persistent: tuple[bool, ...] = ()
    # per workspace: the read-only array a persistent workspace is (contents given in
    # prepare, e.g. a kernel's weights in its GEMM's dtype), or None for a zeroed one
    workspace_initial: tuple[Any, ...] = field(default=(), repr=False, compare=False)
    kernel_set: str = "reference"  # the kernels whose allocations the layout holds
    esp_nn_version: str | None = None  # with kernel_set "esp-nn": the esp-nn release sized
    tflm_checked_min_arena: int = 0
    min_arena_note: str = ""
    # why TFLM's checks need more than head + tail: "rounding" (to a multiple of 16 alone), or
    # the step of AllocateTensors whose transient data needs the most; "" when nothing does
    min_arena_cause: str = ""
    # MicroResourceVariables in a second arena (ESPHome's layout); None: in this one, or none
    variables_arena: VariablesArena | None = None
    # TFLM's alternate decompression memory (MicroInterpreter::SetDecompressionMemory, the
    # wheel's alt_decompression_memory_size): its bytes (0: none given), the highest byte
    # DECODE outputs reached in it, and (subgraph, tensor) -> offset of each output placed
    # there (not planned in the arena)
    alt_decompression_memory: int = 0
    alt_decompression_used: int = 0
    alt_decompression_offsets: Mapping[tuple[int, int], int] = field(default_factory=dict)

    @property
    def arena_used_bytes(self) -> int:
        return self.total

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict with stable keys."""
        return {
            "target": self.target,
            "kernel_set": self.kernel_set,
            "esp_nn_version": self.esp_nn_version,
            "allocator": self.allocator,
            "planner": self.planner,
            "arena_size": self.arena_size,
            "head": self.head,
            "tail": self.tail,
            "total": self.total,
            "min_arena": self.min_arena,
            "overlap_free_arena": self.overlap_free_arena,
            "tflm_checked_min_arena": self.tflm_checked_min_arena,
            "min_arena_note": self.min_arena_note,
            "temp_peak": self.temp_peak,
            "lower_bound": self.lower_bound,
            "categories": {name: c.to_dict() for name, c in self.categories.items()},
            "buffers": [b.to_dict() for b in self.buffers],
            "tensor_offsets": [
                {"subgraph": s, "index": i, "offset": o}
                for (s, i), o in sorted(self.tensor_offsets.items())
            ],
            "scratch_offsets": list(self.scratch_offsets),
            "tail_allocations": [t.to_dict() for t in self.tail_allocations],
            **({} if self.variables_arena is None
               else {"variables_arena": self.variables_arena.to_dict()}),
        }


__all__ = ["ArenaLayout", "PlannedBuffer", "TailAllocation", "VariablesArena"]
