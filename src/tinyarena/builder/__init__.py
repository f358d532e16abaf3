"""Writing new .tflite models from Python (see ``ModelBuilder``) and quantization helpers.

``ModelBuilder`` collects tensors, constant buffers, operators with their builtin options,
subgraphs, metadata and signatures, and serialises them with ``flatbuffers.Builder`` in the
layout the TFLite converter uses. ``tinyarena.builder.quant`` derives scales and zero points
from float ranges; ``tinyarena.builder.random_graphs`` generates random valid models for
property tests.
"""

from __future__ import annotations

from tinyarena.builder import quant
from tinyarena.builder._dtypes import tensor_type
from tinyarena.builder.model_builder import ModelBuilder, SubgraphBuilder, builtin_code

__all__ = ["ModelBuilder", "SubgraphBuilder", "builtin_code", "quant", "tensor_type"]
