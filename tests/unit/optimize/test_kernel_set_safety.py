"""``optimize`` per kernel set (issue 9): safe by default, kernel-specific rules only where the
named kernels' loop order tolerates them, the assumption recorded in the model and checked by
``size``/``run``/``plan``.

Loop orders are emulated here as sequences of steps, each reading some arena bytes and then
writing some (``_hazards``): a plan is safe for a loop order when no step writes a byte that a
later step still reads. The orders are written down from the sources (``optimize.safety``):
TFLM's reference conv writes one output element after reading its receptive field; CMSIS-NN's
1x1 conv (``arm_nn_mat_mult_nt_t_s8``, DSP and plain C) walks output-channel pairs outermost,
re-reading every input pixel for each pair; CMSIS-NN's element-wise ADD/MUL read a block of
both inputs (1 element plain C, 4 int8 DSP and MVE) and then write that block.
"""

from __future__ import annotations

import json

import numpy as np
import pytest

from device_outputs import figures, matches, model_path, run_device_input
from optimize_models import elementwise_model, reorder_model, window_model
from tinyarena import Interpreter
from tinyarena.arena import allocate_model
from tinyarena.cli import main
from tinyarena.errors import PlanError
from tinyarena.model import read_model
from tinyarena.model.metadata import plan_safety
from tinyarena.optimize import optimize_model
from tinyarena.optimize.safety import safe_for

Step = tuple[list[tuple[int, int]], list[tuple[int, int]]]  # (reads, writes) as byte ranges


def _hazards(steps: list[Step], arena_bytes: int) -> int:
    """Steps that write a byte some later step still reads (reads precede writes in a step)."""
    last_read = np.full(arena_bytes, -1, dtype=np.int64)
    for s, (reads, _) in enumerate(steps):
        for a, b in reads:
            last_read[a:b] = s
    return sum(any(int(last_read[a:b].max(initial=-1)) > s for a, b in writes)
               for s, (_, writes) in enumerate(steps))


def _offsets(data: bytes) -> tuple[dict[int, int], int]:
    layout = allocate_model(read_model(data))
    return {i: o for (sg, i), o in layout.tensor_offsets.items() if sg == 0}, layout.head


def _assert_same_outputs(original: bytes, optimized: bytes, target: str, x: np.ndarray) -> None:
    """The optimized model's output equals the original's, both run by tinyarena's interpreter
    with the target's kernel set (the plan's overlaps are real there)."""
    outs = []
    for model in (original, optimized):
        ip = Interpreter(model, target=target)
        ip.allocate_tensors()
        ip.set_input(0, x)
        ip.invoke()
        outs.append(ip.get_output(0))
    assert np.array_equal(outs[0], outs[1])


def _conv_1x1_steps(data: bytes, op_index: int, order: str) -> tuple[list[Step], int]:
    """One 1x1 int8 conv of ``data`` (pixels P, channels Ci -> Co) as steps in ``order``:
    "reference" (pixel, then output channel, one element a step) or "cmsis-nn" (channel pairs
    outermost, pixel pairs inside, 2x2 outputs a step)."""
    model = read_model(data)
    op = model.subgraphs[0].operators[op_index]
    x, y = op.inputs[0], op.outputs[0]
    tx, ty = model.subgraphs[0].tensors[x], model.subgraphs[0].tensors[y]
    pixels, ci, co = int(np.prod(tx.shape[:3])), int(tx.shape[3]), int(ty.shape[3])
    offs, head = _offsets(data)
    ox, oy = offs[x], offs[y]
    steps: list[Step] = []
    if order == "reference":
        for p in range(pixels):
            for c in range(co):
                steps.append(([(ox + p * ci, ox + (p + 1) * ci)],
                              [(oy + p * co + c, oy + p * co + c + 1)]))
    else:
        assert pixels % 2 == 0 and co % 2 == 0
        for c in range(0, co, 2):
            for p in range(0, pixels, 2):
                steps.append(([(ox + p * ci, ox + (p + 2) * ci)],
                              [(oy + p * co + c, oy + p * co + c + 2),
                               (oy + (p + 1) * co + c, oy + (p + 1) * co + c + 2)]))
    return steps, head


