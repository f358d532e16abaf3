"""The math and detection operators size on every target profile (their structs are in each
profile's table), and their per-op tail bytes follow the profile's struct sizes. The sizes were
taken from the C layouts (host-x64 also checked against the wheel in each op's test module;
arm32 values checked once with arm-none-eabi-gcc on replicas of the structs)."""

from __future__ import annotations

import numpy as np
import pytest
from flatbuffers import flexbuffers

from tinyarena.arena.allocator import allocate_model
from tinyarena.arena.targets import PROFILES, get_target
from tinyarena.builder import ModelBuilder
from tinyarena.model import read_model


def one_op(op: str, n_in: int, dtype: str, shape: tuple[int, ...] = (2, 4), **kw: object) -> bytes:
    b = ModelBuilder()
    q = {"scale": 0.0625, "zero_point": 127} if op == "LOG_SOFTMAX" and dtype == "int8" else \
        ({"scale": 0.1, "zero_point": 0} if dtype in ("int8", "int16") else {})
    xs = [b.add_input(f"x{i}", shape, dtype, **q) for i in range(n_in)]
    y = b.add_tensor("y", shape, dtype, **q)
    b.add_operator(op, xs, [y], **kw)
    b.mark_output(y)
    return b.build()


def models() -> dict[str, bytes]:
    ms = {f"{op}-{dt}": one_op(op, n, dt) for op, n, dt in [
        ("NEG", 1, "float32"), ("FLOOR", 1, "float32"), ("CEIL", 1, "float32"),
        ("ROUND", 1, "float32"), ("EXP", 1, "float32"), ("DIV", 2, "int8"),
        ("SQUARED_DIFFERENCE", 2, "int8"), ("FLOOR_DIV", 2, "float32"),
        ("FLOOR_MOD", 2, "float32"), ("LOGICAL_AND", 2, "bool"), ("LOGICAL_OR", 2, "bool"),
        ("PRELU", 2, "int8"), ("ELU", 1, "int8"), ("L2_NORMALIZATION", 1, "int8"),
        ("ADD_N", 3, "int8"), ("ADD_N", 2, "float32"), ("LOG_SOFTMAX", 1, "int8"),
        ]}
    ms["BATCH_MATMUL-float32"] = one_op("BATCH_MATMUL", 2, "float32", (4, 4))
    ms["BATCH_MATMUL-int8-adj"] = one_op("BATCH_MATMUL", 2, "int8", (4, 4), adj_x=True)
    ms["L2_POOL_2D"] = one_op("L2_POOL_2D", 1, "float32", (1, 4, 4, 2), padding="SAME",
                              stride_w=1, stride_h=1, filter_width=2, filter_height=2)
    b = ModelBuilder()
    x = b.add_input("x", (1, 1, 1, 4), "int8", scale=0.1, zero_point=0)
    y = b.add_tensor("y", (1, 5, 1, 4), "int8", scale=0.1, zero_point=0)
    b.add_operator("CIRCULAR_BUFFER", [x], [y], custom_options=flexbuffers.Dumps({"cycles_max": 1}))
    b.mark_output(y)
    ms["CIRCULAR_BUFFER"] = b.build()
    b = ModelBuilder()
    enc = b.add_input("enc", (1, 8, 4), "float32")
    cls = b.add_input("cls", (1, 8, 3), "float32")
    anc = b.add_constant("anc", np.full((8, 4), 0.5, np.float32))
    outs = [b.add_tensor(n, s, "float32") for n, s in
            (("b", (1, 3, 4)), ("c", (1, 3)), ("s", (1, 3)), ("n", (1,)))]
    opts = {"max_detections": 3, "max_classes_per_detection": 1, "num_classes": 2,
            "nms_score_threshold": 0.5, "nms_iou_threshold": 0.5, "y_scale": 1.0,
            "x_scale": 1.0, "h_scale": 1.0, "w_scale": 1.0}
    b.add_operator("TFLite_Detection_PostProcess", [enc, cls, anc], outs,
                   custom_options=flexbuffers.Dumps(opts))
    for o in outs:
        b.mark_output(o)
    ms["DETECTION_POSTPROCESS"] = b.build()
    return ms


