"""The whole footprint (issue 22): measured code sizes, ``size``'s ``footprint`` and ``fit``.

The code sizes are measured data (``code_sizes.json``); these tests check the sharing model
against firmwares measured separately from the ones it was derived from (op-set firmwares and
firmwares built from ``tinyarena export``'s output), and the CLI against facts outside
tinyarena: file sizes, the board table's datasheet figures, ``min_arena``.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tinyarena.cli import main
from tinyarena.footprint import (
    find_code_sizes,
    load_code_sizes,
    model_footprint,
)
from tinyarena.footprint.boards import BOARDS, get_board

MEASURED = [("cortex-m0plus", "reference"), ("cortex-m0plus", "cmsis-nn"),
            ("cortex-m4", "reference"), ("cortex-m4", "cmsis-nn"),
            ("cortex-m55", "reference"), ("cortex-m55", "cmsis-nn"),
            ("cortex-m33", "reference"), ("cortex-m33", "cmsis-nn"),
            ("cortex-m7+fp", "reference"), ("cortex-m7+fp", "cmsis-nn")]
# boards whose build is one of those
MEASURED_BOARDS = ["corstone-300", "nrf5340dk", "stm32f746g-disco"]
REQUIRED_BOARDS = {"arduino-nano-33-ble", "pico", "stm32f746g-disco", "nucleo-l4r5zi",
                   "nrf5340dk", "esp32-s3-devkitc", "esp32-s3-devkitc-psram", "corstone-300",
                   "sparkfun-edge"}


def _data() -> dict:
    path = Path(__file__).resolve().parents[2] / "src/tinyarena/footprint/code_sizes.json"
    data: dict = json.loads(path.read_text())
    return data


def _run(capsys: pytest.CaptureFixture[str], argv: list[str]) -> tuple[int, str]:
    code = main(argv)
    return code, capsys.readouterr().out


def test_every_build_says_what_it_was_measured_with() -> None:
    data = _data()
    prov = data["provenance"]
    assert "12.2" in prov["toolchain"] and prov["tflm_commit"] == "90b983c2"
    assert prov["cmsis_nn_commit"] == "4ab83cc3"
    keys = {(b["target_arch"][0], b["kernels"], b["libc"]) for b in data["builds"]}
    for target, kernels in MEASURED:
        for libc in ("full", "nano"):
            assert (target, kernels, libc) in keys
    for b in data["builds"]:
        assert b["compiler_flags"] and b["link_flags"] and b["build"] in ("default", "release")
        assert ("TF_LITE_STRIP_ERROR_STRINGS" in b["compiler_flags"]) == (b["build"] == "release")
        assert ("nano.specs" in b["link_flags"]) == (b["libc"] == "nano")


def test_groups_rebuild_every_single_op_firmware() -> None:
    """Framework + the groups naming an op = that op's firmware minus the baseline, byte for
    byte: the groups partition what the map attributes, the rest is the op's own."""
    for build, sizes in zip(_data()["builds"], load_code_sizes()):
        base = build["measured"]["baseline"]
        for op, size in build["measured"]["firmwares"].items():
            if op == "EMPTY":
                continue
            assert sizes.code([op])[0] == (size["text"] + size["data"]
                                           - base["text"] - base["data"])


def test_shared_code_is_counted_once() -> None:
    """Per-op sizes are not additive: on CMSIS-NN, CONV_2D and DEPTHWISE_CONV_2D share code."""
    sizes = find_code_sizes("cortex-m4", "cmsis-nn", "full", "default")
    assert not isinstance(sizes, str)
    both = sizes.code(["CONV_2D", "DEPTHWISE_CONV_2D"])[0] - sizes.framework_flash
    alone = sum(sizes.code([op])[0] - sizes.framework_flash
                for op in ("CONV_2D", "DEPTHWISE_CONV_2D"))
    assert both < alone


def test_model_predicts_held_out_op_sets_within_5_percent() -> None:
    """Op-set firmwares (the shared models' resolvers, all ops at once) were linked and
    measured apart from the single-op firmwares the groups come from."""
    for build, sizes in zip(_data()["builds"], load_code_sizes()):
        for v in build["validation"]["op_sets"]:
            flash, ram = sizes.code(v["ops"])
            assert abs(flash - v["measured"]["flash"]) <= 0.05 * v["measured"]["flash"], v
            # RAM as ram.static states it: with the interpreter and resolver<N> objects
            objects = sizes.interpreter_bytes + sizes.resolver_bytes(len(v["ops"]))
            static = v["measured"]["ram"] + objects
            assert abs(ram + objects - static) <= 0.05 * static, v


def test_model_predicts_exported_firmwares_within_5_percent() -> None:
    """person_detect and micro_speech firmwares built from ``export``'s .h/.cc: TFLM's part
    is the firmware minus the same firmware without TFLM (model array and arena kept). Their
    MicroInterpreter is on main's stack, so RAM is compared without it."""
    seen = 0
    for build, sizes in zip(_data()["builds"], load_code_sizes()):
        for v in build["validation"]["exports"]:
            fp = model_footprint(sizes, v["ops"], 0, 0)
            assert not isinstance(fp, str)
            measured = v["measured"]
            assert abs(fp.code_bytes - measured["flash"]) <= 0.05 * measured["flash"], v
            ram = fp.static_bytes - fp.interpreter_bytes
            assert abs(ram - measured["ram"]) <= 0.05 * measured["ram"], v
            seen += 1
    assert seen >= 2 * len(MEASURED) * 2


