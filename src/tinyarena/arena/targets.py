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

from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import Mapping

from tinyarena.errors import UnsupportedOpError, UsageError

StructTable = Mapping[str, tuple[int, int]]  # C name -> (sizeof, alignof)

KERNEL_SETS = ("reference", "cmsis-nn", "esp-nn")
ISA_NAMES = {"plain": "plain C", "dsp": "DSP extension", "mve": "MVE/Helium"}
# esp-nn releases tinyarena ports the Prepare-time scratch sizes of (oldest first; the last is
# the default, as a fresh `idf.py` build resolves esp-tflite-micro's `esp-nn >=1.1.1` to it).
ESP_NN_VERSIONS = ("1.1.2", "1.2.0", "1.2.3")
# esp_nn.h's dispatch: the header a chip's build includes, as a user reads it.
ESP_NN_DISPATCH_NAMES = {"esp32s3": "ESP32-S3 dispatch", "esp32p4": "ESP32-P4 dispatch",
                         "generic": "generic C dispatch"}


@dataclass(frozen=True)
class TargetProfile:
    """One build of TFLM: ABI, flags and the struct table.

    ``default_allocator`` is the allocator path whose tail the sizes describe by default:
    ``"recording"`` (the Python wheel's RecordingMicroAllocator) or ``"production"``
    (``MicroInterpreter(model, resolver, arena, size)`` on a device).

    ``kernel_set`` names the kernels the build links (``"reference"`` or ``"cmsis-nn"``, the
    registry in ``tinyarena.kernels`` picks each op's Registration by it); ``cmsis_nn_isa`` is
    the CMSIS-NN code path the core compiles (``"plain"``, ``"dsp"``, ``"mve"``; None where
    CMSIS-NN cannot be linked). CMSIS-NN kernels read the ISA and
    ``kernels_optimized_for_speed`` (TFLM's ``KERNELS_OPTIMIZED_FOR_SPEED``) as data.
    ``tflm_commit`` is the TFLM version whose numbers the profile reproduces.
    ``float_fma``: the build contracts float ``a * b + c`` into one fused multiply-add (GCC's
    default with a hardware FPU, ``-mfloat-abi=hard``), which float kernels emulate.
    ``libm`` is the C library whose ``expf`` the float kernels call: "glibc" (the wheel's
    host), "newlib" (Cortex-M with a double-precision FPU: the same double-based algorithm),
    "newlib-fdlibm" (no FPU: newlib's old fdlibm float code; see ``kernels._libm``) or
    "newlib-fdlibm-fma" (a single-precision FPU: that code with GCC's fused multiply-adds).
    ``float_build`` names the float ABI, FPU and DSP/MVE extensions of a Cortex-M build (empty
    elsewhere); ``note`` says how the name's meaning changed, for every output to repeat.
    """

    name: str
    description: str
    pointer_size: int
    compression: bool
    short_enums: bool
    default_allocator: str
    structs: StructTable = field(repr=False)
    kernel_set: str = "reference"
    cmsis_nn_isa: str | None = None
    core: str | None = None
    abi: str = ""
    tflm_commit: str = "90b983c2"
    kernels_optimized_for_speed: bool = False
    float_fma: bool = False
    libm: str = "glibc"
    esp_nn_dispatch: str | None = None
    esp_nn_version: str | None = None
    float_build: str = ""
    note: str = ""

    @property
    def kernels(self) -> str:
        """The kernel set as a user reads it: ``cmsis-nn (DSP extension)``, ``reference``,
        ``esp-nn 1.2.3 (ESP32-S3 dispatch)``."""
        if self.kernel_set == "cmsis-nn" and self.cmsis_nn_isa is not None:
            return f"cmsis-nn ({ISA_NAMES[self.cmsis_nn_isa]})"
        if self.kernel_set == "esp-nn" and self.esp_nn_dispatch is not None:
            return (f"esp-nn {self.esp_nn_version} "
                    f"({ESP_NN_DISPATCH_NAMES[self.esp_nn_dispatch]})")
        return self.kernel_set

    def header(self, allocator: str | None = None) -> str:
        """One line naming everything a number depends on, for every output's header."""
        build = f" | {self.float_build}" if self.float_build else ""
        return (f"target {self.name} | ABI {self.abi}{build} | kernels {self.kernels} | "
                f"allocator {allocator or self.default_allocator} | TFLM {self.tflm_commit}")

    def with_kernel_set(self, kernel_set: str | None) -> TargetProfile:
        """This build with another kernel set (None: unchanged)."""
        if kernel_set is None or kernel_set == self.kernel_set:
            return self
        if kernel_set not in KERNEL_SETS:
            raise UsageError(f"unknown kernel set {kernel_set!r}; choose one of "
                             f"{', '.join(KERNEL_SETS)}")
        if kernel_set == "cmsis-nn" and self.cmsis_nn_isa is None:
            raise UsageError(
                f"target {self.name} has no CMSIS-NN build (CMSIS-NN needs an Arm Cortex-M "
                f"core); choose a cortex-m* target, e.g. --target cortex-m4 --kernels cmsis-nn")
        if kernel_set == "esp-nn" and self.esp_nn_dispatch is None:
            raise UsageError(
                f"target {self.name} has no ESP-NN build (ESP-NN runs on Espressif chips); "
                f"choose an esp32* target, e.g. --target esp32s3 --kernels esp-nn")
        return replace(self, kernel_set=kernel_set)

    def with_esp_nn(self, version: str | None) -> TargetProfile:
        """This ESP build with esp-nn ``version`` (None: unchanged). Raises for a target
        without ESP-NN, for ``--kernels reference`` and for a version tinyarena has no
        formulas for, naming the known ones."""
        if version is None:
            return self
        known = ", ".join(ESP_NN_VERSIONS)
        if self.esp_nn_dispatch is None:
            raise UsageError(
                f"--esp-nn names an esp-nn release, but target {self.name} has no ESP-NN "
                f"build; choose an esp32* target (esp-nn versions: {known})")
        if self.kernel_set != "esp-nn":
            raise UsageError(
                f"--esp-nn {version} with --kernels {self.kernel_set}: that build links no "
                f"ESP-NN; drop one of them (esp-nn versions: {known})")
        if version not in ESP_NN_VERSIONS:
            raise UsageError(f"unknown esp-nn version {version!r}; choose one of {known}")
        return replace(self, esp_nn_version=version)

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
    "OpDataEthosU": (12, 4),  # kernels/ethos_u/ethosu.cc: three int
    # ops-b (issue 8)
    "OpDataSquaredDifference": (112, 8),  # bool + ArithmeticParams (int64 members)
    "PreluParams": (28, 4),
    "OpDataElu": (256, 1),  # elu.cc OpData: int8_t table[256]
    "L2NormalizationParams": (4, 4),
    "OpDataAddN": (40, 4),  # add_n.cc OpData: nine int32 and a scratch index
    "OpDataCircularBuffer": (8, 4),
    "QuantizationOpDataBatchMatmul": (28, 4),
    "OpDataDetectionPostProcess": (112, 4),  # detection_postprocess.cc OpData
    # ops-a (issue 8)
    "OpDataMirrorPad": (20, 4),  # mirror_pad.cc: five ints
    "OpDataSelect": (1, 1),  # select.cc: one bool
    "OpDataCumSum": (36, 4),  # cumsum.cc: nine int32, allocated in Prepare for int8 only
    "SpaceToBatchParams": (4, 4),  # types.h: one int32 output_offset
}

