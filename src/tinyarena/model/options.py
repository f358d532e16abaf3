"""Builtin operator options: one frozen dataclass per schema options table, decoded and described.

Each dataclass is named after its schema table (``Conv2DOptions``) and has the table's fields
under their schema names (already snake_case), minus deprecated ones. Enum fields hold the enum
*name* (``padding="SAME"``, ``fused_activation_function="RELU6"``, ``quantized_bias_type="INT32"``),
vectors are tuples, strings are ``str`` or ``None`` when absent, and every default is the schema
default, which is what a reader sees when the field or the whole table is absent.

For writers (the builder and the rewriter) the module exposes, derived from the schema
description in ``_schema`` so it cannot drift from the dataclasses:

* ``OPTIONS_SPECS[table_name] -> OptionsSpec(name, union, type_code, cls, fields)``: which union
  (``"BuiltinOptions"`` or ``"BuiltinOptions2"``) the table belongs to, its union type code, and
  one ``OptionField(name, slot, scalar, vector, default, enum)`` per dataclass field (vtable slot,
  stored scalar type such as ``"int32"``/``"float32"``/``"bool"``/``"uint8"``, vector flag,
  Python default, enum name or None); ``enum_code(enum, name)`` turns an enum string back to its
  stored integer.
* ``OP_OPTIONS_TABLE[op_name] -> table name`` and ``OP_OPTIONS[op_name] -> dataclass``.
* ``BuiltinOperator``: every operator of the schema, ``BuiltinOperator.CONV_2D == 3``.

Which table an op reads follows TFLM's ``flatbuffer_conversions.cc`` (``ParseConv2D`` reads
``builtin_options_as_Conv2DOptions()``...); ops it does not parse use the table named after them.
As in TFLM, an op whose file carries a different options table than the one it reads gets the
defaults of its own table.
"""

from __future__ import annotations

import enum
import functools
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, Mapping, NamedTuple

from tinyarena.errors import ModelError
from tinyarena.model._flatbuf import Table, scalar_type
from tinyarena.model._schema import ENUMS, TABLES, UNIONS

from tinyarena.model._lazy_dataclass import declared_fields

if TYPE_CHECKING:
    from dataclasses import dataclass
else:  # the same frozen dataclasses, their methods generated on first use (cold start)
    from tinyarena.model._lazy_dataclass import dataclass

if TYPE_CHECKING:
    # mypy types the functional Enum API only for literal member lists; this one comes from
    # the schema.
    BuiltinOperator = enum.IntEnum(  # type: ignore[misc]
        "BuiltinOperator", list(ENUMS["BuiltinOperator"].values), module=__name__)


@functools.cache
def _builtin_operator() -> Any:
    """The ``BuiltinOperator`` enum, made on first use: about 200 members cost ~8 ms at import,
    and reading or sizing a model never needs it (it works with ``ENUMS`` directly)."""
    made = enum.IntEnum(  # type: ignore[misc]
        "BuiltinOperator", list(ENUMS["BuiltinOperator"].values), module=__name__)
    made.__doc__ = "tflite::BuiltinOperator: every builtin operator code of the schema."
    return made


def __getattr__(name: str) -> Any:
    if name == "BuiltinOperator":  # one class object on every access (pickling needs that)
        return _builtin_operator()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

OPTIONS_UNIONS = ("BuiltinOptions", "BuiltinOptions2")


@dataclass(frozen=True)
class Conv2DOptions:
    """BuiltinOptions type 1; used by CONV_2D."""

    padding: str = "SAME"
    stride_w: int = 0
    stride_h: int = 0
    fused_activation_function: str = "NONE"
    dilation_w_factor: int = 1
    dilation_h_factor: int = 1
    quantized_bias_type: str = "FLOAT32"


@dataclass(frozen=True)
class DepthwiseConv2DOptions:
    """BuiltinOptions type 2; used by DEPTHWISE_CONV_2D."""

    padding: str = "SAME"
    stride_w: int = 0
    stride_h: int = 0
    depth_multiplier: int = 0
    fused_activation_function: str = "NONE"
    dilation_w_factor: int = 1
    dilation_h_factor: int = 1


@dataclass(frozen=True)
class ConcatEmbeddingsOptions:
    """BuiltinOptions type 3; used by CONCAT_EMBEDDINGS."""

    num_channels: int = 0
    num_columns_per_channel: tuple[int, ...] = ()
    embedding_dim_per_channel: tuple[int, ...] = ()


@dataclass(frozen=True)
class LSHProjectionOptions:
    """BuiltinOptions type 4; used by LSH_PROJECTION."""

    type: str = "UNKNOWN"


@dataclass(frozen=True)
class Pool2DOptions:
    """BuiltinOptions type 5; used by AVERAGE_POOL_2D, L2_POOL_2D, MAX_POOL_2D."""

    padding: str = "SAME"
    stride_w: int = 0
    stride_h: int = 0
    filter_width: int = 0
    filter_height: int = 0
    fused_activation_function: str = "NONE"


@dataclass(frozen=True)
class SVDFOptions:
    """BuiltinOptions type 6; used by SVDF."""

    rank: int = 0
    fused_activation_function: str = "NONE"
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class RNNOptions:
    """BuiltinOptions type 7; used by RNN."""

    fused_activation_function: str = "NONE"
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class FullyConnectedOptions:
    """BuiltinOptions type 8; used by FULLY_CONNECTED."""

    fused_activation_function: str = "NONE"
    weights_format: str = "DEFAULT"
    keep_num_dims: bool = False
    asymmetric_quantize_inputs: bool = False
    quantized_bias_type: str = "FLOAT32"
    quant_spec: tuple[int, ...] = ()


@dataclass(frozen=True)
class SoftmaxOptions:
    """BuiltinOptions type 9; used by SOFTMAX."""

    beta: float = 0.0


@dataclass(frozen=True)
class ConcatenationOptions:
    """BuiltinOptions type 10; used by CONCATENATION."""

    axis: int = 0
    fused_activation_function: str = "NONE"


