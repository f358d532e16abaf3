"""``tinyarena export``: the sources compile against TFLM-shaped stubs, the array is the file,
the resolver has one TFLM method per distinct op, and kTensorArenaSize works in the wheel.

The stub header below is written for this test (it is not TFLM's code): it has TFLM's class
template and method names (transcribed from ``micro_mutable_op_resolver.h``), and records the
calls so a host program can print them. A method name the exporter invents does not compile.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tinyarena.arena import allocate_model
from tinyarena.builder import ModelBuilder
from tinyarena.cli import main
from tinyarena.errors import BuildError, UnsupportedOpError
from tinyarena.export import export_model
from tinyarena.interpreter import OpResolver
from tinyarena.kernels.base import Registration
from tinyarena.model import read_model

from small_models import hello_world_like
from tflm_oracle import SHARED_MODELS

# Every Add...() method of tflite::MicroMutableOpResolver<N> in TFLM (besides AddCustom and
# AddBuiltin), from tensorflow/lite/micro/micro_mutable_op_resolver.h.
TFLM_METHODS = """
AddAbs AddAdd AddAddN AddArgMax AddArgMin AddAssignVariable AddAveragePool2D AddBatchMatMul
AddBatchToSpaceNd AddBroadcastArgs AddBroadcastTo AddCallOnce AddCast AddCeil AddCircularBuffer
AddConcatenation AddConv2D AddCos AddCumSum AddDecode AddDelay AddDepthToSpace
AddDepthwiseConv2D AddDequantize AddDetectionPostprocess AddDiv AddDynamicUpdateSlice AddElu
AddEmbeddingLookup AddEnergy AddEqual AddEthosU AddExp AddExpandDims AddFftAutoScale AddFill
AddFilterBank AddFilterBankLog AddFilterBankSpectralSubtraction AddFilterBankSquareRoot AddFloor
AddFloorDiv AddFloorMod AddFramer AddFullyConnected AddGather AddGatherNd AddGreater
AddGreaterEqual AddHardSwish AddIf AddIrfft AddL2Normalization AddL2Pool2D AddLeakyRelu AddLess
AddLessEqual AddLog AddLogSoftmax AddLogicalAnd AddLogicalNot AddLogicalOr AddLogistic
AddMaxPool2D AddMaximum AddMean AddMinimum AddMirrorPad AddMul AddNeg AddNotEqual AddOverlapAdd
AddPCAN AddPack AddPad AddPadV2 AddPrelu AddQuantize AddReadVariable AddReduceAll AddReduceMax
AddReduceMin AddRelu AddRelu6 AddReshape AddResizeBilinear AddResizeNearestNeighbor AddReverseV2
AddRfft AddRound AddRsqrt AddSelectV2 AddShape AddSin AddSlice AddSoftmax AddSpaceToBatchNd
AddSpaceToDepth AddSplit AddSplitV AddSqrt AddSquare AddSquaredDifference AddSqueeze AddStacker
AddStridedSlice AddSub AddSum AddSvdf AddTanh AddTranspose AddTransposeConv
AddUnidirectionalSequenceLSTM AddUnpack AddVarHandle AddWhile AddWindow AddZerosLike
""".split()

GXX = shutil.which("g++")
ARM_GXX = shutil.which("arm-none-eabi-g++")
CXXFLAGS = ["-std=c++17", "-Wall", "-Wextra", "-Werror"]


def _stub_header() -> str:
    methods = "\n".join(f'  TfLiteStatus {m}() {{ return Record("{m}"); }}'
                        for m in TFLM_METHODS)
    return f"""// Test stand-in for TFLM's resolver: TFLM's names and signatures, none of its code.
