"""The reproduction audit on CMMMU (`mmbench audit --benchmark cmmmu`): the same Chinese responses read from every
supported format, re-scored under the official evaluation, the official evaluation after a thinking trace is
removed, lmms-eval's rule and VLMEvalKit's rule.

Inputs are written in the exact formats: this suite's ``official/responses.jsonl`` + ``gold.jsonl`` (what
``score-responses --benchmark cmmmu`` reads), the official scorer's ``{id, type, response}`` file with its data rows
(``eval_script.py``), lmms-eval sample logs (``doc_id``, ``doc``, ``resps``, ``filtered_resps``, ``cmmmu_acc``),
VLMEvalKit ``CMMMU_VAL`` prediction files (``index``, ``type``, ``option1``..``option4``, ``answer``, ``category``,
``prediction``). The CMMMU repository's real example outputs are checked when ``MMBENCH_CMMMU_OUTPUTS`` names a
folder holding ``Yi-VL-34B-response.jsonl`` and the validation data rows ``data.jsonl``.
"""
from __future__ import annotations

import json
import os
import random
from pathlib import Path

import pandas as pd
import pytest

from mmbench_lib.cli import main
from mmbench_lib.core.items import DataError
from mmbench_lib.pipeline import audit as A
from mmbench_lib.pipeline.rescoring import score_cmmmu_outputs
from mmbench_lib.tasks import cmmmu_audit as C

OPTS = ("甲", "乙", "丙", "丁")
#: (id, type, category, subcategory, answer, response), in file order (science first: not the official order)
ITEMS = [
    ("301", "判断", "科学", "物理", "错", "这个说法不正确"),  # 不正确 contains 正确: votes 对 under every rule
    ("302", "判断", "科学", "物理", "错", "错误"),
    ("303", "判断", "科学", "数学", "对", "答案是正确的"),
    ("101", "选择", "艺术与设计", "艺术", "C", "正确答案是(C)"),
    ("102", "选择", "艺术与设计", "艺术", "D", ""),  # empty: official wrong, the peers draw a letter
    ("103", "判断", "艺术与设计", "音乐", "对", "这个问题没有足够的信息来给出一个确定的答案。"),  # a tie: a draw
    ("201", "填空", "商业", "会计", "34.6", "答案是34.6"),
    ("202", "填空", "商业", "经济", "甲", "答案是甲。所以正确的是甲同学"),  # VLMEvalKit counts it twice
    ("401", "选择", "健康与医学", "临床医学", "C", "<think>我先想到(A)，但不对。</think>正确答案是(C)"),
    ("402", "填空", "健康与医学", "制药", "5", "<think>算出结果为5"),
    ("501", "选择", "人文社会科学", "历史", "B", "答案是B"),
    ("601", "填空", "技术与工程", "计算机科学", "1000", "答案是1，000"),  # a full-width comma: a string, not 1000
]


def _gold_row(item_id, ctype, category, sub, answer, with_options=True):
    row = {"id": item_id, "type": ctype, "answer": answer, "category": category, "subcategory": sub}
    if ctype == "选择" and with_options:
        row.update({f"option{i}": o for i, o in enumerate(OPTS, 1)})
    return row


def write_official(root: Path) -> Path:
    """The suite's official files (``Task.write_official``): ``official/responses.jsonl`` + ``gold.jsonl``."""
    folder = root / "run" / "official"
    folder.mkdir(parents=True)
    with open(folder / "responses.jsonl", "w", encoding="utf-8") as fr, \
            open(folder / "gold.jsonl", "w", encoding="utf-8") as fg:
        for item_id, ctype, cat, sub, answer, response in ITEMS:
            fr.write(json.dumps({"id": item_id, "type": ctype, "response": response}, ensure_ascii=False) + "\n")
            fg.write(json.dumps(_gold_row(item_id, ctype, cat, sub, answer), ensure_ascii=False) + "\n")
    return folder


