"""Every operator the pinned TFLM wheel registers, and what tinyarena does with each.

The list is the wheel's ``PythonOpsResolver`` (``python/tflite_micro/python_ops_resolver.cc``
in tflite-micro), checked against the wheel itself by ``tests/kernels/test_op_catalog.py``
(each name resolves in the wheel; no other builtin does). The data types are the ones the TFLM
reference kernel accepts for its main data input (outputs follow, or are named in the kernel's
docstring). Whether tinyarena sizes and runs an op is not written down here: it is read from
the kernel registry, so the table cannot drift from the code.

ETHOSU (custom code ``ethos-u``, Vela's operator) is in the resolver's source but hands its
work to an Arm Ethos-U NPU: the host wheel is built without it. tinyarena sizes it on the
Cortex-M targets (``kernels/ethos_u.py``) and never runs it.
"""

from __future__ import annotations

from dataclasses import dataclass
from types import MappingProxyType
from typing import Mapping

from tinyarena.errors import UnsupportedOpError
from tinyarena.model import _schema

_F, _I8, _I16, _I32, _I64 = "float32", "int8", "int16", "int32", "int64"
_U8, _U32, _U64, _B = "uint8", "uint32", "uint64", "bool"
_ANY = "any"

# name as it appears in a model (builtin name, or the custom code) -> data types
WHEEL_OPS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "ABS": (_F, _I8, _I16),
    "ADD": (_F, _I8, _I16, _I32),
    "ADD_N": (_F, _I8),
    "ARG_MAX": (_F, _I8),
    "ARG_MIN": (_F, _I8),
    "ASSIGN_VARIABLE": (_ANY,),
    "AVERAGE_POOL_2D": (_F, _I8, _I16),
    "BATCH_MATMUL": (_F, _I8, _I16),
    "BATCH_TO_SPACE_ND": (_F, _I8),
    "BROADCAST_ARGS": (_I32, _I64),
    "BROADCAST_TO": (_F, "float16", _I8, _U8, _I16, _I32, _I64, _B),
    "CALL_ONCE": (),
    "CAST": (_I8, _I16, _I32, _U32, _F, _B),
    "CEIL": (_F,),
    "CIRCULAR_BUFFER": (_I8,),
    "CONCATENATION": (_F, _I8, _I16, _I32, _I64, _B),
    "CONV_2D": (_F, _I8, _I16),
    "COS": (_F,),
    "CUMSUM": (_F, _I8),
    "DEPTH_TO_SPACE": (_F, _I8),
    "DEPTHWISE_CONV_2D": (_F, _I8, _I16),
    "DEQUANTIZE": (_I8, _I16, _U8),
    "DIV": (_F, _I8, _I32),
    "DYNAMIC_UPDATE_SLICE": (_F, _I8, _I16, _I32),
    "ELU": (_F, _I8),
    "EMBEDDING_LOOKUP": (_F, _I8),
    "EQUAL": (_F, _I8, _I16, _I32, _I64, _B),
    "EXP": (_F,),
    "EXPAND_DIMS": (_F, _I8, _I16, _I32),
    "FILL": (_F, _I32, _I8),
    "FLOOR": (_F,),
    "FLOOR_DIV": (_F,),
    "FLOOR_MOD": (_F,),
    "FULLY_CONNECTED": (_F, _I8, _I16),
    "GATHER": (_F, _I8),
    "GATHER_ND": (_F, _I8),
    "GREATER": (_F, _I8, _I16, _I32, _I64),
    "GREATER_EQUAL": (_F, _I8, _I16, _I32, _I64),
    "HARD_SWISH": (_F, _I8),
    "IF": (),
    "L2_NORMALIZATION": (_F, _I8),
    "L2_POOL_2D": (_F,),
    "LEAKY_RELU": (_F, _I8, _I16),
    "LESS": (_F, _I8, _I16, _I32, _I64),
    "LESS_EQUAL": (_F, _I8, _I16, _I32, _I64),
    "LOG": (_F,),
    "LOG_SOFTMAX": (_F, _I8),
    "LOGICAL_AND": (_B,),
    "LOGICAL_NOT": (_B,),
    "LOGICAL_OR": (_B,),
    "LOGISTIC": (_F, _I8, _I16),
    "MAX_POOL_2D": (_F, _I8, _I16),
    "MAXIMUM": (_F, _I8, _I16, _I32, _I64),
    "MEAN": (_F, _I8, _I16),
    "MINIMUM": (_F, _I8, _I16, _I32, _I64),
    "MIRROR_PAD": (_F, _I8),
    "MUL": (_F, _I8, _I16, _I32),
    "NEG": (_F,),
    "NOT_EQUAL": (_F, _I8, _I16, _I32, _I64, _B),
    "PACK": (_F, _I8, _I16, _I32, _I64),
    "PAD": (_F, _I8, _I16, _I32),
    "PADV2": (_F, _I8, _I16, _I32),
    "PRELU": (_F, _I8, _I16),
    "QUANTIZE": (_F, _I8, _I16, _I32, _U8),
    "READ_VARIABLE": (_ANY,),
    "REDUCE_ALL": (_B,),
    "REDUCE_MAX": (_F, _I8),
    "REDUCE_MIN": (_F, _I8),
    "RELU": (_F, _I8, _I16),
    "RELU6": (_F, _I8, _I16),
    "RESHAPE": (_ANY,),
    "RESIZE_BILINEAR": (_F, _I8),
    "RESIZE_NEAREST_NEIGHBOR": (_F, _I8, _I16),
    "REVERSE_V2": (_F, _I8, _U8, _I16, _I32, _I64, _B),
    "ROUND": (_F,),
    "RSQRT": (_F, _I8, _I16),
    "SELECT_V2": (_F, _I8, _I16),
    "SHAPE": (_ANY,),
    "SIN": (_F,),
    "SLICE": (_F, _I8, _I16, _I32, _B),
    "SOFTMAX": (_F, _I8, _I16),
    "SPACE_TO_BATCH_ND": (_F, _I8),
    "SPACE_TO_DEPTH": (_F, _I8),
    "SPLIT": (_F, _I8, _I16, _I32),
    "SPLIT_V": (_F, _I8, _I16, _I32),
    "SQRT": (_F,),
    "SQUARE": (_F,),
    "SQUARED_DIFFERENCE": (_F, _I8, _I16, _I32),
    "SQUEEZE": (_ANY,),
    "STRIDED_SLICE": (_F, _I8, _I16, _I32, _B),
    "SUB": (_F, _I8, _I16, _I32),
    "SUM": (_F, _I8, _I16),
    "SVDF": (_F, _I8, _I16),
    "TANH": (_F, _I8, _I16),
    "TRANSPOSE": (_F, _I8, _I16),
    "TRANSPOSE_CONV": (_F, _I8, _I16),
    "UNIDIRECTIONAL_SEQUENCE_LSTM": (_F, _I8, _I16),
    "UNPACK": (_F, _I8, _I16, _I32),
    "VAR_HANDLE": (),
    "WHILE": (),
    "ZEROS_LIKE": (_F, _I8, _I32, _I64),
    # custom ops, by custom code
    "SignalDelay": (_I16,),
    "SignalEnergy": (_I16,),
    "SignalFftAutoScale": (_I16,),
    "SignalFilterBank": (_U32,),
    "SignalFilterBankLog": (_U32,),
    "SignalFilterBankSpectralSubtraction": (_U32,),
    "SignalFilterBankSquareRoot": (_U64,),
    "SignalFramer": (_I16,),
    "SignalIrfft": (_F, _I16, _I32),
    "SignalOverlapAdd": (_F, _I16),
    "SignalPCAN": (_U32,),
    "SignalRfft": (_F, _I16, _I32),
    "SignalStacker": (_I16,),
    "SignalWindow": (_I16,),
    "TFLM_DECODE": (_B, _F, _I8, _I16, _I32, _I64),
    "TFLite_Detection_PostProcess": (_F,),
})

