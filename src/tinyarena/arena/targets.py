"""Target profiles: every C struct size and alignment the arena accounting depends on, as data.

TFLM's arena numbers depend on the ABI the runtime was compiled for (pointer size, enum size,
``double`` alignment) and on build flags (``USE_TFLM_COMPRESSION``). Rather than branching on
target names, each profile carries one table keyed by the C struct name, so adding a target is
adding a table. Sizes come from ``tflm-arena-facts.md`` sections 4, 5 and 8 (measured with
``sizeof``/``alignof`` on the real headers, and from the wheel's machine code for the
FULLY_CONNECTED params).

Keys are C names: framework structs (``TfLiteTensor``), kernel OpData structs (``OpDataConv``),
builtin parameter structs (``TfLiteConvParams``), plus ``void*`` and ``size_t``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Mapping

from tinyarena.errors import UnsupportedOpError

StructTable = Mapping[str, tuple[int, int]]  # C name -> (sizeof, alignof)


@dataclass(frozen=True)
class TargetProfile:
    """One build of TFLM: ABI, flags and the struct table.

    ``default_allocator`` is the allocator path whose tail the sizes describe by default:
    ``"recording"`` (the Python wheel's RecordingMicroAllocator) or ``"production"``
    (``MicroInterpreter(model, resolver, arena, size)`` on a device).
    """

    name: str
    description: str
    pointer_size: int
    compression: bool
    short_enums: bool
    default_allocator: str
    structs: StructTable = field(repr=False)

    def sizeof(self, struct: str) -> int:
        return self._entry(struct)[0]

    def alignof(self, struct: str) -> int:
        return self._entry(struct)[1]

    def has(self, struct: str) -> bool:
        return struct in self.structs

    def _entry(self, struct: str) -> tuple[int, int]:
        try:
            return self.structs[struct]
        except KeyError:
            raise UnsupportedOpError(
                f"target {self.name} has no size for C struct {struct!r}; add it to "
                f"tinyarena.arena.targets before using an op that allocates it"
            ) from None


# Builtin parameter structs that are identical on every profile (no pointers, no enums, or
# enums absorbed by padding). Facts 5.1.
_COMMON_BUILTIN: dict[str, tuple[int, int]] = {
    "TfLiteConvParams": (28, 4),
    "TfLiteDepthwiseConvParams": (28, 4),
    "TfLitePoolParams": (40, 4),
    "TfLiteSoftmaxParams": (4, 4),
    "TfLiteReshapeParams": (36, 4),
    "TfLiteSqueezeParams": (36, 4),
    "TfLiteStridedSliceParams": (24, 4),
    "TfLiteUnidirectionalSequenceLSTMParams": (16, 4),
    "TfLiteReducerParams": (1, 1),
    "TfLiteConcatenationParams": (8, 4),
    "TfLiteLeakyReluParams": (4, 4),
    "TfLiteGatherParams": (8, 4),
    "TfLitePackParams": (8, 4),
    "TfLiteUnpackParams": (8, 4),
    "TfLiteSplitParams": (4, 4),
    "TfLiteSplitVParams": (4, 4),
    "TfLiteDepthToSpaceParams": (4, 4),
    "TfLiteSpaceToDepthParams": (4, 4),
    "TfLiteResizeBilinearParams": (2, 1),
    "TfLiteResizeNearestNeighborParams": (2, 1),
    "TfLiteBatchMatMulParams": (3, 1),
    "TfLiteCumsumParams": (2, 1),
    "TfLiteIfParams": (8, 4),
    "TfLiteWhileParams": (8, 4),
    "TfLiteCallOnceParams": (4, 4),
}

# Builtin structs made only of enums (or enums plus bytes): they shrink with -fshort-enums.
_ENUM_BUILTIN_INT: dict[str, tuple[int, int]] = {
    "TfLiteFullyConnectedParams": (16, 4),
    "TfLiteAddParams": (8, 4),
    "TfLiteSubParams": (8, 4),
    "TfLiteMulParams": (4, 4),
    "TfLiteDivParams": (4, 4),
    "TfLiteCastParams": (8, 4),
    "TfLiteSVDFParams": (12, 4),
    "TfLiteTransposeConvParams": (20, 4),
    "TfLiteLSTMParams": (20, 4),
    "TfLiteShapeParams": (4, 4),
    "TfLiteArgMaxParams": (4, 4),
    "TfLiteArgMinParams": (4, 4),
    "TfLiteMirrorPaddingParams": (4, 4),
    "TfLiteL2NormParams": (4, 4),
}
_ENUM_BUILTIN_SHORT: dict[str, tuple[int, int]] = {
    "TfLiteFullyConnectedParams": (5, 1),
    "TfLiteAddParams": (2, 1),
    "TfLiteSubParams": (2, 1),
    "TfLiteMulParams": (1, 1),
    "TfLiteDivParams": (1, 1),
    "TfLiteCastParams": (2, 1),
    "TfLiteSVDFParams": (8, 4),
    "TfLiteTransposeConvParams": (16, 4),
    "TfLiteLSTMParams": (16, 4),
    "TfLiteShapeParams": (1, 1),
    "TfLiteArgMaxParams": (1, 1),
    "TfLiteArgMinParams": (1, 1),
    "TfLiteMirrorPaddingParams": (1, 1),
    "TfLiteL2NormParams": (1, 1),
}

# Kernel OpData without pointers: the same everywhere (facts 5.2 and 8). Alignment is
# irrelevant (kernels allocate them 16-aligned); kept as 4 for the table's uniformity.
_COMMON_OPDATA: dict[str, tuple[int, int]] = {
    "OpDataPooling": (32, 4),
    "OpDataAdd": (60, 4),
    "OpDataSub": (52, 4),
    "OpDataMul": (36, 4),
    "OpDataDiv": (28, 4),
    "OpDataQuantizeReference": (32, 8),
    "DequantizeOpData": (32, 4),
    "OpDataSvdf": (36, 4),
    "OpDataLSTM": (688, 8),
    "OpDataPad": (56, 4),
    "OpDataReduce": (44, 4),
    "StridedSliceParams": (84, 4),
    "OpDataLeakyRelu": (24, 4),
    "OpDataLogistic": (16, 4),
    "OpDataTanh": (16, 4),  # tanh.cc's anonymous OpData: four int32
    "ReluOpData": (28, 4),  # ReluParams: uint8 enum (padded) + six int32
    "Relu6OpData": (8, 4),
    "HardSwishParams": (20, 4),  # three int16 and two int, with padding
    "OpDataIf": (8, 4),
    "OpDataWhile": (8, 4),
    "OpDataCallOnce": (8, 4),
    "OpDataComparison": (32, 4),
    "OpDataAbsRsqrt": (28, 4),  # elementwise.cc: 4 int32, bool, int-based enum, TfLiteType
    "OpDataVarHandle": (4, 4),
    "OpDataSquaredDifference": (112, 8),  # bool + ArithmeticParams (int64 members)
    "PreluParams": (28, 4),
    "OpDataElu": (256, 1),  # elu.cc OpData: int8_t table[256]
    "L2NormalizationParams": (4, 4),
    "OpDataAddN": (40, 4),  # add_n.cc OpData: nine int32 and a scratch index
    "OpDataCircularBuffer": (8, 4),
    "QuantizationOpDataBatchMatmul": (28, 4),
    "OpDataDetectionPostProcess": (112, 4),  # detection_postprocess.cc OpData
}

_HOST_X64_COMP: dict[str, tuple[int, int]] = {
    "void*": (8, 8),
    "size_t": (8, 8),
    "TfLiteTensor": (64, 8),
    "TfLiteEvalTensor": (24, 8),
    "NodeAndRegistration": (64, 8),
    "SubgraphAllocations": (24, 8),
    "ScratchBufferHandle": (8, 8),
    "ScratchBufferRequest": (16, 8),
    "AllocationInfo": (32, 8),
    "TfLiteAffineQuantization": (24, 8),
    "TfLiteIntArray": (4, 4),
    "MicroBuiltinDataAllocator": (16, 8),
    "SingleArenaBufferAllocator": (72, 8),
    "GreedyMemoryPlanner": (72, 8),
    "LinearMemoryPlanner": (8216, 8),
    "MicroAllocator": (72, 8),
    "RecordingSingleArenaBufferAllocator": (104, 8),
    "RecordingMicroAllocator": (272, 8),
    "MicroResourceVariables": (16, 8),
    "MicroResourceVariable": (40, 8),
    # Kernel OpData with pointers (and compression fields).
    "OpDataConv": (80, 8),
    "OpDataFullyConnected": (72, 8),
    "SoftmaxParams": (80, 8),
    "OpDataTransposeConv": (88, 8),
    "OpDataConcatenation": (80, 8),
    "OpDataAssignVariable": (4, 4),
    "LogSoftmaxOpData": (40, 8),  # five int32 and two size_t
    "OpDataBatchMatmul": (32, 8),  # three pointers and three bools
    # Builtin structs that contain pointers.
    "TfLiteVarHandleParams": (16, 8),
    **_COMMON_BUILTIN,
    **_ENUM_BUILTIN_INT,
    # The wheel's parser (tflite::micro::ParseFullyConnected) asks for 32 bytes, 8-aligned.
    "TfLiteFullyConnectedParams": (32, 8),
    **_COMMON_OPDATA,
}

_ARM32_INT_ENUMS: dict[str, tuple[int, int]] = {
    "void*": (4, 4),
    "size_t": (4, 4),
    "TfLiteTensor": (40, 4),
    "TfLiteEvalTensor": (12, 4),
    "NodeAndRegistration": (32, 4),
    "SubgraphAllocations": (8, 4),
    "ScratchBufferHandle": (4, 4),
    "ScratchBufferRequest": (12, 4),
    "AllocationInfo": (24, 4),
    "TfLiteAffineQuantization": (12, 4),
    "TfLiteIntArray": (4, 4),
    "MicroBuiltinDataAllocator": (8, 4),
    "SingleArenaBufferAllocator": (36, 4),
    "GreedyMemoryPlanner": (44, 4),
    "LinearMemoryPlanner": (4108, 4),
    "MicroAllocator": (36, 4),
    "RecordingSingleArenaBufferAllocator": (52, 4),
    "RecordingMicroAllocator": (124, 4),
    "MicroResourceVariables": (12, 4),
    "MicroResourceVariable": (20, 4),
    "OpDataConv": (56, 4),
    "OpDataFullyConnected": (48, 4),
    "SoftmaxParams": (56, 4),
    "OpDataTransposeConv": (72, 4),
    "OpDataConcatenation": (24, 4),
    "LogSoftmaxOpData": (28, 4),
    "OpDataBatchMatmul": (16, 4),
    "TfLiteVarHandleParams": (8, 4),
    **_COMMON_BUILTIN,
    **_ENUM_BUILTIN_INT,
    **_COMMON_OPDATA,
}

_ARM32_SHORT_ENUMS: dict[str, tuple[int, int]] = {
    **_ARM32_INT_ENUMS,
    # type, allocation_type and is_variable pack into 3 bytes (facts 8).
    "TfLiteTensor": (32, 4),
    **_ENUM_BUILTIN_SHORT,
}


PROFILES: Mapping[str, TargetProfile] = MappingProxyType({
    "host-x64": TargetProfile(
        name="host-x64",
        description="the pinned tflite-micro wheel: x86-64, reference kernels, compression on",
        pointer_size=8, compression=True, short_enums=False, default_allocator="recording",
        structs=MappingProxyType(_HOST_X64_COMP),
    ),
    "arm32": TargetProfile(
        name="arm32",
        description="32-bit Cortex-M (AAPCS), int-sized enums, reference kernels, no compression",
        pointer_size=4, compression=False, short_enums=False, default_allocator="production",
        structs=MappingProxyType(_ARM32_INT_ENUMS),
    ),
    "arm32-short-enums": TargetProfile(
        name="arm32-short-enums",
        description="32-bit Cortex-M (AAPCS) built with -fshort-enums, reference kernels",
        pointer_size=4, compression=False, short_enums=True, default_allocator="production",
        structs=MappingProxyType(_ARM32_SHORT_ENUMS),
    ),
})


def get_target(target: str | TargetProfile) -> TargetProfile:
    """The profile called ``target`` (a profile passes through unchanged)."""
    if isinstance(target, TargetProfile):
        return target
    try:
        return PROFILES[target]
    except KeyError:
        raise UnsupportedOpError(
            f"unknown target {target!r}; choose one of {', '.join(PROFILES)}"
        ) from None


__all__ = ["PROFILES", "TargetProfile", "get_target"]
