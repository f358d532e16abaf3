"""Random, valid models for property tests of the planners, the memory model and the kernels.

``random_model(seed)`` builds a model from a seeded ``numpy`` generator: a stem, then a random
sequence of blocks, each one of

* chain     - one op on the running tensor (CONV_2D, DEPTHWISE_CONV_2D, AVERAGE/MAX_POOL_2D,
              RELU, RELU6, LOGISTIC, PAD);
* residual  - a same-shape conv (or two) whose result is ADDed back to the block's input;
* branch    - two parallel chains joined by ADD (same shape) or CONCATENATION (channels);

and optionally a head (MEAN or RESHAPE, FULLY_CONNECTED, SOFTMAX). Shapes are computed as the
ops define them, so every model is valid; quantization follows the converter's conventions (per
channel int8 weights, int32 bias of scale input*weight, activations with random ranges), and ops
whose TFLM kernels assume equal input/output quantization (pooling, PAD, RELU6, CONCATENATION,
RESHAPE) get it. Tensors are small, so a model runs in milliseconds.

``models()`` wraps it as a hypothesis strategy (hypothesis is only imported when called).
The same seed and settings always give byte-identical models.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from tinyarena.builder import quant
from tinyarena.builder.model_builder import ModelBuilder
from tinyarena.errors import BuildError

BLOCKS = ("chain", "residual", "branch")
CHAIN_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D", "MAX_POOL_2D", "RELU", "RELU6",
             "LOGISTIC", "PAD")


@dataclass(frozen=True)
class RandomModel:
    """A generated model, inputs to run it on, and a summary of what it contains."""

    model: bytes
    inputs: tuple[np.ndarray, ...]
    ops: tuple[str, ...]  # op names in execution order
    blocks: tuple[str, ...]
    seed: int
    dtype: str


@dataclass(frozen=True)
class _Act:
    """A running activation: tensor index, NHWC shape and its quantization (None = float)."""

    index: int
    shape: tuple[int, ...]
    scale: float | None = None
    zero_point: int = 0


@dataclass
class _Gen:
    """Generation state: the builder, the random source and the ops used so far."""

    b: ModelBuilder
    rng: np.random.Generator
    dtype: str
    ops: list[str] = field(default_factory=list)
    counter: int = 0

    @property
    def quantized(self) -> bool:
        return self.dtype == "int8"

    def name(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}_{self.counter}"

    def new_act(self, shape: tuple[int, ...], like: _Act | None = None) -> _Act:
        """A new activation tensor; quantized ones get a random range unless ``like`` is given."""
        if not self.quantized:
            return _Act(self.b.add_tensor(self.name("t"), shape, "float32"), shape)
        if like is not None:
            scale, zp = like.scale, like.zero_point
        else:
            low = -float(self.rng.uniform(0.0, 4.0))
            high = float(self.rng.uniform(0.5, 6.0))
            params = quant.choose_quant_params(low, high, "int8")
            scale, zp = float(params.scale[0]), int(params.zero_point[0])
        index = self.b.add_tensor(self.name("t"), shape, "int8", scale=scale, zero_point=zp)
        return _Act(index, shape, scale, zp)

    def op(self, name: str, inputs: Sequence[int], outputs: Sequence[int], **options: Any) -> None:
        self.b.add_operator(name, inputs, outputs, **options)
        self.ops.append(name)

    # -- weights --------------------------------------------------------------------------
    def weights(self, shape: tuple[int, ...], axis: int, src: _Act) -> tuple[int, int]:
        """Weight and bias constants for an op with output channels along ``axis``."""
        values = self.rng.normal(0.0, 0.5, size=shape)
        channels = shape[axis]
        bias_values = self.rng.normal(0.0, 0.2, size=channels)
        if not self.quantized:
            w = self.b.add_constant(self.name("w"), values.astype(np.float32))
            bias = self.b.add_constant(self.name("b"), bias_values.astype(np.float32))
            return w, bias
        assert src.scale is not None
        wq, ws = quant.quantize_weights(values, axis=axis)
        w = self.b.add_constant(self.name("w"), wq, scale=ws, zero_point=0,
                                quantized_dimension=axis)
        bq, bs = quant.quantize_bias(bias_values, src.scale, ws)
        bias = self.b.add_constant(self.name("b"), bq, scale=bs, zero_point=0)
        return w, bias


def _conv_out(size: int, kernel: int, stride: int, padding: str) -> int:
    """Output size along one axis, as TFLM's ComputeOutSize defines it."""
    if padding == "SAME":
        return (size + stride - 1) // stride
    return (size - kernel + stride) // stride


def _activation(g: _Gen) -> str:
    return str(g.rng.choice(["NONE", "RELU", "RELU6"]))


