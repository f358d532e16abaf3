"""ESP32 targets and the esp-nn kernel set (issue 18): the profiles' layout against the
esp-oracle's measured ``provenance.abi``, the esp-nn usage errors (exit 2, naming the known
versions), ``targets --json``, the change lines of ``size`` over several builds, and a model
with an op esp-tflite-micro's TFLM lacks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from esp_oracle import ESP_ORACLE

from tinyarena.arena.targets import ESP_NN_VERSIONS, PROFILES, get_target
from tinyarena.cli import main
from tinyarena.errors import UnsupportedOpError, UsageError

CHIPS = {"esp32": "generic", "esp32s3": "esp32s3", "esp32p4": "esp32p4", "esp32c3": "generic",
         "esp32c6": "generic"}


def test_chips_and_their_esp_nn_dispatch() -> None:
    for chip, dispatch in CHIPS.items():
        p = PROFILES[chip]
        assert (p.kernel_set, p.esp_nn_dispatch, p.esp_nn_version, p.tflm_commit,
                p.default_allocator, p.pointer_size, p.short_enums) == (
            "esp-nn", dispatch, "1.2.3", "09656354", "production", 4, False)
        assert "esp-nn 1.2.3" in p.header() and "TFLM 09656354" in p.header()


def test_struct_sizes_equal_the_measured_xtensa_layout() -> None:
    if not ESP_ORACLE.is_file():
        pytest.skip("../shared/esp-oracle is not present")
    abi = json.loads(ESP_ORACLE.read_text())["provenance"]["abi"]
    measured = abi["sizeof_alignof_this_build"]
    for chip in CHIPS:
        p = PROFILES[chip]
        for name, (size, _align) in measured.items():
            if p.has(name):
                assert p.sizeof(name) == size, (chip, name)
        # esp_nn NodeData: OpDataConv + int = 60; SoftmaxParams + int = 64 (the oracle's note)
        assert (p.sizeof("EspNnNodeDataConv"), p.sizeof("EspNnNodeDataSoftmax")) == (60, 64)
        assert "60 bytes" in abi["esp_nn_node_data"] and "= 64" in abi["esp_nn_node_data"]


def test_esp_nn_version_errors_name_the_known_versions() -> None:
    with pytest.raises(UsageError, match="1.1.2, 1.2.0, 1.2.3"):
        get_target("esp32s3", None, "1.3.0")
    with pytest.raises(UsageError, match="no ESP-NN build"):
        get_target("cortex-m4", None, "1.2.0")
    with pytest.raises(UsageError, match="links no"):
        get_target("esp32s3", "reference", "1.2.0")
    with pytest.raises(UsageError, match="esp32"):
        get_target("cortex-m4", "esp-nn")
    assert get_target("esp32s3", "reference").kernels == "reference"
    assert get_target("esp32s3", None, "1.2.0").kernels == "esp-nn 1.2.0 (ESP32-S3 dispatch)"


@pytest.mark.parametrize("argv,words", [
    (["size", "m.tflite", "--target", "esp32s3", "--esp-nn", "9.9"], "invalid choice"),
    (["size", "m.tflite", "--target", "cortex-m4", "--esp-nn", "1.2.0"], "no ESP-NN build"),
    (["size", "m.tflite", "--esp-nn", "1.2.0"], "host-x64 has no ESP-NN"),
    (["size", "m.tflite", "--target", "esp32", "--kernels", "reference", "--esp-nn", "1.2.3"],
     "links no ESP-NN"),
    (["run", "m.tflite", "--target", "esp32", "--esp-nn", "1.2.0", "--esp-nn", "1.2.3"],
     "give one --esp-nn"),
])
def test_esp_nn_usage_errors_exit_2(argv: list[str], words: str,
                                    capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert words in err and "1.1.2" in err and "1.2.3" in err


def test_targets_json_lists_esp_nn_versions(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["targets", "--json"]) == 0
    rows = {r["name"]: r for r in json.loads(capsys.readouterr().out)["targets"]}
    for chip, dispatch in CHIPS.items():
        assert rows[chip]["esp_nn_versions"] == list(ESP_NN_VERSIONS)
        assert (rows[chip]["kernels"], rows[chip]["esp_nn_dispatch"]) == ("esp-nn", dispatch)
    assert "esp_nn_versions" not in rows["cortex-m4"]


def _conv_model(tmp_path: Path) -> Path:
    """One int8 CONV_2D, 16x16x3 -> 16x16x8, 3x3 SAME: the S3 asks esp-nn for scratch, the
    plain ESP32 for none."""
    import numpy as np

    from tinyarena.builder import ModelBuilder

    b = ModelBuilder()
    x = b.add_input("x", (1, 16, 16, 3), "int8", scale=0.05, zero_point=-3)
    w = b.add_constant("w", np.ones((8, 3, 3, 3), np.int8), scale=np.full(8, 0.01, np.float32),
                       zero_point=0, quantized_dimension=0)
    bias = b.add_constant("b", np.zeros(8, np.int32), scale=np.full(8, 0.0005, np.float32),
                          zero_point=0)
    y = b.add_tensor("y", (1, 16, 16, 8), "int8", scale=0.1, zero_point=0)
    b.add_operator("CONV_2D", [x, w, bias], [y], padding="SAME", stride_w=1, stride_h=1)
    b.mark_output(y)
    path = tmp_path / "conv.tflite"
    path.write_bytes(b.build())
    return path


def test_size_names_the_scratch_that_moved(tmp_path: Path,
                                           capsys: pytest.CaptureFixture[str]) -> None:
    model = _conv_model(tmp_path)
    from tinyarena.kernels.esp_nn import _scratch_sizes as ss

    # esp_nn_get_conv_scratch_size_esp32s3 (1.2.3): filter row 3*3 = 9 < 16 bytes and window
    # 27 >= 16, the im2col path: filter sums 4*8 + 16, the filter copy 8 * 32 (window rounded
    # to 16), + 16, one window 32, and the 64-byte margin
    s3 = 4 * 8 + 16 + 8 * 32 + 16 + 32 + 64
    assert ss.CONV[("esp32s3", "1.2.3")](ss.Dims(16, 16, 3), ss.Dims(3, 3, 3),
                                         ss.Dims(16, 16, 8), ss.ConvScratchParams(1, 1, 1, 1)) == s3
    assert main(["size", str(model), "--target", "esp32", "--target", "esp32s3"]) == 0
    out = capsys.readouterr().out
    assert "vs esp32 esp-nn 1.2.3 (generic C dispatch)" in out
    assert f"CONV_2D op 0: scratch 0 -> {s3:,} bytes" in out


def test_an_op_the_build_lacks_is_named_with_the_build() -> None:
    import numpy as np

    from tinyarena.arena import allocate_model
    from tinyarena.builder import ModelBuilder

    b = ModelBuilder()
    x = b.add_input("x", (1, 3, 4, 4, 2), "float32")
    w = b.add_constant("w", np.ones((1, 1, 1, 2, 3), np.float32))
    y = b.add_tensor("y", (1, 3, 4, 4, 3), "float32")
    b.add_operator("CONV_3D", [x, w], [y], padding="VALID", stride_d=1, stride_w=1, stride_h=1)
    b.mark_output(y)
    with pytest.raises(UnsupportedOpError, match="CONV_3D .*esp32s3 build, TFLM 09656354"):
        allocate_model(b.build(), target="esp32s3")


def test_report_has_a_column_per_release_and_says_why(tmp_path: Path,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    model = _conv_model(tmp_path)
    out = tmp_path / "r.html"
    assert main(["report", str(model), "--target", "esp32s3", "--esp-nn", "1.1.2",
                 "--esp-nn", "1.2.3", "--no-optimize", "-o", str(out)]) == 0
    page = out.read_text()
    assert 'data-target="esp32s3 esp-nn 1.1.2"' in page
    assert 'data-target="esp32s3 esp-nn 1.2.3"' in page
    assert "why it changed from esp32s3 esp-nn 1.1.2" in page
    from tinyarena.kernels.esp_nn import _scratch_sizes as ss

    args = (ss.Dims(16, 16, 3), ss.Dims(3, 3, 3), ss.Dims(16, 16, 8),
            ss.ConvScratchParams(1, 1, 1, 1))
    before, after = ss.CONV[("esp32s3", "1.1.2")](*args), ss.CONV[("esp32s3", "1.2.3")](*args)
    assert before != after
    assert (f'data-key="change.scratch.0.from">{before:,}<' in page
            and f'data-key="change.scratch.0.to">{after:,}<' in page)


def test_optimize_for_an_esp_nn_build_uses_the_portable_rules() -> None:
    """ESP-NN's loop orders are not proven for any overlap: optimizing for esp32s3 plans with
    views only (the portable rules, under the name esp-nn so that the output says why)."""
    from tinyarena.optimize.safety import ESP_NN, PORTABLE, RULE_SETS, target_key

    assert target_key(get_target("esp32s3")) == ESP_NN
    rules, portable = RULE_SETS[ESP_NN], RULE_SETS[PORTABLE]
    assert (rules.inplace_ops, rules.partial_ops) == (portable.inplace_ops, portable.partial_ops)
    assert target_key(get_target("esp32s3", "reference")) == "reference"


def test_optimize_sizes_the_esp_nn_release_given(tmp_path: Path,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    model = _conv_model(tmp_path)
    seen = []
    for version in ("1.1.2", "1.2.3"):
        assert main(["optimize", str(model), "--target", "esp32s3", "--esp-nn", version,
                     "-o", str(tmp_path / f"o{version}.tflite"), "--json"]) == 0
        seen.append(json.loads(capsys.readouterr().out)["before"]["min_arena"])
    from tinyarena.arena import allocate_model

    assert seen == [allocate_model(model, target=get_target("esp32s3", None, v)).min_arena
                    for v in ("1.1.2", "1.2.3")]
    assert seen[0] != seen[1]
