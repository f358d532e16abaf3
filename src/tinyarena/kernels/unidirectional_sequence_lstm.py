"""UNIDIRECTIONAL_SEQUENCE_LSTM: TFLM's unidirectional_sequence_lstm.cc / lstm_eval.cc.

Allocation: the parser allocates ``TfLiteUnidirectionalSequenceLSTMParams``; init allocates
``OpDataLSTM``; prepare takes one temp tensor per present input of the 24 and one for the
output (``LstmTensors``), then requests four scratch buffers of
batch * state * sizeof(cell state type).
"""

from __future__ import annotations

from tinyarena.kernels.base import InitContext, PrepareContext, Registration
from tinyarena.model.types import TFLM_TYPE_SIZES, Operator

INPUT = 0
OUTPUT_STATE = 18  # kLstmOutputStateTensor (the hidden state)
CELL_STATE = 19  # kLstmCellStateTensor
OUTPUT = 0
INTERNAL_TENSORS = 24


def init(ctx: InitContext, op: Operator) -> None:
    """UnidirectionalSequenceLstmInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataLSTM"))


def prepare(ctx: PrepareContext, op: Operator) -> None:
    """UnidirectionalSequenceLstmPrepare, allocation side."""
    for i in range(INTERNAL_TENSORS):
        ctx.allocate_temp_tensor(op.inputs[i] if i < len(op.inputs) else -1)
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    source = ctx.tensor(op.inputs[INPUT])
    hidden = ctx.tensor(op.inputs[OUTPUT_STATE])
    cell = ctx.tensor(op.inputs[CELL_STATE])
    if source is None or hidden is None or cell is None:
        return None
    time_major = bool(getattr(op.options, "time_major", False))
    batch = source.shape[1] if time_major else source.shape[0]
    state = hidden.shape[-1]
    element = TFLM_TYPE_SIZES[cell.type]
    for _ in range(4):
        ctx.request_scratch(batch * state * element)
    return None


REGISTRATION = Registration("UNIDIRECTIONAL_SEQUENCE_LSTM", init=init, prepare=prepare,
                            eval=None, builtin_data="TfLiteUnidirectionalSequenceLSTMParams")
