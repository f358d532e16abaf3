"""Why the arena is this big: the peak of the head named, the tail split by operator.

``explain_arena(model, layout)`` turns an ``ArenaLayout`` (any target, planner, offline plan or
not) into plain frozen data that the text, JSON, SVG and HTML renderings all read, so every
figure they show comes from one place.

Time steps are TFLM's (``AllocationInfoBuilder::MarkAllocationLifetimes``): step 0 is "the
model's inputs are ready", operator k of subgraph 0 runs at step k + 1, and a control-flow
operator (IF, WHILE, CALL_ONCE) adds one step per subgraph it runs, in which that subgraph's
own operators take further steps. A buffer is live at every step from ``first`` to ``last``,
both included.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from tinyarena.arena import ArenaLayout, PlannedBuffer, get_target
from tinyarena.arena.lifetimes import called_subgraphs
from tinyarena.arena.recording import CATEGORY_ORDER
from tinyarena.kernels import ethos_u
from tinyarena.model.metadata import offline_offsets
from tinyarena.model.reader import ModelSource, read_model
from tinyarena.model.types import Model
from tinyarena.optimize.rules import PlanRules, plan_rules

NOT_ITEMISED = "not itemised (allocator objects, params, ...)"
# TFLM's AllocationInfo keeps lifetime -1..-1 for a tensor no operator reads or writes, and its
# planners still place it: every such tensor is live at once, at step -1.
UNUSED = "unused: no operator reads or writes it (planned at step -1)"
TIME_STEPS = ("step 0: the model's inputs are ready; step k: operator k-1 of subgraph 0 runs "
              "(control-flow ops add steps for the subgraphs they run); a buffer is live from "
              "first to last, both included (TFLM's AllocationInfo lifetimes)")


@dataclass(frozen=True)
class StepOperator:
    """The operator running at a time step."""

    step: int
    subgraph: int
    index: int
    type: str
    output: str  # name of its first output tensor ("" when it has none)

    def to_dict(self) -> dict[str, Any]:
        return {"step": self.step, "subgraph": self.subgraph, "index": self.index,
                "type": self.type, "output": self.output}

    def describe(self) -> str:
        sg = f" of subgraph {self.subgraph}" if self.subgraph else ""
        out = f" -> {self.output!r}" if self.output else ""
        return f"operator {self.index}{sg} {self.type}{out}"


@dataclass(frozen=True)
class BufferInfo:
    """One planned buffer with what it holds: a tensor (name, shape, type, producer, last
    consumer) or a kernel's scratch buffer (the operator that requested it)."""

    position: int  # index into layout.buffers
    kind: str
    subgraph: int
    index: int
    name: str
    shape: tuple[int, ...] | None
    dtype: str
    nbytes: int
    size: int
    offset: int
    first: int
    last: int
    offline: bool
    producer: StepOperator | None  # scratch: the operator that requested it
    last_consumer: StepOperator | None
    role: str = ""  # Vela's tensors and the ethos-u kernel's scratch (``ethos_u.ROLE_NAMES``)

    @property
    def end(self) -> int:
        return self.offset + self.size

    def shape_text(self) -> str:
        if self.shape is None:
            return "-"
        return "[" + ",".join(str(d) for d in self.shape) + "]"

    def ops_text(self) -> str:
        if self.kind == "scratch":
            return f"scratch of op {self.producer.index} {self.producer.type}" \
                if self.producer else "scratch"
        if self.first < 0 and self.producer is None and self.last_consumer is None:
            return UNUSED
        made = f"op {self.producer.index} {self.producer.type}" if self.producer else "input"
        used = (f"op {self.last_consumer.index} {self.last_consumer.type}"
                if self.last_consumer else "output")
        # operator and tensor indices restart in every subgraph: say which one
        where = f"subgraph {self.subgraph}: " if self.subgraph else ""
        return f"{where}{made} -> {used}"

    def title(self) -> str:
        """Hover text: everything about the buffer in one line per fact."""
        return (f"{self.name} ({self.kind} {self.index}"
                f"{', subgraph %d' % self.subgraph if self.subgraph else ''})\n"
                f"shape {self.shape_text()} {self.dtype}, {self.nbytes:,} bytes "
                f"({self.size:,} planned)\n"
                f"offset {self.offset:,}..{self.end:,}\n"
                f"live steps {self.first}..{self.last}\n{self.ops_text()}"
                + ("\npinned by the offline plan" if self.offline else "")
                + (f"\n{self.role_text()}" if self.role else ""))

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "subgraph": self.subgraph, "index": self.index,
                "name": self.name, "shape": None if self.shape is None else list(self.shape),
                "dtype": self.dtype, "nbytes": self.nbytes, "size": self.size,
                "offset": self.offset, "first": self.first, "last": self.last,
                "producer": None if self.producer is None else self.producer.index,
                "last_consumer": (None if self.last_consumer is None
                                  else self.last_consumer.index),
                **({"npu_role": self.role} if self.role else {})}

    def role_text(self) -> str:
        """The role in words ("" for a buffer that is not Vela's or the ethos-u kernel's)."""
        return ethos_u.ROLE_NAMES.get(self.role, self.role)