MODELS = models()


@pytest.mark.parametrize("target", sorted(PROFILES))
@pytest.mark.parametrize("name", sorted(MODELS))
def test_sizes_on_every_profile(name: str, target: str) -> None:
    layout = allocate_model(read_model(MODELS[name]), target=target)
    assert layout.total > 0


# Replicas of the kernels' OpData structs, field by field from TFLM's headers (types.h
# ArithmeticParams, batch_matmul.h, log_softmax.cc, detection_postprocess.cc, ...).
_C_STRUCTS = {
    "OpDataSquaredDifference": "struct { bool rb; struct { uint8_t cat; int32_t o1, o2, oo, om;"
                               " int os, ls; int32_t m1; int s1; int32_t m2; int s2; int32_t qmin,"
                               " qmax; float fmin, fmax; int64_t lmin, lmax; int16_t smin, smax;"
                               " int shape[5]; } p; }",
    "PreluParams": "struct { int32_t a, b, c, d; int e; int32_t f; int g; }",
    "LogSoftmaxOpData": "struct { int32_t a, b, c, d; int diff_min; size_t outer, depth; }",
    "QuantizationOpDataBatchMatmul": "struct { int32_t m; int s; int32_t a, b, c, d, e; }",
    "OpDataBatchMatmul": "struct { void *q, *l, *r; bool a, b, c; }",
    "OpDataDetectionPostProcess": "struct { int a, b, c; float d, e; int f; bool g;"
                                  " struct { float y, x, h, w; } sv; int idx[11];"
                                  " struct { float scale; int32_t zp; } q[3]; }",
    "OpDataAddN": "struct { int32_t a, b, c, d, e, f; int g, h, i, j; }",
    "OpDataCircularBuffer": "struct { int a, b; }",
    "L2NormalizationParams": "struct { int32_t zp; }",
    "OpDataElu": "struct { int8_t table[256]; }",
}
_COMPILERS = {"host-x64": ["gcc"],
              "arm32": ["arm-none-eabi-gcc", "-mthumb", "-mcpu=cortex-m4"],
              "arm32-short-enums": ["arm-none-eabi-gcc", "-mthumb", "-mcpu=cortex-m4",
                                    "-fshort-enums"]}


@pytest.mark.parametrize("target", sorted(_COMPILERS))
def test_opdata_sizes_match_the_c_layout(target: str, tmp_path) -> None:
    """sizeof of each replica, compiled for the profile's ABI, equals the profile's table."""
    import shutil
    import subprocess

    cc = _COMPILERS[target]
    nm = "arm-none-eabi-nm" if cc[0].startswith("arm") else "nm"
    if shutil.which(cc[0]) is None or shutil.which(nm) is None:
        pytest.skip(f"{cc[0]} is not installed")
    src = tmp_path / "sizes.c"
    lines = ["#include <stdint.h>", "#include <stddef.h>", "#include <stdbool.h>"]
    lines += [f"char size_{name}[sizeof({decl})];" for name, decl in _C_STRUCTS.items()]
    src.write_text("\n".join(lines) + "\n")
    obj = tmp_path / "sizes.o"
    subprocess.run([*cc, "-fno-common", "-c", str(src), "-o", str(obj)], check=True)
    table = subprocess.run([nm, "-S", str(obj)], check=True, capture_output=True,
                           text=True).stdout
    sizes = {fields[3][len("size_"):]: int(fields[1], 16)
             for fields in (line.split() for line in table.splitlines()) if len(fields) == 4}
    profile = get_target(target)
    assert sizes == {name: profile.sizeof(name) for name in _C_STRUCTS}
