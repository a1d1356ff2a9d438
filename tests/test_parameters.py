"""``mmbench run`` checks parameters before anything runs; bad CLI input is one line, never a traceback.

Each case runs the real CLI in a subprocess and asserts: non-zero exit, exactly one line on
stderr naming the culprit, and no run folder (so no executed notebook, no kernel, no model).
"""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SEED_NB = "notebooks/10_seed_bench.ipynb"


def cli(tmp_path, *args):
    outputs = tmp_path / "outputs"
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MMBENCH_OUTPUTS": str(outputs), "HF_HUB_OFFLINE": "1"}
    proc = subprocess.run([sys.executable, "-m", "mmbench_lib.cli", *args], cwd=ROOT, env=env,
                          capture_output=True, text=True, timeout=300)
    return proc, outputs


def assert_one_line_error(proc, outputs, *needles):
    lines = proc.stderr.strip().splitlines()
    assert proc.returncode != 0 and len(lines) == 1, proc.stderr
    assert "Traceback" not in proc.stderr and lines[0].startswith("mmbench: error:")
    for needle in needles:
        assert needle in lines[0], lines[0]
    assert not outputs.exists() or not any(outputs.rglob("*.ipynb")), "a notebook was executed"


@pytest.mark.parametrize("name,value,needle", [
    ("batch_size", "eight", "expected int"),
    ("batch_size", "0", "must be >= 1"),
    ("limit", "-3", "must be >= 0"),
    ("reduction", "median", "must be one of ['mean', 'sum']"),
    ("scorer", "fast", "must be one of"),
    ("recipe", "no-such-recipe", "must be one of"),
    ("video_input", "clip", "must be one of ['frames', 'native']"),
    ("num_shards", "0", "must be >= 1"),
    ("shard_index", "2", "shard_index (2) < num_shards (1)"),
    ("image_root", "/no/such/folder", "no such file or folder"),
    ("merge_shards", "maybe", "expected bool"),
    ("no_such_param", "1", "has no parameter(s) ['no_such_param']"),
])
def test_bad_parameter_is_refused_before_the_kernel_starts(tmp_path, name, value, needle):
    proc, outputs = cli(tmp_path, "run", SEED_NB, "-p", name, value)
    assert_one_line_error(proc, outputs, name, needle)


def test_bad_parameters_file_in_a_file(tmp_path):
    f = tmp_path / "p.yaml"
    f.write_text("limit: 2\nbatch_size: eight\n", encoding="utf-8")
    proc, outputs = cli(tmp_path, "run", SEED_NB, "-f", str(f))
    assert_one_line_error(proc, outputs, "batch_size='eight'", "expected int")


def test_malformed_yaml_names_file_and_line(tmp_path):
    f = tmp_path / "broken.yaml"
    f.write_text("limit: 2\nbatch_size: [1, 2\nseed: 0\n", encoding="utf-8")
    proc, outputs = cli(tmp_path, "run", SEED_NB, "-f", str(f))
    assert_one_line_error(proc, outputs, str(f), "line ", "not valid YAML")


def test_malformed_yaml_override(tmp_path):
    proc, outputs = cli(tmp_path, "run", SEED_NB, "-p", "dimensions", "[1, 2")
    assert_one_line_error(proc, outputs, "-p dimensions", "not valid YAML")


def test_non_utf8_parameters_file_names_file_and_line(tmp_path):
    f = tmp_path / "latin1.yaml"
    f.write_bytes("limit: 2\nmodel: caf\u00e9\n".encode("latin-1"))
    proc, outputs = cli(tmp_path, "run", SEED_NB, "-f", str(f))
    assert_one_line_error(proc, outputs, str(f), "line 2", "not UTF-8")


def test_missing_parameters_file(tmp_path):
    proc, outputs = cli(tmp_path, "run", SEED_NB, "-f", str(tmp_path / "nope.yaml"))
    assert_one_line_error(proc, outputs, "nope.yaml", "not found")


def test_valid_shipped_parameters_pass_the_checks():
    """Every demo parameters file passes (the checks refuse nothing the suite ships for the demo)."""
    import papermill as pm

    from mmbench_lib.runner import check_params, read_params

    for f in sorted(ROOT.glob("params/*/*demo*.yaml")):
        nb = ROOT / "notebooks" / f"{f.parent.name}.ipynb"
        check_params(nb.name, read_params([str(f)]), pm.inspect_notebook(str(nb)))
    nb = str(ROOT / SEED_NB)
    check_params("nb", {"dimensions": [1, 2], "limit": None, "shard_index": 1, "num_shards": 2}, pm.inspect_notebook(nb))