def _elementwise_steps(data: bytes, op_name: str, block: int) -> tuple[list[Step], int]:
    model = read_model(data)
    sg = model.subgraphs[0]
    op = next(o for o in sg.operators if o.name == op_name)
    offs, head = _offsets(data)
    n = int(np.prod(sg.tensors[op.outputs[0]].shape))  # int8: one byte an element
    steps: list[Step] = []
    for i in range(0, n, block):
        j = min(i + block, n)
        steps.append(([(offs[t] + i, offs[t] + j) for t in op.inputs],
                      [(offs[op.outputs[0]] + i, offs[op.outputs[0]] + j)]))
    return steps, head


def test_reference_rule_c_plan_breaks_cmsis_nn_1x1_order() -> None:
    """The old default (reference rules) lets the 1x1 conv's output start 16 bytes below its
    input: exact for the reference order, but CMSIS-NN's channel-pair order overwrites input
    pixels it reads again for the next pair, the failure the issue measured on person_detect.
    Named for the Cortex-M4 (or with no kernels named), the plan keeps them apart."""
    data = window_model("CONV_2D", 1, 1, "VALID", 1, "int8", 1)
    ref = optimize_model(data, kernel_set="reference", time_budget_s=0.2)
    assert 1 in [p.op for p in ref.partial]
    steps, head = _conv_1x1_steps(ref.model, 1, "reference")
    assert _hazards(steps, head) == 0
    steps, head = _conv_1x1_steps(ref.model, 1, "cmsis-nn")
    assert _hazards(steps, head) > 0
    for kw in ({}, {"target": "cortex-m4"}, {"kernel_set": "cmsis-nn"}):
        result = optimize_model(data, time_budget_s=0.2, **kw)  # type: ignore[arg-type]
        assert result.partial == ()
        assert any("CONV_2D" in n and "not used" in n for n in result.notes)
        steps, head = _conv_1x1_steps(result.model, 1, "cmsis-nn")
        assert _hazards(steps, head) == 0


@pytest.mark.parametrize("op", ["ADD", "MUL"])
@pytest.mark.parametrize("target,isa,block", [("cortex-m3", "plain", 1), ("cortex-m4", "dsp", 4),
                                              ("cortex-m55", "mve", 4)])
def test_cmsis_nn_elementwise_in_place(op: str, target: str, isa: str, block: int) -> None:
    """Named for a Cortex-M core, ADD/MUL may write in place: every ISA's block order is
    hazard-free on the written plan, the model records the kernel sets it is safe for, and
    tinyarena's CMSIS-NN interpreter gives the original's outputs."""
    data = elementwise_model(op)
    result = optimize_model(data, target=target, time_budget_s=0.2)
    assert any(rule == "in-place" and name == op for _, name, rule, _, _ in result.aliases)
    assert result.after.head < result.before.head
    steps, head = _elementwise_steps(result.model, op, block)
    assert _hazards(steps, head) == 0
    record = plan_safety(read_model(result.model))
    assert record is not None and record.target == target
    assert record.planned_for == f"cmsis-nn:{isa}"
    assert {"reference", f"cmsis-nn:{isa}"} <= set(record.safe_for)
    rng = np.random.default_rng(1)
    x = rng.integers(-128, 128, size=(1, 16, 16, 4), dtype=np.int8)
    _assert_same_outputs(data, result.model, target, x)


@pytest.mark.parametrize("op", ["CONV_2D", "DEPTHWISE_CONV_2D", "MAX_POOL_2D"])
def test_cmsis_nn_float_windows_run_reference_code(op: str) -> None:
    """Float32 window ops under CMSIS-NN are TFLM's reference kernels: rule (c) applies, the
    plan is recorded safe for every kernel set, and the CMSIS-NN interpreter gives the
    original's outputs."""
    data = window_model(op, 3, 1, "SAME", 1, "float32", 1)
    result = optimize_model(data, target="cortex-m4", time_budget_s=0.2)
    assert 1 in [p.op for p in result.partial]
    assert "cmsis-nn:dsp" in result.safe_for and "reference" in result.safe_for
    x = np.random.default_rng(2).normal(size=(1, 12, 12, 1)).astype(np.float32)
    _assert_same_outputs(data, result.model, "cortex-m4", x)


