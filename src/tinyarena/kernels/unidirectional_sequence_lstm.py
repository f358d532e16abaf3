"""UNIDIRECTIONAL_SEQUENCE_LSTM: TFLM's unidirectional_sequence_lstm.cc / lstm_eval.cc.

Allocation: the parser allocates ``TfLiteUnidirectionalSequenceLSTMParams``; init allocates
``OpDataLSTM``; prepare takes one temp tensor per present input of the 24 and one for the
output (``LstmTensors``), then requests four scratch buffers of
batch * state * sizeof(cell state type).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels._ieee import c_float_env
from tinyarena.kernels._quant import tensor_quant
from tinyarena.kernels._lstm_math import (
    GATE_TENSORS,
    GATES,
    LstmPlan,
    LstmQuant,
    lstm_float,
    lstm_integer,
    lstm_plan,
    lstm_quant,
)
from tinyarena.kernels._tflm_version import scale_arithmetic
from tinyarena.kernels import native
from tinyarena.kernels.base import EvalContext, InitContext, PrepareContext, Registration, Step
from tinyarena.model.options import UnidirectionalSequenceLSTMOptions
from tinyarena.model.types import TFLM_TYPE_SIZES, Operator, Tensor, TensorType

INPUT = 0
OUTPUT_STATE = 18  # kLstmOutputStateTensor (the hidden state)
CELL_STATE = 19  # kLstmCellStateTensor
OUTPUT = 0
INTERNAL_TENSORS = 24


def init(ctx: InitContext, op: Operator) -> None:
    """UnidirectionalSequenceLstmInit: the OpData."""
    ctx.allocate_persistent(ctx.target.sizeof("OpDataLSTM"))


@dataclass(frozen=True)
class OpData:
    """OpDataLSTM: layout, cell gate activation and clip, integer parameters, and the plan:
    the gates' weights stacked for eval (int64 with the weight offset added, or float32 as
    stored) and the eval workspaces."""

    kind: str  # "float", "8x8_16" or "16x8_16"
    time_major: bool
    cell_activation: str
    cell_clip: float
    plan: LstmPlan
    quant: LstmQuant | None


_OPTIONAL_ABSENT = (9, 10, 11, 16, 17, 20, 21, 22, 23)  # peephole, projection, layer norm
_WEIGHTS = tuple(range(1, 9))  # input-to-gate and recurrent-to-gate weights
_BIASES = tuple(range(12, 16))  # the four gate biases


def _gate_params(t: list[Tensor | None]) -> dict[int, Tensor]:
    """The eight weights and four biases by input index: LstmTensors requires all of them."""
    found: dict[int, Tensor] = {}
    for i in _WEIGHTS + _BIASES:
        tensor = t[i]
        if tensor is None:
            raise KernelError(f"LSTM: input {i} is omitted; all eight weight tensors and four "
                              "gate biases are required (CIFG is not supported by TFLM)")
        found[i] = tensor
    return found


def _validate(op: Operator, t: list[Tensor | None], output: Tensor | None,
              time_major: bool) -> tuple[Tensor, Tensor, Tensor, Tensor, dict[int, Tensor]]:
    """LstmTensors::ValidateTensorStatus and ValidateTensorSize. Returns the input, output
    state, cell state, output and the weights and biases by input index."""
    if len(op.inputs) != INTERNAL_TENSORS or len(op.outputs) != 1:
        raise KernelError("UNIDIRECTIONAL_SEQUENCE_LSTM takes 24 inputs and one output")
    source, hidden, cell = t[INPUT], t[OUTPUT_STATE], t[CELL_STATE]
    if source is None or hidden is None or cell is None:
        raise KernelError("LSTM: input, output state and cell state are required")
    if output is None:
        raise KernelError("LSTM: the output tensor is omitted; it is required")
    if not (hidden.is_variable and cell.is_variable):
        raise KernelError("LSTM: the output state and cell state must be variable tensors")
    if hidden.type != source.type or output.type != source.type:
        raise KernelError("LSTM: input, output state and output must have the same type")
    params = _gate_params(t)
    if len({params[i].type for i in _WEIGHTS}) != 1 \
            or len({params[i].type for i in _BIASES}) != 1:
        raise KernelError("LSTM: weights (and biases) must all share one type")
    if any(t[i] is not None for i in _OPTIONAL_ABSENT):
        raise KernelError("LSTM: peephole, projection and layer-norm tensors are not supported "
                          "by TFLM's kernel")
    if len(source.shape) != 3:
        raise KernelError("LSTM: the input must be 3-D")
    batch = source.shape[1] if time_major else source.shape[0]
    n_input, n_state = source.shape[2], hidden.shape[1]
    for i in _WEIGHTS:
        want = (n_state, n_input if i < 5 else n_state)
        if tuple(params[i].shape) != want:
            raise KernelError(f"LSTM: weight tensor {i} has shape {params[i].shape}, expected "
                              f"{want}")
    for i in _BIASES:
        if tuple(params[i].shape) != (n_state,):
            raise KernelError(f"LSTM: bias tensor {i} must have shape {(n_state,)}")
    if hidden.element_count != batch * n_state or cell.element_count != batch * n_state:
        raise KernelError("LSTM: state tensors must hold batch * state values")
    if len(output.shape) != 3 or tuple(output.shape[:2]) != tuple(source.shape[:2]) \
            or output.shape[2] != n_state:
        raise KernelError(f"LSTM: output shape {output.shape} does not match the input")
    return source, hidden, cell, output, params


def _per_tensor(t: Tensor) -> None:
    if t.quantization is not None and len(t.quantization.scale) > 1:
        raise KernelError("LSTM: per-channel quantized weights are not supported by TFLM's "
                          "LSTM gates; quantize the weights per tensor")


def prepare(ctx: PrepareContext, op: Operator) -> OpData:
    """UnidirectionalSequenceLstmPrepare: LstmTensors, size info, gate parameters, scratch."""
    for i in range(INTERNAL_TENSORS):
        ctx.allocate_temp_tensor(op.inputs[i] if i < len(op.inputs) else -1)
    ctx.allocate_temp_tensor(op.outputs[OUTPUT])
    t = [ctx.tensor(op.inputs[i]) if i < len(op.inputs) else None
         for i in range(INTERNAL_TENSORS)]
    output = ctx.tensor(op.outputs[OUTPUT]) if op.outputs else None
    options = op.options if isinstance(op.options, UnidirectionalSequenceLSTMOptions) \
        else UnidirectionalSequenceLSTMOptions()
    time_major = bool(options.time_major)
    source, hidden, cell, _, params = _validate(op, t, output, time_major)
    if options.fused_activation_function not in ("TANH", "SIGMOID"):
        raise KernelError("LSTM: the cell gate activation must be TANH or SIGMOID")
    weights: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray | None]] = {}
    quant = None
    wtype = params[2].type
    if cell.type == TensorType.FLOAT32:
        kind = "float"
        for g in GATES:
            wi, wr, b = (params[i] for i in GATE_TENSORS[g])
            weights[g] = (np.asarray(wi.data, np.float32), np.asarray(wr.data, np.float32),
                          np.asarray(b.data, np.float32))
    elif cell.type == TensorType.INT16:
        if source.type == TensorType.INT8 and wtype == TensorType.INT8:
            kind = "8x8_16"
        elif source.type == TensorType.INT16 and wtype == TensorType.INT8:
            kind = "16x8_16"
        else:
            raise KernelError(f"LSTM: {source.type.name} activations with {wtype.name} weights "
                              "are not supported (int8 or int16 activations, int8 weights)")
        gate_q = {}
        for g in GATES:
            wi, wr, b = (params[i] for i in GATE_TENSORS[g])
            _per_tensor(wi)
            _per_tensor(wr)
            qi, qr = tensor_quant(wi), tensor_quant(wr)
            gate_q[g] = (qi, qr)
            weights[g] = (np.asarray(wi.data).astype(np.int64) - qi.zero_point,
                          np.asarray(wr.data).astype(np.int64) - qr.zero_point,
                          np.asarray(b.data).astype(np.int64))
        quant = lstm_quant(tensor_quant(source), tensor_quant(hidden),
                           8 if hidden.type == TensorType.INT8 else 16,
                           tensor_quant(cell).scale, options.cell_clip, gate_q,
                           scale_arithmetic(ctx.target))
    else:
        raise KernelError(f"LSTM: cell state type {cell.type.name} not supported; the "
                          "quantized kernel needs an int16 cell state")
    if any(tensor.data is None for tensor in params.values()):
        raise KernelError("LSTM: weights and biases must be constant tensors")
    batch = source.shape[1] if time_major else source.shape[0]
    state = hidden.shape[-1]
    element = TFLM_TYPE_SIZES[cell.type]
    for _ in range(4):
        ctx.request_scratch(batch * state * element)
    plan = lstm_plan(ctx, kind, time_major, tuple(source.shape), state, weights, quant)
    return OpData(kind, time_major, options.fused_activation_function,
                  float(options.cell_clip), plan, quant)


@c_float_env
def eval_(ctx: EvalContext, op: Operator, data: OpData) -> None:
    """UnidirectionalSequenceLstmEval -> EvalLstm: the state tensors are updated in place."""
    x = ctx.tensor_data(op.inputs[INPUT])
    hidden = ctx.tensor_data(op.inputs[OUTPUT_STATE])
    cell = ctx.tensor_data(op.inputs[CELL_STATE])
    out = ctx.tensor_data(op.outputs[OUTPUT])
    if data.kind == "float":
        lstm_float(x, hidden, cell, out, data.plan, data.cell_activation, data.cell_clip,
                   ctx.workspace)
    else:
        assert data.quant is not None
        lstm_integer(x, hidden, cell, out, data.plan, data.quant, data.cell_activation,
                     data.cell_clip, ctx.workspace)


def bind(ctx: EvalContext, op: Operator, data: OpData) -> Step | None:
    """The compiled kernel (``native.lstm``) when the interpreter runs them; else eval."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.lstm import bind_lstm

    return bind_lstm(ctx.tensor_data(op.inputs[INPUT]), ctx.tensor_data(op.inputs[OUTPUT_STATE]),
                     ctx.tensor_data(op.inputs[CELL_STATE]),
                     ctx.tensor_data(op.outputs[OUTPUT]), data, ctx.workspace)


REGISTRATION = Registration("UNIDIRECTIONAL_SEQUENCE_LSTM", init=init, prepare=prepare,
                            eval=eval_, bind=bind,
                            builtin_data="TfLiteUnidirectionalSequenceLSTMParams")
