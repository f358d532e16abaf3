"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED on the real models, op by op.

The wheel runs the whole model keeping every tensor (kPreserveAllTensors); each conv-family
operator is then run here on the wheel's own input tensors and its output compared with the
wheel's output tensor, bit for bit.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernel_runner import _Context, _storage
from tflm_oracle import captured_stderr, make_interpreter, shared_model_bytes
from tinyarena.kernels import registration
from tinyarena.model import read_model

pytestmark = pytest.mark.oracle

OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED")


@pytest.mark.parametrize("name", ["person_detect", "kws_ref_model", "micro_speech_quantized",
                                  "hello_world_int8", "hello_world_float",
                                  pytest.param("mobilenet_v2_quantized_1x3x224x224",
                                               marks=pytest.mark.slow)])
def test_conv_family_ops_match_tflm_on_real_model(shared_models: object, name: str) -> None:
    model_bytes = shared_model_bytes(name)
    model = read_model(model_bytes)
    sg = model.subgraphs[0]
    rng = np.random.default_rng(3)
    with captured_stderr():
        ip = make_interpreter(model_bytes, preserve_all=True)
        d = ip.get_input_details(0)
        if np.dtype(d["dtype"]) == np.float32:
            x = rng.uniform(-1, 1, d["shape"]).astype(np.float32)
        else:
            x = rng.integers(-128, 128, d["shape"]).astype(d["dtype"])
        ip.set_input(x, 0)
        ip.invoke()
        wheel = {t.index: np.array(ip.GetTensor(t.index, 0)["tensor_data"], copy=True)
                 for t in sg.tensors
                 if t.data is None}
    arrays = {t.index: _storage(t) for t in sg.tensors}
    ctx = _Context(model, sg, arrays)
    checked = 0
    for op in sg.operators:
        if op.name not in OPS:
            continue
        reg = registration(op.name)
        for i in op.inputs:
            if i >= 0 and i in wheel:
                arrays[i] = wheel[i].reshape(arrays[i].shape)
        reg.init(ctx, op)
        data = reg.prepare(ctx, op)
        reg.eval(ctx, op, data)
        out = op.outputs[0]
        assert np.array_equal(arrays[out], wheel[out].reshape(arrays[out].shape)), \
            f"{name}: operator {op.index} ({op.name}) differs from TFLM"
        checked += 1
    assert checked > 0
