"""Where two TFLM versions compute a kernel's constants differently, as data keyed by commit.

The device builds (and tinyarena's Cortex-M and arm32 targets) run TFLM 90b983c2; the pip wheel
(host-x64) is built from the newer 8f6596d (facts 6.5). Between the two, the prepare code of SUB
(``sub_common.cc``), FULLY_CONNECTED (``GetQuantizedConvolutionMultipler``, which the LSTM's gate
FCs reach too), RELU, LEAKY_RELU, HARD_SWISH, SVDF, ABS and RSQRT changed how a requantisation
multiplier is made from float32 tensor scales: 90b983c2 multiplies and divides the float32
scales in float32 (``static_cast<double>(a * b / c)``) and widens only the result; 8f6596d
widens every scale to double first. The real multipliers differ in their last bits, so an
output sitting on a rounding boundary moves by one step. Each kernel writes its formula with
``product``/``quotient``/``sqrt`` of the target's ``ScaleArithmetic``, in the C source's order.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Mapping

import numpy as np

from tinyarena.errors import KernelError

_F32 = np.float32


@dataclass(frozen=True)
class ScaleArithmetic:
    """How one TFLM version combines float32 scales: ``single`` (float32 operations, the
    result widened) or double operations on widened scales."""

    commit: str
    single: bool

    def product(self, *values: float) -> float:
        """Left-to-right product. Operands are float32 scales (tensor scales are) or results
        of this arithmetic; the double arithmetic takes them as they are (a float32 value
        widens exactly)."""
        if self.single:
            acc = _F32(values[0])
            for v in values[1:]:
                acc = _F32(acc * _F32(v))
            return float(acc)
        result = float(values[0])
        for v in values[1:]:
            result *= float(v)
        return result

    def quotient(self, numerator: float, denominator: float) -> float:
        if self.single:
            return float(_F32(_F32(numerator) / _F32(denominator)))
        return float(numerator) / float(denominator)

    def sqrt(self, scale: float) -> float:
        """std::sqrt of a float32 scale: sqrtf (float32) or sqrt of the widened value."""
        if self.single:
            return float(np.sqrt(_F32(scale)))
        return math.sqrt(float(_F32(scale)))


SCALE_ARITHMETIC: Mapping[str, ScaleArithmetic] = MappingProxyType({
    "90b983c2": ScaleArithmetic("90b983c2", single=True),
    # esp-tflite-micro 1.4.0's TFLM (the esp32* targets): 13 commits before 90b983c2, whose
    # kernel prepare code it shares file for file (only arg_min_max, kernel_util and while
    # changed in between, none of them a multiplier).
    "09656354": ScaleArithmetic("09656354", single=True),
    "8f6596d": ScaleArithmetic("8f6596d", single=False),
})
WHEEL = SCALE_ARITHMETIC["8f6596d"]


def scale_arithmetic(target: Any) -> ScaleArithmetic:
    """The arithmetic of the target's TFLM version (``TargetProfile.tflm_commit``)."""
    commit = str(getattr(target, "tflm_commit", WHEEL.commit))
    try:
        return SCALE_ARITHMETIC[commit]
    except KeyError:
        raise KernelError(f"target {getattr(target, 'name', target)} names TFLM {commit}, whose "
                          f"multiplier arithmetic tinyarena does not know; known: "
                          f"{', '.join(SCALE_ARITHMETIC)}") from None


__all__ = ["SCALE_ARITHMETIC", "ScaleArithmetic", "WHEEL", "scale_arithmetic"]
