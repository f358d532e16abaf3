"""The CMSIS-NN kernel set: TFLM's ``tensorflow/lite/micro/kernels/cmsis_nn/`` folder.

A build with ``-DCMSIS_NN`` replaces the reference kernel of every op that folder has a file for;
all other ops keep the reference kernel. ``MODULES`` lists the replacements whose allocation
behaviour (OpData, temp tensors, scratch requests, persistent buffers) differs from the
reference kernel; one module per TFLM file, named like it. Ops of that folder whose Init and
Prepare are the reference ones (ADD: same 60-byte OpData and temps; MUL, PAD/PADV2, TRANSPOSE,
MAXIMUM/MINIMUM: they register the reference Init/Prepare) allocate exactly as the reference
kernel and are served by it here. BATCH_MATMUL has no tinyarena kernel in either set.

The scratch sizes are CMSIS-NN's ``arm_*_get_buffer_size*`` functions (ARM-software/CMSIS-NN
at 4ab83cc3, the commit TFLM 90b983c2 pins), built with GCC, for the ISA class the target
names (``ctx.target.cmsis_nn_isa``): see ``_buffer_sizes``.
"""

from __future__ import annotations

import importlib

from tinyarena.kernels.base import Registration, module_registration

# op name -> module name under tinyarena.kernels.cmsis_nn
MODULES: dict[str, str] = {
    "AVERAGE_POOL_2D": "pooling",
    "CONV_2D": "conv",
    "DEPTHWISE_CONV_2D": "depthwise_conv",
    "FULLY_CONNECTED": "fully_connected",
    "MAX_POOL_2D": "pooling",
    "SOFTMAX": "softmax",
    "SVDF": "svdf",
    "TRANSPOSE_CONV": "transpose_conv",
    "UNIDIRECTIONAL_SEQUENCE_LSTM": "unidirectional_sequence_lstm",
}


def cmsis_nn_registration(op_name: str) -> Registration | None:
    """The CMSIS-NN kernel for ``op_name``; None where the build keeps the reference kernel."""
    module_name = MODULES.get(op_name)
    if module_name is None:
        return None
    return module_registration(
        importlib.import_module(f"tinyarena.kernels.cmsis_nn.{module_name}"), op_name)


__all__ = ["MODULES", "cmsis_nn_registration"]
