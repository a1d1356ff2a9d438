"""Rescoring official-format MMMU ``output.json`` folders and CMMMU response files (docs/protocols.md §3.7-3.9, §4.4-4.6)."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

import pytest

from mmbench_lib import cli
from mmbench_lib.tasks import cmmmu, mmmu
from mmbench_lib.core.items import DataError
from mmbench_lib.tasks import mmmu_parser as mparse
from mmbench_lib.pipeline.rescoring import score_cmmmu_outputs, score_mmmu_outputs

pytestmark = pytest.mark.filterwarnings("ignore:.*subjects have no output.json:UserWarning")

# ``demo`` (conftest.py): the paths ``make_demo`` returned, built once per session

MC_PLAN = ("bracket", "letter", "content", "wrong", "random_empty", "random_text")


@pytest.fixture(scope="module")
def mmmu_items(demo, tmp_path_factory):
    return mmmu.load(demo["mmmu"]["source"], split="validation", cache_dir=tmp_path_factory.mktemp("cache"))


def _content_response(text: str) -> str:
    return f"after some thought my final pick would be {text.lower()} here"


def _mc_record(it, branch: str) -> tuple[dict, str]:
    """An official MC record whose response exercises ``branch``; returns (record, expected mode)."""
    index2ans, all_choices = mparse.mc_info(it.choices)
    rec = {"id": it.id, "question_type": "multiple-choice", "answer": it.answer, "all_choices": all_choices,
           "index2ans": index2ans}
    if branch == "content":
        resp = _content_response(index2ans[it.answer])
        if sum(t.lower() in resp for t in index2ans.values()) != 1:  # ambiguous texts (e.g. single letters)
            branch = "bracket"
    wrong = next(c for c in all_choices if c != it.answer)
    rec["response"] = {
        "bracket": f"The answer is ({it.answer}).", "letter": f"{it.answer}", "wrong": f"I would say ({wrong}).",
        "content": _content_response(index2ans[it.answer]), "random_empty": "", "random_text": "no idea",
    }[branch]
    return rec, branch


OPEN_RESPONSES = {  # id -> (response, correct)
    "validation_Accounting_2": (None, True),  # filled in from the gold below
    "validation_Art_3": (None, True),
    "validation_Electronics_3": ("It equals 0.75", True),  # list gold ['3/4', '0.75'] (P-M2)
    "validation_Math_2": ("I do not know", False),
}


def _write_outputs(items, root: Path, tweak=None) -> dict:
    """``root/<Subject>/output.json`` for the demo items; returns {id: planned branch}."""
    by_subject, plan, k = {}, {}, 0
    for it in items:
        if it.question_type == "multiple-choice":
            rec, branch = _mc_record(it, MC_PLAN[k % len(MC_PLAN)])
            k += 1
        else:
            resp, _ = OPEN_RESPONSES[it.id]
            rec = {"id": it.id, "question_type": "short-answer", "answer": it.meta.get("answer_raw", it.answer),
                   "response": resp if resp is not None else f"The answer is {str(it.answer).lower()}."}
            branch = "open"
        plan[it.id] = branch
        by_subject.setdefault(it.dimension, []).append(rec)
    if tweak:
        tweak(by_subject)
    for subject, recs in by_subject.items():
        (root / subject).mkdir(parents=True, exist_ok=True)
        (root / subject / "output.json").write_text(json.dumps(recs, indent=1), encoding="utf-8")
    return plan


def _expected_correct(items, plan) -> dict[str, bool]:
    out = {}
    for it in items:
        if plan[it.id] == "open":
            out[it.id] = OPEN_RESPONSES[it.id][1]
        else:
            out[it.id] = plan[it.id] in ("bracket", "letter", "content")
    return out


def test_mmmu_summary_matches_hand_counts(mmmu_items, tmp_path):
    plan = _write_outputs(mmmu_items, tmp_path)
    assert {"bracket", "letter", "content", "wrong", "random_empty", "random_text", "open"} <= set(plan.values())
    with pytest.warns(UserWarning, match="22 of 30 subjects have no output.json"):
        rows, summary = score_mmmu_outputs(tmp_path, use_random=False)
    expected = _expected_correct(mmmu_items, plan)
    by_id = {r["id"]: r for r in rows}
    for it in mmmu_items:
        r = by_id[it.id]
        assert r["correct"] == expected[it.id], (it.id, plan[it.id], r)
        want_mode = {"random_empty": "none", "random_text": "none", "wrong": "bracket", "open": "open"}.get(plan[it.id], plan[it.id])
        assert r["mode"] == want_mode, (it.id, r)
        assert (r["subject"], r["discipline"]) == (it.dimension, it.group)
    # hand counts: 20 MC cycle through 6 branches (bracket/letter/content right, wrong/empty/no-idea not), 4 open (3 right)
    n_right_mc = sum(plan[i] in ("bracket", "letter", "content") for i in plan)
    assert n_right_mc == 11 and sum(expected.values()) == 14
    assert summary["overall"] == {"n": 24, "correct": 14, "accuracy": 14 / 24, "ci_low": None, "ci_high": None, "failed": 0, "n/a": 0}
    assert summary["per_question_type"]["short-answer"] == {"n": 4, "correct": 3, "accuracy": 0.75, "ci_low": None, "ci_high": None, "failed": 0, "n/a": 0}
    assert summary["per_question_type"]["multiple-choice"] == {"n": 20, "correct": 11, "accuracy": 0.55, "ci_low": None, "ci_high": None, "failed": 0, "n/a": 0}
    counts = summary["counts"]
    assert counts["items"] == 24 and counts["subjects"] == 8
    assert counts["fallbacks"] == sum(p.startswith("random") for p in plan.values()) == 6
    assert counts["empty_responses"] == sum(p == "random_empty" for p in plan.values()) == 3
    # per subject and the question-weighted discipline averages (docs/protocols.md §3.8)
    for subject, s in summary["per_subject"].items():
        ids = [it.id for it in mmmu_items if it.dimension == subject]
        assert s == {"n": len(ids), "correct": sum(expected[i] for i in ids), "accuracy": sum(expected[i] for i in ids) / len(ids), "ci_low": None, "ci_high": None, "failed": 0, "n/a": 0}
    for discipline, d in summary["per_discipline"].items():
        ids = [it.id for it in mmmu_items if it.group == discipline]
        assert (d["n"], d["correct"]) == (len(ids), sum(expected[i] for i in ids))
        assert d["complete"] is False
    sci = [it.id for it in mmmu_items if it.group == "Science"]
    assert summary["official"]["Overall-Science"] == {"num": 6, "acc": round(sum(expected[i] for i in sci) / 6, 3)}
    assert list(summary["official"])[-1] == "Overall" and summary["official"]["Overall"]["acc"] == round(14 / 24, 3)
    assert len(summary["subjects_missing"]) == 22 and summary["warnings"]


def test_mmmu_random_fallbacks_replay_one_rng(mmmu_items, tmp_path):
    plan = _write_outputs(mmmu_items, tmp_path)
    rows, summary = score_mmmu_outputs(tmp_path)
    fallback_rows = [r for r in rows if r["fallback"]]
    assert len(fallback_rows) == 6 and all(r["mode"] == "random" for r in fallback_rows)
    rng = random.Random(42)
    choices = {it.id: it.letters for it in mmmu_items}
    assert [r["parsed_pred"] for r in fallback_rows] == [rng.choice(choices[r["id"]]) for r in fallback_rows]
    lucky = sum(r["parsed_pred"] == r["answer"] for r in fallback_rows)
    assert summary["overall"]["correct"] == 14 + lucky
    assert [r["subject"] for r in rows] == sorted(r["subject"] for r in rows)  # official (short-key) order
    assert plan


def test_mmmu_list_gold_and_odd_responses(mmmu_items, tmp_path):
    def tweak(by_subject):
        by_subject["Art"][2]["response"] = None  # the open word item: non-string
        by_subject["Math"].append(dict(by_subject["Math"][0]))  # a duplicate id

    _write_outputs(mmmu_items, tmp_path, tweak)
    with pytest.warns(UserWarning, match="duplicate ids"):
        rows, summary = score_mmmu_outputs(tmp_path, use_random=False, parse_list_gold=False)
    by_id = {r["id"]: r for r in rows}
    assert by_id["validation_Electronics_3"]["correct"] is False  # official: the HF string never matches
    assert summary["counts"]["list_string_golds"] == 1
    art = by_id["validation_Art_3"]
    assert art["response_error"].startswith("not a string") and art["response_empty"] and art["correct"] is False
    assert summary["counts"]["non_string_responses"] == 1 and summary["counts"]["duplicate_ids"] == 1
    assert summary["counts"]["items"] == 25


def test_mmmu_seeding_follows_official_subject_order(tmp_path):
    """Unparseable MC answers in two subjects, written in non-official order: the random letters
    are those of one random.Random(42) consumed Accounting first, then Physics, each in file order."""
    subjects = {  # written Physics first; Physics records out of id order
        "Physics": [("validation_Physics_3", 9), ("validation_Physics_1", 5), ("validation_Physics_2", 2),
                    ("validation_Physics_4", 7)],
        "Accounting": [("validation_Accounting_2", 4), ("validation_Accounting_1", 3), ("validation_Accounting_3", 6)],
    }
    for subject, recs in subjects.items():
        out = []
        for qid, n in recs:
            letters = [chr(ord("A") + i) for i in range(n)]
            out.append({"id": qid, "question_type": "multiple-choice", "answer": "A", "all_choices": letters,
                        "index2ans": {c: f"option {c.lower()}{c.lower()}" for c in letters}, "response": "**hmm**"})
        (tmp_path / subject).mkdir()
        (tmp_path / subject / "output.json").write_text(json.dumps(out))
    official = [(s, qid, n) for s in ("Accounting", "Physics") for qid, n in subjects[s]]
    rng = random.Random(42)
    expected = [rng.choice([chr(ord("A") + i) for i in range(n)]) for _s, _q, n in official]
    rows, summary = score_mmmu_outputs(tmp_path)
    assert [r["id"] for r in rows] == [q for _s, q, _n in official]
    assert [r["parsed_pred"] for r in rows] == expected
    # consuming in the on-disk order would give other letters: the test can tell the orders apart
    rng = random.Random(42)
    on_disk = {q: rng.choice([chr(ord("A") + i) for i in range(n)]) for s in subjects for q, n in subjects[s]}
    assert [on_disk[r["id"]] for r in rows] != expected
    assert summary["counts"]["fallbacks"] == 7


def test_mmmu_bad_inputs_are_named(tmp_path):
    with pytest.raises(DataError, match="no <Subject>/output.json"):
        score_mmmu_outputs(tmp_path)
    (tmp_path / "Math").mkdir()
    (tmp_path / "Math" / "output.json").write_text('[{"id": "validation_Math_1", "question_type": "multiple-choice", "response": "A"}]')
    with pytest.raises(DataError, match="all_choices") as e:
        score_mmmu_outputs(tmp_path)
    assert e.value.item_id == "validation_Math_1"
    (tmp_path / "Math" / "output.json").write_text("{oops")
    with pytest.raises(DataError, match="not valid JSON"):
        score_mmmu_outputs(tmp_path)


# ------------------------------------------------------------------------------------------ CMMMU


@pytest.fixture(scope="module")
def cmmmu_items(demo):
    return cmmmu.load(demo["cmmmu"]["root"], split="val")


def _cmmmu_response(it) -> str:
    if it.meta["type"] == "选择":
        return "".join(f"({c})" for c in it.answer) if len(it.answer) > 1 else f"正确答案是({it.answer})"
    if it.meta["type"] == "判断":
        return "这个说法是正确的。" if it.answer == "对" else "这个说法是错误的。"
    return f"答案是{it.answer}"


def _jsonl(path: Path, rows) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows), encoding="utf-8")
    return path


def test_cmmmu_response_mode_counts(cmmmu_items, demo, tmp_path):
    rows = [{"id": int(it.id), "type": it.meta["type"], "response": _cmmmu_response(it)} for it in cmmmu_items]
    mc = [r for r in rows if r["type"] == "选择"]
    tf = [r for r in rows if r["type"] == "判断"]
    mc[0]["response"] = ""  # empty MC: wrong, no random draw (docs/protocols.md §4.4)
    tf[0]["response"] = None  # non-string: marked, treated as empty -> a 0-0 tie -> random
    dropped = rows.pop()  # a gold id without a response
    rows.append({"id": 99999, "type": "填空", "response": "42"})  # a response id without gold
    rows.append({"id": int(mc[1]["id"]), "type": "选择", "answer": "Z"})  # answer mode, duplicate id (last wins)
    resp = _jsonl(tmp_path / "responses.jsonl", rows)
    with pytest.warns(UserWarning):
        out, summary = score_cmmmu_outputs(resp, Path(demo["cmmmu"]["root"]) / "cmmmu-data-val")
    by_id = {r["id"]: r for r in out}
    assert str(dropped["id"]) not in by_id and "99999" not in by_id
    counts = summary["counts"]
    assert counts["items"] == 19 and counts["unknown_ids"] == 1 and counts["missing_responses"] == 1
    assert counts["duplicate_response_ids"] == 1 and counts["answer_mode_rows"] == 1
    assert counts["empty_responses"] == 2 and counts["non_string_responses"] == 1
    assert counts["mc_without_options"] == 0 and counts["fallbacks"] == 2
    e = by_id[str(mc[0]["id"])]
    assert e["response_empty"] and e["parse_mode"] == "empty" and e["correct"] is False
    n = by_id[str(tf[0]["id"])]
    assert n["response_error"].startswith("not a string") and n["parse_mode"] == "random"
    assert n["parsed_pred"] == random.Random(42).choice(["对", "错"])  # the first draw: no earlier fallback
    assert by_id[str(mc[1]["id"])]["mode"] == "answer" and by_id[str(mc[1]["id"])]["correct"] is False
    multi = [r for r in out if r["answer"] == "AC" and r["mode"] == "response"]
    assert multi and all(r["parsed_pred"] == "AC" and r["correct"] for r in multi)
    # 19 scored: all right except the empty MC, the answer-mode "Z" and (maybe) the random T/F
    lucky = int(n["correct"])
    assert summary["overall"]["correct"] == 16 + lucky
    assert sum(v["n"] for v in summary["per_category"].values()) == 19
    assert list(summary["per_category"]) == [cmmmu.CATEGORY_EN[c] for c in cmmmu.CATEGORY_ORDER]
    assert summary["official"]["Overall"]["entries_num"] == 19
    assert set(summary["per_question_type"]) == {"multiple-choice", "true-false", "fill-in-the-blank"}


def test_cmmmu_answers_without_options_need_questions(cmmmu_items, demo, tmp_path):
    data = Path(demo["cmmmu"]["root"]) / "cmmmu-data-val"
    # gold as the per-category example files: only id/type/answer, the category in the file name
    for folder in cmmmu.CATEGORY_FOLDER.values():
        recs = [json.loads(x) for x in (data / folder / f"{folder}.jsonl").read_text().splitlines()]
        _jsonl(tmp_path / "answers" / f"{folder}.jsonl", [{"id": r["id"], "type": r["type"], "answer": r["answer"]} for r in recs])
    rows = [{"id": int(it.id), "type": it.meta["type"], "response": _cmmmu_response(it)} for it in cmmmu_items]
    single = next(it for it in cmmmu_items if it.meta["type"] == "选择" and it.choices[0].isdigit() and len(it.answer) == 1)
    by_id = {r["id"]: r for r in rows}
    by_id[int(single.id)]["response"] = f"我认为是{single.choices[single.answer_index]}"  # needs the content pass
    resp = _jsonl(tmp_path / "responses.jsonl", rows)
    with_q, s1 = score_cmmmu_outputs(resp, tmp_path / "answers", questions=data)
    assert s1["counts"]["mc_without_options"] == 0 and s1["counts"]["no_category"] == 0
    row = next(r for r in with_q if r["id"] == single.id)
    assert row["parse_mode"] == "content" and row["correct"]
    with pytest.warns(UserWarning, match="without option texts"):
        without_q, s2 = score_cmmmu_outputs(resp, tmp_path / "answers")
    n_mc = sum(it.meta["type"] == "选择" for it in cmmmu_items)
    assert s2["counts"]["mc_without_options"] == n_mc
    row = next(r for r in without_q if r["id"] == single.id)
    # as eval_script.py with this gold file: option texts '' -> the content pass counts every letter alike
    assert row["options_unknown"] and row["parse_mode"] == "content" and row["parsed_pred"] == "ABCD"
    assert not row["correct"] and not row["fallback"]
    assert s1["per_category"].keys() == s2["per_category"].keys()


def test_cmmmu_seeding_follows_official_category_order(cmmmu_items, tmp_path, demo):
    """Unparseable MC answers and T/F ties in per-category response files, read in another order
    than the official one: the draws follow 艺术与设计, 商业, 科学, ... and file order within each."""
    picked = [it for it in cmmmu_items if it.meta["type"] in ("选择", "判断")]
    per_folder: dict[str, list] = {}
    for it in picked:
        per_folder.setdefault(it.meta["category_folder"], []).append(it)
    folders = sorted(per_folder, reverse=True)  # technology_and_engineering ... art_and_design
    for k, folder in enumerate(folders):
        its = per_folder[folder][::-1] if k % 2 else per_folder[folder]
        # numbered file names: the folder is read in the reverse of the official category order
        _jsonl(tmp_path / "resp" / f"{k:02d}_{folder}.jsonl",
               [{"id": int(it.id), "type": it.meta["type"], "response": "不知道"} for it in its])
    with pytest.warns(UserWarning, match="gold ids have no response"):  # fill-in items were left out
        out, summary = score_cmmmu_outputs(tmp_path / "resp", Path(demo["cmmmu"]["root"]) / "cmmmu-data-val")
    file_order = {folder: (per_folder[folder][::-1] if k % 2 else per_folder[folder]) for k, folder in enumerate(folders)}
    official = [it for zh in cmmmu.CATEGORY_ORDER for it in file_order.get(cmmmu.CATEGORY_FOLDER[zh], [])]
    rng = random.Random(42)
    expected = [rng.choice(["A", "B", "C", "D"] if it.meta["type"] == "选择" else ["对", "错"]) for it in official]
    assert [r["id"] for r in out] == [it.id for it in official]
    assert [r["parsed_pred"] for r in out] == expected
    assert all(r["fallback"] for r in out) and summary["counts"]["fallbacks"] == len(official)
    rng = random.Random(42)
    disk = [rng.choice(["A", "B", "C", "D"] if it.meta["type"] == "选择" else ["对", "错"])
            for folder in folders for it in file_order[folder]]
    assert disk != expected  # the two orders give different draws here


def test_cmmmu_bad_rows_are_named(demo, tmp_path):
    resp = _jsonl(tmp_path / "r.jsonl", [{"id": 10007, "type": "选择"}])
    with pytest.raises(DataError, match="needs 'response'") as e:
        score_cmmmu_outputs(resp, Path(demo["cmmmu"]["root"]) / "cmmmu-data-val")
    assert e.value.item_id == "10007" and e.value.path == str(resp)
    bad = _jsonl(tmp_path / "a.jsonl", [{"id": 1, "type": "问答", "answer": "x"}])
    with pytest.raises(DataError, match="unknown type"):
        score_cmmmu_outputs(resp, bad)


# -------------------------------------------------------------------------------------------- CLI


def test_cli_score_responses(mmmu_items, cmmmu_items, demo, tmp_path, capsys):
    _write_outputs(mmmu_items, tmp_path / "mmmu")
    assert cli.main(["score-responses", "--benchmark", "mmmu", "--responses", str(tmp_path / "mmmu"),
                     "--out", str(tmp_path / "o1")]) == 0
    printed = capsys.readouterr().out
    assert "Overall-Science" in printed and "fallbacks 6" in printed
    summary = json.loads((tmp_path / "o1" / "summary.json").read_text())
    preds = [json.loads(x) for x in (tmp_path / "o1" / "predictions.jsonl").read_text().splitlines()]
    assert len(preds) == 24 and summary["counts"]["items"] == 24
    assert {"id", "subject", "discipline", "question_type", "parsed_pred", "answer", "correct", "fallback"} <= set(preds[0])

    data = Path(demo["cmmmu"]["root"]) / "cmmmu-data-val"
    shutil.copytree(data, tmp_path / "answers")
    resp = _jsonl(tmp_path / "c.jsonl", [{"id": int(it.id), "type": it.meta["type"], "response": _cmmmu_response(it)}
                                         for it in cmmmu_items])
    assert cli.main(["score-responses", "--benchmark", "cmmmu", "--responses", str(resp), "--answers",
                     str(tmp_path / "answers"), "--out", str(tmp_path / "o2")]) == 0
    assert "Art & Design" in capsys.readouterr().out
    summary = json.loads((tmp_path / "o2" / "summary.json").read_text(encoding="utf-8"))
    assert summary["overall"] == {"n": 20, "correct": 20, "accuracy": 1.0, "ci_low": None, "ci_high": None, "failed": 0, "n/a": 0}
    assert cli.main(["score-responses", "--benchmark", "cmmmu", "--responses", str(resp), "--out", str(tmp_path / "o3")]) == 2


# ------------------------------------------------------------------------- quirks of official files


def test_cmmmu_ids_join_as_the_official_int_keys_and_are_counted(cmmmu_items, demo, tmp_path):
    """eval_script.py keys both files by int(id): " 0012" in a response file is question 12, counted."""
    rows = [{"id": f" 0{it.id}" if i % 2 else int(it.id), "type": it.meta["type"], "response": _cmmmu_response(it)}
            for i, it in enumerate(cmmmu_items)]
    resp = _jsonl(tmp_path / "responses.jsonl", rows)
    out, summary = score_cmmmu_outputs(resp, Path(demo["cmmmu"]["root"]) / "cmmmu-data-val")
    assert summary["counts"]["unknown_ids"] == 0 and summary["counts"]["missing_responses"] == 0
    assert summary["counts"]["response_ids_read_as_integers"] == len(rows) // 2
    assert {r["id"] for r in out} == {str(int(it.id)) for it in cmmmu_items}


def test_cmmmu_int_option_is_one_line_exit_2(cmmmu_items, tmp_path, capsys):
    """The official content pass counts option texts in the response (str.count): an int option is refused."""
    it = next(i for i in cmmmu_items if i.meta["type"] == "选择")
    gold = _jsonl(tmp_path / "gold.jsonl", [{"id": int(it.id), "type": "选择", "answer": it.answer, "category": "科学",
                                             "option1": 12, "option2": "b", "option3": "c", "option4": "d"}])
    resp = _jsonl(tmp_path / "r.jsonl", [{"id": int(it.id), "type": "选择", "response": "12"}])
    assert cli.main(["score-responses", "--benchmark", "cmmmu", "--responses", str(resp), "--answers", str(gold),
                     "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"item '{int(it.id)}', field 'option1'" in err[0] and "got int 12" in err[0]


def test_mmmu_int_index2ans_is_one_line_exit_2(tmp_path, capsys):
    (tmp_path / "r" / "Math").mkdir(parents=True)
    (tmp_path / "r" / "Math" / "output.json").write_text(json.dumps([
        {"id": "validation_Math_1", "question_type": "multiple-choice", "answer": "A", "all_choices": ["A", "B"],
         "index2ans": {"A": 3, "B": "four"}, "response": "the value would be three, that is the result"}]))
    assert cli.main(["score-responses", "--benchmark", "mmmu", "--responses", str(tmp_path / "r"),
                     "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "item 'validation_Math_1', field 'index2ans'" in err[0] and "option 'A' is int 3" in err[0]
