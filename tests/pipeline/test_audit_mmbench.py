"""The reproduction audit on MMBench (task ``mmb``): a VLMEvalKit ``<model>_MMBench_DEV_EN.xlsx`` and an lmms-eval
``mmbench_en_dev`` sample log, one row per circular pass, grouped into questions by ``index % 1e6``; the official
rule (VLMEvalKit CircularEval, exact matching: ``can_infer`` per pass, right only if every pass is right) is the
reference; a single pass, lmms-eval's own ``can_infer`` copy and the trace-removed rule beside it; questions left
to the (absent) judge are counted.

The passes are the demo's ``MMBench_DEV_EN.tsv`` rows (VLMEvalKit's layout with its circular copies), the image
column dropped and a ``prediction`` column added, as VLMEvalKit writes its prediction file.
"""
from __future__ import annotations

import json

import pandas as pd
import pytest

from mmbench_lib.cli import main
from mmbench_lib.core.items import DataError
from mmbench_lib.demo import mmbench as demo_mmb
from mmbench_lib.pipeline import audit as A
from mmbench_lib.tasks import mmbench_audit as M


def _wrong(row) -> str:
    return next(L for L in "ABCD" if L != row["answer"] and isinstance(row[L], str))


#: question (group) -> (what each pass answers, why); the other questions answer every pass right
CASES = {
    1: (lambda row, k: _wrong(row) if k == 1 else row["answer"], "the second pass wrong: circular wrong, one pass right"),
    2: (lambda row, k: "I am not sure." if k == 2 else row["answer"], "one pass matched to no option: undecided, wrong "
                                                                       "without a judge"),
    3: (lambda row, k: f"The answer is {row['answer']}", "lmms-eval's copy gives up on 'A' among more than three "
                                                        "tokens (a quantifier); VLMEvalKit reads the last letter"),
    4: (lambda row, k: f"<think>({_wrong(row)}) looks likely.</think>{row['answer']}", "a trace naming a wrong "
                                                                                       "option first"),
}


@pytest.fixture(scope="module")
def passes(tmp_path_factory):
    tsv = demo_mmb.make_mmbench_demo(tmp_path_factory.mktemp("mmb"))["annotation_file"]
    df = pd.read_csv(tsv, sep="\t").drop(columns="image")
    preds = []
    for _, row in df.iterrows():
        group, k = row["index"] % 1_000_000, row["index"] // 1_000_000
        preds.append(CASES[group][0](row, k) if group in CASES else row["answer"])
    df["prediction"] = preds
    return df


@pytest.fixture
def files(passes, tmp_path):
    xlsx = tmp_path / "model_MMBench_DEV_EN.xlsx"
    passes.to_excel(xlsx, index=False)
    items, _ = A.read_items(xlsx, "mmb")
    log = tmp_path / "samples_mmbench_en_dev_2026-11-29.jsonl"
    log.write_text("".join(json.dumps(r) + "\n" for r in M.lmms_eval_rows(items)))
    return xlsx, log


def _right(result, n, rule):
    s = result["files"][n]["scores"]
    return set(s.loc[s[rule], "id"])


def test_circular_rows_are_grouped_into_questions(files, passes):
    items, fmt = A.read_items(files[0], "mmb")
    assert fmt == "vlmevalkit" and len(items) == passes["index"].mod(1_000_000).nunique() == 22
    q0 = next(it for it in items if it["id"] == "0")
    assert [p["index"] for p in q0["passes"]] == [0, 1_000_000, 2_000_000] and q0["answer"] == "A"
    assert [p["answer"] for p in q0["passes"]] == ["A", "B", "C"]


def test_worked_examples_under_each_rule_in_both_formats(files):
    result = A.audit(list(files), "mmb")
    every = {str(i) for i in range(22)}
    want = {"official": every - {"1", "2", "4"}, "official, trace removed": every - {"1", "2"},
            "one pass (main row)": every - {"4"}, "lmms-eval": every - {"1", "2", "3", "4"}}
    for n in (0, 1):
        for rule, ids in want.items():
            assert _right(result, n, rule) == ids, (n, rule)
    assert result["files"][0]["own"] == "official"
    note = next(x for x in result["notes"] if "circular passes" in x and "model_MMBench" in x)
    assert "22 questions in 79 circular passes; 1 questions have no wrong pass" in note and "['2']" in note


def test_a_repeated_row_is_one_pass_counted_in_a_note(passes, tmp_path):
    twice = tmp_path / "model_MMBench_DEV_EN.tsv"
    pd.concat([passes, passes.iloc[[1]].assign(prediction="D")]).to_csv(twice, sep="\t", index=False)
    result = A.audit([twice], "mmb")
    q0 = next(it for it in A.read_items(twice, "mmb")[0] if it["id"] == "0")
    assert [p["response"] for p in q0["passes"]] == ["A", "B", "C"]  # the first row of index 1000000 kept
    assert any("1 repeated rows (the same index) counted once" in n for n in result["notes"])


def test_lmms_eval_can_infer_copy():
    opts = {"A": "a cat", "B": "a dog", "C": "a red bus", "D": "a tree"}
    assert M.lmms_eval_infer("The answer is B", opts) == "B"
    assert M.lmms_eval_infer("The answer is A", opts) is None  # "A" among more than three tokens: a quantifier
    assert M.lmms_eval_infer("(C) a red bus", opts) == "C"
    assert M.lmms_eval_infer("I see a tree there", opts) == "D"  # the one option text
    assert M.lmms_eval_infer("A: yes, B.", opts) == "B"  # the forms in their order: "X." comes before "X:"
    assert M.lmms_eval_infer("A. or B.", opts) is None  # two letters in one form, none in the others


def test_the_printed_answer_has_no_nan(files, capsys):
    assert main(["audit", str(files[0]), "--benchmark", "mmb", "--reported", "80"]) == 0
    out = capsys.readouterr().out
    assert "\nanswer:\n" in out and "nan" not in out.lower()


def test_a_wrong_file_is_one_line(passes, tmp_path, capsys):
    other = tmp_path / "model_MMStar.xlsx"
    passes.to_excel(other, index=False)
    assert main(["audit", str(other), "--benchmark", "mmb"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "its name says a file of mmstar, not mmb" in err
    no_pred = tmp_path / "model_MMBench_DEV_EN.tsv"
    passes.drop(columns="prediction").to_csv(no_pred, sep="\t", index=False)
    with pytest.raises(DataError, match="needs columns A, B, prediction, answer and index"):
        A.read_items(no_pred, "mmb")
    bad = tmp_path / "model_MMBench_DEV_EN_bad.tsv"
    passes.assign(index=["x"] + list(passes["index"][1:])).to_csv(bad, sep="\t", index=False)
    with pytest.raises(DataError, match="line 1: cannot read the item .index 'x' is not a whole number"):
        A.read_items(bad, "mmb")


def test_a_plain_file_with_the_data_copy_as_gold_is_one_pass_per_question(tmp_path):
    tsv = demo_mmb.make_mmbench_demo(tmp_path / "mmb")["annotation_file"]
    plain = tmp_path / "responses.jsonl"
    plain.write_text("".join(json.dumps({"id": str(i), "response": "A"}) + "\n" for i in range(22)))
    result = A.audit([plain], "mmb", gold=tsv)
    s = result["files"][0]["scores"]
    gold = pd.read_csv(tsv, sep="\t").query("index < 1000000")
    assert set(s.loc[s["official"], "id"]) == {str(i) for i in gold.loc[gold["answer"] == "A", "index"]}
    assert "22 questions in 22 circular passes" in result["notes"][-1]