@dataclass(frozen=True)
class AddOptions:
    """BuiltinOptions type 11; used by ADD."""

    fused_activation_function: str = "NONE"
    pot_scale_int16: bool = True


@dataclass(frozen=True)
class L2NormOptions:
    """BuiltinOptions type 12; used by L2_NORMALIZATION."""

    fused_activation_function: str = "NONE"


@dataclass(frozen=True)
class LocalResponseNormalizationOptions:
    """BuiltinOptions type 13; used by LOCAL_RESPONSE_NORMALIZATION."""

    radius: int = 0
    bias: float = 0.0
    alpha: float = 0.0
    beta: float = 0.0


@dataclass(frozen=True)
class LSTMOptions:
    """BuiltinOptions type 14; used by LSTM."""

    fused_activation_function: str = "NONE"
    cell_clip: float = 0.0
    proj_clip: float = 0.0
    kernel_type: str = "FULL"
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class ResizeBilinearOptions:
    """BuiltinOptions type 15; used by RESIZE_BILINEAR."""

    align_corners: bool = False
    half_pixel_centers: bool = False


@dataclass(frozen=True)
class CallOptions:
    """BuiltinOptions type 16; used by CALL."""

    subgraph: int = 0


@dataclass(frozen=True)
class ReshapeOptions:
    """BuiltinOptions type 17; used by RESHAPE."""

    new_shape: tuple[int, ...] = ()


@dataclass(frozen=True)
class SkipGramOptions:
    """BuiltinOptions type 18; used by SKIP_GRAM."""

    ngram_size: int = 0
    max_skip_size: int = 0
    include_all_ngrams: bool = False


@dataclass(frozen=True)
class SpaceToDepthOptions:
    """BuiltinOptions type 19; used by SPACE_TO_DEPTH."""

    block_size: int = 0


@dataclass(frozen=True)
class EmbeddingLookupSparseOptions:
    """BuiltinOptions type 20; used by EMBEDDING_LOOKUP_SPARSE."""

    combiner: str = "SUM"


@dataclass(frozen=True)
class MulOptions:
    """BuiltinOptions type 21; used by MUL."""

    fused_activation_function: str = "NONE"


@dataclass(frozen=True)
class PadOptions:
    """BuiltinOptions type 22; used by PAD."""


@dataclass(frozen=True)
class GatherOptions:
    """BuiltinOptions type 23; used by GATHER."""

    axis: int = 0
    batch_dims: int = 0


@dataclass(frozen=True)
class BatchToSpaceNDOptions:
    """BuiltinOptions type 24; used by BATCH_TO_SPACE_ND."""


@dataclass(frozen=True)
class SpaceToBatchNDOptions:
    """BuiltinOptions type 25; used by SPACE_TO_BATCH_ND."""


@dataclass(frozen=True)
class TransposeOptions:
    """BuiltinOptions type 26; used by TRANSPOSE."""


@dataclass(frozen=True)
class ReducerOptions:
    """BuiltinOptions type 27; used by MEAN, SUM, REDUCE_PROD, REDUCE_MAX, REDUCE_MIN,
    REDUCE_ANY, REDUCE_ALL.
    """

    keep_dims: bool = False


@dataclass(frozen=True)
class SubOptions:
    """BuiltinOptions type 28; used by SUB."""

    fused_activation_function: str = "NONE"
    pot_scale_int16: bool = True


@dataclass(frozen=True)
class DivOptions:
    """BuiltinOptions type 29; used by DIV."""

    fused_activation_function: str = "NONE"


@dataclass(frozen=True)
class SqueezeOptions:
    """BuiltinOptions type 30; used by SQUEEZE."""

    squeeze_dims: tuple[int, ...] = ()


@dataclass(frozen=True)
class SequenceRNNOptions:
    """BuiltinOptions type 31; used by UNIDIRECTIONAL_SEQUENCE_RNN."""

    time_major: bool = False
    fused_activation_function: str = "NONE"
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class StridedSliceOptions:
    """BuiltinOptions type 32; used by STRIDED_SLICE."""

    begin_mask: int = 0
    end_mask: int = 0
    ellipsis_mask: int = 0
    new_axis_mask: int = 0
    shrink_axis_mask: int = 0
    offset: bool = False


@dataclass(frozen=True)
class ExpOptions:
    """BuiltinOptions type 33; used by EXP."""


@dataclass(frozen=True)
class TopKV2Options:
    """BuiltinOptions type 34; used by TOPK_V2."""


@dataclass(frozen=True)
class SplitOptions:
    """BuiltinOptions type 35; used by SPLIT."""

    num_splits: int = 0


@dataclass(frozen=True)
class LogSoftmaxOptions:
    """BuiltinOptions type 36; used by LOG_SOFTMAX."""


@dataclass(frozen=True)
class CastOptions:
    """BuiltinOptions type 37; used by CAST."""

    in_data_type: str = "FLOAT32"
    out_data_type: str = "FLOAT32"


@dataclass(frozen=True)
class DequantizeOptions:
    """BuiltinOptions type 38; used by DEQUANTIZE."""


@dataclass(frozen=True)
class MaximumMinimumOptions:
    """BuiltinOptions type 39; used by MAXIMUM, MINIMUM."""


@dataclass(frozen=True)
class ArgMaxOptions:
    """BuiltinOptions type 40; used by ARG_MAX."""

    output_type: str = "FLOAT32"


@dataclass(frozen=True)
class LessOptions:
    """BuiltinOptions type 41; used by LESS."""


@dataclass(frozen=True)
class NegOptions:
    """BuiltinOptions type 42; used by NEG."""


@dataclass(frozen=True)
class PadV2Options:
    """BuiltinOptions type 43; used by PADV2."""


@dataclass(frozen=True)
class GreaterOptions:
    """BuiltinOptions type 44; used by GREATER."""


@dataclass(frozen=True)
class GreaterEqualOptions:
    """BuiltinOptions type 45; used by GREATER_EQUAL."""


