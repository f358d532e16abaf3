"""Reading model inputs from files: .npy, .npz, and images (.png, .jpg, .bmp).

Images a user has (PNG, JPEG, BMP; grayscale or RGB) are read with Pillow, the optional extra
``tinyarena[images]``. Their pixels become the input's values in one of two ways:
``scaled`` maps each 0..255 pixel linearly onto a real range (``pixel_range``, default 0..1)
and quantizes it with the input's own scale and zero point, as a converter's representative
dataset saw it; ``raw`` copies the bytes, as TFLM's examples feed their test images (the default
for .bmp, so TFLM's person_detection images behave as in TFLM). An image is resized to the
input's height and width only on request.

The BMP reader is deliberately small: uncompressed 8-bit palette images whose palette is gray
(the person_detection test images of TFLM), returned top-down as uint8. Feeding such an image to
an int8 model copies its bytes as TFLM's person_detection_test does (``memcpy`` of the pixel
bytes into ``input->data.int8``).
"""

from __future__ import annotations

import struct
import zipfile
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from tinyarena.errors import InterpreterError

_FILE_HEADER = struct.Struct("<2sIHHI")  # BITMAPFILEHEADER
_INFO_HEADER = struct.Struct("<IiiHHIIiiII")  # BITMAPINFOHEADER


def read_bmp_grayscale(path: str | Path) -> np.ndarray:
    """Pixels of an uncompressed 8-bit grayscale BMP, top row first, as uint8 (height, width)."""
    data = Path(path).read_bytes()
    if len(data) < _FILE_HEADER.size + _INFO_HEADER.size:
        raise InterpreterError(f"{path}: too short to be a BMP file")
    magic, _, _, _, pixel_offset = _FILE_HEADER.unpack_from(data, 0)
    if magic != b"BM":
        raise InterpreterError(f"{path}: not a BMP file (no 'BM' signature)")
    (header_size, width, height, _, bits, compression, _, _, _, colors_used,
     _) = _INFO_HEADER.unpack_from(data, _FILE_HEADER.size)
    if bits != 8 or compression != 0:
        raise InterpreterError(
            f"{path}: only uncompressed 8-bit BMPs are supported (this one has {bits} bits per "
            f"pixel, compression {compression}); convert it to 8-bit grayscale")
    if width <= 0 or height == 0:
        raise InterpreterError(f"{path}: bad BMP size {width}x{height}")
    palette_start = _FILE_HEADER.size + header_size
    entries = colors_used or 256
    palette = np.frombuffer(data, np.uint8, count=4 * entries,
                            offset=palette_start).reshape(entries, 4)
    if not (np.array_equal(palette[:, 0], palette[:, 1])
            and np.array_equal(palette[:, 1], palette[:, 2])):
        raise InterpreterError(f"{path}: the BMP palette is not grayscale")
    stride = (width + 3) // 4 * 4  # rows are padded to 4 bytes
    rows = abs(height)
    if pixel_offset + stride * rows > len(data):
        raise InterpreterError(f"{path}: BMP pixel data is truncated")
    indices = np.frombuffer(data, np.uint8, count=stride * rows,
                            offset=pixel_offset).reshape(rows, stride)[:, :width]
    if int(indices.max(initial=0)) >= entries:
        raise InterpreterError(f"{path}: pixel index beyond the {entries}-entry palette")
    gray = palette[:, 2][indices]
    return gray[::-1].copy() if height > 0 else gray.copy()  # positive height: bottom-up


def image_to_input(pixels: np.ndarray, details: dict[str, Any]) -> np.ndarray:
    """An 8-bit image as the value of one model input with the same number of elements."""
    shape = tuple(int(d) for d in details["shape"])
    count = int(np.prod(shape)) if shape else 1
    if pixels.size != count:
        raise InterpreterError(
            f"the image has {pixels.size} pixels but input {details['name']!r} has shape "
            f"{shape} ({count} elements)")
    dtype = np.dtype(details["dtype"])
    if dtype == np.uint8:
        return pixels.reshape(shape)
    if dtype == np.int8:
        return pixels.reshape(shape).view(np.int8)  # memcpy, as person_detection_test does
    if dtype == np.float32:
        return (pixels.astype(np.float32) / np.float32(255.0)).reshape(shape)
    raise InterpreterError(f"cannot feed an image to a {dtype.name} input")


IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")
PIXEL_MODES = ("raw", "scaled")


def read_image(path: str | Path, details: dict[str, Any], *, resize: bool = False) -> np.ndarray:
    """The image's pixels as uint8 (height, width, channels), with the channel count (1 or 3)
    and, when ``resize``, the height and width of the input ``details`` describe."""
    height, width, channels = image_geometry(details)
    try:
        from PIL import Image
    except ImportError:
        raise InterpreterError(
            f"reading {Path(path).suffix} images needs Pillow: pip install 'tinyarena[images]' "
            f"(or give the input as .npy)") from None
    try:
        with Image.open(path) as opened:
            image = opened.convert("L" if channels == 1 else "RGB")
    except OSError as exc:
        raise InterpreterError(f"cannot read image {path}: {exc}") from None
    if image.size != (width, height):
        if not resize:
            raise InterpreterError(
                f"{Path(path).name} is {image.size[0]}x{image.size[1]} pixels but input "
                f"{details['name']!r} takes {width}x{height}; pass --resize (Python: "
                f"resize=True) to resize it")
        image = image.resize((width, height), Image.Resampling.BILINEAR)
    return np.asarray(image, dtype=np.uint8).reshape(height, width, channels)


def image_geometry(details: dict[str, Any]) -> tuple[int, int, int]:
    """(height, width, channels) of an image input: NHWC with N 1 and C 1 or 3, or HW."""
    shape = tuple(int(d) for d in details["shape"])
    if len(shape) == 4 and shape[0] == 1 and shape[3] in (1, 3):
        return shape[1], shape[2], shape[3]
    if len(shape) == 3 and shape[2] in (1, 3):
        return shape[0], shape[1], shape[2]
    if len(shape) in (2, 3) and (len(shape) == 2 or shape[0] == 1):
        return shape[-2], shape[-1], 1
    raise InterpreterError(
        f"input {details['name']!r} has shape {shape}, not an image (NHWC with 1 or 3 "
        f"channels); give it as .npy")


