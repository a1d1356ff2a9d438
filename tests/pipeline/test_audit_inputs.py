"""The audit checks its inputs as ``score-responses`` does (issue 41 item 4): each class of the hostile-input probe
through ``mmbench audit``, asserting the one-line error, the per-item mark or the correct number."""
from __future__ import annotations

import json
import shutil

import pandas as pd
import pytest

from mmbench_lib.cli import main
from mmbench_lib.pipeline import audit as A
from mmbench_lib.tasks import seed_audit as S
from tests.pipeline.test_audit import ITEMS, write_formats


@pytest.fixture
def files(tmp_path):
    return write_formats(tmp_path)


def _one_line_error(capsys, argv, *needles):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0, err
    for n in needles:
        assert n in err, err
    return err


def _lines(path):
    return [json.loads(x) for x in path.read_text().splitlines() if x.strip()]


def _write(path, rows):
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


# ------------------------------------------------------------------------------------------ one row per item

def test_a_repeated_id_is_counted_once_with_a_line_in_every_format(files, tmp_path, capsys):
    lmms = _lines(files["lmms-eval"])
    dup_lmms = _write(tmp_path / "samples_mmmu_val_dup.jsonl", lmms + [lmms[1]])
    tsv = pd.read_csv(files["vlmevalkit"], sep="\t")
    dup_tsv = tmp_path / "Model_dup_MMMU_DEV_VAL.tsv"
    pd.concat([tsv, tsv.iloc[[1]]]).to_csv(dup_tsv, sep="\t", index=False)
    plain = _lines(files["plain-jsonl"])
    dup_plain = _write(tmp_path / "dup.jsonl", plain + [plain[1]])
    for path, gold in ((dup_lmms, None), (dup_tsv, None), (dup_plain, files["official-folders"])):
        result = A.audit([path], "mmmu", gold=gold)
        assert result["files"][0]["stats"]["items"] == len(ITEMS)  # 6 items for 6 questions, not 7
        assert any("1 repeated ids counted once" in n for n in result["notes"])
    assert main(["audit", str(dup_lmms), "--benchmark", "mmmu"]) == 0
    assert "note: " in capsys.readouterr().out


# ------------------------------------------------------------------------------------- the raw response

@pytest.mark.parametrize("resps", [None, [], float("nan"), {"text": "C"}, [[None]]])
def test_resps_without_text_is_marked_never_the_filtered_response(files, tmp_path, resps):
    rows = _lines(files["lmms-eval"])
    rows[1]["resps"] = resps  # validation_Art_2, answer B; its filtered_resps still says "B"
    path = tmp_path / "samples_mmmu_val_bad.jsonl"
    path.write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows))
    items, _ = A.read_items(path, "mmmu", notes=(notes := []))
    art2 = next(it for it in items if it["id"] == "validation_Art_2")
    assert art2["response"] == "" and "resps is" in art2["response_problem"]
    assert any("raw resps holds no text" in n and "validation_Art_2" in n for n in notes)
    scores = A.score(items, "mmmu").set_index("id")
    assert not scores.loc["validation_Art_2", "official"]  # scored as the empty response it is


# ------------------------------------------------------------------------------ gold answers, question types

@pytest.mark.parametrize("field,value,needle", [
    ("answer", None, "gold answer missing"),
    ("answer", 2, "gold answer 2 names no option"),
    ("answer", "Z", "gold answer 'Z' names no option"),
    ("question_type", "essay", "question type 'essay' is not one of"),
])
def test_gold_answers_and_question_types_are_validated(files, tmp_path, capsys, field, value, needle):
    rows = _lines(files["lmms-eval"])
    rows[0]["doc"][field] = value
    if value is None:
        del rows[0]["doc"][field]
    path = _write(tmp_path / "samples_mmmu_val_gold.jsonl", rows)
    _one_line_error(capsys, ["audit", str(path), "--benchmark", "mmmu"], path.name, "validation_Art_1", needle)
    tsv = pd.read_csv(files["vlmevalkit"], sep="\t")
    if field == "answer":
        tsv["answer"] = tsv["answer"].astype(object)
        tsv.loc[0, "answer"] = value
        bad = tmp_path / "Model_gold_MMMU_DEV_VAL.tsv"
        tsv.to_csv(bad, sep="\t", index=False)
        _one_line_error(capsys, ["audit", str(bad), "--benchmark", "mmmu"], bad.name, "'answer'")


# ----------------------------------------------------------------------------- a file of another benchmark

