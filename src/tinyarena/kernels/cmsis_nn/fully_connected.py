"""FULLY_CONNECTED with CMSIS-NN: TFLM's kernels/cmsis_nn/fully_connected.cc.

Allocation: init allocates the cmsis_nn OpData (``OpDataFullyConnected`` + two buffer indices,
the kernel-sum pointer, batches, accum_depth, output_depth); prepare takes temp tensors input,
filter, bias (when present), output, allocates the reference per-channel arrays
(CalculateOpDataFullyConnected), then:

* int16 input: CMSIS-NN's buffer, which is empty;
* int8 input, int8 filter, output rank > 2 and accum_depth % 4 == 0 (run as a 1x1 convolution):
  a scratch of 8 * output_depth for per-tensor quantization (per-channel data already has its
  arrays), plus the 1x1 buffer (empty with GCC);
* other int8: ``arm_fully_connected_s8_get_buffer_size`` (MVE: 4 * output_depth, else empty);
  with ``KERNELS_OPTIMIZED_FOR_SPEED`` and a constant filter and bias it becomes a persistent
  kernel-sum array instead of a scratch.

No int4 unpack buffer (CMSIS-NN reads packed int4 filters). Arithmetic: the reference kernel's.
"""

from __future__ import annotations

from tinyarena.errors import KernelError
from tinyarena.kernels._conv_kernels import (
    FullyConnectedData,
    bind_fully_connected,
    fully_connected_eval,
    fully_connected_op_data,
)
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.cmsis_nn import _buffer_sizes as bs
from tinyarena.kernels.cmsis_nn._overlap import ALL_ISAS, OverlapRule
from tinyarena.model.types import Operator, TensorType

INPUT = 0
WEIGHTS = 1
BIAS = 2
OUTPUT = 0


def init(ctx: InitContext, op: Operator) -> None:
    """Init: the cmsis_nn OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("CmsisNnOpDataFullyConnected"))


def prepare(ctx: PrepareContext, op: Operator) -> FullyConnectedData:
    """Prepare (cmsis_nn/fully_connected.cc), allocation side, then the reference op data."""
    isa = bs.check_isa(ctx.target.cmsis_nn_isa)
    bias = op.inputs[BIAS] if len(op.inputs) > BIAS else -1
    for index in (op.inputs[INPUT], op.inputs[WEIGHTS], bias, op.outputs[OUTPUT]):
        ctx.allocate_temp_tensor(index)
    source, weights = ctx.tensor(op.inputs[INPUT]), ctx.tensor(op.inputs[WEIGHTS])
    scales = 0 if weights is None or weights.quantization is None else len(
        weights.quantization.scale)
    per_channel = source is not None and source.type != TensorType.FLOAT32 and scales > 1
    if per_channel:
        ctx.allocate_persistent(4 * scales)  # per_channel_output_multiplier
        ctx.allocate_persistent(4 * scales)  # per_channel_output_shift
    data = fully_connected_op_data(ctx, op)
    if per_channel and (source is None or source.type != TensorType.INT8
                        or weights is None or weights.type == TensorType.INT4):
        raise KernelError("FULLY_CONNECTED with CMSIS-NN takes per-channel quantized weights "
                          "only with int8 input and int8 weights (TFLM's cmsis_nn kernel "
                          "refuses the rest); use per-tensor weights or --kernels reference")
    output = ctx.tensor(op.outputs[OUTPUT])
    if source is None or weights is None or output is None \
            or source.type != TensorType.INT8 or weights.type == TensorType.INT4:
        return data  # float, int16 (empty buffer) and int4 request nothing
    output_depth = output.shape[-1]
    accum_depth = weights.shape[-1]
    if len(output.shape) > 2 and accum_depth % 4 == 0:  # is_conv_1x1_possible
        if not per_channel:
            ctx.request_scratch(8 * output_depth)  # per-tensor values as per-channel arrays
        return data  # arm_convolve_1x1_s8_fast_get_buffer_size: empty with GCC
    size = bs.fully_connected_s8(isa, output_depth)
    bias_t = ctx.tensor(bias) if bias >= 0 else None
    constant = weights.data is not None and (bias_t is None or bias_t.data is not None)
    if size > 0 and ctx.target.kernels_optimized_for_speed and constant:
        ctx.allocate_persistent(size)  # kernel_sums
    elif size > 0:
        ctx.request_scratch(size)
    return data


# -- eval (cmsis-run) --
# arm_fully_connected_s8/s16 (MVE with precomputed kernel sums: the input offset times the
# column sums, the same integer as the reference's per-element offset) requantise like the
# reference; reused. Checked: fc_int8/int16 sweeps, hello_world_int8, keyword models,
# trained_lstm_int8 on all three ISAs.
# The reference kernel's bound steps (compiled when the interpreter runs them) too.
eval_ = fully_connected_eval

REGISTRATION = Registration("FULLY_CONNECTED", init=init, prepare=prepare, eval=eval_,
                            bind=bind_fully_connected, builtin_data="TfLiteFullyConnectedParams")

# -- overlap rules (optimize/safety.py) --
# TFLM cmsis_nn/fully_connected.cc EvalQuantizedInt8 -> arm_fully_connected_s8 ->
# arm_nn_vec_mat_mult_t_s8 (Source/NNSupportFunctions/arm_nn_vec_mat_mult_t_s8.c) per batch
# row: the outer loop walks output channels (2 or 4 rows of weights at a time) and each
# re-reads the whole input row, so every output of a row is written while that row is still
# read: with one batch row (every supported model) no byte can be shared. Recorded, unused:
# tinyarena plans no overlap for FULLY_CONNECTED on any kernel set.
OVERLAP_RULES = (
    OverlapRule("FULLY_CONNECTED:INT8", ALL_ISAS, "none",
                "arm_nn_vec_mat_mult_t_s8.c (output channels outermost per batch row)",
                "fully connected walks output channels outermost and re-reads the whole "
                "input row for each, so a row's outputs are written before its input's last "
                "read"),
)
