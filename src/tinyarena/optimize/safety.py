"""Which overlap rules of ``overlap`` each kernel set's loop order is proven to tolerate.

A plan that lets two live tensors share bytes is only as safe as the loops that run it, and
those loops belong to the kernel set the firmware links, not to TFLM. Each ``RuleSet`` below
lists, for one kernel set (and ISA class, where CMSIS-NN's code differs by ISA), the ops for
which rule (b) (element-wise in place) and rule (c) (partial overlap of a window/PAD output
with its dying input) are proven; rule (a) (views) is proven for every kernel set, because
RESHAPE, SQUEEZE and EXPAND_DIMS are never replaced. Anything not listed is refused.

Proofs for CMSIS-NN (``ARM-software/CMSIS-NN`` at 4ab83cc3, the commit TFLM 90b983c2 pins, with
TFLM's ``kernels/cmsis_nn/*.cc`` replacing ADD, MUL, CONV_2D, DEPTHWISE_CONV_2D,
FULLY_CONNECTED, AVERAGE/MAX_POOL_2D, SOFTMAX, SVDF, UNIDIRECTIONAL_SEQUENCE_LSTM,
TRANSPOSE_CONV, PAD, TRANSPOSE, MAXIMUM/MINIMUM and BATCH_MATMUL) are data beside each kernel:
``OVERLAP_RULES`` of ``kernels/cmsis_nn/{conv,depthwise_conv,pooling,softmax,fully_connected}``
and ``kernels/cmsis_nn/_overlap`` (ADD, MUL, PAD), one ``OverlapRule`` per code path and ISA
class, each citing the source lines it rests on. ``_cmsis`` turns them into the
``cmsis-nn:<isa>`` rule sets: ``in-place`` rules join rule (b); ``margin`` rules (blocks of
whole output pixels written after all their reads: the reference margin holds, because its
condition at a block's last element is the block's own) and ``block`` rules (writes inside a
block while the block is still read: ``margins.block_margin`` / ``pad_chunk_margin``, the
scheme kept in ``RuleSet.schemes``) join rule (c); ``none`` rules name the loop order that
forbids overlap, said in ``optimize``'s notes (the int8 1x1 convolution on plain C and DSP
walks output-channel pairs outermost; MVE depthwise with more than 124 channels walks channel
blocks outermost; fully connected re-reads its input row for every output). Paths with no
rule (int16 convolution and depthwise, MVE 1xN, grouped convolutions, int16 pooling) are not
proven and refused. The op's path keys (``op_keys``) follow the wrappers' own dispatch tests
(``_cmsis_paths``). Where TFLM's cmsis_nn glue hands a type to the reference kernel (its
``conv.cc``/``depthwise_conv.cc``/``pooling.cc`` Eval for float32 input: ``reference_ops::
Conv``/``DepthwiseConv``, ``AveragePoolingEvalFloat``/``MaxPoolingEvalFloat``; ``pad.cc`` for
float32, int16 and int32: ``reference_ops::Pad``/``PadImageStyle``), the reference proof holds
and rule (c) is allowed: entries ``"OP:TYPE"`` of ``partial_ops``. A plan's kernel sets
(``safe_for``) are checked with each overlap's actual shift against each kernel set's own
margin, since a block rule's margin is smaller than the reference one.

With no kernel set named, ``optimize`` plans with ``PORTABLE``: views only, safe for every
kernel set, including ones tinyarena does not know.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Iterable, Mapping

from tinyarena.errors import PlanError
from tinyarena.model.metadata import PlanSafety, plan_safety
from tinyarena.model.types import Model, Operator
from tinyarena.kernels.cmsis_nn.overlap_rules import OverlapRule, cmsis_overlap_rules
from tinyarena.optimize.graph import PLAN_ALIGNMENT
from tinyarena.optimize.margins import MARGIN_OPS, WindowGeometry, op_geometry, op_margin

PORTABLE = "any"
ESP_NN = "esp-nn"
VIEW_OPS = frozenset({"RESHAPE", "SQUEEZE", "EXPAND_DIMS"})
INPLACE_OPS = frozenset({"ADD", "SUB", "MUL", "RELU", "RELU6", "LOGISTIC", "TANH", "LEAKY_RELU",
                         "HARD_SWISH", "QUANTIZE"})
PARTIAL_OPS = MARGIN_OPS
CMSIS_NN_ISAS = ("plain", "dsp", "mve")


def _empty() -> Mapping[str, str]:
    return MappingProxyType({})


@dataclass(frozen=True)
class RuleSet:
    """The overlap rules one kernel set (``key``) is proven to tolerate, per op: an entry
    ``"OP"`` allows every input type, ``"OP:TYPE"`` (TFLM type name) only that one."""

    key: str
    inplace_ops: frozenset[str]
    partial_ops: frozenset[str]
    proof: str
    schemes: Mapping[str, str] = field(default_factory=_empty)
    """Keys of ``partial_ops`` whose code writes inside blocks while still reading them: the
    block scheme of ``margins.block_margin`` (else the reference margin holds)."""
    forbidden: Mapping[str, str] = field(default_factory=_empty)
    """Keys whose loop order forbids any overlap, with the loop that forbids it (said in the
    output)."""
    sources: Mapping[str, str] = field(default_factory=_empty)
    """Where each key's rule comes from (function and lines), for ``report``."""