#ifndef STUB_MICRO_MUTABLE_OP_RESOLVER_H_
#define STUB_MICRO_MUTABLE_OP_RESOLVER_H_
typedef enum {{ kTfLiteOk = 0, kTfLiteError = 1 }} TfLiteStatus;
struct TFLMRegistration {{ int id; }};
namespace tflite {{
template <unsigned int tOpCount>
class MicroMutableOpResolver {{
 public:
  TfLiteStatus AddCustom(const char* name, const TFLMRegistration* registration) {{
    if (registration == nullptr) return kTfLiteError;
    return Record(name);
  }}
{methods}
  unsigned int count() const {{ return count_; }}
  const char* name(unsigned int i) const {{ return names_[i]; }}
 private:
  static bool Same(const char* a, const char* b) {{
    while (*a != 0 && *a == *b) {{ ++a; ++b; }}
    return *a == *b;
  }}
  TfLiteStatus Record(const char* name) {{
    if (count_ >= tOpCount) return kTfLiteError;
    for (unsigned int i = 0; i < count_; ++i) if (Same(names_[i], name)) return kTfLiteError;
    names_[count_++] = name;
    return kTfLiteOk;
  }}
  const char* names_[tOpCount] = {{}};
  unsigned int count_ = 0;
}};
}}  // namespace tflite
#endif
"""


_MAIN = r"""
#include <cstdint>
#include <cstdio>
#include "@NAME@.h"
@CUSTOM@
int main(int argc, char** argv) {
  static @NAME@::OpResolver resolver;
  if (@NAME@::RegisterOps(resolver) != kTfLiteOk) return 3;
  if (resolver.count() != @NAME@::kOpCount) return 4;
  if (reinterpret_cast<std::uintptr_t>(@NAME@::g_model) % 16 != 0) return 5;
  std::FILE* out = std::fopen(argv[argc - 1], "wb");
  std::fwrite(@NAME@::g_model, 1, @NAME@::g_model_len, out);
  std::fclose(out);
  std::printf("%u\n", @NAME@::kTensorArenaSize);
  for (unsigned int i = 0; i < resolver.count(); ++i) std::printf("%s\n", resolver.name(i));
  return 0;
}
"""


@pytest.fixture(scope="module")
def stubs(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("tflm_stubs")
    header = root / "tensorflow" / "lite" / "micro" / "micro_mutable_op_resolver.h"
    header.parent.mkdir(parents=True)
    header.write_text(_stub_header())
    return root


def _build_and_run(stubs: Path, folder: Path, name: str, custom: str = "") -> list[str]:
    """Compile NAME.cc with -Wall -Werror and a main that registers the ops; run it. Returns
    its lines: kTensorArenaSize then the registered method names; writes g_model to model.bin."""
    main_cc = folder / "main.cc"
    main_cc.write_text(_MAIN.replace("@NAME@", name).replace("@CUSTOM@", custom))
    exe = folder / "probe"
    subprocess.run([GXX, *CXXFLAGS, "-I", str(stubs), "-I", str(folder),
                    str(folder / f"{name}.cc"), str(main_cc), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    proc = subprocess.run([str(exe), str(folder / "model.bin")], capture_output=True, text=True,
                          check=True)
    return proc.stdout.split()


def _array_bytes(source: str) -> bytes:
    body = source[source.index("g_model[] = {"):source.index("};")]
    return bytes(int(h, 16) for h in re.findall(r"0x([0-9a-f]{2})", body))


def _custom_model() -> bytes:
    """ADD, MUL and two custom ops: one TFLM ships (its own Add method), one it does not."""
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "float32")
    y = b.add_tensor("y", (1, 4), "float32")
    z = b.add_tensor("z", (1, 4), "float32")
    w = b.add_tensor("w", (1, 4), "float32")
    v = b.add_tensor("v", (1, 4), "float32")
    b.add_operator("ADD", [x, x], [y])
    b.add_operator("CUSTOM", [y], [z], custom_code="TFLite_Detection_PostProcess")
    b.add_operator("MUL", [z, y], [w])
    b.add_operator("CUSTOM", [w], [v], custom_code="MY_FILTER")
    out = b.add_tensor("out", (1, 4), "float32")
    b.add_operator("ADD", [v, x], [out])
    b.mark_output(out)
    return b.build()


def _custom_resolver() -> OpResolver:
    return (OpResolver.default()
            .add_custom("TFLite_Detection_PostProcess", Registration("TFLite_Detection_PostProcess"))
            .add_custom("MY_FILTER", Registration("MY_FILTER")))


# -- the library ---------------------------------------------------------------------------------
def test_array_is_the_file_and_output_is_deterministic(tmp_path: Path) -> None:
    data = hello_world_like(3)
    path = tmp_path / "hello.tflite"
    path.write_bytes(data)
    first = export_model(path)
    again = export_model(str(path))
    assert (first.header, first.source) == (again.header, again.source)
    assert _array_bytes(first.source) == data
    assert f"g_model_len = {len(data)};" in first.header
    assert first.name == "hello" and first.header_name == "hello.h"
    # The same bytes under the same file name elsewhere give the same sources.
    other = tmp_path / "elsewhere"
    other.mkdir()
    (other / "hello.tflite").write_bytes(data)
    moved = export_model(other / "hello.tflite")
    assert (moved.header, moved.source) == (first.header, first.source)


def test_arena_is_min_arena_plus_margin_with_the_reason(tmp_path: Path) -> None:
    data = hello_world_like(2)
    layout = allocate_model(read_model(data), target="arm32")
    out = export_model(data, target="arm32", margin=100, name="hw")
    assert out.arena_size == layout.min_arena + 100
    assert f"constexpr unsigned int kTensorArenaSize = {layout.min_arena + 100};" in out.header
    text = " ".join(line.lstrip("/ ") for line in out.header.splitlines())
    assert "alignas(16)" in text and "min_arena" in text and "arena_used_bytes()" in text
    assert "arm32" in text


def test_resolver_has_one_tflm_method_per_distinct_op(stubs: Path, tmp_path: Path) -> None:
    with pytest.raises(UnsupportedOpError, match="resolver="):
        export_model(_custom_model())  # a custom op's arena needs its kernel's prepare
    out = export_model(_custom_model(), name="custom", resolver=_custom_resolver())
    calls = [op.call for op in out.ops]
    assert calls == ['AddAdd()', 'AddCustom("MY_FILTER", Register_MY_FILTER())',
                     "AddDetectionPostprocess()", "AddMul()"]
    assert "constexpr unsigned int kOpCount = 4;" in out.header
    assert "const TFLMRegistration* Register_MY_FILTER();" in out.header
    if GXX is None:
        pytest.skip("g++ is not installed")
    out.write(tmp_path)
    custom = ("namespace custom { const TFLMRegistration* Register_MY_FILTER() "
              "{ static TFLMRegistration r{7}; return &r; } }")
    lines = _build_and_run(stubs, tmp_path, "custom", custom)
    assert lines[1:] == ["AddAdd", "MY_FILTER", "AddDetectionPostprocess", "AddMul"]


def test_unknown_builtin_and_bad_name_are_errors() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (1, 2, 2, 2, 1), "float32")
    f = b.add_constant("f", np.ones((1, 1, 1, 1, 1), np.float32))
    y = b.add_tensor("y", (1, 2, 2, 2, 1), "float32")
    b.add_operator("CONV_3D", [x, f], [y])
    b.mark_output(y)
    with pytest.raises(UnsupportedOpError, match="CONV_3D"):
        export_model(b.build())
    with pytest.raises(BuildError, match="C\\+\\+ identifier"):
        export_model(hello_world_like(2), name="my-model")
    with pytest.raises(BuildError, match="margin"):
        export_model(hello_world_like(2), margin=-1)


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_sources_compile_and_hold_the_model(stubs: Path, tmp_path: Path) -> None:
    data = hello_world_like(4)
    out = export_model(data, name="hello_world", target="arm32", margin=16)
    out.write(tmp_path)
    lines = _build_and_run(stubs, tmp_path, "hello_world")
    assert int(lines[0]) == out.arena_size
    # TFLM's hello_world example registers exactly this one op on a resolver of size 1.
    assert lines[1:] == ["AddFullyConnected"]
    assert (tmp_path / "model.bin").read_bytes() == data


@pytest.mark.skipif(GXX is None or not (SHARED_MODELS / "micro_speech_quantized.tflite").exists(),
                    reason="needs g++ and ../shared/models")
def test_micro_speech_registers_tflm_examples_ops(stubs: Path, tmp_path: Path) -> None:
    path = SHARED_MODELS / "micro_speech_quantized.tflite"
    export_model(path, name="micro_speech").write(tmp_path)
    lines = _build_and_run(stubs, tmp_path, "micro_speech")
    # TFLM's micro_speech example: MicroMutableOpResolver<4> with these four.
    assert sorted(lines[1:]) == ["AddDepthwiseConv2D", "AddFullyConnected", "AddReshape",
                                 "AddSoftmax"]
    assert (tmp_path / "model.bin").read_bytes() == path.read_bytes()


@pytest.mark.skipif(ARM_GXX is None, reason="arm-none-eabi-g++ is not installed")
def test_sources_compile_for_cortex_m(stubs: Path, tmp_path: Path) -> None:
    data = hello_world_like(5)
    out = export_model(data, name="hello_world", target="arm32")
    header, source = out.write(tmp_path)
    obj = tmp_path / "hello_world.o"
    subprocess.run([ARM_GXX, *CXXFLAGS, "-mcpu=cortex-m4", "-mthumb", "-Os", "-c",
                    "-I", str(stubs), "-I", str(tmp_path), str(source), "-o", str(obj)],
                   check=True, capture_output=True, text=True)
    readelf = shutil.which("arm-none-eabi-readelf")
    if readelf is None:
        return
    symbols = subprocess.run([readelf, "-sW", str(obj)], capture_output=True, text=True,
                             check=True).stdout
    sizes = [int(line.split()[2]) for line in symbols.splitlines()
             if line.split()[-1:] and "g_model" in line.split()[-1]
             and line.split()[3] == "OBJECT"]
    assert sizes == [len(data)]


def test_optimized_model_exports_its_offline_plan(tmp_path: Path) -> None:
    from tinyarena.optimize import optimize_model

    if not (SHARED_MODELS / "kws_ref_model.tflite").exists():
        pytest.skip("needs ../shared/models")
    result = optimize_model(SHARED_MODELS / "kws_ref_model.tflite", time_budget_s=0.2,
                            kernel_set="reference")  # the reference kernels' overlap rules
    optimized = bytes(result.model)
    out = export_model(optimized, name="kws")
    assert _array_bytes(out.source) == optimized
    assert out.min_arena == allocate_model(read_model(optimized)).min_arena
    assert out.min_arena < allocate_model(read_model(SHARED_MODELS / "kws_ref_model.tflite")).min_arena
    assert "OfflineMemoryAllocation" in out.header


@pytest.mark.oracle
def test_exported_arena_size_is_the_wheels_minimum() -> None:
    """kTensorArenaSize (margin 0, host-x64) works in the real TFLM and 16 bytes less fails."""
    from tflm_oracle import tflm_fits

    data = hello_world_like(6)
    out = export_model(data)
    assert tflm_fits(data, out.arena_size)[0]
    assert not tflm_fits(data, out.arena_size - 16)[0]


# -- the command ---------------------------------------------------------------------------------
def test_cli_export_writes_files_and_json(capsys, tmp_path: Path) -> None:
    model = tmp_path / "fc.tflite"
    model.write_bytes(hello_world_like(2))
    out_dir = tmp_path / "out"
    assert main(["export", str(model), "-o", str(out_dir), "--margin", "1K", "--name", "net",
                 "--target", "arm32", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    lib = export_model(model, target="arm32", margin=1024, name="net")
    assert data["arena_size"] == lib.arena_size == lib.min_arena + 1024
    assert data["op_count"] == 1 and data["ops"] == ["AddFullyConnected"]
    assert (out_dir / "net.h").read_text() == lib.header
    assert (out_dir / "net.cc").read_text() == lib.source


def test_cli_export_batch_equals_single_and_jobs(capsys, tmp_path: Path) -> None:
    models = tmp_path / "models"
    models.mkdir()
    for seed in range(3):
        (models / f"m{seed}.tflite").write_bytes(hello_world_like(seed))
    (models / "bad.tflite").write_bytes(b"not a model at all")
    results = {}
    for jobs in ("1", "2"):
        out = tmp_path / f"out{jobs}"
        assert main(["export", str(models), "--target", "cortex-m4", "-o", str(out), "--jobs",
                     jobs, "--json"]) == 1
        records = json.loads(capsys.readouterr().out)
        results[jobs] = ([{k: v for k, v in r.items() if k not in ("header", "source")}
                          for r in records],
                         {p.name: p.read_text() for p in sorted(out.iterdir())})
    assert results["1"] == results["2"]
    records, files = results["1"]
    assert [Path(r["model"]).name for r in records] == ["bad.tflite", "m0.tflite", "m1.tflite",
                                                       "m2.tflite"]
    assert records[0]["error"]["type"] == "ModelError"
    assert sorted(files) == ["m0.cc", "m0.h", "m1.cc", "m1.h", "m2.cc", "m2.h"]
    single = tmp_path / "single"
    assert main(["export", str(models / "m1.tflite"), "--target", "cortex-m4", "-o",
                 str(single), "--json"]) == 0
    one = json.loads(capsys.readouterr().out)
    assert {k: v for k, v in one.items() if k not in ("header", "source")} == records[2]
    assert (single / "m1.cc").read_text() == files["m1.cc"]


DEVICE_ORACLE = SHARED_MODELS.parent / "device-oracle" / "models.json"


@pytest.mark.skipif(not DEVICE_ORACLE.exists() or not SHARED_MODELS.is_dir(),
                    reason="needs ../shared/device-oracle and ../shared/models")
def test_exported_arena_is_the_minimum_measured_on_cortex_m4(tmp_path: Path, capsys) -> None:
    """kTensorArenaSize for arm32-short-enums (the toolchain's default packed enums) equals the
    minimum working arena found on a Cortex-M4 running TFLM's reference kernels, and `check`
    agrees: fits at that budget, 16 bytes over one granule below."""
    measured = json.loads(DEVICE_ORACLE.read_text())["results"]["m4-reference"]
    checked = 0
    for name, figures in sorted(measured.items()):
        if figures.get("status") != "ok" or "mobilenet" in name:
            continue
        path = SHARED_MODELS / name
        out = export_model(path, target="arm32-short-enums")
        assert out.arena_size == figures["min_arena"], name
        budget = figures["min_arena"] - 16
        assert main(["check", str(path), "--target", "arm32-short-enums", "--budget",
                     str(budget), "--json"]) == 3
        assert json.loads(capsys.readouterr().out)["models"][0]["over_by"] == 16
        checked += 1
    assert checked >= 5


@pytest.mark.skipif(GXX is None, reason="g++ is not installed")
def test_a_model_without_operators_compiles(stubs: Path, tmp_path: Path) -> None:
    # RegisterOps(resolver) with no Add...() call left `resolver` unused: -Wextra -Werror failed
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    b.mark_output(x)
    data = b.build()
    out = export_model(data, name="passthrough", target="arm32")
    out.write(tmp_path)
    lines = _build_and_run(stubs, tmp_path, "passthrough")
    assert int(lines[0]) == out.arena_size and lines[1:] == []
    assert (tmp_path / "model.bin").read_bytes() == data
