"""The small operators' invoke steps: compiled (``kernels.native``) equal numpy, quiet where
they do no float arithmetic, and the invoke loop still names a failing operator.

The numpy paths are the reference (tests/kernels checks them against the wheel op by op); the
compiled QUANTIZE (integer requantization) and table lookups (int8 LOGISTIC, QUANTIZE from 8
bits) are compared with them over whole input domains, and the streaming models built by
``tinyarena.examples.streaming`` (resource variables, CONCATENATION, STRIDED_SLICE, CALL_ONCE)
are run both ways over several invokes with state carried between them.
"""

from __future__ import annotations

import numpy as np
import pytest

import tinyarena
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError
from tinyarena.examples.streaming import streaming_model
from tinyarena.interpreter.inputs import random_inputs
from tinyarena.interpreter.invoke_plan import InvokePlan
from tinyarena.kernels import native
from tinyarena.kernels._bound import LUT_MAX_ELEMENTS, MAX_RUNS, nothing
from tinyarena.kernels.native import is_quiet, quiet

needs_numba = pytest.mark.skipif(not native.available(), reason="numba (extra 'fast') absent")

INFO = {d: np.iinfo(d) for d in ("int8", "uint8", "int16", "int32")}


def _one_op(op: str, n: int, in_dtype: str, in_q: tuple[float, int], out_dtype: str,
            out_q: tuple[float, int]) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (n,), in_dtype, scale=in_q[0], zero_point=in_q[1])
    y = b.add_tensor("y", (n,), out_dtype, scale=out_q[0], zero_point=out_q[1])
    b.add_operator(op, [x], [y])
    b.mark_output(y)
    return b.build()


def _both_ways(model: bytes, batches: list[list[np.ndarray]], target: str = "host-x64"
               ) -> tuple[list[np.ndarray], tinyarena.Interpreter]:
    """Outputs of ``Interpreter(native=True)``, checked equal to ``native=False``'s."""
    results = []
    interpreters = []
    for on in (True, False):
        ip = tinyarena.Interpreter(model, native=on, target=target)
        ip.allocate_tensors()
        got = []
        for inputs in batches:
            for i, x in enumerate(inputs):
                ip.set_input(x, i)
            ip.invoke()
            got += [ip.get_output(i) for i in range(ip.outputs_size())]
        results.append(got)
        interpreters.append(ip)
    compiled, reference = results
    assert len(compiled) == len(reference)
    for k, (a, b) in enumerate(zip(compiled, reference)):
        assert a.dtype == b.dtype and np.array_equal(a, b), \
            f"output {k}: {np.count_nonzero(a != b)} of {a.size} differ"
    return compiled, interpreters[0]


def _steps_named(ip: tinyarena.Interpreter, name: str) -> list:
    plan = ip._allocated().graph._plans[0]
    return [s for s, op in zip(plan.steps, plan.operators) if op.name == name]


def _compiled(step: object, name: str) -> bool:
    """The step is ``native_step`` over the compiled function ``name`` of kernels.native."""
    fn = getattr(step, "func", None)
    return is_quiet(step) and getattr(getattr(fn, "py_func", None), "__name__", None) == name


def _domain(dtype: str, n: int, rng: np.random.Generator) -> list[list[np.ndarray]]:
    """Every value of an 8/16-bit type (in batches of ``n``), or int32 extremes and randoms."""
    info = INFO[dtype]
    if info.bits <= 16:
        values = np.arange(int(info.min), int(info.max) + 1, dtype=np.int64)
    else:
        edges = np.array([info.min, info.min + 1, -1, 0, 1, info.max - 1, info.max], np.int64)
        values = np.concatenate([edges, rng.integers(info.min, info.max, 2 * n - edges.size,
                                                     endpoint=True)])
    values = np.concatenate([values, np.zeros(-values.size % n, np.int64)])
    return [[chunk.astype(dtype)] for chunk in values.reshape(-1, n)]


REQUANTIZE = [("int16", "int8"), ("int16", "int16"), ("int16", "int32"), ("int32", "int8"),
              ("int32", "int16")]


