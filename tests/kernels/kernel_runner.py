"""Runs a model's operators through their kernels with plain numpy storage, no arena.

Like TFLM's kernels/testing KernelRunner: it exercises a kernel's init, prepare and eval in
isolation, so kernel arithmetic can be compared with the wheel before (and independently of)
the interpreter and the arena emulation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from tinyarena.kernels import registration
from tinyarena.kernels.base import check_workspace_initial, initial_array
from tinyarena.model import read_model
from tinyarena.model.types import NUMPY_DTYPES, Model, Operator, Subgraph, Tensor, TensorType


SCRATCH_GARBAGE = 0xA5  # byte that fills scratch (persistent=False) workspaces at creation


class _Target:
    """Struct sizes of the real host-x64 profile (no made-up fallback: a broken profile must
    fail these tests, not feed kernels invented sizes)."""

    name = "host-x64"

    def __init__(self) -> None:
        from tinyarena.arena.targets import get_target

        self._real: Any = get_target("host-x64")

    def __getattr__(self, name: str) -> Any:
        """Every other build fact (kernel set, libm, float_fma...) from the real profile."""
        return getattr(self._real, name)

    def sizeof(self, struct: str) -> int:
        return int(self._real.sizeof(struct))

    def alignof(self, struct: str) -> int:
        return int(self._real.alignof(struct))


@dataclass
class _Context:
    model: Model
    subgraph: Subgraph
    arrays: dict[int, np.ndarray]
    target: _Target = field(default_factory=_Target)
    scratches: list[np.ndarray] = field(default_factory=list)
    workspaces: list[np.ndarray] = field(default_factory=list)

    def allocate_persistent(self, nbytes: int) -> int:
        return 0

    def tensor(self, index: int) -> Tensor | None:
        return None if index < 0 else self.subgraph.tensors[index]

    def allocate_temp_tensor(self, index: int) -> None:
        pass

    def request_scratch(self, nbytes: int, *, eval_writes: int = 0) -> int:
        self.scratches.append(np.zeros(nbytes, dtype=np.uint8))
        return len(self.scratches) - 1

    def request_workspace(self, shape: tuple[int, ...], dtype: Any, *,
                          persistent: bool = True, initial: Any = None) -> int:
        given = check_workspace_initial(shape, dtype, persistent, initial)
        if given is not None:
            self.workspaces.append(initial_array(shape, dtype, given))
            return len(self.workspaces) - 1
        array = np.zeros(shape, dtype=dtype)
        if not persistent:  # scratch starts undefined: garbage catches a read before a write
            array.reshape(-1).view(np.uint8)[...] = SCRATCH_GARBAGE
        self.workspaces.append(array)
        return len(self.workspaces) - 1

    def reset_decompression_memory(self) -> None:
        pass

    def decompress_into_alternate_memory(self, tensor_index: int) -> bool:
        return False  # no alternate decompression memory here

    def subgraph_count(self) -> int:
        return len(self.model.subgraphs)

    def tensor_data(self, index: int) -> np.ndarray:
        return self.arrays[index]

    def scratch(self, handle: int) -> np.ndarray:
        return self.scratches[handle]

    def workspace(self, handle: int) -> np.ndarray:
        return self.workspaces[handle]

    def invoke_subgraph(self, index: int) -> None:
        raise NotImplementedError("the kernel runner runs subgraph 0 only")


def _storage(t: Tensor) -> np.ndarray:
    if t.data is not None:
        return t.data
    arr = np.zeros(t.shape, dtype=NUMPY_DTYPES[t.type])
    # TFLM's ResetTensorData fills int8 variable tensors with their zero point.
    if t.is_variable and t.type == TensorType.INT8 and t.quantization is not None \
            and len(t.quantization.zero_point):
        arr[...] = int(t.quantization.zero_point[0])
    return arr


def run_kernels(model_bytes: bytes, inputs: Sequence[np.ndarray]) -> list[np.ndarray]:
    """Run subgraph 0 once on ``inputs``; return copies of its outputs."""
    model = read_model(model_bytes)
    sg = model.subgraphs[0]
    arrays = {t.index: _storage(t) for t in sg.tensors}
    ctx = _Context(model, sg, arrays)
    for i, data in zip(sg.inputs, inputs):
        arrays[i][...] = np.asarray(data).reshape(arrays[i].shape)
    regs = [registration(op.name) for op in sg.operators]
    for reg, op in zip(regs, sg.operators):
        if reg.init is not None:
            reg.init(ctx, op)
    op_data: list[Any] = []
    for reg, op in zip(regs, sg.operators):
        op_data.append(reg.prepare(ctx, op) if reg.prepare is not None else None)
    for reg, op, data in zip(regs, sg.operators, op_data):
        assert reg.eval is not None, f"{op.name} has no eval yet"
        reg.eval(ctx, op, data)
    return [np.array(arrays[i], copy=True) for i in sg.outputs]


__all__ = ["run_kernels", "Operator"]
