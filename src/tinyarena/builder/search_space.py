"""Candidate networks for an architecture search: MobileNet / DS-CNN style int8 models built
from a handful of knobs.

Searches for microcontrollers (MCUNet, micronets, DS-CNN sweeps) vary the same few things:
input resolution, width, the number of depthwise-separable blocks and where they stride. The
arena a candidate needs is decided by exactly those knobs, so ``ds_cnn(Candidate(...))`` builds
the ``.tflite`` a converter would write for them (per-channel int8 weights, int32 biases,
converter-style quantization), and ``tinyarena.batch.size_models`` gives its exact arena per
target without training it. Weights are random: only shapes and quantization matter to the arena.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.builder import quant
from tinyarena.builder.model_builder import ModelBuilder
from tinyarena.errors import BuildError


@dataclass(frozen=True)
class Candidate:
    """One point of the search space.

    ``resolution``: square input side; ``channels``: input channels (1 for audio features or
    grayscale, 3 for RGB); ``width``: the stem's output channels; ``blocks``: depthwise-separable
    blocks; a block whose index is in ``stride_at`` halves the resolution and doubles the width;
    ``kernel``: the depthwise kernel side; ``classes``: outputs of the classifier head.
    """

    resolution: int = 48
    channels: int = 1
    width: int = 16
    blocks: int = 4
    stride_at: tuple[int, ...] = (0, 2)
    kernel: int = 3
    classes: int = 10

    def macs(self) -> int:
        """Multiply-accumulates of one inference: a capacity proxy a search can maximise."""
        return sum(layer[0] for layer in _layers(self))


def _out(size: int, stride: int) -> int:
    return -(-size // stride)  # SAME padding


def _layers(c: Candidate) -> list[tuple[int, str, int, int, int]]:
    """(macs, op, output side, output channels, stride) of every layer, in order."""
    if c.resolution < 2 or c.width < 1 or c.blocks < 0 or c.kernel not in (1, 3, 5, 7) \
            or c.channels < 1 or c.classes < 1:
        raise BuildError(f"not a valid candidate: {c}")
    side, width = _out(c.resolution, 2), c.width
    layers = [(side * side * width * 9 * c.channels, "CONV_2D", side, width, 2)]
    for block in range(c.blocks):
        stride = 2 if block in c.stride_at and side >= 2 else 1
        side = _out(side, stride)
        layers.append((side * side * width * c.kernel * c.kernel, "DEPTHWISE_CONV_2D", side,
                       width, stride))
        out = width * 2 if stride == 2 else width
        layers.append((side * side * width * out, "CONV_2D", side, out, 1))
        width = out
    layers.append((width * c.classes, "FULLY_CONNECTED", 1, c.classes, 1))
    return layers


def ds_cnn(c: Candidate, *, seed: int = 0) -> bytes:
    """The candidate as an int8 ``.tflite``: conv stem (3x3, stride 2), ``blocks`` x
    (depthwise kxk + pointwise 1x1, ReLU6), global average pool, fully connected, softmax."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder(description=f"tinyarena search candidate {c}")
    act_scale, act_zp = 6.0 / 255.0, -128  # ReLU6 outputs, as the converter quantizes them

    def tensor(name: str, shape: tuple[int, ...]) -> int:
        return b.add_tensor(name, shape, "int8", scale=act_scale, zero_point=act_zp)

    def weights(name: str, shape: tuple[int, ...], axis: int, in_scale: float
                ) -> tuple[int, int]:
        wq, ws = quant.quantize_weights(rng.normal(0.0, 0.3, size=shape), axis=axis)
        w = b.add_constant(f"{name}_w", wq, scale=ws, zero_point=0, quantized_dimension=axis)
        bq, bs = quant.quantize_bias(rng.normal(0.0, 0.1, size=shape[axis]), in_scale, ws)
        return w, b.add_constant(f"{name}_b", bq, scale=bs, zero_point=0)

    x = b.add_input("input", (1, c.resolution, c.resolution, c.channels), "int8",
                    scale=1.0 / 255.0, zero_point=-128)
    current, in_scale, cin = x, 1.0 / 255.0, c.channels
    for i, (_, op, side, cout, stride) in enumerate(_layers(c)[:-1]):
        y = tensor(f"{op.lower()}_{i}", (1, side, side, cout))
        if op == "DEPTHWISE_CONV_2D":
            w, bias = weights(f"dw{i}", (1, c.kernel, c.kernel, cout), 3, in_scale)
            b.add_operator(op, [current, w, bias], [y], padding="SAME", stride_w=stride,
                           stride_h=stride, depth_multiplier=1,
                           fused_activation_function="RELU6")
        else:
            k = 3 if i == 0 else 1
            w, bias = weights(f"conv{i}", (cout, k, k, cin), 0, in_scale)
            b.add_operator(op, [current, w, bias], [y], padding="SAME", stride_w=stride,
                           stride_h=stride, fused_activation_function="RELU6")
        current, in_scale, cin = y, act_scale, cout
    axes = b.add_constant("mean_axes", np.array([1, 2], np.int32))
    pooled = tensor("pooled", (1, cin))
    b.add_operator("MEAN", [current, axes], [pooled], keep_dims=False)
    wq, ws = quant.quantize_weights(rng.normal(0.0, 0.3, size=(c.classes, cin)), axis=None)
    fc_w = b.add_constant("fc_w", wq, scale=ws, zero_point=0)
    bq, bs = quant.quantize_bias(rng.normal(0.0, 0.1, size=c.classes), act_scale, ws)
    fc_b = b.add_constant("fc_b", bq, scale=bs, zero_point=0)
    logits = b.add_tensor("logits", (1, c.classes), "int8", scale=0.1, zero_point=0)
    b.add_operator("FULLY_CONNECTED", [pooled, fc_w, fc_b], [logits])
    probs = b.add_tensor("probs", (1, c.classes), "int8", scale=1 / 256, zero_point=-128)
    b.add_operator("SOFTMAX", [logits], [probs], beta=1.0)
    b.mark_output(probs)
    return b.build()


__all__ = ["Candidate", "ds_cnn"]
