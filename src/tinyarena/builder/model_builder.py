"""``ModelBuilder``: write valid .tflite models from Python, one tensor and operator at a time.

A builder is deliberately a mutable accumulator (it is filled step by step, then ``build()``
freezes everything into plain specs and serialises them). Tensors are referred to by their index
in their subgraph, a plain ``int``; ``-1`` (or ``None``) marks an omitted optional input, as in
the file format.

    b = ModelBuilder()
    x = b.add_input("x", (1, 8, 8, 3), "int8", scale=0.05, zero_point=-3)
    w = b.add_constant("w", w_q, scale=w_scales, zero_point=0, quantized_dimension=0)
    y = b.add_tensor("y", (1, 8, 8, 4), "int8", scale=0.1, zero_point=2)
    b.add_operator("CONV_2D", [x, w], [y], padding="SAME", stride_w=1, stride_h=1)
    b.mark_output(y)
    data = b.build()
"""

from __future__ import annotations

from typing import Any, Mapping, Sequence

import numpy as np

from tinyarena.builder._dtypes import encode_constant, tensor_type
from tinyarena.builder._options import encode_options
from tinyarena.builder._writer import (
    ModelSpec,
    OperatorCodeSpec,
    OperatorSpec,
    QuantSpec,
    SignatureSpec,
    SubgraphSpec,
    TensorSpec,
    write_model,
)
from tinyarena.errors import BuildError
from tinyarena.model import _schema
from tinyarena.model.types import TensorType

_BUILTIN_CODES: Mapping[str, int] = dict(_schema.ENUMS["BuiltinOperator"].values)
_CUSTOM = _BUILTIN_CODES["CUSTOM"]


def builtin_code(op: str | int) -> int:
    """BuiltinOperator value of an op name ("CONV_2D") or code."""
    if isinstance(op, (int, np.integer)) and not isinstance(op, bool):
        return int(op)
    if isinstance(op, str) and op.upper() in _BUILTIN_CODES:
        return _BUILTIN_CODES[op.upper()]
    raise BuildError(f"unknown builtin operator {op!r}: use a schema name such as 'CONV_2D', "
                     "or 'CUSTOM' with custom_code=...")


def _op_name(code: int) -> str:
    for name, value in _BUILTIN_CODES.items():
        if value == code:
            return name
    return f"BUILTIN_{code}"


def _quant_spec(scale: Any, zero_point: Any, quantized_dimension: int,
                min_: Any = None, max_: Any = None, quantization: Any = None) -> QuantSpec | None:
    """Normalise the many ways to give quantization into one spec (or None: not quantized)."""
    if quantization is not None:
        if scale is not None or zero_point is not None:
            raise BuildError("give either quantization=... or scale/zero_point, not both")
        scale = getattr(quantization, "scale")
        zero_point = getattr(quantization, "zero_point")
        quantized_dimension = int(getattr(quantization, "quantized_dimension", 0))
        min_ = getattr(quantization, "min", None)
        max_ = getattr(quantization, "max", None)
    if scale is None:
        if zero_point is not None and np.any(np.asarray(zero_point) != 0):
            raise BuildError("a zero point was given without a scale")
        if min_ is None and max_ is None:
            return None
        scale_arr = np.zeros(0, np.float32)
        zp_arr = np.zeros(0, np.int64)
    else:
        scale_arr = np.asarray(scale, dtype=np.float32).reshape(-1)
        if scale_arr.size == 0:
            raise BuildError("empty quantization scale")
        if not np.all(np.isfinite(scale_arr)) or np.any(scale_arr <= 0):
            raise BuildError(f"quantization scales must be positive and finite, got {scale_arr}")
        zp_arr = np.asarray(0 if zero_point is None else zero_point, np.int64).reshape(-1)
        if zp_arr.size == 1 and scale_arr.size > 1:
            zp_arr = np.repeat(zp_arr, scale_arr.size)
        if zp_arr.size != scale_arr.size:
            raise BuildError(
                f"{scale_arr.size} scales but {zp_arr.size} zero points: give one zero point "
                "per scale (or a single one to repeat)"
            )
    return QuantSpec(
        scale_arr, zp_arr, int(quantized_dimension),
        None if min_ is None else np.asarray(min_, np.float32).reshape(-1),
        None if max_ is None else np.asarray(max_, np.float32).reshape(-1),
    )