# TFLM's signal library (signal/micro/kernels, signal/src): custom-op params and the state
# structs their persistent buffers hold. Without pointers, so the same on every profile:
_SIGNAL_COMMON: dict[str, tuple[int, int]] = {
    "TFLMSignalWindowParams": (8, 4),  # int32 shift, input_size
    "TFLMSignalEnergyParams": (8, 4),  # int32 end_index, start_index
    "TFLMSignalLogParams": (8, 4),  # int input_correction_bits, output_scale
    "TfLitePcanParams": (4, 4),  # int snr_shift
    # kissfft v130 kiss_fft_state: nfft, inverse, factors[64], twiddles[1] (one complex)
    "kiss_fft_fixed16::kiss_fft_state": (268, 4),
    "kiss_fft_fixed32::kiss_fft_state": (272, 4),
    "kiss_fft_float::kiss_fft_state": (272, 4),
    "kiss_fft_fixed16::kiss_fft_cpx": (4, 2),
    "kiss_fft_fixed32::kiss_fft_cpx": (8, 4),
    "kiss_fft_float::kiss_fft_cpx": (8, 4),
}
# ... and with pointers (8-byte on x86-64, 4-byte on arm32; the TfLiteType members pad to the
# same sizes with -fshort-enums).
_SIGNAL_X64: dict[str, tuple[int, int]] = {
    "TfLiteAudioFrontendRfftParams": (48, 8),
    "TfLiteAudioFrontendIrfftParams": (32, 8),
    "TFLMSignalFilterBankParams": (64, 8),  # FilterbankConfig (5 pointers) + work_area
    "TFLMSignalSpectralSubtractionParams": (56, 8),
    "TFLMSignalFramerParams": (40, 8),
    "TFLMSignalStackerParams": (56, 8),
    "TFLMSignalFrontendDelayParams": (32, 8),
    "TFLMSignalOverlapAddParams": (32, 8),
    "tflm_signal::CircularBuffer": (40, 8),
    "kiss_fftr_state": (24, 8),
    "IrfftFloatState": (16, 8),
    **_SIGNAL_COMMON,
}
_SIGNAL_ARM32: dict[str, tuple[int, int]] = {
    "TfLiteAudioFrontendRfftParams": (32, 4),
    "TfLiteAudioFrontendIrfftParams": (24, 4),
    "TFLMSignalFilterBankParams": (36, 4),
    "TFLMSignalSpectralSubtractionParams": (44, 4),
    "TFLMSignalFramerParams": (28, 4),
    "TFLMSignalStackerParams": (36, 4),
    "TFLMSignalFrontendDelayParams": (20, 4),
    "TFLMSignalOverlapAddParams": (24, 4),
    "tflm_signal::CircularBuffer": (24, 4),
    "kiss_fftr_state": (12, 4),
    "IrfftFloatState": (8, 4),
    **_SIGNAL_COMMON,
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
    "PersistentArenaBufferAllocator": (32, 8),  # vptr, 3 pointers
    "NonPersistentArenaBufferAllocator": (56, 8),  # vptr, 4 pointers, intptr, int, bool
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
    "OpDataEmbeddingLookup": (16, 8),  # embedding_lookup.cc: float + size_t (ops-a)
    # decode_state*.h: vtable, context and profiler pointers, then the fields (ops-a)
    "DecodeStateLut": (72, 8),
    "DecodeStatePrune": (80, 8),
    "DecodeStateHuffman": (56, 8),
    # Builtin structs that contain pointers.
    "TfLiteVarHandleParams": (16, 8),
    **_COMMON_BUILTIN,
    **_ENUM_BUILTIN_INT,
    # The wheel's parser (tflite::micro::ParseFullyConnected) asks for 32 bytes, 8-aligned.
    "TfLiteFullyConnectedParams": (32, 8),
    **_COMMON_OPDATA,
    **_SIGNAL_X64,
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
    "PersistentArenaBufferAllocator": (16, 4),
    "NonPersistentArenaBufferAllocator": (32, 4),
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
    "OpDataEmbeddingLookup": (8, 4),  # embedding_lookup.cc: float + size_t (ops-a)
    "DecodeStateLut": (36, 4),
    "DecodeStatePrune": (40, 4),
    "DecodeStateHuffman": (28, 4),
    "TfLiteVarHandleParams": (8, 4),
    **_COMMON_BUILTIN,
    **_ENUM_BUILTIN_INT,
    **_COMMON_OPDATA,
    **_SIGNAL_ARM32,
}

