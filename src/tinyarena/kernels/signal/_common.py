"""What the signal kernels share: flexbuffer options as TFLM reads them, tensor checks, and the
bit-level helpers of ``signal/src`` (msb.h, square_root.h).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tinyarena.errors import KernelError
from tinyarena.kernels.base import PrepareContext, required_tensor
from tinyarena.model.types import Operator, Tensor, TensorType

U64 = np.uint64


@dataclass(frozen=True)
class FlexOptions:
    """A custom op's flexbuffer map, read as ``tflite::FlexbufferWrapper`` reads it.

    TFLM's signal kernels index the map's values by position (keys sorted, as flexbuffers
    stores them) and read each as a raw integer (``ElementAsInt32``/``ElementAsBool``); the
    typed kernels (Rfft, Irfft, OverlapAdd) look ``T`` up by name. Keeping keys next to the
    values lets an error name the key a position holds.
    """

    op_name: str
    keys: tuple[str, ...]
    values: tuple[int, ...]

    @staticmethod
    def parse(op: Operator) -> FlexOptions:
        from flatbuffers import flexbuffers

        raw = op.custom_options
        if not raw:
            raise KernelError(f"{op.name} needs its flexbuffer custom options (the TensorFlow "
                              f"op's attributes); the operator has none")
        try:
            root = flexbuffers.GetRoot(bytes(raw))
            if root.IsMap:
                table = root.AsMap
                keys = tuple(str(k) for k in table.Keys.Value)
                items = list(table.Values.Value)
            else:
                items = list(root.AsVector.Value)
                keys = tuple(f"#{i}" for i in range(len(items)))
        except Exception as exc:  # flexbuffers raises plain Python errors on bad bytes
            raise KernelError(f"{op.name} (operator {op.index}): its custom options are not a "
                              f"flexbuffer map "
                              f"({type(exc).__name__}: {exc}); rebuild the model") from None
        values = []
        for key, item in zip(keys, items):
            if isinstance(item, bool) or isinstance(item, int):
                values.append(int(item))
            else:
                raise KernelError(f"{op.name}: custom option {key!r} is {item!r}; TFLM reads "
                                  f"every option of this op as an integer")
        return FlexOptions(f"{op.name} (operator {op.index})", keys, tuple(values))

    def element(self, index: int, name: str) -> int:
        """``FlexbufferWrapper::ElementAsInt32(index)``: by position, whatever key it holds
        (as TFLM reads it); ``name`` is the key TFLM expects there, for the error message."""
        if not 0 <= index < len(self.values):
            raise KernelError(f"{self.op_name}: custom options have {len(self.values)} "
                              f"entries {list(self.keys)}, but TFLM reads {name!r} from "
                              f"position {index}; give the op all its attributes")
        return _as_int32(self.values[index])

    def by_key(self, key: str) -> int:
        """``flexbuffers::Map::operator[](key).AsInt32()`` (how Rfft reads ``T``)."""
        if key not in self.keys:
            raise KernelError(f"{self.op_name}: custom options lack {key!r}, which TFLM "
                              f"reads to pick the kernel's type; add it")
        return _as_int32(self.values[self.keys.index(key)])


def _as_int32(value: int) -> int:
    value &= 0xFFFFFFFF
    return value - (1 << 32) if value >= 1 << 31 else value


def check_io(op: Operator, n_in: int, n_out: int) -> None:
    """TF_LITE_ENSURE_EQ(NumInputs(node), n_in) and the same for outputs."""
    if len(op.inputs) != n_in or len(op.outputs) != n_out:
        raise KernelError(f"{op.name} (operator {op.index}) takes {n_in} input(s) and "
                          f"{n_out} output(s); it has {len(op.inputs)} and {len(op.outputs)}")


def temp_input(ctx: PrepareContext, op: Operator, i: int, role: str) -> Tensor:
    """AllocateTempInputTensor (the temp TfLiteTensor) and the tensor it describes."""
    tensor = required_tensor(ctx, op.inputs[i], op.name, role)
    ctx.allocate_temp_tensor(op.inputs[i])
    return tensor


def temp_output(ctx: PrepareContext, op: Operator, i: int, role: str) -> Tensor:
    tensor = required_tensor(ctx, op.outputs[i], op.name, role)
    ctx.allocate_temp_tensor(op.outputs[i])
    return tensor


def check_type(op: Operator, tensor: Tensor, role: str, *types: TensorType) -> None:
    if tensor.type not in types:
        names = " or ".join(t.name.lower() for t in types)
        raise KernelError(f"{op.name}: the {role} tensor is {tensor.type.name.lower()}, but "
                          f"TFLM's kernel needs {names}")


def check_rank(op: Operator, tensor: Tensor, role: str, rank: int) -> None:
    if len(tensor.shape) != rank:
        raise KernelError(f"{op.name}: the {role} tensor has rank {len(tensor.shape)}, but "
                          f"TFLM's kernel needs rank {rank}")


def flat_size(tensor: Tensor) -> int:
    return int(np.prod(tensor.shape, dtype=np.int64)) if tensor.shape else 1


def most_significant_bit(x: np.ndarray, width: int) -> np.ndarray:
    """MostSignificantBit32/64 as the wheel's GCC build computes it: the bit length of x, and
    ``width`` (not 0) for x == 0 (the ``__builtin_clz`` branch)."""
    v = np.asarray(x).astype(U64)
    n = np.zeros(v.shape, np.int64)
    for step in (32, 16, 8, 4, 2, 1):
        if step >= width:
            continue
        hit = (v >> U64(step)) != 0
        n = np.where(hit, n + step, n)
        v = np.where(hit, v >> U64(step), v)
    n = n + (v != 0)
    return np.where(np.asarray(x) == 0, width, n)


def sqrt32(num: np.ndarray) -> np.ndarray:
    """Sqrt32 (square_root_32.cc): bitwise integer square root, rounded, as uint64 values."""
    num = np.asarray(num).astype(U64)
    top = (32 - most_significant_bit(num, 32)) | 1
    return _bitwise_sqrt(num, top, 31, 0xFFFF)


def sqrt64(num: np.ndarray) -> np.ndarray:
    """Sqrt64 (square_root_64.cc): Sqrt32 when the upper word is clear, else the 64-bit loop."""
    num = np.asarray(num).astype(U64)
    small = (num >> U64(32)) == 0
    top64 = (64 - most_significant_bit(num, 64)) | 1
    wide = _bitwise_sqrt(num, top64, 63, 0xFFFFFFFF)
    narrow = _bitwise_sqrt(num & U64(0xFFFFFFFF),
                           (32 - most_significant_bit(num & U64(0xFFFFFFFF), 32)) | 1, 31, 0xFFFF)
    return np.where(small, narrow, wide)


def _bitwise_sqrt(num: np.ndarray, top: np.ndarray, high: int, cap: int) -> np.ndarray:
    """The shared digit-by-digit loop: ``bit = 1 << (high - top)``, ``(high - top) / 2 + 1``
    iterations, then round up when the remainder exceeds the root (unless it is ``cap``)."""
    zero = num == 0
    top = np.where(zero, high, top)  # num == 0 returns 0 (Sqrt32) and never reaches the loop
    shift = (high - top).astype(np.int64)
    bit = np.left_shift(U64(1), shift.astype(U64))
    iterations = shift // 2 + 1
    res = np.zeros(num.shape, U64)
    rem = num.copy()
    for k in range(int(iterations.max(initial=0))):
        active = iterations > k
        take = active & (rem >= res + bit)
        rem = np.where(take, rem - (res + bit), rem)
        res = np.where(take, (res >> U64(1)) + bit, np.where(active, res >> U64(1), res))
        bit = np.where(active, bit >> U64(2), bit)
    res = np.where((rem > res) & (res != U64(cap)), res + U64(1), res)
    return np.where(zero, U64(0), res)