def _window_steps(data: bytes, op_index: int, pixels_per_block: int, channel_block: int,
                  output_at: int | None = None) -> tuple[list[Step], int]:
    """A window op of the optimized model as CMSIS-NN's coarsened loop order: output pixels
    in order, ``pixels_per_block`` pixels (every channel) at a time, or inside one pixel
    ``channel_block`` channels at a time (depthwise/pooling: output channel c reads input
    channel c // multiplier), each block reading its windows' valid taps before writing."""
    from tinyarena.optimize.margins import op_geometry

    model = read_model(data)
    op = model.subgraphs[0].operators[op_index]
    g = op_geometry(model, op)
    assert g is not None and g.batches == 1
    offs, head = _offsets(data)
    ox, oy = offs[op.inputs[0]], offs[op.outputs[0]]
    if output_at is not None:  # a placement of the output relative to the input, to probe
        oy = ox + output_at
        head = max(head, oy + g.out_h * g.out_w * g.out_c)

    def taps(p: int) -> list[int]:
        y0, x0 = (p // g.out_w) * g.stride_h - g.pad_top, (p % g.out_w) * g.stride_w - g.pad_left
        return [y * g.in_w + x for ky in range(g.filter_h) for kx in range(g.filter_w)
                if 0 <= (y := y0 + ky * g.dilation_h) < g.in_h
                and 0 <= (x := x0 + kx * g.dilation_w) < g.in_w]

    steps: list[Step] = []
    n_pix = g.out_h * g.out_w
    for p0 in range(0, n_pix, pixels_per_block):
        block = range(p0, min(p0 + pixels_per_block, n_pix))
        if channel_block == 0:  # whole pixels
            reads = [(ox + t * g.in_c, ox + (t + 1) * g.in_c) for p in block for t in taps(p)]
            steps.append((reads, [(oy + block[0] * g.out_c, oy + (block[-1] + 1) * g.out_c)]))
            continue
        for p in block:
            for c0 in range(0, g.out_c, channel_block):
                c1 = min(c0 + channel_block, g.out_c)
                i0, i1 = c0 // g.depth_multiplier, (c1 - 1) // g.depth_multiplier + 1
                reads = [(ox + t * g.in_c + i0, ox + t * g.in_c + i1) for t in taps(p)]
                steps.append((reads, [(oy + p * g.out_c + c0, oy + p * g.out_c + c1)]))
    return steps, head


@pytest.mark.parametrize("op,k,stride,target,pixels,channels", [
    ("CONV_2D", 3, 1, "cortex-m4", 2, 0),    # arm_convolve_s8: im2col of 2 columns
    ("CONV_2D", 3, 2, "cortex-m3", 2, 0),
    ("CONV_2D", 3, 1, "cortex-m55", 4, 0),   # MVE: 4 columns per GEMM
    ("DEPTHWISE_CONV_2D", 3, 1, "cortex-m4", 1, 4),  # arm_depthwise_conv_3x3_s8
    ("DEPTHWISE_CONV_2D", 3, 2, "cortex-m3", 1, 4),
    ("DEPTHWISE_CONV_2D", 5, 1, "cortex-m4", 1, 0),  # arm_depthwise_conv_s8_opt: whole pixels
    ("DEPTHWISE_CONV_2D", 5, 1, "cortex-m0", 1, 1),  # plain C: the generic kernel
    ("AVERAGE_POOL_2D", 3, 1, "cortex-m4", 1, 0),    # arm_avgpool_s8 DSP: whole pixels
    ("AVERAGE_POOL_2D", 2, 2, "cortex-m55", 1, 16),  # MVE: 16-channel chunks
    ("AVERAGE_POOL_2D", 3, 1, "cortex-m0", 1, 1),    # plain C: element by element
])
def test_cmsis_nn_int8_window_kernels_in_their_loop_order(op: str, k: int, stride: int,
                                                         target: str, pixels: int,
                                                         channels: int) -> None:
    """Where CMSIS-NN's int8 kernel is the reference order coarsened, the Cortex-M plan
    overlaps the op's output with its input and the kernel's own order finds no hazard."""
    data = window_model(op, k, stride, "SAME", 1, "int8", 1)
    result = optimize_model(data, target=target, time_budget_s=0.2)
    assert 1 in [p.op for p in result.partial]
    steps, head = _window_steps(result.model, 1, pixels, channels)
    assert _hazards(steps, head) == 0
    # the emulation does catch an output placed where the loop still has input to read
    steps, head = _window_steps(result.model, 1, pixels, channels, output_at=64)
    assert _hazards(steps, head) > 0
    x = np.random.default_rng(4).integers(-128, 128, size=(1, 12, 12, 1), dtype=np.int8)
    _assert_same_outputs(data, result.model, target, x)


@pytest.mark.parametrize("target,shared", [("cortex-m4", True), ("cortex-m3", True),
                                           ("cortex-m55", True)])
def test_depthwise_paths_per_isa(target: str, shared: bool) -> None:
    """A multiplier-2 depthwise (arm_depthwise_conv_s8, reference order) overlaps on every
    ISA; a multiplier-1 3x3 one too (MVE's arm_depthwise_conv_s8_opt has one channel block
    at 8 channels; more than 124 are refused: test_mve_depthwise_channel_blocks)."""
    mult2 = optimize_model(window_model("DEPTHWISE_CONV_2D", 3, 1, "SAME", 1, "int8", 2),
                           target=target, time_budget_s=0.2)
    assert 1 in [p.op for p in mult2.partial]
    steps, head = _window_steps(mult2.model, 1, 1, 1)
    assert _hazards(steps, head) == 0
    mult1 = optimize_model(window_model("DEPTHWISE_CONV_2D", 3, 1, "SAME", 1, "int8", 1),
                           target=target, time_budget_s=0.2)
    assert (1 in [p.op for p in mult1.partial]) is shared


def test_default_plan_is_portable_and_recorded() -> None:
    data = reorder_model()
    result = optimize_model(data, time_budget_s=0.2)
    assert result.changed and result.kernel_set == "any" and result.target is None
    assert result.safe_for == ("any",) and result.partial == ()
    assert all(rule == "view" for _, _, rule, _, _ in result.aliases)
    record = plan_safety(read_model(result.model))
    assert record is not None and record.safe_for == ("any",) and record.planned_for == "any"


def test_safe_for_is_the_kernel_sets_whose_proofs_cover_every_rule_used() -> None:
    every = ("reference", "cmsis-nn", "cmsis-nn:plain", "cmsis-nn:dsp", "cmsis-nn:mve")
    assert safe_for([]) == ("any",) and safe_for([("view", ("RESHAPE",))]) == ("any",)
    assert safe_for([("in-place", ("RELU", "RELU:INT8"))]) == every
    conv_1x1 = ("CONV_2D", "CONV_2D:INT8", "CONV_2D:INT8:1x1")
    # by keys alone: MVE's 1x1 has a (block) rule, C and DSP forbid it; the shift decides
    # the rest (test_mve_1x1_conv_block_rule)
    assert safe_for([("in-place", ("ADD", "ADD:INT8")), ("partial", conv_1x1)]) == (
        "reference", "cmsis-nn:mve")
    # CMSIS-NN's TFLM glue runs float32 convolutions and int16 PAD on the reference code
    assert safe_for([("partial", ("CONV_2D", "CONV_2D:FLOAT32")),
                     ("partial", ("PAD", "PAD:INT16"))]) == every
    assert safe_for([("partial", ("PAD", "PAD:INT8"))]) == every
    dw_3x3 = ("DEPTHWISE_CONV_2D", "DEPTHWISE_CONV_2D:INT8", "DEPTHWISE_CONV_2D:INT8:3x3")
    assert safe_for([("partial", dw_3x3)]) == ("reference", "cmsis-nn:plain", "cmsis-nn:dsp")
    with pytest.raises(PlanError, match="unknown kernel set"):
        optimize_model(reorder_model(), kernel_set="cmsis-nn:sse")


def test_size_run_plan_warn_when_the_target_is_not_covered(tmp_path, capsys) -> None:
    src = tmp_path / "m.tflite"
    ref = tmp_path / "ref.tflite"
    src.write_bytes(window_model("CONV_2D", 1, 1, "VALID", 1, "int8", 1))
    assert main(["optimize", str(src), "-o", str(ref), "--target", "host-x64",
                 "--time-budget", "0.2"]) == 0
    assert "safe only for kernel set(s) reference" in capsys.readouterr().out
    for argv in (["size", str(ref), "--target", "cortex-m4", "--json"],
                 ["run", str(ref), "--target", "cortex-m4", "--json", "--repeat", "1",
                  "--force"]):
        assert main(argv) == 0
        captured = capsys.readouterr()
        warnings = json.loads(captured.out)["warnings"]
        assert len(warnings) == 1 and "cmsis-nn:dsp" in warnings[0]
        assert "--target cortex-m4" in warnings[0] and "warning:" in captured.err
    # run refuses without --force (issue 19): its outputs would not be the device's
    assert main(["run", str(ref), "--target", "cortex-m4", "--json", "--repeat", "1"]) == 1
    error = json.loads(capsys.readouterr().out)["error"]
    assert error["type"] == "PlanError" and "--force" in error["message"]
    assert "proven only for kernel set(s) reference" in error["message"]
    for argv in (["size", str(ref), "--json"], ["plan", str(ref), "--json"],
                 ["size", str(ref), "--target", "arm32-short-enums", "--json"],
                 ["size", str(ref), "--target", "cortex-m4", "--kernels", "reference",
                  "--json"]):
        assert main(argv) == 0
        captured = capsys.readouterr()
        assert json.loads(captured.out)["warnings"] == [] and "warning" not in captured.err
    # --kernels picks the rules optimize plans for, as --kernel-set does
    m4_ref = tmp_path / "m4ref.tflite"
    assert main(["optimize", str(src), "-o", str(m4_ref), "--target", "cortex-m4", "--kernels",
                 "reference", "--time-budget", "0.2", "--json"]) == 0
    planned = json.loads(capsys.readouterr().out)
    assert planned["kernel_set"] == "reference" and planned["target"] == "cortex-m4"
    assert planned["safe_for_kernel_sets"] == ["reference"]
    portable = tmp_path / "any.tflite"
    src.write_bytes(reorder_model())
    assert main(["optimize", str(src), "-o", str(portable), "--time-budget", "0.2"]) == 0
    capsys.readouterr()
    assert main(["size", str(portable), "--target", "cortex-m55", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["warnings"] == []


@pytest.mark.parametrize("name", ["person_detect.tflite", "keyword_scrambled.tflite",
                                  "micro_speech_quantized.tflite", "kws_ref_model.tflite",
                                  "hello_world_int8.tflite"])
def test_default_optimized_models_give_the_cortex_m4_cmsis_nn_outputs(name: str) -> None:
    """The issue's failure (person_detect 64/-64 became 47/-47 on the Cortex-M4 CMSIS-NN build):
    the default plan now uses only rules every kernel set tolerates, and the optimized model
    run as that build gives the device's outputs of the original model."""
    fig = figures("models.json").get("m4-cmsis-nn", {}).get(name)
    if fig is None or fig.get("status") != "ok":
        pytest.skip("../shared/device-oracle (m4-cmsis-nn figures) is not present")
    data = model_path("models.json", name).read_bytes()
    result = optimize_model(data, time_budget_s=0.3)
    assert result.safe_for == ("any",) and result.partial == ()
    assert all(rule == "view" for _, _, rule, _, _ in result.aliases)
    assert matches(fig, run_device_input(result.model, "cortex-m4+fp"))


def test_a_plan_unsafe_for_the_kernels_asked_for_is_never_handed_back() -> None:
    """Re-optimizing a reference-rule model for the Cortex-M4 (or for any kernels) must not
    return it unchanged when nothing smaller is found: its plan is replaced, and the result
    records the new kernel sets."""
    ref = optimize_model(window_model("CONV_2D", 1, 1, "VALID", 1, "int8", 1),
                         kernel_set="reference", time_budget_s=0.2)
    assert ref.safe_for == ("reference",)
    for kw in ({}, {"target": "cortex-m4"}):
        again = optimize_model(ref.model, time_budget_s=0.2, **kw)  # type: ignore[arg-type]
        record = plan_safety(read_model(again.model))
        assert again.changed and again.partial == ()
        assert record is not None and record.safe_for == ("any",)
        assert any("replaced" in n for n in again.notes)
        steps, head = _conv_1x1_steps(again.model, 1, "cmsis-nn")
        assert _hazards(steps, head) == 0


def test_run_uses_the_kernels_named(tmp_path, capsys) -> None:
    """``run --target cortex-m4 --kernels reference`` runs (and sizes) the reference kernels,
    as ``size`` with the same arguments does; CMSIS-NN's conv adds its im2col scratch."""
    src = tmp_path / "m.tflite"
    src.write_bytes(window_model("CONV_2D", 3, 1, "SAME", 1, "int8", 1))
    heads = {}
    for kernels in ("reference", "cmsis-nn"):
        argv = ["--target", "cortex-m4", "--kernels", kernels, "--json"]
        assert main(["size", str(src), *argv]) == 0
        size = json.loads(capsys.readouterr().out)
        assert main(["run", str(src), *argv, "--repeat", "1"]) == 0
        run = json.loads(capsys.readouterr().out)
        assert run["allocation"]["head"] == size["head"]
        heads[kernels] = size["head"]
    assert heads["cmsis-nn"] > heads["reference"]


# -- issue 24: the rules read from each CMSIS-NN code path (kernels/cmsis_nn OVERLAP_RULES) --
# Each loop order below is written from the CMSIS-NN source at 4ab83cc3 independently of the
# margin formulas the optimizer uses, and only input reads are listed (a kernel re-reading its
# own output, as max pooling does, is no hazard).

def _mve_mat_mult_steps(data: bytes, op_index: int) -> tuple[list[Step], int]:
    """A unit-stride 1x1 int8 conv as the MVE arm_nn_mat_mult_nt_t_s8 (lines 67-223): blocks
    of 4 pixels, in each every output channel re-reads the 4 rows and stores that channel of
    the 4 pixels; then the pixels left over, one at a time, stores of 4 channels after the
    4th channel's reads, the last co % 4 channels after the row."""
    model = read_model(data)
    op = model.subgraphs[0].operators[op_index]
    tx = model.subgraphs[0].tensors[op.inputs[0]]
    ty = model.subgraphs[0].tensors[op.outputs[0]]
    pixels, ci, co = int(np.prod(tx.shape[:3])), int(tx.shape[3]), int(ty.shape[3])
    offs, head = _offsets(data)
    ox, oy = offs[op.inputs[0]], offs[op.outputs[0]]
    steps: list[Step] = []
    full = pixels - pixels % 4
    for p in range(0, full, 4):
        for c in range(co):
            steps.append(([(ox + p * ci, ox + (p + 4) * ci)],
                          [(oy + (p + k) * co + c, oy + (p + k) * co + c + 1) for k in range(4)]))
    for p in range(full, pixels):
        for c in range(co):
            writes = ([(oy + p * co + c - 3, oy + p * co + c + 1)] if c % 4 == 3 else [])
            steps.append(([(ox + p * ci, ox + (p + 1) * ci)], writes))
        if co % 4:
            steps.append(([], [(oy + p * co + co - co % 4, oy + (p + 1) * co)]))
    return steps, head


@pytest.mark.parametrize("size", [12, 13])  # 144 pixels, and 169 (one left over)
def test_mve_1x1_conv_block_rule(size: int) -> None:
    """The unit-stride int8 1x1 conv on MVE walks 4-pixel blocks outermost: its output may lie
    over its dying input at 4 pixels' lag. The plan has no hazard in MVE's order, has one in
    the DSP/C order (channel pairs outermost), and is recorded safe for MVE only; the C and
    DSP plans keep the two apart and say why."""
    data = window_model("CONV_2D", 1, 1, "VALID", 1, "int8", 1, size=size)
    mve = optimize_model(data, target="cortex-m55", time_budget_s=0.3)
    link = next(p for p in mve.partial if p.op == 1)
    assert link.rule == "CONV_2D:INT8:1x1" and link.scheme == "mve4"
    assert "cmsis-nn:mve" in mve.safe_for and "cmsis-nn:dsp" not in mve.safe_for
    steps, head = _mve_mat_mult_steps(mve.model, 1)
    assert _hazards(steps, head) == 0
    if size % 2 == 0:
        steps, head = _conv_1x1_steps(mve.model, 1, "cmsis-nn")
        assert _hazards(steps, head) > 0
    x = np.random.default_rng(5).integers(-128, 128, size=(1, size, size, 1), dtype=np.int8)
    _assert_same_outputs(data, mve.model, "cortex-m55", x)
    for target in ("cortex-m4", "cortex-m3"):
        dsp = optimize_model(data, target=target, time_budget_s=0.2)
        assert 1 not in [p.op for p in dsp.partial]
        assert any("CONV_2D:INT8:1x1" in n and "output-channel pairs outermost" in n
                   for n in dsp.notes)


def _max_pool_steps(data: bytes, op_index: int) -> tuple[list[Step], int]:
    """arm_max_pool_s8: per output pixel, arm_memcpy_s8 of the first valid tap into the
    output pixel, then compare_and_replace_if_larger_q7 for each later tap (input reads
    only; clamp_output touches the output alone)."""
    from tinyarena.optimize.margins import op_geometry

    model = read_model(data)
    op = model.subgraphs[0].operators[op_index]
    g = op_geometry(model, op)
    assert g is not None
    offs, head = _offsets(data)
    ox, oy = offs[op.inputs[0]], offs[op.outputs[0]]
    steps: list[Step] = []
    for p in range(g.out_h * g.out_w):
        y0, x0 = (p // g.out_w) * g.stride_h - g.pad_top, (p % g.out_w) * g.stride_w - g.pad_left
        for ky in range(g.filter_h):
            for kx in range(g.filter_w):
                y, x = y0 + ky, x0 + kx
                if 0 <= y < g.in_h and 0 <= x < g.in_w:
                    t = ox + (y * g.in_w + x) * g.in_c
                    steps.append(([(t, t + g.in_c)], [(oy + p * g.out_c, oy + (p + 1) * g.out_c)]))
    return steps, head


@pytest.mark.parametrize("target", ["cortex-m3", "cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("k,stride", [(3, 1), (2, 2)])
def test_int8_max_pool_pixel_block_rule(target: str, k: int, stride: int) -> None:
    """arm_max_pool_s8 keeps each pixel's running maximum in the output while it still reads
    that pixel's window: the output may overlap the input one whole pixel ahead of every
    window still to be read, on every ISA, and tinyarena's kernel gives the same outputs."""
    data = window_model("MAX_POOL_2D", k, stride, "SAME", 1, "int8", 1)
    result = optimize_model(data, target=target, time_budget_s=0.2)
    link = next(p for p in result.partial if p.op == 1)
    assert link.scheme == "pixel"
    steps, head = _max_pool_steps(result.model, 1)
    assert _hazards(steps, head) == 0
    x = np.random.default_rng(6).integers(-128, 128, size=(1, 12, 12, 1), dtype=np.int8)
    _assert_same_outputs(data, result.model, target, x)


def _pad_steps(data: bytes, op_index: int) -> tuple[list[Step], int]:
    """arm_pad_s8: memsets and memcpys in output order; a memcpy may write its whole
    destination before reading its source (memcpy's contract: no overlap), so it is a write
    step followed by a read step."""
    model = read_model(data)
    sg = model.subgraphs[0]
    op = sg.operators[op_index]
    shape = [int(v) for v in sg.tensors[op.inputs[0]].shape]
    pads = np.asarray(sg.tensors[op.inputs[1]].data).reshape(-1, 2)
    offs, head = _offsets(data)
    ox, oy = offs[op.inputs[0]], offs[op.outputs[0]]
    n, h, w, c = shape
    (pn, _), (ph, _), (pw, _), (pc, qc) = (tuple(int(v) for v in r) for r in pads)
    oh = h + int(pads[1].sum())
    ow, oc = w + int(pads[2].sum()), c + pc + qc
    steps: list[Step] = []
    for b in range(n):
        for y in range(h):
            row = ((b + pn) * oh + y + ph) * ow + pw
            runs = ([(row * oc, (y + b * h) * w * c, w * c)] if oc == c else
                    [((row + x) * oc + pc, ((b * h + y) * w + x) * c, c) for x in range(w)])
            for dst, src, length in runs:
                steps.append(([], [(oy + dst, oy + dst + length)]))
                steps.append(([(ox + src, ox + src + length)], []))
    return steps, head


@pytest.mark.parametrize("target", ["cortex-m3", "cortex-m4", "cortex-m55"])
@pytest.mark.parametrize("pads", [((0, 0), (1, 1), (1, 1), (0, 0)),
                                  ((0, 0), (2, 0), (0, 1), (0, 0)),
                                  ((0, 0), (1, 1), (1, 1), (1, 2))])
def test_int8_pad_memcpy_runs(target: str, pads: tuple[tuple[int, int], ...]) -> None:
    """CMSIS-NN's arm_pad_s8 copies the input in memcpy runs in output order: the output may
    lie over the input as long as every run ends below its own source."""
    data = window_model("PAD", dtype="int8", pads=pads)
    result = optimize_model(data, target=target, time_budget_s=0.2)
    link = next(p for p in result.partial if p.op == 1)
    assert link.scheme == "pad-chunk"
    steps, head = _pad_steps(result.model, 1)
    assert _hazards(steps, head) == 0
    x = np.random.default_rng(7).integers(-128, 128, size=(1, 12, 12, 1), dtype=np.int8)
    _assert_same_outputs(data, result.model, target, x)


def test_mve_depthwise_channel_blocks() -> None:
    """MVE's arm_depthwise_conv_s8_opt walks blocks of 124 channels outermost: with 128
    channels the 3x3 depthwise gets no overlap on the Cortex-M55 (said in the notes), while
    the DSP 3x3 kernel (4 channels of one pixel at a time) keeps its rule."""
    data = window_model("DEPTHWISE_CONV_2D", 3, 1, "SAME", 1, "int8", 1, channels=128)
    mve = optimize_model(data, target="cortex-m55", time_budget_s=0.2)
    assert 1 not in [p.op for p in mve.partial]
    assert any("124-channel blocks outermost" in n for n in mve.notes)
    dsp = optimize_model(data, target="cortex-m4", time_budget_s=0.2)
    assert 1 in [p.op for p in dsp.partial]


@pytest.mark.parametrize("target", ["cortex-m3", "cortex-m4", "cortex-m55"])
def test_int8_softmax_in_place(target: str) -> None:
    """arm_softmax_s8 reads each row whole (maximum, sum), then writes element i after
    reading it: int8 SOFTMAX runs in place on every ISA."""
    data = elementwise_model("SOFTMAX")
    result = optimize_model(data, target=target, time_budget_s=0.2)
    assert any(rule == "in-place" and name == "SOFTMAX" for _, name, rule, _, _ in result.aliases)
    steps, head = _elementwise_steps(result.model, "SOFTMAX", 1)
    assert _hazards(steps, head) == 0
    x = np.random.default_rng(8).integers(-128, 128, size=(1, 16, 16, 4), dtype=np.int8)
    _assert_same_outputs(data, result.model, target, x)


def test_savings_by_rule_and_kernel_paths_in_json(tmp_path, capsys) -> None:
    """``optimize --json`` names each rule used with the bytes it saves, and every partial
    overlap with the kernel path it rests on; ``report`` shows the same path per pair."""
    src = tmp_path / "m.tflite"
    out = tmp_path / "o.tflite"
    src.write_bytes(window_model("CONV_2D", 1, 1, "VALID", 1, "int8", 1))
    assert main(["optimize", str(src), "-o", str(out), "--target", "cortex-m55",
                 "--time-budget", "0.3", "--json"]) == 0
    d = json.loads(capsys.readouterr().out)
    assert d["savings_by_rule"]["partial:CONV_2D:INT8:1x1"] > 0
    path = next(p for p in d["partial_overlaps"] if p["op"] == 1)["kernel_path"]
    assert path.startswith("cmsis-nn:mve CONV_2D:INT8:1x1: block rule (mve4)")
    assert "arm_nn_mat_mult_nt_t_s8" in path
    assert main(["plan", str(out), "--target", "cortex-m55"]) == 0
    text = capsys.readouterr().out
    assert "COLLISION" not in text and "relies on op 1 CONV_2D: cmsis-nn:mve" in text
    page = tmp_path / "r.html"
    assert main(["report", str(src), "-o", str(page), "--target", "cortex-m55",
                 "--optimized", str(out)]) == 0
    html = page.read_text()
    assert "Overlaps the optimized plan relies on" in html
    assert "op 1 CONV_2D: cmsis-nn:mve CONV_2D:INT8:1x1: block rule (mve4)" in html


def test_esp_nn_gets_no_overlap_and_says_so() -> None:
    """ESP-NN's per-chip code is not read yet: views, lifetimes and reordering only, and the
    output says why."""
    data = window_model("MAX_POOL_2D", 3, 1, "SAME", 1, "int8", 1)
    result = optimize_model(data, kernel_set="esp-nn", time_budget_s=0.2)
    assert result.partial == ()
    assert all(rule == "view" for _, _, rule, _, _ in result.aliases)
    assert any(n.startswith("no overlap for esp-nn") for n in result.notes)
