"""Model + scratch requests -> the buffers TFLM hands to its memory planner.

Ports ``AllocationInfoBuilder`` (``micro_allocation_info.cc``): one record per tensor of every
subgraph (subgraph 0's first), then one per scratch request; lifetimes from
``MarkAllocationLifetimes`` walking subgraph 0 and, through IF/WHILE/CALL_ONCE, the subgraphs it
reaches; offline offsets from the ``OfflineMemoryAllocation`` metadata read as
``GetOfflinePlannedOffsets`` reads it. Facts sheet sections 2.1-2.3 and 3.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, Sequence

from tinyarena._util import align_up
from tinyarena.errors import KernelError, ModelError
from tinyarena.model.types import Model, Subgraph
from tinyarena.planning.buffers import Buffer

ONLINE = -1  # kOnlinePlannedBuffer
PLAN_ALIGNMENT = 16  # CreatePlan rounds every size up to MicroArenaBufferAlignment()


@dataclass(frozen=True)
class ScratchRequest:
    """One RequestScratchBufferInArena call: bytes, and the node that made it."""

    nbytes: int
    op_index: int  # operator index within its subgraph
    subgraph: int
    # bytes the kernel's eval writes from the buffer's start, when more than it asked for
    # (esp-nn's softmax: 4 * depth into a 4 * dims[1] request); 0: no more than nbytes
    eval_writes: int = 0


@dataclass(frozen=True)
class AllocationRecord:
    """One AllocationInfo entry: a tensor or a scratch buffer, with its lifetime."""

    kind: str  # "tensor" or "scratch"
    subgraph: int
    index: int  # tensor index within the subgraph, or scratch request index
    nbytes: int
    first: int
    last: int
    offline_offset: int  # ONLINE (-1) when planned online
    needs_allocating: bool

    @property
    def planned_size(self) -> int:
        return align_up(self.nbytes, PLAN_ALIGNMENT)

    def to_buffer(self) -> Buffer:
        """The planner's view: 16-rounded size, offline offset or None (CreatePlan)."""
        offset = None if self.offline_offset == ONLINE else self.offline_offset
        return Buffer(self.planned_size, self.first, self.last, offset)


def tensor_nbytes(model: Model, subgraph: int, index: int) -> int:
    """TfLiteEvalTensorByteLength, raising where TFLM's AllocateTensors would fail."""
    tensor = model.subgraphs[subgraph].tensors[index]
    nbytes = tensor.tflm_nbytes
    if nbytes is None:
        raise ModelError(
            f"tensor {index} ({tensor.name!r}) of subgraph {subgraph} has type "
            f"{tensor.type.name}, which TFLM cannot size, so AllocateTensors fails"
        )
    return nbytes


def called_subgraphs(op_name: str, options: object) -> tuple[int, ...]:
    """Subgraphs a control-flow op runs, in the order MarkSubgraphLifetimesIfNecessary visits."""
    fields = {
        "IF": ("then_subgraph_index", "else_subgraph_index"),
        "WHILE": ("cond_subgraph_index", "body_subgraph_index"),
        "CALL_ONCE": ("init_subgraph_index",),
    }.get(op_name, ())
    if fields and options is None:
        raise ModelError(f"{op_name} operator has no options table naming its subgraphs")
    return tuple(int(getattr(options, f)) for f in fields)