_CMSIS_REFERENCE_PARTIAL = frozenset(
    {f"{op}:FLOAT32" for op in ("CONV_2D", "DEPTHWISE_CONV_2D", "AVERAGE_POOL_2D",
                                "MAX_POOL_2D")}
    | {f"{op}:{t}" for op in ("PAD", "PADV2") for t in ("FLOAT32", "INT16", "INT32")})
"""Rule (c) under CMSIS-NN: the (op, input type) pairs its TFLM glue runs on reference code."""


def _cmsis_rules(isa: str) -> tuple[OverlapRule, ...]:
    """The CMSIS-NN overlap rules (``kernels/cmsis_nn``'s ``OVERLAP_RULES``) read for ``isa``."""
    return tuple(r for r in cmsis_overlap_rules() if isa in r.isas)


def _cmsis(isa: str) -> RuleSet:
    rules = _cmsis_rules(isa)
    inplace = frozenset(r.key for r in rules if r.kind == "in-place")
    partial = frozenset(r.key for r in rules if r.kind in ("margin", "block"))
    return RuleSet(f"cmsis-nn:{isa}", INPLACE_OPS | inplace, _CMSIS_REFERENCE_PARTIAL | partial,
                   f"CMSIS-NN ({isa}): the overlap rules read from each code path's loop order "
                   "(kernels/cmsis_nn OVERLAP_RULES)",
                   MappingProxyType({r.key: r.scheme for r in rules
                                     if r.kind == "block" and r.scheme}),
                   MappingProxyType({r.key: r.why for r in rules if r.kind == "none"}),
                   MappingProxyType({r.key: r.source for r in rules}))


def _cmsis_common() -> RuleSet:
    """What every ISA class tolerates, each key with the most conservative scheme."""
    sets = [_cmsis(isa) for isa in CMSIS_NN_ISAS]
    inplace = frozenset.intersection(*(r.inplace_ops for r in sets))
    partial = frozenset.intersection(*(r.partial_ops for r in sets))
    # A key with a block scheme on some ISA and the reference margin on another: the block
    # rule is the stricter (``margins.block_margin``); differing block schemes: refuse.
    schemes: dict[str, str] = {}
    for key in sorted(partial):
        found = {r.schemes[key] for r in sets if key in r.schemes}
        if len(found) > 1:
            partial = partial - {key}
        elif found:
            schemes[key] = found.pop()
    return RuleSet("cmsis-nn", inplace, partial,
                   "CMSIS-NN on every ISA class (what all of plain, DSP and MVE tolerate)",
                   MappingProxyType(schemes))


