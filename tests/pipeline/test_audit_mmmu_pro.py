"""The reproduction audit on MMMU-Pro: official output files (``<model>_<setting>_<method>.jsonl``, as the
MMMU repository's ``mmmu-pro/output/`` and this suite's runs write them), lmms-eval ``mmmu_pro_*`` sample logs
(``doc_id``, ``doc``, ``arguments``, ``resps``, ``filtered_resps``, ``mmmu_acc``) and VLMEvalKit
``MMMU_Pro_10c`` / ``MMMU_Pro_V`` prediction files (``index``, ``question``, letter columns, ``answer``,
``prediction``). The real files (``mmmu-pro/output`` of MMMU-Benchmark/MMMU, GPT-4o, four settings) are
checked when ``MMBENCH_MMMU_PRO_OUTPUTS`` names that folder.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pandas as pd
import pytest

from mmbench_lib.cli import main
from mmbench_lib.core.items import DataError
from mmbench_lib.pipeline import audit as A
from mmbench_lib.tasks import mmmu_pro as mp
from mmbench_lib.tasks import mmmu_pro_audit as P

OPTS = ["RIVER", "HOUSE", "CLOUD", "TIGER", "SUGAR", "MUSIC", "PIANO", "TRAIN", "LEMON", "APPLE"]
#: (id, answer, response): each response one worked example (see the test of the rules)
ROWS = [
    ("test_Art_1", "B", "The options (A) and (C) are wrong.\nAnswer: B"),  # official: Answer: rule; lmms-eval: (C)
    ("test_Art_2", "C", "I think it's B, not C."),  # official "C " pass; VLMEvalKit: B, C and I (pronoun) -> none
    ("test_History_1", "B", "Step 1: the river is wide.\nAnswer: $B"),  # VLMEvalKit CoT: after PR#1591 only
    ("test_History_2", "B", "Answer: C\nWait, let me recheck.\nAnswer: B"),  # two Answer lines: after PR#1591 only
    ("test_Math_1", "B", "B"),
    ("test_Math_2", "D", "the sky is blue today"),  # nothing found: the seeded fallback draws
    ("test_Physics_1", "E", "<think>My first guess is (A) RIVER. Let me check that again.</think>E"),
]


def official_rows(rows=ROWS, question=True, extra=None):
    out = []
    for qid, answer, response in rows:
        rec = {"id": qid, **({"question": f"Which word is written in <image 1>? ({qid})"} if question else {}),
               "options": str(OPTS), "answer": answer, "subject": qid.split("_")[1], "response": response,
               **(extra or {})}
        out.append(rec)
    return out


def write_jsonl(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def write_formats(root: Path, setting="standard(10 options)", vlm="MMMU_Pro_10c", task="mmmu_pro_standard"):
    """The same responses as an official file, an lmms-eval sample log and a VLMEvalKit file."""
    official = write_jsonl(root / f"model_{setting}_direct.jsonl", official_rows(question=setting != "vision"))
    items, _ = A.read_items(official, "mmmu-pro")
    lmms = write_jsonl(root / f"samples_{task}_2026-01-01T00-00-00.jsonl", P.lmms_eval_rows(items))
    tsv = root / f"Model_{vlm}.tsv"
    pd.DataFrame(P.vlmevalkit_rows(items)).to_csv(tsv, sep="\t", index=False)  # as VLMEvalKit's dump() writes it
    return {"official": official, "lmms-eval": lmms, "vlmevalkit": tsv}


def _scores(path):
    return A.audit([path], "mmmu-pro")["files"][0]["scores"].set_index("id")


def test_official_rule_is_score_responses_per_item(tmp_path):
    files = write_formats(tmp_path)
    rows, summary = mp.score_responses(files["official"])
    scores = _scores(files["official"])
    assert {r["id"]: r["correct"] for r in rows} == scores["official"].to_dict()
    assert summary["counts"]["fallbacks"] == 1  # test_Math_2, drawn from random.Random(42) in both
    # a file evaluate.py has already run over carries pred_indexs (its own, unseeded, verdict): still read
    (tmp_path / "done").mkdir()
    done = write_jsonl(tmp_path / "done" / "model_standard(10 options)_direct.jsonl",
                       [{**r, "pred_indexs": "B", "if_right": r["answer"] == "B"} for r in official_rows()])
    s = _scores(done)
    assert s["official"].tolist() == scores["official"].tolist()
    assert s["file's own"].to_dict() == {qid: answer == "B" for qid, answer, _ in ROWS}


@pytest.mark.parametrize("setting,vlm,task", [("standard(10 options)", "MMMU_Pro_10c", "mmmu_pro_standard"),
                                              ("vision", "MMMU_Pro_V", "mmmu_pro_vision")])
def test_the_peers_formats_give_the_same_per_item_results(tmp_path, setting, vlm, task):
    files = write_formats(tmp_path, setting, vlm, task)
    result = A.audit([files["official"], files["lmms-eval"], files["vlmevalkit"]], "mmmu-pro")
    assert [f["format"] for f in result["files"]] == ["official-folders", "lmms-eval", "vlmevalkit"]
    base = result["files"][0]["scores"].set_index("id")
    for f in result["files"][1:]:
        other = f["scores"].set_index("id").loc[base.index]
        for rule in P.RULES:
            assert other[rule].tolist() == base[rule].tolist(), (f["path"], rule)
    assert (result["across"]["difference"] == 0).all()
    items = [A.read_items(files[k], "mmmu-pro")[0] for k in ("official", "lmms-eval", "vlmevalkit")]
    key = "vision" if setting == "vision" else "standard10"
    assert all((it["setting"], it["method"]) == (key, "direct") for its in items for it in its)
    lmms = result["files"][1]["scores"]
    assert (lmms["file's own"] == lmms["lmms-eval"]).all()  # the log's parsed_pred, by lmms-eval's rule


def test_worked_examples_per_rule(tmp_path):
    s = _scores(write_formats(tmp_path)["official"])
    # lmms-eval's parser is evaluate.py without its Answer: rule: the bracket pass takes the latest "(C)"
    assert s.loc["test_Art_1", "official"] and not s.loc["test_Art_1", "lmms-eval"]
    # VLMEvalKit's can_infer finds three option letters (B, C and the pronoun I): none inferred
    assert s.loc["test_Art_2", "official"] and not s.loc["test_Art_2", "vlmevalkit"]
    # "Answer: $B": before PR#1591 the A of "Answer" made two capitals, and " $B" is no option; after, B
    row = s.loc["test_History_1"]
    assert row["official"] and row["vlmevalkit cot"] and not row["vlmevalkit cot, before PR#1591"]
    assert not row["vlmevalkit"]  # the direct datasets have no CoT post-processing
    assert P.cot_postproc("Step 1\nAnswer: $B") == "B" and P.cot_postproc("Step 1\nAnswer: $B", True) == " $B"
    # two Answer: lines: before PR#1591 the whole response (letters B and C: none); after, the last line's B
    row = s.loc["test_History_2"]
    assert row["vlmevalkit cot"] and not row["vlmevalkit cot, before PR#1591"]
    # a bare letter is right under every rule
    assert s.loc["test_Math_1"].drop(["question_type", "response"]).all()


def test_lmms_eval_vision_keeps_the_whole_response(tmp_path):
    files = write_formats(tmp_path, "vision", "MMMU_Pro_V", "mmmu_pro_vision")
    row = json.loads(files["lmms-eval"].read_text().splitlines()[0])
    assert "question" not in row["doc"] and row["mmmu_acc"]["parsed_pred"] == row["resps"][0][0]
    s = _scores(files["lmms-eval"])
    # mmmu_pro_process_results: a doc without "question" is not parsed; "Answer: B" != "B"
    assert s.loc["test_Art_1", "official"] and not s.loc["test_Art_1", "lmms-eval"]
    assert s.loc["test_Math_1", "lmms-eval"]  # "B" == "B"


def test_a_thinking_trace_misleads_the_official_rule_until_removed(tmp_path):
    s = _scores(write_formats(tmp_path)["official"])
    assert not s.loc["test_Physics_1", "official"] and s.loc["test_Physics_1", "official, trace removed"]
    items, _ = A.read_items(write_formats(tmp_path)["official"], "mmmu-pro")
    think = write_jsonl(tmp_path / "thinking.jsonl", [{"id": it["id"], "response": P.misleading_trace(it)}
                                                     for it in items])
    t = A.audit([think], "mmmu-pro", gold=tmp_path / "model_standard(10 options)_direct.jsonl")
    table = t["files"][0]["table"].set_index("rule set")
    base = _scores(tmp_path / "model_standard(10 options)_direct.jsonl")
    assert "file's own" not in table.index  # the gold's verdict is not these responses'
    assert table.loc["official", "correct"] < table.loc["official, trace removed", "correct"]
    assert t["files"][0]["scores"].set_index("id")["official, trace removed"].tolist() == \
        base["official, trace removed"].tolist()


def test_a_wrong_file_is_one_line(tmp_path, capsys):
    bad = write_jsonl(tmp_path / "other.jsonl", [{"question": "q", "pred": "A"}])
    with pytest.raises(DataError, match="expected an official MMMU-Pro output"):
        A.read_items(bad, "mmmu-pro")
    assert main(["audit", str(bad), "--benchmark", "mmmu-pro"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "other.jsonl" in err and "samples_<task>" in err
    two = tmp_path / "output"
    two.mkdir()
    for name in ("m_vision_cot.jsonl", "m_vision_direct.jsonl"):
        write_jsonl(two / name, official_rows())
    assert main(["audit", str(two), "--benchmark", "mmmu-pro"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "holds 2 official output files" in err
    no_answer = write_jsonl(tmp_path / "m_vision_direct.jsonl", [{k: v for k, v in r.items() if k != "answer"}
                                                                 for r in official_rows()])
    with pytest.raises(DataError, match="answer"):
        A.read_items(no_answer, "mmmu-pro")
    no_index = tmp_path / "Model_MMMU_Pro_10c.tsv"
    pd.DataFrame([{"prediction": "A", "answer": "A", "A": "x", "B": "y"}]).to_csv(no_index, sep="\t", index=False)
    with pytest.raises(DataError, match="needs columns prediction, answer and index"):
        A.read_items(no_index, "mmmu-pro")


def test_cli_and_cot_names(tmp_path, capsys):
    files = write_formats(tmp_path, "vision", "MMMU_Pro_V_COT", "mmmu_pro_vision_cot")
    items, _ = A.read_items(files["vlmevalkit"], "mmmu-pro")
    assert {(it["setting"], it["method"]) for it in items} == {("vision", "cot")}  # from the dataset name
    lm, _ = A.read_items(files["lmms-eval"], "mmmu-pro")
    assert {(it["setting"], it["method"]) for it in lm} == {("vision", "direct")}  # the prompt in arguments says direct
    alt = tmp_path / "Model_MMMU_Pro_V_COT.json"  # options as one list-string column instead of letter columns
    alt.write_text(json.dumps([{k: v for k, v in r.items() if k not in P.LETTERS} | {"options": str(OPTS)}
                               for r in P.vlmevalkit_rows(items)]))
    assert [it["index2ans"] for it in A.read_items(alt, "mmmu-pro")[0]] == [it["index2ans"] for it in items]
    assert main(["audit", str(files["official"]), "--benchmark", "mmmu-pro", "--reported", "50"]) == 0
    assert "vlmevalkit cot, before PR#1591" in capsys.readouterr().out


# the notebook demo on MMMU-Pro: tests/test_notebook_audit.py


# ----------------------------------------------------------------------------------- the real files

REAL = os.environ.get("MMBENCH_MMMU_PRO_OUTPUTS", "")
#: file -> (official rule, evaluate.py's own verdict in the file), of 1,730 (GPT-4o; measured, docs/audit.md)
REAL_COUNTS = {"gpt-4o_standard(10 options)_direct.jsonl": (696, 694),
               "gpt-4o_standard(10 options)_cot.jsonl": (952, 952),
               "gpt-4o_vision_direct.jsonl": (732, 734), "gpt-4o_vision_cot.jsonl": (866, 866)}


@pytest.mark.skipif(not REAL, reason="set MMBENCH_MMMU_PRO_OUTPUTS to the MMMU repository's mmmu-pro/output folder")
def test_real_gpt4o_outputs(tmp_path):
    for name, (official, own) in REAL_COUNTS.items():
        path = Path(REAL) / name
        rows, _ = mp.score_responses(path, seeds=range(1))
        result = A.audit([path], "mmmu-pro")
        scores = result["files"][0]["scores"].set_index("id")
        assert {r["id"]: r["correct"] for r in rows} == scores["official"].to_dict()
        table = result["files"][0]["table"].set_index("rule set")
        assert (table.loc["official", "correct"], table.loc["file's own", "correct"]) == (official, own)
        items, _ = A.read_items(path, "mmmu-pro")
        lmms = write_jsonl(tmp_path / "samples_mmmu_pro_x.jsonl", P.lmms_eval_rows(items))
        assert _scores(lmms)["official"].tolist() == scores["official"].tolist()