def _conv(g: _Gen, x: _Act, out_channels: int | None = None, *, same_shape: bool = False
          ) -> _Act:
    _, h, w, c = x.shape
    cout = out_channels if out_channels is not None else int(g.rng.integers(1, 9))
    if same_shape:
        kernel, stride, padding = int(g.rng.choice([1, 3])), 1, "SAME"
    else:
        kernel = int(g.rng.choice([1, 3]))
        stride = int(g.rng.choice([1, 2])) if min(h, w) >= 4 else 1
        padding = "SAME" if kernel > min(h, w) else str(g.rng.choice(["SAME", "VALID"]))
    oh, ow = _conv_out(h, kernel, stride, padding), _conv_out(w, kernel, stride, padding)
    weights, bias = g.weights((cout, kernel, kernel, c), 0, x)
    y = g.new_act((1, oh, ow, cout))
    g.op("CONV_2D", [x.index, weights, bias], [y.index], padding=padding, stride_w=stride,
         stride_h=stride, fused_activation_function=_activation(g))
    return y


def _depthwise(g: _Gen, x: _Act) -> _Act:
    _, h, w, c = x.shape
    multiplier = int(g.rng.choice([1, 2])) if c <= 4 else 1
    kernel = 3 if min(h, w) >= 3 else 1
    stride = int(g.rng.choice([1, 2])) if min(h, w) >= 4 else 1
    padding = str(g.rng.choice(["SAME", "VALID"]))
    oh, ow = _conv_out(h, kernel, stride, padding), _conv_out(w, kernel, stride, padding)
    weights, bias = g.weights((1, kernel, kernel, c * multiplier), 3, x)
    y = g.new_act((1, oh, ow, c * multiplier))
    g.op("DEPTHWISE_CONV_2D", [x.index, weights, bias], [y.index], padding=padding,
         stride_w=stride, stride_h=stride, depth_multiplier=multiplier,
         fused_activation_function=_activation(g))
    return y


def _pool(g: _Gen, x: _Act, op: str) -> _Act:
    _, h, w, c = x.shape
    size = 2 if min(h, w) >= 2 else 1
    padding = str(g.rng.choice(["SAME", "VALID"]))
    oh, ow = _conv_out(h, size, size, padding), _conv_out(w, size, size, padding)
    y = g.new_act((1, oh, ow, c), like=x)
    g.op(op, [x.index], [y.index], padding=padding, stride_w=size, stride_h=size,
         filter_width=size, filter_height=size)
    return y


def _unary(g: _Gen, x: _Act, op: str) -> _Act:
    if op == "LOGISTIC" and g.quantized:
        index = g.b.add_tensor(g.name("t"), x.shape, "int8", scale=1 / 256, zero_point=-128)
        y = _Act(index, x.shape, 1 / 256, -128)
    else:
        y = g.new_act(x.shape, like=x)
    g.op(op, [x.index], [y.index])
    return y


def _pad(g: _Gen, x: _Act) -> _Act:
    before, after = g.rng.integers(0, 2, size=2), g.rng.integers(0, 2, size=2)
    paddings = np.array([[0, 0], [before[0], after[0]], [before[1], after[1]], [0, 0]], np.int32)
    p = g.b.add_constant(g.name("paddings"), paddings)
    _, h, w, c = x.shape
    y = g.new_act((1, h + int(before[0] + after[0]), w + int(before[1] + after[1]), c), like=x)
    g.op("PAD", [x.index, p], [y.index])
    return y


def _chain_op(g: _Gen, x: _Act, allowed: Sequence[str]) -> _Act:
    op = str(g.rng.choice(list(allowed)))
    if op == "CONV_2D":
        return _conv(g, x)
    if op == "DEPTHWISE_CONV_2D":
        return _depthwise(g, x)
    if op in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        return _pool(g, x, op)
    if op == "PAD":
        return _pad(g, x)
    return _unary(g, x, op)


def _add(g: _Gen, a: _Act, b: _Act) -> _Act:
    y = g.new_act(a.shape)
    g.op("ADD", [a.index, b.index], [y.index], fused_activation_function=_activation(g))
    return y


def _residual(g: _Gen, x: _Act) -> _Act:
    y = _conv(g, x, x.shape[3], same_shape=True)
    if g.rng.random() < 0.5:
        y = _conv(g, y, x.shape[3], same_shape=True)
    return _add(g, x, y)


def _branch(g: _Gen, x: _Act) -> _Act:
    if g.rng.random() < 0.5:  # ADD join: both branches keep the shape
        left = _conv(g, x, x.shape[3], same_shape=True)
        right = _conv(g, x, x.shape[3], same_shape=True)
        return _add(g, left, right)
    # CONCATENATION join: same spatial size, channels add up; TFLM wants one quantization for
    # all inputs and the output, so both branches requantize to a shared range.
    shared = g.new_act(x.shape)
    parts = []
    for _ in range(2):
        cout = int(g.rng.integers(1, 5))
        _, h, w, c = x.shape
        weights, bias = g.weights((cout, 1, 1, c), 0, x)
        part = g.new_act((1, h, w, cout), like=shared)
        g.op("CONV_2D", [x.index, weights, bias], [part.index], padding="VALID", stride_w=1,
             stride_h=1)
        parts.append(part)
    channels = sum(p.shape[3] for p in parts)
    y = g.new_act((1, x.shape[1], x.shape[2], channels), like=shared)
    g.op("CONCATENATION", [p.index for p in parts], [y.index], axis=3)
    return y