@needs_numba
@pytest.mark.parametrize("pair", REQUANTIZE, ids=["-".join(p) for p in REQUANTIZE])
def test_compiled_requantize_equals_numpy_on_every_input(pair: tuple[str, str]) -> None:
    """Scales below and above one (left shifts), zero points at both ends of the range."""
    in_dtype, out_dtype = pair
    rng = np.random.default_rng(1300 + REQUANTIZE.index(pair))
    n = 4096
    batches = _domain(in_dtype, n, rng)
    for in_scale, out_scale in ((0.000625, 0.0592), (0.02, 0.0003), (1.5e-5, 3.05e-5)):
        lo, hi = int(INFO[out_dtype].min), int(INFO[out_dtype].max)
        in_zp = int(rng.integers(-50, 50)) if in_dtype == "int16" else 0
        out_zp = int(rng.integers(lo, hi)) if out_dtype == "int8" else 0
        model = _one_op("QUANTIZE", n, in_dtype, (in_scale, in_zp), out_dtype,
                        (out_scale, out_zp))
        _, ip = _both_ways(model, batches)
        (step,) = _steps_named(ip, "QUANTIZE")
        assert _compiled(step, "requantize")  # the compiled loop ran


@needs_numba
@pytest.mark.parametrize("op, out_dtype, out_q", [
    ("LOGISTIC", "int8", (1 / 256, -128)), ("QUANTIZE", "int8", (0.031, 7)),
    ("QUANTIZE", "int16", (0.0007, 0)), ("QUANTIZE", "uint8", (0.05, 128))])
def test_compiled_table_lookups_equal_numpy(op: str, out_dtype: str,
                                            out_q: tuple[float, int]) -> None:
    """Every int8 input, in one tensor of 256 (the compiled lookup) and one of 1 (the
    scalar step)."""
    everything = np.arange(-128, 128, dtype=np.int8)
    _, ip = _both_ways(_one_op(op, 256, "int8", (0.06, -3), out_dtype, out_q), [[everything]])
    (step,) = _steps_named(ip, op)
    assert _compiled(step, "lookup")
    one = _one_op(op, 1, "int8", (0.06, -3), out_dtype, out_q)
    _both_ways(one, [[everything[i:i + 1]] for i in range(0, 256, 5)])


@needs_numba
@pytest.mark.parametrize("target", ["host-x64", "cortex-m4"])
def test_streaming_models_compiled_equal_numpy(target: str) -> None:
    """Ring buffers in resource variables, CALL_ONCE's initialisation, CONCATENATION and
    STRIDED_SLICE over six invokes: the state each invoke leaves must match too."""
    for model in (streaming_model(kernels=(3, 5), channels=8),
                  streaming_model(kernels=(3,), channels=4)):
        details = tinyarena.Interpreter(model).get_input_details()
        _both_ways(model, [random_inputs(details, seed=s) for s in range(6)], target)


