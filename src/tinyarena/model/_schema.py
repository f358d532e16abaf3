"""The TFLite flatbuffer schema (schema.fbs), described as data for the table reader.

Why data and not generated accessor classes: the reader walks tables by *name* and gets every
offset checked in one place (``_flatbuf``), the options module derives its dataclass specs from
the same description, and a writer can serialise from it. Facts recorded here, per table: each
field's vtable slot (declaration order; deprecated fields keep their slot; a union field takes two
slots, ``<name>_type`` then ``<name>``), its kind, type and default. Per enum: names and values.
Per union: member tables, whose type code is their position + 1 (0 is NONE).

Generated from tensorflow/compiler/mlir/lite/schema/schema.fbs of the TFLM snapshot, plus two
fields appended upstream since then and present in the pinned tflite-micro wheel's schema
(``FullyConnectedOptions.quant_spec``, ``BlockwiseQuantization.block_shape``). Members are only
ever appended to the schema, so existing slots never move.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping, NamedTuple


class FieldDef(NamedTuple):
    """One field of a schema table.

    kind: "scalar" (type = "bool", "int8", ..., "float64"), "enum" (type = enum name), "string",
    "table" (type = table name), "union_type" and "union" (type = union name).
    """

    name: str
    slot: int
    kind: str
    type: str
    vector: bool = False
    default: int | float | bool | None = None
    deprecated: bool = False


class EnumDef(NamedTuple):
    """A schema enum: its underlying scalar type and (name, value) pairs in declaration order."""

    name: str
    scalar: str
    values: tuple[tuple[str, int], ...]


SCALAR_SIZES: Mapping[str, int] = MappingProxyType({
    "bool": 1, "int8": 1, "uint8": 1, "int16": 2, "uint16": 2, "int32": 4, "uint32": 4,
    "int64": 8, "uint64": 8, "float32": 4, "float64": 8,
})

FILE_IDENTIFIER = b"TFL3"


ENUMS: Mapping[str, EnumDef] = MappingProxyType({
    "TensorType": EnumDef("TensorType", "int8", (
        ("FLOAT32", 0), ("FLOAT16", 1), ("INT32", 2), ("UINT8", 3), ("INT64", 4), ("STRING", 5),
        ("BOOL", 6), ("INT16", 7), ("COMPLEX64", 8), ("INT8", 9), ("FLOAT64", 10),
        ("COMPLEX128", 11), ("UINT64", 12), ("RESOURCE", 13), ("VARIANT", 14), ("UINT32", 15),
        ("UINT16", 16), ("INT4", 17), ("BFLOAT16", 18), ("INT2", 19), ("UINT4", 20),
        ("FLOAT8_E4M3FN", 21), ("FLOAT8_E5M2", 22),
    )),
    "DimensionType": EnumDef("DimensionType", "int8", (
        ("DENSE", 0), ("SPARSE_CSR", 1),
    )),
    "BuiltinOperator": EnumDef("BuiltinOperator", "int32", (
        ("ADD", 0), ("AVERAGE_POOL_2D", 1), ("CONCATENATION", 2), ("CONV_2D", 3),
        ("DEPTHWISE_CONV_2D", 4), ("DEPTH_TO_SPACE", 5), ("DEQUANTIZE", 6),
        ("EMBEDDING_LOOKUP", 7), ("FLOOR", 8), ("FULLY_CONNECTED", 9), ("HASHTABLE_LOOKUP", 10),
        ("L2_NORMALIZATION", 11), ("L2_POOL_2D", 12), ("LOCAL_RESPONSE_NORMALIZATION", 13),
        ("LOGISTIC", 14), ("LSH_PROJECTION", 15), ("LSTM", 16), ("MAX_POOL_2D", 17), ("MUL", 18),
        ("RELU", 19), ("RELU_N1_TO_1", 20), ("RELU6", 21), ("RESHAPE", 22),
        ("RESIZE_BILINEAR", 23), ("RNN", 24), ("SOFTMAX", 25), ("SPACE_TO_DEPTH", 26),
        ("SVDF", 27), ("TANH", 28), ("CONCAT_EMBEDDINGS", 29), ("SKIP_GRAM", 30), ("CALL", 31),
        ("CUSTOM", 32), ("EMBEDDING_LOOKUP_SPARSE", 33), ("PAD", 34),
        ("UNIDIRECTIONAL_SEQUENCE_RNN", 35), ("GATHER", 36), ("BATCH_TO_SPACE_ND", 37),
        ("SPACE_TO_BATCH_ND", 38), ("TRANSPOSE", 39), ("MEAN", 40), ("SUB", 41), ("DIV", 42),
        ("SQUEEZE", 43), ("UNIDIRECTIONAL_SEQUENCE_LSTM", 44), ("STRIDED_SLICE", 45),
        ("BIDIRECTIONAL_SEQUENCE_RNN", 46), ("EXP", 47), ("TOPK_V2", 48), ("SPLIT", 49),
        ("LOG_SOFTMAX", 50), ("DELEGATE", 51), ("BIDIRECTIONAL_SEQUENCE_LSTM", 52), ("CAST", 53),
        ("PRELU", 54), ("MAXIMUM", 55), ("ARG_MAX", 56), ("MINIMUM", 57), ("LESS", 58),
        ("NEG", 59), ("PADV2", 60), ("GREATER", 61), ("GREATER_EQUAL", 62), ("LESS_EQUAL", 63),
        ("SELECT", 64), ("SLICE", 65), ("SIN", 66), ("TRANSPOSE_CONV", 67),
        ("SPARSE_TO_DENSE", 68), ("TILE", 69), ("EXPAND_DIMS", 70), ("EQUAL", 71),
        ("NOT_EQUAL", 72), ("LOG", 73), ("SUM", 74), ("SQRT", 75), ("RSQRT", 76), ("SHAPE", 77),
        ("POW", 78), ("ARG_MIN", 79), ("FAKE_QUANT", 80), ("REDUCE_PROD", 81), ("REDUCE_MAX", 82),
        ("PACK", 83), ("LOGICAL_OR", 84), ("ONE_HOT", 85), ("LOGICAL_AND", 86),
        ("LOGICAL_NOT", 87), ("UNPACK", 88), ("REDUCE_MIN", 89), ("FLOOR_DIV", 90),
        ("REDUCE_ANY", 91), ("SQUARE", 92), ("ZEROS_LIKE", 93), ("FILL", 94), ("FLOOR_MOD", 95),
        ("RANGE", 96), ("RESIZE_NEAREST_NEIGHBOR", 97), ("LEAKY_RELU", 98),
        ("SQUARED_DIFFERENCE", 99), ("MIRROR_PAD", 100), ("ABS", 101), ("SPLIT_V", 102),
        ("UNIQUE", 103), ("CEIL", 104), ("REVERSE_V2", 105), ("ADD_N", 106), ("GATHER_ND", 107),
        ("COS", 108), ("WHERE", 109), ("RANK", 110), ("ELU", 111), ("REVERSE_SEQUENCE", 112),
        ("MATRIX_DIAG", 113), ("QUANTIZE", 114), ("MATRIX_SET_DIAG", 115), ("ROUND", 116),
        ("HARD_SWISH", 117), ("IF", 118), ("WHILE", 119), ("NON_MAX_SUPPRESSION_V4", 120),
        ("NON_MAX_SUPPRESSION_V5", 121), ("SCATTER_ND", 122), ("SELECT_V2", 123), ("DENSIFY", 124),
        ("SEGMENT_SUM", 125), ("BATCH_MATMUL", 126), ("PLACEHOLDER_FOR_GREATER_OP_CODES", 127),
        ("CUMSUM", 128), ("CALL_ONCE", 129), ("BROADCAST_TO", 130), ("RFFT2D", 131),
        ("CONV_3D", 132), ("IMAG", 133), ("REAL", 134), ("COMPLEX_ABS", 135), ("HASHTABLE", 136),
        ("HASHTABLE_FIND", 137), ("HASHTABLE_IMPORT", 138), ("HASHTABLE_SIZE", 139),
        ("REDUCE_ALL", 140), ("CONV_3D_TRANSPOSE", 141), ("VAR_HANDLE", 142),
        ("READ_VARIABLE", 143), ("ASSIGN_VARIABLE", 144), ("BROADCAST_ARGS", 145),
        ("RANDOM_STANDARD_NORMAL", 146), ("BUCKETIZE", 147), ("RANDOM_UNIFORM", 148),
        ("MULTINOMIAL", 149), ("GELU", 150), ("DYNAMIC_UPDATE_SLICE", 151), ("RELU_0_TO_1", 152),
        ("UNSORTED_SEGMENT_PROD", 153), ("UNSORTED_SEGMENT_MAX", 154),
        ("UNSORTED_SEGMENT_SUM", 155), ("ATAN2", 156), ("UNSORTED_SEGMENT_MIN", 157),
        ("SIGN", 158), ("BITCAST", 159), ("BITWISE_XOR", 160), ("RIGHT_SHIFT", 161),
        ("STABLEHLO_LOGISTIC", 162), ("STABLEHLO_ADD", 163), ("STABLEHLO_DIVIDE", 164),
        ("STABLEHLO_MULTIPLY", 165), ("STABLEHLO_MAXIMUM", 166), ("STABLEHLO_RESHAPE", 167),
        ("STABLEHLO_CLAMP", 168), ("STABLEHLO_CONCATENATE", 169),
        ("STABLEHLO_BROADCAST_IN_DIM", 170), ("STABLEHLO_CONVOLUTION", 171),
        ("STABLEHLO_SLICE", 172), ("STABLEHLO_CUSTOM_CALL", 173), ("STABLEHLO_REDUCE", 174),
        ("STABLEHLO_ABS", 175), ("STABLEHLO_AND", 176), ("STABLEHLO_COSINE", 177),
        ("STABLEHLO_EXPONENTIAL", 178), ("STABLEHLO_FLOOR", 179), ("STABLEHLO_LOG", 180),
        ("STABLEHLO_MINIMUM", 181), ("STABLEHLO_NEGATE", 182), ("STABLEHLO_OR", 183),
        ("STABLEHLO_POWER", 184), ("STABLEHLO_REMAINDER", 185), ("STABLEHLO_RSQRT", 186),
        ("STABLEHLO_SELECT", 187), ("STABLEHLO_SUBTRACT", 188), ("STABLEHLO_TANH", 189),
        ("STABLEHLO_SCATTER", 190), ("STABLEHLO_COMPARE", 191), ("STABLEHLO_CONVERT", 192),
        ("STABLEHLO_DYNAMIC_SLICE", 193), ("STABLEHLO_DYNAMIC_UPDATE_SLICE", 194),
        ("STABLEHLO_PAD", 195), ("STABLEHLO_IOTA", 196), ("STABLEHLO_DOT_GENERAL", 197),
        ("STABLEHLO_REDUCE_WINDOW", 198), ("STABLEHLO_SORT", 199), ("STABLEHLO_WHILE", 200),
        ("STABLEHLO_GATHER", 201), ("STABLEHLO_TRANSPOSE", 202), ("DILATE", 203),
        ("STABLEHLO_RNG_BIT_GENERATOR", 204), ("REDUCE_WINDOW", 205), ("STABLEHLO_COMPOSITE", 206),
        ("STABLEHLO_SHIFT_LEFT", 207), ("STABLEHLO_CBRT", 208), ("STABLEHLO_CASE", 209),
    )),
    "StablehloPrecisionConfig": EnumDef("StablehloPrecisionConfig", "uint32", (
        ("DEFAULT", 0), ("HIGH", 1), ("HIGHEST", 2),
    )),
    "StablehloComparisonDirection": EnumDef("StablehloComparisonDirection", "uint32", (
        ("STABLEHLO_COMPARISON_DIRECTION_EQ", 0), ("STABLEHLO_COMPARISON_DIRECTION_NE", 1),
        ("STABLEHLO_COMPARISON_DIRECTION_GE", 2), ("STABLEHLO_COMPARISON_DIRECTION_GT", 3),
        ("STABLEHLO_COMPARISON_DIRECTION_LE", 4), ("STABLEHLO_COMPARISON_DIRECTION_LT", 5),
    )),
    "StablehloComparisonType": EnumDef("StablehloComparisonType", "uint32", (
        ("STABLEHLO_COMPARISON_TYPE_NOTYPE", 0), ("STABLEHLO_COMPARISON_TYPE_FLOAT", 1),
        ("STABLEHLO_COMPARISON_TYPE_FLOAT_TOTAL_ORDER", 2),
        ("STABLEHLO_COMPARISON_TYPE_SIGNED", 3), ("STABLEHLO_COMPARISON_TYPE_UNSIGNED", 4),
    )),
    "RngAlgorithm": EnumDef("RngAlgorithm", "int8", (
        ("DEFAULT", 0), ("PHILOX", 1), ("THREEFRY", 2),
    )),
    "Padding": EnumDef("Padding", "int8", (
        ("SAME", 0), ("VALID", 1),
    )),
    "ActivationFunctionType": EnumDef("ActivationFunctionType", "int8", (
        ("NONE", 0), ("RELU", 1), ("RELU_N1_TO_1", 2), ("RELU6", 3), ("TANH", 4), ("SIGN_BIT", 5),
    )),
    "LSHProjectionType": EnumDef("LSHProjectionType", "int8", (
        ("UNKNOWN", 0), ("SPARSE", 1), ("DENSE", 2),
    )),
    "FullyConnectedOptionsWeightsFormat": EnumDef("FullyConnectedOptionsWeightsFormat", "int8", (
        ("DEFAULT", 0), ("SHUFFLED4x16INT8", 1),
    )),
    "LSTMKernelType": EnumDef("LSTMKernelType", "int8", (
        ("FULL", 0), ("BASIC", 1),
    )),
    "CombinerType": EnumDef("CombinerType", "int8", (
        ("SUM", 0), ("MEAN", 1), ("SQRTN", 2),
    )),
    "MirrorPadMode": EnumDef("MirrorPadMode", "int8", (
        ("REFLECT", 0), ("SYMMETRIC", 1),
    )),
    "ReduceWindowFunction": EnumDef("ReduceWindowFunction", "int32", (
        ("UNSUPPORTED", 0), ("ADD", 1), ("MUL", 2), ("MINIMUM", 3), ("MAXIMUM", 4), ("ALL", 5),
        ("ANY", 6),
    )),
    "CustomOptionsFormat": EnumDef("CustomOptionsFormat", "int8", (
        ("FLEXBUFFERS", 0),
    )),
})

# Member tables of each union; a member"s type code is its position + 1 (0 = NONE).
UNIONS: Mapping[str, tuple[str, ...]] = MappingProxyType({
    "QuantizationDetails": (
        "CustomQuantization", "BlockwiseQuantization", "MultiAxisQuantization",
    ),
    "SparseIndexVector": (
        "Int32Vector", "Uint16Vector", "Uint8Vector",
    ),
    "BuiltinOptions": (
        "Conv2DOptions", "DepthwiseConv2DOptions", "ConcatEmbeddingsOptions",
        "LSHProjectionOptions", "Pool2DOptions", "SVDFOptions", "RNNOptions",
        "FullyConnectedOptions", "SoftmaxOptions", "ConcatenationOptions", "AddOptions",
        "L2NormOptions", "LocalResponseNormalizationOptions", "LSTMOptions",
        "ResizeBilinearOptions", "CallOptions", "ReshapeOptions", "SkipGramOptions",
        "SpaceToDepthOptions", "EmbeddingLookupSparseOptions", "MulOptions", "PadOptions",
        "GatherOptions", "BatchToSpaceNDOptions", "SpaceToBatchNDOptions", "TransposeOptions",
        "ReducerOptions", "SubOptions", "DivOptions", "SqueezeOptions", "SequenceRNNOptions",
        "StridedSliceOptions", "ExpOptions", "TopKV2Options", "SplitOptions", "LogSoftmaxOptions",
        "CastOptions", "DequantizeOptions", "MaximumMinimumOptions", "ArgMaxOptions",
        "LessOptions", "NegOptions", "PadV2Options", "GreaterOptions", "GreaterEqualOptions",
        "LessEqualOptions", "SelectOptions", "SliceOptions", "TransposeConvOptions",
        "SparseToDenseOptions", "TileOptions", "ExpandDimsOptions", "EqualOptions",
        "NotEqualOptions", "ShapeOptions", "PowOptions", "ArgMinOptions", "FakeQuantOptions",
        "PackOptions", "LogicalOrOptions", "OneHotOptions", "LogicalAndOptions",
        "LogicalNotOptions", "UnpackOptions", "FloorDivOptions", "SquareOptions",
        "ZerosLikeOptions", "FillOptions", "BidirectionalSequenceLSTMOptions",
        "BidirectionalSequenceRNNOptions", "UnidirectionalSequenceLSTMOptions", "FloorModOptions",
        "RangeOptions", "ResizeNearestNeighborOptions", "LeakyReluOptions",
        "SquaredDifferenceOptions", "MirrorPadOptions", "AbsOptions", "SplitVOptions",
        "UniqueOptions", "ReverseV2Options", "AddNOptions", "GatherNdOptions", "CosOptions",
        "WhereOptions", "RankOptions", "ReverseSequenceOptions", "MatrixDiagOptions",
        "QuantizeOptions", "MatrixSetDiagOptions", "HardSwishOptions", "IfOptions", "WhileOptions",
        "DepthToSpaceOptions", "NonMaxSuppressionV4Options", "NonMaxSuppressionV5Options",
        "ScatterNdOptions", "SelectV2Options", "DensifyOptions", "SegmentSumOptions",
        "BatchMatMulOptions", "CumsumOptions", "CallOnceOptions", "BroadcastToOptions",
        "Rfft2dOptions", "Conv3DOptions", "HashtableOptions", "HashtableFindOptions",
        "HashtableImportOptions", "HashtableSizeOptions", "VarHandleOptions",
        "ReadVariableOptions", "AssignVariableOptions", "RandomOptions", "BucketizeOptions",
        "GeluOptions", "DynamicUpdateSliceOptions", "UnsortedSegmentProdOptions",
        "UnsortedSegmentMaxOptions", "UnsortedSegmentMinOptions", "UnsortedSegmentSumOptions",
        "ATan2Options", "SignOptions", "BitcastOptions", "BitwiseXorOptions", "RightShiftOptions",
    ),
    "BuiltinOptions2": (
        "StablehloConcatenateOptions", "StablehloBroadcastInDimOptions", "StablehloSliceOptions",
        "StablehloConvolutionOptions", "StablehloCustomCallOptions", "StablehloReduceOptions",
        "StablehloScatterOptions", "StablehloCompareOptions", "StablehloDynamicSliceOptions",
        "StablehloPadOptions", "StablehloIotaOptions", "StablehloDotGeneralOptions",
        "StablehloReduceWindowOptions", "StablehloSortOptions", "StablehloWhileOptions",
        "StablehloGatherOptions", "StablehloTransposeOptions", "DilateOptions",
        "StablehloRngBitGeneratorOptions", "ReduceWindowOptions", "StableHLOCompositeOptions",
        "StablehloShiftLeftOptions", "StablehloCaseOptions",
    ),
})

_F = FieldDef

TABLES: Mapping[str, tuple[FieldDef, ...]] = MappingProxyType({
    "CustomQuantization": (
        _F("custom", 0, "scalar", "uint8", vector=True),
    ),
    "BlockwiseQuantization": (
        _F("scales", 0, "scalar", "int32", default=0),
        _F("zero_points", 1, "scalar", "int32", default=0),
        _F("block_size", 2, "scalar", "int32", default=0),
        _F("block_shape", 3, "scalar", "int32", vector=True),
    ),
    "MultiAxisQuantization": (
        _F("scales", 0, "scalar", "int32", default=0),
        _F("zero_points", 1, "scalar", "int32", default=0),
        _F("block_size", 2, "scalar", "int32", default=0),
        _F("quantized_dimensions", 3, "scalar", "int32", vector=True),
    ),
    "QuantizationParameters": (
        _F("min", 0, "scalar", "float32", vector=True),
        _F("max", 1, "scalar", "float32", vector=True),
        _F("scale", 2, "scalar", "float32", vector=True),
        _F("zero_point", 3, "scalar", "int64", vector=True),
        _F("details_type", 4, "union_type", "QuantizationDetails", default=0),
        _F("details", 5, "union", "QuantizationDetails"),
        _F("quantized_dimension", 6, "scalar", "int32", default=0),
    ),
    "Int32Vector": (
        _F("values", 0, "scalar", "int32", vector=True),
    ),
    "Uint16Vector": (
        _F("values", 0, "scalar", "uint16", vector=True),
    ),
    "Uint8Vector": (
        _F("values", 0, "scalar", "uint8", vector=True),
    ),
    "DimensionMetadata": (
        _F("format", 0, "enum", "DimensionType", default=0),
        _F("dense_size", 1, "scalar", "int32", default=0),
        _F("array_segments_type", 2, "union_type", "SparseIndexVector", default=0),
        _F("array_segments", 3, "union", "SparseIndexVector"),
        _F("array_indices_type", 4, "union_type", "SparseIndexVector", default=0),
        _F("array_indices", 5, "union", "SparseIndexVector"),
    ),
    "SparsityParameters": (
        _F("traversal_order", 0, "scalar", "int32", vector=True),
        _F("block_map", 1, "scalar", "int32", vector=True),
        _F("dim_metadata", 2, "table", "DimensionMetadata", vector=True),
    ),
    "VariantSubType": (
        _F("shape", 0, "scalar", "int32", vector=True),
        _F("type", 1, "enum", "TensorType", default=0),
        _F("has_rank", 2, "scalar", "bool", default=False),
    ),
    "Tensor": (
        _F("shape", 0, "scalar", "int32", vector=True),
        _F("type", 1, "enum", "TensorType", default=0),
        _F("buffer", 2, "scalar", "uint32", default=0),
        _F("name", 3, "string", "string"),
        _F("quantization", 4, "table", "QuantizationParameters"),
        _F("is_variable", 5, "scalar", "bool", default=False),
        _F("sparsity", 6, "table", "SparsityParameters"),
        _F("shape_signature", 7, "scalar", "int32", vector=True),
        _F("has_rank", 8, "scalar", "bool", default=False),
        _F("variant_tensors", 9, "table", "VariantSubType", vector=True),
        _F("external_buffer", 10, "scalar", "uint32", default=0),
    ),
    "StablehloGatherOptions": (
        _F("offset_dims", 0, "scalar", "int64", vector=True),
        _F("collapsed_slice_dims", 1, "scalar", "int64", vector=True),
        _F("start_index_map", 2, "scalar", "int64", vector=True),
        _F("index_vector_dim", 3, "scalar", "int64", default=0),
        _F("slice_sizes", 4, "scalar", "int64", vector=True),
        _F("indices_are_sorted", 5, "scalar", "bool", default=False),
    ),
    "StablehloTransposeOptions": (
        _F("permutation", 0, "scalar", "int64", vector=True),
    ),
    "StablehloDotGeneralOptions": (
        _F("lhs_batching_dimensions", 0, "scalar", "int64", vector=True),
        _F("rhs_batching_dimensions", 1, "scalar", "int64", vector=True),
        _F("lhs_contracting_dimensions", 2, "scalar", "int64", vector=True),
        _F("rhs_contracting_dimensions", 3, "scalar", "int64", vector=True),
        _F("precision_config", 4, "enum", "StablehloPrecisionConfig", vector=True),
    ),
    "StablehloReduceWindowOptions": (
        _F("window_dimensions", 0, "scalar", "int64", vector=True),
        _F("window_strides", 1, "scalar", "int64", vector=True),
        _F("base_dilations", 2, "scalar", "int64", vector=True),
        _F("window_dilations", 3, "scalar", "int64", vector=True),
        _F("padding", 4, "scalar", "int64", vector=True),
        _F("body_subgraph_index", 5, "scalar", "int32", default=0),
    ),
    "StablehloWhileOptions": (
        _F("cond_subgraph_index", 0, "scalar", "int32", default=0),
        _F("body_subgraph_index", 1, "scalar", "int32", default=0),
    ),
    "StablehloSortOptions": (
        _F("dimension", 0, "scalar", "int64", default=0),
        _F("is_stable", 1, "scalar", "bool", default=False),
        _F("comparator_subgraph_index", 2, "scalar", "int32", default=0),
    ),
    "StablehloConcatenateOptions": (
        _F("dimension", 0, "scalar", "int64", default=0),
    ),
    "StablehloBroadcastInDimOptions": (
        _F("broadcast_dimensions", 0, "scalar", "int64", vector=True),
    ),
    "StablehloCompareOptions": (
        _F("comparison_direction", 0, "enum", "StablehloComparisonDirection", default=0),
        _F("compare_type", 1, "enum", "StablehloComparisonType", default=0),
    ),
    "StablehloDynamicSliceOptions": (
        _F("slice_sizes", 0, "scalar", "int64", vector=True),
    ),
    "StablehloPadOptions": (
        _F("edge_padding_low", 0, "scalar", "int64", vector=True),
        _F("edge_padding_high", 1, "scalar", "int64", vector=True),
        _F("interior_padding", 2, "scalar", "int64", vector=True),
    ),
    "StablehloIotaOptions": (
        _F("iota_dimension", 0, "scalar", "int64", default=0),
    ),
    "StablehloCustomCallOptions": (
        _F("call_target_name", 0, "string", "string"),
        _F("has_side_effect", 1, "scalar", "bool", default=False),
        _F("backend_config", 2, "string", "string"),
        _F("api_version", 3, "scalar", "int32", default=0),
        _F("called_computations", 4, "scalar", "int32", vector=True),
        _F("custom_attributes", 5, "scalar", "uint8", vector=True),
    ),
    "StablehloReduceOptions": (
        _F("dimensions", 0, "scalar", "int64", vector=True),
        _F("body_subgraph_index", 1, "scalar", "int32", default=0),
    ),
    "StablehloSliceOptions": (
        _F("start_indices", 0, "scalar", "int64", vector=True),
        _F("limit_indices", 1, "scalar", "int64", vector=True),
        _F("strides", 2, "scalar", "int64", vector=True),
    ),
    "StablehloConvolutionOptions": (
        _F("window_strides", 0, "scalar", "int64", vector=True),
        _F("padding", 1, "scalar", "int64", vector=True),
        _F("lhs_dilation", 2, "scalar", "int64", vector=True),
        _F("rhs_dilation", 3, "scalar", "int64", vector=True),
        _F("window_reversal", 4, "scalar", "bool", vector=True),
        _F("input_batch_dimension", 5, "scalar", "int64", default=0),
        _F("input_feature_dimension", 6, "scalar", "int64", default=0),
        _F("input_spatial_dimensions", 7, "scalar", "int64", vector=True),
        _F("kernel_input_feature_dimension", 8, "scalar", "int64", default=0),
        _F("kernel_output_feature_dimension", 9, "scalar", "int64", default=0),
        _F("kernel_spatial_dimensions", 10, "scalar", "int64", vector=True),
        _F("output_batch_dimension", 11, "scalar", "int64", default=0),
        _F("output_feature_dimension", 12, "scalar", "int64", default=0),
        _F("output_spatial_dimensions", 13, "scalar", "int64", vector=True),
        _F("feature_group_count", 14, "scalar", "int64", default=0),
        _F("batch_group_count", 15, "scalar", "int64", default=0),
        _F("precision_config", 16, "enum", "StablehloPrecisionConfig", vector=True),
    ),
    "StablehloScatterOptions": (
        _F("indices_are_sorted", 0, "scalar", "bool", default=False),
        _F("update_window_dims", 1, "scalar", "int64", vector=True),
        _F("inserted_window_dims", 2, "scalar", "int64", vector=True),
        _F("scatter_dims_to_operand_dims", 3, "scalar", "int64", vector=True),
        _F("index_vector_dim", 4, "scalar", "int64", default=0),
        _F("unique_indices", 5, "scalar", "bool", default=False),
        _F("update_computation_subgraph_index", 6, "scalar", "int32", default=0),
    ),
    "StablehloCaseOptions": (
        _F("branch_subgraph_indices", 0, "scalar", "int32", vector=True),
    ),
    "StablehloRngBitGeneratorOptions": (
        _F("algorithm", 0, "enum", "RngAlgorithm", default=0),
    ),
    "Conv2DOptions": (
        _F("padding", 0, "enum", "Padding", default=0),
        _F("stride_w", 1, "scalar", "int32", default=0),
        _F("stride_h", 2, "scalar", "int32", default=0),
        _F("fused_activation_function", 3, "enum", "ActivationFunctionType", default=0),
        _F("dilation_w_factor", 4, "scalar", "int32", default=1),
        _F("dilation_h_factor", 5, "scalar", "int32", default=1),
        _F("quantized_bias_type", 6, "enum", "TensorType", default=0),
    ),
    "Conv3DOptions": (
        _F("padding", 0, "enum", "Padding", default=0),
        _F("stride_d", 1, "scalar", "int32", default=0),
        _F("stride_w", 2, "scalar", "int32", default=0),
        _F("stride_h", 3, "scalar", "int32", default=0),
        _F("fused_activation_function", 4, "enum", "ActivationFunctionType", default=0),
        _F("dilation_d_factor", 5, "scalar", "int32", default=1),
        _F("dilation_w_factor", 6, "scalar", "int32", default=1),
        _F("dilation_h_factor", 7, "scalar", "int32", default=1),
    ),
    "Pool2DOptions": (
        _F("padding", 0, "enum", "Padding", default=0),
        _F("stride_w", 1, "scalar", "int32", default=0),
        _F("stride_h", 2, "scalar", "int32", default=0),
        _F("filter_width", 3, "scalar", "int32", default=0),
        _F("filter_height", 4, "scalar", "int32", default=0),
        _F("fused_activation_function", 5, "enum", "ActivationFunctionType", default=0),
    ),
    "DepthwiseConv2DOptions": (
        _F("padding", 0, "enum", "Padding", default=0),
        _F("stride_w", 1, "scalar", "int32", default=0),
        _F("stride_h", 2, "scalar", "int32", default=0),
        _F("depth_multiplier", 3, "scalar", "int32", default=0),
        _F("fused_activation_function", 4, "enum", "ActivationFunctionType", default=0),
        _F("dilation_w_factor", 5, "scalar", "int32", default=1),
        _F("dilation_h_factor", 6, "scalar", "int32", default=1),
    ),
    "ConcatEmbeddingsOptions": (
        _F("num_channels", 0, "scalar", "int32", default=0),
        _F("num_columns_per_channel", 1, "scalar", "int32", vector=True),
        _F("embedding_dim_per_channel", 2, "scalar", "int32", vector=True),
    ),
    "LSHProjectionOptions": (
        _F("type", 0, "enum", "LSHProjectionType", default=0),
    ),
    "SVDFOptions": (
        _F("rank", 0, "scalar", "int32", default=0),
        _F("fused_activation_function", 1, "enum", "ActivationFunctionType", default=0),
        _F("asymmetric_quantize_inputs", 2, "scalar", "bool", default=False),
    ),
    "RNNOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
        _F("asymmetric_quantize_inputs", 1, "scalar", "bool", default=False),
    ),
    "SequenceRNNOptions": (
        _F("time_major", 0, "scalar", "bool", default=False),
        _F("fused_activation_function", 1, "enum", "ActivationFunctionType", default=0),
        _F("asymmetric_quantize_inputs", 2, "scalar", "bool", default=False),
    ),
    "BidirectionalSequenceRNNOptions": (
        _F("time_major", 0, "scalar", "bool", default=False),
        _F("fused_activation_function", 1, "enum", "ActivationFunctionType", default=0),
        _F("merge_outputs", 2, "scalar", "bool", default=False),
        _F("asymmetric_quantize_inputs", 3, "scalar", "bool", default=False),
    ),
    "FullyConnectedOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
        _F("weights_format", 1, "enum", "FullyConnectedOptionsWeightsFormat", default=0),
        _F("keep_num_dims", 2, "scalar", "bool", default=False),
        _F("asymmetric_quantize_inputs", 3, "scalar", "bool", default=False),
        _F("quantized_bias_type", 4, "enum", "TensorType", default=0),
        _F("quant_spec", 5, "scalar", "uint8", vector=True),
    ),
    "SoftmaxOptions": (
        _F("beta", 0, "scalar", "float32", default=0.0),
    ),
    "ConcatenationOptions": (
        _F("axis", 0, "scalar", "int32", default=0),
        _F("fused_activation_function", 1, "enum", "ActivationFunctionType", default=0),
    ),
    "AddOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
        _F("pot_scale_int16", 1, "scalar", "bool", default=True),
    ),
    "MulOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
    ),
    "L2NormOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
    ),
    "LocalResponseNormalizationOptions": (
        _F("radius", 0, "scalar", "int32", default=0),
        _F("bias", 1, "scalar", "float32", default=0.0),
        _F("alpha", 2, "scalar", "float32", default=0.0),
        _F("beta", 3, "scalar", "float32", default=0.0),
    ),
    "LSTMOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
        _F("cell_clip", 1, "scalar", "float32", default=0.0),
        _F("proj_clip", 2, "scalar", "float32", default=0.0),
        _F("kernel_type", 3, "enum", "LSTMKernelType", default=0),
        _F("asymmetric_quantize_inputs", 4, "scalar", "bool", default=False),
    ),
    "UnidirectionalSequenceLSTMOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
        _F("cell_clip", 1, "scalar", "float32", default=0.0),
        _F("proj_clip", 2, "scalar", "float32", default=0.0),
        _F("time_major", 3, "scalar", "bool", default=False),
        _F("asymmetric_quantize_inputs", 4, "scalar", "bool", default=False),
        _F("diagonal_recurrent_tensors", 5, "scalar", "bool", default=False),
    ),
    "BidirectionalSequenceLSTMOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
        _F("cell_clip", 1, "scalar", "float32", default=0.0),
        _F("proj_clip", 2, "scalar", "float32", default=0.0),
        _F("merge_outputs", 3, "scalar", "bool", default=False),
        _F("time_major", 4, "scalar", "bool", default=True),
        _F("asymmetric_quantize_inputs", 5, "scalar", "bool", default=False),
    ),
    "ResizeBilinearOptions": (
        _F("new_height", 0, "scalar", "int32", default=0, deprecated=True),
        _F("new_width", 1, "scalar", "int32", default=0, deprecated=True),
        _F("align_corners", 2, "scalar", "bool", default=False),
        _F("half_pixel_centers", 3, "scalar", "bool", default=False),
    ),
    "ResizeNearestNeighborOptions": (
        _F("align_corners", 0, "scalar", "bool", default=False),
        _F("half_pixel_centers", 1, "scalar", "bool", default=False),
    ),
    "CallOptions": (
        _F("subgraph", 0, "scalar", "uint32", default=0),
    ),
    "PadOptions": (
    ),
    "PadV2Options": (
    ),
    "ReshapeOptions": (
        _F("new_shape", 0, "scalar", "int32", vector=True),
    ),
    "SpaceToBatchNDOptions": (
    ),
    "BatchToSpaceNDOptions": (
    ),
    "SkipGramOptions": (
        _F("ngram_size", 0, "scalar", "int32", default=0),
        _F("max_skip_size", 1, "scalar", "int32", default=0),
        _F("include_all_ngrams", 2, "scalar", "bool", default=False),
    ),
    "SpaceToDepthOptions": (
        _F("block_size", 0, "scalar", "int32", default=0),
    ),
    "DepthToSpaceOptions": (
        _F("block_size", 0, "scalar", "int32", default=0),
    ),
    "SubOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
        _F("pot_scale_int16", 1, "scalar", "bool", default=True),
    ),
    "DivOptions": (
        _F("fused_activation_function", 0, "enum", "ActivationFunctionType", default=0),
    ),
    "TopKV2Options": (
    ),
    "EmbeddingLookupSparseOptions": (
        _F("combiner", 0, "enum", "CombinerType", default=0),
    ),
    "GatherOptions": (
        _F("axis", 0, "scalar", "int32", default=0),
        _F("batch_dims", 1, "scalar", "int32", default=0),
    ),
    "TransposeOptions": (
    ),
    "ExpOptions": (
    ),
    "CosOptions": (
    ),
    "ReducerOptions": (
        _F("keep_dims", 0, "scalar", "bool", default=False),
    ),
    "SqueezeOptions": (
        _F("squeeze_dims", 0, "scalar", "int32", vector=True),
    ),
    "SplitOptions": (
        _F("num_splits", 0, "scalar", "int32", default=0),
    ),
    "SplitVOptions": (
        _F("num_splits", 0, "scalar", "int32", default=0),
    ),
    "StridedSliceOptions": (
        _F("begin_mask", 0, "scalar", "int32", default=0),
        _F("end_mask", 1, "scalar", "int32", default=0),
        _F("ellipsis_mask", 2, "scalar", "int32", default=0),
        _F("new_axis_mask", 3, "scalar", "int32", default=0),
        _F("shrink_axis_mask", 4, "scalar", "int32", default=0),
        _F("offset", 5, "scalar", "bool", default=False),
    ),
    "LogSoftmaxOptions": (
    ),
    "CastOptions": (
        _F("in_data_type", 0, "enum", "TensorType", default=0),
        _F("out_data_type", 1, "enum", "TensorType", default=0),
    ),
    "DequantizeOptions": (
    ),
    "MaximumMinimumOptions": (
    ),
    "TileOptions": (
    ),
    "ArgMaxOptions": (
        _F("output_type", 0, "enum", "TensorType", default=0),
    ),
    "ArgMinOptions": (
        _F("output_type", 0, "enum", "TensorType", default=0),
    ),
    "GreaterOptions": (
    ),
    "GreaterEqualOptions": (
    ),
    "LessOptions": (
    ),
    "LessEqualOptions": (
    ),
    "NegOptions": (
    ),
    "SelectOptions": (
    ),
    "SliceOptions": (
    ),
    "TransposeConvOptions": (
        _F("padding", 0, "enum", "Padding", default=0),
        _F("stride_w", 1, "scalar", "int32", default=0),
        _F("stride_h", 2, "scalar", "int32", default=0),
        _F("fused_activation_function", 3, "enum", "ActivationFunctionType", default=0),
        _F("quantized_bias_type", 4, "enum", "TensorType", default=0),
    ),
    "ExpandDimsOptions": (
    ),
    "SparseToDenseOptions": (
        _F("validate_indices", 0, "scalar", "bool", default=False),
    ),
    "EqualOptions": (
    ),
    "NotEqualOptions": (
    ),
    "ShapeOptions": (
        _F("out_type", 0, "enum", "TensorType", default=0),
    ),
    "RankOptions": (
    ),
    "PowOptions": (
    ),
    "FakeQuantOptions": (
        _F("min", 0, "scalar", "float32", default=0.0),
        _F("max", 1, "scalar", "float32", default=0.0),
        _F("num_bits", 2, "scalar", "int32", default=0),
        _F("narrow_range", 3, "scalar", "bool", default=False),
    ),
    "PackOptions": (
        _F("values_count", 0, "scalar", "int32", default=0),
        _F("axis", 1, "scalar", "int32", default=0),
    ),
    "LogicalOrOptions": (
    ),
    "OneHotOptions": (
        _F("axis", 0, "scalar", "int32", default=0),
    ),
    "AbsOptions": (
    ),
    "HardSwishOptions": (
    ),
    "LogicalAndOptions": (
    ),
    "LogicalNotOptions": (
    ),
    "UnpackOptions": (
        _F("num", 0, "scalar", "int32", default=0),
        _F("axis", 1, "scalar", "int32", default=0),
    ),
    "FloorDivOptions": (
    ),
    "SquareOptions": (
    ),
    "ZerosLikeOptions": (
    ),
    "FillOptions": (
    ),
    "FloorModOptions": (
    ),
    "RangeOptions": (
    ),
    "LeakyReluOptions": (
        _F("alpha", 0, "scalar", "float32", default=0.0),
    ),
    "SquaredDifferenceOptions": (
    ),
    "MirrorPadOptions": (
        _F("mode", 0, "enum", "MirrorPadMode", default=0),
    ),
    "UniqueOptions": (
        _F("idx_out_type", 0, "enum", "TensorType", default=2),
    ),
    "ReverseV2Options": (
    ),
    "AddNOptions": (
    ),
    "GatherNdOptions": (
    ),
    "WhereOptions": (
    ),
    "ReverseSequenceOptions": (
        _F("seq_dim", 0, "scalar", "int32", default=0),
        _F("batch_dim", 1, "scalar", "int32", default=0),
    ),
    "MatrixDiagOptions": (
    ),
    "QuantizeOptions": (
    ),
    "MatrixSetDiagOptions": (
    ),
    "IfOptions": (
        _F("then_subgraph_index", 0, "scalar", "int32", default=0),
        _F("else_subgraph_index", 1, "scalar", "int32", default=0),
    ),
    "CallOnceOptions": (
        _F("init_subgraph_index", 0, "scalar", "int32", default=0),
    ),
    "WhileOptions": (
        _F("cond_subgraph_index", 0, "scalar", "int32", default=0),
        _F("body_subgraph_index", 1, "scalar", "int32", default=0),
    ),
    "NonMaxSuppressionV4Options": (
    ),
    "NonMaxSuppressionV5Options": (
    ),
    "ScatterNdOptions": (
    ),
    "SelectV2Options": (
    ),
    "DensifyOptions": (
    ),
    "SegmentSumOptions": (
    ),
    "BatchMatMulOptions": (
        _F("adj_x", 0, "scalar", "bool", default=False),
        _F("adj_y", 1, "scalar", "bool", default=False),
        _F("asymmetric_quantize_inputs", 2, "scalar", "bool", default=False),
    ),
    "CumsumOptions": (
        _F("exclusive", 0, "scalar", "bool", default=False),
        _F("reverse", 1, "scalar", "bool", default=False),
    ),
    "BroadcastToOptions": (
    ),
    "Rfft2dOptions": (
    ),
    "HashtableOptions": (
        _F("table_id", 0, "scalar", "int32", default=0),
        _F("key_dtype", 1, "enum", "TensorType", default=0),
        _F("value_dtype", 2, "enum", "TensorType", default=0),
    ),
    "HashtableFindOptions": (
    ),
    "HashtableImportOptions": (
    ),
    "HashtableSizeOptions": (
    ),
    "VarHandleOptions": (
        _F("container", 0, "string", "string"),
        _F("shared_name", 1, "string", "string"),
    ),
    "ReadVariableOptions": (
    ),
    "AssignVariableOptions": (
    ),
    "RandomOptions": (
        _F("seed", 0, "scalar", "int64", default=0),
        _F("seed2", 1, "scalar", "int64", default=0),
    ),
    "BucketizeOptions": (
        _F("boundaries", 0, "scalar", "float32", vector=True),
    ),
    "GeluOptions": (
        _F("approximate", 0, "scalar", "bool", default=False),
    ),
    "DynamicUpdateSliceOptions": (
    ),
    "UnsortedSegmentProdOptions": (
    ),
    "UnsortedSegmentMaxOptions": (
    ),
    "UnsortedSegmentSumOptions": (
    ),
    "ATan2Options": (
    ),
    "UnsortedSegmentMinOptions": (
    ),
    "SignOptions": (
    ),
    "BitcastOptions": (
    ),
    "BitwiseXorOptions": (
    ),
    "RightShiftOptions": (
    ),
    "DilateOptions": (
    ),
    "ReduceWindowOptions": (
        _F("reduce_function", 0, "enum", "ReduceWindowFunction", default=0),
    ),
    "OperatorCode": (
        _F("deprecated_builtin_code", 0, "scalar", "int8", default=0),
        _F("custom_code", 1, "string", "string"),
        _F("version", 2, "scalar", "int32", default=1),
        _F("builtin_code", 3, "enum", "BuiltinOperator", default=0),
    ),
    "StableHLOCompositeOptions": (
        _F("name", 0, "string", "string"),
        _F("decomposition_subgraph_index", 1, "scalar", "int32", default=0),
        _F("composite_attributes", 2, "scalar", "uint8", vector=True),
        _F("composite_attributes_format", 3, "enum", "CustomOptionsFormat", default=0),
        _F("version", 4, "scalar", "int32", default=0),
    ),
    "StablehloShiftLeftOptions": (
    ),
    "Operator": (
        _F("opcode_index", 0, "scalar", "uint32", default=0),
        _F("inputs", 1, "scalar", "int32", vector=True),
        _F("outputs", 2, "scalar", "int32", vector=True),
        _F("builtin_options_type", 3, "union_type", "BuiltinOptions", default=0),
        _F("builtin_options", 4, "union", "BuiltinOptions"),
        _F("custom_options", 5, "scalar", "uint8", vector=True),
        _F("custom_options_format", 6, "enum", "CustomOptionsFormat", default=0),
        _F("mutating_variable_inputs", 7, "scalar", "bool", vector=True),
        _F("intermediates", 8, "scalar", "int32", vector=True),
        _F("large_custom_options_offset", 9, "scalar", "uint64", default=0),
        _F("large_custom_options_size", 10, "scalar", "uint64", default=0),
        _F("builtin_options_2_type", 11, "union_type", "BuiltinOptions2", default=0),
        _F("builtin_options_2", 12, "union", "BuiltinOptions2"),
        _F("debug_metadata_index", 13, "scalar", "int32", default=-1),
    ),
    "SubGraph": (
        _F("tensors", 0, "table", "Tensor", vector=True),
        _F("inputs", 1, "scalar", "int32", vector=True),
        _F("outputs", 2, "scalar", "int32", vector=True),
        _F("operators", 3, "table", "Operator", vector=True),
        _F("name", 4, "string", "string"),
        _F("debug_metadata_index", 5, "scalar", "int32", default=-1),
    ),
    "Buffer": (
        _F("data", 0, "scalar", "uint8", vector=True),
        _F("offset", 1, "scalar", "uint64", default=0),
        _F("size", 2, "scalar", "uint64", default=0),
    ),
    "ExternalBufferGroup": (
        _F("name", 0, "string", "string"),
    ),
    "ExternalBuffer": (
        _F("id", 0, "scalar", "uint32", default=0),
        _F("group", 1, "scalar", "uint32", default=0),
        _F("offset", 2, "scalar", "uint64", default=0),
        _F("length", 3, "scalar", "uint64", default=0),
        _F("packing", 4, "string", "string"),
    ),
    "Metadata": (
        _F("name", 0, "string", "string"),
        _F("buffer", 1, "scalar", "uint32", default=0),
    ),
    "TensorMap": (
        _F("name", 0, "string", "string"),
        _F("tensor_index", 1, "scalar", "uint32", default=0),
    ),
    "SignatureDef": (
        _F("inputs", 0, "table", "TensorMap", vector=True),
        _F("outputs", 1, "table", "TensorMap", vector=True),
        _F("signature_key", 2, "string", "string"),
        _F("deprecated_tag", 3, "string", "string", deprecated=True),
        _F("subgraph_index", 4, "scalar", "uint32", default=0),
    ),
    "Model": (
        _F("version", 0, "scalar", "uint32", default=0),
        _F("operator_codes", 1, "table", "OperatorCode", vector=True),
        _F("subgraphs", 2, "table", "SubGraph", vector=True),
        _F("description", 3, "string", "string"),
        _F("buffers", 4, "table", "Buffer", vector=True),
        _F("metadata_buffer", 5, "scalar", "int32", vector=True),
        _F("metadata", 6, "table", "Metadata", vector=True),
        _F("signature_defs", 7, "table", "SignatureDef", vector=True),
        _F("external_buffer_groups", 8, "table", "ExternalBufferGroup", vector=True),
        _F("external_buffers", 9, "table", "ExternalBuffer", vector=True),
    ),
})


def field(table: str, name: str) -> FieldDef:
    """The FieldDef called ``name`` in ``table`` (KeyError when the schema has no such field)."""
    for definition in TABLES[table]:
        if definition.name == name:
            return definition
    raise KeyError(f"{table}.{name}")


def slot(table: str, name: str) -> int:
    """vtable slot of ``table.name``: what the reader passes to the table accessors."""
    return field(table, name).slot