_ARM32_SHORT_ENUMS: dict[str, tuple[int, int]] = {
    **_ARM32_INT_ENUMS,
    # type, allocation_type and is_variable pack into 3 bytes (facts 8).
    "TfLiteTensor": (32, 4),
    **_ENUM_BUILTIN_SHORT,
}

# The cmsis_nn kernels' own OpData (tensorflow/lite/micro/kernels/cmsis_nn/*.cc at 90b983c2), on
# the arm-none-eabi-gcc layout: each wraps the reference OpData and adds CMSIS-NN's fields.
_CMSIS_NN_OPDATA: dict[str, tuple[int, int]] = {
    "CmsisNnOpDataConv": (60, 4),  # OpDataConv + buffer_idx (conv.cc, depthwise_conv.cc)
    # OpDataFullyConnected + buffer_conv_1x1_idx, buffer_idx, kernel_sums, batches,
    # accum_depth, output_depth.
    "CmsisNnOpDataFullyConnected": (72, 4),
    "CmsisNnOpDataPooling": (36, 4),  # OpDataPooling + buffer_idx
    "CMSISNNSoftmaxParams": (64, 4),  # SoftmaxParams + num_rows, row_size
    # Nine ints and kernel_sums (scratch_weight_tensor_index only with
    # KERNELS_OPTIMIZED_FOR_SIZE, which no cortex-m* target sets).
    "CmsisNnOpDataSvdf": (40, 4),
    # OpDataLSTM + cmsis_nn_lstm_params (15 int32 + four 40-byte cmsis_nn_lstm_gate).
    "CmsisNnOpDataLSTM": (912, 8),
    # ConvParams + three scratch indices + two per-channel pointers.
    "CmsisNnOpDataTransposeConv": (76, 4),
}

