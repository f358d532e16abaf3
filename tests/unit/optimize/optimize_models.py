"""Small int8 models built so that one optimizer rule decides the peak.

Each builder returns (model bytes, input shape). The model is a chain around one op under test,
sized so that the step of that op is the peak of live bytes unless the rule applies.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyarena.builder import ModelBuilder, quant

_RNG_SEED = 7


class _Chain:
    """An int8 builder with conv helpers and a fixed random source."""

    def __init__(self) -> None:
        self.b = ModelBuilder(description="tinyarena optimize test")
        self.rng = np.random.default_rng(_RNG_SEED)
        self.n = 0

    def name(self, p: str) -> str:
        self.n += 1
        return f"{p}{self.n}"

    def act(self, shape: tuple[int, ...], scale: float = 0.05, zp: int = 0) -> int:
        return self.b.add_tensor(self.name("t"), shape, "int8", scale=scale, zero_point=zp)

    def conv(self, x: int, x_scale: float, shape_in: tuple[int, ...], cout: int,
             scale: float = 0.05, zp: int = 0) -> int:
        _, h, w, c = shape_in
        wq, ws = quant.quantize_weights(self.rng.normal(0, 0.5, (cout, 1, 1, c)), axis=0)
        wt = self.b.add_constant(self.name("w"), wq, scale=ws, zero_point=0,
                                 quantized_dimension=0)
        bq, bs = quant.quantize_bias(self.rng.normal(0, 0.2, cout), x_scale, ws)
        bt = self.b.add_constant(self.name("b"), bq, scale=bs, zero_point=0)
        y = self.act((1, h, w, cout), scale, zp)
        self.b.add_operator("CONV_2D", [x, wt, bt], [y], padding="VALID", stride_w=1,
                            stride_h=1)
        return y

    def fc(self, x: int, x_scale: float, depth: int, units: int, out_shape: tuple[int, ...]
           ) -> int:
        wq, ws = quant.quantize_weights(self.rng.normal(0, 0.1, (units, depth)), axis=None)
        wt = self.b.add_constant(self.name("fw"), wq, scale=ws, zero_point=0)
        bq, bs = quant.quantize_bias(self.rng.normal(0, 0.1, units), x_scale, ws)
        bt = self.b.add_constant(self.name("fb"), bq, scale=bs, zero_point=0)
        y = self.act(out_shape, 0.1, 0)
        self.b.add_operator("FULLY_CONNECTED", [x, wt, bt], [y])
        return y


SHAPE = (1, 16, 16, 4)
MID = (1, 16, 16, 8)


def view_model(op: str) -> bytes:
    """x -> 1x1 conv -> a -> VIEW -> b -> FULLY_CONNECTED: the view's step holds a and b."""
    g = _Chain()
    x = g.b.add_input("x", SHAPE, "int8", scale=0.05, zero_point=0)
    a = g.conv(x, 0.05, SHAPE, 8)
    depth = 16 * 16 * 8
    if op == "RESHAPE":
        shape = g.b.add_constant("shape", np.array([1, depth], np.int32))
        v = g.act((1, depth))
        g.b.add_operator("RESHAPE", [a, shape], [v], new_shape=[1, depth])
    elif op == "EXPAND_DIMS":
        axis = g.b.add_constant("axis", np.array([0], np.int32))
        v = g.act((1,) + MID)
        g.b.add_operator("EXPAND_DIMS", [a, axis], [v])
    elif op == "SQUEEZE":
        v = g.act((16, 16, 8))
        g.b.add_operator("SQUEEZE", [a], [v], squeeze_dims=[0])
    else:
        raise ValueError(op)
    y = g.fc(v, 0.05, depth, 4, (1, 4))
    g.b.mark_output(y)
    return g.b.build()


UNARY_OPS = ("RELU", "RELU6", "LOGISTIC", "TANH", "LEAKY_RELU", "HARD_SWISH", "QUANTIZE")
BINARY_OPS = ("ADD", "SUB", "MUL")


def elementwise_model(op: str) -> bytes:
    """x -> conv -> a -> OP -> b -> conv -> y (unary, or SOFTMAX), or ADD/SUB/MUL of two
    convs of x."""
    g = _Chain()
    x = g.b.add_input("x", SHAPE, "int8", scale=0.05, zero_point=0)
    a = g.conv(x, 0.05, SHAPE, 8, scale=0.05, zp=-3)
    options: dict[str, Any] = {}
    out_scale, out_zp = 0.06, 2
    inputs = [a]
    if op in BINARY_OPS:
        inputs.append(g.conv(x, 0.05, SHAPE, 8, scale=0.04, zp=5))
        options["fused_activation_function"] = "NONE"
    elif op == "LOGISTIC":
        out_scale, out_zp = 1 / 256, -128
    elif op == "SOFTMAX":
        out_scale, out_zp = 1 / 256, -128
        options["beta"] = 1.0
    elif op == "TANH":
        out_scale, out_zp = 1 / 128, 0
    elif op in ("RELU", "RELU6"):
        out_scale, out_zp = 0.05, -3  # TFLM's quantized RELU allows requantization; keep it
    elif op == "LEAKY_RELU":
        options["alpha"] = 0.2
    b = g.act(MID, out_scale, out_zp)
    g.b.add_operator(op, inputs, [b], **options)
    y = g.conv(b, out_scale, MID, 2, scale=0.1)
    g.b.mark_output(y)
    return g.b.build()