@dataclass(frozen=True)
class Peak:
    """Where the head is reached: the plan's highest live byte equals ``head_bytes``.

    ``step`` is the one shown (of ``steps``, the one with most live bytes), ``buffers`` the
    positions of every buffer live there, ``live_bytes`` their planned sizes summed and
    ``gap_bytes`` the head minus that (free holes below the top; negative when buffers share
    bytes on purpose).
    """

    step: int
    steps: tuple[int, ...]
    operator: StepOperator | None
    head_bytes: int
    live_bytes: int
    buffers: tuple[int, ...]

    @property
    def gap_bytes(self) -> int:
        return self.head_bytes - self.live_bytes


@dataclass(frozen=True)
class OperatorTail:
    """The tail bytes (padding included) one operator's node made, by purpose."""

    subgraph: int
    index: int
    type: str
    op_data: int  # init's persistent OpData
    persistent_buffers: int  # prepare's persistent buffers
    builtin_data: int  # the parsed builtin options struct
    scratch_handles: int  # one ScratchBufferHandle per scratch request
    variable_state: int  # variable tensors it reads, resource variables it allocates

    @property
    def total(self) -> int:
        return (self.op_data + self.persistent_buffers + self.builtin_data
                + self.scratch_handles + self.variable_state)

    def to_dict(self) -> dict[str, Any]:
        return {"subgraph": self.subgraph, "index": self.index, "type": self.type,
                "op_data": self.op_data, "persistent_buffers": self.persistent_buffers,
                "builtin_data": self.builtin_data, "scratch_handles": self.scratch_handles,
                "variable_state": self.variable_state, "total": self.total}


@dataclass(frozen=True)
class ArenaExplanation:
    """Everything ``plan``, ``size`` and ``report`` say about one layout."""

    layout: ArenaLayout
    planner_text: str
    buffers: tuple[BufferInfo, ...]
    live_by_step: tuple[tuple[int, int, int], ...]  # (step, live bytes, highest live byte)
    peak: Peak | None
    rules: PlanRules
    operators: tuple[StepOperator, ...]
    tail_by_category: tuple[tuple[str, int], ...]  # used bytes, NOT_ITEMISED last
    tail_by_operator: tuple[OperatorTail, ...]
    model_wide_tail: int
    npu_lines: tuple[str, ...] = ()  # where Vela's tensors sit in the arena (Ethos-U models)

    @property
    def optimal(self) -> bool:
        """The head equals the lower bound for the plan's own overlap rules."""
        return self.layout.head == self.rules.bound

    @property
    def offline(self) -> bool:
        return any(b.offline for b in self.buffers)

    def bound_text(self) -> str:
        r = self.rules
        if r.rules == "none":
            words = f"lower bound {r.bound:,} bytes for plans where {r.description}"
        else:
            words = (f"lower bound {r.bound:,} bytes for plans where {r.description} "
                     f"(without any sharing: {r.no_overlap_bound:,})")
        head = self.layout.head
        if r.collisions:  # a bound for the rules says nothing about a plan that breaks them
            return words + (f"; this plan breaks those rules: {self.collision_text()}, live "
                            f"buffers sharing bytes that no rule allows")
        if self.optimal:
            return words + "; this plan meets it: optimal under those rules"
        return words + f"; this plan is {head - r.bound:,} bytes above it"

    def collision_text(self) -> str:
        """The pairs of buffers that share bytes although no overlap rule allows it."""
        pairs = [f"{self.buffers[c.a].name!r} and {self.buffers[c.b].name!r}"
                 for c in self.rules.collisions]
        shown = "; ".join(pairs[:3]) + (f"; {len(pairs) - 3} more" if len(pairs) > 3 else "")
        return f"{len(pairs)} collision{'s' if len(pairs) > 1 else ''} ({shown})"

    def peak_text(self) -> str:
        p = self.peak
        if p is None:
            return "no planned buffers: the head is empty"
        where = (p.operator.describe() if p.operator
                 else "before the first operator (inputs)" if p.step >= 0
                 else "tensors no operator uses (TFLM still plans them, all live at once)")
        others = [str(s) for s in p.steps if s != p.step]
        more = (f" (also reached at step{'s' if len(others) > 1 else ''} {', '.join(others)})"
                if others else "")
        gap = (f"{p.gap_bytes:,} bytes of holes below the top" if p.gap_bytes >= 0
               else f"{-p.gap_bytes:,} bytes shared on purpose" if not self.rules.collisions
               else f"{-p.gap_bytes:,} bytes shared, with {self.collision_text()}")
        return (f"peak at step {p.step}{more}: {where}; {len(p.buffers)} buffers live, "
                f"{p.live_bytes:,} bytes, head {p.head_bytes:,} ({gap})")

    def peak_dict(self) -> dict[str, Any] | None:
        p = self.peak
        if p is None:
            return None
        return {
            "step": p.step,
            "steps": list(p.steps),
            "operator": None if p.operator is None else p.operator.to_dict(),
            "head_bytes": p.head_bytes,
            "live_bytes": p.live_bytes,
            "gap_bytes": p.gap_bytes,
            "buffers": [self.buffers[i].to_dict() for i in p.buffers],
        }