@pytest.mark.parametrize("content,needles", [
    (b'{"question_id": "1", "prediction": "A"}\n[1, 2]\n', ["results.jsonl", "line 2 is not a JSON object"]),
    (b'{"question_id": "1", "prediction": "A"}\n{"question_id": "2"}\n', ["line 2", "'prediction'", "field missing"]),
    (b'{"question_id": "1", "prediction": "A"}\nnot json\n', ["line 2 is not a JSON object"]),
    (b'{"question_id": "1", "prediction": "\xe9"}\n', ["results.jsonl", "line 1", "not UTF-8"]),
])
def test_score_predictions_bad_input_is_one_line(tmp_path, content, needles):
    f = tmp_path / "results.jsonl"
    f.write_bytes(content)
    proc, outputs = cli(tmp_path, "score-predictions", "--benchmark", "seed2", "--predictions", str(f))
    assert_one_line_error(proc, outputs, *needles)


@pytest.mark.parametrize("content,needles", [
    (b'{"questions": [{"question_id": "1", "answer": "A"}]}', ["questions.json", "'question_type_id'", "field missing"]),
    (b'{"questions": [{"question_id": "1", "answer": "A", "question_type_id": "x"}]}', ["not an integer"]),
    (b'[1, 2]', ["questions.json", "'questions'"]),
    (b'{"questions": \xff}', ["questions.json", "not UTF-8"]),
])
def test_score_predictions_bad_questions_file_is_one_line(tmp_path, content, needles):
    (tmp_path / "results.jsonl").write_text('{"question_id": "1", "prediction": "A"}\n', encoding="utf-8")
    (tmp_path / "questions.json").write_bytes(content)
    proc, outputs = cli(tmp_path, "score-predictions", "--benchmark", "seed", "--predictions",
                        str(tmp_path / "results.jsonl"), "--questions", str(tmp_path / "questions.json"))
    assert_one_line_error(proc, outputs, *needles)


@pytest.mark.parametrize("content,needles", [
    (b'{"id": "1", "response": "A"}\n\xff\n', ["resp.jsonl", "line 2", "not UTF-8"]),
    (b'{"id": "1", "response": "A"}\n5\n', ["resp.jsonl", "line 2", "'id'"]),
    (b'{"id": "1", "response": "A"}\n{"id": \n', ["resp.jsonl", "line 2 is not valid JSON"]),
])
def test_score_responses_bad_input_is_one_line(tmp_path, content, needles):
    (tmp_path / "resp.jsonl").write_bytes(content)
    (tmp_path / "gold.jsonl").write_text('{"id": "1", "type": "选择", "answer": "A"}\n', encoding="utf-8")
    proc, outputs = cli(tmp_path, "score-responses", "--benchmark", "cmmmu", "--responses", str(tmp_path / "resp.jsonl"),
                        "--answers", str(tmp_path / "gold.jsonl"), "--out", str(tmp_path / "out"))
    assert_one_line_error(proc, outputs, *needles)


def test_score_responses_mmmu_not_utf8(tmp_path):
    (tmp_path / "resp" / "Art").mkdir(parents=True)
    (tmp_path / "resp" / "Art" / "output.json").write_bytes(b'[{"id": "validation_Art_1", "response": "\xff"}]')
    proc, outputs = cli(tmp_path, "score-responses", "--benchmark", "mmmu", "--responses", str(tmp_path / "resp"),
                        "--out", str(tmp_path / "out"))
    assert_one_line_error(proc, outputs, "output.json", "line 1", "not UTF-8")


def test_shipped_demo_parameters_pass_the_value_checks():
    """The value checks (model specs, splits, subjects, dimensions, ...) refuse nothing the suite ships
    for the demo, and the ast reading of the parameters cell agrees with papermill's."""
    import papermill as pm

    from mmbench_lib.runner import check_param_values, notebook_parameters, read_params

    for nb in sorted(ROOT.glob("notebooks/*.ipynb")):
        ours, theirs = notebook_parameters(nb), pm.inspect_notebook(str(nb))
        assert {k: v["default"] for k, v in ours.items()} == {k: v["default"] for k, v in theirs.items()}, nb.name
    for f in sorted(ROOT.glob("params/*/*demo*.yaml")):
        nb = ROOT / "notebooks" / f"{f.parent.name}.ipynb"
        check_param_values(nb.name, read_params([str(f)]), notebook_parameters(nb))