def _head(g: _Gen, x: _Act) -> _Act:
    _, h, w, c = x.shape
    if g.rng.random() < 0.5:
        axes = g.b.add_constant(g.name("axes"), np.array([1, 2], np.int32))
        pooled = g.new_act((1, c), like=x)
        g.op("MEAN", [x.index, axes], [pooled.index], keep_dims=False)
    else:
        shape = g.b.add_constant(g.name("shape"), np.array([1, h * w * c], np.int32))
        pooled = g.new_act((1, h * w * c), like=x)
        g.op("RESHAPE", [x.index, shape], [pooled.index], new_shape=[1, h * w * c])
    units = int(g.rng.integers(2, 7))
    logits = g.new_act((1, units))
    if g.quantized:  # per-tensor weights, as the converter writes FULLY_CONNECTED
        wq, ws = quant.quantize_weights(g.rng.normal(0.0, 0.5, size=(units, pooled.shape[1])),
                                        axis=None)
        weights = g.b.add_constant(g.name("fc_w"), wq, scale=ws, zero_point=0)
        assert pooled.scale is not None
        bq, bs = quant.quantize_bias(g.rng.normal(0.0, 0.2, size=units), pooled.scale, ws)
        bias = g.b.add_constant(g.name("fc_b"), bq, scale=bs, zero_point=0)
    else:
        weights, bias = g.weights((units, pooled.shape[1]), 0, pooled)
    g.op("FULLY_CONNECTED", [pooled.index, weights, bias], [logits.index])
    if g.quantized:
        index = g.b.add_tensor(g.name("probs"), (1, units), "int8", scale=1 / 256,
                               zero_point=-128)
        probs = _Act(index, (1, units), 1 / 256, -128)
    else:
        probs = g.new_act((1, units))
    g.op("SOFTMAX", [logits.index], [probs.index], beta=1.0)
    return probs


def random_model(seed: int, *, dtype: str = "int8", max_blocks: int = 5,
                 blocks: Sequence[str] = BLOCKS, chain_ops: Sequence[str] = CHAIN_OPS,
                 head: bool | None = None, input_hw: tuple[int, int] | None = None,
                 input_channels: int | None = None) -> RandomModel:
    """A random valid model (int8 or float32) and random inputs for it, from ``seed``."""
    if dtype not in ("int8", "float32"):
        raise BuildError(f"random_model makes int8 or float32 models, not {dtype!r}")
    unknown = sorted(set(blocks) - set(BLOCKS)) + sorted(set(chain_ops) - set(CHAIN_OPS))
    if unknown or not blocks or not chain_ops:
        raise BuildError(f"unknown or empty block/op choices {unknown}; blocks are {BLOCKS}, "
                         f"chain ops {CHAIN_OPS}")
    rng = np.random.default_rng(seed)
    g = _Gen(ModelBuilder(description=f"tinyarena random graph seed={seed}"), rng, dtype)
    h, w = input_hw if input_hw is not None else tuple(int(v) for v in rng.integers(3, 11, 2))
    c = input_channels if input_channels is not None else int(rng.integers(1, 5))
    x = g.new_act((1, h, w, c))
    g.b.mark_input(x.index)
    current = _conv(g, x)  # stem: guarantees at least one op reading the input
    chosen = []
    for _ in range(int(rng.integers(1, max_blocks + 1))):
        block = str(rng.choice(list(blocks)))
        chosen.append(block)
        if block == "chain":
            current = _chain_op(g, current, chain_ops)
        elif block == "residual":
            current = _residual(g, current)
        else:
            current = _branch(g, current)
    if head if head is not None else bool(rng.random() < 0.5):
        current = _head(g, current)
    g.b.mark_output(current.index)
    if dtype == "int8":
        data = rng.integers(-128, 128, size=(1, h, w, c), dtype=np.int8)
    else:
        data = rng.normal(size=(1, h, w, c)).astype(np.float32)
    return RandomModel(g.b.build(), (data,), tuple(g.ops), tuple(chosen), seed, dtype)


def models(*, dtype: str = "int8", max_blocks: int = 5) -> Any:
    """A hypothesis strategy of ``RandomModel`` (shrinks towards small seeds)."""
    from hypothesis import strategies as st

    return st.integers(min_value=0, max_value=2**31 - 1).map(
        lambda seed: random_model(seed, dtype=dtype, max_blocks=max_blocks))
