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
    (["--repeat", "2"], "auto"),
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
