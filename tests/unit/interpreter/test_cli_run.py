"""``tinyarena run`` and ``tinyarena demo``."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from interp_models import two_input_add
from tinyarena.cli import main
from tinyarena.examples import stripes
from tinyarena.interpreter.inputs import read_bmp_grayscale


def _model_file(tmp_path: Path) -> Path:
    path = tmp_path / "add.tflite"
    path.write_bytes(two_input_add())
    return path


def test_run_with_npz_input_saves_outputs(tmp_path: Path, capsys) -> None:
    model = _model_file(tmp_path)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 2.0, np.float32)
    np.savez(tmp_path / "in.npz", a=a, b=b)
    out = tmp_path / "out.npz"
    assert main(["run", str(model), "--input", str(tmp_path / "in.npz"), "--output",
                 str(out)]) == 0
    text = capsys.readouterr().out
    assert "invoke:" in text and "[RecordingMicroAllocator] Arena allocation total" in text
    with np.load(out) as saved:
        assert np.array_equal(saved["y"], (a + b) * a)


def test_run_json_with_random_input(tmp_path: Path, capsys) -> None:
    assert main(["run", str(_model_file(tmp_path)), "--json", "--seed", "3"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["input"] == "random (seed 3)"
    (out,) = data["outputs"]
    assert out["shape"] == [2, 3] and out["dtype"] == "float32"
    assert data["allocation"]["total"] == data["allocation"]["head"] + data["allocation"]["tail"]


def test_run_reports_bad_input_as_an_error(tmp_path: Path, capsys) -> None:
    np.save(tmp_path / "x.npy", np.zeros((2, 3), np.float32))
    assert main(["run", str(_model_file(tmp_path)), "--input", str(tmp_path / "x.npy")]) == 1
    assert "2 inputs" in capsys.readouterr().err


def test_bmp_reader_matches_the_file_layout(tmp_path: Path) -> None:
    """A bottom-up 8-bit BMP with a gray palette, written by hand (rows padded to 4 bytes)."""
    width, height = 3, 2
    top_down = np.array([[10, 20, 30], [40, 50, 60]], np.uint8)
    palette = b"".join(bytes([i, i, i, 0]) for i in range(256))
    rows = b"".join(bytes(r) + b"\0" for r in top_down[::-1])  # bottom row first, pad to 4
    offset = 14 + 40 + len(palette)
    header = (b"BM" + (offset + len(rows)).to_bytes(4, "little") + b"\0" * 4
              + offset.to_bytes(4, "little"))
    info = (b"".join(v.to_bytes(4, "little", signed=True) for v in (40, width, height))
            + (1).to_bytes(2, "little") + (8).to_bytes(2, "little") + b"\0" * 24)
    path = tmp_path / "tiny.bmp"
    path.write_bytes(header + info + palette + rows)
    assert np.array_equal(read_bmp_grayscale(path), top_down)


def test_person_detect_in_one_command(shared_models: Path, capsys) -> None:
    model = shared_models / "person_detect.tflite"
    image = shared_models / "testdata" / "person.bmp"
    assert main(["run", str(model), "--input", str(image), "--labels", "no_person,person",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    no_person, person = data["outputs"][0]["dequantized"][0]
    assert person > no_person


@pytest.mark.oracle
def test_demo_runs_and_agrees_with_the_wheel(tmp_path: Path, capsys) -> None:
    saved = tmp_path / "demo.tflite"
    assert main(["demo", "--save", str(saved)]) == 0
    text = capsys.readouterr().out
    assert saved.read_bytes() == stripes.build_model()
    assert "(id=0): size=" in text  # the plan picture
    assert "[RecordingMicroAllocator] Arena allocation head" in text
    assert text.count("TFLM wheel output: identical") == 2
    assert "-> vertical stripes" in text and "-> horizontal stripes" in text


@pytest.mark.parametrize("flags, expected", [
    ([], "numpy"),  # one invoke: numba's import would cost more than it saves
    (["--native", "off", "--repeat", "2"], "numpy"),
    # two invokes of a two-op model save microseconds; loading numba costs ~0.5 s (issue 19)
    (["--repeat", "2"], "numpy"),
    (["--native", "on"], "auto"),
])
def test_run_native_choice_is_reported_and_outputs_agree(tmp_path: Path, capsys,
                                                         flags: list[str], expected: str) -> None:
    """`run --native` picks the kernels, says which ran, and never changes the outputs."""
    from tinyarena.kernels import native

    if flags[:2] == ["--native", "on"] and not native.available():
        assert main(["run", str(_model_file(tmp_path)), "--json", *flags]) != 0
        return
    assert main(["run", str(_model_file(tmp_path)), "--json", "--seed", "1", *flags]) == 0
    data = json.loads(capsys.readouterr().out)
    want = ("compiled" if native.resolve(None) else "numpy") if expected == "auto" else expected
    assert data["invoke_ms"]["kernels"] == want
    assert main(["run", str(_model_file(tmp_path)), "--json", "--seed", "1",
                 "--native", "off"]) == 0
    reference = json.loads(capsys.readouterr().out)
    assert data["outputs"] == reference["outputs"]


def test_run_explains_a_slow_first_build_of_compiled_kernels(capsys) -> None:
    """Only a slow allocation with compiled kernels is explained, on stderr (JSON stays clean)."""
    from tinyarena.cli_run import BUILD_NOTE_SECONDS, _say_if_kernels_were_built

    _say_if_kernels_were_built(True, BUILD_NOTE_SECONDS + 3.0)
    out = capsys.readouterr()
    assert out.out == "" and "building the compiled kernels" in out.err and "5.0 s" in out.err
    _say_if_kernels_were_built(False, 60.0)
    _say_if_kernels_were_built(True, BUILD_NOTE_SECONDS / 2)
    assert capsys.readouterr().err == ""


def test_native_auto_compiles_only_where_the_saving_outweighs_the_build() -> None:
    """Issue 19: --native auto weighs the expected saving (invokes x operators x ~20 us)
    against loading cached kernels (~0.5 s) or building them the first time (~6 s)."""
    from tinyarena.cli_run import (CACHED_LOAD_S, SAVING_PER_OP_INVOKE_S, UNCACHED_BUILD_S,
                                   _native_setting)

    assert UNCACHED_BUILD_S > CACHED_LOAD_S
    break_even = int(CACHED_LOAD_S / SAVING_PER_OP_INVOKE_S)  # operator-invokes
    ops = 31  # person_detect
    few, many = break_even // ops, 2 * break_even // ops
    assert not _native_setting("auto", few, ops, True, True)
    assert _native_setting("auto", many, ops, True, True)
    assert not _native_setting("auto", many, ops, True, False)  # a first build costs more
    assert _native_setting("auto", 100 * many, ops, True, False)
    assert not _native_setting("auto", 100 * many, ops, False, True)  # no numba: numpy
    assert _native_setting("on", 1, 1, True, False) and not _native_setting("off", 10**9, ops,
                                                                             True, True)


def test_native_on_without_numba_names_the_flag(tmp_path: Path, capsys, monkeypatch) -> None:
    from tinyarena.kernels import native

    monkeypatch.setattr(native, "available", lambda: False)
    assert main(["run", str(_model_file(tmp_path)), "--native", "on"]) == 1
    err = capsys.readouterr().err
    assert "--native on needs numba" in err and "--native off" in err and "pip install" in err


def test_run_names_its_target_and_the_host_only_figures(tmp_path: Path, capsys) -> None:
    assert main(["run", str(_model_file(tmp_path)), "--target", "cortex-m4",
                 "--native", "off"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("target cortex-m4 | ") and "cmsis-nn" in lines[0]
    text = "\n".join(lines)
    assert "host time, invoke:" in text and "not the device's time" in text
    assert "host memory of tinyarena's kernels; the device does not need it" in text
    assert "arena on cortex-m4:" in text
    assert main(["run", str(_model_file(tmp_path)), "--target", "cortex-m4", "--native", "off",
                 "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert (data["target"], data["kernel_set"]) == ("cortex-m4", "cmsis-nn")


def test_run_announces_a_first_build_before_it_starts(tmp_path: Path, capsys,
                                                      monkeypatch) -> None:
    """With no compiled kernel cached on the machine, `run --native on` says so before the
    allocation that builds them (on stderr: --json stays parseable)."""
    from tinyarena.kernels import native

    if not native.available():
        pytest.skip("numba is not installed")
    monkeypatch.setattr(native, "cache_is_warm", lambda: False)
    assert main(["run", str(_model_file(tmp_path)), "--native", "on", "--json"]) == 0
    out = capsys.readouterr()
    assert "first build of the compiled kernels" in out.err
    json.loads(out.out)