def planner_text(layout: ArenaLayout) -> str:
    """What placed the buffers, in words: an offline plan is named as such."""
    pinned = sum(b.offline for b in layout.buffers)
    if pinned == 0:
        return {"greedy": "greedy planner", "linear": "linear planner",
                "optimal": "greedy planner (the placement search found no smaller plan)"}.get(
            layout.planner, f"{layout.planner} planner")
    online = len(layout.buffers) - pinned
    prefix = "best plan found, " if layout.planner == "optimal" else ""
    text = f"{prefix}offline plan (OfflineMemoryAllocation metadata, {pinned} buffers pinned"
    return text + (f", {online} placed by TFLM's greedy planner)" if online else ")")


def operator_steps(model: Model) -> tuple[StepOperator, ...]:
    """The step at which each operator starts, walking the graph as TFLM's lifetime marker
    does (one step per operator, one more per subgraph a control-flow operator runs)."""
    found: list[StepOperator] = []
    count = 0

    def walk(s: int, calling: tuple[int, ...]) -> None:
        nonlocal count
        sg = model.subgraphs[s]
        for op in sg.operators:
            count += 1
            output = sg.tensors[op.outputs[0]].name if op.outputs and op.outputs[0] >= 0 else ""
            found.append(StepOperator(count, s, op.index, op.name, output))
            for callee in called_subgraphs(op.name, op.options):
                count += 1
                if 0 <= callee < len(model.subgraphs) and callee not in calling + (s,):
                    walk(callee, calling + (s,))

    if model.subgraphs:
        walk(0, ())
    return tuple(found)


def _operator_at(steps: tuple[StepOperator, ...], starts: np.ndarray, t: int
                 ) -> StepOperator | None:
    k = int(np.searchsorted(starts, t, side="right")) - 1
    return steps[k] if k >= 0 else None


