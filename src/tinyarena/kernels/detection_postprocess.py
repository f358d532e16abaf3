"""TFLite_Detection_PostProcess (custom op): TFLM's detection_postprocess.cc.

SSD post-processing: decode the box encodings against the anchors, then non-max suppression,
either "fast" (one pass over each box's best classes) or "regular" (per class, then merged).
Inputs: box encodings [1, boxes, >=4], class scores [1, boxes, classes (+ background)],
anchors [boxes, 4], all float32 (TFLM's Eval refuses other types). Outputs (float32): boxes
[.., max_detections, 4], classes, scores, and the number of detections.

Options: the custom options' flexbuffer map (max_detections, max_classes_per_detection,
detections_per_class (default 100), use_regular_nms (default false), nms_score_threshold,
nms_iou_threshold, num_classes, y_scale, x_scale, h_scale, w_scale); a missing key reads as 0.

Arithmetic, as the reference runs it:

* decoding in double (center = encoding / scale * anchor size + anchor center; half size =
  0.5 * exp(encoding / scale) * anchor size), each rounded to float32, then the corners in
  float32. exp is numpy's double exp, which agrees with glibc's to the last bit of the double
  in practice and certainly after the rounding to float32.
* a box is kept for a class when its score >= the score threshold; candidates are ordered by
  decreasing score, ties in index order (TFLM's stable merge sort and its partial sort with
  the index as tie-break agree on that), and greedily suppressed when their IoU (float32, as
  ComputeIntersectionOverUnion) with a selected box exceeds the IoU threshold.
* fast NMS writes each selected box's classes at ``k * n + col`` where n counts the outputs
  written so far (TFLM's indexing; with one class per detection that is 0, 1, 2, ...), and
  leaves the other output positions as they were; regular NMS zero-fills the remainder.

Allocation: init allocates the OpData (112 bytes on every profile); prepare takes the three
inputs as temp tensors and requests eleven scratch buffers in TFLM's order (candidate flags,
decoded boxes, scores, score buffer, kept scores, regular-NMS scores, sorted values, kept
indices, sorted indices, class/detection buffer, selected indices). No builtin data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from flatbuffers import flexbuffers

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration
from tinyarena.model.types import Operator, TensorType

BOX_ENCODINGS, CLASS_PREDICTIONS, ANCHORS = 0, 1, 2
OUT_BOXES, OUT_CLASSES, OUT_SCORES, OUT_NUM = 0, 1, 2, 3
NUM_COORD = 4
DEFAULT_DETECTIONS_PER_CLASS = 100
F32 = np.float32


@dataclass(frozen=True)
class Options:
    max_detections: int
    max_classes_per_detection: int
    detections_per_class: int
    use_regular_nms: bool
    score_threshold: float
    iou_threshold: float
    num_classes: int
    y_scale: float
    x_scale: float
    h_scale: float
    w_scale: float


@dataclass(frozen=True)
class OpData:
    options: Options
    num_boxes: int
    encoding_size: int
    classes_with_background: int


def _int32(value: object) -> int:
    """flexbuffers Reference::AsInt32: numbers converted (floats truncated), else 0."""
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, (int, float)) and np.isfinite(value):
        return int(np.array(int(value)).astype(np.int64).astype(np.int32))
    return 0


def _float(value: object) -> float:
    if isinstance(value, (bool, int, float)):
        return float(F32(value))
    return 0.0


def parse_options(op: Operator) -> Options:
    """DetectionPostProcessInit's reads of the flexbuffer map."""
    try:
        m = flexbuffers.Loads(bytes(op.custom_options or b""))
    except Exception as exc:
        raise KernelError(f"TFLite_Detection_PostProcess: cannot read its custom options as a "
                          f"flexbuffer map ({type(exc).__name__}: {exc}); the model needs them")
    if not isinstance(m, dict):
        raise KernelError("TFLite_Detection_PostProcess: its custom options are not a "
                          "flexbuffer map")
    per_class = m.get("detections_per_class")
    regular = m.get("use_regular_nms")
    return Options(
        max_detections=_int32(m.get("max_detections")),
        max_classes_per_detection=_int32(m.get("max_classes_per_detection")),
        detections_per_class=DEFAULT_DETECTIONS_PER_CLASS if per_class is None
        else _int32(per_class),
        use_regular_nms=False if regular is None else bool(regular),
        score_threshold=_float(m.get("nms_score_threshold")),
        iou_threshold=_float(m.get("nms_iou_threshold")),
        num_classes=_int32(m.get("num_classes")),
        y_scale=_float(m.get("y_scale")), x_scale=_float(m.get("x_scale")),
        h_scale=_float(m.get("h_scale")), w_scale=_float(m.get("w_scale")))