def test_nano_is_smaller_than_full_newlib() -> None:
    for target, kernels in MEASURED:
        full = find_code_sizes(target, kernels, "full", "default")
        nano = find_code_sizes(target, kernels, "nano", "default")
        assert not isinstance(full, str) and not isinstance(nano, str)
        assert nano.framework_flash < full.framework_flash


@pytest.mark.parametrize("target,kernels", MEASURED)
@pytest.mark.parametrize("name", ["person_detect.tflite", "micro_speech_quantized.tflite",
                                  "keyword_scrambled.tflite", "trained_lstm_int8.tflite"])
def test_size_json_footprint_adds_up(capsys: pytest.CaptureFixture[str], shared_models: Path,
                                     target: str, kernels: str, name: str) -> None:
    path = shared_models / name
    code, out = _run(capsys, ["size", str(path), "--target", target, "--kernels", kernels,
                              "--json"])
    assert code == 0
    r = json.loads(out)
    fp = r["footprint"]
    assert fp["flash"]["model"] == path.stat().st_size
    assert fp["ram"]["arena"] == r["min_arena"]
    assert fp["flash"]["total"] == fp["flash"]["model"] + fp["flash"]["code"]
    assert fp["ram"]["total"] == fp["ram"]["arena"] + fp["ram"]["static"]
    assert fp["ram"]["static"] == sum(fp["ram"]["static_parts"].values())
    assert fp["flash"]["code"] > 10_000 and fp["ram"]["static"] > 0
    assert (fp["assumes"]["kernels"], fp["assumes"]["libc"]) == (kernels, "full")


def test_size_text_names_what_each_part_is(capsys: pytest.CaptureFixture[str],
                                           shared_models: Path) -> None:
    code, out = _run(capsys, ["size", str(shared_models / "person_detect.tflite"), "--target",
                              "cortex-m4", "--libc", "nano"])
    assert code == 0
    assert "newlib-nano" in out and "MicroInterpreter" in out and "g_model" in out


def test_size_says_unmeasured_targets_are_unmeasured(capsys: pytest.CaptureFixture[str],
                                                     shared_models: Path) -> None:
    code, out = _run(capsys, ["size", str(shared_models / "person_detect.tflite"),
                              "--target", "cortex-m7", "--json"])
    assert code == 0
    r = json.loads(out)
    assert r["footprint"] is None and "not measured" in r["footprint_note"]


def test_host_target_has_no_footprint(capsys: pytest.CaptureFixture[str],
                                      shared_models: Path) -> None:
    code, out = _run(capsys, ["size", str(shared_models / "person_detect.tflite"), "--json"])
    assert code == 0 and "footprint" not in json.loads(out)


def test_release_build_where_measured_only(capsys: pytest.CaptureFixture[str],
                                           shared_models: Path) -> None:
    """TFLM's release build (no DebugLog vsnprintf, no assertions) is measured like the default
    one; a build that was not measured says so."""
    model = str(shared_models / "person_detect.tflite")
    sizes = {}
    for build in ("default", "release"):
        code, out = _run(capsys, ["size", model, "--target", "cortex-m4", "--build", build,
                                  "--json"])
        assert code == 0
        sizes[build] = json.loads(out)["footprint"]
        assert sizes[build]["assumes"]["build"] == build
    assert sizes["release"]["flash"]["code"] < sizes["default"]["flash"]["code"]
    for target, kernels in MEASURED:
        assert not isinstance(find_code_sizes(target, kernels, "nano", "release"), str)
    why = find_code_sizes("cortex-m7", "cmsis-nn", "full", "release")
    assert isinstance(why, str) and "not measured" in why


def test_board_table_has_every_board_with_a_source() -> None:
    assert REQUIRED_BOARDS <= {b.name for b in BOARDS}
    for b in BOARDS:
        assert b.ram > 0 and b.flash > 0 and b.source and b.target and b.core
    nano = get_board("arduino-nano-33-ble")
    pico = get_board("pico")
    assert nano is not None and (nano.ram, nano.flash) == (256 * 1024, 1024 * 1024)
    assert pico is not None and (pico.ram, pico.flash) == (264 * 1024, 2 * 1024 * 1024)


def test_fit_boards_lists_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(capsys, ["fit", "--boards", "--json"])
    assert code == 0
    assert REQUIRED_BOARDS <= {r["name"] for r in json.loads(out)["boards"]}


@pytest.mark.parametrize("board", ["arduino-nano-33-ble", "pico"])
def test_person_detect_fits(capsys: pytest.CaptureFixture[str], shared_models: Path,
                            board: str) -> None:
    code, out = _run(capsys, ["fit", str(shared_models / "person_detect.tflite"), "--board",
                              board, "--json"])
    r = json.loads(out)
    assert code == 0 and r["verdict"] == "fits"
    for memory in ("ram", "flash"):
        m = r[memory]
        assert m["headroom"] == m["capacity"] - m["need"] > 0
    assert r["ram"]["need"] == r["footprint"]["ram"]["total"]