def _check_quantized_dimension(name: str, shape: tuple[int, ...], q: QuantSpec | None) -> None:
    if q is None or q.scale.size <= 1:
        return
    dim = q.quantized_dimension
    if not 0 <= dim < len(shape):
        raise BuildError(f"tensor {name!r}: quantized_dimension {dim} is outside its shape "
                         f"{shape}")
    if shape[dim] != q.scale.size:
        raise BuildError(f"tensor {name!r}: {q.scale.size} per-channel scales but dimension "
                         f"{dim} has {shape[dim]} entries")


def _shape(shape: Sequence[int] | int) -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)):
        shape = (int(shape),)
    result = tuple(int(d) for d in shape)
    if any(d < 0 for d in result):
        raise BuildError(f"shape {result} has a negative dimension; put -1 (unknown) dims in "
                         "shape_signature and a concrete size in shape")
    return result


class SubgraphBuilder:
    """Tensors and operators of one subgraph. ``ModelBuilder`` forwards to subgraph 0."""

    def __init__(self, model: "ModelBuilder", index: int, name: str) -> None:
        self._model = model
        self.index = index
        self.name = name
        self._tensors: list[TensorSpec] = []
        self._operators: list[OperatorSpec] = []
        self._inputs: list[int] = []
        self._outputs: list[int] = []

    # -- tensors -----------------------------------------------------------------------------
    def add_tensor(self, name: str, shape: Sequence[int] | int, dtype: Any = "float32", *,
                   scale: Any = None, zero_point: Any = None, quantized_dimension: int = 0,
                   is_variable: bool = False, shape_signature: Sequence[int] | None = None,
                   min: Any = None, max: Any = None, quantization: Any = None,
                   buffer: int | None = None) -> int:
        """A tensor without data (an activation, or a variable); returns its index."""
        ttype = tensor_type(dtype)
        shape_t = _shape(shape)
        q = _quant_spec(scale, zero_point, quantized_dimension, min, max, quantization)
        _check_quantized_dimension(name, shape_t, q)
        if buffer is not None and not 0 <= buffer < len(self._model._buffers):
            raise BuildError(f"tensor {name!r}: buffer {buffer} does not exist")
        signature = None if shape_signature is None else tuple(int(d) for d in shape_signature)
        if signature is not None and len(signature) != len(shape_t):
            raise BuildError(f"tensor {name!r}: shape_signature {signature} and shape {shape_t} "
                             "differ in rank")
        self._tensors.append(TensorSpec(str(name), int(ttype), shape_t,
                                        0 if buffer is None else int(buffer), q,
                                        bool(is_variable), signature))
        return len(self._tensors) - 1

    def add_input(self, name: str, shape: Sequence[int] | int, dtype: Any = "float32",
                  **kwargs: Any) -> int:
        """A tensor that is also a graph input (in call order)."""
        index = self.add_tensor(name, shape, dtype, **kwargs)
        self._inputs.append(index)
        return index

    def add_constant(self, name: str, data: Any, dtype: Any = None, *, scale: Any = None,
                     zero_point: Any = None, quantized_dimension: int = 0,
                     shape: Sequence[int] | None = None, min: Any = None, max: Any = None,
                     quantization: Any = None, raw: bool = False) -> int:
        """A tensor whose data lives in its own (16-byte aligned) buffer; returns its index.

        ``dtype`` defaults to the array's (float64 becomes float32; Python lists of ints become
        int32). With ``raw=True``, ``data`` is stored as given bytes and ``shape`` and ``dtype``
        are required.
        """
        if raw:
            if shape is None or dtype is None:
                raise BuildError("add_constant(raw=True) needs shape and dtype")
            ttype = tensor_type(dtype)
            payload = bytes(data)
            shape_t = _shape(shape)
        else:
            given = data if isinstance(data, np.ndarray) else np.asarray(data)
            if dtype is None:
                if given.dtype == np.float64:
                    ttype = TensorType.FLOAT32
                elif given.dtype == np.int64 and not isinstance(data, np.ndarray):
                    ttype = TensorType.INT32
                else:
                    ttype = tensor_type(given.dtype)
            else:
                ttype = tensor_type(dtype)
            shape_t = _shape(given.shape if shape is None else shape)
            count = int(np.prod(shape_t)) if shape_t else 1
            if given.size != count:
                raise BuildError(f"constant {name!r}: {given.size} values do not fill shape "
                                 f"{shape_t}")
            payload = encode_constant(given, ttype)
        buffer = self._model._add_buffer(payload)
        return self.add_tensor(name, shape_t, ttype, scale=scale, zero_point=zero_point,
                               quantized_dimension=quantized_dimension, min=min, max=max,
                               quantization=quantization, buffer=buffer)

    def mark_input(self, *tensors: int) -> None:
        for t in tensors:
            self._check_tensor(t, "input")
            self._inputs.append(int(t))

    def mark_output(self, *tensors: int) -> None:
        """Make tensors graph outputs (in call order)."""
        for t in tensors:
            self._check_tensor(t, "output")
            self._outputs.append(int(t))

    @property
    def inputs(self) -> tuple[int, ...]:
        return tuple(self._inputs)

    @property
    def outputs(self) -> tuple[int, ...]:
        return tuple(self._outputs)

    @property
    def tensor_count(self) -> int:
        return len(self._tensors)

    def tensor_shape(self, tensor: int) -> tuple[int, ...]:
        self._check_tensor(tensor, "tensor")
        return self._tensors[tensor].shape

    def tensor_type(self, tensor: int) -> TensorType:
        self._check_tensor(tensor, "tensor")
        return TensorType(self._tensors[tensor].type)

    def _check_tensor(self, t: Any, role: str) -> None:
        if not isinstance(t, (int, np.integer)) or not 0 <= int(t) < len(self._tensors):
            raise BuildError(f"subgraph {self.index}: {role} {t!r} is not a tensor index of this "
                             f"subgraph (it has {len(self._tensors)} tensors)")

    # -- operators ---------------------------------------------------------------------------
    def add_operator(self, op: str | int, inputs: Sequence[int | None],
                     outputs: Sequence[int], *, options: Any = None,
                     intermediates: Sequence[int] = (), version: int = 1,
                     custom_code: str | None = None, custom_options: bytes | None = None,
                     **option_keywords: Any) -> int:
        """Append an operator (run in the order added); returns its index in the subgraph.

        Builtin options go as keywords named like the schema fields (``padding="SAME"``) or as
        ``options=`` (a mapping, or an options dataclass from ``tinyarena.model.options``).
        A custom op is ``add_operator("CUSTOM", ..., custom_code="NAME", custom_options=b"...")``
        (or just ``add_operator("NAME", ..., custom_options=...)`` for a name that is no
        builtin).
        """
        if isinstance(op, str) and op.upper() not in _BUILTIN_CODES and custom_code is None:
            custom_code, op = op, "CUSTOM"
        code = builtin_code(op)
        if code == _CUSTOM and not custom_code:
            raise BuildError("a CUSTOM operator needs custom_code='<name>'")
        if code != _CUSTOM and custom_code is not None:
            raise BuildError(f"custom_code is only for CUSTOM operators, not {_op_name(code)}")
        ins = tuple(-1 if t is None else int(t) for t in inputs)
        outs = tuple(int(t) for t in outputs)
        for t in ins:
            if t != -1:
                self._check_tensor(t, f"{_op_name(code)} input")
        for t in outs:
            self._check_tensor(t, f"{_op_name(code)} output")
        for t in intermediates:
            self._check_tensor(t, f"{_op_name(code)} intermediate")
        table = None
        if code != _CUSTOM:
            table = encode_options(_op_name(code), options, option_keywords)
        elif options is not None or option_keywords:
            raise BuildError("custom operators take custom_options bytes, not builtin options")
        opcode_index = self._model._opcode(code, custom_code, int(version))
        self._operators.append(OperatorSpec(
            opcode_index, ins, outs, tuple(int(t) for t in intermediates), table,
            None if custom_options is None else bytes(custom_options),
        ))
        return len(self._operators) - 1

    def _spec(self) -> SubgraphSpec:
        produced: dict[int, int] = {}
        for op_index, op in enumerate(self._operators):
            for t in op.outputs:
                if self._tensors[t].buffer and self._model._buffers[self._tensors[t].buffer]:
                    raise BuildError(f"subgraph {self.index}: operator {op_index} writes constant "
                                     f"tensor {t} ({self._tensors[t].name!r})")
                if t in produced:
                    raise BuildError(f"subgraph {self.index}: tensor {t} is written by operators "
                                     f"{produced[t]} and {op_index}")
                produced[t] = op_index
        return SubgraphSpec(self.name, tuple(self._tensors), tuple(self._inputs),
                            tuple(self._outputs), tuple(self._operators))