def reorder_model() -> bytes:
    """Two branches of x, each a wide conv then a 2x2 max pool, joined by CONCATENATION.

    Written branch-interleaved (conv, conv, pool, pool), both wide conv outputs are live at
    once; running each branch to its pool first keeps only one.
    """
    g = _Chain()
    x = g.b.add_input("x", (1, 8, 8, 2), "int8", scale=0.05, zero_point=0)
    wide = [g.conv(x, 0.05, (1, 8, 8, 2), 16, scale=0.05) for _ in range(2)]
    pooled = []
    for w in wide:
        p = g.act((1, 4, 4, 16), 0.05, 0)
        g.b.add_operator("MAX_POOL_2D", [w], [p], padding="VALID", stride_w=2, stride_h=2,
                         filter_width=2, filter_height=2)
        pooled.append(p)
    y = g.act((1, 4, 4, 32), 0.05, 0)
    g.b.add_operator("CONCATENATION", pooled, [y], axis=3)
    g.b.mark_output(y)
    return g.b.build()


def _float_conv(b: ModelBuilder, rng: np.random.Generator, x: int, shape_in: tuple[int, ...],
                cout: int, name: str) -> int:
    _, h, w, c = shape_in
    wt = b.add_constant(f"{name}_w", rng.normal(0, 0.5, (cout, 1, 1, c)).astype(np.float32))
    bt = b.add_constant(f"{name}_b", rng.normal(0, 0.2, cout).astype(np.float32))
    y = b.add_tensor(name, (1, h, w, cout), "float32")
    b.add_operator("CONV_2D", [x, wt, bt], [y], padding="VALID", stride_w=1, stride_h=1)
    return y


def window_model(op: str, k: int = 3, stride: int = 1, padding: str = "SAME",
                 dilation: int = 1, dtype: str = "int8", multiplier: int = 1,
                 channels: int = 8, size: int = 12, pads: tuple[tuple[int, int], ...] = (
                     (0, 0), (1, 1), (1, 1), (0, 0))) -> bytes:
    """x (1 channel) -> 1x1 conv -> a -> OP -> b -> 1x1 conv -> y (1 channel).

    ``a`` has ``channels`` channels at full resolution, so the step of OP (a and b live) is
    the peak unless b may overlap a (rule (c)). OP is CONV_2D (``channels`` out),
    DEPTHWISE_CONV_2D (``multiplier``), AVERAGE_POOL_2D, MAX_POOL_2D or PAD (``pads``).
    """
    rng = np.random.default_rng(_RNG_SEED + k + 10 * stride + 100 * dilation)
    b = ModelBuilder(description="tinyarena rule (c) test")
    shape = (1, size, size, 1)
    mid = (1, size, size, channels)
    q = dtype == "int8"
    qa: dict[str, Any] = {"scale": 0.05, "zero_point": -2} if q else {}
    x = b.add_input("x", shape, dtype, **({"scale": 0.05, "zero_point": 0} if q else {}))
    g = _Chain()
    g.b = b
    g.rng = rng
    a = g.conv(x, 0.05, shape, channels, 0.05, -2) if q else _float_conv(b, rng, x, shape,
                                                                         channels, "a")
    c = channels
    if op in ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D"):
        from tinyarena.kernels._conv_common import compute_padding_height_width

        _, oh, ow = compute_padding_height_width(stride, stride, dilation, dilation, size,
                                                 size, k, k, padding)
        cout = c * multiplier if op == "DEPTHWISE_CONV_2D" else c
        out_shape = (1, oh, ow, cout)
        out_q: dict[str, Any] = {"scale": 0.07, "zero_point": 3} if q else {}
        if op.endswith("POOL_2D"):
            out_q = qa
        y = b.add_tensor("b", out_shape, dtype, **out_q)
        common = {"padding": padding, "stride_w": stride, "stride_h": stride}
        if op.endswith("POOL_2D"):
            b.add_operator(op, [a], [y], filter_width=k, filter_height=k, **common)
        else:
            wshape = (cout, k, k, c) if op == "CONV_2D" else (1, k, k, cout)
            wf = rng.normal(0, 0.3, wshape)
            bf = rng.normal(0, 0.2, cout)
            if q:
                wq, ws = quant.quantize_weights(wf, axis=0 if op == "CONV_2D" else 3)
                wt = b.add_constant("w", wq, scale=ws, zero_point=0,
                                    quantized_dimension=0 if op == "CONV_2D" else 3)
                bq, bs = quant.quantize_bias(bf, 0.05, ws)
                bt = b.add_constant("bias", bq, scale=bs, zero_point=0)
            else:
                wt = b.add_constant("w", wf.astype(np.float32))
                bt = b.add_constant("bias", bf.astype(np.float32))
            extra = {"depth_multiplier": multiplier} if op == "DEPTHWISE_CONV_2D" else {}
            b.add_operator(op, [a, wt, bt], [y], dilation_w_factor=dilation,
                           dilation_h_factor=dilation, **common, **extra)
    elif op == "PAD":
        out_shape = tuple(d + lo + hi for d, (lo, hi) in zip(mid, pads))
        pt = b.add_constant("pads", np.array(pads, np.int32))
        y = b.add_tensor("b", out_shape, dtype, **qa)
        b.add_operator("PAD", [a, pt], [y])
    else:
        raise ValueError(op)
    if q:
        out = g.conv(y, 0.07, out_shape, 1, 0.1, 0)
    else:
        out = _float_conv(b, rng, y, out_shape, 1, "y")
    b.mark_output(out)
    return b.build()


__all__ = ["BINARY_OPS", "SHAPE", "UNARY_OPS", "elementwise_model", "reorder_model",
           "view_model", "window_model"]
