"""Cortex-M targets carry TFLM's ``TARGET_ARCH`` names with the float ABI, FPU and DSP/MVE
extensions TFLM's ``tools/make/targets/cortex_m_generic_makefile.inc`` builds them with
(issue 19, item 1).

The facts below are read from that makefile (``FLOAT``, ``GCC_TARGET_ARCH``, ``-mfpu``) and from
what Debian's arm-none-eabi-gcc 12.2.1 predefines for each resulting flag set
(``__ARM_FP``/``__SOFTFP__``, ``__ARM_FEATURE_DSP``, ``__ARM_FEATURE_MVE``), not from tinyarena.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tinyarena.arena import allocate_model
from tinyarena.arena.targets import PROFILES, get_target
from tinyarena.cli import main
from tinyarena.model import read_model

from small_models import hello_world_like

SHARED_MODELS = Path(__file__).resolve().parents[3] / "shared" / "models"

# TARGET_ARCH -> (-mfloat-abi, FP instructions used, __ARM_FEATURE_DSP, __ARM_FEATURE_MVE)
TFLM_ARCHS = {
    "cortex-m0": ("soft", False, False, False),
    "cortex-m0plus": ("soft", False, False, False),
    "cortex-m3": ("soft", False, False, False),
    "cortex-m4": ("soft", False, True, False),  # -mcpu=cortex-m4+nofp
    "cortex-m4+fp": ("hard", True, True, False),
    "cortex-m4+sfp": ("softfp", True, True, False),
    "cortex-m7": ("soft", False, True, False),  # -mcpu=cortex-m7+nofp
    "cortex-m7+fp": ("hard", True, True, False),
    "cortex-m33": ("hard", True, True, False),
    "cortex-m33+nodsp": ("soft", False, False, False),
    "cortex-m55": ("hard", True, True, True),
    "cortex-m55+nofp": ("softfp", False, True, True),  # FLOAT forced to softfp; MVE integer
    "cortex-m55+nodsp+nofp": ("softfp", False, False, False),  # GCC's +nodsp drops MVE too
    "cortex-m85": ("hard", True, True, True),
}


@pytest.mark.parametrize("arch", sorted(TFLM_ARCHS))
def test_every_tflm_target_arch_is_a_target_built_as_tflm_builds_it(arch: str) -> None:
    abi, fp, dsp, mve = TFLM_ARCHS[arch]
    profile = get_target(arch)
    assert profile.kernel_set == "cmsis-nn"
    assert profile.cmsis_nn_isa == ("mve" if mve else "dsp" if dsp else "plain")
    assert profile.float_fma is fp  # GCC fuses a*b+c only where FP instructions are used
    # newlib's multilib: fdlibm expf without an FPU, fused with a single-precision one, the
    # double-based expf with a double-precision one (tests/kernels/test_target_arithmetic.py)
    double = arch.startswith(("cortex-m7", "cortex-m55", "cortex-m85"))
    assert profile.libm == ("newlib-fdlibm" if not fp else "newlib" if double
                            else "newlib-fdlibm-fma")
    header = profile.header()
    assert f"float ABI {abi}" in header
    assert ("no FPU" in header) is not fp
    assert ("MVE" in header) is mve and ("no DSP" in header) is (not dsp)


def test_only_renamed_meanings_carry_a_note(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    """cortex-m4 and cortex-m7 meant the FPU builds before; every output says they changed,
    and the names whose meaning did not change say nothing."""
    noted = {name for name, p in PROFILES.items() if p.note}
    assert noted == {"cortex-m4", "cortex-m7"}
    model = tmp_path / "fc.tflite"
    model.write_bytes(hello_world_like(2))
    assert main(["size", str(model), "--target", "cortex-m4"]) == 0
    out = capsys.readouterr().out
    assert "note: target cortex-m4:" in out and "cortex-m4+fp" in out
    assert main(["size", str(model), "--target", "cortex-m4+fp"]) == 0
    assert "note:" not in capsys.readouterr().out


def test_fp_and_soft_float_builds_of_a_core_need_the_same_arena() -> None:
    """The float ABI changes arithmetic, not struct layout or CMSIS-NN's buffers."""
    model = read_model(hello_world_like(2))
    for soft, hard in (("cortex-m4", "cortex-m4+fp"), ("cortex-m7", "cortex-m7+fp"),
                       ("cortex-m55+nofp", "cortex-m55")):
        a = allocate_model(model, target=soft)
        b = allocate_model(model, target=hard)
        assert (a.head, a.tail, a.min_arena) == (b.head, b.tail, b.min_arena)


@pytest.mark.parametrize("name", ["person_detect.tflite", "micro_speech_quantized.tflite",
                                  "kws_ref_model.tflite", "keyword_scrambled.tflite"])
def test_a_no_dsp_m33_sizes_as_the_m3(name: str) -> None:
    """Measured on TFLM built for a no-DSP Cortex-M33 in QEMU (issue 19): it equals the
    Cortex-M3 build on 55/55 models, while the DSP M33 needs more on 13 (v2_alexa 18,240
    against 16,304)."""
    path = SHARED_MODELS / name
    if not path.is_file():
        pytest.skip(f"../shared/models/{name} is not present")
    model = read_model(path.read_bytes())
    nodsp = allocate_model(model, target="cortex-m33+nodsp")
    m3 = allocate_model(model, target="cortex-m3")
    assert (nodsp.head, nodsp.tail, nodsp.min_arena) == (m3.head, m3.tail, m3.min_arena)


def test_targets_json_names_the_float_build(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["targets", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["targets"]}
    assert rows["cortex-m4"]["float_build"].startswith("float ABI soft")
    assert rows["host-x64"]["float_build"] is None
