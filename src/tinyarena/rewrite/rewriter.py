"""Lossless edits of an existing .tflite model (see ``_splice`` for the byte layout and why).

Edits: add or replace metadata entries, reorder a subgraph's operators, replace a subgraph's
tensors and operators. Every edit is validated in full before a byte is written; invalid
requests raise ``BuildError`` naming the problem. Everything the edits do not touch is kept
byte for byte (tables, fields unknown to this schema, buffers, custom options, signature defs),
so reading the result back gives the same model apart from the edits.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from tinyarena.builder._dtypes import encode_constant, tensor_type
from tinyarena.builder._options import encode_options
from tinyarena.builder._writer import (
    BUFFER_ALIGNMENT,
    OperatorCodeSpec,
    OperatorSpec,
    TensorSpec,
    _aligned_bytes,
    _write_operator,
    _write_operator_code,
    _write_tensor,
)
from tinyarena.builder.model_builder import _quant_spec, builtin_code
from tinyarena.errors import BuildError, TinyArenaError
from tinyarena.model._flatbuf import FlatBuffer, Table
from tinyarena.model._schema import ENUMS
from tinyarena.model.reader import read_model
from tinyarena.model.types import Model
from tinyarena.rewrite._splice import Blob, Old, Splice, Target, scalar_bytes

_BUILTIN_CODES: dict[str, int] = dict(ENUMS["BuiltinOperator"].values)
_BUILTIN_NAMES: dict[int, str] = {code: name for name, code in ENUMS["BuiltinOperator"].values}

# Ops whose effects go beyond their output tensors: a reordering keeps them in their order.
_STATEFUL_OPS = frozenset({"CALL_ONCE", "VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE"})


@dataclass(frozen=True)
class NewTensor:
    """A tensor created by a subgraph replacement. ``data`` gives it a new constant buffer;
    ``buffer`` points it at an existing buffer instead."""

    name: str
    dtype: Any
    shape: tuple[int, ...]
    data: np.ndarray | None = None
    buffer: int | None = None
    scale: Any = None
    zero_point: Any = None
    quantized_dimension: int = 0
    is_variable: bool = False
    shape_signature: tuple[int, ...] | None = None


@dataclass(frozen=True)
class KeptOperator:
    """An existing operator (every field preserved) with new tensor lists where given."""

    index: int
    inputs: tuple[int, ...] | None = None
    outputs: tuple[int, ...] | None = None
    intermediates: tuple[int, ...] | None = None


@dataclass(frozen=True)
class NewOperator:
    """An operator created by a subgraph replacement (options as ModelBuilder takes them)."""

    op: str | int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]
    options: Mapping[str, Any] = field(default_factory=dict)
    intermediates: tuple[int, ...] = ()
    custom_code: str | None = None
    custom_options: bytes | None = None
    version: int = 1


@dataclass(frozen=True)
class SubgraphReplacement:
    """The new content of one subgraph. A tensor given as an int reuses that old tensor table
    verbatim; an operator given as an int reuses that old operator verbatim (its stored tensor
    indices must make sense in the new numbering; use KeptOperator to change them)."""

    tensors: tuple[int | NewTensor, ...]
    operators: tuple[int | KeptOperator | NewOperator, ...]
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


# Every public function here takes the model as a path, bytes or a Model.
ModelInput = bytes | bytearray | memoryview | str | os.PathLike[str] | Model


def set_metadata(data: ModelInput, name: str, payload: bytes) -> bytes:
    """``data`` with metadata entry ``name`` added (or its bytes replaced) as ``payload``."""
    return rewrite_model(data, metadata={name: payload})


def reorder_operators(data: ModelInput, subgraph: int, order: Sequence[int]) -> bytes:
    """``data`` with subgraph ``subgraph``'s operators run in ``order`` (old indices)."""
    return rewrite_model(data, operator_order={subgraph: order})


def replace_subgraph(data: ModelInput, subgraph: int, replacement: SubgraphReplacement) -> bytes:
    return rewrite_model(data, subgraph_replacements={subgraph: replacement})


# -- validation ------------------------------------------------------------------------------