def init(ctx: InitContext, op: Operator) -> None:
    """DetectionPostProcessInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataDetectionPostProcess"))


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """DetectionPostProcessPrepare: temp inputs, then the eleven scratch requests."""
    if len(op.inputs) != 3:
        raise KernelError(f"TFLite_Detection_PostProcess takes 3 inputs (box encodings, class "
                          f"predictions, anchors); got {len(op.inputs)}")
    for index in op.inputs:
        ctx.allocate_temp_tensor(index)
    boxes, classes, anchors = (ctx.tensor(i) for i in op.inputs)
    if boxes is None or classes is None or anchors is None:
        raise KernelError("TFLite_Detection_PostProcess needs all three input tensors")
    if len(boxes.shape) != 3 or len(classes.shape) != 3 or len(anchors.shape) != 2:
        raise KernelError(f"TFLite_Detection_PostProcess needs 3-D box encodings and class "
                          f"predictions and 2-D anchors; got {boxes.shape}, {classes.shape}, "
                          f"{anchors.shape}")
    if len(op.outputs) != 4:
        raise KernelError(f"TFLite_Detection_PostProcess has 4 outputs; got {len(op.outputs)}")
    options = parse_options(op)
    n = int(boxes.shape[1])
    max_det = options.max_detections
    f = 4  # sizeof(float) == sizeof(int)
    for nbytes in (n, n * NUM_COORD * f, int(classes.shape[1]) * int(classes.shape[2]) * f,
                   n * f, n * f, max_det * n * f, max_det * n * f, n * f, max_det * n * f,
                   max(options.num_classes, max_det) * n * f, min(n, max_det) * n * f):
        ctx.request_scratch(nbytes)
    return OpData(options, n, int(boxes.shape[2]), int(classes.shape[2]))


def decode_boxes(encodings: np.ndarray, anchors: np.ndarray, o: Options) -> np.ndarray:
    """DecodeCenterSizeBoxes: (boxes, 4) float32 corners ymin, xmin, ymax, xmax."""
    e = encodings[:, :NUM_COORD].astype(np.float64)
    a = anchors[:, :NUM_COORD].astype(np.float64)  # y, x, h, w
    ycenter = (e[:, 0] / float(o.y_scale) * a[:, 2] + a[:, 0]).astype(F32)
    xcenter = (e[:, 1] / float(o.x_scale) * a[:, 3] + a[:, 1]).astype(F32)
    half_h = (0.5 * np.exp(e[:, 2] / float(o.h_scale)) * a[:, 2]).astype(F32)
    half_w = (0.5 * np.exp(e[:, 3] / float(o.w_scale)) * a[:, 3]).astype(F32)
    return np.stack([ycenter - half_h, xcenter - half_w, ycenter + half_h, xcenter + half_w],
                    axis=1).astype(F32)


def _iou(boxes: np.ndarray, i: int, others: np.ndarray) -> np.ndarray:
    """ComputeIntersectionOverUnion(i, j) for every j in ``others``, in float32."""
    bi, bj = boxes[i], boxes[others]
    area_i = (bi[2] - bi[0]) * (bi[3] - bi[1])
    area_j = (bj[:, 2] - bj[:, 0]) * (bj[:, 3] - bj[:, 1])
    ymin = np.where(bi[0] < bj[:, 0], bj[:, 0], bi[0])  # std::max<float>
    xmin = np.where(bi[1] < bj[:, 1], bj[:, 1], bi[1])
    ymax = np.where(bj[:, 2] < bi[2], bj[:, 2], bi[2])  # std::min<float>
    xmax = np.where(bj[:, 3] < bi[3], bj[:, 3], bi[3])
    dy, dx = ymax - ymin, xmax - xmin
    inter = np.where(dy < 0, F32(0), dy) * np.where(dx < 0, F32(0), dx)
    iou = inter / ((area_i + area_j) - inter)
    return np.where((area_i <= 0) | (area_j <= 0), F32(0), iou).astype(F32)


def decreasing_order(values: np.ndarray) -> np.ndarray:
    """Indices by decreasing value, equal values in index order."""
    return np.argsort(-values.astype(np.float64), kind="stable")


def single_class_nms(boxes: np.ndarray, scores: np.ndarray, o: Options,
                     max_detections: int) -> list[int]:
    """NonMaxSuppressionSingleClassHelper: the selected box indices, best first."""
    if max_detections < 0 or not (0.0 < o.iou_threshold <= 1.0):
        raise KernelError("TFLite_Detection_PostProcess: max detections must be >= 0 and the "
                          f"IoU threshold in (0, 1]; got {max_detections} and "
                          f"{o.iou_threshold}")
    if np.any(boxes[:, 0] >= boxes[:, 2]) or np.any(boxes[:, 1] >= boxes[:, 3]):
        raise KernelError("TFLite_Detection_PostProcess: a decoded box has ymin >= ymax or "
                          "xmin >= xmax; TFLM fails the invoke on such boxes")
    keep = np.nonzero(scores >= F32(o.score_threshold))[0]
    candidates = keep[decreasing_order(scores[keep])]
    output_size = min(len(candidates), max_detections)
    active = np.ones(len(candidates), bool)
    selected: list[int] = []
    for i in range(len(candidates)):
        if len(selected) >= output_size or not active.any():
            break
        if not active[i]:
            continue
        selected.append(int(candidates[i]))
        active[i] = False
        rest = np.nonzero(active[i + 1:])[0] + i + 1
        if rest.size:
            iou = _iou(boxes, int(candidates[i]), candidates[rest])
            active[rest[iou > F32(o.iou_threshold)]] = False
    return selected


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """DetectionPostProcessEval."""
    for index in op.inputs[:2]:
        t = ctx.tensor(index)
        if t is None or t.type != TensorType.FLOAT32:
            raise KernelError("TFLite_Detection_PostProcess supports float32 box encodings and "
                              "class predictions only in TFLM")
    o = data.options
    n, ncwb = data.num_boxes, data.classes_with_background
    encodings = ctx.tensor_data(op.inputs[BOX_ENCODINGS]).reshape(n, data.encoding_size)
    anchors = ctx.tensor_data(op.inputs[ANCHORS]).reshape(n, -1)
    scores = ctx.tensor_data(op.inputs[CLASS_PREDICTIONS]).reshape(n, ncwb)
    label_offset = ncwb - o.num_classes
    if not 0 <= label_offset <= 1:
        raise KernelError(f"TFLite_Detection_PostProcess: {ncwb} score columns for "
                          f"{o.num_classes} classes; TFLM allows at most one background class")
    boxes = decode_boxes(encodings, anchors, o)
    out_boxes = ctx.tensor_data(op.outputs[OUT_BOXES]).reshape(-1, NUM_COORD)
    out_classes = ctx.tensor_data(op.outputs[OUT_CLASSES]).reshape(-1)
    out_scores = ctx.tensor_data(op.outputs[OUT_SCORES]).reshape(-1)
    out_num = ctx.tensor_data(op.outputs[OUT_NUM]).reshape(-1)
    class_scores = scores[:, label_offset:label_offset + o.num_classes]
    if o.use_regular_nms:
        _regular(boxes, class_scores, o, out_boxes, out_classes, out_scores, out_num)
    else:
        _fast(boxes, class_scores, o, out_boxes, out_classes, out_scores, out_num)


def _regular(boxes: np.ndarray, class_scores: np.ndarray, o: Options, out_boxes: np.ndarray,
             out_classes: np.ndarray, out_scores: np.ndarray, out_num: np.ndarray) -> None:
    """NonMaxSuppressionMultiClassRegularHelper."""
    if o.detections_per_class <= 0:
        raise KernelError("TFLite_Detection_PostProcess: detections_per_class must be > 0")
    kept_box = np.zeros(0, np.int64)
    kept_class = np.zeros(0, np.int64)
    kept_score = np.zeros(0, F32)
    for col in range(o.num_classes):
        column = class_scores[:, col]
        selected = np.array(single_class_nms(boxes, column, o, o.detections_per_class),
                            np.int64)
        all_box = np.concatenate([kept_box, selected])
        all_class = np.concatenate([kept_class, np.full(selected.size, col, np.int64)])
        all_score = np.concatenate([kept_score, column[selected]]).astype(F32)
        order = decreasing_order(all_score)[:min(all_score.size, o.max_detections)]
        kept_box, kept_class, kept_score = all_box[order], all_class[order], all_score[order]
    count = kept_box.size
    _check_room(out_boxes, max(o.max_detections, 0))
    out_boxes[:count] = boxes[kept_box]
    out_classes[:count] = kept_class.astype(F32)
    out_scores[:count] = kept_score
    out_boxes[count:o.max_detections] = 0.0
    out_classes[count:o.max_detections] = 0.0
    out_scores[count:o.max_detections] = 0.0
    out_num[0] = F32(count)


def _fast(boxes: np.ndarray, class_scores: np.ndarray, o: Options, out_boxes: np.ndarray,
          out_classes: np.ndarray, out_scores: np.ndarray, out_num: np.ndarray) -> None:
    """NonMaxSuppressionMultiClassFastHelper."""
    if o.max_classes_per_detection <= 0:
        raise KernelError("TFLite_Detection_PostProcess: max_classes_per_detection must be > 0")
    per_anchor = min(o.max_classes_per_detection, o.num_classes)
    order = np.argsort(-class_scores.astype(np.float64), axis=1, kind="stable")[:, :per_anchor]
    max_scores = np.take_along_axis(class_scores, order[:, :1], axis=1)[:, 0]
    selected = single_class_nms(boxes, max_scores, o, o.max_detections)
    written = 0
    for box in selected:
        for col in range(per_anchor):
            offset = per_anchor * written + col
            _check_room(out_boxes, offset + 1)
            cls = int(order[box, col])
            out_boxes[offset] = boxes[box]
            out_classes[offset] = F32(cls)
            out_scores[offset] = class_scores[box, cls]
            written += 1
    out_num[0] = F32(written)


def _check_room(out_boxes: np.ndarray, needed: int) -> None:
    if needed > out_boxes.shape[0]:
        raise KernelError(f"TFLite_Detection_PostProcess writes detection {needed - 1}, but "
                          f"the outputs hold {out_boxes.shape[0]}; TFLM would write past them")


REGISTRATION = Registration("TFLite_Detection_PostProcess", init=init, prepare=prepare,
                            eval=eval_, builtin_data=None)