@dataclass(frozen=True)
class LessEqualOptions:
    """BuiltinOptions type 46; used by LESS_EQUAL."""


@dataclass(frozen=True)
class SelectOptions:
    """BuiltinOptions type 47; used by SELECT."""


@dataclass(frozen=True)
class SliceOptions:
    """BuiltinOptions type 48; used by SLICE."""


@dataclass(frozen=True)
class TransposeConvOptions:
    """BuiltinOptions type 49; used by TRANSPOSE_CONV."""

    padding: str = "SAME"
    stride_w: int = 0
    stride_h: int = 0
    fused_activation_function: str = "NONE"
    quantized_bias_type: str = "FLOAT32"


@dataclass(frozen=True)
class SparseToDenseOptions:
    """BuiltinOptions type 50; used by SPARSE_TO_DENSE."""

    validate_indices: bool = False


@dataclass(frozen=True)
class TileOptions:
    """BuiltinOptions type 51; used by TILE."""


@dataclass(frozen=True)
class ExpandDimsOptions:
    """BuiltinOptions type 52; used by EXPAND_DIMS."""


@dataclass(frozen=True)
class EqualOptions:
    """BuiltinOptions type 53; used by EQUAL."""


@dataclass(frozen=True)
class NotEqualOptions:
    """BuiltinOptions type 54; used by NOT_EQUAL."""


@dataclass(frozen=True)
class ShapeOptions:
    """BuiltinOptions type 55; used by SHAPE."""

    out_type: str = "FLOAT32"


@dataclass(frozen=True)
class PowOptions:
    """BuiltinOptions type 56; used by POW."""


@dataclass(frozen=True)
class ArgMinOptions:
    """BuiltinOptions type 57; used by ARG_MIN."""

    output_type: str = "FLOAT32"


@dataclass(frozen=True)
class FakeQuantOptions:
    """BuiltinOptions type 58; used by FAKE_QUANT."""

    min: float = 0.0
    max: float = 0.0
    num_bits: int = 0
    narrow_range: bool = False


@dataclass(frozen=True)
class PackOptions:
    """BuiltinOptions type 59; used by PACK."""

    values_count: int = 0
    axis: int = 0


@dataclass(frozen=True)
class LogicalOrOptions:
    """BuiltinOptions type 60; used by LOGICAL_OR."""


@dataclass(frozen=True)
class OneHotOptions:
    """BuiltinOptions type 61; used by ONE_HOT."""

    axis: int = 0


@dataclass(frozen=True)
class LogicalAndOptions:
    """BuiltinOptions type 62; used by LOGICAL_AND."""


@dataclass(frozen=True)
class LogicalNotOptions:
    """BuiltinOptions type 63; used by LOGICAL_NOT."""


@dataclass(frozen=True)
class UnpackOptions:
    """BuiltinOptions type 64; used by UNPACK."""

    num: int = 0
    axis: int = 0


@dataclass(frozen=True)
class FloorDivOptions:
    """BuiltinOptions type 65; used by FLOOR_DIV."""


@dataclass(frozen=True)
class SquareOptions:
    """BuiltinOptions type 66; used by SQUARE."""


@dataclass(frozen=True)
class ZerosLikeOptions:
    """BuiltinOptions type 67; used by ZEROS_LIKE."""


@dataclass(frozen=True)
class FillOptions:
    """BuiltinOptions type 68; used by FILL."""


@dataclass(frozen=True)
class BidirectionalSequenceLSTMOptions:
    """BuiltinOptions type 69; used by BIDIRECTIONAL_SEQUENCE_LSTM."""

    fused_activation_function: str = "NONE"
    cell_clip: float = 0.0
    proj_clip: float = 0.0
    merge_outputs: bool = False
    time_major: bool = True
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class BidirectionalSequenceRNNOptions:
    """BuiltinOptions type 70; used by BIDIRECTIONAL_SEQUENCE_RNN."""

    time_major: bool = False
    fused_activation_function: str = "NONE"
    merge_outputs: bool = False
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class UnidirectionalSequenceLSTMOptions:
    """BuiltinOptions type 71; used by UNIDIRECTIONAL_SEQUENCE_LSTM."""

    fused_activation_function: str = "NONE"
    cell_clip: float = 0.0
    proj_clip: float = 0.0
    time_major: bool = False
    asymmetric_quantize_inputs: bool = False
    diagonal_recurrent_tensors: bool = False


@dataclass(frozen=True)
class FloorModOptions:
    """BuiltinOptions type 72; used by FLOOR_MOD."""


@dataclass(frozen=True)
class RangeOptions:
    """BuiltinOptions type 73; used by RANGE."""


@dataclass(frozen=True)
class ResizeNearestNeighborOptions:
    """BuiltinOptions type 74; used by RESIZE_NEAREST_NEIGHBOR."""

    align_corners: bool = False
    half_pixel_centers: bool = False


@dataclass(frozen=True)
class LeakyReluOptions:
    """BuiltinOptions type 75; used by LEAKY_RELU."""

    alpha: float = 0.0


@dataclass(frozen=True)
class SquaredDifferenceOptions:
    """BuiltinOptions type 76; used by SQUARED_DIFFERENCE."""


@dataclass(frozen=True)
class MirrorPadOptions:
    """BuiltinOptions type 77; used by MIRROR_PAD."""

    mode: str = "REFLECT"


@dataclass(frozen=True)
class AbsOptions:
    """BuiltinOptions type 78; used by ABS."""


@dataclass(frozen=True)
class SplitVOptions:
    """BuiltinOptions type 79; used by SPLIT_V."""

    num_splits: int = 0


@dataclass(frozen=True)
class UniqueOptions:
    """BuiltinOptions type 80; used by UNIQUE."""

    idx_out_type: str = "INT32"


@dataclass(frozen=True)
class ReverseV2Options:
    """BuiltinOptions type 81; used by REVERSE_V2."""


