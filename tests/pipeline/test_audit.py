"""The reproduction audit (`mmbench audit`): the same MMMU responses read from every supported format, re-scored
under the official parser, the official parser after a thinking trace is removed, and the peers' rules.

Inputs are written in the exact formats: the official ``<Subject>/output.json`` (MMMU repository), lmms-eval
sample logs (``doc_id``, ``doc``, ``resps``, ``filtered_resps``, ``mmmu_acc``), VLMEvalKit prediction files
(``index``, ``prediction``, ``answer``, option columns, ``id``). The real files (the MMMU repository's
``mmmu/example_outputs/qwen_vl``, 900 items) are checked when ``MMBENCH_MMMU_OUTPUTS`` names that folder.
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
from mmbench_lib.pipeline.rescoring import score_mmmu_outputs
from mmbench_lib.tasks import mmmu_audit as M

OPTS = {"A": "Aurelia", "B": "Matilda", "C": "Hermione", "D": "Juno"}
#: (id, question_type, answer, response); options OPTS for multiple choice
ITEMS = [
    ("validation_Art_1", "multiple-choice", "C", "The woman is named Hermione. Therefore, the answer is (C)."),
    ("validation_Art_2", "multiple-choice", "B", "B"),
    ("validation_Math_1", "open", "12", "The area of the square is 12."),
    ("validation_Physics_1", "multiple-choice", "C", "<think>Is it (A)? The name does not fit.</think>C"),
    ("validation_Physics_2", "open", "3", "<think>Let me count the charges: 3 or 5, recount"),
    ("dev_Art_1", "multiple-choice", "A", "(A) Aurelia"),
]


def _records():
    out = []
    for item_id, qtype, answer, response in ITEMS:
        rec = {"id": item_id, "question_type": qtype, "answer": answer, "response": response}
        if qtype == "multiple-choice":
            rec.update(all_choices=list(OPTS), index2ans=dict(OPTS))
        else:
            rec.update(all_choices=[], index2ans={})
        out.append(rec)
    return out


def write_official(root: Path) -> Path:
    for rec in _records():
        folder = root / "official" / M.mparse.subject_from_id(rec["id"])
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "output.json"
        data = json.loads(path.read_text()) if path.exists() else []
        path.write_text(json.dumps(data + [rec]))
    return root / "official"


def write_formats(root: Path) -> dict[str, Path]:
    """The same responses in every format the audit reads."""
    official = write_official(root)
    items, _ = A.read_items(official, "mmmu")
    lmms = root / "samples_mmmu_val_2026.jsonl"
    lmms.write_text("".join(json.dumps(M.lmms_eval_row(i, it, p)) + "\n"
                            for i, (it, p) in enumerate(zip(items, M.lmms_eval_preds(items)))))
    rows = [M.vlmevalkit_row(i, it) for i, it in enumerate(items)]
    tsv, js = root / "Model_MMMU_DEV_VAL.tsv", root / "Model_MMMU_DEV_VAL.json"
    pd.DataFrame(rows).to_csv(tsv, sep="\t", index=False)  # as VLMEvalKit's dump() writes a .tsv
    js.write_text(json.dumps(rows))
    plain = root / "responses.jsonl"
    plain.write_text("".join(json.dumps({"id": it["id"], "response": it["response"]}) + "\n" for it in items))
    return {"official-folders": official, "lmms-eval": lmms, "vlmevalkit": tsv, "vlmevalkit-json": js,
            "plain-jsonl": plain}


@pytest.fixture
def files(tmp_path):
    return write_formats(tmp_path)


def _scores(result, n):
    return result["files"][n]["scores"].set_index("id")


def test_every_format_gives_the_same_per_item_results(files):
    paths = [files[k] for k in ("official-folders", "lmms-eval", "vlmevalkit", "vlmevalkit-json")]
    result = A.audit(paths, "mmmu")
    assert [f["format"] for f in result["files"]] == ["official-folders", "lmms-eval", "vlmevalkit", "vlmevalkit"]
    base = _scores(result, 0)
    for n in range(1, 4):
        other = _scores(result, n).loc[base.index]
        for rule in M.RULES:
            assert other[rule].tolist() == base[rule].tolist(), (paths[n], rule)
    plain = A.audit([files["plain-jsonl"]], "mmmu", gold=files["official-folders"])
    assert _scores(plain, 0).loc[base.index, "official"].tolist() == base["official"].tolist()
    assert (result["across"]["difference"] == 0).all()


def test_official_rule_equals_score_responses(files):
    rows, summary = score_mmmu_outputs(files["official-folders"])
    scores = _scores(A.audit([files["official-folders"]], "mmmu"), 0)
    assert {r["id"]: r["correct"] for r in rows} == scores["official"].to_dict()


def test_rules_as_the_peers_code_does_them(files):
    s = _scores(A.audit([files["official-folders"]], "mmmu"), 0)
    # the official open parser finds 12; lmms-eval keeps str(parsed_pred[0]) and compares its characters
    assert s.loc["validation_Math_1", "official"] and not s.loc["validation_Math_1", "lmms-eval"]
    # VLMEvalKit's exact matching has no options to infer for an open question: "Z", wrong
    assert not s.loc["validation_Math_1", "vlmevalkit"]
    # the trace's (A) wins over the answer's bare C, unless the trace is removed first
    assert not s.loc["validation_Physics_1", "official"] and s.loc["validation_Physics_1", "official, trace removed"]
    # an unclosed trace: the official parser finds the 3 inside it; removed, there is no answer
    assert s.loc["validation_Physics_2", "official"] and not s.loc["validation_Physics_2", "official, trace removed"]
    assert s.loc["validation_Art_1"].drop(["question_type", "response"]).all()


def test_lmms_eval_file_carries_its_own_verdict(files):
    result = A.audit([files["lmms-eval"]], "mmmu")
    s = _scores(result, 0)
    assert (s["file's own"] == s["lmms-eval"]).all()
    assert "file's own" in result["files"][0]["table"]["rule set"].tolist()


def test_table_pairs_and_disagreements(files):
    f = A.audit([files["official-folders"]], "mmmu")["files"][0]
    t = f["table"].set_index("rule set")
    assert t.loc["official", "n"] == 6 and t.loc["official", "correct"] == 5
    assert t.loc["official", "low"] < t.loc["official", "accuracy"] < t.loc["official", "high"]
    pair = f["pairs"].set_index(["a", "b"]).loc[("official", "official, trace removed")]
    assert (pair["only_a_correct"], pair["only_b_correct"], pair["difference"]) == (1, 1, 0)
    d = f["disagreements"]
    rows = d[(d["a"] == "official") & (d["b"] == "official, trace removed")]
    assert set(rows["id"]) == {"validation_Physics_1", "validation_Physics_2"}
    assert rows.set_index("id").loc["validation_Physics_1", "response"].startswith("<think>")


def test_response_statistics(files):
    stats = A.audit([files["plain-jsonl"]], "mmmu", gold=files["official-folders"])["files"][0]["stats"]
    assert (stats["items"], stats["with_trace"], stats["truncated"], stats["answer_is"], stats["empty"]) == (6, 2, 1, 1, 0)
    assert stats["truncated_ids"] == ["validation_Physics_2"]
    budget = A.response_stats(A.read_items(files["official-folders"], "mmmu")[0], max_new_tokens=3)
    assert budget["truncated"] == 5  # every response of 3 word pieces or more (all but "B")
    gold_ids = [it["id"] for it in A.read_items(files["official-folders"], "mmmu")[0]] + ["validation_Art_9"]
    assert A.response_stats(A.read_items(files["plain-jsonl"], "mmmu", A.read_items(files["official-folders"],
                                                                                     "mmmu")[0])[0],
                            gold_ids)["missing_examples"] == ["validation_Art_9"]


def test_waterfall_chains_from_reported_to_the_last_score(files):
    f = A.audit([files["lmms-eval"]], "mmmu", reported=70.0, split="validation", expected=8)["files"][0]
    w = f["waterfall"]
    steps = w["step"].tolist()
    assert steps[0] == "reported" and steps[-1] == "unexplained rest"
    assert steps[1:] == ["file's own score (missing items counted wrong)", "missing items left out",
                         "file's own rule -> official parser", "thinking trace removed", "truncated responses left out",
                         "other splits left out (validation only)", "unexplained rest"]
    # lmms-eval's rule: 3 of the 6 items (its open rule loses Math_1 and Physics_2, the trace's (A) Physics_1), of 8
    assert w.iloc[1]["to"] == 100 * 3 / 8 and w.iloc[2]["to"] == 100 * 3 / 6
    assert w["from"].iloc[2:].tolist() == pytest.approx(w["to"].iloc[1:-1].tolist())  # each starts where the last ended
    # last: the official parser, trace removed, on the validation items without the truncated one: 4 of 4
    assert w.iloc[-1]["from"] == 100.0
    for _, r in w.iloc[2:-1].iterrows():
        assert r["low"] <= r["change"] + 1e-9 and r["change"] <= r["high"] + 1e-9, r.to_dict()
    rest = w.iloc[-1]
    assert rest["to"] == 70.0 and rest["low"] <= rest["change"] <= rest["high"]


def test_judge_hook_is_off_unless_given(files):
    items, _ = A.read_items(files["official-folders"], "mmmu")
    assert not any("judge" in c for c in A.score(items, "mmmu").columns)
    judged = A.score(items, "mmmu", judge=lambda it: it["id"].endswith("_1"))
    assert judged["judge (hook, not official)"].sum() == 4


def test_a_wrong_file_is_one_line_naming_what_was_expected(tmp_path, files, capsys):
    bad = tmp_path / "other.jsonl"
    bad.write_text(json.dumps({"question": "q", "pred": "A"}) + "\n")
    with pytest.raises(DataError, match="expected a folder of <Subject>/output.json, an lmms-eval"):
        A.read_items(bad, "mmmu")
    assert main(["audit", str(bad), "--benchmark", "mmmu"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and "other.jsonl" in err and "samples_<task>" in err
    no_id = tmp_path / "Model_MMMU.tsv"
    pd.read_csv(files["vlmevalkit"], sep="\t").drop(columns="id").to_csv(no_id, sep="\t", index=False)
    with pytest.raises(DataError, match="needs columns index, prediction, answer and id"):
        A.read_items(no_id, "mmmu")
    with pytest.raises(DataError, match="needs the questions: pass --gold"):
        A.read_items(files["plain-jsonl"], "mmmu")


def test_cli_audit_prints_and_writes(files, tmp_path, capsys):
    out = tmp_path / "audit"
    assert main(["audit", str(files["official-folders"]), str(files["vlmevalkit"]), "--benchmark", "mmmu",
                 "--reported", "60", "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "official, trace removed" in text and "waterfall" in text and "across files" in text
    summary = json.loads((out / "audit.json").read_text())
    assert [f["format"] for f in summary["files"]] == ["official-folders", "vlmevalkit"]
    assert pd.read_csv(out / "1_disagreements.csv")["response"].notna().all()


def test_xlsx_needs_openpyxl_or_reads(files, tmp_path):
    path = tmp_path / "Model_MMMU_DEV_VAL.xlsx"
    try:
        import openpyxl  # noqa: F401
    except ImportError:
        path.write_bytes(b"PK")
        with pytest.raises(DataError, match="needs openpyxl"):
            A.read_items(path, "mmmu")
        pytest.skip("openpyxl is not installed: an .xlsx is refused with the reason (checked)")
    pd.read_csv(files["vlmevalkit"], sep="\t").to_excel(path, index=False)
    assert len(A.read_items(path, "mmmu")[0]) == len(ITEMS)


# ----------------------------------------------------------------------------------- the real files

REAL = os.environ.get("MMBENCH_MMMU_OUTPUTS", "")


@pytest.mark.skipif(not REAL, reason="set MMBENCH_MMMU_OUTPUTS to the MMMU repository's mmmu/example_outputs/qwen_vl")
def test_real_qwen_vl_outputs_in_every_format(tmp_path):
    items, fmt = A.read_items(REAL, "mmmu")
    assert fmt == "official-folders" and len(items) == 900
    lmms = tmp_path / "samples_mmmu_val_qwen_vl.jsonl"
    lmms.write_text("".join(json.dumps(M.lmms_eval_row(i, it, p)) + "\n"
                            for i, (it, p) in enumerate(zip(items, M.lmms_eval_preds(items)))))
    tsv = tmp_path / "qwen_vl_MMMU_DEV_VAL.tsv"
    pd.DataFrame([M.vlmevalkit_row(i, it) for i, it in enumerate(items)]).to_csv(tsv, sep="\t", index=False)
    result = A.audit([REAL, lmms, tsv], "mmmu")
    table = result["files"][0]["table"].set_index("rule set")
    # the official script (main_parse_and_eval.py + print_results.py) prints Overall 900 0.361
    assert table.loc["official", "correct"] == 325 and round(table.loc["official", "accuracy"] / 100, 3) == 0.361
    base = _scores(result, 0)["official"]
    for n in (1, 2):
        assert _scores(result, n).loc[base.index, "official"].tolist() == base.tolist()
    think = tmp_path / "thinking.jsonl"
    think.write_text("".join(json.dumps({"id": it["id"], "response": M.misleading_trace(it)}) + "\n" for it in items))
    t = A.audit([think], "mmmu", gold=REAL)["files"][0]["table"].set_index("rule set")
    assert t.loc["official, trace removed", "correct"] == 325 > t.loc["official", "correct"]
