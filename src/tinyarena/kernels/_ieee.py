"""C's floating-point environment for the kernels' numpy arithmetic.

TFLM's float kernels run with the default IEEE environment: overflow gives inf, 0/0 and
inf - inf give NaN, and nothing traps or reports. numpy computes the same values but also
emits RuntimeWarnings (errors under ``-W error``). Evals whose float arithmetic can meet inf,
NaN or overflow run under :func:`c_float_env`, so a user sees the wheel's values and no
warning. Float-to-integer conversions are not covered by this: where C converts a NaN or an
out-of-range float to an integer, the kernel handles that case explicitly (x86's cvttss2si
gives INT32_MIN), because numpy's cast would give a different value.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, TypeVar

import numpy as np

from tinyarena.model.types import Operator, TensorType

F = TypeVar("F", bound=Callable[..., object])


_ERRORS = ("divide", "over", "under", "invalid")


class FloatErrorsOff:
    """``np.errstate(all="ignore")`` as ``enter()`` / ``leave(token)``, at a fraction of its
    cost: ~0.35 us, or ~60 ns when errors are already ignored (errstate: ~1.7 us always).

    numpy 2 keeps its error settings in a context variable, and errstate builds a new settings
    object from the current one on every entry. Here, per distinct current settings object
    (the caller's errstate or seterr makes a new one), the "ignore" object is built once by
    numpy's own ``_make_extobj`` (so bufsize and the error callback are errstate's), or found
    unnecessary because the current settings already ignore every error (inside an invoke,
    an eval's ``c_float_env`` then costs one identity check). Then only set and reset.
    Without numpy 2's context variable (numpy 1.x), errstate itself runs. One instance per
    user (an invoke plan, a decorated eval): its cache is one tuple, replaced whole, so
    threads (each with its own context) at worst rebuild it.
    """

    __slots__ = ("_var", "_make", "_settings", "_last")

    def __init__(self) -> None:
        try:
            from numpy._core import umath
            self._var: Any = umath._extobj_contextvar
            self._make: Any = umath._make_extobj
            self._settings: Any = umath._get_extobj_dict
            self._var.get()
        except Exception:  # numpy 1.x (or other internals): errstate every time
            self._var = None
        self._last: tuple[Any, Any] = (None, None)  # (current settings, what to set or None)

    def enter(self) -> Any:
        """Turn float error reporting off; returns what ``leave`` needs to turn it back."""
        var = self._var
        if var is None:
            state = np.errstate(all="ignore")
            state.__enter__()
            return state
        current = var.get()
        last = self._last
        if last[0] is not current:
            settings = self._settings()
            quiet = all(settings.get(name) == "ignore" for name in _ERRORS)
            last = (current, None if quiet else self._make(all="ignore"))
            self._last = last
        ignoring = last[1]
        return None if ignoring is None else var.set(ignoring)

    def leave(self, token: Any) -> None:
        if token is None:
            return
        if self._var is None:
            token.__exit__(None, None, None)
        else:
            self._var.reset(token)


def c_float_env(fn: F) -> F:
    """Decorate an eval ``fn(ctx, op, data)``: when the op's first input or first output is
    float32, it runs with numpy's floating-point error reporting off, as C's defaults are
    (``FloatErrorsOff``: nearly free inside an invoke, which has switched it off already).
    Integer ops skip the switch: their numpy arithmetic is integer and reports nothing."""
    errors_off = FloatErrorsOff()

    @functools.wraps(fn)
    def wrapper(ctx: Any, op: Operator, data: Any) -> object:
        if _touches_float(ctx, op):
            token = errors_off.enter()
            try:
                return fn(ctx, op, data)
            finally:
                errors_off.leave(token)
        return fn(ctx, op, data)

    return wrapper  # type: ignore[return-value]


def _touches_float(ctx: Any, op: Operator) -> bool:
    for indices in (op.inputs, op.outputs):
        if indices and indices[0] >= 0:
            tensor = ctx.tensor(indices[0])
            if tensor is not None and tensor.type == TensorType.FLOAT32:
                return True
    return False


def c_min_max_inplace(a: np.ndarray, lo: float | np.ndarray | np.generic,
                      hi: float | np.ndarray | np.generic) -> None:
    """a = std::min(std::max(a, lo), hi) in place, with C++'s definitions: std::max(a, lo) is
    ``a < lo ? lo : a`` and std::min(a, hi) is ``hi < a ? hi : a``. Unlike np.maximum and
    np.minimum, a NaN passes and a -0.0 stays -0.0 against a bound of 0.0 (TFLM's
    ActivationFunctionWithMinMax under RELU). Works in blocks, so the comparison masks stay
    a few KiB whatever the tensor size."""
    if not a.flags.c_contiguous:  # no flat view: one pass over the whole array
        np.copyto(a, lo, where=a < lo, casting="unsafe")
        np.copyto(a, hi, where=hi < a, casting="unsafe")
        return
    lo_arr, hi_arr = np.asarray(lo), np.asarray(hi)
    per_element = lo_arr.ndim > 0 or hi_arr.ndim > 0
    if per_element:  # bounds that broadcast against a (per channel): one pass
        np.copyto(a, lo_arr, where=a < lo_arr, casting="unsafe")
        np.copyto(a, hi_arr, where=hi_arr < a, casting="unsafe")
        return
    flat = a.reshape(-1)
    for start in range(0, flat.size, _BLOCK):
        block = flat[start:start + _BLOCK]
        np.copyto(block, lo_arr, where=block < lo_arr, casting="unsafe")
        np.copyto(block, hi_arr, where=hi_arr < block, casting="unsafe")


_BLOCK = 4096
