"""Patch-based rewriting: run a CNN's memory-heavy first stage one spatial patch at a time.

The stage is a prefix of subgraph 0 (operators 0..``split_after``) whose last operator writes
the only stage tensor read afterwards (the stage output O, H x W). O is cut into an R x C grid
of cells; for each cell the stage is walked backwards to find the rectangle of every stage
tensor that cell needs (``window_input_span``: stride, kernel, dilation, leading pad), and
forwards the stage is emitted once per cell with only builtins every TFLM build has:

- STRIDED_SLICE of the graph input's rectangle (a leading NCHW->NHWC TRANSPOSE becomes a slice
  of the NCHW input and a small TRANSPOSE), or of a larger patch where a consumer needs less;
- PAD exactly where a rectangle sticks out of its map: int8 PAD fills with the zero point,
  which adds exactly zero to a convolution's sums (as SAME padding does); MAX_POOL is padded
  with PADV2 and -128, which never wins a maximum over a window holding an in-image value;
- the stage's own CONV_2D / DEPTHWISE_CONV_2D / pools / element-wise ops, with VALID padding
  and otherwise their own options; weights and biases are the same tensors (never copied);
- CONCATENATION of the cells along width per row, then along height, into O itself, so the
  rest of the graph is untouched.

No quantization parameter is created or changed and every output value sees the same inputs
in the same accumulation order, so the outputs are bit-identical. Only int8 stages are
patched: a float convolution skips out-of-image taps, which a padded 0.0 is not (signed
zeros, inf * 0). The stage's old intermediate tensors leave the tensor table (TFLM plans
unreferenced non-constant tensors too); their slots are reused by new tensors so every other
tensor keeps its index (signature defs stay valid).

The rectangle algebra (``Span``, ``Rect``, ``same_padding``, ``window_output_size``,
``window_input_span``, ``grid_spans``) is pure and usable alone; ``find_stage`` says whether a
split point is patchable (``NotPatchable`` names why not); ``patch_model`` writes the model.
"""

from __future__ import annotations

import dataclasses
import json
import os
from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

from tinyarena.errors import BuildError
from tinyarena.model import read_model
from tinyarena.model.metadata import OFFLINE_PLAN_NAME, encode_offline_plan, offline_plan
from tinyarena.model.types import Model, Operator, Tensor, TensorType
from tinyarena.rewrite.rewriter import NewOperator, NewTensor, SubgraphReplacement, rewrite_model

PATCHES_METADATA = "tinyarena.patches"
"""Metadata entry a patched model carries: the stage and grid as JSON (``patch_record``).
TFLM reads metadata only by the names it knows, so it costs the device nothing."""

MAX_CONCAT_INPUTS = 10
"""TFLM's CONCATENATION takes at most 10 inputs (kMaxInputNum): the grid's side limit."""

WINDOW_OPS = frozenset({"CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D", "AVERAGE_POOL_2D"})
UNARY_OPS = frozenset({"RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "LOGISTIC", "TANH",
                       "HARD_SWISH", "QUANTIZE"})
BINARY_OPS = frozenset({"ADD", "SUB", "MUL", "MAXIMUM", "MINIMUM"})
PAD_OPS = frozenset({"PAD", "PADV2"})
PATCHABLE_OPS = WINDOW_OPS | UNARY_OPS | BINARY_OPS | PAD_OPS | {"CONCATENATION", "TRANSPOSE"}
NCHW_TO_NHWC = (0, 2, 3, 1)
INT8_MIN = -128


class NotPatchable(BuildError):
    """The requested stage or grid cannot be patched; the message says why. ``final``: an
    operator of the prefix can never be part of a stage, so no longer prefix is patchable."""

    def __init__(self, message: str, *, final: bool = False) -> None:
        super().__init__(message)
        self.final = final


# -- rectangle algebra ------------------------------------------------------------------------

@dataclass(frozen=True, order=True)
class Span:
    """Half-open index range [start, stop) along one axis; may stick out of its map."""

    start: int
    stop: int

    @property
    def size(self) -> int:
        return self.stop - self.start

    def clip(self, n: int) -> Span:
        """The part inside a map of ``n`` cells (empty spans keep start <= stop)."""
        lo, hi = max(self.start, 0), min(self.stop, n)
        return Span(lo, max(lo, hi))

    def union(self, other: Span) -> Span:
        """The smallest span covering both (the hull: a tensor's patch is one rectangle)."""
        return Span(min(self.start, other.start), max(self.stop, other.stop))

    def shift(self, by: int) -> Span:
        return Span(self.start + by, self.stop + by)

    def contains(self, other: Span) -> bool:
        return self.start <= other.start and other.stop <= self.stop


