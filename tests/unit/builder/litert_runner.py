"""Running a model in LiteRT (ai-edge-litert) with its reference kernels, for comparisons.

The reference op resolver is used (no XNNPACK delegate, no optimised kernels) because those
are the kernels TFLM's arithmetic is ported from: quantized results then agree bit for bit.
"""

from __future__ import annotations

import contextlib
import io
from typing import Sequence

import numpy as np


def litert_run(model: bytes, inputs: Sequence[np.ndarray], *,
               reference: bool = True) -> list[np.ndarray]:
    """Outputs of one invoke, in the subgraph's output order (input i = subgraph input i).

    ``reference=False`` uses LiteRT's builtin (optimised) kernels without the XNNPACK delegate.
    """
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    kind = (OpResolverType.BUILTIN_REF if reference
            else OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter = Interpreter(model_content=bytes(model), experimental_op_resolver_type=kind)
    interpreter.allocate_tensors()
    for detail, value in zip(interpreter.get_input_details(), inputs):
        interpreter.set_tensor(detail["index"], np.asarray(value))
    interpreter.invoke()
    return [np.array(interpreter.get_tensor(d["index"]), copy=True)
            for d in interpreter.get_output_details()]


def litert_loads(model: bytes) -> None:
    """Raise (ValueError from LiteRT) unless LiteRT's verifying loader accepts the model."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    with contextlib.redirect_stderr(io.StringIO()):
        Interpreter(model_content=bytes(model),
                    experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
