"""A stateful streaming int8 model shaped like the public microWakeWord architecture.

microWakeWord (ESPHome's wake-word models) runs one invoke per few 10 ms feature frames. Every
temporal convolution keeps the frames it still needs in a ring buffer held in a resource
variable: VAR_HANDLE, READ_VARIABLE, CONCATENATION (old frames + new ones along time),
STRIDED_SLICE (the newest frames) into ASSIGN_VARIABLE, then the convolution over the
concatenated window. A CALL_ONCE subgraph zero-fills every buffer first. The stem is a strided
CONV_2D over 3 new frames, the blocks are depthwise temporal convolutions of growing kernel
followed by pointwise CONV_2Ds, the head is a flattened window, FULLY_CONNECTED, LOGISTIC and a
QUANTIZE to uint8. With the defaults the main subgraph has 59 operators.

The weights are random (seeded): the benchmark measures time, and both runtimes must agree
bit for bit on whatever the model computes.
"""

from __future__ import annotations

from typing import Sequence

import numpy as np

from tinyarena.builder import ModelBuilder

FEATURES = 40  # mel bins per frame
NEW_FRAMES = 3  # frames per invoke (the stem's stride)


def streaming_model(kernels: Sequence[int] = (5, 7, 9, 11, 13, 15), channels: int = 32,
                    stem_kernel: int = 5, head_frames: int = 5, seed: int = 0) -> bytes:
    """The model as .tflite bytes (see the module docstring)."""
    rng = np.random.default_rng(seed)
    b = ModelBuilder()
    init = b.add_subgraph("init")
    act_scale, act_zero_point = 0.05, -20
    features = b.add_input("features", (1, NEW_FRAMES, FEATURES), "int8", scale=0.1,
                           zero_point=-128)
    b.add_operator("CALL_ONCE", [], [], init_subgraph_index=init.index)
    frames = b.add_tensor("frames", (1, NEW_FRAMES, 1, FEATURES), "int8", scale=0.1,
                          zero_point=-128)
    shape = b.add_constant("frames_shape", np.array([1, NEW_FRAMES, 1, FEATURES], np.int32))
    b.add_operator("RESHAPE", [features, shape], [frames])

    def ring(name: str, x: int, keep: int, width: int, new: int, scale: float,
             zero_point: int) -> int:
        """Old ``keep`` frames + ``new`` frames of ``x``; the newest ``keep`` are stored back."""
        handle = b.add_tensor(f"{name}/handle", (), "resource")
        state = b.add_tensor(f"{name}/state", (1, keep, 1, width), "int8", scale=scale,
                              zero_point=zero_point)
        window = b.add_tensor(f"{name}/window", (1, keep + new, 1, width), "int8", scale=scale,
                              zero_point=zero_point)
        newest = b.add_tensor(f"{name}/newest", (1, keep, 1, width), "int8", scale=scale,
                              zero_point=zero_point)
        b.add_operator("VAR_HANDLE", [], [handle], shared_name=name)
        b.add_operator("READ_VARIABLE", [handle], [state])
        b.add_operator("CONCATENATION", [state, x], [window], axis=1)
        begin = b.add_constant(f"{name}/begin", np.array([0, new, 0, 0], np.int32))
        end = b.add_constant(f"{name}/end", np.array([1, keep + new, 1, width], np.int32))
        strides = b.add_constant(f"{name}/strides", np.array([1, 1, 1, 1], np.int32))
        b.add_operator("STRIDED_SLICE", [window, begin, end, strides], [newest])
        b.add_operator("ASSIGN_VARIABLE", [handle, newest], [])
        h = init.add_tensor(f"{name}/handle", (), "resource")
        zeros = init.add_constant(f"{name}/zeros",
                                  np.full((1, keep, 1, width), zero_point, np.int8),
                                  scale=scale, zero_point=zero_point)
        init.add_operator("VAR_HANDLE", [], [h], shared_name=name)
        init.add_operator("ASSIGN_VARIABLE", [h, zeros], [])
        return window

    def weights(name: str, shape: tuple[int, ...], dim: int) -> int:
        w = rng.integers(-127, 128, size=shape).astype(np.int8)
        scales = rng.uniform(0.002, 0.004, size=shape[dim]).astype(np.float32)
        return b.add_constant(name, w, scale=scales, zero_point=np.zeros(shape[dim], np.int64),
                              quantized_dimension=dim)

    def bias(name: str, count: int) -> int:
        return b.add_constant(name, rng.integers(-2000, 2000, size=count).astype(np.int32),
                              scale=np.full(count, 1e-4, np.float32),
                              zero_point=np.zeros(count, np.int64))

    window = ring("stem", frames, stem_kernel - 1, FEATURES, NEW_FRAMES, 0.1, -128)
    x = b.add_tensor("stem/out", (1, 1, 1, channels), "int8", scale=act_scale,
                     zero_point=act_zero_point)
    b.add_operator("CONV_2D", [window, weights("stem/w", (channels, stem_kernel, 1, FEATURES), 0),
                               bias("stem/b", channels)], [x],
                   padding="VALID", stride_h=NEW_FRAMES, stride_w=1,
                   fused_activation_function="RELU")
    for i, k in enumerate(kernels):
        window = ring(f"block{i}", x, k - 1, channels, 1, 0.05, -20)
        dw = b.add_tensor(f"block{i}/dw", (1, 1, 1, channels), "int8", scale=act_scale,
                     zero_point=act_zero_point)
        b.add_operator("DEPTHWISE_CONV_2D",
                       [window, weights(f"block{i}/dw_w", (1, k, 1, channels), 3),
                        bias(f"block{i}/dw_b", channels)], [dw],
                       padding="VALID", stride_h=1, stride_w=1, depth_multiplier=1)
        x = b.add_tensor(f"block{i}/out", (1, 1, 1, channels), "int8", scale=act_scale,
                     zero_point=act_zero_point)
        b.add_operator("CONV_2D", [dw, weights(f"block{i}/pw_w", (channels, 1, 1, channels), 0),
                                   bias(f"block{i}/pw_b", channels)], [x],
                       padding="VALID", stride_h=1, stride_w=1,
                       fused_activation_function="RELU")
    window = ring("head", x, head_frames - 1, channels, 1, 0.05, -20)
    flat = b.add_tensor("head/flat", (1, head_frames * channels), "int8", scale=act_scale,
                     zero_point=act_zero_point)
    flat_shape = b.add_constant("head/flat_shape", np.array([1, head_frames * channels],
                                                            np.int32))
    b.add_operator("RESHAPE", [window, flat_shape], [flat])
    logit = b.add_tensor("head/logit", (1, 1), "int8", scale=0.1, zero_point=0)
    b.add_operator("FULLY_CONNECTED", [flat, weights("head/w", (1, head_frames * channels), 0),
                                       bias("head/b", 1)], [logit])
    prob = b.add_tensor("head/prob", (1, 1), "int8", scale=1 / 256, zero_point=-128)
    b.add_operator("LOGISTIC", [logit], [prob])
    out = b.add_tensor("probability", (1, 1), "uint8", scale=1 / 256, zero_point=0)
    b.add_operator("QUANTIZE", [prob], [out])
    b.mark_output(out)
    return b.build()


__all__ = ["streaming_model"]
