"""The op list against the wheel itself, and the tally the issue asks for.

Registration is probed without running any kernel: a model whose first operator is the op
under test and whose second is a builtin TFLM does not register (LSH_PROJECTION). TFLM
resolves every node before it prepares any, so the wheel's error names the sentinel when the op
under test resolved, and the op itself when it did not.
"""

from __future__ import annotations

import numpy as np
import pytest

from tflm_oracle import captured_stderr, make_interpreter
from tinyarena.builder import ModelBuilder
from tinyarena.errors import UnsupportedOpError
from tinyarena.interpreter import Interpreter
from tinyarena.kernels.catalog import WHEEL_OPS, builtin_names, op_catalog
from tinyarena.model import read_model
from tinyarena.arena.allocator import allocate_model

pytestmark = pytest.mark.oracle

SENTINEL = "LSH_PROJECTION"

# Ops whose kernels live on the parallel ops-b / ops-signal branches of issue 8. Whoever
# merges empties this set: the tally test fails once an op listed here is supported.
_PENDING_MERGE: frozenset[str] = frozenset()


def _probe_model(name: str) -> bytes:
    b = ModelBuilder()
    x = b.add_input("x", (1,), "float32")
    y = b.add_tensor("y", (1,), "float32")
    z = b.add_tensor("z", (1,), "float32")
    if name in builtin_names():
        b.add_operator(name, [x], [y])
    else:
        b.add_operator("CUSTOM", [x], [y], custom_code=name)
    b.add_operator(SENTINEL, [y], [z])
    b.mark_output(z)
    return b.build()


def wheel_registers(name: str) -> bool:
    failure: Exception | None = None
    with captured_stderr() as err:
        try:
            make_interpreter(_probe_model(name))
        except Exception as exc:
            failure = exc
    text = err[0]
    if not text.strip() and failure is not None and not isinstance(failure, RuntimeError):
        return False  # newer schema ops the wheel's Python side cannot even load (StableHLO)
    if f"Didn't find op for builtin opcode '{SENTINEL}'" in text:
        return True
    if f"Didn't find op for builtin opcode '{name}'" in text or (
            "Failed to get registration from op code CUSTOM" in text):
        return False
    raise AssertionError(f"cannot tell whether the wheel registers {name}:\n{text}")


def test_every_listed_op_is_registered_by_the_wheel() -> None:
    missing = sorted(n for n in WHEEL_OPS if not wheel_registers(n))
    assert missing == [], f"listed but not registered by the wheel: {missing}"


def test_no_other_builtin_is_registered_by_the_wheel() -> None:
    extra = sorted(n for n in builtin_names() - set(WHEEL_OPS) - {"CUSTOM", SENTINEL}
                   if wheel_registers(n))
    assert extra == [], f"the wheel registers builtins missing from WHEEL_OPS: {extra}"


def test_ethos_u_is_not_in_the_host_wheel_sizes_on_cortex_m_and_never_runs() -> None:
    assert not wheel_registers("ethos-u")
    b = ModelBuilder()
    stream = b.add_constant("cms", np.arange(40, dtype=np.uint8))
    x = b.add_input("x", (4,), "int8", scale=0.1, zero_point=0)
    y = b.add_tensor("y", (4,), "int8", scale=0.1, zero_point=0)
    b.add_operator("ethos-u", [stream, x], [y], custom_options=b"\x01\x04\x01")
    b.mark_output(y)
    model = read_model(b.build())
    with pytest.raises(UnsupportedOpError, match=r"ethos-u.*device builds.*cortex-m55") as info:
        allocate_model(model)  # the host wheel: no ethos_u kernel
    assert info.value.op_index == 0
    assert allocate_model(model, target="cortex-m55").min_arena > 0
    for target in ("host-x64", "cortex-m55"):
        with pytest.raises(UnsupportedOpError, match=r"ethos-u \(operator 0 of subgraph 0\) "
                                                     r"runs on an Arm Ethos-U NPU") as info:
            Interpreter(model, target=target).allocate_tensors()
        assert info.value.op_index == 0


def test_tally_wheel_ops_sized_and_run(capsys: pytest.CaptureFixture[str]) -> None:
    """Ops the wheel registers vs ops tinyarena sizes and runs (printed in the test output)."""
    wheel = [o for o in op_catalog() if o.in_wheel]
    sized = {o.name for o in wheel if o.sizing}
    run = {o.name for o in wheel if o.running}
    names = {o.name for o in wheel}
    with capsys.disabled():
        print(f"\n[op tally] wheel registers {len(names)} ops (ETHOSU aside); tinyarena sizes "
              f"{len(sized)} and runs {len(run)}; not sized: {sorted(names - sized)}; "
              f"not run: {sorted(names - run)}")
    assert sized <= names and run <= sized
    done_but_pending = sorted(_PENDING_MERGE & run)
    assert done_but_pending == [], f"remove {done_but_pending} from _PENDING_MERGE"
    assert sorted(names - run) == sorted(_PENDING_MERGE & names)


def test_catalog_is_plain_data() -> None:
    row = next(o for o in op_catalog() if o.name == "SPLIT_V")
    assert row.to_dict() == {"name": "SPLIT_V", "custom": False,
                             "dtypes": ["float32", "int8", "int16", "int32"], "sizing": True,
                             "running": True, "in_wheel": True, "note": ""}
    assert np.all([o.name for o in op_catalog()].count(n) == 1 for n in WHEEL_OPS)


def test_sizing_never_needs_eval() -> None:
    """An op whose eval is missing still gets the wheel's exact arena; running it is refused
    with an error naming the op, where it is, and what still works."""
    import dataclasses

    from op_sweep import one_op, wheel_run
    from tinyarena.interpreter import OpResolver
    from tinyarena.kernels import registration

    model_bytes, _ = one_op("SPLIT_V", [("x", ((2, 9), "int8")),
                                        ("s", np.array([4, 5], np.int32)),
                                        ("a", np.array([1], np.int32))],
                            [((2, 4), "int8"), ((2, 5), "int8")], quant=(0.1, 0), num_splits=2)
    resolver = OpResolver().add("SPLIT_V", dataclasses.replace(registration("SPLIT_V"),
                                                               eval=None))
    _, report = wheel_run(model_bytes, [np.zeros((2, 9), np.int8)])
    model = read_model(model_bytes)
    layout = allocate_model(model, resolver=resolver)
    assert (layout.head, layout.tail) == (report.head, report.tail)
    with pytest.raises(UnsupportedOpError, match=r"SPLIT_V \(operator 0 of subgraph 0\) has no "
                                                 r"eval.*tinyarena size"):
        Interpreter(model, resolver=resolver).allocate_tensors()
