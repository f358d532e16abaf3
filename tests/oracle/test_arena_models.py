"""The arena emulation against the live wheel on every model in ../shared/models.

Head, tail, total and every recorded category must equal what the wheel's
``print_allocations()`` reports; ``min_arena`` must be the smallest 16-byte-step arena in which
the wheel allocates and invokes; a too-small arena must fail with TFLM's own numbers.
"""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest

from tflm_oracle import shared_model_bytes, shared_model_names, tflm_allocations, tflm_fits
from tinyarena.arena import allocate_model
from tinyarena.errors import ArenaTooSmallError
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

BIG = 64 * 1024 * 1024


def _categories(layout) -> dict[str, tuple[int, int, int]]:
    return {k: (v.used, v.requested, v.count) for k, v in layout.categories.items()}


def test_model_matches_wheel(shared_model_name: str) -> None:
    model = shared_model_bytes(shared_model_name)
    wheel = tflm_allocations(model)
    ours = allocate_model(read_model(model))
    assert (ours.head, ours.tail, ours.total) == (wheel.head, wheel.tail, wheel.total)
    assert _categories(ours) == wheel.categories


@pytest.mark.parametrize("remainder", [3, 4, 8, 12])
@pytest.mark.parametrize("name", ["hello_world_int8", "keyword_scrambled", "person_detect"])
def test_arena_end_not_multiple_of_16(shared_models, name: str, remainder: int) -> None:
    """The wheel's arena is new[]-allocated (16-aligned start), so its end mod 16 is the size
    mod 16; the tail absorbs the padding exactly as TFLM's AlignPointerDown does."""
    model = shared_model_bytes(name)
    size = BIG + remainder
    wheel = tflm_allocations(model, arena_size=size)
    ours = allocate_model(read_model(model), arena_size=size)
    assert (ours.head, ours.tail, ours.total) == (wheel.head, wheel.tail, wheel.total)
    assert _categories(ours) == wheel.categories


def test_min_arena_is_the_wheels_minimum(shared_models) -> None:
    """For every model: the wheel works at min_arena and fails 16 bytes below (child
    processes, run in parallel threads)."""
    names = shared_model_names()

    def probe(name: str) -> tuple[str, int, bool, bool]:
        model = shared_model_bytes(name)
        m = allocate_model(read_model(model)).min_arena
        return name, m, tflm_fits(model, m)[0], tflm_fits(model, m - 16)[0]

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(probe, names))
    bad = [(n, m, ok, below) for n, m, ok, below in results if not ok or below]
    assert not bad, f"(model, min_arena, fits at min, fits 16 below): {bad}"


_TFLM_FAILURE = re.compile(r"(Failed to (?:allocate tail memory|allocate temp memory|resize "
                           r"buffer)\. Requested: \d+, available \d+, missing: \d+|Too many "
                           r"buffers \(max is \d+\))")


@pytest.mark.parametrize("name,fraction", [("hello_world_float", 0.5), ("hello_world_float", 0.8),
                                           ("keyword_scrambled", 0.5), ("person_detect", 0.5),
                                           ("trained_lstm", 0.99)])
def test_too_small_arena_fails_like_tflm(shared_models, name: str, fraction: float) -> None:
    """ArenaTooSmallError carries TFLM's first failure message verbatim, and the numbers
    needed/missing agree with the wheel: it fails at the given size and works at ``needed``."""
    model = shared_model_bytes(name)
    m = read_model(model)
    size = int(allocate_model(m).min_arena * fraction)
    ok, stderr = tflm_fits(model, size)
    assert not ok
    with pytest.raises(ArenaTooSmallError) as info:
        allocate_model(m, arena_size=size)
    err = info.value
    assert err.arena_size == size
    assert err.missing == err.needed - size > 0
    wheel_message = _TFLM_FAILURE.search(stderr)
    assert wheel_message is not None, stderr
    assert wheel_message.group(1) in str(err)
    assert tflm_fits(model, err.needed)[0]
    assert not tflm_fits(model, err.needed - 16)[0]