@dataclass(frozen=True)
class AddNOptions:
    """BuiltinOptions type 82; used by ADD_N."""


@dataclass(frozen=True)
class GatherNdOptions:
    """BuiltinOptions type 83; used by GATHER_ND."""


@dataclass(frozen=True)
class CosOptions:
    """BuiltinOptions type 84; used by COS."""


@dataclass(frozen=True)
class WhereOptions:
    """BuiltinOptions type 85; used by WHERE."""


@dataclass(frozen=True)
class RankOptions:
    """BuiltinOptions type 86; used by RANK."""


@dataclass(frozen=True)
class ReverseSequenceOptions:
    """BuiltinOptions type 87; used by REVERSE_SEQUENCE."""

    seq_dim: int = 0
    batch_dim: int = 0


@dataclass(frozen=True)
class MatrixDiagOptions:
    """BuiltinOptions type 88; used by MATRIX_DIAG."""


@dataclass(frozen=True)
class QuantizeOptions:
    """BuiltinOptions type 89; used by QUANTIZE."""


@dataclass(frozen=True)
class MatrixSetDiagOptions:
    """BuiltinOptions type 90; used by MATRIX_SET_DIAG."""


@dataclass(frozen=True)
class HardSwishOptions:
    """BuiltinOptions type 91; used by HARD_SWISH."""


@dataclass(frozen=True)
class IfOptions:
    """BuiltinOptions type 92; used by IF."""

    then_subgraph_index: int = 0
    else_subgraph_index: int = 0


@dataclass(frozen=True)
class WhileOptions:
    """BuiltinOptions type 93; used by WHILE."""

    cond_subgraph_index: int = 0
    body_subgraph_index: int = 0


@dataclass(frozen=True)
class DepthToSpaceOptions:
    """BuiltinOptions type 94; used by DEPTH_TO_SPACE."""

    block_size: int = 0


@dataclass(frozen=True)
class NonMaxSuppressionV4Options:
    """BuiltinOptions type 95; used by NON_MAX_SUPPRESSION_V4."""


@dataclass(frozen=True)
class NonMaxSuppressionV5Options:
    """BuiltinOptions type 96; used by NON_MAX_SUPPRESSION_V5."""


@dataclass(frozen=True)
class ScatterNdOptions:
    """BuiltinOptions type 97; used by SCATTER_ND."""


@dataclass(frozen=True)
class SelectV2Options:
    """BuiltinOptions type 98; used by SELECT_V2."""


@dataclass(frozen=True)
class DensifyOptions:
    """BuiltinOptions type 99; used by DENSIFY."""


@dataclass(frozen=True)
class SegmentSumOptions:
    """BuiltinOptions type 100; used by SEGMENT_SUM."""


@dataclass(frozen=True)
class BatchMatMulOptions:
    """BuiltinOptions type 101; used by BATCH_MATMUL."""

    adj_x: bool = False
    adj_y: bool = False
    asymmetric_quantize_inputs: bool = False


@dataclass(frozen=True)
class CumsumOptions:
    """BuiltinOptions type 102; used by CUMSUM."""

    exclusive: bool = False
    reverse: bool = False


@dataclass(frozen=True)
class CallOnceOptions:
    """BuiltinOptions type 103; used by CALL_ONCE."""

    init_subgraph_index: int = 0


@dataclass(frozen=True)
class BroadcastToOptions:
    """BuiltinOptions type 104; used by BROADCAST_TO."""


@dataclass(frozen=True)
class Rfft2dOptions:
    """BuiltinOptions type 105; used by RFFT2D."""


@dataclass(frozen=True)
class Conv3DOptions:
    """BuiltinOptions type 106; used by CONV_3D, CONV_3D_TRANSPOSE."""

    padding: str = "SAME"
    stride_d: int = 0
    stride_w: int = 0
    stride_h: int = 0
    fused_activation_function: str = "NONE"
    dilation_d_factor: int = 1
    dilation_w_factor: int = 1
    dilation_h_factor: int = 1


@dataclass(frozen=True)
class HashtableOptions:
    """BuiltinOptions type 107; used by HASHTABLE."""

    table_id: int = 0
    key_dtype: str = "FLOAT32"
    value_dtype: str = "FLOAT32"


@dataclass(frozen=True)
class HashtableFindOptions:
    """BuiltinOptions type 108; used by HASHTABLE_FIND."""


@dataclass(frozen=True)
class HashtableImportOptions:
    """BuiltinOptions type 109; used by HASHTABLE_IMPORT."""


@dataclass(frozen=True)
class HashtableSizeOptions:
    """BuiltinOptions type 110; used by HASHTABLE_SIZE."""


@dataclass(frozen=True)
class VarHandleOptions:
    """BuiltinOptions type 111; used by VAR_HANDLE."""

    container: str | None = None
    shared_name: str | None = None


@dataclass(frozen=True)
class ReadVariableOptions:
    """BuiltinOptions type 112; used by READ_VARIABLE."""


@dataclass(frozen=True)
class AssignVariableOptions:
    """BuiltinOptions type 113; used by ASSIGN_VARIABLE."""


@dataclass(frozen=True)
class RandomOptions:
    """BuiltinOptions type 114; used by RANDOM_STANDARD_NORMAL, RANDOM_UNIFORM, MULTINOMIAL."""

    seed: int = 0
    seed2: int = 0


@dataclass(frozen=True)
class BucketizeOptions:
    """BuiltinOptions type 115; used by BUCKETIZE."""

    boundaries: tuple[float, ...] = ()


@dataclass(frozen=True)
class GeluOptions:
    """BuiltinOptions type 116; used by GELU."""

    approximate: bool = False


@dataclass(frozen=True)
class DynamicUpdateSliceOptions:
    """BuiltinOptions type 117; used by DYNAMIC_UPDATE_SLICE."""


@dataclass(frozen=True)
class UnsortedSegmentProdOptions:
    """BuiltinOptions type 118; used by UNSORTED_SEGMENT_PROD."""


