"""Kernel registry: op name -> the module that ports TFLM's kernel for it.

The table is explicit (no scanning of globals). A module that does not exist yet simply means
the op is unsupported; ``registration`` raises ``UnsupportedOpError`` for it.
"""

from __future__ import annotations

import importlib

from tinyarena.errors import UnsupportedOpError
from tinyarena.kernels.base import Registration, module_registration

# op name -> module name under tinyarena.kernels
MODULES: dict[str, str] = {
    "ABS": "elementwise_unary",
    "ADD": "add",
    "ASSIGN_VARIABLE": "assign_variable",
    "AVERAGE_POOL_2D": "pooling",
    "CALL_ONCE": "call_once",
    "CONCATENATION": "concatenation",
    "CONV_2D": "conv_2d",
    "CONV_3D": "conv_3d",
    "COS": "elementwise_unary",
    "DEPTHWISE_CONV_2D": "depthwise_conv_2d",
    "DEQUANTIZE": "dequantize",
    "EQUAL": "comparisons",
    "EXPAND_DIMS": "expand_dims",
    "GREATER": "comparisons",
    "GREATER_EQUAL": "comparisons",
    "FULLY_CONNECTED": "fully_connected",
    "HARD_SWISH": "hard_swish",
    "IF": "if_",
    "LEAKY_RELU": "leaky_relu",
    "LESS": "comparisons",
    "LESS_EQUAL": "comparisons",
    "LOG": "elementwise_unary",
    "LOGICAL_NOT": "elementwise_unary",
    "LOGISTIC": "logistic",
    "MAXIMUM": "maximum_minimum",
    "MAX_POOL_2D": "pooling",
    "MEAN": "reduce",
    "MINIMUM": "maximum_minimum",
    "MUL": "mul",
    "NOT_EQUAL": "comparisons",
    "PAD": "pad",
    "PADV2": "pad",
    "QUANTIZE": "quantize",
    "READ_VARIABLE": "read_variable",
    "RELU": "activations",
    "RELU6": "activations",
    "RESHAPE": "reshape",
    "RSQRT": "elementwise_unary",
    "SIN": "elementwise_unary",
    "SOFTMAX": "softmax",
    "SQRT": "elementwise_unary",
    "SQUARE": "elementwise_unary",
    "SQUEEZE": "squeeze",
    "STRIDED_SLICE": "strided_slice",
    "SUB": "sub",
    "SUM": "reduce",
    "SVDF": "svdf",
    "TANH": "tanh",
    "TRANSPOSE": "transpose",
    "TRANSPOSE_CONV": "transpose_conv",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "unidirectional_sequence_lstm",
    "VAR_HANDLE": "var_handle",
    "WHILE": "while_",
    # ops-a (issue 8): data movement, reductions, resizing
    "ARG_MAX": "arg_min_max",
    "ARG_MIN": "arg_min_max",
    "BATCH_TO_SPACE_ND": "batch_to_space_nd",
    "BROADCAST_ARGS": "broadcast_args",
    "BROADCAST_TO": "broadcast_to",
    "CAST": "cast",
    "CUMSUM": "cumsum",
    "DEPTH_TO_SPACE": "depth_to_space",
    "DYNAMIC_UPDATE_SLICE": "dynamic_update_slice",
    "EMBEDDING_LOOKUP": "embedding_lookup",
    "FILL": "fill",
    "GATHER": "gather",
    "GATHER_ND": "gather_nd",
    "MIRROR_PAD": "mirror_pad",
    "PACK": "pack",
    "REDUCE_ALL": "reduce",
    "REDUCE_MAX": "reduce",
    "REDUCE_MIN": "reduce",
    "RESIZE_BILINEAR": "resize_bilinear",
    "RESIZE_NEAREST_NEIGHBOR": "resize_nearest_neighbor",
    "REVERSE_V2": "reverse",
    "SELECT_V2": "select",
    "SHAPE": "shape",
    "SLICE": "slice",
    "SPACE_TO_BATCH_ND": "space_to_batch_nd",
    "SPACE_TO_DEPTH": "space_to_depth",
    "SPLIT": "split",
    "SPLIT_V": "split",
    "TFLM_DECODE": "decode",
    "UNPACK": "unpack",
    "ZEROS_LIKE": "zeros_like",
    # TFLM's signal library: custom ops, keyed by their custom code (kernels/signal/)
    "SignalDelay": "signal.delay",
    "SignalEnergy": "signal.energy",
    "SignalFftAutoScale": "signal.fft_auto_scale",
    "SignalFilterBank": "signal.filter_bank",
    "SignalFilterBankLog": "signal.filter_bank_log",
    "SignalFilterBankSpectralSubtraction": "signal.filter_bank_spectral_subtraction",
    "SignalFilterBankSquareRoot": "signal.filter_bank_square_root",
    "SignalFramer": "signal.framer",
    "SignalIrfft": "signal.irfft",
    "SignalOverlapAdd": "signal.overlap_add",
    "SignalPCAN": "signal.pcan",
    "SignalRfft": "signal.rfft",
    "SignalStacker": "signal.stacker",
    "SignalWindow": "signal.window",
    # ops-b (issue 8): math, logical, pooling and detection ops
    "CEIL": "ceil",
    "EXP": "exp",
    "FLOOR": "floor",
    "NEG": "neg",
    "ROUND": "round",
    "DIV": "div",
    "FLOOR_DIV": "floor_div",
    "FLOOR_MOD": "floor_mod",
    "LOGICAL_AND": "logical",
    "LOGICAL_OR": "logical",
    "SQUARED_DIFFERENCE": "squared_difference",
    "ELU": "elu",
    "PRELU": "prelu",
    "L2_NORMALIZATION": "l2norm",
    "L2_POOL_2D": "l2_pool_2d",
    "ADD_N": "add_n",
    "LOG_SOFTMAX": "log_softmax",
    "CIRCULAR_BUFFER": "circular_buffer",
    "BATCH_MATMUL": "batch_matmul",
    "TFLite_Detection_PostProcess": "detection_postprocess",
    # Arm Ethos-U: Vela's custom operator (device builds only; sized, never run)
    "ethos-u": "ethos_u",
}


