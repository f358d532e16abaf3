"""Builtin options: the schema description and dataclasses against the wheel's generated schema.

Independent references: the flatc-generated module of the live tflite-micro wheel (its enum
classes, union type codes, vtable offsets in accessor methods, object-API defaults, and its
writer), and facts read from TFLM's flatbuffer_conversions.cc (which table each op reads).
"""

from __future__ import annotations

import dataclasses
import inspect
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tflm_oracle import shared_model_bytes

from tinyarena.errors import ModelError
from tinyarena.model import read_model
from tinyarena.model import options as opts
from tinyarena.model._schema import ENUMS, TABLES


def camel(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in name.split("_"))


def lower_camel(name: str) -> str:
    upper = camel(name)
    return upper[:1].lower() + upper[1:]


def wheel_enum(schema_fb: Any, enum_name: str) -> dict[int, str]:
    return {v: k for k, v in vars(getattr(schema_fb, enum_name)).items() if not k.startswith("_")}


def expected_from_wheel(spec: opts.OptionsSpec, wheel_options: Any, schema_fb: Any) -> Any:
    """Build our dataclass from a wheel XxxOptionsT object, converting only representation."""
    values = {}
    for field in spec.fields:
        value = getattr(wheel_options, lower_camel(field.name))
        if field.enum is not None:
            names = wheel_enum(schema_fb, field.enum)
            value = tuple(names[int(v)] for v in value) if field.vector and value is not None \
                else (names[int(value)] if not field.vector else ())
        elif field.vector:
            value = () if value is None else tuple(np.asarray(value).tolist())
        elif field.scalar == "string":
            value = value.decode() if isinstance(value, bytes) else value
        elif field.scalar == "float32":
            value = float(np.float32(value))
        values[field.name] = value
    return spec.cls(**values)


# ---- the schema description against the generated code --------------------------------------


def test_builtin_operator_enum_matches_wheel(schema_fb: Any) -> None:
    wheel = {k: v for k, v in vars(schema_fb.BuiltinOperator).items() if not k.startswith("_")}
    ours = {member.name: member.value for member in opts.BuiltinOperator}
    assert wheel.items() <= ours.items()
    assert opts.BuiltinOperator.CONV_2D == 3 and opts.BuiltinOperator(32).name == "CUSTOM"


@pytest.mark.parametrize("union", opts.OPTIONS_UNIONS)
def test_union_type_codes_match_wheel(schema_fb: Any, union: str) -> None:
    wheel = {k: v for k, v in vars(getattr(schema_fb, union)).items()
             if not k.startswith("_") and k != "NONE"}
    ours = {name: spec.type_code for name, spec in opts.OPTIONS_SPECS.items()
            if spec.union == union}
    assert wheel.items() <= ours.items()
    assert len(wheel) > 10


def test_enums_match_wheel(schema_fb: Any) -> None:
    checked = 0
    for name, definition in ENUMS.items():
        if not hasattr(schema_fb, name):
            continue
        assert wheel_enum(schema_fb, name).items() <= {v: k for k, v in definition.values}.items()
        checked += 1
    assert checked >= 12


def test_field_slots_match_generated_vtable_offsets(schema_fb: Any) -> None:
    """Each generated accessor reads ``self._tab.Offset(4 + 2 * slot)``."""
    checked = 0
    for table, fields in TABLES.items():
        cls = getattr(schema_fb, table, None)
        if cls is None:
            continue
        for field in fields:
            method = getattr(cls, camel(field.name), None)
            if field.deprecated or method is None:
                continue
            found = re.search(r"Offset\((\d+)\)", inspect.getsource(method))
            assert found, f"{table}.{field.name}"
            assert int(found.group(1)) == 4 + 2 * field.slot, f"{table}.{field.name}"
            checked += 1
    assert checked > 300


def test_dataclass_defaults_match_wheel_object_api(schema_fb: Any) -> None:
    for name, spec in opts.OPTIONS_SPECS.items():
        wheel_cls = getattr(schema_fb, name + "T", None)
        if wheel_cls is None:
            continue
        wheel_default = wheel_cls()
        wheel_fields = {k for k in vars(wheel_default)}
        assert {lower_camel(f.name) for f in spec.fields} == wheel_fields, name
        assert spec.cls() == expected_from_wheel(spec, wheel_default, schema_fb), name