@dataclass(frozen=True)
class UnsortedSegmentMaxOptions:
    """BuiltinOptions type 119; used by UNSORTED_SEGMENT_MAX."""


@dataclass(frozen=True)
class UnsortedSegmentMinOptions:
    """BuiltinOptions type 120; used by UNSORTED_SEGMENT_MIN."""


@dataclass(frozen=True)
class UnsortedSegmentSumOptions:
    """BuiltinOptions type 121; used by UNSORTED_SEGMENT_SUM."""


@dataclass(frozen=True)
class ATan2Options:
    """BuiltinOptions type 122; used by ATAN2."""


@dataclass(frozen=True)
class SignOptions:
    """BuiltinOptions type 123; used by SIGN."""


@dataclass(frozen=True)
class BitcastOptions:
    """BuiltinOptions type 124; used by BITCAST."""


@dataclass(frozen=True)
class BitwiseXorOptions:
    """BuiltinOptions type 125; used by BITWISE_XOR."""


@dataclass(frozen=True)
class RightShiftOptions:
    """BuiltinOptions type 126; used by RIGHT_SHIFT."""


@dataclass(frozen=True)
class StablehloConcatenateOptions:
    """BuiltinOptions2 type 1; used by STABLEHLO_CONCATENATE."""

    dimension: int = 0


@dataclass(frozen=True)
class StablehloBroadcastInDimOptions:
    """BuiltinOptions2 type 2; used by STABLEHLO_BROADCAST_IN_DIM."""

    broadcast_dimensions: tuple[int, ...] = ()


@dataclass(frozen=True)
class StablehloSliceOptions:
    """BuiltinOptions2 type 3; used by STABLEHLO_SLICE."""

    start_indices: tuple[int, ...] = ()
    limit_indices: tuple[int, ...] = ()
    strides: tuple[int, ...] = ()


@dataclass(frozen=True)
class StablehloConvolutionOptions:
    """BuiltinOptions2 type 4; used by STABLEHLO_CONVOLUTION."""

    window_strides: tuple[int, ...] = ()
    padding: tuple[int, ...] = ()
    lhs_dilation: tuple[int, ...] = ()
    rhs_dilation: tuple[int, ...] = ()
    window_reversal: tuple[bool, ...] = ()
    input_batch_dimension: int = 0
    input_feature_dimension: int = 0
    input_spatial_dimensions: tuple[int, ...] = ()
    kernel_input_feature_dimension: int = 0
    kernel_output_feature_dimension: int = 0
    kernel_spatial_dimensions: tuple[int, ...] = ()
    output_batch_dimension: int = 0
    output_feature_dimension: int = 0
    output_spatial_dimensions: tuple[int, ...] = ()
    feature_group_count: int = 0
    batch_group_count: int = 0
    precision_config: tuple[str, ...] = ()


@dataclass(frozen=True)
class StablehloCustomCallOptions:
    """BuiltinOptions2 type 5; used by STABLEHLO_CUSTOM_CALL."""

    call_target_name: str | None = None
    has_side_effect: bool = False
    backend_config: str | None = None
    api_version: int = 0
    called_computations: tuple[int, ...] = ()
    custom_attributes: tuple[int, ...] = ()


@dataclass(frozen=True)
class StablehloReduceOptions:
    """BuiltinOptions2 type 6; used by STABLEHLO_REDUCE."""

    dimensions: tuple[int, ...] = ()
    body_subgraph_index: int = 0


@dataclass(frozen=True)
class StablehloScatterOptions:
    """BuiltinOptions2 type 7; used by STABLEHLO_SCATTER."""

    indices_are_sorted: bool = False
    update_window_dims: tuple[int, ...] = ()
    inserted_window_dims: tuple[int, ...] = ()
    scatter_dims_to_operand_dims: tuple[int, ...] = ()
    index_vector_dim: int = 0
    unique_indices: bool = False
    update_computation_subgraph_index: int = 0


@dataclass(frozen=True)
class StablehloCompareOptions:
    """BuiltinOptions2 type 8; used by STABLEHLO_COMPARE."""

    comparison_direction: str = "STABLEHLO_COMPARISON_DIRECTION_EQ"
    compare_type: str = "STABLEHLO_COMPARISON_TYPE_NOTYPE"


@dataclass(frozen=True)
class StablehloDynamicSliceOptions:
    """BuiltinOptions2 type 9; used by STABLEHLO_DYNAMIC_SLICE."""

    slice_sizes: tuple[int, ...] = ()


@dataclass(frozen=True)
class StablehloPadOptions:
    """BuiltinOptions2 type 10; used by STABLEHLO_PAD."""

    edge_padding_low: tuple[int, ...] = ()
    edge_padding_high: tuple[int, ...] = ()
    interior_padding: tuple[int, ...] = ()


@dataclass(frozen=True)
class StablehloIotaOptions:
    """BuiltinOptions2 type 11; used by STABLEHLO_IOTA."""

    iota_dimension: int = 0


@dataclass(frozen=True)
class StablehloDotGeneralOptions:
    """BuiltinOptions2 type 12; used by STABLEHLO_DOT_GENERAL."""

    lhs_batching_dimensions: tuple[int, ...] = ()
    rhs_batching_dimensions: tuple[int, ...] = ()
    lhs_contracting_dimensions: tuple[int, ...] = ()
    rhs_contracting_dimensions: tuple[int, ...] = ()
    precision_config: tuple[str, ...] = ()


@dataclass(frozen=True)
class StablehloReduceWindowOptions:
    """BuiltinOptions2 type 13; used by STABLEHLO_REDUCE_WINDOW."""

    window_dimensions: tuple[int, ...] = ()
    window_strides: tuple[int, ...] = ()
    base_dilations: tuple[int, ...] = ()
    window_dilations: tuple[int, ...] = ()
    padding: tuple[int, ...] = ()
    body_subgraph_index: int = 0


