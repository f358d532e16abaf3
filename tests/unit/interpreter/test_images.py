"""``tinyarena run --input IMAGE``: PNG/JPEG/BMP, grayscale or RGB, quantized with the input's
scale and zero point, resized only on request; top-k of classifier outputs."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tinyarena import Interpreter
from tinyarena.cli import main
from tinyarena.errors import InterpreterError
from tinyarena.examples import stripes
from tinyarena.interpreter.inputs import load_inputs, quantize_pixels

Image = pytest.importorskip("PIL.Image")


@pytest.fixture(scope="module")
def demo(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("images") / "stripes.tflite"
    path.write_bytes(stripes.build_model())
    return path


def _pixels(vertical: bool) -> np.ndarray:
    """The stripes as 0/255 pixels: the model's input has scale 1/255 and zero point -128
    (pixels in [0, 1]), so quantizing pixel/255 gives pixel - 128 exactly."""
    return (stripes.stripes(vertical).reshape(stripes.SIZE, stripes.SIZE).astype(np.int16)
            + 128).astype(np.uint8)


def _details(demo: Path) -> list[dict]:
    ip = Interpreter(demo)
    ip.allocate_tensors()
    return ip.get_input_details()


@pytest.mark.parametrize("mode", ["L", "RGB"])
def test_png_is_quantized_with_the_inputs_scale_and_zero_point(demo: Path, tmp_path: Path,
                                                               mode: str) -> None:
    for vertical in (True, False):
        path = tmp_path / f"s{vertical}.png"
        Image.fromarray(_pixels(vertical)).convert(mode).save(path)
        (value,) = load_inputs(path, _details(demo))
        assert value.dtype == np.int8
        assert np.array_equal(value, stripes.stripes(vertical))


def test_quantization_rounds_and_saturates() -> None:
    details = {"name": "x", "shape": np.array([1, 4]), "dtype": np.int8,
               "quantization_parameters": {"scales": np.array([0.5], np.float32),
                                           "zero_points": np.array([3], np.int32)}}
    pixels = np.array([0, 51, 153, 255], np.uint8)  # reals -1, -0.6, 0.2, 1 on [-1, 1]
    got = quantize_pixels(pixels, details, (-1.0, 1.0))
    # real / 0.5 = -2, -1.2, 0.4, 2 -> round -2, -1, 0, 2 -> + 3
    assert np.array_equal(got, np.array([[1, 2, 3, 5]], np.int8))
    wide = quantize_pixels(pixels, details, (0.0, 255.0))  # up to 510 + 3: saturates at 127
    assert wide.reshape(-1).tolist() == [3, 105, 127, 127]


def test_size_mismatch_needs_resize(demo: Path, tmp_path: Path) -> None:
    big = np.kron(_pixels(True), np.ones((2, 2), np.uint8))
    path = tmp_path / "big.png"
    Image.fromarray(big).save(path)
    with pytest.raises(InterpreterError, match="--resize"):
        load_inputs(path, _details(demo))
    (value,) = load_inputs(path, _details(demo), resize=True)
    assert value.shape == (1, stripes.SIZE, stripes.SIZE, 1)


def test_run_prints_top_k_for_png_and_jpeg(demo: Path, tmp_path: Path, capsys) -> None:
    labels = ",".join(stripes.LABELS)
    for vertical in (True, False):
        for suffix in (".png", ".jpg"):
            path = tmp_path / f"in{vertical}{suffix}"
            Image.fromarray(_pixels(vertical)).save(path, quality=95)
            assert main(["run", str(demo), "--input", str(path), "--labels", labels,
                         "--json"]) == 0
            output = json.loads(capsys.readouterr().out)["outputs"][0]
            best = output["top_k"][0]
            assert best["label"] == stripes.LABELS[0 if vertical else 1]
            assert [e["rank"] for e in output["top_k"]] == [1, 2]
            if suffix == ".png":  # lossless: exactly the model's output on the stripes
                ip = Interpreter(demo)
                ip.allocate_tensors()
                ip.set_input(stripes.stripes(vertical), 0)
                ip.invoke()
                assert output["values"] == ip.get_output(0).tolist()
    assert main(["run", str(demo), "--input", str(tmp_path / "inTrue.png"), "--top-k",
                 "1"]) == 0
    text = capsys.readouterr().out
    assert "top 1:" in text and "1. class 0" in text


def test_raw_pixels_copy_bytes(demo: Path, tmp_path: Path) -> None:
    path = tmp_path / "raw.png"
    pixels = _pixels(True)
    Image.fromarray(pixels).save(path)
    (value,) = load_inputs(path, _details(demo), pixels="raw")
    assert np.array_equal(value.reshape(-1).view(np.uint8), pixels.reshape(-1))