# Ops whose arithmetic runs on an accelerator: name -> which. Sized on device targets only.
NPU_OPS: Mapping[str, str] = MappingProxyType({"ethos-u": "an Arm Ethos-U NPU"})
_NPU_ALIASES = {"ETHOSU": "ethos-u"}


@dataclass(frozen=True)
class OpSupport:
    """One operator: its data types, and whether tinyarena sizes (allocation behaviour) and
    runs (eval) it. ``in_wheel`` is False for ops only tinyarena has (no TFLM arena)."""

    name: str
    custom: bool
    dtypes: tuple[str, ...]
    sizing: bool
    running: bool
    in_wheel: bool
    note: str = ""

    def to_dict(self) -> dict[str, object]:
        return {"name": self.name, "custom": self.custom, "dtypes": list(self.dtypes),
                "sizing": self.sizing, "running": self.running, "in_wheel": self.in_wheel,
                "note": self.note}


def builtin_names() -> frozenset[str]:
    """Every BuiltinOperator name of the schema (CUSTOM included)."""
    return frozenset(n for n, _ in _schema.ENUMS["BuiltinOperator"].values)


def _is_custom(name: str) -> bool:
    return name not in builtin_names()


def op_support(name: str) -> OpSupport:
    """What tinyarena does with op ``name`` (a builtin name or a custom code)."""
    from tinyarena.kernels import MODULES, registration

    npu = NPU_OPS.get(_NPU_ALIASES.get(name, name))
    if npu is not None:
        return OpSupport(name, True, (), True, False, False,
                         f"runs on {npu}: sized exactly on the cortex-m targets (TFLM's "
                         f"ethos_u kernel); the host wheel lacks it and `run` refuses it")
    try:
        reg = registration(name) if name in MODULES else None
    except UnsupportedOpError:
        reg = None
    in_wheel = name in WHEEL_OPS
    sizing = reg is not None and reg.tflm
    running = reg is not None and reg.eval is not None
    note = ""
    if reg is not None and not reg.tflm:
        note = "tinyarena-only kernel: TFLM has none, so there is no TFLM arena to size"
    elif reg is None:
        note = "no kernel in tinyarena yet"
    elif not running:
        note = reg.eval_refusal or "sized exactly; its eval is not ported yet, so `run` refuses it"
    return OpSupport(name, _is_custom(name), WHEEL_OPS.get(name, ()), sizing, running,
                     in_wheel, note)


