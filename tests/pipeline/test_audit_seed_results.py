"""The reproduction audit on SEED-Bench's official prediction files: ``results.json`` as SEED-Bench's ``eval.py``
appends it (one ``{"question_id", "prediction"}`` line per question, AILab-CVC/SEED-Bench 991e849 ``eval.py`` and
``SEED-Bench-2/eval.py`` ``run_inference``) and the published leaderboard files, which add ``gt_answer`` and end
each line with a comma (``evaluate_result/SEED-Bench-2/GPT-4V.json``). The reference rule on a predicted letter
gives, item by item, what ``score-predictions`` gives (``pred == gt``, the gold as written). The published file is
checked when ``MMBENCH_SEED2_GPT4V`` names it.
"""
from __future__ import annotations

import json
import re
import os
import warnings

import pytest

from mmbench_lib.cli import main
from mmbench_lib.core.items import DataError
from mmbench_lib.pipeline import audit as A
from mmbench_lib.pipeline import rescore_seed
from mmbench_lib.tasks import seed_audit as S
from mmbench_lib.tasks.audits import audit_rules


def official_verdicts(monkeypatch, *args) -> dict[str, bool]:
    """``score_predictions``' own per-item verdicts (its rows, caught on their way to ``summarize``)."""
    caught = {}

    def spy(rows, *a, **kw):
        caught.update({r["id"]: r["correct"] for r in rows})
        return real(rows, *a, **kw)

    real = rescore_seed.summarize
    monkeypatch.setattr(rescore_seed, "summarize", spy)
    rescore_seed.score_predictions(*args)
    return caught


def audit_verdicts(path, bench, gold=None):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        df = A.audit([path], bench, gold=gold)["files"][0]["scores"].set_index("id")
    return df


#: a leaderboard file (SEED-Bench-2), its quirks as published: comma-terminated lines, gold "A " with a trailing
#: space (never equal to a letter, as the leaderboard scored it), a blank line, an appended rerun of one id
LEADERBOARD = "\n".join([
    '{"question_id": "1_0", "prediction": "A", "gt_answer": "A"},',
    '{"question_id": "1_1", "prediction": "B", "gt_answer": "C"},',
    '{"question_id": "12_0", "prediction": "A", "gt_answer": "A "},',  # right once stripped: wrong as scored
    '{"question_id": "12_1", "prediction": "B", "gt_answer": " C"},',
    '',
    '{"question_id": "12_2", "prediction": " D", "gt_answer": "D"},',  # a letter with a space: stripped, right
    '{"question_id": "19_0", "prediction": "b", "gt_answer": "B"},',  # lower case: wrong for both
    '{"question_id": "19_1", "prediction": "E", "gt_answer": "D"},',
    '{"question_id": "19_2", "prediction": "", "gt_answer": "D"},',
    '{"question_id": "1_1", "prediction": "C", "gt_answer": "C"},',  # appended rerun: the last line wins
    '{"question_id": "23_0", "prediction": "D", "gt_answer": "D"},',
]) + "\n"


def test_leaderboard_file_per_item_as_score_predictions(tmp_path, monkeypatch):
    res = tmp_path / "GPT-4V.json"
    res.write_text(LEADERBOARD)
    assert A.detect(res, "seed2") == "official-folders"
    df = audit_verdicts(res, "seed2")
    official = official_verdicts(monkeypatch, "seed2", res)
    assert df[S.REFERENCE].to_dict() == official
    assert {i for i, v in official.items() if v} == {"1_0", "1_1", "12_2", "23_0"}
    assert df.loc["1_1", "response"] == "C"  # last wins
    items, report = audit_rules("seed2").read_results_file(res)
    assert {it["id"]: it["answer"] for it in items}["12_0"] == "A "  # kept as written
    norm = report["normalisations"]
    assert (norm["comma_terminated_lines"], norm["blank_lines"], norm["gold_with_whitespace"],
            norm["gold_with_whitespace_matching_if_stripped"], norm["duplicate_lines_last_kept"],
            norm["predictions_stripped"]) == (10, 1, 2, 1, 1, 1)
    assert {it["id"]: it["category"] for it in items}["19_0"] == "Video"  # the dimension from the <dim>_<k> id
    notes = []  # the reader's counted tolerances: one note line each (printed by the audit)
    A.read_items(res, "seed2", notes=notes)
    assert any(re.search("gold_with_whitespace 2, .*duplicate_lines_last_kept 1", n) for n in notes), notes


