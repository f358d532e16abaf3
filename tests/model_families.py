"""Builder-made stand-ins for the families of real TFLM models users bring: streaming wake-word
models (microWakeWord), keyword spotters (DS-CNN, MicroNet), small image classifiers
(MobileNet v1/v2, ST model zoo), activity recognition (conv + LSTM) and audio front ends.

Each builder reproduces what the real exporter writes: per-channel int8 convolution weights
(quantized_dimension 0 for CONV_2D, 3 for DEPTHWISE_CONV_2D), int32 biases whose scale is
input scale times weight scale, int8 activations with the scales and zero points TFLite's
converter picks (e.g. LOGISTIC and SOFTMAX outputs at 1/256 with zero point -128), resource
variables initialised by a CALL_ONCE subgraph, float32 variants.
"""

from __future__ import annotations

from typing import Callable

import numpy as np
from flatbuffers import flexbuffers

from tinyarena.builder import ModelBuilder
from tinyarena.builder.model_builder import SubgraphBuilder

I8 = "int8"
F32 = "float32"
Q = tuple[float, int]  # (scale, zero_point) of an int8 activation


def _out_len(n: int, k: int, stride: int, padding: str, dilation: int = 1) -> int:
    eff = (k - 1) * dilation + 1
    return -(-n // stride) if padding == "SAME" else -(-(n - eff + 1) // stride)


class Net:
    """A subgraph under construction that tracks shapes and int8 quantization, so layers can
    be chained like a Keras model (the exporter's naming aside)."""

    def __init__(self, b: SubgraphBuilder, rng: np.random.Generator, quant: bool) -> None:
        self.b, self.rng, self.quant = b, rng, quant
        self.q: dict[int, Q] = {}
        self.weight_scales: dict[int, np.ndarray] = {}
        self.n = 0

    def _name(self, kind: str) -> str:
        self.n += 1
        return f"{kind}_{self.n}"

    @property
    def dtype(self) -> str:
        return I8 if self.quant else F32

    def act(self, shape: tuple[int, ...], q: Q | None = None, kind: str = "t") -> int:
        if not self.quant:
            return self.b.add_tensor(self._name(kind), shape, F32)
        q = q or (float(self.rng.uniform(0.02, 0.08)), int(self.rng.integers(-128, -100)))
        t = self.b.add_tensor(self._name(kind), shape, I8, scale=q[0], zero_point=q[1])
        self.q[t] = q
        return t

    def input(self, shape: tuple[int, ...], q: Q = (0.1, -128)) -> int:
        t = self.act(shape, q, "input")
        self.b.mark_input(t)
        return t

    def shape(self, t: int) -> tuple[int, ...]:
        return self.b.tensor_shape(t)

    def _weights(self, shape: tuple[int, ...], channel_axis: int, x: int,
                 spread: float | None = None) -> tuple[int, int]:
        """Weights and bias; ``spread``: scale the int8 weights so the layer's real outputs
        have about that standard deviation (logits of a trained head)."""
        cout = shape[channel_axis]
        if not self.quant:
            w = self.rng.normal(0, 0.3, shape).astype(np.float32)
            bias = self.rng.normal(0, 0.1, cout).astype(np.float32)
            return self.b.add_constant(self._name("w"), w), self.b.add_constant(
                self._name("b"), bias)
        scales = self.rng.uniform(0.002, 0.02, cout).astype(np.float32)
        if spread is not None:
            fan_in = int(np.prod(shape)) // cout
            scales *= np.float32(spread / (np.sqrt(fan_in) * 73 * 40 * self.q[x][0]
                                           * float(np.mean(scales))))
        w = self.rng.integers(-127, 128, shape).astype(np.int8)
        wt = self.b.add_constant(self._name("w"), w, scale=scales, zero_point=0,
                                 quantized_dimension=channel_axis)
        self.weight_scales[wt] = scales
        bias_scale = (np.float32(self.q[x][0]) * scales).astype(np.float32)
        bias = self.rng.integers(-2000, 2000, cout).astype(np.int32)
        bt = self.b.add_constant(self._name("b"), bias, scale=bias_scale, zero_point=0)
        return wt, bt

    def _calibrated(self, x: int, w: int, fan_in: int, act: str) -> Q:
        """An output scale as post-training calibration would pick it: about three standard
        deviations of the accumulator (int8 inputs and weights of spread ~40 and ~73) fill the
        int8 range, so outputs neither saturate nor collapse."""
        w_scale = float(np.mean(self.weight_scales[w]))
        scale = 3 * np.sqrt(fan_in) * 73 * 40 * self.q[x][0] * w_scale / 127
        return float(scale), -128 if act in ("RELU", "RELU6") else 0

    def conv(self, x: int, cout: int, k: tuple[int, int], stride: int = 1,
             padding: str = "SAME", act: str = "RELU", depthwise: bool = False,
             q: Q | None = None, spread: float | None = None) -> int:
        n, h, w, cin = self.shape(x)
        if depthwise:
            wt, bt = self._weights((1, k[0], k[1], cin), 3, x)
            cout = cin
        else:
            wt, bt = self._weights((cout, k[0], k[1], cin), 0, x, spread)
        if self.quant and q is None:
            q = self._calibrated(x, wt, k[0] * k[1] * (1 if depthwise else cin), act)
        y = self.act((n, _out_len(h, k[0], stride, padding),
                      _out_len(w, k[1], stride, padding), cout), q, "conv")
        opts = dict(padding=padding, stride_w=stride, stride_h=stride,
                    fused_activation_function=act)
        if depthwise:
            self.b.add_operator("DEPTHWISE_CONV_2D", [x, wt, bt], [y], depth_multiplier=1,
                                **opts)
        else:
            self.b.add_operator("CONV_2D", [x, wt, bt], [y], **opts)
        return y

    def fc(self, x: int, units: int, act: str = "NONE", q: Q | None = None) -> int:
        shape = self.shape(x)
        wt, bt = self._weights((units, shape[-1]), 0, x)
        if self.quant:  # TFLite's converter writes per-tensor FULLY_CONNECTED weights
            b = self.b
            # a trained classifier's logits spread over a few units: weights scaled to match
            scale = 1.5 / (np.sqrt(shape[-1]) * 73 * 40 * self.q[x][0])
            wt = b.add_constant(self._name("fcw"), self.rng.integers(-127, 128, (
                units, shape[-1])).astype(np.int8), scale=scale, zero_point=0)
            bt = b.add_constant(self._name("fcb"), self.rng.integers(-3000, 3000, units)
                                .astype(np.int32), scale=scale * self.q[x][0], zero_point=0)
            self.weight_scales[wt] = np.array([scale], np.float32)
            q = q or self._calibrated(x, wt, shape[-1], act)
        y = self.act(shape[:-1] + (units,), q, "fc")
        self.b.add_operator("FULLY_CONNECTED", [x, wt, bt], [y], fused_activation_function=act)
        return y

    def reshape(self, x: int, shape: tuple[int, ...]) -> int:
        y = self.act(shape, self.q.get(x), "reshape")
        s = self.b.add_constant(self._name("shape"), np.array(shape, np.int32))
        self.b.add_operator("RESHAPE", [x, s], [y], new_shape=list(shape))
        return y

    def op(self, name: str, inputs: list[int | None], shape: tuple[int, ...],
           q: Q | None = None, **options: object) -> int:
        y = self.act(shape, q, name.lower())
        self.b.add_operator(name, inputs, [y], **options)
        return y

    def const_i32(self, values: list[int]) -> int:
        return self.b.add_constant(self._name("c"), np.array(values, np.int32))

    def softmax(self, x: int) -> int:
        return self.op("SOFTMAX", [x], self.shape(x), (1 / 256, -128), beta=1.0)

    def logistic(self, x: int) -> int:
        return self.op("LOGISTIC", [x], self.shape(x), (1 / 256, -128))


def flex(**attributes: object) -> bytes:
    """A custom op's options as TensorFlow's converter writes them: a flexbuffer map."""
    return bytes(flexbuffers.Dumps(attributes))


# -- wake word (microWakeWord) ----------------------------------------------------------------

def _ring(net: Net, init: SubgraphBuilder, x: int, keep: int, name: str) -> int:
    """microWakeWord's Stream layer: concatenate the stored last ``keep`` frames with the new
    ones along time, store the newest ``keep`` back, return the concatenation."""
    b = net.b
    n, t, w, c = net.shape(x)
    q = net.q.get(x)
    extra = {} if q is None else {"scale": q[0], "zero_point": q[1]}
    zero = np.full((n, keep, w, c), 0 if q is None else q[1],
                   np.int8 if net.quant else np.float32)
    ih = init.add_tensor(f"{name}_init_handle", (), "resource")
    init.add_operator("VAR_HANDLE", [], [ih], container="", shared_name=name)
    init.add_operator("ASSIGN_VARIABLE", [ih, init.add_constant(f"{name}_zeros", zero,
                                                                 **extra)], [])
    h = b.add_tensor(f"{name}_handle", (), "resource")
    b.add_operator("VAR_HANDLE", [], [h], container="", shared_name=name)
    state = net.act((n, keep, w, c), q, "state")
    b.add_operator("READ_VARIABLE", [h], [state])
    cat = net.op("CONCATENATION", [state, x], (n, keep + t, w, c), q, axis=1)
    new = net.op("STRIDED_SLICE", [cat, net.const_i32([0, t, 0, 0]),
                                   net.const_i32([n, keep + t, w, c]),
                                   net.const_i32([1, 1, 1, 1])], (n, keep, w, c), q)
    b.add_operator("ASSIGN_VARIABLE", [h, new], [])
    return cat


def wake_word(seed: int = 0, quant: bool = True) -> bytes:
    """Streaming wake-word model: 3 new feature frames of 40 channels per invoke."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder()
    net = Net(m, rng, quant)
    init = m.add_subgraph("init")
    m.add_operator("CALL_ONCE", [], [], init_subgraph_index=1)
    x = net.input((1, 3, 40), (0.10196, -128))
    x4 = net.reshape(x, (1, 3, 1, 40))
    c1 = net.conv(_ring(net, init, x4, 2, "stream"), 24, (5, 1), padding="VALID")
    ring = _ring(net, init, c1, 6, "stream_1")  # (1, 7, 1, 24)
    a, bb = 12, 12
    qa = net.q.get(ring)
    ga = net.act((1, 7, 1, a), qa, "split")
    gb = net.act((1, 7, 1, bb), qa, "split")
    m.add_operator("SPLIT_V", [ring, net.const_i32([a, bb]), net.const_i32([3])], [ga, gb],
                   num_splits=2)
    da = net.conv(ga, 0, (7, 1), padding="VALID", depthwise=True)
    tail = net.op("STRIDED_SLICE", [gb, net.const_i32([0, 4, 0, 0]),
                                    net.const_i32([1, 7, 1, bb]), net.const_i32([1, 1, 1, 1])],
                  (1, 3, 1, bb), qa)
    db = net.conv(tail, 0, (3, 1), padding="VALID", depthwise=True, q=net.q.get(da))
    mix = net.op("CONCATENATION", [da, db], (1, 1, 1, a + bb), net.q.get(da), axis=3)
    pw = net.conv(mix, 32, (1, 1))
    flat = net.reshape(pw, (1, 32))
    logit = net.fc(flat, 1)
    if not quant:
        p = net.op("LOGISTIC", [logit], (1, 1))
        m.mark_output(p)
        return m.build()
    p = net.logistic(logit)
    out = m.add_tensor("Identity", (1, 1), "uint8", scale=1 / 256, zero_point=0)
    m.add_operator("QUANTIZE", [p], [out])
    m.mark_output(out)
    return m.build()


# -- keyword spotting (DS-CNN, MicroNet) ------------------------------------------------------

def ds_cnn(seed: int = 0, quant: bool = True, micronet: bool = False, ch: int = 16,
           blocks: int = 2) -> bytes:
    """Arm ML-zoo DS-CNN (small): 49x10 MFCC in, 12 keywords out. ``micronet`` swaps the
    average pool for PAD + a VALID conv and a MEAN over H and W, as MicroNet does."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder()
    net = Net(m, rng, quant)
    x = net.input((1, 49, 10, 1), (0.58, 83 - 128))
    if micronet:
        padded = net.op("PAD", [x, m.add_constant("pads", np.array(
            [[0, 0], [4, 5], [1, 2], [0, 0]], np.int32))], (1, 58, 13, 1), net.q.get(x))
        y = net.conv(padded, ch, (10, 4), 2, "VALID")
    else:
        y = net.conv(x, ch, (10, 4), 2)
    for _ in range(blocks):
        y = net.conv(y, 0, (3, 3), depthwise=True)
        y = net.conv(y, ch, (1, 1))
    n, h, w, c = net.shape(y)
    if micronet:
        pooled = net.op("MEAN", [y, net.const_i32([1, 2])], (1, 1, 1, c), keep_dims=True)
    else:
        pooled = net.op("AVERAGE_POOL_2D", [y], (1, 1, 1, c), net.q.get(y), padding="VALID",
                        stride_w=w, stride_h=h, filter_width=w, filter_height=h)
    flat = net.reshape(pooled, (1, c))
    logits = net.fc(flat, 12)
    m.mark_output(net.softmax(logits) if quant else net.op("SOFTMAX", [logits], (1, 12),
                                                            beta=1.0))
    return m.build()


# -- image (MobileNet v2 0.25 style, ST model zoo heads) --------------------------------------

def mobilenet(seed: int = 0, quant: bool = True, size: int = 32) -> bytes:
    """Inverted residual blocks (expand 1x1, depthwise 3x3, project 1x1, ADD), a PAD before a
    VALID stride-2 conv, HARD_SWISH x MUL(LOGISTIC) squeeze-excite, RESIZE and a two-scale
    CONCATENATION like ST's heads, MEAN pooling, classifier."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder()
    net = Net(m, rng, quant)
    x = net.input((1, size, size, 3), (1 / 128, 0) if quant else (0.0, 0))
    pads = m.add_constant("pads", np.array([[0, 0], [0, 1], [0, 1], [0, 0]], np.int32))
    p = net.op("PAD", [x, pads], (1, size + 1, size + 1, 3), net.q.get(x))
    y = net.conv(p, 8, (3, 3), 2, "VALID", act="RELU6")
    e = net.conv(y, 16, (1, 1), act="RELU6")
    d = net.conv(e, 0, (3, 3), depthwise=True, act="RELU6")
    pr = net.conv(d, 8, (1, 1), act="NONE")
    res = net.op("ADD", [y, pr], net.shape(y), fused_activation_function="NONE")
    hs = net.op("HARD_SWISH", [res], net.shape(res))
    n, h, w, c = net.shape(hs)
    gap = net.op("MEAN", [hs, net.const_i32([1, 2])], (1, 1, 1, c), keep_dims=True)
    gate = net.logistic(gap) if quant else net.op("LOGISTIC", [gap], (1, 1, 1, c))
    se = net.op("MUL", [hs, gate], net.shape(hs), fused_activation_function="NONE")
    down = net.conv(se, 16, (3, 3), 2, act="RELU", q=net.q.get(se))  # concat needs one scale
    up = net.op("RESIZE_NEAREST_NEIGHBOR", [down, net.const_i32([h, w])], (1, h, w, 16),
                net.q.get(down), align_corners=False, half_pixel_centers=True)
    bil = net.op("RESIZE_BILINEAR", [down, net.const_i32([h, w])], (1, h, w, 16),
                 net.q.get(down), align_corners=False, half_pixel_centers=True)
    cat = net.op("CONCATENATION", [se, up, bil], (1, h, w, c + 32), net.q.get(se), axis=3)
    head = net.conv(cat, 24, (1, 1), act="RELU6")
    pooled = net.op("MEAN", [head, net.const_i32([1, 2])], (1, 24), keep_dims=False)
    logits = net.fc(pooled, 10)
    m.mark_output(net.softmax(logits) if quant else net.op("SOFTMAX", [logits], (1, 10),
                                                            beta=1.0))
    return m.build()


def ssd_detector(seed: int = 0, anchors_per_cell: int = 2, classes: int = 3) -> bytes:
    """ST-zoo/SSD-style detector: an int8 backbone, a box and a class conv head per cell,
    RESHAPE to (1, boxes, 4) and (1, boxes, classes + 1), DEQUANTIZE, and the float
    TFLite_Detection_PostProcess custom op (fast NMS) with constant anchors: four outputs."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder()
    net = Net(m, rng, True)
    x = net.input((1, 24, 24, 3), (1 / 128, 0))
    y = net.conv(x, 8, (3, 3), 2, act="RELU6")
    y = net.conv(y, 0, (3, 3), 2, depthwise=True, act="RELU6")
    feat = net.conv(y, 16, (1, 1), act="RELU6")  # (1, 6, 6, 16)
    cells = 6 * 6
    boxes = cells * anchors_per_cell
    box_head = net.conv(feat, anchors_per_cell * 4, (3, 3), act="NONE")
    cls_head = net.conv(feat, anchors_per_cell * (classes + 1), (3, 3), act="NONE",
                        spread=1.5)
    box_q = net.reshape(box_head, (1, boxes, 4))
    cls_q = net.reshape(cls_head, (1, boxes, classes + 1))
    box_f = m.add_tensor("raw_boxes", (1, boxes, 4), F32)
    m.add_operator("DEQUANTIZE", [box_q], [box_f])
    cls_f = m.add_tensor("raw_scores", (1, boxes, classes + 1), F32)
    m.add_operator("DEQUANTIZE", [cls_q], [cls_f])
    scores = m.add_tensor("scores_sigmoid", (1, boxes, classes + 1), F32)
    m.add_operator("LOGISTIC", [cls_f], [scores])
    grid = (np.arange(6) + 0.5) / 6
    cy, cx = np.meshgrid(grid, grid, indexing="ij")
    sizes = np.array([[0.2, 0.2], [0.35, 0.2]])[:anchors_per_cell]
    anchors = np.concatenate([np.repeat(np.stack([cy.ravel(), cx.ravel()], 1),
                                        anchors_per_cell, 0),
                              np.tile(sizes, (cells, 1))], 1).astype(np.float32)
    max_det = 10
    outs = [m.add_tensor("detection_boxes", (1, max_det, 4), F32),
            m.add_tensor("detection_classes", (1, max_det), F32),
            m.add_tensor("detection_scores", (1, max_det), F32),
            m.add_tensor("num_detections", (1,), F32)]
    m.add_operator("TFLite_Detection_PostProcess",
                   [box_f, scores, m.add_constant("anchors", anchors)], outs,
                   custom_options=flex(max_detections=max_det, max_classes_per_detection=1,
                                       detections_per_class=100, use_regular_nms=False,
                                       nms_score_threshold=0.78, nms_iou_threshold=0.5,
                                       num_classes=classes, y_scale=10.0, x_scale=10.0,
                                       h_scale=5.0, w_scale=5.0))
    m.mark_output(*outs)
    return m.build()


# -- activity recognition (conv over time + LSTM) ---------------------------------------------

def activity(seed: int = 0, quant: bool = False, steps: int = 24) -> bytes:
    """Accelerometer window (1, steps, 3): EXPAND_DIMS, CONV_2D 1xk as CONV_1D, MAX_POOL,
    SQUEEZE, UNIDIRECTIONAL_SEQUENCE_LSTM (8x8->16 cell state when int8), FC, SOFTMAX."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder()
    net = Net(m, rng, quant)
    x = net.input((1, steps, 3), (0.05, 3))
    ex = net.op("EXPAND_DIMS", [x, net.const_i32([1])], (1, 1, steps, 3), net.q.get(x))
    c = net.conv(ex, 16, (1, 5), act="RELU")
    pooled = net.op("MAX_POOL_2D", [c], (1, 1, steps // 2, 16), net.q.get(c), padding="VALID",
                    stride_w=2, stride_h=1, filter_width=2, filter_height=1)
    seq = net.op("SQUEEZE", [pooled], (1, steps // 2, 16), net.q.get(pooled), squeeze_dims=[1])
    n_state = 12
    h = _lstm(net, seq, n_state)
    last = net.op("STRIDED_SLICE", [h, net.const_i32([0, -1, 0]), net.const_i32([1, 0, 0]),
                                    net.const_i32([1, 1, 1])], (1, n_state), net.q.get(h),
                  begin_mask=0, end_mask=6, shrink_axis_mask=2)
    logits = net.fc(last, 6)
    m.mark_output(net.softmax(logits) if quant else net.op("SOFTMAX", [logits], (1, 6),
                                                            beta=1.0))
    return m.build()


def _lstm(net: Net, x: int, n_state: int) -> int:
    b, rng = net.b, net.rng
    batch, steps, n_input = net.shape(x)
    if not net.quant:
        def w(shape: tuple[int, ...]) -> int:
            return b.add_constant(net._name("lw"), rng.normal(0, 0.4, shape).astype(np.float32))
        wi = [w((n_state, n_input)) for _ in range(4)]
        wr = [w((n_state, n_state)) for _ in range(4)]
        bias = [w((n_state,)) for _ in range(4)]
        hs = b.add_tensor("h_state", (batch, n_state), F32, is_variable=True)
        cs = b.add_tensor("c_state", (batch, n_state), F32, is_variable=True)
        y = net.act((batch, steps, n_state))
    else:
        s_in = net.q[x][0]
        q_h: Q = (0.0078125, 0)
        wi, wr, bias = [], [], []
        for _ in range(4):
            sw, sr = (float(v) for v in rng.uniform(0.003, 0.02, 2))
            wi.append(b.add_constant(net._name("wi"), rng.integers(-127, 128, (
                n_state, n_input)).astype(np.int8), scale=sw, zero_point=0))
            wr.append(b.add_constant(net._name("wr"), rng.integers(-127, 128, (
                n_state, n_state)).astype(np.int8), scale=sr, zero_point=0))
            bias.append(b.add_constant(net._name("lb"), rng.integers(-3000, 3000, n_state)
                                       .astype(np.int32), scale=s_in * sw, zero_point=0))
        hs = b.add_tensor("h_state", (batch, n_state), I8, scale=q_h[0], zero_point=q_h[1],
                          is_variable=True)
        cs = b.add_tensor("c_state", (batch, n_state), "int16", scale=2.0 ** -11,
                          zero_point=0, is_variable=True)
        y = net.act((batch, steps, n_state), q_h)
    ins = [x, *wi, *wr, None, None, None, *bias, None, None, hs, cs, None, None, None, None]
    inter: list[int] = []
    if net.quant:  # the converter records each gate's calibrated range as an intermediate
        inter = [b.add_tensor(net._name("intermediate"), (0,), "int16", scale=2.0 ** -12,
                              zero_point=0) for _ in range(4)]
        inter.append(b.add_tensor(net._name("intermediate"), (0,), I8, scale=0.007,
                                  zero_point=-3))
    b.add_operator("UNIDIRECTIONAL_SEQUENCE_LSTM", ins, [y], fused_activation_function="TANH",
                   cell_clip=10.0, time_major=False, intermediates=inter)
    return y


# -- audio front end (TFLM's audio_preprocessor) ----------------------------------------------

def add_signal_chain(b: ModelBuilder, framed: int, rng: np.random.Generator, *, frame: int,
                     fft_length: int, channels: int, min_signal_remaining: int,
                     output_scale: int) -> int:
    """The core of TFLM's audio_preprocessor on an int16 frame ``framed`` (shape (1, frame)):
    Window, FftAutoScale, Rfft, Energy, FilterBank, SquareRoot, SpectralSubtraction, PCAN (a
    random gain table from ``rng``), FilterBankLog; returns the int16 log features."""
    hann = (np.sin(np.pi * (np.arange(frame) + 0.5) / frame) ** 2 * 4096).astype(np.int16)
    windowed = b.add_tensor("windowed", (1, frame), "int16")
    b.add_operator("SignalWindow", [framed, b.add_constant("window", hann)], [windowed],
                   custom_options=flex(shift=12))
    flat = b.add_tensor("flat", (frame,), "int16")
    b.add_operator("RESHAPE", [windowed, b.add_constant("shape", np.array([frame], np.int32))],
                   [flat], new_shape=[frame])
    scaled = b.add_tensor("scaled", (frame,), "int16")
    scale = b.add_tensor("scale_bits", (), "int32")
    b.add_operator("SignalFftAutoScale", [flat], [scaled, scale], custom_options=flex())
    bins = fft_length // 2 + 1
    spectrum = b.add_tensor("spectrum", (2 * bins,), "int16")
    b.add_operator("SignalRfft", [scaled], [spectrum],
                   custom_options=flex(T=7, fft_length=fft_length))
    energy = b.add_tensor("energy", (bins,), "uint32")
    b.add_operator("SignalEnergy", [spectrum], [energy],
                   custom_options=flex(start_index=0, end_index=bins))
    starts = np.linspace(4, bins - 12, channels + 1).astype(np.int16)
    widths = np.full(channels + 1, 8, np.int16)
    weight_starts = (np.arange(channels + 1) * 8).astype(np.int16)
    ramp = np.tile(np.linspace(0, 4095, 8).astype(np.int16), channels + 1)
    bank = b.add_tensor("bank", (channels,), "uint64")
    b.add_operator("SignalFilterBank", [
        energy, b.add_constant("weights", ramp), b.add_constant("unweights", 4096 - ramp),
        b.add_constant("freq_starts", starts), b.add_constant("weight_starts", weight_starts),
        b.add_constant("widths", widths)], [bank], custom_options=flex(num_channels=channels))
    root = b.add_tensor("root", (channels,), "uint32")
    b.add_operator("SignalFilterBankSquareRoot", [bank, scale], [root], custom_options=flex())
    clean = b.add_tensor("clean", (channels,), "uint32")
    noise = b.add_tensor("noise", (channels,), "uint32")
    b.add_operator("SignalFilterBankSpectralSubtraction", [root], [clean, noise],
                   custom_options=flex(num_channels=channels, smoothing=409,
                                       one_minus_smoothing=15975, alternate_smoothing=983,
                                       alternate_one_minus_smoothing=15401, smoothing_bits=10,
                                       min_signal_remaining=min_signal_remaining, clamping=False,
                                       spectral_subtraction_bits=14))
    lut = rng.integers(-2000, 8000, 125).astype(np.int16)
    pcan = b.add_tensor("pcan", (channels,), "uint32")
    b.add_operator("SignalPCAN", [clean, noise, b.add_constant("gain_lut", lut)], [pcan],
                   custom_options=flex(snr_shift=6))
    log = b.add_tensor("log", (channels,), "int16")
    b.add_operator("SignalFilterBankLog", [pcan], [log],
                   custom_options=flex(input_correction_bits=3, output_scale=output_scale))
    return log


def audio_frontend(seed: int = 0, frame: int = 480, fft_length: int = 512,
                   channels: int = 40, integer_tail: bool = False) -> bytes:
    """One 30 ms int16 frame in, 40 int8 features out: Window, FftAutoScale, Rfft, Energy,
    FilterBank, SquareRoot, SpectralSubtraction, PCAN, FilterBankLog, then the float tail the
    preprocessor appends (CAST, scale, QUANTIZE)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    audio = b.add_input("audio", (1, frame), "int16")
    log = add_signal_chain(b, audio, rng, frame=frame, fft_length=fft_length,
                           channels=channels, min_signal_remaining=1638,
                           output_scale=48 if integer_tail else 1600)
    if integer_tail:  # the int8 preprocessor's integer scaling: ((x * 256 + 333) / 666) - 128
        out = _integer_tail(b, log, channels)
        b.mark_output(out)
        return b.build()
    as_float = b.add_tensor("as_float", (channels,), F32)
    b.add_operator("CAST", [log], [as_float])
    scaled_f = b.add_tensor("scaled_f", (channels,), F32)
    b.add_operator("MUL", [as_float, b.add_constant("inv", np.array([1 / 800], np.float32))],
                   [scaled_f], fused_activation_function="NONE")
    shifted = b.add_tensor("shifted", (1, channels), F32)
    b.add_operator("ADD", [scaled_f, b.add_constant("off", np.full((1, channels), -10.0,
                                                                   np.float32))], [shifted],
                   fused_activation_function="NONE")
    out = b.add_tensor("features", (1, channels), I8, scale=0.10196, zero_point=-128)
    b.add_operator("QUANTIZE", [shifted], [out])
    b.mark_output(out)
    return b.build()


def _integer_tail(b: ModelBuilder, log: int, channels: int) -> int:
    def step(op: str, x: int, value: int, name: str) -> int:
        y = b.add_tensor(name, (channels,), "int32")
        c = b.add_constant(name + "_c", np.array([value], np.int32))
        opts = {} if op in ("MAXIMUM", "MINIMUM") else {"fused_activation_function": "NONE"}
        b.add_operator(op, [x, c], [y], **opts)
        return y

    wide = b.add_tensor("log_i32", (channels,), "int32")
    b.add_operator("CAST", [log], [wide])
    y = step("MUL", wide, 256, "scaled")
    y = step("ADD", y, 333, "rounded")
    y = step("DIV", y, 666, "divided")
    y = step("SUB", y, 128, "shifted")
    y = step("MINIMUM", step("MAXIMUM", y, -128, "low"), 127, "high")
    out = b.add_tensor("features", (channels,), I8)
    b.add_operator("CAST", [y], [out])
    return out


# -- exporter habits ---------------------------------------------------------------------------

def st_image_uint8_io(seed: int = 0) -> bytes:
    """ST model zoo style: uint8 image in (batch -1 in the signature) QUANTIZEd to int8,
    SAME stride-2 conv, pools with SAME padding, CONCATENATION, a requantizing int8 QUANTIZE,
    MEAN, FULLY_CONNECTED straight from a rank-4 tensor, SOFTMAX, DEQUANTIZE
    to a float output; a SignatureDef as the converter writes one."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder()
    net = Net(m, rng, True)
    image = m.add_input("image", (1, 16, 16, 3), "uint8", scale=1 / 255, zero_point=0,
                        shape_signature=(-1, 16, 16, 3))
    x = net.act((1, 16, 16, 3), (1 / 255, -128))
    m.add_operator("QUANTIZE", [image], [x])
    y = net.conv(x, 8, (3, 3), 2, act="RELU6")
    y2 = net.conv(y, 0, (3, 3), depthwise=True, act="RELU6")
    q2 = net.q.get(y2)
    ap = net.op("AVERAGE_POOL_2D", [y2], (1, 4, 4, 8), q2, padding="SAME", stride_w=2,
                stride_h=2, filter_width=3, filter_height=3, fused_activation_function="RELU")
    mx = net.op("MAX_POOL_2D", [ap], (1, 2, 2, 8), q2, padding="SAME", stride_w=2, stride_h=2,
                filter_width=2, filter_height=2)
    wide = net.op("MAX_POOL_2D", [y2], (1, 2, 2, 8), q2, padding="VALID", stride_w=4,
                  stride_h=4, filter_width=4, filter_height=4)
    cat = net.op("CONCATENATION", [mx, wide], (1, 2, 2, 16), q2, axis=-1)
    requant = net.act((1, 2, 2, 16), (q2[0] * 1.5, q2[1] + 7) if q2 else None)
    m.add_operator("QUANTIZE", [cat], [requant])
    mean = net.op("MEAN", [requant, net.const_i32([1, 2])], (1, 1, 1, 16), keep_dims=True)
    probs = net.softmax(net.fc(mean, 5))
    out = m.add_tensor("probabilities", (1, 5), F32)
    m.add_operator("DEQUANTIZE", [probs], [out])
    m.mark_output(out)
    m.add_signature("serving_default")
    return m.build()


def int16x8(seed: int = 0) -> bytes:
    """16x8 quantization (int16 activations with zero point 0, int8 weights, int64 biases), as
    TFLite's converter writes for accuracy-sensitive audio models: CONV_2D, DEPTHWISE, ADD,
    AVERAGE_POOL, FULLY_CONNECTED, and both LOGISTIC and SOFTMAX outputs."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    x = b.add_input("x", (1, 8, 8, 2), "int16", scale=1 / 4096, zero_point=0)

    def weights(name: str, shape: tuple[int, ...], axis: int, in_scale: float
                ) -> tuple[int, int]:
        n = shape[axis]
        sc = rng.uniform(0.002, 0.02, n).astype(np.float32)
        w = b.add_constant(name, rng.integers(-127, 128, shape).astype(np.int8), scale=sc,
                           zero_point=0, quantized_dimension=axis)
        bias = b.add_constant(name + "_bias", rng.integers(-20000, 20000, n).astype(np.int64),
                              scale=(sc * np.float32(in_scale)).astype(np.float32),
                              zero_point=0)
        return w, bias

    def act(name: str, shape: tuple[int, ...], scale: float) -> int:
        return b.add_tensor(name, shape, "int16", scale=scale, zero_point=0)

    y = act("conv", (1, 4, 4, 6), 1 / 2048)
    b.add_operator("CONV_2D", [x, *weights("w", (6, 3, 3, 2), 0, 1 / 4096)], [y],
                   padding="SAME", stride_w=2, stride_h=2, fused_activation_function="RELU")
    yd = act("dw", (1, 4, 4, 6), 1 / 2048)
    b.add_operator("DEPTHWISE_CONV_2D", [y, *weights("wd", (1, 3, 3, 6), 3, 1 / 2048)], [yd],
                   padding="SAME", stride_w=1, stride_h=1, depth_multiplier=1)
    s = act("sum", (1, 4, 4, 6), 1 / 1024)
    b.add_operator("ADD", [y, yd], [s])
    pooled = act("pool", (1, 1, 1, 6), 1 / 1024)
    b.add_operator("AVERAGE_POOL_2D", [s], [pooled], padding="VALID", stride_w=4, stride_h=4,
                   filter_width=4, filter_height=4)
    flat = act("flat", (1, 6), 1 / 1024)
    b.add_operator("RESHAPE", [pooled, b.add_constant("shape", np.array([1, 6], np.int32))],
                   [flat])
    fw = b.add_constant("fw", rng.integers(-127, 128, (4, 6)).astype(np.int8), scale=0.01,
                        zero_point=0)
    fb = b.add_constant("fb", rng.integers(-2000, 2000, 4).astype(np.int64), scale=0.01 / 1024,
                        zero_point=0)
    logits = act("logits", (1, 4), 1 / 512)
    b.add_operator("FULLY_CONNECTED", [flat, fw, fb], [logits])
    sig = act("sigmoid", (1, 4), 1 / 32768)
    b.add_operator("LOGISTIC", [logits], [sig])
    soft = act("softmax", (1, 4), 1 / 32768)
    b.add_operator("SOFTMAX", [logits], [soft], beta=1.0)
    b.mark_output(sig, soft)
    return b.build()


def exporter_habits(seed: int = 0, quant: bool = True) -> bytes:
    """What older converters and Keras layers leave behind: activations with their own empty
    buffer, two constants sharing one buffer, a bias-less FULLY_CONNECTED on a rank-3 input
    with keep_num_dims (TimeDistributed Dense), MEAN over time, PADV2 with a pad value, a
    bias-less CONV_2D, SQUEEZE, batch 2, two outputs."""
    rng = np.random.default_rng(seed)
    m = ModelBuilder()
    net = Net(m, rng, quant)
    qx = {"scale": 0.05, "zero_point": 3} if quant else {}
    x = m.add_input("x", (2, 10, 6), net.dtype, buffer=m.add_buffer(b""), **qx)
    if quant:
        net.q[x] = (0.05, 3)
        w = m.add_constant("fw", rng.integers(-127, 128, (4, 6)).astype(np.int8), scale=0.01,
                           zero_point=0)
        cw = m.add_constant("cw", rng.integers(-127, 128, (5, 3, 3, 4)).astype(np.int8),
                            scale=rng.uniform(0.002, 0.02, 5).astype(np.float32),
                            zero_point=0)
    else:
        w = m.add_constant("fw", rng.normal(0, 0.3, (4, 6)).astype(np.float32))
        cw = m.add_constant("cw", rng.normal(0, 0.3, (5, 3, 3, 4)).astype(np.float32))
    y = net.act((2, 10, 4))
    m.add_operator("FULLY_CONNECTED", [x, w, None], [y], keep_num_dims=True,
                   fused_activation_function="RELU")
    mean = net.op("MEAN", [y, net.const_i32([1])], (2, 4), keep_dims=False)
    ex = net.reshape(mean, (2, 1, 1, 4))
    q = net.q.get(ex)
    pad_value = (m.add_constant("pad_value", np.array(q[1] + 5, np.int8), scale=q[0],
                                zero_point=q[1]) if q
                 else m.add_constant("pad_value", np.array(0.5, np.float32)))
    pads = m.add_constant("pads", np.array([[0, 0], [1, 1], [1, 1], [0, 0]], np.int32))
    padded = net.op("PADV2", [ex, pads, pad_value], (2, 3, 3, 4), q)
    c = net.act((2, 1, 1, 5))
    m.add_operator("CONV_2D", [padded, cw, None], [c], padding="VALID", stride_w=1, stride_h=1)
    sq = net.op("SQUEEZE", [c], (2, 5), net.q.get(c))
    qs = net.q.get(sq)
    extra = {} if qs is None else {"scale": qs[0], "zero_point": qs[1]}
    data = (rng.integers(-50, 50, (2, 5)).astype(np.int8) if quant
            else rng.normal(0, 1, (2, 5)).astype(np.float32))
    k1 = m.add_constant("k1", data, **extra)
    k2 = m.add_tensor("k2", (2, 5), net.dtype, buffer=m._tensors[k1].buffer, **extra)
    a1 = net.op("ADD", [sq, k1], (2, 5), fused_activation_function="NONE")
    a2 = net.op("SUB", [a1, k2], (2, 5), fused_activation_function="NONE")
    m.mark_output(a2, mean)
    return m.build()


FAMILIES: dict[str, Callable[[], bytes]] = {
    "wake_word_int8": lambda: wake_word(0, True),
    "wake_word_float": lambda: wake_word(1, False),
    "ds_cnn_int8": lambda: ds_cnn(0, True),
    "micronet_int8": lambda: ds_cnn(2, True, micronet=True),
    "ds_cnn_float": lambda: ds_cnn(3, False),
    "mobilenet_int8": lambda: mobilenet(0, True),
    "mobilenet_float": lambda: mobilenet(1, False),
    "activity_float": lambda: activity(0, False),
    "activity_int8": lambda: activity(1, True),
    "audio_frontend": lambda: audio_frontend(0),
    "audio_frontend_int_div": lambda: audio_frontend(1, integer_tail=True),
    "st_image_uint8_io": lambda: st_image_uint8_io(0),
    "int16x8": lambda: int16x8(0),
    "exporter_habits_int8": lambda: exporter_habits(0, True),
    "exporter_habits_float": lambda: exporter_habits(1, False),
}
