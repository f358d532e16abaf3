"""The batch commands on a local Ray cluster give what one process gives, record for record and
byte for byte (one test: starting a cluster costs seconds)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Iterator

import pytest

# Ray binds a cluster to this machine's network address unless told that clusters are off;
# the tests' cluster stays on the loopback interface (read by Ray at import: set it first).
os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
# A throw-away loopback cluster: no token (one left in ~/.ray by another cluster would not match).
os.environ["RAY_AUTH_MODE"] = "disabled"
pytest.importorskip("ray")

MODELS = ("hello_world_int8.tflite", "micro_speech_quantized.tflite", "person_detect.tflite",
          "keyword_scrambled_8bit.tflite")


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tinyarena", *args], capture_output=True,
                          text=True, timeout=300)


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture
def ray_cluster(monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A local two-worker Ray cluster on 127.0.0.1, as a user starts one with ``ray start``;
    RAY_ADDRESS points every command of the test at it."""
    ray_cli = Path(sys.executable).parent / "ray"
    address = f"127.0.0.1:{_free_port()}"
    started = subprocess.run([str(ray_cli), "start", "--head", "--num-cpus", "2",
                              "--node-ip-address", "127.0.0.1", "--port",
                              address.split(":")[1], "--include-dashboard", "false",
                              "--disable-usage-stats"],
                             capture_output=True, text=True, timeout=180)
    if started.returncode != 0:
        pytest.skip(f"ray start failed here: {started.stderr[-500:]}")
    monkeypatch.setenv("RAY_ADDRESS", address)
    try:
        yield address
    finally:
        subprocess.run([str(ray_cli), "stop", "--force"], capture_output=True, timeout=120)


@pytest.mark.slow
def test_ray_executor_equals_one_process(shared_models: Path, tmp_path: Path,
                                         ray_cluster: str) -> None:
    from tinyarena import batch
    from tinyarena.executors import RayExecutor

    zoo = tmp_path / "zoo"
    zoo.mkdir()
    for name in MODELS:
        shutil.copy(shared_models / name, zoo / name)
    (zoo / "broken.tflite").write_bytes(b"not a model at all")
    paths = sorted(str(p) for p in zoo.glob("*.tflite"))
    targets = ["cortex-m55", "cortex-m3"]

    with RayExecutor() as ray_pool:  # the Python API, connected through RAY_ADDRESS
        on_ray = batch.size_models(paths, targets, executor=ray_pool)
    assert on_ray == batch.size_models(paths, targets)
    assert [r["model"] for r in on_ray if "error" in r] == [str(zoo / "broken.tflite")] * 2

    # The CLI: JSON record for record, optimized files byte for byte.
    seq = _cli("size", str(zoo), "--target", "cortex-m55", "--json")
    ray = _cli("size", str(zoo), "--target", "cortex-m55", "--json", "--executor", "ray")
    assert seq.returncode == ray.returncode == 1  # the broken model, reported
    assert json.loads(ray.stdout) == json.loads(seq.stdout)
    out_seq, out_ray = tmp_path / "opt-seq", tmp_path / "opt-ray"
    args = ("--target", "cortex-m55", "--time-budget", "5")
    first = _cli("optimize", str(zoo / MODELS[0]), str(zoo / MODELS[1]), "-o", str(out_seq),
                 *args)
    second = _cli("optimize", str(zoo / MODELS[0]), str(zoo / MODELS[1]), "-o", str(out_ray),
                  *args, "--executor", "ray")
    assert first.returncode == second.returncode == 0, first.stderr + second.stderr
    for name in MODELS[:2]:
        assert (out_ray / name).read_bytes() == (out_seq / name).read_bytes()
