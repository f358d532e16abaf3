"""The bundled demo model: an int8 CNN that tells vertical from horizontal stripes.

It is built at run time with ``tinyarena.builder`` (no file from outside the repository) and
uses the ops of real TFLM models: CONV_2D with per-channel weights (two hand-made 3x3 edge
filters), AVERAGE_POOL_2D, RESHAPE, FULLY_CONNECTED and SOFTMAX, all int8. Because the filters
are chosen rather than trained, the answer can be checked by eye: an image of vertical stripes
excites the vertical-edge filter and scores "vertical".
"""

from __future__ import annotations

import numpy as np

from tinyarena.builder import ModelBuilder, quant

SIZE = 12  # image height and width
LABELS = ("vertical stripes", "horizontal stripes")

_IN_SCALE, _IN_ZP = 1.0 / 255.0, -128  # pixels in [0, 1]
_CONV_SCALE, _CONV_ZP = 3.0 / 255.0, -128  # ReLU(edge response) in [0, 3]
_FC_SCALE, _FC_ZP = 8.0 / 255.0, 0  # logits in [-4, 4]
_SOFTMAX_SCALE, _SOFTMAX_ZP = 1.0 / 256.0, -128  # TFLM's int8 softmax output


def build_model() -> bytes:
    """The .tflite bytes of the stripes classifier."""
    b = ModelBuilder("tinyarena demo: vertical or horizontal stripes")
    x = b.add_input("image", (1, SIZE, SIZE, 1), "int8", scale=_IN_SCALE, zero_point=_IN_ZP)

    edge = np.array([[-1.0, 0.0, 1.0]] * 3)  # responds to left-to-right brightness steps
    filters = np.stack([edge, edge.T])[..., np.newaxis]  # (2 out, 3, 3, 1 in): OHWI
    w_q, w_scales = quant.quantize_weights(filters, axis=0)
    w = b.add_constant("edge_filters", w_q, scale=w_scales, zero_point=0, quantized_dimension=0)
    bias_q, bias_scales = quant.quantize_bias(np.zeros(2), _IN_SCALE, w_scales)
    bias = b.add_constant("edge_bias", bias_q, scale=bias_scales, zero_point=0)
    side = SIZE - 2
    edges = b.add_tensor("edges", (1, side, side, 2), "int8", scale=_CONV_SCALE,
                         zero_point=_CONV_ZP)
    b.add_operator("CONV_2D", [x, w, bias], [edges], padding="VALID", stride_w=1, stride_h=1,
                   fused_activation_function="RELU")

    pooled = b.add_tensor("pooled", (1, 1, 1, 2), "int8", scale=_CONV_SCALE, zero_point=_CONV_ZP)
    b.add_operator("AVERAGE_POOL_2D", [edges], [pooled], padding="VALID", stride_w=side,
                   stride_h=side, filter_width=side, filter_height=side)
    shape = b.add_constant("flat_shape", np.array([1, 2], np.int32))
    flat = b.add_tensor("flat", (1, 2), "int8", scale=_CONV_SCALE, zero_point=_CONV_ZP)
    b.add_operator("RESHAPE", [pooled, shape], [flat], new_shape=[1, 2])

    fc_w = np.array([[8.0, -8.0], [-8.0, 8.0]])  # logit difference grows with the edge gap
    fc_q, fc_scales = quant.quantize_weights(fc_w, axis=None)
    fw = b.add_constant("fc_weights", fc_q, scale=fc_scales, zero_point=0)
    fb_q, fb_scales = quant.quantize_bias(np.zeros(2), _CONV_SCALE, fc_scales)
    fb = b.add_constant("fc_bias", fb_q, scale=fb_scales, zero_point=0)
    logits = b.add_tensor("logits", (1, 2), "int8", scale=_FC_SCALE, zero_point=_FC_ZP)
    b.add_operator("FULLY_CONNECTED", [flat, fw, fb], [logits])

    probs = b.add_tensor("probabilities", (1, 2), "int8", scale=_SOFTMAX_SCALE,
                         zero_point=_SOFTMAX_ZP)
    b.add_operator("SOFTMAX", [logits], [probs], beta=1.0)
    b.mark_output(probs)
    return b.build()


def stripes(vertical: bool, period: int = 4) -> np.ndarray:
    """A SIZE x SIZE image of black and white stripes, as the model's int8 input."""
    ramp = (np.arange(SIZE) // (period // 2)) % 2  # 0 0 1 1 0 0 ...
    pixels = np.tile(ramp, (SIZE, 1)) if vertical else np.tile(ramp[:, None], (1, SIZE))
    q = np.round(pixels / _IN_SCALE) + _IN_ZP
    return q.astype(np.int8).reshape(1, SIZE, SIZE, 1)


def probabilities(output: np.ndarray) -> np.ndarray:
    """The int8 softmax output as float probabilities."""
    return (output.astype(np.float32).reshape(-1) - _SOFTMAX_ZP) * np.float32(_SOFTMAX_SCALE)


def picture(image: np.ndarray) -> list[str]:
    """The input image as text rows ('#' white, '.' black)."""
    rows = image.reshape(SIZE, SIZE) > 0
    return ["".join("#" if v else "." for v in row) for row in rows]


__all__ = ["LABELS", "SIZE", "build_model", "picture", "probabilities", "stripes"]
