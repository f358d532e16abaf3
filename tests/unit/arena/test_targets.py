"""Target profiles against the struct sizes in the facts sheet (sections 4, 5.1, 8)."""

from __future__ import annotations

import pytest

from tinyarena.arena.targets import PROFILES, get_target
from tinyarena.errors import UnsupportedOpError, UsageError


CORES = {"cortex-m0": "plain", "cortex-m0plus": "plain", "cortex-m3": "plain",
         "cortex-m4": "dsp", "cortex-m7": "dsp", "cortex-m33": "dsp",
         "cortex-m55": "mve", "cortex-m85": "mve"}


def test_profiles_named_in_the_issue() -> None:
    esp = {"esp32", "esp32s3", "esp32p4", "esp32c3", "esp32c6"}  # issue 18
    # every TFLM TARGET_ARCH is a target too (tests/unit/test_tflm_target_names.py)
    assert {"host-x64", "arm32", "arm32-short-enums", *CORES, *esp} <= set(PROFILES)
    assert get_target("arm32") is PROFILES["arm32"]
    assert get_target(PROFILES["arm32"]) is PROFILES["arm32"]


@pytest.mark.parametrize("core,isa", sorted(CORES.items()))
def test_cortex_targets(core: str, isa: str) -> None:
    """Issue 9: each core = arm-none-eabi-gcc's layout (short enums, as the device build's
    Tag_ABI_enum_size says) + CMSIS-NN by default + the production allocator."""
    profile = get_target(core)
    assert (profile.kernel_set, profile.cmsis_nn_isa, profile.default_allocator) == (
        "cmsis-nn", isa, "production")
    assert profile.sizeof("TfLiteTensor") == 32 and profile.short_enums
    reference = get_target(core, "reference")
    assert reference.kernel_set == "reference" and reference.name == core
    for struct in ("TfLiteTensor", "OpDataConv", "TfLiteFullyConnectedParams"):
        assert reference.sizeof(struct) == PROFILES["arm32-short-enums"].sizeof(struct)
    header = profile.header()
    for part in (core, "short enums", "cmsis-nn", "production", "90b983c2"):
        assert part in header


def test_kernel_set_errors() -> None:
    for name in ("host-x64", "arm32", "arm32-short-enums"):
        assert get_target(name).kernel_set == "reference"
        with pytest.raises(UsageError, match="cortex-m"):
            get_target(name, "cmsis-nn")
    with pytest.raises(UsageError, match="kernel set"):
        get_target("cortex-m4", "xtensa")


def test_unknown_target_and_struct_raise() -> None:
    with pytest.raises(UsageError, match="arm64"):
        get_target("arm64")
    with pytest.raises(UnsupportedOpError, match="NoSuchStruct"):
        PROFILES["arm32"].sizeof("NoSuchStruct")


@pytest.mark.parametrize("struct,x64,arm32,short", [
    ("TfLiteTensor", (64, 8), (40, 4), (32, 4)),
    ("TfLiteEvalTensor", (24, 8), (12, 4), (12, 4)),
    ("NodeAndRegistration", (64, 8), (32, 4), (32, 4)),
    ("ScratchBufferRequest", (16, 8), (12, 4), (12, 4)),
    ("AllocationInfo", (32, 8), (24, 4), (24, 4)),
    ("TfLiteAffineQuantization", (24, 8), (12, 4), (12, 4)),
    ("SubgraphAllocations", (24, 8), (8, 4), (8, 4)),
    ("GreedyMemoryPlanner", (72, 8), (44, 4), (44, 4)),
    ("TfLiteFullyConnectedParams", (32, 8), (16, 4), (5, 1)),
    ("TfLiteAddParams", (8, 4), (8, 4), (2, 1)),
    ("TfLiteSVDFParams", (12, 4), (12, 4), (8, 4)),
    ("TfLiteConvParams", (28, 4), (28, 4), (28, 4)),
    ("TfLiteVarHandleParams", (16, 8), (8, 4), (8, 4)),
])
def test_struct_table(struct: str, x64: tuple, arm32: tuple, short: tuple) -> None:
    for name, expected in (("host-x64", x64), ("arm32", arm32), ("arm32-short-enums", short)):
        profile = PROFILES[name]
        assert (profile.sizeof(struct), profile.alignof(struct)) == expected, name


@pytest.mark.parametrize("struct,x64,arm32", [
    ("OpDataConv", 80, 56), ("OpDataFullyConnected", 72, 48), ("SoftmaxParams", 80, 56),
    ("OpDataLSTM", 688, 688), ("OpDataPooling", 32, 32), ("OpDataAdd", 60, 60),
])
def test_kernel_opdata(struct: str, x64: int, arm32: int) -> None:
    assert PROFILES["host-x64"].sizeof(struct) == x64
    assert PROFILES["arm32"].sizeof(struct) == arm32
    assert PROFILES["arm32-short-enums"].sizeof(struct) == arm32


def test_allocator_object_sums() -> None:
    """Facts 4.1 / 8: the wheel's tail starts at 448 bytes, arm32 production at 116."""
    x64 = PROFILES["host-x64"]
    assert sum(x64.sizeof(s) for s in ("RecordingSingleArenaBufferAllocator",
                                       "GreedyMemoryPlanner", "RecordingMicroAllocator")) == 448
    arm = PROFILES["arm32"]
    assert sum(arm.sizeof(s) for s in ("SingleArenaBufferAllocator", "GreedyMemoryPlanner",
                                       "MicroAllocator")) == 116
