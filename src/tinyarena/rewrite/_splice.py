"""Byte-level machinery of the rewriter: a new head spliced in front of the untouched old file.

Layout of a rewritten file::

    [root uoffset][file identifier][rebuilt tables and vectors][blob of new objects][pad]
    [the original file, byte for byte]

Why this shape. Flatbuffer offsets are unsigned and point forward, and a reader cannot tell an
offset from a scalar in a field its schema does not know. So everything the edit does not touch
stays where it is, inside the verbatim copy of the original, and keeps every internal offset
valid because the copy moves as one block. Only the tables *on the path* from the root to an
edited object are rebuilt (the Model, an edited SubGraph, an Operator whose tensor lists change),
and they must sit in front of the old bytes so that they can point forward into them.

A rebuilt table is a copy of the old table's inline bytes (so every scalar, known or not, keeps
its value and alignment); its known reference fields are re-pointed at the shifted targets, or at
replacements. A field the schema does not know may be a reference, whose value is relative to its
own position and would be wrong once copied; so the new table's vtable entry for such a field
points at the field *in the old table* (a vtable entry is a uint16 distance from the table start,
and the verifier only checks that fields lie inside the buffer). A reader that knows the field
then reads exactly the old bytes, and an offset there still reaches its old target. That needs
the old field to lie within 65535 bytes of the new table; otherwise the rewrite fails with
BuildError instead of guessing.

The prefix is padded to a multiple of 16 bytes, so every old buffer keeps its alignment modulo 16
(TFLM and LiteRT read constant data in place). New objects (tables, strings, buffer data) are
serialised with ``flatbuffers.Builder`` into a blob whose end is 16-byte aligned, so the 16-byte
alignment the builder gives buffer data holds in the final file too. A Buffer whose data lives
outside the flatbuffer (``offset`` > 1, counted from the file start) is rebuilt with its offset
moved by the prefix length.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass

import flatbuffers

from tinyarena._util import align_up
from tinyarena.errors import BuildError
from tinyarena.model._flatbuf import Table, scalar_type
from tinyarena.model._schema import SCALAR_SIZES, TABLES

PREFIX_ALIGNMENT = 16
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")


@dataclass(frozen=True)
class Old:
    """A position in the original file (moves by the prefix length)."""

    pos: int


@dataclass(frozen=True)
class Head:
    """A position in the rebuilt-tables region (final position as written)."""

    pos: int


@dataclass(frozen=True)
class Blob:
    """An object in the new-objects blob, by its flatbuffers.Builder offset (from the blob end)."""

    offset: int


Target = Old | Head | Blob


class Splice:
    """Accumulates the new head; ``finish(old_bytes)`` lays everything out and resolves offsets."""

    def __init__(self, identifier: bytes) -> None:
        self.head = bytearray(8)
        self.head[4:8] = identifier
        self.blob = flatbuffers.Builder(1024)
        self._refs: list[tuple[int, Target]] = []  # (uoffset position in head, target)
        self._aliases: list[tuple[int, int, int, int]] = []  # vtable entry, table, old field, cover
        self._sizes: list[tuple[int, int, int]] = []  # vtable size-field pos, table pos, min size
        self._shifted: list[tuple[int, int]] = []  # uint64 position, value before the shift
        self._root: Target | None = None

    # -- writing the head -------------------------------------------------------------------
    def _put(self, data: bytes, align: int, mod: int = 0) -> int:
        while len(self.head) % align != mod % align:
            self.head.append(0)
        pos = len(self.head)
        self.head += data
        return pos

    def ref(self, at: int, target: Target) -> None:
        """Store at ``at`` (in the head) a uoffset to ``target``, resolved in ``finish``."""
        self._refs.append((at, target))

    def set_root(self, target: Target) -> None:
        self._root = target

    def vector_of_refs(self, targets: list[Target]) -> Head:
        pos = self._put(_U32.pack(len(targets)) + bytes(4 * len(targets)), 4)
        for i, target in enumerate(targets):
            self.ref(pos + 4 + 4 * i, target)
        return Head(pos)

    def reserve_vector(self, count: int) -> Head:
        """A vector of ``count`` references whose elements the caller sets with ``ref``."""
        return Head(self._put(_U32.pack(count) + bytes(4 * count), 4))

    def vector_of_ints(self, values: list[int]) -> Head:
        data = _U32.pack(len(values)) + b"".join(_I32.pack(int(v)) for v in values)
        return Head(self._put(data, 4))

    def copy_table(self, old: Table, *, refs: dict[str, Target | None] | None = None,
                   scalars: dict[str, bytes] | None = None,
                   shifted: dict[str, int] | None = None) -> tuple[Head, dict[str, int]]:
        """A copy of ``old`` in the head, with some fields replaced.

        ``refs``: reference fields to point elsewhere (None: the caller calls ``ref`` on the
        returned position later). ``scalars``: raw little-endian bytes for scalar fields.
        ``shifted``: uint64 fields set to value + prefix length (file-start-relative offsets).
        Returns the table and the positions of the replaced fields. Unknown fields are aliased
        to the old bytes (module docstring).
        """
        refs, scalars, shifted = refs or {}, scalars or {}, shifted or {}
        fb = old.fb
        slots_old = (old.vtable_size - 4) // 2
        entries = [int(_U16.unpack_from(fb.data, old.vtable + 4 + 2 * s)[0])
                   for s in range(slots_old)]
        known = {f.slot: f for f in TABLES[old.schema]}
        by_name = {f.name: f for f in TABLES[old.schema]}
        widths = {name: 4 for name in refs}
        widths.update({name: len(value) for name, value in scalars.items()})
        widths.update({name: 8 for name in shifted})
        inline = bytearray(fb.data[old.pos:old.pos + old.table_size])
        rel_of: dict[int, int] = {}
        for name, width in widths.items():
            slot_index = by_name[name].slot
            if slot_index < slots_old and entries[slot_index]:
                rel_of[slot_index] = entries[slot_index]
            else:  # absent in the old table: append room for it
                while len(inline) % width:
                    inline.append(0)
                rel_of[slot_index] = len(inline)
                inline += bytes(width)
        slots = max([slots_old, *[s + 1 for s in rel_of]])
        vt_len = 4 + 2 * slots
        if len(self.head) % 2:
            self.head.append(0)
        want = old.pos % 8 - old.pos % 2  # tables are 4-aligned; guard odd positions anyway
        while (len(self.head) + vt_len) % 8 != want:
            self.head += b"\0\0"
        vt_pos = self._put(bytes(vt_len), 2)
        table_pos = self._put(bytes(inline), 1)
        _I32.pack_into(self.head, table_pos, table_pos - vt_pos)
        positions: dict[str, int] = {}
        for s in range(slots):
            rel = rel_of.get(s, entries[s] if s < slots_old else 0)
            if s in rel_of:
                pass
            elif rel == 0:
                pass
            elif s not in known:
                self._aliases.append((vt_pos + 4 + 2 * s, table_pos, old.pos + rel,
                                      old.pos + old.table_size))
                rel = 0
            else:
                definition = known[s]
                if definition.kind in ("string", "table", "union") or definition.vector:
                    self.ref(table_pos + rel, Old(fb.deref(old.pos + rel, "field")))
            _U16.pack_into(self.head, vt_pos + 4 + 2 * s, rel)
        for name in widths:
            pos = table_pos + rel_of[by_name[name].slot]
            positions[name] = pos
            if (target := refs.get(name)) is not None:
                self.ref(pos, target)
            elif name in scalars:
                self.head[pos:pos + len(scalars[name])] = scalars[name]
            elif name in shifted:
                self._shifted.append((pos, shifted[name]))
        _U16.pack_into(self.head, vt_pos, vt_len)
        _U16.pack_into(self.head, vt_pos + 2, len(inline))
        self._sizes.append((vt_pos + 2, table_pos, len(inline)))
        return Head(table_pos), positions

    # -- layout -----------------------------------------------------------------------------
    def finish(self, old: bytes | memoryview) -> bytes:
        blob = bytes(self.blob.Bytes[self.blob.head:])
        blob_start = align_up(len(self.head) + len(blob), PREFIX_ALIGNMENT) - len(blob)
        shift = blob_start + len(blob)
        assert shift % PREFIX_ALIGNMENT == 0
        out = bytearray(shift)
        out[:len(self.head)] = self.head
        out[blob_start:shift] = blob

        def resolve(target: Target) -> int:
            if isinstance(target, Old):
                return target.pos + shift
            if isinstance(target, Head):
                return target.pos
            return shift - target.offset

        for at, target in self._refs:
            dest = resolve(target)
            if dest <= at:
                raise BuildError(f"internal layout error: offset at {at} would point backwards")
            _U32.pack_into(out, at, dest - at)
        for entry_pos, table_pos, old_field, old_end in self._aliases:
            rel = old_field + shift - table_pos
            cover = old_end + shift - table_pos
            if cover > 0xFFFF:
                raise BuildError(
                    "the model has a field this schema does not know in a table the edit must "
                    f"rebuild, and its old position is {rel} bytes away (more than 65535): it "
                    "cannot be preserved without knowing its type; edit with a tinyarena "
                    "version whose schema knows the field")
            _U16.pack_into(out, entry_pos, rel)
        for size_pos, table_pos, size in self._sizes:
            cover = max([size] + [old_end + shift - table_pos
                                  for _, t, _, old_end in self._aliases if t == table_pos])
            _U16.pack_into(out, size_pos, cover)
        for pos, value in self._shifted:
            struct.pack_into("<Q", out, pos, value + shift)
        if self._root is None:
            raise BuildError("internal error: no root table")
        _U32.pack_into(out, 0, resolve(self._root))
        return bytes(out) + bytes(old)


def scalar_bytes(table: str, name: str, value: int) -> bytes:
    """Little-endian bytes of ``value`` as ``table.name`` stores it."""
    definition = next(f for f in TABLES[table] if f.name == name)
    kind = scalar_type(definition)
    code = {"bool": "<B", "int8": "<b", "uint8": "<B", "int16": "<h", "uint16": "<H",
            "int32": "<i", "uint32": "<I", "int64": "<q", "uint64": "<Q"}[kind]
    assert struct.calcsize(code) == SCALAR_SIZES[kind]
    return struct.pack(code, value)
