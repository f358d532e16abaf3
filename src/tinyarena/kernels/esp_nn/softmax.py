"""SOFTMAX with ESP-NN: esp-tflite-micro's kernels/esp_nn/softmax.cc.

Allocation: init allocates esp's NodeData (``SoftmaxParams`` + ``buffer_idx``, 64 bytes);
prepare makes the reference allocations (temps input, output; the int16 LUTs) and, for int8
input and int8 output, requests ``esp_nn_get_softmax_scratch_size(dims[1], dims[2])`` =
4 * dims[1] bytes. esp's Prepare reads ``input->dims->data[1]`` whatever the rank: for a 1-D
input that is past the shape, so tinyarena refuses to guess it. Eval then has esp-nn store one
int32 per element of the last dimension (``depth``) in that buffer: an [N, 3, 17] input writes
68 bytes into 12. The bytes past the request land in whatever the arena holds there; the
minimum arena keeps them clear of the tail (``eval_writes``), where a smaller arena crashed in
the esp-oracle's run.

Arithmetic: the reference kernel's (esp-nn's int8 softmax is TFLM's fixed-point algorithm).
"""

from __future__ import annotations

from tinyarena.errors import UnsupportedOpError
from tinyarena.kernels import softmax as reference
from tinyarena.kernels._softmax_math import SoftmaxOpData
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.esp_nn import _scratch_sizes as ss
from tinyarena.model.types import Operator, TensorType


def init(ctx: InitContext, op: Operator) -> None:
    """Init: esp's NodeData."""
    ctx.allocate_persistent(ctx.target.sizeof("EspNnNodeDataSoftmax"))


def prepare(ctx: PrepareContext, op: Operator) -> SoftmaxOpData:
    """Prepare: the reference allocations, then esp-nn's row buffer for int8 -> int8."""
    data = reference.prepare(ctx, op)
    source = ctx.tensor(op.inputs[reference.INPUT])
    output = ctx.tensor(op.outputs[reference.OUTPUT])
    if source is None or output is None or source.type != TensorType.INT8 \
            or output.type != TensorType.INT8:
        return data
    if len(source.shape) < 2:
        raise UnsupportedOpError(
            f"SOFTMAX on a {len(source.shape)}-D input: esp-tflite-micro's esp_nn softmax "
            f"reads the input's dims[1] for its scratch size, which a 1-D shape does not "
            f"have (the size depends on bytes past the shape in the model file); reshape the "
            f"input to [1, N] or size with --kernels reference", op_name="SOFTMAX")
    size = ss.softmax(source.shape[1])
    if size > 0:
        # every esp-nn softmax (generic, S3 and P4, all releases) then stores one int32 per
        # element of the last dimension there: more than requested when depth > dims[1]
        ctx.request_scratch(size, eval_writes=ss.softmax(source.shape[-1]))
    return data


REGISTRATION = Registration("SOFTMAX", init=init, prepare=prepare, eval=reference.eval_,
                            bind=reference.bind, builtin_data="TfLiteSoftmaxParams")
