"""Small int8 CNNs for the patch rewrite, built with tinyarena.builder.

Together they cover what a first stage holds in real CNNs: stride 2, dilation, SAME and VALID
padding (SAME stride 2 on even and odd sizes), explicit PAD, max pooling with SAME padding
(PADV2 fill) and VALID average pooling, depthwise convolutions, ADD residuals (a shortcut
inside the stage), channel CONCATENATION (SqueezeNet's fire module), LEAKY_RELU (YOLO), an
NCHW input with a leading TRANSPOSE (MobileNetV2 as converted from PyTorch), and a
non-patchable tail (FULLY_CONNECTED) ending the stage search.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tinyarena.builder import ModelBuilder, quant


def _out(size: int, k: int, s: int, d: int, padding: str) -> int:
    """TFLite's output size, written out independently of tinyarena.rewrite.patches."""
    if padding == "SAME":
        return -(-size // s)
    return -(-(size - (k - 1) * d) // s)


class Cnn:
    """An NHWC int8 chain builder; ``x`` is the current tensor and ``shape`` its shape."""

    def __init__(self, shape: tuple[int, int, int, int], seed: int = 3,
                 nchw: bool = False, float_input: bool = False) -> None:
        self.b = ModelBuilder(description="tinyarena patch test")
        self.rng = np.random.default_rng(seed)
        self.n = 0
        self.scale, self.zp = 0.05, -3
        if nchw:
            n, h, w, c = shape
            src = self.b.add_input("x", (n, c, h, w), "int8", scale=self.scale,
                                   zero_point=self.zp)
            perm = self.b.add_constant("perm", np.array([0, 2, 3, 1], np.int32))
            self.x = self._act(shape)
            self.b.add_operator("TRANSPOSE", [src, perm], [self.x])
            self.input = src
        elif float_input:
            src = self.b.add_input("f", shape, "float32")
            self.x = self._act(shape)
            self.b.add_operator("QUANTIZE", [src], [self.x])
            self.input = src
        else:
            self.x = self.b.add_input("x", shape, "int8", scale=self.scale, zero_point=self.zp)
            self.input = self.x
        self.shape = shape

    def _name(self, p: str) -> str:
        self.n += 1
        return f"{p}{self.n}"

    def _act(self, shape: tuple[int, ...], scale: float | None = None,
             zp: int | None = None) -> int:
        return self.b.add_tensor(self._name("t"), shape, "int8",
                                 scale=self.scale if scale is None else scale,
                                 zero_point=self.zp if zp is None else zp)

    def _set(self, t: int, shape: tuple[int, int, int, int], scale: float, zp: int) -> int:
        self.x, self.shape, self.scale, self.zp = t, shape, scale, zp
        return t

    def conv(self, cout: int, k: int = 3, s: int = 1, padding: str = "SAME", d: int = 1,
             act: str = "RELU6", depthwise: bool = False, src: int | None = None,
             out_q: tuple[float, int] | None = None) -> int:
        x = self.x if src is None else src
        _, h, w, c = self.shape
        if depthwise:
            cout = c * (cout // c if cout >= c else 1)
        wshape = (1, k, k, cout) if depthwise else (cout, k, k, c)
        axis = 3 if depthwise else 0
        wq, ws = quant.quantize_weights(self.rng.normal(0, 0.4, wshape), axis=axis)
        wt = self.b.add_constant(self._name("w"), wq, scale=ws, zero_point=0,
                                 quantized_dimension=axis)
        bq, bs = quant.quantize_bias(self.rng.normal(0, 0.3, cout), self.scale, ws)
        bt = self.b.add_constant(self._name("b"), bq, scale=bs, zero_point=0)
        shape = (1, _out(h, k, s, d, padding), _out(w, k, s, d, padding), cout)
        scale, zp = float(self.rng.uniform(0.03, 0.08)), int(self.rng.integers(-10, 10))
        if out_q is not None:
            scale, zp = out_q
        y = self._act(shape, scale, zp)
        options: dict[str, Any] = dict(padding=padding, stride_w=s, stride_h=s,
                                       dilation_w_factor=d, dilation_h_factor=d,
                                       fused_activation_function=act)
        if depthwise:
            options["depth_multiplier"] = cout // c
        self.b.add_operator("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, wt, bt], [y],
                            **options)
        return self._set(y, shape, scale, zp)

    def pool(self, kind: str, k: int, s: int, padding: str) -> int:
        _, h, w, c = self.shape
        shape = (1, _out(h, k, s, 1, padding), _out(w, k, s, 1, padding), c)
        y = self._act(shape)
        self.b.add_operator(kind, [self.x], [y], padding=padding, stride_w=s, stride_h=s,
                            filter_width=k, filter_height=k)
        return self._set(y, shape, self.scale, self.zp)

    def pad(self, top: int, bottom: int, left: int, right: int) -> int:
        _, h, w, c = self.shape
        p = self.b.add_constant(self._name("pads"), np.array(
            [[0, 0], [top, bottom], [left, right], [0, 0]], np.int32))
        shape = (1, h + top + bottom, w + left + right, c)
        y = self._act(shape)
        self.b.add_operator("PAD", [self.x, p], [y])
        return self._set(y, shape, self.scale, self.zp)

    def add(self, a: int, b: int) -> int:
        scale, zp = float(self.rng.uniform(0.05, 0.1)), int(self.rng.integers(-5, 5))
        y = self._act(self.shape, scale, zp)
        self.b.add_operator("ADD", [a, b], [y], fused_activation_function="NONE")
        return self._set(y, self.shape, scale, zp)

    def leaky(self) -> int:
        y = self._act(self.shape, self.scale * 0.9, self.zp)
        self.b.add_operator("LEAKY_RELU", [self.x], [y], alpha=0.1)
        return self._set(y, self.shape, self.scale * 0.9, self.zp)

    def concat(self, parts: list[int], channels: int) -> int:
        _, h, w, _ = self.shape
        shape = (1, h, w, channels)
        y = self._act(shape)  # every input must share the output's quantization
        self.b.add_operator("CONCATENATION", parts, [y], axis=3)
        return self._set(y, shape, self.scale, self.zp)

    def head(self, units: int = 5) -> bytes:
        """Mean-free classifier tail: RESHAPE to a vector and FULLY_CONNECTED."""
        depth = int(np.prod(self.shape))
        shape = self.b.add_constant(self._name("shape"), np.array([1, depth], np.int32))
        v = self._act((1, depth))
        self.b.add_operator("RESHAPE", [self.x, shape], [v], new_shape=[1, depth])
        wq, ws = quant.quantize_weights(self.rng.normal(0, 0.05, (units, depth)), axis=None)
        wt = self.b.add_constant(self._name("fw"), wq, scale=ws, zero_point=0)
        bq, bs = quant.quantize_bias(self.rng.normal(0, 0.1, units), self.scale, ws)
        bt = self.b.add_constant(self._name("fb"), bq, scale=bs, zero_point=0)
        y = self._act((1, units), 0.2, 0)
        self.b.add_operator("FULLY_CONNECTED", [v, wt, bt], [y])
        self.b.mark_output(y)
        return self.b.build()


def mobilenet_like(size: int = 24) -> bytes:
    """Stride-2 SAME conv on an even size (pads bottom/right only), depthwise, an inverted
    residual whose ADD sits inside the stage, a dilated conv, VALID average pooling."""
    g = Cnn((1, size, size, 3))
    g.conv(8, k=3, s=2)
    g.conv(8, k=3, depthwise=True)
    block_in = g.conv(6, k=1, act="NONE")
    g.conv(12, k=1)
    g.conv(12, k=3, depthwise=True)
    out = g.conv(6, k=1, act="NONE")
    g.add(block_in, out)
    g.conv(8, k=3, d=2)
    g.pool("AVERAGE_POOL_2D", 2, 2, "VALID")
    return g.head()


def nchw_model(size: int = 20) -> bytes:
    """PyTorch-style: NCHW input, TRANSPOSE, explicit PAD, VALID stride-2 conv, odd sizes."""
    g = Cnn((1, size + 1, size - 1, 3), nchw=True)
    g.pad(1, 1, 1, 1)
    g.conv(8, k=3, s=2, padding="VALID")
    g.pad(0, 1, 1, 0)
    g.conv(8, k=3, padding="VALID", depthwise=True)
    g.conv(4, k=1, act="NONE")
    return g.head()


def squeeze_yolo_model(size: int = 26) -> bytes:
    """SqueezeNet fire module (1x1 squeeze, 1x1 and 3x3 expand, channel CONCATENATION) after a
    SAME 3x3 stride-2 max pool (PADV2 fill), then YOLO-style LEAKY_RELU, a second SAME max pool
    and a VALID 5x5 conv with stride 2."""
    g = Cnn((1, size, size, 3), seed=5)
    g.conv(8, k=3, s=1, act="RELU")
    g.pool("MAX_POOL_2D", 3, 2, "SAME")
    squeeze = g.conv(4, k=1)
    shape, scale, zp = g.shape, g.scale, g.zp
    e1 = g.conv(6, k=1, act="RELU", out_q=(0.06, -4))
    g._set(squeeze, shape, scale, zp)
    e3 = g.conv(6, k=3, act="RELU", out_q=(0.06, -4))  # concat inputs share its quantization
    g.concat([e1, e3], 12)
    g.leaky()
    g.pool("MAX_POOL_2D", 3, 1, "SAME")  # a second -128 fill, quantized unlike the first
    g.conv(8, k=5, s=2, padding="VALID", act="NONE")
    return g.head()


def wide_stem_model(size: int = 64) -> bytes:
    """A MobileNetV2-like stem whose early maps dwarf the rest (where patches pay): stride-2
    SAME conv, depthwise, a wide expansion, a stride-2 SAME depthwise on an even size, a
    dilated conv and a VALID max pool."""
    g = Cnn((1, size, size, 3), seed=11)
    g.conv(16, k=3, s=2)
    g.conv(16, k=3, depthwise=True)
    g.conv(8, k=1, act="NONE")
    g.conv(48, k=1)
    g.conv(48, k=3, s=2, depthwise=True)
    g.conv(8, k=1, act="NONE")
    g.conv(8, k=3, d=2)
    g.pool("MAX_POOL_2D", 2, 2, "VALID")
    g.conv(4, k=1)
    return g.head()


def float_input_model(size: int = 20) -> bytes:
    """A float32 graph input QUANTIZEd into the int8 stage (a converter's float-I/O model)."""
    g = Cnn((1, size, size, 3), seed=13, float_input=True)
    g.conv(8, k=3, s=2)
    g.conv(8, k=3, depthwise=True)
    g.conv(6, k=1, act="NONE")
    return g.head()


def resnet_model(size: int = 32) -> bytes:
    """ResNet stem and a downsampling block: 7x7 stride-2 SAME conv, 3x3 stride-2 SAME max
    pool, then a block whose 1x1 stride-2 shortcut conv and 3x3 stride-2 / 3x3 main branch
    meet in an ADD with a fused RELU."""
    g = Cnn((1, size, size, 3), seed=17)
    g.conv(16, k=7, s=2, act="RELU")
    block_in = g.pool("MAX_POOL_2D", 3, 2, "SAME")
    shape, scale, zp = g.shape, g.scale, g.zp
    shortcut = g.conv(24, k=1, s=2, act="NONE")
    g._set(block_in, shape, scale, zp)
    g.conv(24, k=3, s=2, act="RELU")
    main = g.conv(24, k=3, act="NONE")
    y = g._act(g.shape, 0.09, -6)
    g.b.add_operator("ADD", [shortcut, main], [y], fused_activation_function="RELU")
    g._set(y, g.shape, 0.09, -6)
    return g.head()


def fc_only_model() -> bytes:
    """No convolution at all: nothing to patch."""
    b = ModelBuilder(description="fc only")
    rng = np.random.default_rng(1)
    x = b.add_input("x", (1, 16), "int8", scale=0.05, zero_point=0)
    wq, ws = quant.quantize_weights(rng.normal(0, 0.1, (4, 16)), axis=None)
    wt = b.add_constant("w", wq, scale=ws, zero_point=0)
    bq, bs = quant.quantize_bias(rng.normal(0, 0.1, 4), 0.05, ws)
    bt = b.add_constant("b", bq, scale=bs, zero_point=0)
    y = b.add_tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    b.add_operator("FULLY_CONNECTED", [x, wt, bt], [y])
    b.mark_output(y)
    return b.build()


MODELS = {"mobilenet_like": mobilenet_like, "nchw": nchw_model,
          "squeeze_yolo": squeeze_yolo_model, "wide_stem": wide_stem_model,
          "float_input": float_input_model, "resnet": resnet_model}
