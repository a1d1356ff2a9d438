"""The reproduction audit on MMStar: the same responses read from an lmms-eval ``mmstar`` sample log and a VLMEvalKit
``<model>_MMStar.xlsx``, re-scored under the official rule (``MMStar_eval``, the reference), its trace-removed form,
lmms-eval's ``exact_match`` and VLMEvalKit's ``can_infer``; lmms-eval's axis mean stated beside the pooled score.

Inputs are written in the peers' exact formats: lmms-eval rows (``doc_id``, ``doc`` with ``index``, ``question``,
``answer``, ``category``, ``l2_category``, ``resps``, and ``mmstar_process_results``' metric fields), VLMEvalKit rows
(``index, question, answer, category, l2_category, bench, prediction``, read through openpyxl). The MMStar
repository's own submission file is checked when ``MMBENCH_MMSTAR_SUBMIT`` names it.
"""
from __future__ import annotations

import json
import os

import pandas as pd
import pytest

from mmbench_lib.cli import main
from mmbench_lib.core.items import DataError
from mmbench_lib.pipeline import audit as A
from mmbench_lib.tasks import mmstar_audit as S

Q = "Which animal is shown?\nOptions: A: a cat, B: a dog, C: a red bus, D: a tree"
#: (index, capability, axis, gold, response, why)
CASES = [
    (1, "coarse perception", "image emotion", "B", "(B) a dog", "after '(' : right for every rule"),
    (2, "coarse perception", "image emotion", "C", "The answer is C.", "after 'the answer is ': right for every rule"),
    (3, "math", "geometry", "B", "I think it is B", "official reads 'i'; VLMEvalKit finds the lone B"),
    (4, "math", "geometry", "B", "b", "lower case: the official rule compares lower-cased; VLMEvalKit needs a capital"),
    (5, "math", "geometry", "D", "option d", "after 'option ': official only"),
    (6, "math", "geometry", "A", "", "empty: wrong under every rule"),
    (7, "math", "geometry", "C", "<think>(A) looks likely.</think>C", "a trace naming A first: right once removed"),
]
WANT = {  # rule -> the indices it scores right
    "official": {"1", "2", "4", "5"},
    "official, trace removed": {"1", "2", "4", "5", "7"},
    "lmms-eval": {"1", "2", "4", "5"},
    "vlmevalkit": {"1", "2", "3"},
}


def lmms_rows(cases=CASES):
    out = []
    for n, (idx, cap, axis, gold, resp, _why) in enumerate(cases):
        score = float(S.lmms_eval_hit(resp, gold))
        doc = {"index": idx, "question": Q, "answer": gold, "category": cap, "l2_category": axis, "meta_info": {}}
        v = {"question_id": idx, "l2_category": axis, "score": score}
        out.append({"doc_id": n, "doc": doc, "target": gold, "arguments": [], "resps": [[resp]],
                    "filtered_resps": [resp], cap: v, "average": dict(v)})
    return out


def vlm_rows(cases=CASES):
    return [{"index": idx, "question": Q, "answer": gold, "category": cap, "l2_category": axis, "bench": "MMBench",
             "prediction": resp} for idx, cap, axis, gold, resp, _why in cases]


@pytest.fixture
def files(tmp_path):
    lmms = tmp_path / "samples_mmstar_2026-11-29.jsonl"
    lmms.write_text("".join(json.dumps(r) + "\n" for r in lmms_rows()))
    xlsx = tmp_path / "model_MMStar.xlsx"
    pd.DataFrame(vlm_rows()).to_excel(xlsx, index=False)
    return lmms, xlsx


def _right(result, n, rule):
    s = result["files"][n]["scores"]
    return set(s.loc[s[rule], "id"])


def test_worked_examples_under_each_rule_in_both_formats(files):
    result = A.audit(list(files), "mmstar")
    for n in (0, 1):
        for rule, want in WANT.items():
            assert _right(result, n, rule) == want, (n, rule)
    assert result["files"][0]["own"] == "file's own" and _right(result, 0, "file's own") == WANT["lmms-eval"]
    assert [f["format"] for f in result["files"]] == ["lmms-eval", "vlmevalkit"]


def test_the_official_and_lmms_eval_comparisons_agree_on_every_gold_letter():
    for resp in ("a", "(b)", "option c", "the answer is d", "D.", "(", "option ", "the answer is", "", "(E)", "x"):
        for gold in "ABCD":
            assert S.official_hit(resp, gold) == S.lmms_eval_hit(resp, gold), (resp, gold)


def test_lmms_eval_averages_the_axes_the_official_script_pools_questions(files):
    result = A.audit([files[0]], "mmstar")
    # image emotion 2/2 right, geometry 2/5 right: axis mean (100 + 40) / 2 = 70; pooled 4/7 = 57.14
    assert S.axis_mean([{"l2_category": c[2]} for c in CASES], [str(c[0]) in WANT["lmms-eval"] for c in CASES]) == 70.0
    note = next(n for n in result["notes"] if "axes' accuracies" in n)
    assert "70.00%" in note and "57.14%" in note and "+12.86 points from aggregation alone" in note


def test_the_printed_answer_has_no_nan(files, capsys):
    assert main(["audit", str(files[1]), "--benchmark", "mmstar", "--reported", "57.1"]) == 0
    out = capsys.readouterr().out
    assert "\nanswer:\n" in out and "nan" not in out.lower()


def test_a_wrong_file_is_one_line(files, tmp_path, capsys):
    assert main(["audit", str(files[0]), "--benchmark", "mmb"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "its name says a file of mmstar, not mmb" in err
    no_axis = tmp_path / "model_MMStar_noaxis.xlsx"
    pd.DataFrame(vlm_rows()).drop(columns="l2_category").to_excel(no_axis, index=False)
    with pytest.raises(DataError, match="needs columns question, prediction, answer, category, l2_category and index"):
        A.read_items(no_axis, "mmstar")
    seed_log = tmp_path / "samples_mmstar_other.jsonl"
    seed_log.write_text(json.dumps({"doc_id": 0, "doc": {"question_id": "1", "answer": "A"}, "resps": [["A"]]}) + "\n")
    with pytest.raises(DataError, match="its doc has no index / l2_category: not a sample log of lmms-eval's mmstar"):
        A.read_items(seed_log, "mmstar")
    bad_cat = tmp_path / "samples_mmstar_badcat.jsonl"
    rows = lmms_rows()[:1]
    rows[0]["doc"]["category"] = "image"
    bad_cat.write_text(json.dumps(rows[0]) + "\n")
    with pytest.raises(DataError, match="category 'image' is not one of mmstar's"):
        A.read_items(bad_cat, "mmstar")


SUBMIT = os.environ.get("MMBENCH_MMSTAR_SUBMIT")


@pytest.mark.skipif(not SUBMIT, reason="MMBENCH_MMSTAR_SUBMIT names no copy of eval/submits/llava_next_yi_34b_MMStar.xlsx "
                                       "(MMStar-Benchmark/MMStar 88f243a)")
def test_the_repository_submission_file():
    result = A.audit([SUBMIT], "mmstar", reported=52.1)
    table = result["files"][0]["table"].set_index("rule set")
    assert table.loc["official", "correct"] == 781 and table.loc["lmms-eval", "correct"] == 781
    assert any("52.72%" in n and "52.07%" in n for n in result["notes"])
