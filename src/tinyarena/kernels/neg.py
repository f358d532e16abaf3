"""NEG: TFLM's neg.cc (reference_ops::Negate), float32 only.

``-x`` flips the sign bit, NaN's included, as numpy's negative does. TFLM registers only an
Eval (no OpData, no temp tensors, no builtin options), which refuses other types when it runs.
"""

from __future__ import annotations

import numpy as np

from tinyarena.kernels._float_unary import float_registration

REGISTRATION = float_registration("NEG", np.negative, has_prepare=False)
