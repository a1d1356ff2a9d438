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


def test_seed2_gold_with_whitespace_scored_as_the_leaderboard_and_counted(tmp_path, capsys):
    """The published GPT-4V v2 file's quirk: gold "A " (trailing space), comma-terminated lines, a
    repeated id. The leaderboard compared the gold as written (docs/protocols.md §2.5: dim 12 45.3),
    so "A " never equals "A"; each normalisation is counted."""
    res = tmp_path / "results.json"
    res.write_text('{"question_id": "12_0", "prediction": "A", "gt_answer": "A "},\n'
                   '{"question_id": "12_1", "prediction": "B", "gt_answer": " C"},\n'
                   '{"question_id": "12_2", "prediction": "D", "gt_answer": "D"},\n'
                   '{"question_id": "12_2", "prediction": "D", "gt_answer": "D"},\n')
    s = score_predictions("seed2", res)
    assert {d["dimension_id"]: d["accuracy"] for d in s["per_dimension"]}[12] == pytest.approx(1 / 3)
    norm = s["input"]["normalisations"]
    assert norm["gold_with_whitespace"] == 2 and norm["gold_with_whitespace_matching_if_stripped"] == 1
    assert norm["comma_terminated_lines"] == 4 and norm["duplicate_lines_last_kept"] == 1
    assert main(["score-predictions", "--benchmark", "seed2", "--predictions", str(res)]) == 0
    out = capsys.readouterr().out
    assert "gold with whitespace 2" in out and "comma terminated lines 4" in out


def test_seed2_gold_that_is_no_letter_even_stripped_is_one_line(tmp_path, capsys):
    res = tmp_path / "results.json"
    res.write_text('{"question_id": "12_0", "prediction": "A", "gt_answer": "A B"}\n')
    assert main(["score-predictions", "--benchmark", "seed2", "--predictions", str(res)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "item '12_0', field 'gt_answer'" in err[0] and "'A B' is not one of" in err[0]


def test_seed2_without_gt_answer_nor_questions_is_one_line_exit_2(tmp_path, capsys):
    """Nothing scorable is no table of zero rows: one line, exit 2, before any output is written."""
    res = tmp_path / "results.json"
    res.write_text('{"question_id": "1_0", "prediction": "A"}\n{"question_id": "2_0", "prediction": "B"}\n')
    assert main(["score-predictions", "--benchmark", "seed2", "--predictions", str(res),
                 "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no prediction could be scored" in err[0] and "--questions" in err[0]
    assert not (tmp_path / "out").exists()
