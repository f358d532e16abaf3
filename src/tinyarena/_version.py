"""tinyarena's version and the TFLM build it emulates, in one place (CLI ``--version``, the
comments of exported C sources, ``tinyarena.__version__``)."""

from __future__ import annotations

__version__ = "0.1.0"

# The oracle every host-x64 number is checked against: the pinned tflite-micro wheel.
TFLM_WHEEL_VERSION = "0.dev20261023182759"
TFLM_COMMIT = "8f6596d"
EMULATED_TFLM = f"tflite-micro {TFLM_WHEEL_VERSION} (commit {TFLM_COMMIT})"

__all__ = ["EMULATED_TFLM", "TFLM_COMMIT", "TFLM_WHEEL_VERSION", "__version__"]
