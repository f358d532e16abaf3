"""A small, bounds-checked flatbuffer table reader driven by the schema description.

Why not the ``flatbuffers`` runtime: its accessors trust every offset, so a truncated or corrupt
file surfaces as ``IndexError``/``struct.error`` (or garbage) far from the cause. Here every read
is checked against the buffer length first and failures raise ``ModelError`` naming the field
path (``Model.subgraphs[0].tensors[12].shape``), the offset and the file size.

Flatbuffer layout facts used (all little-endian):

* the file starts with a uint32 offset to the root table, then (optionally) a 4-byte file
  identifier;
* a table starts with an int32 ``soffset``; its vtable sits at ``table - soffset`` and holds
  uint16 ``vtable_size``, uint16 ``table_size``, then one uint16 per field slot (0 = absent)
  giving the field's position relative to the table start;
* a reference field (table, vector, string) holds a uint32 offset relative to the field itself;
* a vector (and a string) is a uint32 element count followed by the elements; vectors of tables
  hold one uint32 offset per element, relative to that element; strings end with a zero byte;
* a union field is two slots: a uint8 type code, then a reference to the member table.

Offsets to tables, vectors and strings are unsigned and point forward, and the schema fixes the
nesting depth, so walking a file cannot loop or recurse without bound.
"""

from __future__ import annotations

import struct
from types import MappingProxyType
from typing import Mapping

import numpy as np

from tinyarena.errors import ModelError
from tinyarena.model._schema import ENUMS, SCALAR_SIZES, TABLES, UNIONS, FieldDef

_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")

_SCALAR_STRUCTS: Mapping[str, struct.Struct] = MappingProxyType({
    "bool": struct.Struct("<B"), "int8": struct.Struct("<b"), "uint8": struct.Struct("<B"),
    "int16": struct.Struct("<h"), "uint16": struct.Struct("<H"), "int32": struct.Struct("<i"),
    "uint32": struct.Struct("<I"), "int64": struct.Struct("<q"), "uint64": struct.Struct("<Q"),
    "float32": struct.Struct("<f"), "float64": struct.Struct("<d"),
})

_SCALAR_DTYPES: Mapping[str, np.dtype] = MappingProxyType({
    "bool": np.dtype("?"), "int8": np.dtype("i1"), "uint8": np.dtype("u1"),
    "int16": np.dtype("<i2"), "uint16": np.dtype("<u2"), "int32": np.dtype("<i4"),
    "uint32": np.dtype("<u4"), "int64": np.dtype("<i8"), "uint64": np.dtype("<u8"),
    "float32": np.dtype("<f4"), "float64": np.dtype("<f8"),
})

# table name -> field name -> FieldDef, built once from the schema description.
_FIELDS: Mapping[str, Mapping[str, FieldDef]] = MappingProxyType({
    table: MappingProxyType({f.name: f for f in fields}) for table, fields in TABLES.items()
})


def scalar_type(definition: FieldDef) -> str:
    """The stored scalar type of a scalar, enum or union-type field ("int32", "uint8", ...)."""
    if definition.kind == "enum":
        return ENUMS[definition.type].scalar
    if definition.kind == "union_type":
        return "uint8"
    return definition.type


class FlatBuffer:
    """Bytes plus checked primitive reads. ``data`` must be a 1-D byte memoryview."""

    __slots__ = ("data", "size")

    def __init__(self, data: memoryview) -> None:
        self.data = data
        self.size = len(data)

    def check(self, pos: int, length: int, what: str) -> None:
        """Raise ModelError unless ``length`` bytes at ``pos`` lie inside the buffer."""
        if pos < 0 or length < 0 or pos + length > self.size:
            raise ModelError(
                f"truncated or corrupt: {what} at offset {pos} (+{length} bytes) points past the "
                f"end of the {self.size}-byte file; the file is damaged or not a TFLite model")

    def unpack(self, fmt: struct.Struct, pos: int, what: str) -> int | float:
        self.check(pos, fmt.size, what)
        return fmt.unpack_from(self.data, pos)[0]

    def deref(self, pos: int, what: str) -> int:
        """Follow the uint32 forward offset stored at ``pos``; return the absolute target."""
        return pos + int(self.unpack(_U32, pos, what))

    def root(self, table: str) -> Table:
        """The root table (offset stored in the first 4 bytes), read as schema table ``table``."""
        return Table(self, self.deref(0, "root table offset"), table, table)