@pytest.mark.parametrize("native_on", [False, True])
def test_streaming_steps_outside_the_conv_family_are_quiet(native_on: bool) -> None:
    """Resource variables, copies, tables and CALL_ONCE do no numpy float arithmetic, so their
    steps are quiet: only the convolutions and FULLY_CONNECTED (compiled or not) may need the
    error state; VAR_HANDLE has nothing to do at invoke (its id is in place since reset)."""
    if native_on and not native.available():
        pytest.skip("numba (extra 'fast') absent")
    ip = tinyarena.Interpreter(streaming_model(), native=native_on)
    ip.allocate_tensors()
    plan = ip._allocated().graph._plans[0]
    loud = {op.name for s, op in zip(plan.steps, plan.operators) if not is_quiet(s)}
    assert loud <= {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED"}, loud
    assert all(s is nothing for s in _steps_named(ip, "VAR_HANDLE"))
    assert plan.quiet == (not loud)
    if native_on:  # compiled conv/depthwise/FC too: the whole invoke runs without error state
        assert plan.quiet, loud


def test_var_handle_id_is_in_place_after_allocation_and_reset() -> None:
    """The ids VarHandlePrepare stores are in the arena before any invoke, and again after
    something overwrote them and the interpreter was reset (MicroInterpreter::Reset)."""
    model = streaming_model(kernels=(3,), channels=4)
    ip = tinyarena.Interpreter(model)
    ip.allocate_tensors()
    sg = ip.model.subgraphs[0]
    graph = ip._allocated().graph
    ctx = graph._contexts[0]
    handles = [(ctx.tensor_data(op.outputs[0]), data.resource_id)
               for (op, data) in graph._nodes[0] if op.name == "VAR_HANDLE"]
    assert handles and len({rid for _, rid in handles}) == len(handles)
    assert all(int(view.reshape(-1)[0]) == rid for view, rid in handles)
    for view, _ in handles:
        view.reshape(-1)[0] = 12345
    ip.reset()
    assert all(int(view.reshape(-1)[0]) == rid for view, rid in handles)
    assert len(sg.operators) > len(handles)


def test_a_shared_failing_step_names_its_own_operator() -> None:
    """The invoke loop keeps no counter: a step object used by two operators is made
    distinct, so the error names the operator that was running; do-nothing steps are not
    called at all."""
    calls: list[int] = []

    def flaky() -> None:
        calls.append(1)
        if len(calls) == 2:
            raise ValueError("second call")

    class Op:
        def __init__(self, index: int) -> None:
            self.name, self.index = f"OP{index}", index

    step = quiet(flaky)
    plan = InvokePlan([nothing, step, nothing, step], [Op(i) for i in range(4)], 0)
    assert plan.quiet
    with pytest.raises(KernelError, match=r"OP3 \(operator 3 of subgraph 0\).*second call"):
        plan.run()
    assert len(calls) == 2


def test_error_state_is_off_inside_a_loud_plan_and_back_after() -> None:
    """A plan with a numpy step runs it with float errors ignored, whatever the caller's
    settings, and gives those settings back afterwards, also when a step raises."""
    seen: list[str] = []
    fail = []

    def numpy_step() -> None:
        seen.append(np.geterr()["divide"])
        np.float32(1.0) / np.float32(0.0)  # raises FloatingPointError unless ignored
        if fail:
            raise ValueError("late")

    plan = InvokePlan([numpy_step], [], 0)
    assert not plan.quiet
    for setting in ("raise", "warn", "raise"):  # settings objects change between invokes
        with np.errstate(divide=setting, over=setting):
            plan.run()
            assert np.geterr()["divide"] == setting and np.geterr()["over"] == setting
    fail.append(1)
    with np.errstate(divide="raise"):
        with pytest.raises(KernelError, match="late"):
            plan.run()
        assert np.geterr()["divide"] == "raise"
    assert seen == ["ignore"] * 4


@needs_numba
@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("op", ["AVERAGE_POOL_2D", "MAX_POOL_2D"])
def test_compiled_pooling_equals_numpy(op: str, dtype: str) -> None:
    """Seeded random shapes, windows, strides, paddings (windows clipped at the borders) and
    activations, on the reference and CMSIS-NN kernel sets (the latter reuses the arithmetic)."""
    rng = np.random.default_rng(1400 + 2 * (op == "MAX_POOL_2D") + (dtype == "int16"))
    info = INFO[dtype]
    for case in range(6):
        h, w, c = (int(v) for v in rng.integers(1, 9, size=3))
        fh, fw = int(rng.integers(1, h + 2)), int(rng.integers(1, w + 2))
        sh, sw = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        padding = "SAME" if case % 2 or fh > h or fw > w else "VALID"
        oh = -(-h // sh) if padding == "SAME" else (h - fh) // sh + 1
        ow = -(-w // sw) if padding == "SAME" else (w - fw) // sw + 1
        act = ("NONE", "RELU", "RELU6")[case % 3]
        zp = int(rng.integers(-20, 20)) if dtype == "int8" else 0
        b = ModelBuilder()
        x = b.add_input("x", (2, h, w, c), dtype, scale=0.05, zero_point=zp)
        y = b.add_tensor("y", (2, oh, ow, c), dtype, scale=0.05, zero_point=zp)
        b.add_operator(op, [x], [y], padding=padding, stride_h=sh, stride_w=sw,
                       filter_height=fh, filter_width=fw, fused_activation_function=act)
        b.mark_output(y)
        model = b.build()
        batches = [[rng.integers(info.min, info.max, (2, h, w, c), endpoint=True
                                 ).astype(dtype)] for _ in range(2)]
        _, ip = _both_ways(model, batches)
        (step,) = _steps_named(ip, op)
        assert _compiled(step, "pool")
        _both_ways(model, batches, target="cortex-m4")


def test_float_evals_ignore_errors_inside_and_outside_a_plan() -> None:
    """``c_float_env`` switches float errors off around a float eval (also when called on
    its own, as the kernel tests do) and leaves the caller's settings as they were."""
    from tinyarena.kernels._ieee import c_float_env
    from tinyarena.model.types import TensorType

    seen: list[str] = []

    class Ctx:
        def tensor(self, index: int) -> object:
            return type("T", (), {"type": TensorType.FLOAT32})()

    class Op:
        inputs, outputs, name, index = (0,), (1,), "FLOATY", 0

    @c_float_env
    def eval_(ctx: object, op: object, data: object) -> None:
        seen.append(np.geterr()["over"])
        np.float32(3e38) * np.float32(10.0)  # overflow: raises unless ignored

    for setting in ("raise", "warn", "raise"):
        with np.errstate(over=setting):
            eval_(Ctx(), Op(), None)
            assert np.geterr()["over"] == setting
            plan = InvokePlan([lambda: eval_(Ctx(), Op(), None)], [], 0)
            plan.run()
            plan.run()
            assert np.geterr()["over"] == setting
    assert seen == ["ignore"] * 9


BROADCASTS = [((5, 7), (5, 7)), ((2, 3, 4), (1, 1, 4)), ((2, 1, 4), (2, 3, 1)), ((1,), (3, 2)),
              ((2, 3, 1, 5), (1, 3, 4, 1)), ((6,), (1,))]


@needs_numba
@pytest.mark.parametrize("op", ["ADD", "SUB", "MUL"])
def test_compiled_int8_binary_ops_equal_numpy(op: str) -> None:
    """int8 ADD/SUB/MUL over same shapes and broadcasts (scalars, inner, outer, both ways),
    seeded random scales, zero points and activations, on the host and Cortex-M4 builds."""
    rng = np.random.default_rng(1500 + ("ADD", "SUB", "MUL").index(op))
    for k, (s1, s2) in enumerate(BROADCASTS):
        out_shape = tuple(int(d) for d in np.broadcast_shapes(s1, s2))
        q = [(float(10 ** rng.uniform(-2.5, -0.5)), int(rng.integers(-128, 128)))
             for _ in range(3)]
        b = ModelBuilder()
        x1 = b.add_input("x1", s1, "int8", scale=q[0][0], zero_point=q[0][1])
        x2 = b.add_input("x2", s2, "int8", scale=q[1][0], zero_point=q[1][1])
        y = b.add_tensor("y", out_shape, "int8", scale=q[2][0], zero_point=q[2][1])
        b.add_operator(op, [x1, x2], [y], fused_activation_function=("NONE", "RELU")[k % 2])
        b.mark_output(y)
        model = b.build()
        batches = [[rng.integers(-128, 128, s1).astype(np.int8),
                    rng.integers(-128, 128, s2).astype(np.int8)] for _ in range(2)]
        _, ip = _both_ways(model, batches)
        (step,) = _steps_named(ip, op)
        assert _compiled(step, "lookup_pairs")
        _both_ways(model, batches, target="cortex-m4")


REDUCTIONS = [((1, 7, 7, 20), (1, 2)), ((3, 50), (1,)), ((4, 5, 6), (0,)),
              ((2, 3, 4, 5), (1, 2, 3)), ((6, 8), (0, 1)),
              ((2, 3, 4), (0, 2))]  # the last: not contiguous, numpy runs


@needs_numba
@pytest.mark.parametrize("dtype", ["int8", "int16"])
@pytest.mark.parametrize("op", ["MEAN", "SUM"])
def test_compiled_integer_reductions_equal_numpy(op: str, dtype: str) -> None:
    """Seeded random scales and zero points, both keep_dims, axes given negative too; inputs
    at the type's extremes as well as random ones (the int32 wrap of the sums)."""
    rng = np.random.default_rng(1600 + 2 * (op == "SUM") + (dtype == "int16"))
    info = INFO[dtype]
    for k, (shape, axes) in enumerate(REDUCTIONS):
        keep = bool(k % 2)
        out_shape = tuple(1 if i in axes else d for i, d in enumerate(shape)) if keep else \
            tuple(d for i, d in enumerate(shape) if i not in axes)
        zp = (lambda: int(rng.integers(-100, 100))) if dtype == "int8" else (lambda: 0)
        b = ModelBuilder()
        x = b.add_input("x", shape, dtype, scale=float(10 ** rng.uniform(-2, 0)),
                        zero_point=zp())
        axis = b.add_constant("axis", np.array([a - len(shape) * (a % 2) for a in axes],
                                               np.int32))
        y = b.add_tensor("y", out_shape, dtype, scale=float(10 ** rng.uniform(-2, 0.5)),
                         zero_point=zp())
        b.add_operator(op, [x, axis], [y], keep_dims=keep)
        b.mark_output(y)
        model = b.build()
        batches = [[rng.integers(info.min, info.max, shape, endpoint=True).astype(dtype)],
                   [np.full(shape, info.max, dtype)], [np.full(shape, info.min, dtype)]]
        _, ip = _both_ways(model, batches)
        (step,) = _steps_named(ip, op)
        contiguous = list(axes) == list(range(axes[0], axes[-1] + 1))
        assert _compiled(step, "mean_or_sum") == contiguous


@needs_numba
@pytest.mark.parametrize("dtype", ["int8", "int16", "float32"])
def test_compiled_transpose_equals_numpy(dtype: str) -> None:
    """Seeded random shapes of rank 1 to 5 and permutations (identity included)."""
    rng = np.random.default_rng(1700 + ("int8", "int16", "float32").index(dtype))
    for rank in (1, 2, 3, 4, 5, 4):
        shape = tuple(int(d) for d in rng.integers(1, 6, size=rank))
        perm = tuple(int(p) for p in rng.permutation(rank))
        q = {} if dtype == "float32" else {"scale": 0.1, "zero_point": 0}
        b = ModelBuilder()
        x = b.add_input("x", shape, dtype, **q)
        p = b.add_constant("perm", np.array(perm, np.int32))
        y = b.add_tensor("y", tuple(shape[i] for i in perm), dtype, **q)
        b.add_operator("TRANSPOSE", [x, p], [y])
        b.mark_output(y)
        values = rng.standard_normal(shape) * 1000
        _, ip = _both_ways(b.build(), [[values.astype(dtype)]])
        (step,) = _steps_named(ip, "TRANSPOSE")
        assert _compiled(step, "transpose")


@needs_numba
@pytest.mark.parametrize("dtype", ["int8", "int16", "int32", "float32"])
def test_compiled_pad_equals_numpy(dtype: str) -> None:
    """PAD (zero point / zero) and PADV2 (a given value) on seeded small shapes of rank 1-5,
    paddings on every axis including none."""
    from tinyarena.kernels.native.pad import MAX_ELEMENTS

    rng = np.random.default_rng(1800 + ("int8", "int16", "int32", "float32").index(dtype))
    q = {} if dtype == "float32" else {"scale": 0.1, "zero_point": -5 if dtype == "int8" else 0}
    for k, rank in enumerate((1, 2, 3, 4, 5, 4)):
        shape = tuple(int(d) for d in rng.integers(1, 5, size=rank))
        pads = rng.integers(0, 3, size=(rank, 2))
        out_shape = tuple(int(n + a + b) for n, (a, b) in zip(shape, pads))
        b = ModelBuilder()
        x = b.add_input("x", shape, dtype, **q)
        inputs = [x, b.add_constant("pads", pads.astype(np.int32))]
        if k % 2:
            inputs.append(b.add_constant("value", np.array([7], dtype), **q))
        y = b.add_tensor("y", out_shape, dtype, **q)
        b.add_operator("PADV2" if k % 2 else "PAD", inputs, [y])
        b.mark_output(y)
        values = (rng.standard_normal(shape) * 100).astype(dtype)
        _, ip = _both_ways(b.build(), [[values]])
        (step,) = _steps_named(ip, "PADV2" if k % 2 else "PAD")
        assert _compiled(step, "pad") == (int(np.prod(out_shape)) <= MAX_ELEMENTS)


def _eval_only(model: bytes, batches: list[list[np.ndarray]]) -> list[np.ndarray]:
    """Outputs with every kernel's bind removed: each op runs its plain eval (the reference
    the kernel tests check against the wheel)."""
    from dataclasses import replace

    names = {op.name for sg in tinyarena.read_model(model).subgraphs for op in sg.operators}
    default = tinyarena.OpResolver.default()
    resolver = tinyarena.OpResolver()
    for name in sorted(names):
        resolver.add(name, replace(default.resolve_name(name), bind=None))
    ip = tinyarena.Interpreter(model, resolver=resolver, native=False)
    ip.allocate_tensors()
    got = []
    for inputs in batches:
        for i, x in enumerate(inputs):
            ip.set_input(x, i)
        ip.invoke()
        got += [ip.get_output(i) for i in range(ip.outputs_size())]
    return got


TABLES = [("TANH", "int8", (1 / 128, 0), {}), ("RELU", "int8", (0.07, -20), {}),
          ("RELU6", "int8", (0.05, -128), {}), ("LEAKY_RELU", "int8", (0.04, 3), {"alpha": 0.2}),
          ("LEAKY_RELU", "int8", (0.04, 3), {"alpha": -1.5}),
          ("HARD_SWISH", "int8", (0.03, -5), {}), ("DEQUANTIZE", "float32", None, {})]


@pytest.mark.parametrize("op, out_dtype, out_q, options", TABLES,
                         ids=[f"{t[0]}-{k}" for k, t in enumerate(TABLES)])
def test_int8_unary_tables_equal_eval(op: str, out_dtype: str, out_q: tuple[float, int] | None,
                                      options: dict) -> None:
    """Every int8 input through the op's table (compiled with numba, numpy's take without)
    gives what its eval gives, in a tensor of 256, one of 1 and one beyond numpy's table size."""
    everything = np.arange(-128, 128, dtype=np.int8)
    for n in (256, 1, 5000):
        b = ModelBuilder()
        x = b.add_input("x", (n,), "int8", scale=0.06, zero_point=-3)
        q = {} if out_q is None else {"scale": out_q[0], "zero_point": out_q[1]}
        y = b.add_tensor("y", (n,), out_dtype, **q)
        b.add_operator(op, [x], [y], **options)
        b.mark_output(y)
        model = b.build()
        batches = [[np.resize(everything, n)]] if n > 1 else \
            [[everything[i:i + 1]] for i in range(0, 256, 7)]
        reference = _eval_only(model, batches)
        for on in (False, True) if native.available() else (False,):
            ip = tinyarena.Interpreter(model, native=on)
            ip.allocate_tensors()
            for k, inputs in enumerate(batches):
                ip.set_input(inputs[0], 0)
                ip.invoke()
                got = ip.get_output(0)
                assert got.dtype == reference[k].dtype
                assert np.array_equal(got, reference[k], equal_nan=True), (op, n, on)
            (step,) = _steps_named(ip, op)
            assert is_quiet(step) == (on or n <= LUT_MAX_ELEMENTS)  # else eval runs
            if on and n > 1:
                assert _compiled(step, "lookup")


def test_float_quotient_floor_is_exact_in_the_pool_range() -> None:
    """The compiled AVERAGE_POOL_2D divides as floor(float64(a) / count): exact for numerators
    below 2**33 and windows below 2**16 taps (checked here just below, at and above every
    multiple, for the largest numerators)."""
    counts = np.concatenate([np.arange(1, 3000), np.arange(65535 - 3000, 65536)])
    for count in counts.tolist():
        top = (1 << 33) // count
        k = np.array([1, 2, top // 3, top - 1, top], dtype=np.int64)
        a = np.concatenate([k * count - 1, k * count, k * count + 1])
        a = a[(a >= 0) & (a < 1 << 33)]
        exact = a // count
        assert np.array_equal(np.floor(a.astype(np.float64) / np.float64(count)), exact), count


def _bound_equals_eval(model: bytes, batches: list[list[np.ndarray]], op: str,
                       bound: bool = True) -> None:
    """The default plan (bound steps) gives what eval gives, and the op's step is quiet
    (``bound``: a byte-copy step, not eval's)."""
    reference = _eval_only(model, batches)
    ip = tinyarena.Interpreter(model)
    ip.allocate_tensors()
    got = []
    for inputs in batches:
        for i, x in enumerate(inputs):
            ip.set_input(x, i)
        ip.invoke()
        got += [ip.get_output(i) for i in range(ip.outputs_size())]
    assert len(got) == len(reference)
    for a, b in zip(got, reference):
        assert a.dtype == b.dtype and np.array_equal(a, b)
    assert all(is_quiet(s) == bound for s in _steps_named(ip, op)), (op, _steps_named(ip, op))


@pytest.mark.parametrize("dtype", ["int8", "float32", "int32"])
def test_bound_split_and_slice_equal_eval(dtype: str) -> None:
    """SPLIT, SPLIT_V (uneven) and SLICE (size -1 included) on seeded shapes and axes."""
    rng = np.random.default_rng(1900 + ("int8", "float32", "int32").index(dtype))
    for rank in (1, 2, 3, 4):
        shape = tuple(int(d) for d in rng.integers(2, 6, size=rank))
        axis = int(rng.integers(0, rank))
        values = [(rng.standard_normal(shape) * 50).astype(dtype)]
        parts = 2 if shape[axis] % 2 == 0 else 1
        b = ModelBuilder()
        x = b.add_input("x", shape, dtype)
        ax = b.add_constant("axis", np.array([axis - rank * (rank % 2)], np.int32))
        outs = [b.add_tensor(f"s{k}", tuple(d // parts if i == axis else d
                                            for i, d in enumerate(shape)), dtype)
                for k in range(parts)]
        b.add_operator("SPLIT", [ax, x], outs, num_splits=parts)
        b.mark_output(*outs)
        _bound_equals_eval(b.build(), [values], "SPLIT")
        first = int(rng.integers(1, shape[axis]))
        sizes = [first, shape[axis] - first]
        b = ModelBuilder()
        x = b.add_input("x", shape, dtype)
        outs = [b.add_tensor(f"v{k}", tuple(n if i == axis else d for i, d in enumerate(shape)),
                             dtype) for k, n in enumerate(sizes)]
        b.add_operator("SPLIT_V", [x, b.add_constant("sizes", np.array(sizes, np.int32)),
                                   b.add_constant("axis", np.array([axis], np.int32))], outs,
                       num_splits=2)
        b.mark_output(*outs)
        _bound_equals_eval(b.build(), [values], "SPLIT_V")
        begin = [int(rng.integers(0, d)) for d in shape]
        size = [int(rng.integers(1, d - s + 1)) if k % 2 else -1
                for k, (s, d) in enumerate(zip(begin, shape))]
        out_shape = tuple(d - s if n == -1 else n for s, d, n in zip(begin, shape, size))
        b = ModelBuilder()
        x = b.add_input("x", shape, dtype)
        y = b.add_tensor("y", out_shape, dtype)
        b.add_operator("SLICE", [x, b.add_constant("begin", np.array(begin, np.int32)),
                                 b.add_constant("size", np.array(size, np.int32))], [y])
        b.mark_output(y)
        _bound_equals_eval(b.build(), [values], "SLICE")


@pytest.mark.parametrize("dtype", ["int8", "float32", "int32"])
def test_bound_pack_and_unpack_equal_eval(dtype: str) -> None:
    """PACK and UNPACK on seeded shapes, every axis (negative ones too), 1 to 4 values."""
    rng = np.random.default_rng(2000 + ("int8", "float32", "int32").index(dtype))
    for rank in (1, 2, 3):
        shape = tuple(int(d) for d in rng.integers(1, 5, size=rank))
        count = int(rng.integers(1, 5))
        for axis in range(rank + 1):
            stacked = shape[:axis] + (count,) + shape[axis:]
            signed = axis - (rank + 1) if axis % 2 else axis
            b = ModelBuilder()
            xs = [b.add_input(f"x{i}", shape, dtype) for i in range(count)]
            y = b.add_tensor("y", stacked, dtype)
            b.add_operator("PACK", xs, [y], values_count=count, axis=signed)
            b.mark_output(y)
            values = [(rng.standard_normal(shape) * 50).astype(dtype) for _ in range(count)]
            pieces = int(np.prod(stacked[:axis])) * count
            _bound_equals_eval(b.build(), [values], "PACK", pieces <= 4 * MAX_RUNS)
            b = ModelBuilder()
            x = b.add_input("x", stacked, dtype)
            ys = [b.add_tensor(f"y{i}", shape, dtype) for i in range(count)]
            b.add_operator("UNPACK", [x], ys, num=count, axis=signed)
            b.mark_output(*ys)
            _bound_equals_eval(b.build(), [[(rng.standard_normal(stacked) * 50).astype(dtype)]],
                               "UNPACK", pieces <= 4 * MAX_RUNS)
