"""Search-space candidates are models the real TFLM sizes exactly as tinyarena does."""

from __future__ import annotations

import numpy as np
import pytest

from tinyarena import batch
from tinyarena.builder.search_space import Candidate, ds_cnn
from tinyarena.errors import BuildError
from tinyarena.interpreter import Interpreter

CANDIDATES = [Candidate(), Candidate(resolution=32, channels=3, width=8, blocks=5,
                                     stride_at=(0, 1, 3), kernel=5, classes=4),
              Candidate(resolution=20, width=4, blocks=0, kernel=1, classes=2)]


@pytest.mark.oracle
@pytest.mark.parametrize("candidate", CANDIDATES, ids=str)
def test_candidates_size_and_run_like_the_wheel(candidate: Candidate) -> None:
    from tflm_oracle import tflm_allocations, tflm_run

    data = ds_cnn(candidate, seed=1)
    record = batch.size_models([data], ["host-x64"])[0]
    wheel = tflm_allocations(data)
    assert (record["total"], record["head"], record["tail"]) == \
        (wheel.total, wheel.head, wheel.tail)
    x = np.random.default_rng(2).integers(-128, 128, (1, candidate.resolution,
                                                      candidate.resolution,
                                                      candidate.channels), dtype=np.int8)
    ip = Interpreter(data)
    ip.allocate_tensors()
    ip.set_input(x, 0)
    ip.invoke()
    assert np.array_equal(ip.get_output(0), tflm_run(data, [x])[0])


def test_macs_count_every_layer() -> None:
    # resolution 8, width 2, one stride-2 block, kernel 3, 1 input channel, 3 classes:
    # stem 4*4*2*9*1 = 288; dw (stride 2) 2*2*2*9 = 72; pw 2*2*2*4 = 32; fc 4*3 = 12.
    c = Candidate(resolution=8, channels=1, width=2, blocks=1, stride_at=(0,), kernel=3,
                  classes=3)
    assert c.macs() == 288 + 72 + 32 + 12


def test_invalid_candidates_are_refused() -> None:
    with pytest.raises(BuildError, match="not a valid candidate"):
        ds_cnn(Candidate(kernel=4))