def test_required_ops_have_options() -> None:
    """Which table each op reads, as TFLM's flatbuffer_conversions.cc parses it."""
    facts = {
        "CONV_2D": "Conv2DOptions", "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
        "FULLY_CONNECTED": "FullyConnectedOptions", "AVERAGE_POOL_2D": "Pool2DOptions",
        "MAX_POOL_2D": "Pool2DOptions", "L2_POOL_2D": "Pool2DOptions",
        "SOFTMAX": "SoftmaxOptions", "ADD": "AddOptions", "SUB": "SubOptions",
        "MUL": "MulOptions", "DIV": "DivOptions", "RESHAPE": "ReshapeOptions",
        "SQUEEZE": "SqueezeOptions", "STRIDED_SLICE": "StridedSliceOptions",
        "CONCATENATION": "ConcatenationOptions", "MEAN": "ReducerOptions",
        "SUM": "ReducerOptions", "REDUCE_MAX": "ReducerOptions", "REDUCE_MIN": "ReducerOptions",
        "REDUCE_PROD": "ReducerOptions", "SVDF": "SVDFOptions",
        "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
        "LSTM": "LSTMOptions", "TRANSPOSE_CONV": "TransposeConvOptions",
        "CONV_3D": "Conv3DOptions", "LEAKY_RELU": "LeakyReluOptions", "GATHER": "GatherOptions",
        "PACK": "PackOptions", "UNPACK": "UnpackOptions", "SPLIT": "SplitOptions",
        "SPLIT_V": "SplitVOptions", "SHAPE": "ShapeOptions", "ARG_MAX": "ArgMaxOptions",
        "ARG_MIN": "ArgMinOptions", "CAST": "CastOptions", "IF": "IfOptions",
        "WHILE": "WhileOptions", "CALL_ONCE": "CallOnceOptions",
        "VAR_HANDLE": "VarHandleOptions", "BATCH_MATMUL": "BatchMatMulOptions",
        "RESIZE_BILINEAR": "ResizeBilinearOptions",
        "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
        "MIRROR_PAD": "MirrorPadOptions", "DEPTH_TO_SPACE": "DepthToSpaceOptions",
        "SPACE_TO_DEPTH": "SpaceToDepthOptions", "L2_NORMALIZATION": "L2NormOptions",
        "CUMSUM": "CumsumOptions", "PAD": "PadOptions", "PADV2": "PadV2Options",
        "EXPAND_DIMS": "ExpandDimsOptions", "HARD_SWISH": "HardSwishOptions",
        "TRANSPOSE": "TransposeOptions", "QUANTIZE": "QuantizeOptions",
        "DEQUANTIZE": "DequantizeOptions", "STABLEHLO_PAD": "StablehloPadOptions",
    }
    for op, table in facts.items():
        assert opts.OP_OPTIONS_TABLE[op] == table, op
        assert opts.OP_OPTIONS[op].__name__ == table
    assert opts.default_options("RELU") is None
    conv = opts.default_options("CONV_2D")
    assert (conv.padding, conv.dilation_w_factor, conv.fused_activation_function) == \
        ("SAME", 1, "NONE")


def test_specs_describe_fields_for_a_writer() -> None:
    spec = opts.options_spec("Conv2DOptions")
    assert (spec.union, spec.type_code, spec.cls) == ("BuiltinOptions", 1, opts.Conv2DOptions)
    by_name = {f.name: f for f in spec.fields}
    assert by_name["padding"] == opts.OptionField("padding", 0, "int8", False, "SAME", "Padding")
    assert by_name["dilation_h_factor"].default == 1
    assert opts.options_spec(opts.Conv2DOptions()) is spec
    assert opts.enum_code("ActivationFunctionType", "RELU6") == 3
    reshape = opts.options_spec(opts.ReshapeOptions).fields[0]
    assert (reshape.name, reshape.scalar, reshape.vector) == ("new_shape", "int32", True)
    assert opts.options_spec("StablehloPadOptions").union == "BuiltinOptions2"


# ---- decoding against the wheel's reader and writer --------------------------------------


def test_shared_model_options_match_wheel(shared_model_name: str, shared_models: Path,
                                          schema_fb: Any) -> None:
    data = shared_model_bytes(shared_model_name)
    ours = read_model(data)
    ref = schema_fb.ModelT.InitFromObj(schema_fb.Model.GetRootAsModel(data, 0))
    for sg, ref_sg in zip(ours.subgraphs, ref.subgraphs):
        for op, ref_op in zip(sg.operators, ref_sg.operators):
            if op.is_custom:
                assert op.options is None
                continue
            spec = opts.options_spec(op.options)
            if ref_op.builtinOptionsType == 0:
                assert op.options == spec.cls() and op.options_absent
                continue
            assert ref_op.builtinOptionsType == spec.type_code
            assert not op.options_absent
            assert op.options == expected_from_wheel(spec, ref_op.builtinOptions, schema_fb)


def sample_value(field: opts.OptionField, position: int, schema_fb: Any) -> Any:
    """A non-default value of the field's type, in the wheel's object-API representation.

    Numbers differ from field to field (they include its position), so a wrong slot shows.
    """
    slot = position
    ints = {"int8": -3 - slot, "uint8": 200 + slot, "int16": -300 - slot, "uint16": 60000 + slot,
            "int32": -123456 - slot, "uint32": 3_000_000_000 + slot, "int64": -(2**40) - slot,
            "uint64": 2**63 + slot}
    if field.enum is not None:
        codes = sorted(wheel_enum(schema_fb, field.enum))
        default_code = opts.enum_code(field.enum, field.default) if not field.vector else None
        code = codes[-1] if codes[-1] != default_code else codes[0]
        return [codes[-1], codes[0]] if field.vector else code
    if field.scalar == "string":
        return "hello"
    if field.scalar == "bool":
        return [True, False, True] if field.vector else not field.default
    if field.scalar.startswith("float"):
        return [0.5, -1.25 - slot] if field.vector else 0.375 + slot
    value = ints[field.scalar]
    return [value, 7, slot] if field.vector else value