@dataclass(frozen=True, order=True)
class Rect:
    """Rows x columns of an NHWC map."""

    rows: Span
    cols: Span

    def clip(self, height: int, width: int) -> Rect:
        return Rect(self.rows.clip(height), self.cols.clip(width))

    def union(self, other: Rect) -> Rect:
        return Rect(self.rows.union(other.rows), self.cols.union(other.cols))

    def shift(self, rows: int, cols: int) -> Rect:
        return Rect(self.rows.shift(rows), self.cols.shift(cols))

    def contains(self, other: Rect) -> bool:
        return self.rows.contains(other.rows) and self.cols.contains(other.cols)

    @property
    def empty(self) -> bool:
        return self.rows.size <= 0 or self.cols.size <= 0


def effective_kernel(kernel: int, dilation: int) -> int:
    """Extent of a dilated kernel: (k - 1) * d + 1."""
    return (kernel - 1) * dilation + 1


def window_output_size(in_size: int, kernel: int, stride: int, dilation: int,
                       padding: str) -> int:
    """TFLite's ComputeOutSize: SAME ceil(in / s), VALID ceil((in - k_eff + 1) / s)."""
    if padding == "SAME":
        return (in_size + stride - 1) // stride
    return max((in_size - effective_kernel(kernel, dilation) + stride) // stride, 0)


def same_padding(in_size: int, kernel: int, stride: int, dilation: int) -> tuple[int, int]:
    """(before, after) of TFLite's SAME padding (ComputePaddingWithOffset): the total is split
    with the odd cell after, so stride 2 on even sizes pads only bottom/right."""
    out = window_output_size(in_size, kernel, stride, dilation, "SAME")
    total = max((out - 1) * stride + effective_kernel(kernel, dilation) - in_size, 0)
    return total // 2, total - total // 2


def window_input_span(out: Span, kernel: int, stride: int, dilation: int,
                      pad_before: int) -> Span:
    """Input cells output cells [a, b) of a window op read: [a*s - p, (b-1)*s - p + k_eff).
    Outside [0, in_size) they are padding."""
    if out.size <= 0:
        return Span(out.start * stride - pad_before, out.start * stride - pad_before)
    return Span(out.start * stride - pad_before,
                (out.stop - 1) * stride - pad_before + effective_kernel(kernel, dilation))


def grid_spans(n: int, parts: int) -> tuple[Span, ...]:
    """``n`` cells cut into ``parts`` near-even spans (sizes differ by at most one; the larger
    ones last). ``parts`` is clamped to 1..n, so no span is ever empty."""
    if n <= 0:
        raise NotPatchable(f"cannot cut an axis of {n} cells into patches")
    parts = max(1, min(parts, n))
    cuts = [i * n // parts for i in range(parts + 1)]
    return tuple(Span(a, b) for a, b in zip(cuts, cuts[1:]))


def spans_from_cuts(n: int, cuts: tuple[int, ...]) -> tuple[Span, ...]:
    """The spans between interior boundaries ``cuts`` (uneven cuts); NotPatchable unless they
    increase strictly inside (0, n)."""
    points = (0, *cuts, n)
    if any(b <= a for a, b in zip(points, points[1:])):
        raise NotPatchable(f"cuts {list(cuts)} must increase strictly between 0 and {n}")
    return tuple(Span(a, b) for a, b in zip(points, points[1:]))


def clamp_grid(grid: tuple[int, int], height: int, width: int) -> tuple[int, int]:
    """The grid actually emitted: at least 1, at most the stage output's side and at most
    ``MAX_CONCAT_INPUTS`` cells per side."""
    rows, cols = grid
    return (max(1, min(rows, height, MAX_CONCAT_INPUTS)),
            max(1, min(cols, width, MAX_CONCAT_INPUTS)))


# -- the stage --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Window:
    """A window op's geometry along rows and columns; pads are the leading (top/left) pads."""

    kernel: tuple[int, int]
    stride: tuple[int, int]
    dilation: tuple[int, int]
    pad_before: tuple[int, int]


@dataclass(frozen=True)
class StageOp:
    """One operator of the stage as the patcher sees it.

    kind: "window" (conv/depthwise/pool), "pad", "elementwise" (also channel CONCATENATION),
    "transpose" (NCHW graph input to NHWC). ``activations`` are its non-constant inputs."""

    index: int
    name: str
    kind: str
    activations: tuple[int, ...]
    output: int
    window: Window | None = None
    pad_shift: tuple[int, int] = (0, 0)  # explicit PAD: (top, left)


@dataclass(frozen=True)
class Stage:
    """A patchable prefix of subgraph 0."""

    split_after: int
    ops: tuple[StageOp, ...]
    output: int  # the stage output tensor O
    sources: tuple[int, ...]  # non-constant tensors the stage reads but does not write

    @property
    def op_indices(self) -> tuple[int, ...]:
        return tuple(op.index for op in self.ops)


def _hw(t: Tensor) -> tuple[int, int]:
    return t.shape[1], t.shape[2]


def _constant_ints(t: Tensor) -> np.ndarray:
    assert t.data is not None
    return np.asarray(t.data).astype(np.int64)


def _window(model: Model, op: Operator, tensors: tuple[Tensor, ...]) -> Window:
    o = op.options
    inp = tensors[op.inputs[0]]
    if op.name in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        filt = tensors[op.inputs[1]]
        kernel = (int(filt.shape[1]), int(filt.shape[2]))
        dilation = (int(o.dilation_h_factor), int(o.dilation_w_factor))
    else:
        kernel = (int(o.filter_height), int(o.filter_width))
        dilation = (1, 1)
    stride = (int(o.stride_h), int(o.stride_w))
    if min(kernel + stride + dilation) < 1:
        raise NotPatchable(f"operator {op.index} ({op.name}) has a kernel, stride or dilation "
                           "below 1")
    pads = (0, 0)
    if o.padding == "SAME":
        h, w = _hw(inp)
        top, bottom = same_padding(h, kernel[0], stride[0], dilation[0])
        left, right = same_padding(w, kernel[1], stride[1], dilation[1])
        if op.name == "AVERAGE_POOL_2D" and (top, bottom, left, right) != (0, 0, 0, 0):
            raise NotPatchable(f"operator {op.index} (AVERAGE_POOL_2D, SAME) pads the map: its "
                               "divisor counts only in-image cells, which a patch cannot see")
        pads = (top, left)
    elif o.padding != "VALID":
        raise NotPatchable(f"operator {op.index} ({op.name}) has padding {o.padding!r}")
    return Window(kernel, stride, dilation, pads)


def _is_map(t: Tensor) -> bool:
    """A 1xHxWxC tensor: what a QUANTIZE of a (float) graph input into the stage may read; it
    is element-wise, so its patches are exact whatever the input type."""
    return len(t.shape) == 4 and t.shape[0] == 1 and t.type in (
        TensorType.INT8, TensorType.INT16, TensorType.FLOAT32)


def _is_int8_map(t: Tensor) -> bool:
    return t.type == TensorType.INT8 and len(t.shape) == 4 and t.shape[0] == 1 \
        and t.quantization is not None and len(t.quantization.scale) == 1


def _position_free(t: Tensor) -> bool:
    """A constant operand an element-wise op may keep per patch: it broadcasts the same way at
    every pixel (its height and width, right-aligned to 4-D, are 1)."""
    shape = (1,) * (4 - len(t.shape)) + tuple(t.shape)
    return len(t.shape) <= 4 and shape[0] == 1 and shape[1] == 1 and shape[2] == 1


def _stage_op(model: Model, op: Operator, sources: set[int]) -> StageOp:
    """``op`` as a stage operator, or NotPatchable naming why it cannot be one."""
    sg = model.subgraphs[0]
    tensors = sg.tensors
    where = f"operator {op.index} ({op.name})"
    if op.name not in PATCHABLE_OPS:
        raise NotPatchable(f"{where}: {op.name} is not a patchable op (window, pad, "
                           "element-wise, channel concatenation, NCHW->NHWC transpose)")
    if len(op.outputs) != 1 or op.intermediates:
        raise NotPatchable(f"{where} has {len(op.outputs)} outputs or intermediates")
    out = tensors[op.outputs[0]]
    if not _is_int8_map(out):
        raise NotPatchable(f"{where}: its output is not a per-tensor int8 1xHxWxC map (only "
                           "int8 stages are patched bit-exactly)")
    ins = [i for i in op.inputs if i >= 0]
    acts = tuple(i for i in ins if not tensors[i].is_constant)
    if any(tensors[i].is_variable for i in ins):
        raise NotPatchable(f"{where} reads a variable tensor")
    if op.name == "TRANSPOSE":
        perm = tensors[op.inputs[1]]
        if (len(acts) != 1 or acts[0] not in sources or not perm.is_constant
                or tuple(_constant_ints(perm).tolist()) != NCHW_TO_NHWC):
            raise NotPatchable(f"{where}: only an NCHW->NHWC transpose of a graph input is "
                               "patched")
        src = tensors[acts[0]]
        if src.type != TensorType.INT8 or len(src.shape) != 4 or src.shape[0] != 1:
            raise NotPatchable(f"{where}: its input is not a 1xCxHxW int8 tensor")
        return StageOp(op.index, op.name, "transpose", acts, out.index)
    for i in acts:
        if not (_is_int8_map(tensors[i]) or op.name == "QUANTIZE" and _is_map(tensors[i])):
            raise NotPatchable(f"{where}: input tensor {i} is not a per-tensor int8 1xHxWxC map")
    if op.name in WINDOW_OPS:
        if len(acts) != 1 or acts[0] != op.inputs[0]:
            raise NotPatchable(f"{where}: its filter or bias is not a constant")
        return StageOp(op.index, op.name, "window", acts, out.index,
                       window=_window(model, op, tensors))
    if op.name in PAD_OPS:
        pads_t = tensors[op.inputs[1]]
        if acts != (op.inputs[0],) or not pads_t.is_constant:
            raise NotPatchable(f"{where}: its paddings or pad value are not constants")
        pads = _constant_ints(pads_t).reshape(-1, 2)
        if pads.shape != (4, 2) or pads[0].any() or pads[3].any() or (pads < 0).any():
            raise NotPatchable(f"{where} pads the batch or channel axis")
        return StageOp(op.index, op.name, "pad", acts, out.index,
                       pad_shift=(int(pads[1, 0]), int(pads[2, 0])))
    elementwise = op.name in UNARY_OPS or op.name in BINARY_OPS
    if op.name == "CONCATENATION":
        axis = op.options.axis
        if axis not in (3, -1) or len(acts) != len(ins):
            raise NotPatchable(f"{where}: only channel concatenation of activations is patched")
        elementwise = True
    if not elementwise:
        raise NotPatchable(f"{where}: {op.name} is not a patchable op (window, pad, "
                           "element-wise or channel concatenation)")
    for i in ins:
        t = tensors[i]
        if t.is_constant and not _position_free(t):
            raise NotPatchable(f"{where}: its constant input {i} varies over height/width")
        if not t.is_constant and _hw(t) != _hw(out) and op.name != "CONCATENATION":
            raise NotPatchable(f"{where} broadcasts over height/width")
        if not t.is_constant and op.name == "CONCATENATION" and _hw(t) != _hw(out):
            raise NotPatchable(f"{where}: inputs of different sizes")
    return StageOp(op.index, op.name, "elementwise", acts, out.index)


def find_stage(model: Model, split_after: int) -> Stage:
    """Operators 0..``split_after`` of subgraph 0 as a patchable stage, or NotPatchable."""
    if not model.subgraphs:
        raise NotPatchable("the model has no subgraph")
    sg = model.subgraphs[0]
    n = len(sg.operators)
    if not 0 <= split_after < n:
        raise NotPatchable(f"split point {split_after} is outside operators 0..{n - 1}")
    produced: set[int] = set()
    sources: set[int] = set()
    for op in sg.operators[:split_after + 1]:
        for i in op.inputs:
            if i >= 0 and i not in produced and not sg.tensors[i].is_constant:
                sources.add(i)
        produced.update(op.outputs)
    try:
        ops = tuple(_stage_op(model, op, sources) for op in sg.operators[:split_after + 1])
    except NotPatchable as exc:
        raise NotPatchable(str(exc), final=True) from None
    output = ops[-1].output
    later = {i for op in sg.operators[split_after + 1:] for i in op.inputs}
    later |= set(sg.outputs)
    leaks = sorted((produced - {output}) & later)
    if leaks:
        raise NotPatchable(f"stage tensors {leaks} are read after operator {split_after} (a "
                           "shortcut crosses the cut): split elsewhere")
    if not sources <= set(sg.inputs):
        raise NotPatchable(f"the stage reads tensors {sorted(sources - set(sg.inputs))} that "
                           "are neither constants nor graph inputs")
    consumers = {s: [sop for sop in ops if s in sop.activations] for s in sources}
    for s, users in consumers.items():
        if any(u.kind == "transpose" for u in users) and len(users) > 1:
            raise NotPatchable(f"graph input {s} is transposed and also read directly")
    useful = {output}
    for sop in reversed(ops):
        if sop.output in useful:
            useful.update(sop.activations)
        else:
            raise NotPatchable(f"operator {sop.index} ({sop.name}) does not feed the stage "
                               f"output (tensor {output})")
    if not any(op.kind == "window" for op in ops):
        raise NotPatchable("the stage has no convolution or pooling: nothing to patch")
    return Stage(split_after, ops, output, tuple(sorted(sources)))


def stage_splits(model: Model) -> tuple[tuple[Stage, ...], str]:
    """Every patchable stage of subgraph 0, shortest first, and why the next longer prefix
    (or, when there is none, the first) is not one: the walk stops at the first operator that
    can be part of no stage."""
    stages: list[Stage] = []
    reason = "the model has no operators"
    n = len(model.subgraphs[0].operators) if model.subgraphs else 0
    for s in range(n):
        try:
            stages.append(find_stage(model, s))
        except NotPatchable as exc:
            if not stages:
                reason = str(exc)
            if exc.final:
                return tuple(stages), str(exc)
    return tuple(stages), reason


def needed_rects(model: Model, stage: Stage, cell: Rect) -> dict[int, Rect]:
    """Tensor -> the rectangle of it (inside its map) that stage output ``cell`` needs.
    For a transposed input the rectangle is in the transpose's NHWC coordinates."""
    tensors = model.subgraphs[0].tensors
    need: dict[int, Rect] = {stage.output: cell}
    for op in reversed(stage.ops):
        if op.kind == "transpose":
            continue
        ext = input_request(op, need[op.output])
        for t in op.activations:
            req = ext.clip(*_hw(tensors[t]))
            if req.empty:  # TFLM refuses zero-sized tensors
                raise NotPatchable(f"operator {op.index} ({op.name}): a patch of its output "
                                   f"lies entirely in padding; use a coarser grid")
            need[t] = req if t not in need else need[t].union(req)
    return need


def input_request(op: StageOp, out: Rect) -> Rect:
    """What ``op`` reads of its input(s) to produce ``out``, before clipping to the map."""
    if op.kind == "window":
        assert op.window is not None
        w = op.window
        return Rect(window_input_span(out.rows, w.kernel[0], w.stride[0], w.dilation[0],
                                      w.pad_before[0]),
                    window_input_span(out.cols, w.kernel[1], w.stride[1], w.dilation[1],
                                      w.pad_before[1]))
    if op.kind == "pad":
        return out.shift(-op.pad_shift[0], -op.pad_shift[1])
    return out


# -- emitting the rewrite ---------------------------------------------------------------------

@dataclass(frozen=True)
class PatchInfo:
    """What ``patch_model`` did."""

    split_after: int
    grid: tuple[int, int]
    requested_grid: tuple[int, int]
    stage_output: int
    stage_output_shape: tuple[int, ...]
    stage_ops: tuple[str, ...]
    ops_before: int
    ops_after: int
    macs_before: int
    macs_after: int
    cuts: tuple[tuple[int, ...], tuple[int, ...]] = ((), ())  # interior row, column boundaries

    @property
    def extra_macs_percent(self) -> float:
        if self.macs_before == 0:
            return 0.0
        return 100.0 * (self.macs_after - self.macs_before) / self.macs_before

    def to_dict(self) -> dict[str, Any]:
        return {"split_after": self.split_after, "grid": list(self.grid),
                "extra_macs_percent": round(self.extra_macs_percent, 2),
                "ops_before": self.ops_before, "ops_after": self.ops_after,
                "cuts": [list(self.cuts[0]), list(self.cuts[1])]}


@dataclass(frozen=True)
class PatchedModel:
    model: bytes
    info: PatchInfo


class _Emitter:
    """Accumulates new tensors (placed into freed slots first) and new operators."""

    def __init__(self, free_slots: list[int], n_old: int) -> None:
        self.free = free_slots
        self.next_index = n_old
        self.tensors: dict[int, NewTensor] = {}
        self.ops: list[NewOperator] = []
        self._constants: dict[tuple[str, bytes, tuple[int, ...]], int] = {}  # with quantization

    def tensor(self, spec: NewTensor) -> int:
        if self.free:
            index = self.free.pop(0)
        else:
            index = self.next_index
            self.next_index += 1
        self.tensors[index] = spec
        return index

    def constant(self, name: str, values: np.ndarray, like: Tensor | None = None) -> int:
        """A small constant tensor, shared by every op asking for the same values."""
        q = like.quantization if like is not None else None
        quant = b"" if q is None else q.scale.tobytes() + q.zero_point.tobytes()
        key = (str(values.dtype), values.tobytes() + b"|" + quant, values.shape)
        if key not in self._constants:
            self._constants[key] = self.tensor(NewTensor(
                name, values.dtype, tuple(values.shape), data=values,
                scale=None if q is None else q.scale,
                zero_point=None if q is None else q.zero_point))
        return self._constants[key]

    def op(self, name: str, inputs: tuple[int, ...], outputs: tuple[int, ...],
           options: Mapping[str, Any] | None = None, version: int = 1) -> None:
        self.ops.append(NewOperator(name, inputs, outputs, dict(options or {}),
                                    version=version))


def _map_like(t: Tensor, name: str, rect: Rect, channels: int | None = None) -> NewTensor:
    """A new 1 x h x w x C tensor quantized exactly like ``t`` (or not, like ``t``)."""
    q = t.quantization
    c = t.shape[3] if channels is None else channels
    shape = (1, rect.rows.size, rect.cols.size, c)
    if q is None or not q.scale.size:
        return NewTensor(name, t.type, shape)
    return NewTensor(name, t.type, shape, scale=q.scale, zero_point=q.zero_point,
                     quantized_dimension=q.quantized_dimension)


def _slice(em: _Emitter, src: int, begin: tuple[int, ...], end: tuple[int, ...],
           out: int) -> None:
    b = em.constant("patch/begin", np.array(begin, np.int32))
    e = em.constant("patch/end", np.array(end, np.int32))
    s = em.constant("patch/strides", np.ones(len(begin), np.int32))
    em.op("STRIDED_SLICE", (src, b, e, s), (out,))


def _pad(em: _Emitter, src: int, pads: tuple[tuple[int, int], tuple[int, int]], out: int,
         value: int | None = None, like: Tensor | None = None) -> None:
    paddings = np.array([[0, 0], list(pads[0]), list(pads[1]), [0, 0]], np.int32)
    p = em.constant("patch/paddings", paddings)
    if value is None:
        em.op("PAD", (src, p), (out,))
    else:
        v = em.constant("patch/pad_value", np.array([value], np.int8), like=like)
        em.op("PADV2", (src, p, v), (out,))


def _pads_of(ext: Rect, req: Rect) -> tuple[tuple[int, int], tuple[int, int]]:
    return ((req.rows.start - ext.rows.start, ext.rows.stop - req.rows.stop),
            (req.cols.start - ext.cols.start, ext.cols.stop - req.cols.stop))


def _same_quant(a: Tensor, b: Tensor) -> bool:
    qa, qb = a.quantization, b.quantization
    return (qa is not None and qb is not None and np.array_equal(qa.scale, qb.scale)
            and np.array_equal(qa.zero_point, qb.zero_point))


def _options(op: Operator, **changes: Any) -> dict[str, Any]:
    if op.options is None:
        return dict(changes)
    options = op.options
    values = (dataclasses.asdict(options) if dataclasses.is_dataclass(options)
              and not isinstance(options, type) else {})
    values.update(changes)
    return values


def _emit_patch(em: _Emitter, model: Model, stage: Stage, cell: Rect, tag: str) -> int:
    """Emit the stage for one cell; returns the new tensor holding O's cell."""
    sg = model.subgraphs[0]
    tensors = sg.tensors
    need = needed_rects(model, stage, cell)
    have: dict[int, tuple[int, Rect]] = {}  # stage tensor -> (new tensor, its rectangle)
    crops: dict[tuple[int, Rect], int] = {}

    def operand(t: int, req: Rect) -> int:
        """New tensor holding exactly rectangle ``req`` of stage tensor ``t``."""
        if t not in have:  # a graph input: slice what this cell needs of it
            rect = need[t]
            index = em.tensor(_map_like(tensors[t], f"{tensors[t].name}/{tag}", rect))
            c = tensors[t].shape[3]
            _slice(em, t, (0, rect.rows.start, rect.cols.start, 0),
                   (1, rect.rows.stop, rect.cols.stop, c), index)
            have[t] = (index, rect)
        index, rect = have[t]
        if rect == req:
            return index
        if (t, req) not in crops:
            crop = em.tensor(_map_like(tensors[t], f"{tensors[t].name}/{tag}/crop", req))
            c = tensors[t].shape[3]
            r0, c0 = req.rows.start - rect.rows.start, req.cols.start - rect.cols.start
            _slice(em, index, (0, r0, c0, 0), (1, r0 + req.rows.size, c0 + req.cols.size, c),
                   crop)
            crops[(t, req)] = crop
        return crops[(t, req)]

    for sop in stage.ops:
        op = sg.operators[sop.index]
        out_t = tensors[sop.output]
        n = need[sop.output]
        name = f"{out_t.name}/{tag}"
        if sop.kind == "transpose":
            src = tensors[sop.activations[0]]
            sliced = em.tensor(NewTensor(f"{src.name}/{tag}", src.type,
                                         (1, src.shape[1], n.rows.size, n.cols.size),
                                         scale=None if src.quantization is None
                                         else src.quantization.scale,
                                         zero_point=None if src.quantization is None
                                         else src.quantization.zero_point))
            _slice(em, src.index, (0, 0, n.rows.start, n.cols.start),
                   (1, src.shape[1], n.rows.stop, n.cols.stop), sliced)
            out = em.tensor(_map_like(out_t, name, n))
            em.op("TRANSPOSE", (sliced, op.inputs[1]), (out,), version=op.version)
            have[sop.output] = (out, n)
            continue
        ext = input_request(sop, n)
        if sop.kind == "window":
            t = sop.activations[0]
            req = ext.clip(*_hw(tensors[t]))
            x = operand(t, req)
            if ext != req:
                padded = em.tensor(_map_like(tensors[t], f"{tensors[t].name}/{tag}/pad", ext))
                fill = INT8_MIN if op.name == "MAX_POOL_2D" else None
                _pad(em, x, _pads_of(ext, req), padded, fill, tensors[t])
                x = padded
            out = em.tensor(_map_like(out_t, name, n))
            inputs = (x,) + tuple(op.inputs[1:])
            em.op(op.name, inputs, (out,), _options(op, padding="VALID"), op.version)
        elif sop.kind == "pad":
            t = sop.activations[0]
            req = ext.clip(*_hw(tensors[t]))
            x = operand(t, req)
            pads = _pads_of(ext, req)
            if pads == ((0, 0), (0, 0)) and _same_quant(tensors[t], out_t):
                have[sop.output] = (x, n)
                continue
            out = em.tensor(_map_like(out_t, name, n))
            p = em.constant("patch/paddings", np.array(
                [[0, 0], list(pads[0]), list(pads[1]), [0, 0]], np.int32))
            em.op(op.name, (x, p) + tuple(op.inputs[2:]), (out,), _options(op), op.version)
        else:
            inputs = tuple(operand(i, n) if i in sop.activations else i for i in op.inputs)
            out = em.tensor(_map_like(out_t, name, n))
            em.op(op.name, inputs, (out,), _options(op), op.version)
        have[sop.output] = (out, n)
    index, rect = have[stage.output]
    assert rect == cell
    return index


def op_macs(model: Model, op: Operator, subgraph: int = 0) -> int:
    """Multiply-accumulates of one conv / depthwise / fully-connected / transpose-conv op."""
    tensors = model.subgraphs[subgraph].tensors
    if not op.outputs or op.outputs[0] < 0:
        return 0
    out = int(np.prod(tensors[op.outputs[0]].shape, dtype=np.int64))
    if op.name == "CONV_2D" and len(op.inputs) > 1:
        f = tensors[op.inputs[1]].shape
        return out * int(np.prod(f[1:], dtype=np.int64))
    if op.name == "DEPTHWISE_CONV_2D" and len(op.inputs) > 1:
        f = tensors[op.inputs[1]].shape
        return out * int(f[1]) * int(f[2])
    if op.name == "FULLY_CONNECTED" and len(op.inputs) > 1:
        f = tensors[op.inputs[1]].shape
        return out * int(f[-1])
    if op.name == "TRANSPOSE_CONV" and len(op.inputs) > 2:
        f = tensors[op.inputs[1]].shape
        x = int(np.prod(tensors[op.inputs[2]].shape, dtype=np.int64))
        return x * int(np.prod(f[:3], dtype=np.int64))
    return 0


def model_macs(model: Model) -> int:
    """Multiply-accumulates of one invoke of subgraph 0 (the ops ``op_macs`` counts)."""
    if not model.subgraphs:
        return 0
    return sum(op_macs(model, op) for op in model.subgraphs[0].operators)


def _stage_macs(model: Model, stage: Stage, cells: list[Rect]) -> int:
    """MACs of the patched stage: each window op over the union of its per-cell outputs."""
    sg = model.subgraphs[0]
    total = 0
    for cell in cells:
        need = needed_rects(model, stage, cell)
        for sop in stage.ops:
            op = sg.operators[sop.index]
            full = _hw(sg.tensors[sop.output])
            per_pixel = op_macs(model, op) // max(full[0] * full[1], 1)
            r = need[sop.output]
            total += per_pixel * r.rows.size * r.cols.size
    return total


def _cells(height: int, width: int, grid: tuple[int, int]) -> list[Rect]:
    return [Rect(r, c) for r in grid_spans(height, grid[0]) for c in grid_spans(width, grid[1])]


def patch_macs(model: Model, stage: Stage, grid: tuple[int, int]) -> int:
    """MACs of one invoke of the model patched at ``stage`` with ``grid`` (clamped); computed
    without writing the model, for pruning a search."""
    tensors = model.subgraphs[0].tensors
    h, w = _hw(tensors[stage.output])
    grid = clamp_grid(grid, h, w)
    before = model_macs(model)
    stage_before = sum(op_macs(model, model.subgraphs[0].operators[i])
                       for i in stage.op_indices)
    return before - stage_before + _stage_macs(model, stage, _cells(h, w, grid))


def patch_record(model: Model) -> dict[str, Any] | None:
    """The ``tinyarena.patches`` metadata of a patched model (None when it has none)."""
    found = None
    for name, buffer in model.metadata:
        if name == PATCHES_METADATA and 0 <= buffer < len(model.buffers):
            found = buffer
    if found is None:
        return None
    try:
        data = json.loads(bytes(model.buffers[found]).decode())
    except (ValueError, UnicodeDecodeError):
        return None
    return data if isinstance(data, dict) else None


def patch_model(source: bytes | bytearray | memoryview | str | os.PathLike[str] | Model,
                split_after: int, grid: tuple[int, int],
                cuts: tuple[tuple[int, ...], tuple[int, ...]] | None = None) -> PatchedModel:
    """The model with operators 0..``split_after`` of subgraph 0 run as a ``grid`` (rows,
    columns) of patches, clamped to the stage output's size. ``cuts``: interior row and column
    boundaries instead of even cuts (uneven patches; ``grid`` is then ignored). NotPatchable
    when the stage cannot be patched or the grid is 1 x 1."""
    model = source if isinstance(source, Model) else read_model(source)
    stage = find_stage(model, split_after)
    sg = model.subgraphs[0]
    tensors = sg.tensors
    out_t = tensors[stage.output]
    h, w = _hw(out_t)
    requested = (int(grid[0]), int(grid[1]))
    if min(requested) < 1:
        raise NotPatchable(f"grid {requested[0]}x{requested[1]}: give at least one row and "
                           "one column")
    used = clamp_grid(requested, h, w)
    if cuts is not None:
        rows, cols = spans_from_cuts(h, tuple(cuts[0])), spans_from_cuts(w, tuple(cuts[1]))
        if max(len(rows), len(cols)) > MAX_CONCAT_INPUTS:
            raise NotPatchable(f"cuts give {len(rows)}x{len(cols)} patches; CONCATENATION "
                               f"takes at most {MAX_CONCAT_INPUTS} inputs")
        used = (len(rows), len(cols))
    else:
        rows, cols = grid_spans(h, used[0]), grid_spans(w, used[1])
    if used == (1, 1):
        raise NotPatchable(f"grid {used[0]}x{used[1]} (stage output {h}x{w}) is one patch: "
                           "nothing to rewrite")
    stage_ops = set(stage.op_indices)
    intermediates = {op.output for op in stage.ops} - {stage.output}
    referenced_later = {i for op in sg.operators[split_after + 1:]
                        for i in (*op.inputs, *op.outputs, *op.intermediates)}
    referenced_later |= set(sg.inputs) | set(sg.outputs)
    pad_constants = {sg.operators[op.index].inputs[1] for op in stage.ops if op.kind == "pad"}
    free = sorted((intermediates | pad_constants) - referenced_later)
    em = _Emitter(list(free), len(tensors))
    cells = [Rect(r, c) for r in rows for c in cols]
    row_outputs: list[int] = []
    for r, row in enumerate(rows):
        patch_outputs = [_emit_patch(em, model, stage, Rect(row, col), f"patch_{r}_{c}")
                         for c, col in enumerate(cols)]
        if len(cols) == 1:
            row_outputs.append(patch_outputs[0])
            continue
        target = stage.output if len(rows) == 1 else em.tensor(
            _map_like(out_t, f"{out_t.name}/row_{r}", Rect(row, Span(0, w))))
        em.op("CONCATENATION", tuple(patch_outputs), (target,), {"axis": 2})
        row_outputs.append(target)
    if len(rows) > 1:
        em.op("CONCATENATION", tuple(row_outputs), (stage.output,), {"axis": 1})
    if em.free:
        raise NotPatchable(f"internal: {len(em.free)} freed tensor slots left unused")
    table: list[int | NewTensor] = []
    for i in range(em.next_index):
        table.append(em.tensors[i] if i in em.tensors else i)
    operators: list[int | NewOperator] = [*em.ops]
    operators.extend(i for i in range(len(sg.operators)) if i not in stage_ops)
    rep = SubgraphReplacement(tuple(table), tuple(operators), tuple(sg.inputs),
                              tuple(sg.outputs))
    macs_before = model_macs(model)
    macs_after = (macs_before - sum(op_macs(model, sg.operators[i]) for i in stage_ops)
                  + _stage_macs(model, stage, cells))
    info = PatchInfo(split_after, used, requested, stage.output, tuple(out_t.shape),
                     tuple(sg.operators[i].name for i in stage.op_indices),
                     len(sg.operators), len(operators), macs_before, macs_after,
                     (tuple(r.start for r in rows[1:]), tuple(c.start for c in cols[1:])))
    record = {**info.to_dict(), "format": 1, "requested_grid": list(requested),
              "stage_output": stage.output, "stage_output_shape": list(out_t.shape),
              "stage_ops": list(info.stage_ops)}
    metadata: dict[str, bytes | int] = {
        PATCHES_METADATA: json.dumps(record, sort_keys=True).encode()}
    if offline_plan(model) is not None:  # its offsets count the old tensors: plan all online
        count = model.tensor_count - len(tensors) + len(table)
        metadata[OFFLINE_PLAN_NAME] = encode_offline_plan([-1] * count, len(model.subgraphs))
    data = rewrite_model(model, subgraph_replacements={0: rep}, metadata=metadata)
    return PatchedModel(data, info)


__all__ = [
    "MAX_CONCAT_INPUTS", "NotPatchable", "PATCHES_METADATA", "PatchInfo", "PatchedModel",
    "Rect", "Span", "Stage", "StageOp", "Window", "clamp_grid", "effective_kernel",
    "find_stage", "grid_spans", "input_request", "model_macs", "needed_rects", "op_macs",
    "patch_macs", "patch_model", "patch_record", "same_padding", "stage_splits",
    "window_input_span", "window_output_size",
]