def write_formats(root: Path) -> dict[str, Path]:
    """The same responses in every format the audit reads."""
    official = write_official(root)
    items, _ = A.read_items(official, "cmmmu")
    lmms = root / "samples_cmmmu_val_2026.jsonl"
    lmms.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in C.lmms_eval_rows(items)), encoding="utf-8")
    rows = C.vlmevalkit_rows(items)
    tsv, js = root / "Model_CMMMU_VAL.tsv", root / "Model_CMMMU_VAL.json"
    pd.DataFrame(rows).to_csv(tsv, sep="\t", index=False)  # as VLMEvalKit's dump() writes a .tsv
    js.write_text(json.dumps(rows, ensure_ascii=False), encoding="utf-8")
    # the official scorer's inputs (eval_script.py): integer ids, {id, type, response}, and the data rows
    resp, data = root / "Model-response.jsonl", root / "cmmmu-data-val.jsonl"
    resp.write_text("".join(json.dumps({"id": int(i[0]), "type": i[1], "response": i[5]}, ensure_ascii=False) + "\n"
                            for i in ITEMS), encoding="utf-8")
    data.write_text("".join(json.dumps({**_gold_row(*i[:5]), "id": int(i[0])}, ensure_ascii=False) + "\n"
                            for i in ITEMS), encoding="utf-8")
    return {"official-folders": official, "run": official.parent, "lmms-eval": lmms, "vlmevalkit": tsv,
            "vlmevalkit-json": js, "response-file": resp, "data-file": data}


@pytest.fixture
def files(tmp_path):
    return write_formats(tmp_path)


def _scores(result, n=0):
    return result["files"][n]["scores"].set_index("id")


def test_every_format_gives_the_same_per_item_results(files):
    paths = [files[k] for k in ("official-folders", "run", "lmms-eval", "vlmevalkit", "vlmevalkit-json")]
    result = A.audit(paths, "cmmmu")
    assert [f["format"] for f in result["files"]] == ["official-folders", "official-folders", "lmms-eval",
                                                      "vlmevalkit", "vlmevalkit"]
    base = _scores(result)
    for n in range(1, len(paths)):
        other = _scores(result, n).loc[base.index]
        for rule in C.RULES:
            assert other[rule].tolist() == base[rule].tolist(), (paths[n], rule)
    # the official scorer's own inputs: the {id, type, response} file, its data rows as --gold
    plain = A.audit([files["response-file"]], "cmmmu", gold=files["data-file"])
    assert plain["files"][0]["format"] == "plain-jsonl"
    assert _scores(plain).loc[base.index, "official"].tolist() == base["official"].tolist()
    assert (result["across"]["difference"] == 0).all()


def test_official_rule_equals_score_responses(files):
    rows, summary = score_cmmmu_outputs(files["official-folders"] / "responses.jsonl",
                                        files["official-folders"] / "gold.jsonl")
    scores = _scores(A.audit([files["official-folders"]], "cmmmu"))
    assert {r["id"]: r["correct"] for r in rows} == scores["official"].to_dict()
    # the same with the official scorer's files (integer ids, data rows holding options and category)
    rows2, _ = score_cmmmu_outputs(files["response-file"], files["data-file"])
    plain = _scores(A.audit([files["response-file"]], "cmmmu", gold=files["data-file"]))
    assert {r["id"]: r["correct"] for r in rows2} == plain["official"].to_dict()
    assert summary["overall"]["correct"] == int(scores["official"].sum()) == 8