def _producers(ops: Sequence[tuple[str, tuple[int, ...], tuple[int, ...]]]) -> dict[int, int]:
    producers: dict[int, int] = {}
    for index, (_, _, outputs) in enumerate(ops):
        for t in outputs:
            producers.setdefault(t, index)
    return producers


def _check_order(where: str, ops: Sequence[tuple[str, tuple[int, ...], tuple[int, ...]]],
                 order: Sequence[int], variables: set[int]) -> None:
    """``order`` (indices into ``ops``) must run every producer before its consumers and keep
    the relative order of ops sharing a variable tensor and of stateful resource ops."""
    n = len(ops)
    if sorted(order) != list(range(n)):
        raise BuildError(f"{where}: operator order {list(order)} is not a permutation of "
                         f"0..{n - 1}; list every operator index exactly once")
    position = {op: i for i, op in enumerate(order)}
    producers = _producers(ops)
    for op in order:
        name, inputs, _ = ops[op]
        for t in inputs:
            producer = producers.get(t)
            if producer is not None and position[producer] > position[op] and producer != op:
                raise BuildError(
                    f"{where}: order is not topological: operator {op} ({name}) reads tensor {t}, "
                    f"which operator {producer} ({ops[producer][0]}) writes later; put "
                    f"{producer} before {op}")
    sharers: dict[object, list[int]] = {}
    for op, (name, inputs, outputs) in enumerate(ops):
        for t in set(inputs) | set(outputs):
            if t in variables:
                sharers.setdefault(("variable", t), []).append(op)
        if name in _STATEFUL_OPS:
            sharers.setdefault("resource", []).append(op)
    for key, members in sharers.items():
        placed = [position[m] for m in members]
        if placed != sorted(placed):
            what = (f"variable tensor {key[1]}" if isinstance(key, tuple)
                    else "resource variables (CALL_ONCE/VAR_HANDLE/READ/ASSIGN_VARIABLE)")
            raise BuildError(f"{where}: operators {members} share {what} and must keep their "
                             f"relative order; the new order runs them as "
                             f"{[m for _, m in sorted(zip(placed, members))]}")


def _op_tuples(model: Model, sg: int) -> list[tuple[str, tuple[int, ...], tuple[int, ...]]]:
    return [(op.name, op.inputs, op.outputs) for op in model.subgraphs[sg].operators]


# -- the rewrite ---------------------------------------------------------------------------

def rewrite_model(data: ModelInput, *, metadata: Mapping[str, bytes | int] | None = None,
                  operator_order: Mapping[int, Sequence[int]] | None = None,
                  subgraph_replacements: Mapping[int, SubgraphReplacement] | None = None
                  ) -> bytes:
    """The model ``data`` with the given edits; with no edits, ``data`` itself (as bytes).

    metadata: name -> payload bytes (a new buffer; an existing entry of that name is pointed at
    it, re-using its buffer slot when nothing else shares it) or -> an existing buffer index.
    operator_order: subgraph -> new order of its old operator indices.
    subgraph_replacements: subgraph -> SubgraphReplacement.
    """
    # A path or a Model is read (a Model keeps its file's bytes); bytes are used as they are.
    original = (bytes(read_model(data).raw) if isinstance(data, (str, os.PathLike, Model))
                else bytes(data))
    metadata = dict(metadata or {})
    operator_order = {int(k): list(v) for k, v in (operator_order or {}).items()}
    replacements = dict(subgraph_replacements or {})
    if not metadata and not operator_order and not replacements:
        return original
    try:
        model = read_model(original)
    except TinyArenaError as exc:
        raise BuildError(f"cannot rewrite: the input is not a readable model ({exc})") from exc
    root = FlatBuffer(memoryview(original)).root("Model")
    _validate(model, metadata, operator_order, replacements)
    return _write(original, model, root, metadata, operator_order, replacements)