def _buffer_infos(model: Model, layout: ArenaLayout, steps: tuple[StepOperator, ...]
                  ) -> tuple[BufferInfo, ...]:
    by_op = {(o.subgraph, o.index): o for o in steps}
    starts = np.array([o.step for o in steps], dtype=np.int64)
    producer: dict[tuple[int, int], StepOperator] = {}
    consumer: dict[tuple[int, int], StepOperator] = {}
    for sg in model.subgraphs:
        for op in sg.operators:
            node = by_op.get((sg.index, op.index))
            if node is None:  # a subgraph nothing runs
                continue
            for t in op.outputs:
                producer.setdefault((sg.index, t), node)
            for t in op.inputs:
                if t >= 0:
                    consumer[(sg.index, t)] = node
    roles = ethos_u.vela_roles(model)
    scratch_roles = _ethos_u_scratch_roles(layout)
    infos = []
    for pos, b in enumerate(layout.buffers):
        role = scratch_roles.get((b.kind, b.subgraph, b.index), "")
        if b.kind == "tensor":
            tensor = model.subgraphs[b.subgraph].tensors[b.index]
            infos.append(BufferInfo(pos, b.kind, b.subgraph, b.index, tensor.name or
                                    f"tensor {b.index}", tuple(tensor.shape),
                                    tensor.type.name.lower(), b.nbytes, b.size, b.offset,
                                    b.first, b.last, b.offline,
                                    producer.get((b.subgraph, b.index)),
                                    consumer.get((b.subgraph, b.index)),
                                    roles.get((b.subgraph, b.index), "")))
        else:
            owner = _operator_at(steps, starts, b.first)
            label = (f"scratch {b.index} of op {owner.index} {owner.type}" if owner
                     else f"scratch {b.index}")
            infos.append(BufferInfo(pos, b.kind, b.subgraph, b.index, label, None, "bytes",
                                    b.nbytes, b.size, b.offset, b.first, b.last, b.offline,
                                    owner, owner, role))
    return tuple(infos)


def _ethos_u_scratch_roles(layout: ArenaLayout) -> dict[tuple[str, int, int], str]:
    """("scratch", subgraph, request) -> role of the ethos-u kernel's two scratch requests."""
    roles = {}
    for (sg, _), data in layout.op_data.items():
        if isinstance(data, ethos_u.EthosUData):
            roles[("scratch", sg, data.base_addr)] = "base_addresses"
            roles[("scratch", sg, data.base_addr_size)] = "base_address_sizes"
    return roles


def _npu_lines(model: Model, infos: tuple[BufferInfo, ...]) -> tuple[str, ...]:
    """Which bytes of the arena are the NPU's: Vela's scratch (and fast scratch) with the
    model's inputs and outputs Vela placed inside it; empty for a model without Vela."""
    lines = []
    for info in infos:
        if info.kind != "tensor" or "scratch" not in info.role:
            continue
        inside = [o for o in infos if o.kind == "tensor" and not o.role and o.offline
                  and info.offset <= o.offset and o.end <= info.offset + info.nbytes]
        text = (f"{info.role_text()}: tensor {info.index} {info.name!r}, arena bytes "
                f"{info.offset:,}..{info.offset + info.nbytes:,}"
                + (" (pinned by Vela's offline plan)" if info.offline else ""))
        if inside:
            shown = ", ".join(f"tensor {o.index} {o.name!r} at {o.offset:,}" for o in inside[:6])
            more = f" and {len(inside) - 6} more" if len(inside) > 6 else ""
            text += f"; inside it (Vela's offsets): {shown}{more}"
        lines.append(text)
    return tuple(lines)


def _live(buffers: tuple[PlannedBuffer, ...]) -> tuple[tuple[int, int, int], ...]:
    """(step, live planned bytes, highest live byte) for every step some buffer is live."""
    if not buffers:
        return ()
    firsts = np.array([b.first for b in buffers], dtype=np.int64)
    lasts = np.array([b.last for b in buffers], dtype=np.int64)
    sizes = np.array([b.size for b in buffers], dtype=np.int64)
    ends = np.array([b.offset + b.size for b in buffers], dtype=np.int64)
    rows = []
    for t in range(int(firsts.min()), int(lasts.max()) + 1):
        live = (firsts <= t) & (t <= lasts)
        if live.any():
            rows.append((t, int(sizes[live].sum()), int(ends[live].max())))
    return tuple(rows)


def _peak(layout: ArenaLayout, live: tuple[tuple[int, int, int], ...],
          steps: tuple[StepOperator, ...]) -> Peak | None:
    if not live:
        return None
    top = max(end for _, _, end in live)
    at_top = [(t, level) for t, level, end in live if end == top]
    # the step shown: most live bytes, then the first one an operator runs at
    step, level = max(at_top, key=lambda r: (r[1], r[0] > 0, -r[0]))
    starts = np.array([o.step for o in steps], dtype=np.int64)
    members = tuple(i for i, b in enumerate(layout.buffers) if b.first <= step <= b.last)
    return Peak(step, tuple(t for t, _ in at_top), _operator_at(steps, starts, step)
                if step > 0 else None, layout.head, level, members)


