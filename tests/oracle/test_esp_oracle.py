"""ESP32 targets against esp-tflite-micro (issue 18): every configuration and model of
../shared/esp-oracle/figures.json with status ok. ``size --json``'s ``total`` equals
``arena_used_bytes`` and ``min_arena`` equals the oracle's ``min_arena``; ``min_arena`` is never
a size the oracle saw fail or crash; every esp-nn scratch-size call the oracle logged equals
tinyarena's port of that release's formula for that chip; and ``run`` gives the oracle's
outputs. Skips where the oracle is absent.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from device_outputs import matches, run_device_input
from esp_oracle import CONFIGS, KNOWN_MIN_ARENA_DIFFERENCES, SHARED, ok_cases, parse_params, \
    results

from tinyarena.arena import allocate_model
from tinyarena.arena.targets import get_target


def _cases(known: dict[tuple[str, str], str] | None = None) -> list[object]:
    cases: list[object] = []
    for config, name in ok_cases():
        why = (known or {}).get((config, name))
        marks = [pytest.mark.xfail(reason=why, strict=True)] if why else []
        cases.append(pytest.param(config, name, marks=marks, id=f"{config}-{name}"))
    return cases or [pytest.param("", "", marks=pytest.mark.skip(
        reason="../shared/esp-oracle is not present"))]


def _layout(config: str, name: str):  # type: ignore[no-untyped-def]
    target, kernels, esp_nn = CONFIGS[config]
    return allocate_model(SHARED / name, target=get_target(target, kernels, esp_nn))


@pytest.mark.parametrize("config,name", _cases(KNOWN_MIN_ARENA_DIFFERENCES))
def test_arena_equals_esp_tflite_micro(config: str, name: str) -> None:
    fig = results()[config][name]
    layout = _layout(config, name)
    assert (layout.total, layout.min_arena) == (fig["arena_used_bytes"], fig["min_arena"])


@pytest.mark.parametrize("config,name", _cases())
def test_min_arena_is_never_a_size_that_failed(config: str, name: str) -> None:
    trials = results()[config][name]["min_arena_detail"]["trials"]
    failed = [int(size) for size, outcome in trials.items() if outcome != "ok"]
    assert _layout(config, name).min_arena > max(failed, default=-1)


def _scratch_cases() -> list[object]:
    cases: list[object] = []
    for config, name in ok_cases():
        for i, call in enumerate(results()[config][name].get("espnn_scratch_requests", [])):
            cases.append(pytest.param(config, call, id=f"{config}-{name}-{i}-{call['kind']}"))
    return cases or [pytest.param("", {}, marks=pytest.mark.skip(
        reason="../shared/esp-oracle is not present"))]


@pytest.mark.parametrize("config,call", _scratch_cases())
def test_scratch_formula_equals_esp_nn(config: str, call: dict[str, object]) -> None:
    from tinyarena.kernels.esp_nn import _scratch_sizes as ss

    profile = get_target(*CONFIGS[config])
    p = parse_params(str(call["params"]))
    if call["kind"] == "softmax":
        assert ss.softmax(p["w"][0]) == call["size"]
        return
    table = ss.CONV if call["kind"] == "conv" else ss.DEPTHWISE_CONV
    fn = ss.lookup(table, profile.esp_nn_dispatch, profile.esp_nn_version)
    params = ss.ConvScratchParams(*p["stride"], *p["pad"], p.get("mult", (1,))[0])
    size = fn(ss.Dims(*p["in"]), ss.Dims(*p["filt"][:2], 0), ss.Dims(*p["out"]), params)
    assert size == call["size"]


def _output_cases() -> list[object]:
    cases: list[object] = []
    for config, name in ok_cases():
        if config in ("esp-reference", "esp32s3-espnn-1.2.3", "esp32-espnn-1.2.3"):
            cases.append(pytest.param(config, name, id=f"{config}-{name}"))
    return cases or [pytest.param("", "", marks=pytest.mark.skip(
        reason="../shared/esp-oracle is not present"))]


_FLOAT_TYPES = {1, 10, 11}  # TfLiteType kTfLiteFloat32, kTfLiteFloat16, kTfLiteFloat64


@pytest.mark.parametrize("config,name", _output_cases())
def test_outputs_equal_esp_nn(config: str, name: str) -> None:
    fig = results()[config][name]
    if any(o["tflite_type"] in _FLOAT_TYPES for o in fig["outputs"]):
        pytest.skip("float outputs: the oracle ran on an i386 host (x87, glibc), not the chip's "
                    "FPU and newlib")
    target, kernels, esp_nn = CONFIGS[config]
    assert matches(fig, run_device_input(SHARED / name, get_target(target, kernels, esp_nn)))


def test_size_json_names_the_build(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from tinyarena.cli import main

    name = "models/kws_ref_model.tflite"
    if not (SHARED / name).is_file() or not results():
        pytest.skip("../shared is not present")
    assert main(["size", str(SHARED / name), "--target", "esp32s3", "--esp-nn", "1.2.0",
                 "--esp-nn", "1.2.3", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [(r["target"], r["kernel_set"], r["esp_nn_version"], r["tflm"]) for r in records] \
        == [("esp32s3", "esp-nn", "1.2.0", "09656354"), ("esp32s3", "esp-nn", "1.2.3", "09656354")]
    for r, config in zip(records, ("esp32s3-espnn-1.2.0", "esp32s3-espnn-1.2.3")):
        fig = results()[config][name]
        assert (r["total"], r["min_arena"]) == (fig["arena_used_bytes"], fig["min_arena"])
    # the change names the operator whose esp-nn scratch moved, with the oracle's byte counts
    want = [(q["size"]) for q in results()["esp32s3-espnn-1.2.3"][name]["espnn_scratch_requests"]]
    before = [q["size"] for q in results()["esp32s3-espnn-1.2.0"][name]["espnn_scratch_requests"]]
    moved = [(b, a) for b, a in zip(before, want) if a != b]
    change = records[1]["change"]
    assert [(s["from"], s["to"]) for s in change["scratch"]] == moved
    assert change["min_arena"] == records[1]["min_arena"] - records[0]["min_arena"]


MEASURED = Path(__file__).with_name("esp_nn_scratch_sizes.txt")


def _measured_rows() -> list[list[int]]:
    return [[int(v) for v in line.split()] for line in MEASURED.read_text().splitlines()
            if line and not line.startswith("#")]


def test_scratch_formulas_equal_the_compiled_c_on_every_branch() -> None:
    """The port against esp-nn's own C, compiled and run on 1,500 shapes that reach every
    branch of every release's S3 and P4 size function (the oracle's models reach fewer)."""
    from tinyarena.kernels.esp_nn import _scratch_sizes as ss

    rows = _measured_rows()
    assert len(rows) == 1500
    for row in rows:
        iw, ih, ic, fw, fh, oc, ow, oh, sw, sh, pw, ph, mult = row[:13]
        p = ss.ConvScratchParams(sw, sh, pw, ph, mult)
        inp, flt = ss.Dims(iw, ih, ic), ss.Dims(fw, fh, ic)
        got = []
        for version in ("1.1.2", "1.2.0", "1.2.3"):
            got += [ss.CONV[("esp32s3", version)](inp, flt, ss.Dims(ow, oh, oc), p),
                    ss.CONV[("esp32p4", version)](inp, flt, ss.Dims(ow, oh, oc), p),
                    ss.DEPTHWISE_CONV[("esp32s3", version)](inp, flt,
                                                            ss.Dims(ow, oh, ic * mult), p)]
        assert got == row[13:], row[:13]