RULE_SETS: Mapping[str, RuleSet] = MappingProxyType({
    PORTABLE: RuleSet(PORTABLE, frozenset(), frozenset(),
                      "views only: safe whatever kernels the firmware links"),
    "reference": RuleSet("reference", INPLACE_OPS, PARTIAL_OPS,
                         "TFLM's reference kernels (overlap rules (b) and (c), margins)"),
    "cmsis-nn": _cmsis_common(),
    # ESP-NN (esp-tflite-micro's kernels, per chip: ANSI C, ESP32-S3 and P4 assembly): no rule
    # is read from its code yet, so only what every kernel set tolerates; ``optimize`` says so.
    ESP_NN: RuleSet(ESP_NN, frozenset(), frozenset(),
                    "ESP-NN: no overlap rule proven (its per-chip code is not read yet); views, "
                    "lifetimes and reordering only"),
    **{f"cmsis-nn:{isa}": _cmsis(isa) for isa in CMSIS_NN_ISAS},
})


def kernel_set_key(kernel_set: str, isa: str | None = None) -> str:
    """``"reference"``, ``"cmsis-nn:dsp"``...: the RULE_SETS key for a kernel set on an ISA."""
    key = f"{kernel_set}:{isa}" if isa and kernel_set == "cmsis-nn" else kernel_set
    if key not in RULE_SETS:
        raise PlanError(f"unknown kernel set {key!r}: tinyarena knows the loop order of "
                        f"{', '.join(k for k in RULE_SETS if k != PORTABLE)}; name one of them, "
                        f"or name none to get a plan safe for every kernel set")
    return key


def target_key(profile: Any) -> str:
    """The RULE_SETS key of a target profile: its kernel set (``reference`` for profiles that
    predate kernel sets) on its CMSIS-NN ISA class. ESP-NN's loop orders are not proven for
    any overlap: an esp-nn build gets ``ESP_NN``, the portable rules (views only) under its own
    name, so that ``optimize`` says why."""
    kernel_set = getattr(profile, "kernel_set", "reference") or "reference"
    return kernel_set_key(kernel_set, getattr(profile, "cmsis_nn_isa", None))


def rule_set(key: str) -> RuleSet:
    return RULE_SETS[kernel_set_key(key)]


def op_keys(model: Model, op: Operator) -> tuple[str, ...]:
    """The keys a RuleSet may list for ``op`` of subgraph 0, general to specific: ``"OP"``,
    ``"OP:TYPE"`` (input 0's TFLM type) and, for int8 window ops, the CMSIS-NN code path
    TFLM 90b983c2's wrappers pick (``"OP:INT8:im2col"``, ``":1xN"``, ``":3x3"``)."""
    sg = model.subgraphs[0]
    if not op.inputs or op.inputs[0] < 0:
        return (op.name,)
    t = sg.tensors[op.inputs[0]].type.name
    keys = [op.name, f"{op.name}:{t}"]
    g = op_geometry(model, op) if t == "INT8" else None
    w = sg.tensors[op.inputs[1]] if g is not None and g.kind != "pool" else None
    if g is not None and (w is None or w.type.name == "INT8"):
        keys.extend(f"{op.name}:{t}:{path}" for path in _cmsis_paths(g))
    return tuple(keys)


def _cmsis_paths(g: WindowGeometry) -> tuple[str, ...]:
    """Which of CMSIS-NN's int8 code paths (arm_convolve_wrapper_s8,
    arm_depthwise_conv_wrapper_s8) runs this geometry, by the wrappers' own tests."""
    undilated = g.dilation_h == 1 and g.dilation_w == 1
    if g.kind == "conv":
        if g.groups != 1:
            return ()
        if g.pad_top == 0 and g.pad_left == 0 and g.filter_h == g.filter_w == 1 and undilated:
            return ("1x1",) if g.stride_h == g.stride_w == 1 else ("1x1s",)
        if g.in_h == 1 and g.dilation_w == 1 and g.filter_h == 1 and (g.stride_w * g.in_c) % 4 == 0:
            return ("1xN",)
        return ("im2col",)
    if g.kind == "depthwise" and g.batches == 1:
        if g.in_c == 1 and g.out_c > 1:
            return ("1ch",)
        if g.depth_multiplier == 1 and undilated:
            three = g.filter_h == g.filter_w == 3 and g.pad_top <= 1 and g.pad_left <= 1
            path = "3x3" if three else "opt"
            # MVE's arm_depthwise_conv_s8_opt: one channel block when in_c <= CH_IN_BLOCK_MVE
            return (path, f"{path}:c<=124") if g.in_c <= 124 else (path,)
        return ("generic",)
    return ()


