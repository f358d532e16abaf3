"""Bad input to the ethos-u kernel and to the alternate decompression memory is refused with
a tinyarena error naming the problem (the sizes themselves are checked against TFLM in
tests/oracle/test_ethos_u_device.py and test_alt_decompression.py)."""

from __future__ import annotations

import numpy as np
import pytest

from ethos_u_cases import CASES, VELA_OPTIONS, build_vela_model
from tinyarena.arena import allocate_model
from tinyarena.arena.other_memory import ethos_u_memory, without_fast_scratch
from tinyarena.builder import ModelBuilder
from tinyarena.errors import KernelError, PlanError, UnsupportedOpError
from tinyarena.kernels import ethos_u
from tinyarena.model import read_model


def _ethos_u_op(inputs: int, options: bytes) -> bytes:
    b = ModelBuilder()
    tensors = [b.add_constant("cms", np.arange(16, dtype=np.uint8))][:inputs]
    x = b.add_input("x", (4,), "int8", scale=0.1, zero_point=0)
    y = b.add_tensor("y", (4,), "int8", scale=0.1, zero_point=0)
    b.add_operator("ethos-u", [*tensors, x][:inputs], [y], custom_options=options)
    b.mark_output(y)
    return b.build()


def test_an_ethos_u_operator_without_custom_options_is_refused() -> None:
    with pytest.raises(KernelError, match="custom options.*Vela"):
        allocate_model(_ethos_u_op(2, b""), target="cortex-m55")


def test_an_ethos_u_operator_without_inputs_is_refused() -> None:
    with pytest.raises(KernelError, match="no inputs"):
        allocate_model(_ethos_u_op(0, VELA_OPTIONS), target="cortex-m55")


def test_generic_abi_profiles_have_no_ethos_u_kernel() -> None:
    model = build_vela_model(CASES[0])
    for target in ("host-x64", "arm32", "arm32-short-enums"):
        with pytest.raises(UnsupportedOpError, match="device builds"):
            allocate_model(model, target=target)
    assert ethos_u.device_build("cortex-m85") and not ethos_u.device_build(None)


@pytest.mark.parametrize("bad", [-1, True, 2.5, "16"])
def test_alternate_memory_sizes_must_be_whole_bytes(bad: object) -> None:
    with pytest.raises(PlanError, match="alternate decompression memory"):
        allocate_model(build_vela_model(CASES[0]), target="cortex-m55",
                       alt_decompression_memory=bad)  # type: ignore[arg-type]


def test_fast_scratch_rewrite_touches_only_a_separate_fast_scratch() -> None:
    shared = read_model(build_vela_model(CASES[0]))
    assert without_fast_scratch(shared) is shared
    dedicated = read_model(build_vela_model(next(c for c in CASES
                                                  if c.name == "dedicated_2in_2out")))
    zero = without_fast_scratch(dedicated)
    fast = ethos_u.fast_scratch(dedicated)
    assert fast is not None and not fast.shared_with_scratch
    assert zero.subgraphs[0].tensors[fast.tensor].shape == (0,)
    changed = [i for i, (a, b) in enumerate(zip(dedicated.subgraphs[0].tensors,
                                                zero.subgraphs[0].tensors)) if a != b]
    assert changed == [fast.tensor]


def test_a_model_without_vela_has_no_ethos_u_memory() -> None:
    b = ModelBuilder()
    x = b.add_input("x", (1, 4), "int8", scale=0.1, zero_point=0)
    y = b.add_tensor("y", (1, 4), "int8", scale=0.1, zero_point=0)
    b.add_operator("RELU", [x], [y])
    b.mark_output(y)
    assert ethos_u_memory(read_model(b.build()), target="cortex-m55") is None
