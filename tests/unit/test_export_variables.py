"""``export`` of a model with resource variables: ``CreateInterpreter`` makes the construction
TFLM needs (without a ``MicroResourceVariables`` VAR_HANDLE's Prepare fails), and the arena
constants cover it.

The sources are compiled (-Wall -Wextra -Werror) against stand-ins for TFLM's headers written
for this test: TFLM's class names and the signatures of ``MicroAllocator::Create``,
``MicroResourceVariables::Create`` and ``MicroInterpreter``'s constructors (transcribed from
``micro_allocator.h``, ``micro_resource_variable.h``, ``micro_interpreter.h``), none of its
code; they record the calls, which a host program prints.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from model_families import wake_word
from test_export import _stub_header
from tinyarena.arena import allocate_model
from tinyarena.arena.allocator import variables_arena
from tinyarena.errors import BuildError
from tinyarena.export import export_model
from tinyarena.model import read_model

GXX = shutil.which("g++")

_TFLM_STUB = """// Test stand-in: TFLM's names and signatures for the resource-variable construction.
#ifndef STUB_TFLM_CONSTRUCTION_H_
#define STUB_TFLM_CONSTRUCTION_H_
#include <cstddef>
#include <cstdint>
namespace tflite {
struct Model { unsigned char first; };
inline const Model* GetModel(const void* buf) { return static_cast<const Model*>(buf); }
class MicroAllocator;
class MicroResourceVariables;
struct Calls {
  const std::uint8_t* allocator_arena = nullptr; std::size_t allocator_size = 0;
  const MicroAllocator* variables_allocator = nullptr; int variables_count = -1;
  const Model* model = nullptr; const MicroAllocator* interpreter_allocator = nullptr;
  const std::uint8_t* interpreter_arena = nullptr; std::size_t interpreter_size = 0;
  const MicroResourceVariables* interpreter_variables = nullptr;
};
inline Calls calls;
class MicroAllocator {
 public:
  static MicroAllocator* Create(std::uint8_t* tensor_arena, std::size_t arena_size) {
    static MicroAllocator one;
    calls.allocator_arena = tensor_arena; calls.allocator_size = arena_size;
    return &one;
  }
};
class MicroResourceVariables {
 public:
  static MicroResourceVariables* Create(MicroAllocator* allocator, int max_num_variables) {
    static MicroResourceVariables one;
    calls.variables_allocator = allocator; calls.variables_count = max_num_variables;
    return &one;
  }
};
class MicroInterpreter {
 public:
  template <typename Resolver>
  MicroInterpreter(const Model* model, const Resolver&, MicroAllocator* allocator,
                   MicroResourceVariables* resource_variables = nullptr) {
    calls.model = model; calls.interpreter_allocator = allocator;
    calls.interpreter_variables = resource_variables;
  }
  template <typename Resolver>
  MicroInterpreter(const Model* model, const Resolver&, std::uint8_t* tensor_arena,
                   std::size_t tensor_arena_size,
                   MicroResourceVariables* resource_variables = nullptr) {
    calls.model = model; calls.interpreter_arena = tensor_arena;
    calls.interpreter_size = tensor_arena_size; calls.interpreter_variables = resource_variables;
  }
};
}  // namespace tflite
#endif
"""

_MAIN = r"""
#include <cstdint>
#include <cstdio>
#include "ww.h"
alignas(16) static std::uint8_t tensor_arena[ww::kTensorArenaSize];
@VARS_DECL@
int main() {
  static ww::OpResolver resolver;
  if (ww::RegisterOps(resolver) != kTfLiteOk) return 3;
  tflite::MicroInterpreter& interpreter = ww::CreateInterpreter(resolver, tensor_arena@VARS@);
  (void)interpreter;
  const tflite::Calls& c = tflite::calls;
  std::printf("allocator_on_tensor_arena %d\n", c.allocator_arena == tensor_arena);
  std::printf("allocator_on_variables_arena %d\n", @ON_VARS@);
  std::printf("allocator_size %zu\n", c.allocator_size);
  std::printf("variables_count %d\n", c.variables_count);
  std::printf("interpreter_model_is_g_model %d\n",
              static_cast<const void*>(c.model) == static_cast<const void*>(ww::g_model));
  std::printf("interpreter_over_the_allocator %d\n",
              c.interpreter_allocator != nullptr &&
              c.interpreter_allocator == c.variables_allocator);
  std::printf("interpreter_arena_is_tensor_arena %d\n", c.interpreter_arena == tensor_arena);
  std::printf("interpreter_size %zu\n", c.interpreter_size);
  std::printf("interpreter_has_variables %d\n", c.interpreter_variables != nullptr);
  return 0;
}
"""


@pytest.fixture(scope="module")
def tflm_stubs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tflm_construction_stubs")
    micro = root / "tensorflow" / "lite" / "micro"
    micro.mkdir(parents=True)
    (micro / "micro_mutable_op_resolver.h").write_text(_stub_header())
    for name in ("micro_allocator.h", "micro_interpreter.h", "micro_resource_variable.h"):
        (micro / name).write_text('#include "stub_tflm_construction.h"\n')
    (root / "stub_tflm_construction.h").write_text(_TFLM_STUB)
    return root


def _build_and_run(stubs: Path, folder: Path, separate: bool) -> dict[str, int]:
    main_cc = folder / "main.cc"
    main_cc.write_text(
        _MAIN.replace("@VARS_DECL@", "alignas(16) static std::uint8_t variables_arena["
                      "ww::kVariablesArenaSize];" if separate else "")
        .replace("@VARS@", ", variables_arena" if separate else "")
        .replace("@ON_VARS@", "c.allocator_arena == variables_arena" if separate else "0"))
    exe = folder / "probe"
    # -isystem for TFLM's headers, as the README says: TFLM's own headers fail -Wextra -Werror
    subprocess.run([GXX, "-std=c++17", "-Wall", "-Wextra", "-Werror", "-isystem", str(stubs),
                    "-I", str(folder), str(folder / "ww.cc"), str(main_cc), "-o", str(exe)],
                   check=True, capture_output=True, text=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True).stdout
    return {k: int(v) for k, v in (line.split() for line in out.splitlines())}


@pytest.mark.skipif(GXX is None, reason="needs g++")
def test_create_interpreter_over_one_arena(tflm_stubs: Path, tmp_path: Path) -> None:
    out = export_model(wake_word(), target="cortex-m4", name="ww")
    out.write(tmp_path)
    layout = allocate_model(read_model(wake_word()), target="cortex-m4")
    assert out.arena_size == layout.min_arena  # MRV object and table are in min_arena
    assert out.resource_variables == 2 and "constexpr int kNumResourceVariables = 2;" in out.header
    calls = _build_and_run(tflm_stubs, tmp_path, separate=False)
    assert calls == {
        "allocator_on_tensor_arena": 1, "allocator_on_variables_arena": 0,
        "allocator_size": out.arena_size, "variables_count": 2,
        "interpreter_model_is_g_model": 1, "interpreter_over_the_allocator": 1,
        "interpreter_arena_is_tensor_arena": 0, "interpreter_size": 0,
        "interpreter_has_variables": 1}


@pytest.mark.skipif(GXX is None, reason="needs g++")
def test_create_interpreter_in_esphome_layout(tflm_stubs: Path, tmp_path: Path) -> None:
    out = export_model(wake_word(), target="cortex-m4", name="ww", separate_variables=True,
                       max_resource_variables=20)
    out.write(tmp_path)
    layout = allocate_model(read_model(wake_word()), target="cortex-m4",
                            separate_variables=True, max_resource_variables=20)
    assert out.arena_size == layout.min_arena
    assert out.variables_arena == variables_arena("cortex-m4", 20).min
    assert f"constexpr unsigned int kVariablesArenaSize = {out.variables_arena};" in out.header
    calls = _build_and_run(tflm_stubs, tmp_path, separate=True)
    assert calls == {
        "allocator_on_tensor_arena": 0, "allocator_on_variables_arena": 1,
        "allocator_size": out.variables_arena, "variables_count": 20,
        "interpreter_model_is_g_model": 1, "interpreter_over_the_allocator": 0,
        "interpreter_arena_is_tensor_arena": 1, "interpreter_size": out.arena_size,
        "interpreter_has_variables": 1}


def test_models_without_variables_export_as_before() -> None:
    from small_models import hello_world_like

    out = export_model(hello_world_like(2), target="cortex-m4")
    assert out.resource_variables == 0
    assert "CreateInterpreter" not in out.header + out.source
    assert "micro_resource_variable.h" not in out.header
    with pytest.raises(BuildError, match="no resource variables"):
        export_model(hello_world_like(2), target="cortex-m4", separate_variables=True)