_CORTEX_M: dict[str, tuple[int, int]] = {**_ARM32_SHORT_ENUMS, **_CMSIS_NN_OPDATA}
_CORTEX_ABI = "arm-none-eabi-gcc default: AAPCS, 32-bit, short enums"

@dataclass(frozen=True)
class CortexBuild:
    """One ``TARGET_ARCH`` of TFLM's ``tools/make/targets/cortex_m_generic_makefile.inc``: the
    core, the ``-mfloat-abi`` the makefile sets (``FLOAT``), the FPU the ``-mcpu``/``-mfpu``
    pair leaves usable, and the DSP/MVE extensions CMSIS-NN picks its code path by.

    What the compiler makes of each pair was measured with Debian's arm-none-eabi-gcc 12.2.1
    (``-dM -E``: ``__ARM_FP``, ``__ARM_FEATURE_FMA``, ``__ARM_FEATURE_DSP``,
    ``__ARM_FEATURE_MVE``, ``__SOFTFP__``), so the table is data, not a guess from the name.
    ``was`` says what the same name meant in tinyarena before it followed TFLM's names.
    ``libm``: the expf of the newlib multilib the flags select (``-print-multi-directory``):
    without an FPU and with a single-precision one (``v7e-m+fp``, ``v8-m.main+fp``) newlib
    builds fdlibm's ef_exp.c, the latter with GCC's fused multiply-adds; with a
    double-precision FPU (``v7e-m+dp``, ``v8-m.main+dp``) its double-based expf. Measured on
    200,000 inputs in QEMU (mps2-an385/an386/an500): Cortex-M3 and soft-float M4 equal
    ``newlib-fdlibm``, hard-float M4 ``newlib-fdlibm-fma``, hard-float M7 ``newlib``, bit for bit."""

    arch: str
    core: str
    float_abi: str
    fpu: str
    dsp: bool
    mve: str = ""
    was: str = ""
    libm: str = "newlib-fdlibm"

    @property
    def isa(self) -> str:
        """CMSIS-NN's code path: MVE (``ARM_MATH_MVEI``), DSP (``ARM_MATH_DSP``) or plain C."""
        return "mve" if self.mve else "dsp" if self.dsp else "plain"

    @property
    def hardware_float(self) -> bool:
        """Float arithmetic runs on the FPU (hard or softfp ABI with an FPU): GCC then fuses
        ``a * b + c`` into VFMA (``__ARM_FEATURE_FMA``) and links newlib's FPU multilib."""
        return bool(self.fpu) and self.float_abi != "soft"

    def words(self) -> str:
        """``float ABI soft, no FPU, DSP extension``: what every header names."""
        fpu = self.fpu if self.hardware_float else "no FPU"
        ext = ("MVE " + self.mve) if self.mve else "DSP extension" if self.dsp else "no DSP"
        return f"float ABI {self.float_abi}, {fpu}, {ext}"


_SP, _DP = "newlib-fdlibm-fma", "newlib"  # expf with a single- / double-precision FPU
_TFLM_CHANGED = ("before tinyarena followed TFLM's TARGET_ARCH names, {name} meant the "
                 "hard-float FPU build (now {name}+fp); sizes are the same, float outputs differ "
                 "(no fused multiply-add, newlib's fdlibm expf)")