class Table:
    """One flatbuffer table, read as the schema table ``schema``; ``where`` names it in errors."""

    __slots__ = ("fb", "pos", "vtable", "vtable_size", "table_size", "schema", "where", "_fields")

    def __init__(self, fb: FlatBuffer, pos: int, schema: str, where: str) -> None:
        self.fb = fb
        self.pos = pos
        self.schema = schema
        self.where = where
        self._fields = _FIELDS[schema]
        soffset = int(fb.unpack(_I32, pos, f"{where} (table)"))
        vtable = pos - soffset
        self.vtable = vtable
        self.vtable_size = int(fb.unpack(_U16, vtable, f"{where} (vtable)"))
        self.table_size = int(fb.unpack(_U16, vtable + 2, f"{where} (vtable)"))
        if self.vtable_size < 4 or self.vtable_size % 2:
            raise ModelError(
                f"corrupt: {where} has a vtable of {self.vtable_size} bytes at offset {vtable} "
                "(must be even and at least 4); the file is damaged or not a TFLite model")
        fb.check(vtable, self.vtable_size, f"{where} (vtable)")
        if self.table_size < 4:
            raise ModelError(
                f"corrupt: {where} at offset {pos} claims {self.table_size} bytes of inline data "
                "(at least 4 needed); the file is damaged or not a TFLite model")
        fb.check(pos, self.table_size, f"{where} (table data)")

    # -- field lookup ------------------------------------------------------------------------

    def _definition(self, name: str) -> FieldDef:
        return self._fields[name]

    def _field_pos(self, definition: FieldDef, width: int) -> int:
        """Absolute position of the field's inline value, or 0 when the field is absent."""
        entry = 4 + 2 * definition.slot
        if entry + 2 > self.vtable_size:
            return 0
        rel = int(_U16.unpack_from(self.fb.data, self.vtable + entry)[0])
        if rel == 0:
            return 0
        if rel + width > self.table_size:
            raise ModelError(
                f"corrupt: field {self.where}.{definition.name} lies at byte {rel} of a "
                f"{self.table_size}-byte table (offset {self.pos}); the file is damaged")
        return self.pos + rel

    def has(self, name: str) -> bool:
        definition = self._definition(name)
        width = 4 if definition.kind in ("string", "table", "union") or definition.vector else \
            SCALAR_SIZES[scalar_type(definition)]
        return self._field_pos(definition, width) != 0

    def _ref(self, definition: FieldDef) -> int:
        """Absolute target of a reference field, or 0 when absent."""
        pos = self._field_pos(definition, 4)
        if pos == 0:
            return 0
        return self.fb.deref(pos, f"{self.where}.{definition.name}")

    # -- scalars -----------------------------------------------------------------------------

    def scalar(self, name: str) -> int | float | bool:
        """A scalar, enum (integer code) or union-type field; the schema default when absent."""
        definition = self._definition(name)
        kind = scalar_type(definition)
        fmt = _SCALAR_STRUCTS[kind]
        pos = self._field_pos(definition, fmt.size)
        if pos == 0:
            default = definition.default
            return default if default is not None else 0
        value = fmt.unpack_from(self.fb.data, pos)[0]
        return bool(value) if kind == "bool" else value

    # -- references --------------------------------------------------------------------------

    def string(self, name: str) -> str | None:
        """A UTF-8 string field, or None when absent."""
        definition = self._definition(name)
        target = self._ref(definition)
        if target == 0:
            return None
        raw = self._string_bytes(target, f"{self.where}.{name}")
        try:
            return str(raw, "utf-8")
        except UnicodeDecodeError as exc:
            raise ModelError(
                f"corrupt: string {self.where}.{name} at offset {target} is not valid UTF-8 "
                f"({exc.reason} at byte {exc.start}); the file is damaged") from None

    def _string_bytes(self, target: int, what: str) -> memoryview:
        length = int(self.fb.unpack(_U32, target, f"{what} (string length)"))
        self.fb.check(target + 4, length + 1, f"{what} (string of {length} bytes)")
        if self.fb.data[target + 4 + length] != 0:
            raise ModelError(f"corrupt: string {what} at offset {target} is not zero-terminated; "
                             "the file is damaged")
        return self.fb.data[target + 4:target + 4 + length]

    def table(self, name: str) -> Table | None:
        """A sub-table field, or None when absent."""
        definition = self._definition(name)
        target = self._ref(definition)
        if target == 0:
            return None
        return Table(self.fb, target, definition.type, f"{self.where}.{name}")

    def _vector(self, definition: FieldDef, element_size: int) -> tuple[int, int] | None:
        """(start of elements, count) of a vector field, or None when absent; bounds checked."""
        target = self._ref(definition)
        if target == 0:
            return None
        what = f"{self.where}.{definition.name}"
        count = int(self.fb.unpack(_U32, target, f"{what} (vector length)"))
        if count * element_size > self.fb.size:
            raise ModelError(
                f"corrupt: vector {what} at offset {target} claims {count} elements of "
                f"{element_size} bytes, more than the whole {self.fb.size}-byte file")
        self.fb.check(target + 4, count * element_size, f"{what} ({count} elements)")
        return target + 4, count

    def array(self, name: str) -> np.ndarray | None:
        """A vector of scalars or enums as a read-only zero-copy numpy array; None when absent."""
        definition = self._definition(name)
        dtype = _SCALAR_DTYPES[scalar_type(definition)]
        located = self._vector(definition, dtype.itemsize)
        if located is None:
            return None
        start, count = located
        if dtype.kind == "b":  # flatbuffer bools are bytes; any non-zero byte means true
            raw = np.frombuffer(self.fb.data, np.uint8, count, start)
            return raw != 0
        values = np.frombuffer(self.fb.data, dtype, count, start)
        values.flags.writeable = False
        return values

    def ints(self, name: str) -> tuple[int, ...] | None:
        """A vector of integers as a tuple of Python ints; None when absent."""
        values = self.array(name)
        return None if values is None else tuple(values.tolist())

    def bytes_view(self, name: str) -> memoryview | None:
        """A [ubyte] vector as a zero-copy memoryview; None when absent."""
        definition = self._definition(name)
        located = self._vector(definition, 1)
        if located is None:
            return None
        start, count = located
        return self.fb.data[start:start + count]

    def tables(self, name: str) -> tuple[Table, ...]:
        """A vector of tables (empty when absent)."""
        definition = self._definition(name)
        located = self._vector(definition, 4)
        if located is None:
            return ()
        start, count = located
        base = f"{self.where}.{name}"
        return tuple(
            Table(self.fb, self.fb.deref(start + 4 * i, f"{base}[{i}]"), definition.type,
                  f"{base}[{i}]")
            for i in range(count))

    def strings(self, name: str) -> tuple[str, ...]:
        """A vector of strings (empty when absent)."""
        definition = self._definition(name)
        located = self._vector(definition, 4)
        if located is None:
            return ()
        start, count = located
        out = []
        for i in range(count):
            what = f"{self.where}.{name}[{i}]"
            raw = self._string_bytes(self.fb.deref(start + 4 * i, what), what)
            try:
                out.append(str(raw, "utf-8"))
            except UnicodeDecodeError:
                raise ModelError(f"corrupt: string {what} is not valid UTF-8") from None
        return tuple(out)

    def union(self, name: str) -> tuple[int, Table | None]:
        """(type code, member table) of a union field.

        The table is None when the type is NONE (0), when the value is absent, or when the code is
        beyond the members this schema knows (a newer file): callers decide what that means.
        """
        definition = self._definition(name)
        code = int(self.scalar(f"{name}_type"))
        members = UNIONS[definition.type]
        if code == 0 or code > len(members):
            return code, None
        target = self._ref(definition)
        if target == 0:
            return code, None
        member = members[code - 1]
        return code, Table(self.fb, target, member, f"{self.where}.{name}<{member}>")