def op_catalog() -> tuple[OpSupport, ...]:
    """Every op the wheel registers, the NPU ops, and tinyarena's own extra kernels."""
    from tinyarena.kernels import MODULES

    names = sorted((set(WHEEL_OPS) | set(MODULES)) - set(NPU_OPS), key=lambda n: (n.lower(), n))
    return tuple(op_support(n) for n in names) + tuple(op_support(n) for n in NPU_OPS)


def unsupported_op_message(name: str) -> str:
    """Why tinyarena cannot size ``name`` and what to do (location added by the caller)."""
    npu = NPU_OPS.get(_NPU_ALIASES.get(name, name))
    if npu is not None:
        return (f"{name} runs on {npu}: TFLM's ethos_u kernel is linked into device builds "
                f"only (the pinned wheel does not register it); size the model for the "
                f"device, e.g. --target cortex-m55")
    if name in WHEEL_OPS:
        return (f"tinyarena has no kernel for {name} yet, although TFLM registers it; "
                f"`tinyarena ops` lists what is supported. Please report the model")
    kind = "custom op" if _is_custom(name) else "builtin op"
    return (f"{kind} {name} is not an operator TFLM registers (the pinned wheel's "
            f"PythonOpsResolver has "
            f"no kernel for it either, so TFLM refuses this model too); convert the model to "
            f"TFLM's op set (`tinyarena ops` lists it) or register your own kernel with "
            f"OpResolver.add({name!r}, Registration(...))")


__all__ = ["NPU_OPS", "OpSupport", "WHEEL_OPS", "builtin_names", "op_catalog", "op_support",
           "unsupported_op_message"]
