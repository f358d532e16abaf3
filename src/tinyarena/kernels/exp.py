"""EXP: TFLM's exp.cc (reference_ops::Exp = std::exp(float)), float32 only.

On the wheel's host std::exp(float) is glibc's expf, which ``_libm.expf`` ports bit for bit
(0 ulp; see that module and tests/kernels/test_libm_expf.py). A device's libm may differ.
Allocation: ExpPrepare takes the input and output as temp tensors; no OpData, no options.
"""

from __future__ import annotations

from tinyarena.kernels._float_unary import float_registration
from tinyarena.kernels._libm import expf

REGISTRATION = float_registration("EXP", expf, has_prepare=True)
