"""Encoding builtin options given as keywords (or as a reader options dataclass) into a table.

The schema facts (slots, scalar types, defaults, enum names, union codes, which op reads which
table) come from ``tinyarena.model._schema`` and ``tinyarena.model.options``, the descriptions
the reader decodes with, so a model written here
reads back with the same options. Keyword names are the schema field names in snake_case and enum
values are their schema names ("SAME", "RELU6"); integers are accepted for enums as well.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping

import numpy as np

from tinyarena.builder._dtypes import tensor_type
from tinyarena.builder._writer import OptionField, OptionsTable
from tinyarena.errors import BuildError
from tinyarena.model import _schema
from tinyarena.model.options import OP_OPTIONS_TABLE, OPTIONS_SPECS


def options_table_name(op_name: str) -> tuple[str, int, int] | None:
    """(table, union type code, Operator union slot) of ``op_name``'s options, or None.

    The pairing of ops and tables is the reader's (``model.options.OP_OPTIONS_TABLE``), so a
    model written here decodes to the options it was given.
    """
    table = OP_OPTIONS_TABLE.get(op_name)
    if table is None:
        return None
    spec = OPTIONS_SPECS[table]
    type_field = ("builtin_options_type" if spec.union == "BuiltinOptions"
                  else "builtin_options_2_type")
    return table, spec.type_code, _schema.slot("Operator", type_field)


def _enum_value(enum_name: str, value: Any, field_name: str) -> int:
    if enum_name == "TensorType" and not isinstance(value, (int, np.integer)):
        return int(tensor_type(value))
    enum = _schema.ENUMS[enum_name]
    if isinstance(value, str):
        for name, number in enum.values:
            if name == value or name == value.upper():
                return number
        names = ", ".join(n for n, _ in enum.values)
        raise BuildError(f"option {field_name}={value!r} is not a {enum_name}; use one of {names}")
    if isinstance(value, (int, np.integer)) and not isinstance(value, bool):
        if int(value) not in {number for _, number in enum.values}:
            raise BuildError(f"option {field_name}={value} is not a valid {enum_name} value")
        return int(value)
    raise BuildError(f"option {field_name} takes a {enum_name} name, got {value!r}")


def _encode_field(table: str, fdef: _schema.FieldDef, value: Any) -> OptionField:
    if fdef.kind in ("table", "union", "union_type"):
        raise BuildError(f"{table}.{fdef.name} holds a sub-table, which the builder cannot write")
    if fdef.kind == "string":
        return OptionField(fdef.slot, "string", None if value is None else str(value))
    if fdef.kind == "enum":
        scalar = _schema.ENUMS[fdef.type].scalar
        if fdef.vector:
            values = [_enum_value(fdef.type, v, fdef.name) for v in value]
            return OptionField(fdef.slot, f"[{scalar}]", values)
        return OptionField(fdef.slot, scalar, _enum_value(fdef.type, value, fdef.name),
                           fdef.default)
    if fdef.vector:
        return OptionField(fdef.slot, f"[{fdef.type}]", None if value is None else list(value))
    if fdef.type == "bool":
        return OptionField(fdef.slot, "bool", bool(value), fdef.default)
    if fdef.type.startswith("float"):
        return OptionField(fdef.slot, fdef.type, float(value), fdef.default)
    return OptionField(fdef.slot, fdef.type, int(value), fdef.default)


def _as_mapping(options: Any) -> dict[str, Any]:
    if options is None:
        return {}
    if isinstance(options, Mapping):
        return dict(options)
    if dataclasses.is_dataclass(options) and not isinstance(options, type):
        return {f.name: getattr(options, f.name) for f in dataclasses.fields(options)}
    raise BuildError(f"options must be a mapping or an options dataclass, got {type(options)}")


def encode_options(op_name: str, options: Any, keywords: Mapping[str, Any]) -> OptionsTable | None:
    """The options table for one operator, from an options object and/or keywords.

    Ops with an options table always get one written (with defaults where nothing was given),
    as the converter does. Unknown keywords raise BuildError naming the valid ones.
    """
    values = _as_mapping(options)
    values.update(keywords)
    found = options_table_name(op_name)
    if found is None:
        if values:
            raise BuildError(
                f"operator {op_name} has no builtin options, but got {sorted(values)}"
            )
        return None
    table, union_type, union_slot = found
    defs = {f.name: f for f in _schema.TABLES[table]}
    unknown = sorted(set(values) - set(defs))
    if unknown:
        raise BuildError(
            f"{op_name} ({table}) has no option(s) {unknown}; valid: {sorted(defs)}"
        )
    fields = []
    for name, value in values.items():
        if value is None or defs[name].deprecated:
            continue
        fields.append(_encode_field(table, defs[name], value))
    return OptionsTable(union_type, tuple(fields), union_slot)