def quantize_pixels(pixels: np.ndarray, details: dict[str, Any],
                    pixel_range: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
    """Pixels (0..255) mapped linearly onto ``pixel_range`` and quantized with the input's
    scale and zero point (round half away from zero, saturated), or kept as reals for a
    float input."""
    shape = tuple(int(d) for d in details["shape"])
    dtype = np.dtype(details["dtype"])
    low, high = pixel_range
    real = np.float64(low) + pixels.astype(np.float64) * ((high - low) / 255.0)
    if dtype.kind == "f":
        return real.astype(dtype).reshape(shape)
    scales = details["quantization_parameters"]["scales"]
    zero_points = details["quantization_parameters"]["zero_points"]
    if dtype.kind not in "iu" or len(scales) != 1:
        raise InterpreterError(
            f"input {details['name']!r} is {dtype.name} without one scale and zero point; "
            f"use --pixels raw or give the input as .npy")
    scaled = real / float(scales[0])
    rounded = np.sign(scaled) * np.floor(np.abs(scaled) + 0.5) + int(zero_points[0])
    info = np.iinfo(dtype)
    return np.clip(rounded, info.min, info.max).astype(dtype).reshape(shape)


def load_image(path: str | Path, details: dict[str, Any], *, pixels: str | None = None,
               resize: bool = False,
               pixel_range: tuple[float, float] = (0.0, 1.0)) -> np.ndarray:
    """One input's value from an image file: ``pixels`` "raw" (bytes copied) or "scaled"
    (mapped onto ``pixel_range`` and quantized); default raw for .bmp, scaled otherwise."""
    path = Path(path)
    mode = pixels or ("raw" if path.suffix.lower() == ".bmp" else "scaled")
    if mode not in PIXEL_MODES:
        raise InterpreterError(f"pixels must be one of {', '.join(PIXEL_MODES)}, not {mode!r}")
    if path.suffix.lower() == ".bmp" and mode == "raw" and not resize:
        try:
            return image_to_input(read_bmp_grayscale(path), details)
        except InterpreterError:
            pass  # not an 8-bit grayscale BMP: Pillow reads it below
    image = read_image(path, details, resize=resize)
    if mode == "raw":
        return image_to_input(image, details)
    return quantize_pixels(image, details, pixel_range)


def load_inputs(path: str | Path, details: Sequence[dict[str, Any]], *,
                pixels: str | None = None, resize: bool = False,
                pixel_range: tuple[float, float] = (0.0, 1.0)) -> list[np.ndarray]:
    """Input values from ``path``: .npy (one input), .npz (by input name, else in order),
    or an image (.png, .jpg, .jpeg, .bmp; one image input; see ``load_image``)."""
    path = Path(path)
    suffix = path.suffix.lower()
    try:
        if suffix in IMAGE_SUFFIXES:
            _single(details, path)
            return [load_image(path, details[0], pixels=pixels, resize=resize,
                               pixel_range=pixel_range)]
        if suffix == ".npy":
            _single(details, path)
            return [_as_input(np.load(path, allow_pickle=False), details[0])]
        if suffix == ".npz":
            with np.load(path, allow_pickle=False) as npz:
                return _from_npz(dict(npz), details, path)
    except OSError as exc:
        raise InterpreterError(f"cannot read {path}: {exc.strerror or exc}") from None
    except (ValueError, zipfile.BadZipFile, EOFError) as exc:
        raise InterpreterError(f"cannot read {path}: {exc}") from None
    raise InterpreterError(f"{path}: input files must be .npy, .npz or an image (.png, .jpg, "
                           f".jpeg, .bmp)")


def _single(details: Sequence[dict[str, Any]], path: Path) -> None:
    if len(details) != 1:
        raise InterpreterError(
            f"{path.name} holds one array but the model has {len(details)} inputs; use an .npz "
            f"with one array per input name")


def _from_npz(arrays: dict[str, np.ndarray], details: Sequence[dict[str, Any]],
              path: Path) -> list[np.ndarray]:
    names = [d["name"] for d in details]
    ordered = [f"arr_{i}" for i in range(len(details))]
    unused = sorted(set(arrays) - set(names) - set(ordered))
    if unused:  # a misspelt name must not leave an input silently fed from elsewhere
        raise InterpreterError(
            f"{path.name} has arrays {unused} that match no model input; name them after the "
            f"model inputs {names} (or arr_0, arr_1, ... in input order)")
    if all(n in arrays for n in names):
        return [_as_input(arrays[n], d) for n, d in zip(names, details)]
    if all(k in arrays for k in ordered):
        return [_as_input(arrays[k], d) for k, d in zip(ordered, details)]
    raise InterpreterError(
        f"{path.name} has arrays {sorted(arrays)}; name them after the model inputs {names} "
        f"(or arr_0, arr_1, ... in input order)")


def _as_input(value: np.ndarray, details: dict[str, Any]) -> np.ndarray:
    """The array with the input's shape; its dtype must already be the input's."""
    shape = tuple(int(d) for d in details["shape"])
    dtype = np.dtype(details["dtype"])
    if value.dtype != dtype:
        raise InterpreterError(
            f"input {details['name']!r} is {dtype.name}, the file holds {value.dtype.name}")
    if value.shape != shape:
        if value.size != int(np.prod(shape)):
            raise InterpreterError(
                f"input {details['name']!r} has shape {shape}, the file holds {value.shape}")
        value = value.reshape(shape)
    return value


def random_inputs(details: Sequence[dict[str, Any]], seed: int = 0) -> list[np.ndarray]:
    """Uniform random values over each integer type's range; standard normal for floats."""
    rng = np.random.default_rng(seed)
    values = []
    for d in details:
        shape = tuple(int(s) for s in d["shape"])
        dtype = np.dtype(d["dtype"])
        if dtype.kind == "f":
            values.append(rng.standard_normal(shape).astype(dtype))
        elif dtype.kind == "b":
            values.append(rng.integers(0, 2, size=shape).astype(dtype))
        else:
            info = np.iinfo(dtype)
            values.append(rng.integers(info.min, info.max, size=shape,
                                       endpoint=True).astype(dtype))
    return values


__all__ = ["IMAGE_SUFFIXES", "PIXEL_MODES", "image_geometry", "image_to_input", "load_image",
           "load_inputs", "quantize_pixels", "random_inputs", "read_bmp_grayscale",
           "read_image"]