def _tail_by_category(layout: ArenaLayout) -> tuple[tuple[str, int], ...]:
    rows = [(name, layout.categories[name].used) for name in CATEGORY_ORDER
            if name in layout.categories]
    rows.append((NOT_ITEMISED, layout.tail - sum(used for _, used in rows)))
    return tuple(rows)


def _tail_by_operator(model: Model, layout: ArenaLayout, buffers: tuple[BufferInfo, ...]
                      ) -> tuple[tuple[OperatorTail, ...], int]:
    """Each tail allocation charged to the node that made it; the rest is model-wide."""
    ops: dict[tuple[int, int], dict[str, int]] = {}
    names = {(sg.index, op.index): op.name for sg in model.subgraphs for op in sg.operators}

    def charge(key: tuple[int, int], what: str, nbytes: int) -> None:
        ops.setdefault(key, {}).setdefault(what, 0)
        ops[key][what] += nbytes

    variables = _variable_readers(model, layout)
    resources = set(layout.resource_offsets)
    handle = get_target(layout.target).sizeof("ScratchBufferHandle")
    scratch_by_op: dict[tuple[int, int], int] = {}
    for b in buffers:
        if b.kind == "scratch" and b.producer is not None:
            key = (b.producer.subgraph, b.producer.index)
            scratch_by_op[key] = scratch_by_op.get(key, 0) + 1
    model_wide = 0
    for a in layout.tail_allocations:
        if a.address in resources and a.op is not None:
            charge(a.op, "variable_state", a.used)
        elif a.op is not None:
            what = {"op data": "op_data", "persistent buffer": "persistent_buffers",
                    "builtin data": "builtin_data"}.get(a.role, "persistent_buffers")
            charge(a.op, what, a.used)
        elif a.role == "variable" and a.address in variables:
            charge(variables[a.address], "variable_state", a.used)
        elif a.label.startswith("ScratchBufferHandle[") and scratch_by_op:
            shared = 0
            for key, n in scratch_by_op.items():
                charge(key, "scratch_handles", n * handle)
                shared += n * handle
            model_wide += a.used - shared
        else:
            model_wide += a.used
    rows = tuple(
        OperatorTail(sg, idx, names.get((sg, idx), "?"), v.get("op_data", 0),
                     v.get("persistent_buffers", 0), v.get("builtin_data", 0),
                     v.get("scratch_handles", 0), v.get("variable_state", 0))
        for (sg, idx), v in sorted(ops.items()))
    return rows, model_wide


def _variable_readers(model: Model, layout: ArenaLayout) -> dict[int, tuple[int, int]]:
    """Tail address of each variable tensor -> the first operator that uses it."""
    out: dict[int, tuple[int, int]] = {}
    for sg in model.subgraphs:
        for tensor in sg.tensors:
            address = layout.tensor_offsets.get((sg.index, tensor.index))
            if not tensor.is_variable or address is None:
                continue
            for op in sg.operators:
                if tensor.index in op.inputs or tensor.index in op.outputs:
                    out[address] = (sg.index, op.index)
                    break
    return out


def explain_arena(model: Model | ModelSource, layout: ArenaLayout,
                  kernel_set: str | None = None) -> ArenaExplanation:
    """The peak, the bound for the plan's own overlap rules, and the tail by operator.

    ``kernel_set`` decides which intended overlaps of an offline plan are safe (the
    optimizer's rules (b) and (c) hold for TFLM's reference kernels only); by default the
    target profile's ``kernel_set`` when it names one, else "reference".
    """
    model = read_model(model)  # a path, bytes or a Model, as everywhere in the API
    if kernel_set is None:
        kernel_set = str(getattr(get_target(layout.target), "kernel_set", "reference"))
    steps = operator_steps(model)
    infos = _buffer_infos(model, layout, steps)
    live = _live(layout.buffers)
    by_op, model_wide = _tail_by_operator(model, layout, infos)
    text = planner_text(layout)
    if offline_offsets(model) is not None and "offline" not in text:
        text += " (the model's OfflineMemoryAllocation plan pins no planned buffer)"
    return ArenaExplanation(layout, text, infos, live, _peak(layout, live, steps),
                            plan_rules(model, layout, kernel_set), steps,
                            _tail_by_category(layout), by_op, model_wide,
                            _npu_lines(model, infos))


__all__ = ["ArenaExplanation", "BufferInfo", "NOT_ITEMISED", "OperatorTail", "Peak",
           "StepOperator", "TIME_STEPS", "explain_arena", "operator_steps", "planner_text"]
