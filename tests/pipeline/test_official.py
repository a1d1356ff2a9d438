"""Rescoring official SEED result files: trailing commas, repeated ids, joins to the JSON."""
import json

import pytest

from mmbench_lib.cli import main
from mmbench_lib.pipeline.rescore_seed import read_results, score_predictions


def _write_results(path, questions, wrong=(), dup=(), trailing_commas=True):
    lines = []
    for q in questions:
        pred = q["answer"] if q["question_id"] not in wrong else ("A" if q["answer"] != "A" else "B")
        lines.append(json.dumps({"question_id": q["question_id"], "prediction": pred}) + ("," if trailing_commas else ""))
    for qid in dup:  # an appended rerun: the same id again, last line wins
        lines.append(json.dumps({"question_id": qid, "prediction": "Z"}))
    path.write_text("\n".join(lines) + "\n")


def test_seed1_results_join_the_json_and_count_duplicates_once(demo, tmp_path):
    qs = json.load(open(demo["seed"]["annotation_file"]))["questions"]
    wrong = {qs[0]["question_id"], qs[5]["question_id"]}
    res = tmp_path / "results.json"
    _write_results(res, qs, wrong=wrong, dup=[qs[1]["question_id"]])
    s = score_predictions("seed", res, demo["seed"]["annotation_file"])
    assert s["input"]["predictions"] == len(qs)
    assert s["input"]["duplicate_lines"] == 1 and s["input"]["conflicting_duplicates"] == [qs[1]["question_id"]]
    groups = {g["group"]: g for g in s["groups"]}
    n_correct = len(qs) - 3  # two wrong + the duplicate whose last prediction "Z" is wrong
    assert groups["All"]["n"] == len(qs)
    assert groups["All"]["accuracy_micro"] == pytest.approx(n_correct / len(qs))


def test_seed2_without_questions_uses_ids_and_gt_answer(tmp_path):
    res = tmp_path / "results.json"
    res.write_text('{"question_id": "1_0", "prediction": "A", "gt_answer": "A"},\n'
                   '{"question_id": "1_1", "prediction": "B", "gt_answer": "C"},\n'
                   '{"question_id": "23_0", "prediction": "D", "gt_answer": "D"},\n')
    s = score_predictions("seed2", res)
    dims = {d["dimension_id"]: d for d in s["per_dimension"]}
    assert dims[1]["accuracy"] == 0.5 and dims[23]["accuracy"] == 1.0
    groups = {g["group"]: g for g in s["groups"]}
    assert groups["L2"]["accuracy_micro"] == pytest.approx(2 / 3)
    assert groups["L2"]["accuracy_dim_mean"] == pytest.approx(0.75)
    assert groups["L2"]["complete"] is False and 2 in groups["L2"]["missing_dimensions"]


def test_cli_writes_summary(demo, tmp_path, capsys):
    qs = json.load(open(demo["seed2"]["annotation_file"]))["questions"]
    res = tmp_path / "results.json"
    _write_results(res, qs, trailing_commas=False)
    assert main(["score-predictions", "--benchmark", "seed2", "--predictions", str(res),
                 "--questions", demo["seed2"]["annotation_file"], "--out", str(tmp_path / "out")]) == 0
    summary = json.load(open(tmp_path / "out" / "summary.json"))
    assert {g["group"]: g["accuracy_micro"] for g in summary["groups"]}["L3"] == 1.0
    assert "Difference Spotting" in capsys.readouterr().out


def test_malformed_line_names_file_and_line(tmp_path):
    res = tmp_path / "results.json"
    res.write_text('{"question_id": "1", "prediction": "A"}\n{"question_id": \n')
    with pytest.raises(Exception, match=r"results.json: line 2"):
        read_results(res)
    res.write_text('{"question_id": "1"}\n')
    with pytest.raises(Exception, match=r"field 'prediction'"):
        read_results(res)