@dataclass(frozen=True)
class StablehloSortOptions:
    """BuiltinOptions2 type 14; used by STABLEHLO_SORT."""

    dimension: int = 0
    is_stable: bool = False
    comparator_subgraph_index: int = 0


@dataclass(frozen=True)
class StablehloWhileOptions:
    """BuiltinOptions2 type 15; used by STABLEHLO_WHILE."""

    cond_subgraph_index: int = 0
    body_subgraph_index: int = 0


@dataclass(frozen=True)
class StablehloGatherOptions:
    """BuiltinOptions2 type 16; used by STABLEHLO_GATHER."""

    offset_dims: tuple[int, ...] = ()
    collapsed_slice_dims: tuple[int, ...] = ()
    start_index_map: tuple[int, ...] = ()
    index_vector_dim: int = 0
    slice_sizes: tuple[int, ...] = ()
    indices_are_sorted: bool = False


@dataclass(frozen=True)
class StablehloTransposeOptions:
    """BuiltinOptions2 type 17; used by STABLEHLO_TRANSPOSE."""

    permutation: tuple[int, ...] = ()


@dataclass(frozen=True)
class DilateOptions:
    """BuiltinOptions2 type 18; used by DILATE."""


@dataclass(frozen=True)
class StablehloRngBitGeneratorOptions:
    """BuiltinOptions2 type 19; used by STABLEHLO_RNG_BIT_GENERATOR."""

    algorithm: str = "DEFAULT"


@dataclass(frozen=True)
class ReduceWindowOptions:
    """BuiltinOptions2 type 20; used by REDUCE_WINDOW."""

    reduce_function: str = "UNSUPPORTED"


@dataclass(frozen=True)
class StableHLOCompositeOptions:
    """BuiltinOptions2 type 21; used by STABLEHLO_COMPOSITE."""

    name: str | None = None
    decomposition_subgraph_index: int = 0
    composite_attributes: tuple[int, ...] = ()
    composite_attributes_format: str = "FLEXBUFFERS"
    version: int = 0


@dataclass(frozen=True)
class StablehloShiftLeftOptions:
    """BuiltinOptions2 type 22; used by STABLEHLO_SHIFT_LEFT."""


@dataclass(frozen=True)
class StablehloCaseOptions:
    """BuiltinOptions2 type 23; used by STABLEHLO_CASE."""

    branch_subgraph_indices: tuple[int, ...] = ()


