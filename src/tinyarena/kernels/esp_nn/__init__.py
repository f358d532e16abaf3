"""The ESP-NN kernel set: esp-tflite-micro's ``tensorflow/lite/micro/kernels/esp_nn/`` folder.

esp-tflite-micro's CMakeLists.txt drops TFLM's add.cc, conv.cc, depthwise_conv.cc,
fully_connected.cc, mul.cc, pooling.cc and softmax.cc and compiles ``kernels/esp_nn/*.cc`` in
their place; every other op keeps TFLM's reference kernel. ``MODULES`` lists the replacements
whose allocations differ from the reference kernel's, one module per esp file, named like it:
CONV_2D, DEPTHWISE_CONV_2D and SOFTMAX (their own NodeData, and the scratch buffer Prepare asks
``esp_nn_get_*_scratch_size`` for). ADD, MUL, FULLY_CONNECTED and the two pools keep the
reference OpData, Prepare and allocations (only their Eval calls esp-nn), so the reference
kernel serves them.

Which scratch size a build asks for depends on the chip (``esp_nn.h`` includes the S3, the P4
or the generic header: ``ctx.target.esp_nn_dispatch``) and on the esp-nn release the build
resolved (``ctx.target.esp_nn_version``): see ``_scratch_sizes``.
"""

from __future__ import annotations

import importlib

from tinyarena.kernels.base import Registration, module_registration

# op name -> module name under tinyarena.kernels.esp_nn
MODULES: dict[str, str] = {
    "CONV_2D": "conv",
    "DEPTHWISE_CONV_2D": "depthwise_conv",
    "SOFTMAX": "softmax",
}


def esp_nn_registration(op_name: str) -> Registration | None:
    """The ESP-NN kernel for ``op_name``; None where the build allocates as the reference."""
    module_name = MODULES.get(op_name)
    if module_name is None:
        return None
    return module_registration(
        importlib.import_module(f"tinyarena.kernels.esp_nn.{module_name}"), op_name)


__all__ = ["MODULES", "esp_nn_registration"]