def test_worked_examples_where_the_rules_agree_and_disagree(files):
    s = _scores(A.audit([files["official-folders"]], "cmmmu"))
    rules = list(C.RULES)
    # an empty multiple-choice answer: the official caller scores it wrong with no draw; lmms-eval's and
    # VLMEvalKit's copies of get_multi_choice_prediction have no empty guard ("" and str(NaN) = "nan") and draw a
    # letter: D is the first draw of random.Random(0)
    assert random.Random(0).choice("ABCD") == "D"
    assert not s.loc["102", "official"] and s.loc["102", "lmms-eval"] and s.loc["102", "vlmevalkit"]
    # a true/false tie ("not enough information": no 对/错 word): a draw. The official stream (Random(42), category
    # order) draws 对 here; lmms-eval's second draw (after 102's letter) and VLMEvalKit's (file order) are 错
    r0 = random.Random(0)
    r0.choice("ABCD")
    assert random.Random(42).choice(["对", "错"]) == "对" and r0.choice(["对", "错"]) == "错"
    assert s.loc["103", "official"] and not s.loc["103", "lmms-eval"] and not s.loc["103", "vlmevalkit"]
    # the same true/false words under every rule: 不正确 contains 正确 and votes 对 (the official bug, copied by both
    # peers); 错误 votes 错; 答案是正确的 keeps the tail 正确的 after 是 and votes 对
    assert not s.loc["301", rules].any() and s.loc["302", rules].all() and s.loc["303", rules].all()
    # 答案是 phrases and numbers: the tail after 答案/是, its numbers; "34.6" and 34.6 are one number
    assert s.loc[["101", "201", "202", "501"], rules].all().all()
    # 1，000 (full-width comma) is one extracted string, never the number 1000, under every rule
    assert not s.loc["601", rules].any()
    # a trace that names (A) before the answer's (C): the tie gives "AC" (wrong) unless the trace is removed
    assert not s.loc["401", "official"] and s.loc["401", "official, trace removed"]
    assert not s.loc["401", "lmms-eval"] and not s.loc["401", "vlmevalkit"]
    # an unclosed trace: the official parser finds the 5 inside it; removed, there is no answer
    assert s.loc["402", "official"] and not s.loc["402", "official, trace removed"]


def test_vlmevalkit_counts_a_fill_in_item_once_per_matching_prediction(files):
    items, _ = A.read_items(files["vlmevalkit"], "cmmmu")
    by_id = {it["id"]: it for it in items}
    # 答案是甲。所以正确的是甲同学 gives the predictions 甲 and 甲同学: both hold the gold 甲, and CMMMU.evaluate's
    # loop adds one for each (no break), so its printed total has one more than its items right
    assert C._vlmevalkit_matches([by_id["202"]]) == [2]
    assert C.vlmevalkit_total(items) == sum(C.vlmevalkit_rule(items)) + 1


def test_lmms_eval_file_carries_its_own_verdict(files):
    result = A.audit([files["lmms-eval"]], "cmmmu")
    s = _scores(result)
    assert "file's own" in result["files"][0]["table"]["rule set"].tolist()
    # parsed_pred is logged: the own verdict is lmms-eval's rule, except a true/false tie, whose draw is made at
    # aggregation and is not in the log (drawn per item here)
    ties = ["103"]
    assert (s.drop(ties)["file's own"] == s.drop(ties)["lmms-eval"]).all()
    row = json.loads(files["lmms-eval"].read_text(encoding="utf-8").splitlines()[3])
    assert row["cmmmu_acc"] == {"id": "101", "subdomain": "艺术", "question_type": "选择", "answer": "C",
                                "parsed_pred": "C"}


def test_thinking_trace_recovers_with_trace_removal(files, tmp_path):
    items, _ = A.read_items(files["official-folders"], "cmmmu")
    think = tmp_path / "thinking.jsonl"
    think.write_text("".join(json.dumps({"id": it["id"], "response": C.misleading_trace(it)}, ensure_ascii=False) + "\n"
                             for it in items), encoding="utf-8")
    t = A.audit([think], "cmmmu", gold=files["official-folders"])["files"][0]
    table = t["table"].set_index("rule set")
    own = _scores(A.audit([files["official-folders"]], "cmmmu"))
    s = t["scores"].set_index("id")
    # removing the trace gives the responses back (401 and 402 carried a trace already: removed, as before)
    assert s["official, trace removed"].to_dict() == {i: bool(v) for i, v in own["official, trace removed"].items()}
    # the trace names a wrong option in brackets, two votes for the wrong 对/错, or a wrong number after 答案是
    assert table.loc["official", "correct"] < table.loc["official, trace removed", "correct"]
    assert not s.loc[["101", "302", "303"], "official"].any()
    # fill-in: any matching prediction counts, so the trace's wrong 0 does not undo the answer's own 答案是34.6
    assert s.loc["201", "official"]