KERNEL_SETS = ("reference", "cmsis-nn", "esp-nn")


def registration(op_name: str, kernel_set: str = "reference") -> Registration:
    """The kernel for ``op_name`` in ``kernel_set``; raises UnsupportedOpError when tinyarena
    has none. "cmsis-nn" is TFLM's ``kernels/cmsis_nn/`` folder: its kernels replace the
    reference ones of the same op, every other op keeps the reference kernel (as in the build).
    "esp-nn" is esp-tflite-micro's ``kernels/esp_nn/`` folder, the same way."""
    if kernel_set == "cmsis-nn":
        from tinyarena.kernels.cmsis_nn import cmsis_nn_registration

        replacement = cmsis_nn_registration(op_name)
        if replacement is not None:
            return replacement
    elif kernel_set == "esp-nn":
        from tinyarena.kernels.esp_nn import esp_nn_registration

        replacement = esp_nn_registration(op_name)
        if replacement is not None:
            return replacement
    elif kernel_set != "reference":
        raise UnsupportedOpError(f"unknown kernel set {kernel_set!r}; choose one of "
                                 f"{', '.join(KERNEL_SETS)}", op_name=op_name)
    module_name = MODULES.get(op_name)
    if module_name is None:
        raise UnsupportedOpError(_unsupported(op_name), op_name=op_name)
    try:
        module = importlib.import_module(f"tinyarena.kernels.{module_name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"tinyarena.kernels.{module_name}":
            raise
        raise UnsupportedOpError(_unsupported(op_name), op_name=op_name) from None
    return module_registration(module, op_name)


def _unsupported(op_name: str) -> str:
    # the catalog (and its dataclass) is imported only when an op has no kernel
    from tinyarena.kernels.catalog import unsupported_op_message

    return unsupported_op_message(op_name)


def supported_ops() -> list[str]:
    """Op names whose kernel module exists."""
    names = []
    for name in sorted(MODULES):
        try:
            registration(name)
        except UnsupportedOpError:
            continue
        names.append(name)
    return names
