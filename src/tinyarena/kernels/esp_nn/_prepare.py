"""What esp_nn/conv.cc and esp_nn/depthwise_conv.cc add to the reference Prepare.

Both run the reference kernel's allocations (temps, the per-channel arrays for every type, the
int4 unpack scratch) and then, for int8 input only, ask esp-nn for its scratch size with the
input, filter and output dims, the strides and the padding CalculateOpData computed (dilation
is passed as 0: esp-nn's size functions ignore it), and request that many bytes when it is
more than 0. int16 and float inputs run TFLM's reference code and request nothing more.
"""

from __future__ import annotations

from tinyarena.kernels._conv_common import CONV_FILTER, CONV_INPUT, CONV_OUTPUT, Padding
from tinyarena.kernels.base import PrepareContext
from tinyarena.kernels.esp_nn import _scratch_sizes as ss
from tinyarena.model.types import Operator, TensorType


def request_esp_nn_scratch(ctx: PrepareContext, op: Operator, table: ss.ScratchSizeTable,
                           stride: tuple[int, int], padding: Padding, ch_mult: int = 1) -> None:
    """esp_nn_get_{conv,depthwise_conv}_scratch_size for this chip and release, then
    RequestScratchBufferInArena when positive. ``stride`` is (width, height)."""
    source = ctx.tensor(op.inputs[CONV_INPUT])
    weights = ctx.tensor(op.inputs[CONV_FILTER])
    output = ctx.tensor(op.outputs[CONV_OUTPUT])
    if source is None or weights is None or output is None or source.type != TensorType.INT8:
        return
    size_fn = ss.lookup(table, ctx.target.esp_nn_dispatch, ctx.target.esp_nn_version)
    size = size_fn(ss.Dims(source.shape[2], source.shape[1], source.shape[3]),
                   ss.Dims(weights.shape[2], weights.shape[1], weights.shape[3]),
                   ss.Dims(output.shape[2], output.shape[1], output.shape[3]),
                   ss.ConvScratchParams(stride[0], stride[1], padding.width, padding.height,
                                        ch_mult))
    if size > 0:
        ctx.request_scratch(size)