def test_a_seed2_log_audited_as_seed_is_refused(tmp_path, capsys):
    item = {"id": "1_1", "index2ans": dict(zip("ABCD", "wxyz")), "answer": "A", "response": "A",
            "category": "Single Image", "question": "q", "dimension_id": 1}
    rows = S.SEED2.lmms_eval_rows([{**item, "letters": list("ABCD")}])
    path = _write(tmp_path / "samples_seedbench_2_2026.jsonl", rows)
    _one_line_error(capsys, ["audit", str(path), "--benchmark", "seed"], path.name, "seed2", "--benchmark seed2")
    renamed = _write(tmp_path / "samples_x.jsonl", rows)  # no name to tell: the category does
    _one_line_error(capsys, ["audit", str(renamed), "--benchmark", "seed"], "'Single Image' is not one of seed's")
    assert main(["audit", str(path), "--benchmark", "seed2"]) == 0


def test_a_vlmevalkit_file_of_mmmu_pro_is_refused_as_mmmu(files, tmp_path, capsys):
    other = tmp_path / "Model_MMMU_Pro_10c.tsv"
    shutil.copy(files["vlmevalkit"], other)
    _one_line_error(capsys, ["audit", str(other), "--benchmark", "mmmu"], "a file of mmmu-pro")


# --------------------------------------------------------------------------------- different golds, no pair

def test_files_with_different_golds_are_not_paired(files, tmp_path, capsys):
    tsv = pd.read_csv(files["vlmevalkit"], sep="\t")
    tsv.loc[1, "answer"] = "D"  # validation_Art_2: B in the official files
    other = tmp_path / "Model_other_MMMU_DEV_VAL.tsv"
    tsv.to_csv(other, sep="\t", index=False)
    result = A.audit([files["official-folders"], other], "mmmu")
    assert len(result["across"]) == 0
    assert any("not paired: 1 shared ids have different gold answers" in n and "validation_Art_2" in n
               for n in result["notes"])
    assert len(A.audit([files["official-folders"], files["vlmevalkit"]], "mmmu")["across"]) == 1


# ------------------------------------------------------------------------------------- official folders

def test_an_output_json_that_is_a_folder_is_one_line(files, capsys):
    art = files["official-folders"] / "Art" / "output.json"
    art.unlink()
    art.mkdir()
    _one_line_error(capsys, ["audit", str(files["official-folders"]), "--benchmark", "mmmu"],
                    "Art/output.json", "is a folder, not a file")


def test_a_duplicated_subject_folder_is_one_line_a_copy_is_skipped(files, capsys):
    root = files["official-folders"]
    shutil.copytree(root / "Art", root / "art")  # the official short key of Art
    _one_line_error(capsys, ["audit", str(root), "--benchmark", "mmmu"], "subject 'Art' has two folders")
    shutil.rmtree(root / "art")
    shutil.copytree(root / "Art", root / "Art copy")
    result = A.audit([root], "mmmu")
    assert result["files"][0]["stats"]["items"] == len(ITEMS)  # not counted twice
    assert any("not subjects were skipped: ['Art copy']" in n for n in result["notes"])


# ---------------------------------------------------------------------------------------- numeric options

@pytest.mark.parametrize("option,value", [("--reported", "nan"), ("--reported", "inf"), ("--reported", "-5"),
                                          ("--reported", "150"), ("--expected", "0"), ("--expected", "-3"),
                                          ("--expected", "5"), ("--max-new-tokens", "0"), ("--max-new-tokens", "-1")])
def test_numeric_options_are_range_checked(files, capsys, option, value):
    _one_line_error(capsys, ["audit", str(files["official-folders"]), "--benchmark", "mmmu", option, value],
                    option, value)


def test_in_range_options_are_taken(files):
    result = A.audit([files["official-folders"]], "mmmu", reported=0.0, expected=6, max_new_tokens=1)
    assert result["files"][0]["waterfall"]["to"].iloc[0] == 0.0
    assert "nan" not in A.report_text(result).lower()


def test_an_open_numeric_gold_stays_accepted(files, capsys):
    """An open question's numeric gold is scored (score-responses scores it), not refused."""
    recs = json.loads((files["official-folders"] / "Math" / "output.json").read_text())
    recs[0]["answer"] = 12
    (files["official-folders"] / "Math" / "output.json").write_text(json.dumps(recs))
    scores = A.audit([files["official-folders"]], "mmmu")["files"][0]["scores"].set_index("id")
    assert scores.loc["validation_Math_1", "official"]
