"""Building blocks for kernels' ``bind`` (see ``kernels.base``): invoke-time steps made once.

Data-movement kernels (READ_VARIABLE, CONCATENATION, STRIDED_SLICE, RESHAPE...) move a few
hundred bytes per invoke in streaming models; a numpy call costs more than the copy. A copy
whose byte ranges are known at bind time is done here as memoryview slice assignments (a
memmove each, no numpy dispatch, nothing allocated), or as one ``np.take`` into the output
when it breaks into many pieces.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from tinyarena.kernels import native
from tinyarena.kernels.native import quiet

Step = Callable[[], None]

MAX_RUNS = 16  # contiguous pieces copied one by one; more take one np.take


def _bytes_of(array: np.ndarray) -> memoryview:
    """A flat, writable-if-the-array-is byte memoryview of a C-contiguous array."""
    if not array.flags.c_contiguous:
        raise ValueError("bound copies need C-contiguous tensors")
    return array.reshape(-1).view(np.uint8).data


def items(array: np.ndarray) -> Any:
    """The flat elements of a C-contiguous integer or bool array as a memoryview in its own
    format: reading or writing one item costs ~40 ns, a numpy scalar access ~150 ns."""
    if array.dtype.kind not in "iub" or not array.flags.c_contiguous:
        raise ValueError("items needs a C-contiguous integer or bool array")
    view: Any = array.reshape(-1).data.cast("B")
    return view.cast(array.dtype.char)


def nothing() -> None:
    """The step of an op with nothing to do (e.g. a RESHAPE planned in place)."""
    return None


nothing.quiet = True  # type: ignore[attr-defined]  # see kernels.native.quiet


def copy_runs(dst: np.ndarray, src: np.ndarray,
              runs: Sequence[tuple[int, int, int]]) -> Step:
    """Copy ``(dst_byte, src_byte, nbytes)`` pieces of ``src`` into ``dst``, in order."""
    return copy_pieces([(dst, a, src, b, n) for a, b, n in runs])


def copy_pieces(pieces: Sequence[tuple[np.ndarray, int, np.ndarray, int, int]]) -> Step:
    """Copy ``(dst, dst_byte, src, src_byte, nbytes)`` pieces in order, between any arrays:
    one step for all the pieces of an op (a CONCATENATION's inputs), no call per piece."""
    pairs = tuple((_bytes_of(d)[a:a + n], _bytes_of(s)[b:b + n])
                  for d, a, s, b, n in pieces if n > 0)
    if not pairs:
        return nothing
    if len(pairs) == 1:
        (dd, ss), = pairs

        def one() -> None:
            dd[:] = ss
        return quiet(one)
    if len(pairs) == 2:
        (d0, s0), (d1, s1) = pairs

        def two() -> None:
            d0[:] = s0
            d1[:] = s1
        return quiet(two)

    def many() -> None:
        for dd, ss in pairs:
            dd[:] = ss
    return quiet(many)


def byte_copy(dst: np.ndarray, src: np.ndarray) -> Step:
    """Copy all of ``src``'s bytes over ``dst`` (same size); nothing when they are one buffer."""
    if dst.nbytes != src.nbytes:
        raise ValueError(f"{src.nbytes} bytes copied into {dst.nbytes}")
    if dst.__array_interface__["data"][0] == src.__array_interface__["data"][0]:
        return nothing
    return copy_runs(dst, src, [(0, 0, dst.nbytes)])


def element_runs(index: np.ndarray, itemsize: int) -> list[tuple[int, int, int]]:
    """Byte pieces of a gather: ``dst.flat[i] = src.flat[index[i]]`` as contiguous runs."""
    index = np.asarray(index, dtype=np.int64).reshape(-1)
    if index.size == 0:
        return []
    breaks = np.flatnonzero(np.diff(index) != 1) + 1
    starts = np.concatenate(([0], breaks))
    ends = np.concatenate((breaks, [index.size]))
    return [(int(a) * itemsize, int(index[a]) * itemsize, int(b - a) * itemsize)
            for a, b in zip(starts, ends)]


def gather(dst: np.ndarray, src: np.ndarray, index: np.ndarray) -> Step:
    """``dst.flat[i] = src.flat[index[i]]`` for every i, with ``index`` fixed at bind time."""
    index = np.ascontiguousarray(index, dtype=np.intp).reshape(-1)
    if index.size != dst.size or src.dtype != dst.dtype:
        raise ValueError("gather: index count or dtype does not match the output")
    runs = element_runs(index, dst.dtype.itemsize)
    if len(runs) <= MAX_RUNS:
        return copy_runs(dst, src, runs)
    flat_src = src.reshape(-1)
    flat_dst = dst.reshape(-1)

    def take() -> None:
        np.take(flat_src, index, out=flat_dst, mode="clip")  # "raise" would buffer out
    return quiet(take)


LUT_MAX_ELEMENTS = 4096  # np.take makes an intp copy of the indices: keep it small


def unary_lut(x: np.ndarray, out: np.ndarray, fn: Callable[[np.ndarray], np.ndarray],
              ctx: Any = None) -> Step | None:
    """An element-wise int8/uint8 op as a 256-entry table of ``fn`` itself.

    An output element of such an op depends on its input byte alone, so evaluating ``fn`` (the
    kernel's own arithmetic, the one eval runs) once on all 256 inputs gives every answer it
    can produce; the step is then one lookup (compiled when ``ctx`` runs compiled kernels,
    ``kernels.native``, for any size; numpy's ``take`` up to ``LUT_MAX_ELEMENTS``). None when
    the tensors do not suit (eval runs).
    """
    compiled = native.enabled(ctx)
    if x.dtype not in (np.int8, np.uint8) or x.size != out.size or \
            (x.size > LUT_MAX_ELEMENTS and not compiled) or \
            not (x.flags.c_contiguous and out.flags.c_contiguous):
        return None
    probe = np.arange(256, dtype=np.uint8).view(x.dtype)
    values_of = np.asarray(fn(probe))
    if values_of.shape != (256,):
        return None
    table = np.ascontiguousarray(values_of.astype(out.dtype, casting="unsafe"))
    if not np.array_equal(table.astype(np.float64), values_of.astype(np.float64),
                          equal_nan=True):
        return None  # fn's values do not fit the output type: let eval do what it does
    index = x.reshape(-1).view(np.uint8)
    flat = out.reshape(-1)
    if x.size == 1 and out.dtype.kind in "iub":  # one element: memoryview reads and writes
        values = table.tolist()
        byte = items(index)
        cell = items(flat)

        def scalar() -> None:
            cell[0] = values[byte[0]]
        return quiet(scalar)
    if compiled:
        from tinyarena.kernels.native.lut import bind_lookup

        step = bind_lookup(table, index, flat)
        if step is not None:
            return step
    if x.size > LUT_MAX_ELEMENTS:
        return None

    def lookup() -> None:
        np.take(table, index, out=flat, mode="clip")
    return quiet(lookup)


def bind_copy_input(ctx: Any, op: Any, data: Any) -> Step | None:
    """bind of RESHAPE, SQUEEZE, EXPAND_DIMS: input 0's elements into output 0, unless they
    are one buffer (``_elementwise.copy_if_distinct``); None when eval must raise instead."""
    src = ctx.tensor_data(op.inputs[0])
    dst = ctx.tensor_data(op.outputs[0])
    if src.size != dst.size or src.dtype != dst.dtype or not (
            src.flags.c_contiguous and dst.flags.c_contiguous):
        return None
    return byte_copy(dst, src)


def float_unary(ctx: Any, op: Any, kind: str, libm: str = "glibc",
                alpha: float = 0.0) -> Step | None:
    """bind of a float32 activation (LOGISTIC, TANH, HARD_SWISH, RELU, RELU6, LEAKY_RELU)
    with compiled kernels on: the loop of ``native.float_unary`` over input 0 into output 0;
    None (eval runs) without them or when that loop declines."""
    if not native.enabled(ctx):
        return None
    from tinyarena.kernels.native.float_unary import bind_unary

    return bind_unary(kind, ctx.tensor_data(op.inputs[0]), ctx.tensor_data(op.outputs[0]),
                      libm, alpha)


__all__ = ["LUT_MAX_ELEMENTS", "MAX_RUNS", "bind_copy_input", "byte_copy", "copy_pieces",
           "copy_runs",
           "element_runs", "float_unary", "gather", "items", "nothing", "unary_lut"]
