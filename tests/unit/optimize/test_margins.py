"""Rule (c) margins against a byte-level simulation of TFLM's reference loop nests.

The simulation enumerates every read the reference kernels make (``ConvPerChannel``,
``DepthwiseConvPerChannel``, ``AveragePool``/``MaxPool``: batch, out_y, out_x, then the channel
loops, skipping taps in the padding; ``PadImpl``: output in order, copying the next input element
or writing the pad value) with the time step of the output element that makes it, and the
address each element writes. For an output placed d bytes above the input's start, a clobber is a
byte written at a step before the last step that reads it. The closed form ``dF`` must be safe
for every d <= dF down to no overlap, and d = dF + 1 must clobber (the margin is tight).
"""

from __future__ import annotations

import numpy as np
import pytest

from tinyarena.kernels._conv_common import compute_padding_height_width
from tinyarena.optimize.margins import WindowGeometry, pad_margin, window_margin


def _window_reads(g: WindowGeometry) -> tuple[np.ndarray, np.ndarray]:
    """(time step, input element index) of every read, by brute enumeration of the loop nest."""
    b, oy, ox, slot, fy, fx = np.meshgrid(
        np.arange(g.batches), np.arange(g.out_h), np.arange(g.out_w), np.arange(g.out_c),
        np.arange(g.filter_h), np.arange(g.filter_w), indexing="ij")
    if g.kind == "conv":
        fid = g.in_c // g.groups
        per_group = g.out_c // g.groups
        group = slot // per_group  # slot is out_channel in the conv loop
        chans = [group * fid + i for i in range(fid)]
    elif g.kind == "depthwise":
        chans = [slot // g.depth_multiplier]  # loop (in_channel, m): slot = in_channel*M + m
    else:
        chans = [slot]
    in_y = oy * g.stride_h - g.pad_top + g.dilation_h * fy
    in_x = ox * g.stride_w - g.pad_left + g.dilation_w * fx
    inside = (in_y >= 0) & (in_y < g.in_h) & (in_x >= 0) & (in_x < g.in_w)
    step = ((b * g.out_h + oy) * g.out_w + ox) * g.out_c + slot
    times, elems = [], []
    for ch in chans:
        idx = ((b * g.in_h + in_y) * g.in_w + in_x) * g.in_c + ch
        times.append(step[inside])
        elems.append(idx[inside])
    return np.concatenate(times), np.concatenate(elems)


def _write_address(g: WindowGeometry) -> np.ndarray:
    """Output element index written at each step (TFLM's Offset(output_shape, ...))."""
    steps = np.arange(g.batches * g.out_h * g.out_w * g.out_c)
    pixel, slot = np.divmod(steps, g.out_c)
    if g.kind == "depthwise":
        ic, m = np.divmod(slot, g.depth_multiplier)
        slot = m + ic * g.depth_multiplier
    return pixel * g.out_c + slot


def _clobbers(times: np.ndarray, elems: np.ndarray, n_in: int, ei: int, writes: np.ndarray,
              eo: int, displacements: np.ndarray) -> np.ndarray:
    """For each displacement d: does some byte get written before its last read?"""
    last = np.full(n_in, -1, dtype=np.int64)
    np.maximum.at(last, elems, times)
    byte_last = np.repeat(last, ei)  # last read step of each input byte
    when = np.empty(writes.size, dtype=np.int64)
    when[writes] = np.arange(writes.size)  # step at which output element e is written
    byte_when = np.repeat(when, eo)  # step at which output byte is written
    rel = np.arange(n_in * ei)[None, :] - displacements[:, None]  # input byte in output coords
    inside = (rel >= 0) & (rel < byte_when.size)
    written_at = np.where(inside, byte_when[np.clip(rel, 0, byte_when.size - 1)],
                          np.iinfo(np.int64).max)
    return (written_at < byte_last[None, :]).any(axis=1)


def _random_geometry(rng: np.random.Generator) -> WindowGeometry:
    kind = str(rng.choice(["conv", "depthwise", "pool"]))
    k = int(rng.choice([1, 2, 3, 5]))
    stride = int(rng.integers(1, 3))
    dil = int(rng.integers(1, 3)) if kind != "pool" else 1
    h, w = int(rng.integers(k, 8)), int(rng.integers(k, 8))
    c = int(rng.integers(1, 5))
    groups, mult = 1, 1
    if kind == "conv":
        groups = int(rng.choice([g for g in (1, 2) if c % g == 0]))
        oc = groups * int(rng.integers(1, 4))
    elif kind == "depthwise":
        mult = int(rng.integers(1, 3))
        oc = c * mult
    else:
        oc = c
    padding = str(rng.choice(["SAME", "VALID"]))
    pad, oh, ow = compute_padding_height_width(stride, stride, dil, dil, h, w, k, k, padding)
    ei = int(rng.choice([1, 2, 4]))
    eo = ei if rng.random() < 0.7 else int(rng.choice([1, 2, 4]))
    return WindowGeometry(kind, int(rng.integers(1, 3)), h, w, c, oh, ow, oc, k, k, stride,
                          stride, dil, dil, pad.height, pad.width, ei, eo, groups, mult)


def _check_tight(times: np.ndarray, elems: np.ndarray, n_in: int, ei: int, writes: np.ndarray,
                 eo: int, margin: int | None) -> None:
    out_bytes = writes.size * eo
    if margin is None:  # nothing is read after any write: every placement is safe
        span = np.arange(-out_bytes, n_in * ei + 1)
        assert not _clobbers(times, elems, n_in, ei, writes, eo, span).any()
        return
    safe = np.arange(min(-out_bytes, margin), margin + 1)
    assert not _clobbers(times, elems, n_in, ei, writes, eo, safe).any()
    assert _clobbers(times, elems, n_in, ei, writes, eo, np.array([margin + 1]))[0]


@pytest.mark.parametrize("seed", range(6))
def test_window_margin_is_safe_and_tight(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    for _ in range(40):
        g = _random_geometry(rng)
        if g.out_h <= 0 or g.out_w <= 0:
            continue
        times, elems = _window_reads(g)
        n_in = g.batches * g.in_h * g.in_w * g.in_c
        _check_tight(times, elems, n_in, g.in_elem, _write_address(g), g.out_elem,
                     window_margin(g))


@pytest.mark.parametrize("kind,k,stride,padding,dil,mult", [
    ("conv", 1, 1, "VALID", 1, 1), ("conv", 3, 1, "SAME", 1, 1), ("conv", 3, 2, "SAME", 1, 1),
    ("conv", 5, 1, "VALID", 1, 1), ("conv", 3, 1, "SAME", 2, 1),
    ("depthwise", 3, 1, "SAME", 1, 1), ("depthwise", 3, 2, "SAME", 1, 2),
    ("depthwise", 5, 1, "VALID", 2, 1), ("pool", 2, 2, "VALID", 1, 1),
    ("pool", 3, 1, "SAME", 1, 1)])
def test_common_layers(kind: str, k: int, stride: int, padding: str, dil: int,
                       mult: int) -> None:
    h = w = 9
    c = 3
    oc = {"conv": 4, "depthwise": c * mult, "pool": c}[kind]
    pad, oh, ow = compute_padding_height_width(stride, stride, dil, dil, h, w, k, k, padding)
    g = WindowGeometry(kind, 1, h, w, c, oh, ow, oc, k, k, stride, stride, dil, dil,
                       pad.height, pad.width, 1, 1, 1, mult)
    times, elems = _window_reads(g)
    _check_tight(times, elems, h * w * c, 1, _write_address(g), 1, window_margin(g))


def test_hand_computed_margins() -> None:
    """Two cases worked by hand. A 1x1 conv, 8 channels in, 8 out, int8: writing channel j of
    pixel p must stay below byte 8p (pixel p is read again for channel j+1), so the output
    must start 7 bytes below the input. A 2x2/2 VALID max pool on one channel of a 4x4 int8
    image: output element 0 is written after its window, and the next window starts at input
    byte 2, the one after at 8, ... the tightest is element 0: d + 1 <= 2, so dF = 1."""
    conv = WindowGeometry("conv", 1, 4, 4, 8, 4, 4, 8, 1, 1)
    assert window_margin(conv) == -7
    pool = WindowGeometry("pool", 1, 4, 4, 1, 2, 2, 1, 2, 2, 2, 2)
    assert window_margin(pool) == 1


def _pad_reads(in_shape: tuple[int, ...], before: tuple[int, ...], out_shape: tuple[int, ...]
               ) -> tuple[np.ndarray, np.ndarray]:
    """PadImpl: output element k copies the next input element when inside the interior."""
    coords = np.indices(out_shape).reshape(len(out_shape), -1)
    inner = np.ones(coords.shape[1], dtype=bool)
    for d, (s, b) in enumerate(zip(in_shape, before)):
        inner &= (coords[d] >= b) & (coords[d] < b + s)
    steps = np.flatnonzero(inner)
    return steps, np.arange(steps.size)


@pytest.mark.parametrize("seed", range(4))
def test_pad_margin_is_safe_and_tight(seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(25):
        rank = int(rng.integers(1, 5))
        in_shape = tuple(int(v) for v in rng.integers(1, 5, size=rank))
        before = tuple(int(v) for v in rng.integers(0, 3, size=rank))
        after = tuple(int(v) for v in rng.integers(0, 3, size=rank))
        out_shape = tuple(s + b + a for s, b, a in zip(in_shape, before, after))
        e = int(rng.choice([1, 2, 4]))
        times, elems = _pad_reads(in_shape, before, out_shape)
        n_out = int(np.prod(out_shape))
        _check_tight(times, elems, int(np.prod(in_shape)), e, np.arange(n_out), e,
                     pad_margin(in_shape, before, out_shape, e))


def test_pad_hand_computed() -> None:
    """Rows added only below the image: output element k is input element k until the input
    runs out, so the output can start exactly on the input. A column added after each row
    instead puts 2 pad bytes (one pixel of 2 channels) after each of the first 3 rows before
    the last input byte: the output must start 6 bytes below."""
    assert pad_margin((1, 4, 4, 2), (0, 0, 0, 0), (1, 6, 4, 2), 1) == 0
    assert pad_margin((1, 4, 4, 2), (0, 0, 0, 0), (1, 4, 5, 2), 1) == -6