def allocation_records(
    model: Model,
    scratch_requests: Sequence[ScratchRequest] = (),
    *,
    offsets: Sequence[int] | None = None,
    data_set_in_prepare: Iterable[tuple[int, int]] = (),
) -> list[AllocationRecord]:
    """Every AllocationInfo record in TFLM's order, lifetimes marked.

    ``offsets`` is the offline plan (``tinyarena.model.metadata.offline_offsets(model)``), ``data_set_in_prepare`` the
    (subgraph, tensor) pairs whose data pointer a kernel set during Prepare (VAR_HANDLE's
    output), which TFLM therefore does not plan.
    """
    preset = set(data_set_in_prepare)
    for sg in model.subgraphs:
        _validate_intermediates(model, sg)
    records: list[list] = []  # mutable rows while marking: [first, last]
    meta: list[tuple[str, int, int, int, int, bool]] = []
    base: list[int] = []
    k = 0
    for sg in model.subgraphs:
        base.append(len(meta))
        for tensor in sg.tensors:
            nbytes = tensor_nbytes(model, sg.index, tensor.index)
            needs = ((not tensor.is_constant) and (sg.index, tensor.index) not in preset
                     and not tensor.is_variable and nbytes != 0)
            offline = ONLINE
            if offsets is not None:
                offline = int(offsets[k])
                if tensor.is_variable and offline != ONLINE:
                    needs = True
            k += 1
            meta.append(("tensor", sg.index, tensor.index, nbytes, offline, needs))
            records.append([-1, -1])
    scratch_base = len(meta)
    for i, req in enumerate(scratch_requests):
        meta.append(("scratch", req.subgraph, i, req.nbytes, ONLINE, True))
        records.append([-1, -1])

    marker = _LifetimeMarker(model, records, base, scratch_base, scratch_requests)
    if model.subgraphs:
        marker.mark(0)
    return [
        AllocationRecord(kind, sg, idx, nbytes, first, last, offline, needs)
        for (kind, sg, idx, nbytes, offline, needs), (first, last) in zip(meta, records)
    ]


def planned_records(records: Sequence[AllocationRecord]) -> list[AllocationRecord]:
    """The records CreatePlan adds to the planner (needs_allocating), in record order."""
    return [r for r in records if r.needs_allocating]


class _LifetimeMarker:
    """AllocationInfoBuilder::MarkAllocationLifetimes with its one monotonic scope counter."""

    def __init__(self, model: Model, rows: list[list], base: list[int], scratch_base: int,
                 requests: Sequence[ScratchRequest]) -> None:
        self.model = model
        self.rows = rows
        self.base = base
        self.scratch_base = scratch_base
        self.count = 0
        self.calling: list[int] = []  # subgraphs being marked, outermost first
        self.requests_by_node: dict[tuple[int, int], list[int]] = {}
        for i, req in enumerate(requests):
            self.requests_by_node.setdefault((req.subgraph, req.op_index), []).append(i)

    def _first(self, row: list, scope: int) -> None:
        if row[0] == -1:
            row[0] = scope

    def mark(self, s: int) -> None:
        if not 0 <= s < len(self.model.subgraphs):
            raise ModelError(f"a control-flow operator refers to subgraph {s}, which does not "
                             f"exist (the model has {len(self.model.subgraphs)})")
        sg: Subgraph = self.model.subgraphs[s]
        rows = self.rows
        base = self.base[s]
        for t in sg.inputs:
            row = rows[base + t]
            self._first(row, self.count)
            row[1] = self.count
        for i, op in enumerate(sg.operators):
            self.count += 1
            for t in op.outputs:
                self._first(rows[base + t], self.count)
            start = self.count
            for callee in called_subgraphs(op.name, op.options):
                self.count += 1
                if callee == s or callee in self.calling:
                    # TFLM would recurse until its stack overflows: refuse the model instead.
                    raise ModelError(
                        f"{op.name} (operator {i} of subgraph {s}) calls subgraph {callee}, "
                        f"which is already running (call chain {self.calling + [s]}); "
                        f"control-flow subgraphs must not call themselves, directly or not")
                self.calling.append(s)
                self.mark(callee)
                self.calling.pop()
            for t in op.inputs:
                if t >= 0:
                    rows[base + t][1] = self.count
            for t in op.outputs:
                rows[base + t][1] = self.count
            for r in self.requests_by_node.get((s, i), ()):
                row = rows[self.scratch_base + r]
                self._first(row, start)
                row[1] = self.count
        for t in sg.outputs:
            row = rows[base + t]
            self._first(row, self.count)
            row[1] = self.count


def _validate_intermediates(model: Model, sg: Subgraph) -> None:
    """AllocationInfoBuilder::ValidateSubgraph: intermediate tensors must be empty."""
    for op in sg.operators:
        for t in op.intermediates:
            nbytes = tensor_nbytes(model, sg.index, t)
            if nbytes != 0:
                raise KernelError(
                    f"Does not support intermediate tensor with non-zero size: {nbytes} "
                    f"(operator {op.index} {op.name} of subgraph {sg.index}); TFLM only runs "
                    f"models whose intermediates are empty"
                )


__all__ = [
    "AllocationRecord",
    "ONLINE",
    "ScratchRequest",
    "allocation_records",
    "called_subgraphs",
    "planned_records",
    "tensor_nbytes",
]