class ModelBuilder(SubgraphBuilder):
    """A whole model: subgraph 0 (whose methods it has), more subgraphs, buffers, metadata."""

    def __init__(self, description: str = "tinyarena.builder", *,
                 subgraph_name: str = "main") -> None:
        self._buffers: list[bytes] = [b""]  # buffer 0: the empty sentinel every model has
        self._codes: list[OperatorCodeSpec] = []
        self._metadata: list[tuple[str, int]] = []
        self._signatures: list[SignatureSpec] = []
        self._subgraphs: list[SubgraphBuilder] = []
        self.description = description
        super().__init__(self, 0, subgraph_name)
        self._subgraphs.append(self)

    def add_subgraph(self, name: str | None = None) -> SubgraphBuilder:
        """A further subgraph (for CALL_ONCE, IF, WHILE, ...); its ``index`` is what options
        such as ``then_subgraph_index`` refer to."""
        index = len(self._subgraphs)
        sub = SubgraphBuilder(self, index, name if name is not None else f"subgraph_{index}")
        self._subgraphs.append(sub)
        return sub

    def subgraph(self, index: int) -> SubgraphBuilder:
        if not 0 <= index < len(self._subgraphs):
            raise BuildError(f"no subgraph {index}: the model has {len(self._subgraphs)}")
        return self._subgraphs[index]

    def add_buffer(self, data: bytes) -> int:
        """A raw buffer (e.g. for metadata); returns its index."""
        return self._add_buffer(bytes(data))

    def add_metadata(self, name: str, data: bytes) -> int:
        """A metadata entry ``name`` whose bytes get their own buffer; returns the buffer index."""
        buffer = self._add_buffer(bytes(data))
        self._metadata.append((str(name), buffer))
        return buffer

    def add_signature(self, key: str, inputs: Mapping[str, int] | None = None,
                      outputs: Mapping[str, int] | None = None, *, subgraph: int = 0) -> None:
        """A SignatureDef; by default the subgraph's inputs and outputs under their names."""
        sub = self.subgraph(subgraph)
        ins = (inputs if inputs is not None
               else {sub._tensors[i].name: i for i in sub._inputs})
        outs = (outputs if outputs is not None
                else {sub._tensors[i].name: i for i in sub._outputs})
        for role, mapping in (("input", ins), ("output", outs)):
            for t in mapping.values():
                sub._check_tensor(t, f"signature {role}")
        self._signatures.append(SignatureSpec(
            str(key), subgraph, tuple((str(n), int(i)) for n, i in ins.items()),
            tuple((str(n), int(i)) for n, i in outs.items()),
        ))

    def _add_buffer(self, data: bytes) -> int:
        self._buffers.append(data)
        return len(self._buffers) - 1

    def _opcode(self, code: int, custom_code: str | None, version: int) -> int:
        spec = OperatorCodeSpec(code, custom_code, version)
        if spec in self._codes:
            return self._codes.index(spec)
        self._codes.append(spec)
        return len(self._codes) - 1

    def spec(self) -> ModelSpec:
        """The frozen description ``build()`` serialises."""
        return ModelSpec(
            self.description, tuple(self._codes), tuple(s._spec() for s in self._subgraphs),
            tuple(self._buffers), tuple(self._metadata), tuple(self._signatures),
        )

    def build(self) -> bytes:
        """The .tflite bytes of everything added so far."""
        return write_model(self.spec())