CORTEX_M_BUILDS: tuple[CortexBuild, ...] = (
    CortexBuild("cortex-m0", "cortex-m0", "soft", "", False),
    CortexBuild("cortex-m0plus", "cortex-m0plus", "soft", "", False),
    CortexBuild("cortex-m3", "cortex-m3", "soft", "", False),
    CortexBuild("cortex-m4", "cortex-m4", "soft", "", True,
                was=_TFLM_CHANGED.format(name="cortex-m4")),
    CortexBuild("cortex-m4+fp", "cortex-m4", "hard", "FPv4-SP", True, libm=_SP),
    CortexBuild("cortex-m4+sfp", "cortex-m4", "softfp", "FPv4-SP", True, libm=_SP),
    CortexBuild("cortex-m7", "cortex-m7", "soft", "", True,
                was=_TFLM_CHANGED.format(name="cortex-m7")),
    CortexBuild("cortex-m7+fp", "cortex-m7", "hard", "FPv5-D16", True, libm=_DP),
    CortexBuild("cortex-m33", "cortex-m33", "hard", "FPv5-SP", True, libm=_SP),
    CortexBuild("cortex-m33+nodsp", "cortex-m33", "soft", "", False),
    CortexBuild("cortex-m55", "cortex-m55", "hard", "FPv5-D16 + MVE-F", True, "integer+float",
                libm=_DP),
    CortexBuild("cortex-m55+nofp", "cortex-m55", "softfp", "", True, "integer"),
    CortexBuild("cortex-m55+nodsp+nofp", "cortex-m55", "softfp", "", False),
    CortexBuild("cortex-m85", "cortex-m85", "hard", "FPv5-D16 + MVE-F", True, "integer+float",
                libm=_DP),  # as cortex-m55 (GCC 12 has no -mcpu=cortex-m85 to measure)
)
"""Every TARGET_ARCH the makefile accepts (cortex-m85 since TFLM added it there), in its order.
TFLM forces FLOAT=softfp on every cortex-m55* (soft would disable MVE); without an FPU that is
still software float (``__SOFTFP__``)."""


def _cortex_profile(build: CortexBuild) -> TargetProfile:
    what = f"{build.words()}, CMSIS-NN {ISA_NAMES[build.isa]}"
    return TargetProfile(
        name=build.arch,
        description=f"TFLM TARGET_ARCH={build.arch}: {what}; built with arm-none-eabi-gcc, "
                    f"production allocator",
        pointer_size=4, compression=False, short_enums=True, default_allocator="production",
        structs=MappingProxyType(_CORTEX_M), kernel_set="cmsis-nn", cmsis_nn_isa=build.isa,
        core=build.core, abi=_CORTEX_ABI, tflm_commit="90b983c2",
        kernels_optimized_for_speed=True, float_fma=build.hardware_float,
        libm=build.libm,
        float_build=build.words(), note=build.was,
    )


# -- Espressif chips (issue 18): esp-tflite-micro 1.4.0 with ESP-NN ----------------------------
# esp-tflite-micro 1.4.0 vendors TFLM 09656354 unchanged (its kernels/esp_nn/*.cc replace seven
# reference kernels). Xtensa GCC (ESP32, ESP32-S3) and RISC-V ilp32/ilp32f GCC (ESP32-C3, -C6,
# -P4) lay out every struct of the table as AAPCS with int-sized enums does (no -fshort-enums;
# int64/double 8-aligned): the esp-oracle's provenance.abi, measured with -m32 -malign-double.
# Only esp_nn's own NodeData differ (conv.cc, depthwise_conv.cc: OpDataConv + int buffer_idx;
# softmax.cc: SoftmaxParams + int buffer_idx; SoftmaxParams holds a double, so 8-aligned).
_ESP_NN_NODE_DATA: dict[str, tuple[int, int]] = {
    "EspNnNodeDataConv": (60, 4),
    "EspNnNodeDataSoftmax": (64, 8),
    "SoftmaxParams": (56, 8),
}
_ESP: dict[str, tuple[int, int]] = {**_ARM32_INT_ENUMS, **_ESP_NN_NODE_DATA}
_XTENSA_ABI = "Xtensa GCC: ILP32, int-sized enums, 8-byte aligned int64/double"
_RISCV_ABI = "RISC-V GCC {}: ILP32, int-sized enums, 8-byte aligned int64/double"