def test_official_files_and_wrong_files_are_one_line(tmp_path, files, capsys):
    assert C.official_format(files["run"]) and C.official_format(files["data-file"])
    assert not C.official_format(files["response-file"]) and not C.official_format(files["lmms-eval"])
    bad = tmp_path / "other.jsonl"
    bad.write_text(json.dumps({"question": "q", "pred": "A"}) + "\n")
    with pytest.raises(DataError, match="expected a folder of responses.jsonl and gold.jsonl"):
        A.read_items(bad, "cmmmu")
    assert main(["audit", str(bad), "--benchmark", "cmmmu"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "other.jsonl" in err and "samples_<task>" in err
    no_type = tmp_path / "Model_CMMMU_VAL.tsv"
    pd.read_csv(files["vlmevalkit"], sep="\t").drop(columns="type").to_csv(no_type, sep="\t", index=False)
    with pytest.raises(DataError, match="needs columns prediction, answer, type, category and index"):
        A.read_items(no_type, "cmmmu")
    answer_mode = tmp_path / "answers"
    answer_mode.mkdir()
    (answer_mode / "responses.jsonl").write_text(json.dumps({"id": "101", "type": "选择", "answer": "C"}) + "\n")
    (answer_mode / "gold.jsonl").write_text((files["official-folders"] / "gold.jsonl").read_text(encoding="utf-8"),
                                            encoding="utf-8")
    with pytest.raises(DataError, match="answer-mode row"):
        A.read_items(answer_mode, "cmmmu")
    wrong_type = tmp_path / "samples_cmmmu_val_x.jsonl"
    row = json.loads(files["lmms-eval"].read_text(encoding="utf-8").splitlines()[0])
    row["doc"]["type"] = "问答"
    wrong_type.write_text(json.dumps(row, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(DataError, match="line 1: cannot read the item .*unknown type '问答'"):
        A.read_items(wrong_type, "cmmmu")


def test_cli_audit_prints_and_writes(files, tmp_path, capsys):
    out = tmp_path / "audit"
    assert main(["audit", str(files["run"]), str(files["lmms-eval"]), "--benchmark", "cmmmu", "--reported", "60",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "official, trace removed" in text and "waterfall" in text and "across files" in text
    summary = json.loads((out / "audit.json").read_text())
    assert [f["format"] for f in summary["files"]] == ["official-folders", "lmms-eval"]
    steps = [s["step"] for s in summary["files"][1]["waterfall"]]
    assert steps[:3] == ["reported", "file's own score", "file's own rule -> official parser"]


# ----------------------------------------------------------------------------------- the real files

REAL = os.environ.get("MMBENCH_CMMMU_OUTPUTS", "")


@pytest.mark.skipif(not REAL, reason="set MMBENCH_CMMMU_OUTPUTS to a folder holding the CMMMU repository's "
                                     "eval/example/Yi-VL-34B-response.jsonl and the validation data rows as data.jsonl")
def test_real_yi_vl_outputs_in_every_format(tmp_path):
    resp, data = Path(REAL) / "Yi-VL-34B-response.jsonl", Path(REAL) / "data.jsonl"
    rows, summary = score_cmmmu_outputs(resp, data)
    result = A.audit([resp], "cmmmu", gold=data)
    items, _ = A.read_items(resp, "cmmmu", A.read_items(data, "cmmmu")[0])
    s = _scores(result)
    assert {r["id"]: r["correct"] for r in rows} == s["official"].to_dict()
    lmms = tmp_path / "samples_cmmmu_val_yi.jsonl"
    lmms.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in C.lmms_eval_rows(items)), encoding="utf-8")
    tsv = tmp_path / "yi_CMMMU_VAL.tsv"
    pd.DataFrame(C.vlmevalkit_rows(items)).to_csv(tsv, sep="\t", index=False)
    both = A.audit([lmms, tsv], "cmmmu")
    for n in (0, 1):
        assert _scores(both, n).loc[s.index, "official"].tolist() == s["official"].tolist()


def test_answers_written_as_da_an_shi_are_counted_like_answer_is():
    from mmbench_lib.pipeline.audit import response_stats
    items = [{"id": str(i), "response": r} for i, r in enumerate(["答案是B。", "正确答案为：（C）", "The answer is D", "B"])]
    assert response_stats(items)["answer_is"] == 3