def _validate(model: Model, metadata: Mapping[str, bytes | int],
              order: Mapping[int, Sequence[int]],
              replacements: Mapping[int, SubgraphReplacement]) -> None:
    n_sg = len(model.subgraphs)
    for name, value in metadata.items():
        if not isinstance(name, str) or not name:
            raise BuildError(f"metadata names must be non-empty strings, got {name!r}")
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
            if not 0 <= int(value) < len(model.buffers):
                raise BuildError(f"metadata {name!r}: buffer index {value} is out of range (the "
                                 f"model has {len(model.buffers)} buffers, 0..."
                                 f"{len(model.buffers) - 1})")
        elif not isinstance(value, (bytes, bytearray, memoryview)):
            raise BuildError(f"metadata {name!r}: give bytes or an existing buffer index, not "
                             f"{type(value).__name__}")
    for sg in list(order) + list(replacements):
        if not 0 <= sg < n_sg:
            raise BuildError(f"subgraph {sg} does not exist (the model has {n_sg})")
    for sg in order:
        if sg in replacements:
            raise BuildError(f"subgraph {sg}: give either an operator order or a replacement, "
                             "not both (a replacement lists its operators in order)")
        tensors = model.subgraphs[sg].tensors
        variables = {t.index for t in tensors if t.is_variable}
        _check_order(f"subgraph {sg}", _op_tuples(model, sg), order[sg], variables)
    for sg, rep in replacements.items():
        _validate_replacement(model, sg, rep)


def _validate_replacement(model: Model, sg: int, rep: SubgraphReplacement) -> None:
    old = model.subgraphs[sg]
    where = f"subgraph {sg} replacement"
    n = len(rep.tensors)
    for i, t in enumerate(rep.tensors):
        if isinstance(t, NewTensor):
            if t.buffer is not None and not 0 <= t.buffer < len(model.buffers):
                raise BuildError(f"{where}: tensor {i} ({t.name!r}) uses buffer {t.buffer}, which "
                                 "does not exist")
            if t.buffer is not None and t.data is not None:
                raise BuildError(f"{where}: tensor {i} gives both data and a buffer index")
            tensor_type(t.dtype)
        elif not isinstance(t, (int, np.integer)) or not 0 <= int(t) < len(old.tensors):
            raise BuildError(f"{where}: tensor entry {i} = {t!r} is neither a NewTensor nor an "
                             f"old tensor index (0..{len(old.tensors) - 1})")

    def check(indices: Sequence[int], what: str, optional: bool) -> None:
        for t in indices:
            if (optional and t == -1) or 0 <= t < n:
                continue
            raise BuildError(f"{where}: {what} refers to tensor {t}, outside the new tensor list "
                             f"of {n}")

    ops: list[tuple[str, tuple[int, ...], tuple[int, ...]]] = []
    for i, op in enumerate(rep.operators):
        if isinstance(op, NewOperator):
            name = op.op if isinstance(op.op, str) else str(op.op)
            ins, outs, inter = tuple(op.inputs), tuple(op.outputs), tuple(op.intermediates)
            custom = isinstance(op.op, str) and op.op.upper() not in _BUILTIN_CODES
            if op.custom_code is None and not custom:
                name = _BUILTIN_NAMES.get(builtin_code(op.op), name)
                encode_options(name, None, op.options)
        else:
            index = op.index if isinstance(op, KeptOperator) else op
            if not isinstance(index, (int, np.integer)) or not 0 <= index < len(old.operators):
                raise BuildError(f"{where}: operator entry {i} = {op!r} names no old operator "
                                 f"(0..{len(old.operators) - 1})")
            source = old.operators[int(index)]
            name = source.name
            kept = op if isinstance(op, KeptOperator) else KeptOperator(int(index))
            ins = source.inputs if kept.inputs is None else tuple(kept.inputs)
            outs = source.outputs if kept.outputs is None else tuple(kept.outputs)
            inter = source.intermediates if kept.intermediates is None else kept.intermediates
        check(ins, f"operator {i} ({name}) inputs", True)
        check(outs, f"operator {i} ({name}) outputs", False)
        check(inter, f"operator {i} ({name}) intermediates", True)
        ops.append((name, ins, outs))
    check(rep.inputs, "subgraph inputs", False)
    check(rep.outputs, "subgraph outputs", False)
    variables = set()
    for i, t in enumerate(rep.tensors):
        if isinstance(t, NewTensor):
            if t.is_variable:
                variables.add(i)
        elif old.tensors[int(t)].is_variable:
            variables.add(i)
    _check_order(where, ops, list(range(len(ops))), variables)
    for sig in model.signature_defs:
        if sig.subgraph_index == sg:
            for name, t in sig.inputs + sig.outputs:
                if not 0 <= t < n:
                    raise BuildError(f"{where}: signature {sig.signature_key!r} maps {name!r} to "
                                     f"tensor {t}, which the new tensor list does not have")