# chip -> (esp_nn.h dispatch, core, ABI, has a single-precision FPU). esp_nn.h picks the S3 or
# P4 header for those chips and esp_nn_generic_opt.h for every other one (CONFIG_NN_OPTIMIZED,
# the Kconfig default).
_ESP_CHIPS: dict[str, tuple[str, str, str, bool]] = {
    "esp32": ("generic", "Xtensa LX6", _XTENSA_ABI, True),
    "esp32s3": ("esp32s3", "Xtensa LX7 with PIE SIMD", _XTENSA_ABI, True),
    "esp32p4": ("esp32p4", "RISC-V RV32IMAFC with PIE", _RISCV_ABI.format("ilp32f"), True),
    "esp32c3": ("generic", "RISC-V RV32IMC", _RISCV_ABI.format("ilp32"), False),
    "esp32c6": ("generic", "RISC-V RV32IMAC", _RISCV_ABI.format("ilp32"), False),
}


def _esp_profile(chip: str, dispatch: str, core: str, abi: str, fpu: bool) -> TargetProfile:
    """One chip's esp-tflite-micro build. ``float_fma``: GCC contracts float ``a * b + c`` to
    the FPU's fused madd.s / fmadd.s where there is one (an assumption: float outputs were not
    measured on silicon). ``libm``: ESP-IDF's newlib, whose float expf is the fdlibm code on
    Xtensa and RISC-V (newlib's __OBSOLETE_MATH default outside Arm)."""
    return TargetProfile(
        name=chip,
        description=f"{chip}: {core}; esp-tflite-micro 1.4.0 with ESP-NN, ESP-IDF GCC, "
                    f"production allocator",
        pointer_size=4, compression=False, short_enums=False, default_allocator="production",
        structs=MappingProxyType(_ESP), kernel_set="esp-nn", core=core, abi=abi,
        tflm_commit="09656354", float_fma=fpu, libm="newlib-fdlibm",
        esp_nn_dispatch=dispatch, esp_nn_version=ESP_NN_VERSIONS[-1],
    )


_ESP_PROFILES: dict[str, TargetProfile] = {
    chip: _esp_profile(chip, *facts) for chip, facts in _ESP_CHIPS.items()}


PROFILES: Mapping[str, TargetProfile] = MappingProxyType({
    "host-x64": TargetProfile(
        name="host-x64",
        description="the pinned tflite-micro wheel: x86-64, reference kernels, compression on",
        pointer_size=8, compression=True, short_enums=False, default_allocator="recording",
        structs=MappingProxyType(_HOST_X64_COMP), abi="x86-64 SysV (LP64)",
        tflm_commit="8f6596d",
    ),
    "arm32": TargetProfile(
        name="arm32",
        description="32-bit Cortex-M (AAPCS), int-sized enums, reference kernels, no compression",
        pointer_size=4, compression=False, short_enums=False, default_allocator="production",
        structs=MappingProxyType(_ARM32_INT_ENUMS), abi="AAPCS, 32-bit, int-sized enums",
    ),
    "arm32-short-enums": TargetProfile(
        name="arm32-short-enums",
        description="32-bit Cortex-M (AAPCS) built with -fshort-enums, reference kernels",
        pointer_size=4, compression=False, short_enums=True, default_allocator="production",
        structs=MappingProxyType(_ARM32_SHORT_ENUMS), abi="AAPCS, 32-bit, short enums",
    ),
    **{build.arch: _cortex_profile(build) for build in CORTEX_M_BUILDS},
    **_ESP_PROFILES,
})


def get_target(target: str | TargetProfile, kernel_set: str | None = None,
               esp_nn: str | None = None) -> TargetProfile:
    """The profile called ``target`` (a profile passes through unchanged), with ``kernel_set``
    instead of its default kernel set and esp-nn release ``esp_nn`` when given."""
    if isinstance(target, TargetProfile):
        return target.with_kernel_set(kernel_set).with_esp_nn(esp_nn)
    try:
        profile = PROFILES[target]
    except KeyError:
        raise UsageError(
            f"unknown target {target!r}; choose one of {', '.join(PROFILES)}"
        ) from None
    return profile.with_kernel_set(kernel_set).with_esp_nn(esp_nn)


__all__ = ["CORTEX_M_BUILDS", "CortexBuild", "ESP_NN_DISPATCH_NAMES", "ESP_NN_VERSIONS",
           "ISA_NAMES", "KERNEL_SETS", "PROFILES", "TargetProfile", "get_target"]
