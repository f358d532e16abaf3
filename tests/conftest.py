"""Shared fixtures: where the real models live, and the live TFLM oracle."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from hypothesis import settings

# Property tests are derandomized so that a CI run is reproducible: the same examples every
# run, no example database carried between machines, no wall-clock deadline on a loaded box.
settings.register_profile("tinyarena", derandomize=True, database=None, deadline=None)
settings.load_profile("tinyarena")

TESTS_DIR = Path(__file__).resolve().parent
if str(TESTS_DIR) not in sys.path:
    sys.path.insert(0, str(TESTS_DIR))

from tflm_oracle import SHARED_MODELS, shared_model_names  # noqa: E402


@pytest.fixture(scope="session")
def shared_models() -> Path:
    """The ../shared/models folder; tests that need it skip cleanly where it is absent."""
    if not SHARED_MODELS.is_dir():
        pytest.skip("../shared/models is not present")
    return SHARED_MODELS


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    """Parametrise any test taking ``shared_model_name`` over every .tflite in ../shared/models."""
    if "shared_model_name" in metafunc.fixturenames:
        names = shared_model_names()
        if names:
            metafunc.parametrize("shared_model_name", names)
        else:
            metafunc.parametrize(
                "shared_model_name",
                [pytest.param("absent", marks=pytest.mark.skip(reason="../shared/models absent"))],
            )