# Which options table each operator reads (TFLM flatbuffer_conversions.cc, else by name).
OP_OPTIONS_TABLE: Mapping[str, str] = MappingProxyType({
    "ADD": "AddOptions",
    "AVERAGE_POOL_2D": "Pool2DOptions",
    "CONCATENATION": "ConcatenationOptions",
    "CONV_2D": "Conv2DOptions",
    "DEPTHWISE_CONV_2D": "DepthwiseConv2DOptions",
    "DEPTH_TO_SPACE": "DepthToSpaceOptions",
    "DEQUANTIZE": "DequantizeOptions",
    "FULLY_CONNECTED": "FullyConnectedOptions",
    "L2_NORMALIZATION": "L2NormOptions",
    "L2_POOL_2D": "Pool2DOptions",
    "LOCAL_RESPONSE_NORMALIZATION": "LocalResponseNormalizationOptions",
    "LSH_PROJECTION": "LSHProjectionOptions",
    "LSTM": "LSTMOptions",
    "MAX_POOL_2D": "Pool2DOptions",
    "MUL": "MulOptions",
    "RESHAPE": "ReshapeOptions",
    "RESIZE_BILINEAR": "ResizeBilinearOptions",
    "RNN": "RNNOptions",
    "SOFTMAX": "SoftmaxOptions",
    "SPACE_TO_DEPTH": "SpaceToDepthOptions",
    "SVDF": "SVDFOptions",
    "CONCAT_EMBEDDINGS": "ConcatEmbeddingsOptions",
    "SKIP_GRAM": "SkipGramOptions",
    "CALL": "CallOptions",
    "EMBEDDING_LOOKUP_SPARSE": "EmbeddingLookupSparseOptions",
    "PAD": "PadOptions",
    "UNIDIRECTIONAL_SEQUENCE_RNN": "SequenceRNNOptions",
    "GATHER": "GatherOptions",
    "BATCH_TO_SPACE_ND": "BatchToSpaceNDOptions",
    "SPACE_TO_BATCH_ND": "SpaceToBatchNDOptions",
    "TRANSPOSE": "TransposeOptions",
    "MEAN": "ReducerOptions",
    "SUB": "SubOptions",
    "DIV": "DivOptions",
    "SQUEEZE": "SqueezeOptions",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "UnidirectionalSequenceLSTMOptions",
    "STRIDED_SLICE": "StridedSliceOptions",
    "BIDIRECTIONAL_SEQUENCE_RNN": "BidirectionalSequenceRNNOptions",
    "EXP": "ExpOptions",
    "TOPK_V2": "TopKV2Options",
    "SPLIT": "SplitOptions",
    "LOG_SOFTMAX": "LogSoftmaxOptions",
    "BIDIRECTIONAL_SEQUENCE_LSTM": "BidirectionalSequenceLSTMOptions",
    "CAST": "CastOptions",
    "MAXIMUM": "MaximumMinimumOptions",
    "ARG_MAX": "ArgMaxOptions",
    "MINIMUM": "MaximumMinimumOptions",
    "LESS": "LessOptions",
    "NEG": "NegOptions",
    "PADV2": "PadV2Options",
    "GREATER": "GreaterOptions",
    "GREATER_EQUAL": "GreaterEqualOptions",
    "LESS_EQUAL": "LessEqualOptions",
    "SELECT": "SelectOptions",
    "SLICE": "SliceOptions",
    "TRANSPOSE_CONV": "TransposeConvOptions",
    "SPARSE_TO_DENSE": "SparseToDenseOptions",
    "TILE": "TileOptions",
    "EXPAND_DIMS": "ExpandDimsOptions",
    "EQUAL": "EqualOptions",
    "NOT_EQUAL": "NotEqualOptions",
    "SUM": "ReducerOptions",
    "SHAPE": "ShapeOptions",
    "POW": "PowOptions",
    "ARG_MIN": "ArgMinOptions",
    "FAKE_QUANT": "FakeQuantOptions",
    "REDUCE_PROD": "ReducerOptions",
    "REDUCE_MAX": "ReducerOptions",
    "PACK": "PackOptions",
    "LOGICAL_OR": "LogicalOrOptions",
    "ONE_HOT": "OneHotOptions",
    "LOGICAL_AND": "LogicalAndOptions",
    "LOGICAL_NOT": "LogicalNotOptions",
    "UNPACK": "UnpackOptions",
    "REDUCE_MIN": "ReducerOptions",
    "FLOOR_DIV": "FloorDivOptions",
    "REDUCE_ANY": "ReducerOptions",
    "SQUARE": "SquareOptions",
    "ZEROS_LIKE": "ZerosLikeOptions",
    "FILL": "FillOptions",
    "FLOOR_MOD": "FloorModOptions",
    "RANGE": "RangeOptions",
    "RESIZE_NEAREST_NEIGHBOR": "ResizeNearestNeighborOptions",
    "LEAKY_RELU": "LeakyReluOptions",
    "SQUARED_DIFFERENCE": "SquaredDifferenceOptions",
    "MIRROR_PAD": "MirrorPadOptions",
    "ABS": "AbsOptions",
    "SPLIT_V": "SplitVOptions",
    "UNIQUE": "UniqueOptions",
    "REVERSE_V2": "ReverseV2Options",
    "ADD_N": "AddNOptions",
    "GATHER_ND": "GatherNdOptions",
    "COS": "CosOptions",
    "WHERE": "WhereOptions",
    "RANK": "RankOptions",
    "REVERSE_SEQUENCE": "ReverseSequenceOptions",
    "MATRIX_DIAG": "MatrixDiagOptions",
    "QUANTIZE": "QuantizeOptions",
    "MATRIX_SET_DIAG": "MatrixSetDiagOptions",
    "HARD_SWISH": "HardSwishOptions",
    "IF": "IfOptions",
    "WHILE": "WhileOptions",
    "NON_MAX_SUPPRESSION_V4": "NonMaxSuppressionV4Options",
    "NON_MAX_SUPPRESSION_V5": "NonMaxSuppressionV5Options",
    "SCATTER_ND": "ScatterNdOptions",
    "SELECT_V2": "SelectV2Options",
    "DENSIFY": "DensifyOptions",
    "SEGMENT_SUM": "SegmentSumOptions",
    "BATCH_MATMUL": "BatchMatMulOptions",
    "CUMSUM": "CumsumOptions",
    "CALL_ONCE": "CallOnceOptions",
    "BROADCAST_TO": "BroadcastToOptions",
    "RFFT2D": "Rfft2dOptions",
    "CONV_3D": "Conv3DOptions",
    "HASHTABLE": "HashtableOptions",
    "HASHTABLE_FIND": "HashtableFindOptions",
    "HASHTABLE_IMPORT": "HashtableImportOptions",
    "HASHTABLE_SIZE": "HashtableSizeOptions",
    "REDUCE_ALL": "ReducerOptions",
    "CONV_3D_TRANSPOSE": "Conv3DOptions",
    "VAR_HANDLE": "VarHandleOptions",
    "READ_VARIABLE": "ReadVariableOptions",
    "ASSIGN_VARIABLE": "AssignVariableOptions",
    "RANDOM_STANDARD_NORMAL": "RandomOptions",
    "BUCKETIZE": "BucketizeOptions",
    "RANDOM_UNIFORM": "RandomOptions",
    "MULTINOMIAL": "RandomOptions",
    "GELU": "GeluOptions",
    "DYNAMIC_UPDATE_SLICE": "DynamicUpdateSliceOptions",
    "UNSORTED_SEGMENT_PROD": "UnsortedSegmentProdOptions",
    "UNSORTED_SEGMENT_MAX": "UnsortedSegmentMaxOptions",
    "UNSORTED_SEGMENT_SUM": "UnsortedSegmentSumOptions",
    "ATAN2": "ATan2Options",
    "UNSORTED_SEGMENT_MIN": "UnsortedSegmentMinOptions",
    "SIGN": "SignOptions",
    "BITCAST": "BitcastOptions",
    "BITWISE_XOR": "BitwiseXorOptions",
    "RIGHT_SHIFT": "RightShiftOptions",
    "STABLEHLO_CONCATENATE": "StablehloConcatenateOptions",
    "STABLEHLO_BROADCAST_IN_DIM": "StablehloBroadcastInDimOptions",
    "STABLEHLO_CONVOLUTION": "StablehloConvolutionOptions",
    "STABLEHLO_SLICE": "StablehloSliceOptions",
    "STABLEHLO_CUSTOM_CALL": "StablehloCustomCallOptions",
    "STABLEHLO_REDUCE": "StablehloReduceOptions",
    "STABLEHLO_SCATTER": "StablehloScatterOptions",
    "STABLEHLO_COMPARE": "StablehloCompareOptions",
    "STABLEHLO_DYNAMIC_SLICE": "StablehloDynamicSliceOptions",
    "STABLEHLO_PAD": "StablehloPadOptions",
    "STABLEHLO_IOTA": "StablehloIotaOptions",
    "STABLEHLO_DOT_GENERAL": "StablehloDotGeneralOptions",
    "STABLEHLO_REDUCE_WINDOW": "StablehloReduceWindowOptions",
    "STABLEHLO_SORT": "StablehloSortOptions",
    "STABLEHLO_WHILE": "StablehloWhileOptions",
    "STABLEHLO_GATHER": "StablehloGatherOptions",
    "STABLEHLO_TRANSPOSE": "StablehloTransposeOptions",
    "DILATE": "DilateOptions",
    "STABLEHLO_RNG_BIT_GENERATOR": "StablehloRngBitGeneratorOptions",
    "REDUCE_WINDOW": "ReduceWindowOptions",
    "STABLEHLO_COMPOSITE": "StableHLOCompositeOptions",
    "STABLEHLO_SHIFT_LEFT": "StablehloShiftLeftOptions",
    "STABLEHLO_CASE": "StablehloCaseOptions",
})