def _write(original: bytes, model: Model, root: Table, metadata: Mapping[str, bytes | int],
           order: Mapping[int, Sequence[int]],
           replacements: Mapping[int, SubgraphReplacement]) -> bytes:
    """Lay out the edit: new objects into the blob first, then the head, parents first."""
    splice = Splice(original[4:8])
    blob = splice.blob
    buffer_tables = root.tables("buffers")
    buffers: list[Any] = [Old(t.pos) for t in buffer_tables]

    def new_buffer(payload: bytes) -> Blob:
        data_off = _aligned_bytes(blob, payload, BUFFER_ALIGNMENT) if payload else None
        blob.StartObject(1)
        if data_off is not None:
            blob.PrependUOffsetTRelativeSlot(0, data_off, 0)
        return Blob(blob.EndObject())

    # Buffers whose data lies outside the flatbuffer are addressed from the file start: rebuilt
    # with the offset moved by the prefix length.
    for i, t in enumerate(buffer_tables):
        offset = int(t.scalar("offset"))
        if offset > 1:
            buffers[i] = ("moved", t, offset)

    # -- metadata
    metadata_tables = root.tables("metadata")
    metadata_refs: list[Any] = [Old(t.pos) for t in metadata_tables]
    names = [name for name, _ in model.metadata]
    uses: dict[int, int] = {}
    for subgraph in model.subgraphs:
        for tensor in subgraph.tensors:
            uses[tensor.buffer] = uses.get(tensor.buffer, 0) + 1
    for _, b in model.metadata:
        uses[b] = uses.get(b, 0) + 1
    for name, value in metadata.items():
        existing = names.index(name) if name in names else None
        if isinstance(value, (bytes, bytearray, memoryview)):
            payload = bytes(value)
            own = model.metadata[existing][1] if existing is not None else 0
            if own != 0 and uses.get(own, 0) == 1:
                buffers[own] = new_buffer(payload)  # the entry keeps its buffer slot
                continue
            buffers.append(new_buffer(payload))
            buffer_index = len(buffers) - 1
        else:
            buffer_index = int(value)
        if existing is not None:
            metadata_refs[existing] = ("metadata", metadata_tables[existing], buffer_index)
        else:
            name_off = blob.CreateString(name)
            blob.StartObject(2)
            blob.PrependUOffsetTRelativeSlot(0, name_off, 0)
            blob.PrependUint32Slot(1, buffer_index, 0)
            metadata_refs.append(Blob(blob.EndObject()))

    # -- operator codes (replacements may need new ones)
    code_tables = root.tables("operator_codes")
    known_codes = [_op_code_key(t) for t in code_tables]
    new_codes: list[OperatorCodeSpec] = []

    def opcode_index(code: int, custom: str | None, version: int) -> int:
        key = (code, custom, version)
        if key not in known_codes:
            known_codes.append(key)
            new_codes.append(OperatorCodeSpec(code, custom, version))
        return known_codes.index(key)

    # -- subgraphs
    subgraph_tables = root.tables("subgraphs")
    edits: dict[int, dict[str, Any]] = {}
    for sg, new_order in order.items():
        ops = subgraph_tables[sg].tables("operators")
        edits[sg] = {"operators": [Old(ops[i].pos) for i in new_order]}
    for sg, rep in replacements.items():
        edits[sg] = _replacement_items(splice, subgraph_tables[sg], rep, buffers, new_buffer,
                                       opcode_index)
    code_refs: list[Any] = [Old(t.pos) for t in code_tables]
    code_refs += [Blob(_write_operator_code(blob, spec)) for spec in new_codes]

    # -- the head: Model copy first, then what it points to
    vectors: dict[str, list[Any]] = {"buffers": buffers}
    if metadata:
        vectors["metadata"] = metadata_refs
    if new_codes:
        vectors["operator_codes"] = code_refs
    if edits:
        vectors["subgraphs"] = [("subgraph", t, edits[i]) if i in edits else Old(t.pos)
                                for i, t in enumerate(subgraph_tables)]
    model_table, positions = splice.copy_table(root, refs={name: None for name in vectors})
    splice.set_root(model_table)
    for name, items in vectors.items():
        splice.ref(positions[name], _vector(splice, items))
    return splice.finish(original)