def test_every_options_table_roundtrips_through_the_wheel_writer(tiny_model_t: Any, pack: Any,
                                                                 schema_fb: Any) -> None:
    """One operator per options table, every field set to a non-default value by the wheel's
    writer; our decode must give back exactly those values."""
    op_for_table = {}
    for op, table in opts.OP_OPTIONS_TABLE.items():
        op_for_table.setdefault(table, op)
    codes, operators, expected = [], [], []
    for name, spec in opts.OPTIONS_SPECS.items():
        wheel_cls = getattr(schema_fb, name + "T", None)
        if wheel_cls is None or name not in op_for_table:
            continue
        wheel_options = wheel_cls()
        for position, field in enumerate(spec.fields):
            setattr(wheel_options, lower_camel(field.name),
                    sample_value(field, position, schema_fb))
        builtin = getattr(schema_fb.BuiltinOperator, op_for_table[name])
        code = schema_fb.OperatorCodeT()
        code.builtinCode, code.deprecatedBuiltinCode, code.version = builtin, min(builtin, 127), 1
        op = schema_fb.OperatorT()
        op.opcodeIndex, op.inputs, op.outputs = len(codes), [0], [2]
        union_type = getattr(getattr(schema_fb, spec.union), name)
        if spec.union == "BuiltinOptions":
            op.builtinOptionsType, op.builtinOptions = union_type, wheel_options
        else:
            op.builtinOptions2Type, op.builtinOptions2 = union_type, wheel_options
        codes.append(code)
        operators.append(op)
        expected.append(expected_from_wheel(spec, wheel_options, schema_fb))
    tiny_model_t.operatorCodes = codes
    tiny_model_t.subgraphs[0].operators = operators
    model = read_model(pack(tiny_model_t))
    decoded = [op.options for op in model.subgraphs[0].operators]
    assert len(decoded) > 140
    for got, want in zip(decoded, expected):
        assert got == want
        if dataclasses.fields(want):
            assert got != type(want)()  # every field really was non-default


def test_mismatched_or_absent_table_gives_defaults(tiny_model_t: Any, pack: Any,
                                                   schema_fb: Any) -> None:
    op = tiny_model_t.subgraphs[0].operators[0]  # ADD
    wrong = schema_fb.MulOptionsT()
    wrong.fusedActivationFunction = schema_fb.ActivationFunctionType.RELU
    op.builtinOptionsType, op.builtinOptions = schema_fb.BuiltinOptions.MulOptions, wrong
    decoded = read_model(pack(tiny_model_t)).subgraphs[0].operators[0]
    assert decoded.options == opts.AddOptions() and decoded.options_absent

    right = schema_fb.AddOptionsT()
    right.fusedActivationFunction = schema_fb.ActivationFunctionType.RELU6
    op.builtinOptionsType, op.builtinOptions = schema_fb.BuiltinOptions.AddOptions, right
    decoded = read_model(pack(tiny_model_t)).subgraphs[0].operators[0]
    assert decoded.options == opts.AddOptions(fused_activation_function="RELU6",
                                              pot_scale_int16=True)
    assert not decoded.options_absent


def test_unknown_enum_value_raises(tiny_model_t: Any, pack: Any, schema_fb: Any) -> None:
    op = tiny_model_t.subgraphs[0].operators[0]
    bad = schema_fb.AddOptionsT()
    bad.fusedActivationFunction = 42
    op.builtinOptionsType, op.builtinOptions = schema_fb.BuiltinOptions.AddOptions, bad
    with pytest.raises(ModelError, match="42 is not a ActivationFunctionType value"):
        read_model(pack(tiny_model_t))


def test_unknown_union_member_does_not_crash(tiny_model_t: Any, pack: Any,
                                             schema_fb: Any) -> None:
    """A union type code beyond this schema (a newer file) is treated as absent."""
    op = tiny_model_t.subgraphs[0].operators[0]
    op.builtinOptionsType, op.builtinOptions = schema_fb.BuiltinOptions.AddOptions, \
        schema_fb.AddOptionsT()
    data = bytearray(pack(tiny_model_t))
    ours = read_model(bytes(data))
    assert ours.subgraphs[0].operators[0].options == opts.AddOptions()
    # Patch the union type byte (value 11 = AddOptions) to 250 through the wheel's accessors.
    model = schema_fb.Model.GetRootAsModel(bytes(data), 0)
    operator = model.Subgraphs(0).Operators(0)
    position = operator._tab.Offset(10) + operator._tab.Pos
    assert data[position] == schema_fb.BuiltinOptions.AddOptions
    data[position] = 250
    decoded = read_model(bytes(data)).subgraphs[0].operators[0]
    assert decoded.options == opts.AddOptions() and decoded.options_absent