def matched_key(ops: frozenset[str], keys: tuple[str, ...]) -> str:
    """The most specific of an op's keys that ``ops`` lists ("" when none)."""
    return next((k for k in reversed(keys) if k in ops), "")


def forbidden_why(rs: RuleSet, keys: tuple[str, ...]) -> str | None:
    """Why the kernel set's loop order forbids overlap for an op with these keys (None when
    it is merely not proven, or allowed)."""
    if allows(rs.partial_ops, keys) or allows(rs.inplace_ops, keys):
        return None
    return next((rs.forbidden[k] for k in reversed(keys) if k in rs.forbidden), None)


def allows(ops: frozenset[str], keys: tuple[str, ...]) -> bool:
    """Whether ``ops`` (a RuleSet's inplace_ops or partial_ops) lists any of an op's keys."""
    return any(k in ops for k in keys)


def safe_for(used: Iterable[tuple[str, tuple[str, ...]]],
             shifts: Iterable[tuple[Model, Operator, int]] = ()) -> tuple[str, ...]:
    """Every kernel set key whose proofs cover each used (rule, op keys) pair (``op_keys``);
    ``("any",)`` when only rules every kernel set tolerates (views, lifetimes, reordering)
    were used. ``shifts`` lists each rule-(c) overlap the plan uses as (model, op, output
    offset minus input offset): a kernel set covers it only when that shift is within the
    margin of its own loop order (a block rule's margin is smaller than the reference one)."""
    pairs = {(rule, keys) for rule, keys in used if rule != "view"}
    moves = list(shifts)
    if not pairs and not moves:
        return (PORTABLE,)

    def covers(rs: RuleSet) -> bool:
        if not all(allows(rs.inplace_ops if rule == "in-place" else rs.partial_ops, keys)
                   for rule, keys in pairs):
            return False
        for model, op, shift in moves:
            keys = op_keys(model, op)
            if not allows(rs.partial_ops, keys):
                return False
            margin = op_margin(model, op, rs.schemes.get(matched_key(rs.partial_ops, keys)))
            if margin is None or shift > (margin // PLAN_ALIGNMENT) * PLAN_ALIGNMENT:
                return False
        return True

    return tuple(k for k, rs in RULE_SETS.items() if k != PORTABLE and covers(rs))


def plan_warnings(model: Model, profile: Any) -> list[str]:
    """Warnings for running ``model`` on ``profile``: its pinned plan was written by ``tinyarena
    optimize`` for kernel sets that do not include the target's."""
    safety: PlanSafety | None = plan_safety(model)
    if safety is None or PORTABLE in safety.safe_for:
        return []
    key = target_key(profile)
    if key in safety.safe_for:
        return []
    name = getattr(profile, "name", str(profile))
    planned = f" (planned for target {safety.target})" if safety.target else ""
    kernels = getattr(profile, "kernel_set", None)
    own = _default_kernel_set(name)
    flag = f" --kernels {kernels}" if kernels and own and kernels != own else ""
    return [f"this model's arena plan (OfflineMemoryAllocation written by tinyarena optimize"
            f"{planned}) overlaps tensors under rules proven only for kernel set(s) "
            f"{', '.join(safety.safe_for)}; target {name} runs kernel set {key}, whose loop "
            f"order may overwrite data still needed: its outputs can differ from the original "
            f"model's. Re-run tinyarena optimize on the original model with --target {name}: "
            f"tinyarena optimize ORIGINAL.tflite -o OPTIMIZED.tflite --target {name}{flag}"]


def _default_kernel_set(target: str) -> str | None:
    """The kernel set ``target`` links unless --kernels says otherwise (None: not a target)."""
    from tinyarena.arena.targets import PROFILES

    profile = PROFILES.get(target)
    return profile.kernel_set if profile is not None else None


__all__ = ["CMSIS_NN_ISAS", "ESP_NN", "INPLACE_OPS", "PARTIAL_OPS", "PORTABLE", "RULE_SETS", "RuleSet",
           "VIEW_OPS", "allows", "forbidden_why", "kernel_set_key", "matched_key", "op_keys",
           "plan_warnings", "rule_set", "safe_for", "target_key"]