def test_mobilenet_does_not_fit_the_nano(capsys: pytest.CaptureFixture[str],
                                         shared_models: Path) -> None:
    model = shared_models / "mobilenet_v2_quantized_1x3x224x224.tflite"
    code, out = _run(capsys, ["fit", str(model), "--board", "arduino-nano-33-ble"])
    assert code == 3
    assert "DOES NOT FIT" in out and "OVER" in out


def test_fit_never_guesses_unmeasured_code(capsys: pytest.CaptureFixture[str],
                                           shared_models: Path) -> None:
    """TARGET_ARCH=cortex-m7 (soft-float) has no code sizes measured, so the flash verdict on a
    small model is unknown (exit 4), not a guess."""
    code, out = _run(capsys, ["fit", str(shared_models / "micro_speech_quantized.tflite"),
                              "--target", "cortex-m7", "--ram-budget", "320K",
                              "--flash-budget", "1M", "--json"])
    r = json.loads(out)
    assert code == 4 and r["verdict"] == "unknown" and r["footprint"] is None
    assert r["flash"]["need"] is None and r["flash"]["known"] == (
        shared_models / "micro_speech_quantized.tflite").stat().st_size
    assert any("not measured" in n for n in r["notes"])


def test_fit_custom_budget(capsys: pytest.CaptureFixture[str], shared_models: Path) -> None:
    model = shared_models / "person_detect.tflite"
    code, out = _run(capsys, ["fit", str(model), "--target", "cortex-m4", "--ram-budget", "64K",
                              "--flash-budget", "1M", "--json"])
    r = json.loads(out)
    assert code == 3 and r["ram"]["fits"] is False and r["flash"]["fits"] is True
    assert r["ram"]["capacity"] == 65536


def test_fit_usage_errors(capsys: pytest.CaptureFixture[str], shared_models: Path) -> None:
    model = str(shared_models / "person_detect.tflite")
    assert main(["fit", model, "--board", "no-such-board"]) == 2
    assert "unknown board" in capsys.readouterr().err
    assert main(["fit", model]) == 2
    assert main(["fit", model, "--ram-budget", "64K", "--flash-budget", "1M"]) == 2


def test_check_gates_on_the_footprint(capsys: pytest.CaptureFixture[str],
                                      shared_models: Path) -> None:
    """The arena fits 96K, the whole flash (model 300,568 bytes + code) does not fit 300K."""
    model = str(shared_models / "person_detect.tflite")
    code, out = _run(capsys, ["check", model, "--budget", "96K", "--target", "cortex-m4",
                              "--flash-budget", "300K", "--json"])
    r = json.loads(out)["models"][0]
    assert code == 3 and r["over_by"] == 0 and r["footprint"]["flash_over"] is True
    code, out = _run(capsys, ["check", model, "--budget", "96K", "--target", "cortex-m4",
                              "--flash-budget", "1M", "--ram-budget", "96K", "--json"])
    assert code == 0
    code = main(["check", model, "--budget", "96K", "--target", "cortex-m7", "--ram-budget",
                 "96K"])
    assert code == 1 and "not measured" in capsys.readouterr().err


@pytest.mark.parametrize("board", ["esp32-s3-devkitc"])
def test_boards_without_code_sizes_never_fit_by_guess(capsys: pytest.CaptureFixture[str],
                                                      shared_models: Path, board: str) -> None:
    """ESP32-S3 (esp-nn) code sizes are not measured: the flash verdict is unknown, whatever
    this tinyarena knows of its arena."""
    code, out = _run(capsys, ["fit", str(shared_models / "micro_speech_quantized.tflite"),
                              "--board", board, "--json"])
    r = json.loads(out)
    assert code == 4 and r["verdict"] == "unknown" and r["footprint"] is None
    assert r["flash"]["need"] is None and r["notes"]


@pytest.mark.parametrize("board", MEASURED_BOARDS)
def test_boards_with_measured_code_get_a_verdict(capsys: pytest.CaptureFixture[str],
                                                 shared_models: Path, board: str) -> None:
    """person_detect (300,568 bytes, an 82 KB arena) fits each of these boards with room to
    spare; the code is the measured build of the board's TARGET_ARCH and core."""
    b = get_board(board)
    assert b is not None
    path = shared_models / "person_detect.tflite"
    code, out = _run(capsys, ["fit", str(path), "--board", board, "--json"])
    r = json.loads(out)
    assert code == 0 and r["verdict"] == "fits"
    fp = r["footprint"]
    assert fp["assumes"]["core"] == b.target.split("+")[0]
    assert fp["assumes"]["kernels"] == b.kernels
    assert r["flash"]["need"] == path.stat().st_size + fp["flash"]["code"]
    assert r["ram"]["need"] == fp["ram"]["arena"] + fp["ram"]["static"]
    assert r["flash"]["need"] < b.flash and r["ram"]["need"] < b.ram
