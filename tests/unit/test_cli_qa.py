"""Regressions found by trying every command as a new user would (bad values, unusual models);
each test failed before its fix."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tinyarena.builder import ModelBuilder
from tinyarena.cli import main


def _tiny_model(tmp_path) -> str:
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator("RELU", [x], [y])
    b.mark_output(y)
    path = tmp_path / "tiny.tflite"
    path.write_bytes(b.build())
    return str(path)


@pytest.mark.parametrize("option", ["--seed", "--top-k"])
def test_run_negative_seed_or_top_k_is_a_usage_error(tmp_path, capsys, option) -> None:
    # --seed -1 used to end in numpy's raw "ValueError: expected non-negative integer"
    with pytest.raises(SystemExit) as exc:
        main(["run", _tiny_model(tmp_path), option, "-1", "--json"])
    assert exc.value.code == 2
    error = json.loads(capsys.readouterr().out)["error"]
    assert option in error["message"] and "0 or more" in error["message"]


def _model_with_unused_tensors() -> bytes:
    """RELU -> RELU over 16 floats (64 bytes each), plus two 1 KiB float tensors that no
    operator reads or writes. TFLM gives those lifetime -1..-1 and still plans them, both
    live at once: the head is 2,048 bytes, formed at step -1 by the unused pair alone."""
    b = ModelBuilder()
    x = b.add_input("x", (16,), "float32")
    b.add_tensor("unused_a", (256,), "float32")
    b.add_tensor("unused_b", (256,), "float32")
    h = b.add_tensor("h", (16,), "float32")
    y = b.add_tensor("y", (16,), "float32")
    b.add_operator("RELU", [x], [h])
    b.add_operator("RELU", [h], [y])
    b.mark_output(y)
    return b.build()


def test_peak_formed_by_unused_tensors_is_named_as_such(tmp_path, capsys) -> None:
    # The peak at step -1 used to read "before the first operator (inputs)" and each unused
    # tensor's ops "input -> output", though none is a graph input or output.
    path = tmp_path / "unused.tflite"
    path.write_bytes(_model_with_unused_tensors())
    assert main(["plan", str(path), "--json"]) == 0
    plan = json.loads(capsys.readouterr().out)
    assert plan["head_bytes"] == 2048
    assert plan["peak"]["step"] == -1 and plan["peak"]["operator"] is None
    assert {b["name"] for b in plan["peak"]["buffers"]} == {"unused_a", "unused_b"}
    assert main(["plan", str(path)]) == 0
    text = capsys.readouterr().out
    peak_line = next(line for line in text.splitlines() if line.startswith("peak at"))
    assert "(inputs)" not in peak_line and "no operator uses" in peak_line
    rows = [line for line in text.splitlines() if " tensor " in line and "unused_" in line]
    assert len(rows) == 2 and all("unused" in r.split("float32")[-1] for r in rows)
    assert not any("input -> output" in r for r in rows)


def test_whatif_sees_a_peak_at_step_minus_one(tmp_path) -> None:
    # whatif's peak skipped step -1: it called steps 0..2 (at most 128 bytes live) the peak
    # and never offered the unused tensors, which are what pre-allocation would save.
    from tinyarena.arena import allocate_model
    from tinyarena.arena.whatif import analyse_preallocation
    from tinyarena.model import read_model

    model = read_model(_model_with_unused_tensors())
    w = analyse_preallocation(model)
    assert w.peak_steps == (-1,) and w.peak_tensors == (1, 2)
    by_tensor = {c.tensor: c for c in w.candidates}
    base = allocate_model(model)
    for t in (1, 2):
        # independent: the other unused tensor (1,024 bytes) is then the whole head
        assert by_tensor[t].head_saving == 1024
        assert base.head - allocate_model(model, preallocated=[t]).head == 1024
    assert w.best_pair is not None and w.best_pair.tensors == (1, 2)


def _pinned_model() -> bytes:
    """RELU -> RELU over 64 floats, every buffer pinned by an OfflineMemoryAllocation plan."""
    from tinyarena.model.metadata import OFFLINE_PLAN_NAME, encode_offline_plan

    b = ModelBuilder()
    x = b.add_input("x", (64,), "float32")
    h = b.add_tensor("h", (64,), "float32")
    y = b.add_tensor("y", (64,), "float32")
    b.add_operator("RELU", [x], [h])
    b.add_operator("RELU", [h], [y])
    b.mark_output(y)
    b.add_metadata(OFFLINE_PLAN_NAME, encode_offline_plan([0, 256, 0], 1))
    return b.build()


def test_whatif_on_an_offline_planned_model_says_so(tmp_path, capsys) -> None:
    # The header said "greedy planner" for a model whose every buffer the offline plan pins
    # (issue 10: such a model says so in every header), and the table was silently empty.
    from tinyarena.arena import allocate_model
    from tinyarena.model import read_model

    data = _pinned_model()
    layout = allocate_model(read_model(data))
    assert layout.buffers and all(buf.offline for buf in layout.buffers)
    path = tmp_path / "pinned.tflite"
    path.write_bytes(data)
    assert main(["whatif", str(path)]) == 0
    text = capsys.readouterr().out
    header = text.splitlines()[0]  # the target line names what placed the buffers
    assert header.startswith("target host-x64 (default: the x86-64 pip wheel")
    assert "offline plan" in header and "greedy planner" not in header
    assert "no candidate" in text and "offline" in text.split("no candidate")[1]


def test_size_split_header_names_the_offline_plan(tmp_path, capsys) -> None:
    # `size --split` said "greedy planner" for an offline-planned model
    path = tmp_path / "pinned.tflite"
    path.write_bytes(_pinned_model())
    assert main(["size", str(path), "--split"]) == 0
    header = capsys.readouterr().out.splitlines()[0]
    assert "offline plan" in header and "greedy planner" not in header


def test_size_csv_fills_every_column(tmp_path, capsys) -> None:
    # the CSV's planner column was empty on every row (the JSON calls it planned_by)
    import csv

    (tmp_path / "a.tflite").write_bytes(_pinned_model())
    (tmp_path / "b.tflite").write_bytes(_model_with_unused_tensors())
    table = tmp_path / "sizes.csv"
    assert main(["size", str(tmp_path), "--csv", str(table), "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    rows = list(csv.DictReader(table.open()))
    assert [r["model"] for r in rows] == [r["model"] for r in records]
    for row, record in zip(rows, records):
        assert all(row[k] for k in row if k != "error"), row
        assert row["planner"] == record["planned_by"]
        assert [int(row[k]) for k in ("head", "tail", "total", "min_arena")] == \
            [record[k] for k in ("head", "tail", "total", "min_arena")]
    assert "offline plan" in rows[0]["planner"] and rows[1]["planner"] == "greedy planner"


def test_size_text_words_agree_with_the_report(tmp_path, capsys) -> None:
    # "also reached at steps 2" (one step); the text called the model-wide tail
    # "(tensors, nodes, IO)" where the HTML report says "(tensors, nodes, IO, allocator)"

    b = ModelBuilder()
    x = b.add_input("x", (64,), "float32")
    h = b.add_tensor("h", (64,), "float32")
    y = b.add_tensor("y", (64,), "float32")
    b.add_operator("RELU", [x], [h])
    b.add_operator("RELU", [h], [y])
    b.mark_output(y)
    path = tmp_path / "two.tflite"
    path.write_bytes(b.build())
    assert main(["size", str(path)]) == 0
    text = capsys.readouterr().out
    assert "reached at step 1)" in text or "reached at step 2)" in text
    assert "steps 1)" not in text and "steps 2)" not in text
    row = next(line for line in text.splitlines() if line.startswith("model-wide"))
    assert "allocator" in row
    header = next(line for line in text.splitlines() if line.startswith("tail by operator"))
    assert len(row) == len(header)
    page = tmp_path / "r.html"
    assert main(["report", str(path), "-o", str(page), "--no-optimize"]) == 0
    assert row.split(")")[0] + ")" in page.read_text()


def test_issue12_and_issue10_functions_take_a_path_bytes_or_a_model(tmp_path) -> None:
    # issue 11: every public function that takes a model accepts a path, bytes or a Model;
    # these four (merged from the other branches) raised a raw AttributeError on a path
    from tinyarena.arena import allocate_model
    from tinyarena.arena.multi import allocate_shared, allocate_split
    from tinyarena.arena.whatif import analyse_preallocation
    from tinyarena.errors import PlanError
    from tinyarena.model import read_model
    from tinyarena.report import explain_arena

    data = _model_with_unused_tensors()
    path = tmp_path / "m.tflite"
    path.write_bytes(data)
    model = read_model(data)
    layout = allocate_model(model)
    want = (analyse_preallocation(model).to_dict(), allocate_split(model).to_dict(),
            allocate_shared([model, model]).to_dict(["a", "b"]),
            explain_arena(model, layout).peak_dict())
    for source in (str(path), path, data):
        got = (analyse_preallocation(source).to_dict(), allocate_split(source).to_dict(),
               allocate_shared([source, model]).to_dict(["a", "b"]),
               explain_arena(source, layout).peak_dict())
        assert got == want
    with pytest.raises(PlanError, match="list of models"):
        allocate_shared(str(path))  # type: ignore[arg-type]


def test_shared_arena_takes_a_folder_and_refuses_csv(tmp_path, capsys) -> None:
    # `size FOLDER --shared-arena` failed with "cannot read model file ...: Is a directory"
    # although size takes folders; --csv was silently ignored with --split/--shared-arena
    folder = tmp_path / "models"
    folder.mkdir()
    (folder / "a.tflite").write_bytes(_pinned_model())
    (folder / "b.tflite").write_bytes(_model_with_unused_tensors())
    files = [str(folder / "a.tflite"), str(folder / "b.tflite")]
    assert main(["size", *files, "--shared-arena", "--json"]) == 0
    want = json.loads(capsys.readouterr().out)
    assert main(["size", str(folder), "--shared-arena", "--json"]) == 0
    assert json.loads(capsys.readouterr().out) == want
    for extra in (["--shared-arena", *files], ["--split", files[0]]):
        assert main(["size", *extra, "--csv", str(tmp_path / "x.csv"), "--json"]) == 2
        assert "--csv" in json.loads(capsys.readouterr().out)["error"]["message"]
        assert not (tmp_path / "x.csv").exists()


def test_run_json_with_nan_and_inf_outputs_is_valid_json(tmp_path, capsys) -> None:
    # `run --json` printed Python's bare NaN / Infinity tokens, which JSON does not have
    b = ModelBuilder()
    x = b.add_input("x", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    b.add_operator("ADD", [x, x], [y])
    b.mark_output(y)
    model = tmp_path / "add.tflite"
    model.write_bytes(b.build())
    feed = tmp_path / "x.npy"
    np.save(feed, np.array([np.inf, -np.inf, np.nan, 1.5], np.float32))
    assert main(["run", str(model), "--input", str(feed), "--json"]) == 0

    def refuse(token: str) -> None:
        raise AssertionError(f"not JSON: {token}")

    data = json.loads(capsys.readouterr().out, parse_constant=refuse)
    values = data["outputs"][0]["values"]
    # TFLM's float ADD clamps to the activation range [lowest, max] of float32: inf does not
    # come out, NaN does
    big = float(np.finfo(np.float32).max)
    assert values == [big, -big, "NaN", 3.0]


def test_json_errors_into_a_closed_pipe_keep_their_exit_status(monkeypatch, capsys) -> None:
    # `tinyarena plan missing.tflite --json | true` and usage errors with --json ended in a
    # BrokenPipeError traceback: only the commands' normal output handled a reader gone away
    import os
    import sys

    read_end, write_end = os.pipe()

    class ClosedPipe:
        def write(self, text: str) -> int:
            raise BrokenPipeError(32, "Broken pipe")

        def flush(self) -> None:
            pass

        def fileno(self) -> int:
            return write_end

    monkeypatch.setattr(sys, "stdout", ClosedPipe())
    try:
        assert main(["plan", "/nonexistent/model.tflite", "--json"]) == 1
        with pytest.raises(SystemExit) as exc:
            main(["size", "m.tflite", "--jobs", "0", "--json"])
        assert exc.value.code == 2
    finally:
        os.close(read_end)
        os.close(write_end)
    assert capsys.readouterr().err == ""


def test_run_refuses_a_16_bit_image_instead_of_clipping_it(tmp_path, capsys) -> None:
    # Pillow's convert("L") clips 16-bit pixels to 255: the model silently saw a white image
    image_module = pytest.importorskip("PIL.Image")
    b = ModelBuilder()
    x = b.add_input("x", (1, 4, 4, 1), "int8", scale=1 / 255, zero_point=-128)
    y = b.add_tensor("y", (1, 4, 4, 1), "int8", scale=1 / 255, zero_point=-128)
    b.add_operator("RELU", [x], [y])
    b.mark_output(y)
    model = tmp_path / "img.tflite"
    model.write_bytes(b.build())
    png = tmp_path / "deep.png"
    pixels = np.arange(16, dtype=np.uint16).reshape(4, 4) * 4000
    image_module.fromarray(pixels).save(png)
    assert image_module.open(png).mode.startswith("I")
    assert main(["run", str(model), "--input", str(png), "--json"]) == 1
    message = json.loads(capsys.readouterr().out)["error"]["message"]
    assert "8-bit" in message and "deep.png" in message


def test_export_refuses_an_arena_size_an_unsigned_int_cannot_hold(tmp_path, capsys) -> None:
    # `--margin 4G` wrote `constexpr unsigned int kTensorArenaSize = 4294968400;`, which C++
    # wraps to a tiny arena
    model = tmp_path / "m.tflite"
    model.write_bytes(_pinned_model())
    out = tmp_path / "fw"
    assert main(["export", str(model), "--target", "host-x64", "--margin", "4G", "-o", str(out),
                 "--json"]) == 1
    assert "unsigned int" in json.loads(capsys.readouterr().out)["error"]["message"]
    assert not list(out.glob("*.h"))
    assert main(["export", str(model), "--target", "host-x64", "--margin", "1K", "-o",
                 str(out)]) == 0


def test_report_refuses_an_optimized_file_of_another_model(tmp_path, capsys) -> None:
    # `report A --optimized B.tflite` drew B's plan as A's "after" and claimed the saving
    from tinyarena.model.metadata import OFFLINE_PLAN_NAME, encode_offline_plan
    from tinyarena.rewrite.rewriter import reorder_operators, set_metadata

    b = ModelBuilder()
    x = b.add_input("x", (64,), "float32")
    p = b.add_tensor("p", (64,), "float32")
    q = b.add_tensor("q", (64,), "float32")
    y = b.add_tensor("y", (64,), "float32")
    b.add_operator("RELU", [x], [p])
    b.add_operator("RELU6", [x], [q])
    b.add_operator("ADD", [p, q], [y])
    b.mark_output(y)
    model = tmp_path / "m.tflite"
    model.write_bytes(b.build())
    # the same graph, operators reordered and pinned: what `optimize` may write
    same = set_metadata(reorder_operators(model.read_bytes(), 0, [1, 0, 2]),
                        OFFLINE_PLAN_NAME, encode_offline_plan([0, 256, 512, 0], 1))
    (tmp_path / "same.tflite").write_bytes(same)
    other = tmp_path / "other.tflite"
    other.write_bytes(_pinned_model())
    page = str(tmp_path / "r.html")
    assert main(["report", str(model), "--optimized", str(tmp_path / "same.tflite"),
                 "-o", page]) == 0
    capsys.readouterr()
    assert main(["report", str(model), "--optimized", str(other), "-o", page]) == 1
    assert "not an optimized" in capsys.readouterr().err


def test_a_colliding_offline_plan_is_not_called_sharing_on_purpose(tmp_path, capsys) -> None:
    # x (the graph input) and h pinned at the same offset while both live at step 1: a
    # collision under the optimizer's rules. The words said "this plan is -256 bytes above"
    # the lower bound and "256 bytes shared on purpose".
    from tinyarena.model.metadata import OFFLINE_PLAN_NAME, encode_offline_plan

    b = ModelBuilder()
    x = b.add_input("x", (64,), "float32")
    h = b.add_tensor("h", (64,), "float32")
    y = b.add_tensor("y", (64,), "float32")
    b.add_operator("RELU", [x], [h])
    b.add_operator("RELU", [h], [y])
    b.mark_output(y)
    b.add_metadata(OFFLINE_PLAN_NAME, encode_offline_plan([0, 0, 0], 1))
    path = tmp_path / "collide.tflite"
    path.write_bytes(b.build())
    assert main(["plan", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    bound_line = next(line for line in lines if line.startswith("lower bound"))
    peak_line = next(line for line in lines if line.startswith("peak at"))
    assert "-256" not in bound_line and "on purpose" not in peak_line
    assert "breaks those rules: 1 collision ('x' and 'h')" in bound_line
    assert "collision" in peak_line
    # h over y is the in-place rule, and the pair list says so
    assert ("buffers 1 and 2 ('h', 'y') share bytes: shared on purpose (in place; relies on "
            "reference: in-place:RELU)") in lines
    assert main(["plan", str(path), "--json"]) == 0
    bound = json.loads(capsys.readouterr().out)["bound"]
    assert bound["optimal"] is False


@pytest.mark.parametrize("suffix", [".npz", ".npy"])
def test_a_damaged_input_file_is_not_answered_with_pickle_advice(tmp_path, capsys,
                                                                 suffix) -> None:
    # numpy's message for an unrecognised file advises loading it "unsafely" with pickle
    feed = tmp_path / f"bad{suffix}"
    feed.write_bytes(b"PK garbage, not an archive")
    assert main(["run", _tiny_model(tmp_path), "--input", str(feed), "--json"]) == 1
    message = json.loads(capsys.readouterr().out)["error"]["message"]
    assert "pickle" not in message.replace("never loads pickled", "")
    assert "damaged" in message


def test_whatif_without_candidates_and_without_offline_plan(tmp_path, capsys) -> None:
    # the "pinned by the offline plan" reason must not be given for a model that has none
    path = tmp_path / "empty.tflite"
    path.write_bytes(ModelBuilder().build())
    assert main(["whatif", str(path)]) == 0
    text = capsys.readouterr().out
    assert "no candidate" in text and "offline" not in text


def test_whatif_best_set_label_counts_the_tensors_it_holds(tmp_path, capsys) -> None:
    # `--max-external 99` printed "best 99    tensors [0, 2]" for a set of two
    path = tmp_path / "u.tflite"
    path.write_bytes(_model_with_unused_tensors())
    assert main(["whatif", str(path), "--max-external", "99", "--json"]) == 0
    best = json.loads(capsys.readouterr().out)["best_set"]["tensors"]
    assert 2 <= len(best) < 99
    assert main(["whatif", str(path), "--max-external", "99"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("best ")
                and not x.startswith("best pair"))
    assert line.startswith(f"best {len(best)} ") and "best 99" not in line


def test_plan_rows_of_other_subgraphs_say_which_subgraph(tmp_path, capsys) -> None:
    # an IF model's 'then' and 'else' subgraphs both have tensors 0, 1, 2 and an op 0: the
    # rows read "tensor 0 a ... input -> op 0 ADD" twice with nothing telling them apart
    b = ModelBuilder()
    cond = b.add_input("cond", (1,), "bool")
    x = b.add_input("x", (4,), "float32")
    y = b.add_tensor("y", (4,), "float32")
    for sub_name, op in (("then", "ADD"), ("else", "MUL")):
        sub = b.add_subgraph(sub_name)
        a = sub.add_input("a", (4,), "float32")
        r = sub.add_tensor("r", (4,), "float32")
        sub.add_operator(op, [a, a], [r])
        sub.mark_output(r)
    b.add_operator("IF", [cond, x], [y], then_subgraph_index=1, else_subgraph_index=2)
    b.mark_output(y)
    path = tmp_path / "if.tflite"
    path.write_bytes(b.build())
    assert main(["plan", str(path)]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines() if " tensor " in line]
    assert any("subgraph 1:" in row and "ADD" in row for row in rows)
    assert any("subgraph 2:" in row and "MUL" in row for row in rows)
    assert not any("subgraph 0" in row for row in rows)


@pytest.mark.parametrize("labels", ["a", "a,b,c,d,e"])
def test_run_labels_must_name_every_class(tmp_path, capsys, labels) -> None:
    # `--labels a` for a 4-class output labelled class 0 and left the rest unnamed, and extra
    # names were ignored: a miscounted list names the wrong classes without a word
    model = _tiny_model(tmp_path)  # output shape (4,)
    assert main(["run", model, "--labels", labels, "--json"]) == 2  # a usage error (issue 19)
    message = json.loads(capsys.readouterr().out)["error"]["message"]
    assert "--labels" in message and "4 classes" in message
    assert main(["run", model, "--labels", "a,b,c,d", "--json"]) == 0
    top = json.loads(capsys.readouterr().out)["outputs"][0]["top_k"]
    assert {t["label"] for t in top} <= {"a", "b", "c", "d"}