class OptionField(NamedTuple):
    """How one dataclass field is stored: what a flatbuffer writer needs to serialise it."""

    name: str
    slot: int  # vtable slot (the vtable entry sits at byte 4 + 2 * slot)
    scalar: str  # stored scalar type of the value or of each vector element, or "string"
    vector: bool
    default: Any  # the dataclass default (enum name for enums); omit the field when equal
    enum: str | None  # schema enum name when the value is an enum string


class OptionsSpec(NamedTuple):
    """One options table: its union, union type code, dataclass and fields."""

    name: str
    union: str  # "BuiltinOptions" or "BuiltinOptions2"
    type_code: int
    cls: type
    fields: tuple[OptionField, ...]


def _build_specs() -> Mapping[str, OptionsSpec]:
    """Join each dataclass with the schema description of its table."""
    specs: dict[str, OptionsSpec] = {}
    for union in OPTIONS_UNIONS:
        for position, table in enumerate(UNIONS[union]):
            cls = globals()[table]
            by_name = {f.name: f for f in TABLES[table]}
            fields = []
            # read off the class body: does not complete the (lazy) dataclass
            for name, default in declared_fields(cls):
                definition = by_name[name]
                scalar = "string" if definition.kind == "string" else scalar_type(definition)
                enum_name = definition.type if definition.kind == "enum" else None
                fields.append(OptionField(name, definition.slot, scalar,
                                          definition.vector, default, enum_name))
            specs[table] = OptionsSpec(table, union, position + 1, cls, tuple(fields))
    return MappingProxyType(specs)


OPTIONS_SPECS: Mapping[str, OptionsSpec] = _build_specs()

OP_OPTIONS: Mapping[str, type] = MappingProxyType(
    {op: OPTIONS_SPECS[table].cls for op, table in OP_OPTIONS_TABLE.items()})

_ENUM_NAMES: Mapping[str, Mapping[int, str]] = MappingProxyType({
    name: MappingProxyType({value: key for key, value in definition.values})
    for name, definition in ENUMS.items()})
_ENUM_CODES: Mapping[str, Mapping[str, int]] = MappingProxyType({
    name: MappingProxyType(dict(definition.values)) for name, definition in ENUMS.items()})


def enum_code(enum_name: str, value: str) -> int:
    """Stored integer of enum ``enum_name``'s member ``value`` (KeyError when unknown)."""
    return _ENUM_CODES[enum_name][value]


def enum_names(enum_name: str) -> tuple[str, ...]:
    """Every member name of a schema enum, in declaration order."""
    return tuple(key for key, _ in ENUMS[enum_name].values)


def options_spec(options: Any) -> OptionsSpec:
    """The spec of an options dataclass instance or class, or of a table name."""
    if isinstance(options, str):
        return OPTIONS_SPECS[options]
    cls = options if isinstance(options, type) else type(options)
    return OPTIONS_SPECS[cls.__name__]


def default_options(op_name: str) -> Any:
    """The options an op gets when its file has none: its table's defaults, or None."""
    cls = OP_OPTIONS.get(op_name)
    return None if cls is None else cls()


def _enum_name(enum_name: str, code: int, where: str) -> str:
    name = _ENUM_NAMES[enum_name].get(code)
    if name is None:
        raise ModelError(f"corrupt: {where} = {code} is not a {enum_name} value "
                         f"(known: {', '.join(enum_names(enum_name))}); the file is damaged or "
                         "newer than this reader")
    return name


def decode_table(table: Table) -> Any:
    """Decode one options table into its dataclass (absent fields take their defaults)."""
    spec = OPTIONS_SPECS[table.schema]
    values: dict[str, Any] = {}
    for field in spec.fields:
        where = f"{table.where}.{field.name}"
        if field.vector:
            array = table.array(field.name)
            if array is None:
                continue
            items = array.tolist()
            if field.enum is not None:
                items = [_enum_name(field.enum, code, where) for code in items]
            values[field.name] = tuple(items)
        elif field.scalar == "string":
            values[field.name] = table.string(field.name)
        elif field.enum is not None:
            values[field.name] = _enum_name(field.enum, int(table.scalar(field.name)), where)
        else:
            values[field.name] = table.scalar(field.name)
    return spec.cls(**values)


def decode_operator_options(op_name: str, operator: Table) -> tuple[Any, bool]:
    """(options, absent) of one ``Operator`` table, read as TFLM's parser for ``op_name`` would.

    An op with a known table reads it from whichever union holds it. When that table is absent
    or the union holds another member (TFLM: ``builtin_options_as_X()`` returns null) the result
    is the schema defaults and ``absent`` is True. Ops without an options table (RELU, CUSTOM...)
    give (None, False) unless the file carries some table, which is then decoded as it is.
    """
    expected = OP_OPTIONS_TABLE.get(op_name)
    if expected is not None:
        spec = OPTIONS_SPECS[expected]
        field = "builtin_options" if spec.union == "BuiltinOptions" else "builtin_options_2"
        code, table = operator.union(field)
        if table is None or code != spec.type_code:
            return spec.cls(), True
        return decode_table(table), False
    for field in ("builtin_options", "builtin_options_2"):
        code, table = operator.union(field)
        if table is not None:
            return decode_table(table), False
    return None, False


__all__ = [
    "OPTIONS_SPECS", "OP_OPTIONS", "OP_OPTIONS_TABLE", "BuiltinOperator", "OptionField",
    "OptionsSpec", "decode_operator_options", "decode_table", "default_options", "enum_code",
    "enum_names", "options_spec",
] + [name for union in OPTIONS_UNIONS for name in UNIONS[union]]
