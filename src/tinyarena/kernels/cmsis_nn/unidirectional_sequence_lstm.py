"""UNIDIRECTIONAL_SEQUENCE_LSTM with CMSIS-NN: TFLM's kernels/cmsis_nn/unidirectional_sequence_lstm.cc.

Allocation: init allocates the cmsis_nn OpData (``OpDataLSTM`` + ``cmsis_nn_lstm_params``);
prepare takes the reference kernel's temps; with an int16 cell state and int8 or int16
activations (the CMSIS-NN paths) it allocates eight persistent kernel-sum arrays of
state * sizeof(bias) (int32 for int8 activations, int64 for int16; four gates times input and
recurrent weights) and requests 3 scratch buffers of batch * state * 2 bytes instead of the
reference kernel's 4; float keeps the reference 4. Arithmetic: the reference kernel's.
"""

from __future__ import annotations

from tinyarena.kernels import unidirectional_sequence_lstm as reference
from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.kernels.cmsis_nn import _buffer_sizes as bs
from tinyarena.kernels.cmsis_nn._context import ScratchRewrite
from tinyarena.model.types import Operator, TensorType

CMSIS_NN_BUFFERS = 3
KERNEL_SUMS = 8


def init(ctx: InitContext, op: Operator) -> None:
    """UnidirectionalSequenceLstmInit: the cmsis_nn OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("CmsisNnOpDataLSTM"))


def prepare(ctx: PrepareContext, op: Operator) -> reference.OpData:
    """UnidirectionalSequenceLstmPrepare: kernel sums, then 3 buffers on the CMSIS-NN paths."""
    bs.check_isa(ctx.target.cmsis_nn_isa)
    source = ctx.tensor(op.inputs[reference.INPUT])
    cell = ctx.tensor(op.inputs[reference.CELL_STATE]) \
        if len(op.inputs) > reference.CELL_STATE else None
    cmsis = (source is not None and cell is not None and cell.type == TensorType.INT16
             and source.type in (TensorType.INT8, TensorType.INT16))
    if not cmsis:
        return reference.prepare(ctx, op)
    def keep_three(number: int, nbytes: int) -> tuple[int, ...]:
        return (nbytes,) if number < CMSIS_NN_BUFFERS else ()

    # The reference prepare validates and ends with its buffer requests; the kernel sums come
    # before CMSIS-NN's requests, and nothing else in this prepare touches the tail.
    data = reference.prepare(ScratchRewrite(ctx, keep_three), op)
    hidden = ctx.tensor(op.inputs[reference.OUTPUT_STATE])
    state = hidden.shape[-1] if hidden is not None else 0
    bias_bytes = 4 if source is not None and source.type == TensorType.INT8 else 8
    for _ in range(KERNEL_SUMS):
        ctx.allocate_persistent(state * bias_bytes)
    return data


# -- eval (cmsis-run) --
# arm_lstm_unidirectional_s8/s16: gate FCs with kernel sums, int16 sigmoid/tanh tables and
# requantised gate products, as the reference integer LSTM; reused. Checked:
# trained_lstm_int8 on all three ISAs (float: trained_lstm, via the reference kernel).
eval_ = reference.eval_

REGISTRATION = Registration("UNIDIRECTIONAL_SEQUENCE_LSTM", init=init, prepare=prepare,
                            eval=eval_, bind=reference.bind,
                            builtin_data="TfLiteUnidirectionalSequenceLSTMParams")