def test_eval_py_results_with_the_questions_json_as_gold(demo, tmp_path, monkeypatch, capsys):
    """SEED-Bench v1 ``results.json`` (no gold in it) audited with ``--gold SEED-Bench.json``: the answers and
    options come from the questions; the items are those score-predictions scores with ``--questions``."""
    ann = demo["seed"]["annotation_file"]
    qs = json.load(open(ann))["questions"]
    preds = ["A", "B", "C", "D", " B", "c"]
    lines = [json.dumps({"question_id": q["question_id"], "prediction": preds[i % len(preds)]}) for i, q in enumerate(qs)]
    lines.append(json.dumps({"question_id": "no-such-question", "prediction": "A"}))  # left out, as score-predictions does
    res = tmp_path / "results.json"
    res.write_text("\n".join(lines) + "\n")  # eval.py: json.dumps(answer_record) + "\n", appended
    df = audit_verdicts(res, "seed", gold=ann)
    official = official_verdicts(monkeypatch, "seed", res, ann)
    assert len(official) == len(qs) and df[S.REFERENCE].to_dict() == official
    items = A.read_items(res, "seed", A.read_items(ann, "seed")[0])[0]
    assert all(len(it["index2ans"]) == 4 and it["category"] for it in items)  # options and category from the JSON
    assert main(["audit", str(res), "--benchmark", "seed", "--gold", ann]) == 0
    assert f"(official-folders, {len(qs)} items)" in capsys.readouterr().out


def test_refusals_are_one_line(tmp_path, capsys):
    res = tmp_path / "results.json"
    res.write_text('{"question_id": "101669", "prediction": "A"}\n')
    assert main(["audit", str(res), "--benchmark", "seed"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "no prediction could be scored" in err and "--gold" in err
    res.write_text('{"question_id": "1_0", "prediction": "A", "gt_answer": "A"},\n{"question_id": "1_1"},\n')
    with pytest.raises(DataError, match="results.json, field 'prediction': line 2: field missing"):
        A.read_items(res, "seed2")
    res.write_text('{"question_id": "1_0", "prediction": "A", "gt_answer": "A B"}\n')
    with pytest.raises(DataError, match="item '1_0', field 'gt_answer': line 1: gold answer 'A B' is not one of"):
        A.read_items(res, "seed2")
    res.write_text('{"question_id": "1_0", "prediction": 3, "gt_answer": "A"}\n')
    with pytest.raises(DataError, match="line 1: expected the predicted letter as a string"):
        A.read_items(res, "seed2")


def test_paired_with_an_lmms_eval_log_by_question_id(tmp_path):
    """The same letters as a results.json and as an lmms-eval sample log pair by question id, and agree."""
    from tests.pipeline.test_audit_seed import lmms_rows

    cases = [("101669", "B", "B", ""), ("101670", "C", "A", ""), ("101671", "D", "D", "")]
    log = tmp_path / "samples_seedbench_x.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in lmms_rows("seed", cases)))
    res = tmp_path / "results.json"
    res.write_text("".join(json.dumps({"question_id": q, "prediction": p, "gt_answer": a}) + ",\n"
                           for q, a, p, _ in cases))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        result = A.audit([res, log], "seed")
    across = result["across"].iloc[0]
    assert across["n"] == 3 and across["difference"] == 0


REAL = os.environ.get("MMBENCH_SEED2_GPT4V", "")


@pytest.mark.skipif(not REAL, reason="set MMBENCH_SEED2_GPT4V to evaluate_result/SEED-Bench-2/GPT-4V.json of "
                                     "AILab-CVC/SEED-Bench")
def test_real_published_seed2_gpt4v(monkeypatch):
    df = audit_verdicts(REAL, "seed2")
    official = official_verdicts(monkeypatch, "seed2", REAL)
    assert df[S.REFERENCE].to_dict() == official
    assert len(df) == 23184 and int(df[S.REFERENCE].sum()) == 15734  # 67.87%, score-predictions' L2
    _items, report = audit_rules("seed2").read_results_file(REAL)
    assert report["normalisations"]["gold_with_whitespace"] == 19 and report["duplicate_lines"] == 8
