"""LiteRT's verifying loader as a check: constructing an Interpreter runs the flatbuffer
verifier and builds every tensor and node, without running anything."""

from __future__ import annotations

import contextlib
import io


def litert_loads(model: bytes) -> None:
    """Raise (ValueError from LiteRT) unless LiteRT accepts the model."""
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    with contextlib.redirect_stderr(io.StringIO()):
        Interpreter(model_content=bytes(model),
                    experimental_op_resolver_type=OpResolverType.BUILTIN_REF)