def _vector(splice: Splice, items: Sequence[Any]) -> Target:
    """A vector of references in the head; rebuilt items are written after it (forward)."""
    head = splice.reserve_vector(len(items))
    for i, item in enumerate(items):
        splice.ref(head.pos + 4 + 4 * i, _materialise(splice, item))
    return head


def _materialise(splice: Splice, item: Any) -> Target:
    """The target of one vector element, writing rebuilt tables into the head as needed."""
    if not isinstance(item, tuple):
        return item
    kind, table = item[0], item[1]
    if kind == "moved":
        head, _ = splice.copy_table(table, shifted={"offset": item[2]})
        return head
    if kind == "metadata":
        head, _ = splice.copy_table(
            table, scalars={"buffer": scalar_bytes("Metadata", "buffer", item[2])})
        return head
    if kind == "subgraph":
        fields: dict[str, Any] = item[2]
        head, positions = splice.copy_table(table, refs={name: None for name in fields})
        for name, value in fields.items():
            if name in ("inputs", "outputs"):
                target: Target = splice.vector_of_ints(list(value))
            else:
                target = _vector(splice, value)
            splice.ref(positions[name], target)
        return head
    if kind == "kept_op":
        lists: dict[str, tuple[int, ...]] = item[2]
        head, positions = splice.copy_table(table, refs={name: None for name in lists})
        for name, values in lists.items():
            splice.ref(positions[name], splice.vector_of_ints(list(values)))
        return head
    raise AssertionError(kind)


def _op_code_key(table: Table) -> tuple[int, str | None, int]:
    code = max(int(table.scalar("deprecated_builtin_code")), int(table.scalar("builtin_code")))
    return code, table.string("custom_code"), int(table.scalar("version"))


def _replacement_items(splice: Splice, table: Table, rep: SubgraphReplacement,
                       buffers: list[Any], new_buffer: Any, opcode_index: Any
                       ) -> dict[str, Any]:
    blob = splice.blob
    old_tensors = table.tables("tensors")
    old_ops = table.tables("operators")
    tensor_refs: list[Any] = []
    for t in rep.tensors:
        if not isinstance(t, NewTensor):
            tensor_refs.append(Old(old_tensors[int(t)].pos))
            continue
        ttype = tensor_type(t.dtype)
        buffer_index = 0 if t.buffer is None else int(t.buffer)
        if t.data is not None:
            buffers.append(new_buffer(encode_constant(np.asarray(t.data), ttype)))
            buffer_index = len(buffers) - 1
        q = _quant_spec(t.scale, t.zero_point, t.quantized_dimension)
        spec = TensorSpec(t.name, int(ttype), tuple(int(d) for d in t.shape), buffer_index, q,
                          t.is_variable, t.shape_signature)
        tensor_refs.append(Blob(_write_tensor(blob, spec)))
    op_refs: list[Any] = []
    for op in rep.operators:
        if isinstance(op, NewOperator):
            custom, name = op.custom_code, op.op
            if isinstance(name, str) and name.upper() not in _BUILTIN_CODES and custom is None:
                custom, name = name, "CUSTOM"
            code = builtin_code(name)
            options = None if custom is not None else encode_options(
                _BUILTIN_NAMES[code], None, op.options)
            spec_op = OperatorSpec(opcode_index(code, custom, op.version), tuple(op.inputs),
                                   tuple(op.outputs), tuple(op.intermediates), options,
                                   op.custom_options)
            op_refs.append(Blob(_write_operator(blob, spec_op)))
        elif isinstance(op, KeptOperator):
            lists = {name: tuple(getattr(op, name)) for name in
                     ("inputs", "outputs", "intermediates") if getattr(op, name) is not None}
            source = old_ops[op.index]
            op_refs.append(("kept_op", source, lists) if lists else Old(source.pos))
        else:
            op_refs.append(Old(old_ops[int(op)].pos))
    return {"tensors": tensor_refs, "operators": op_refs, "inputs": list(rep.inputs),
            "outputs": list(rep.outputs)}
