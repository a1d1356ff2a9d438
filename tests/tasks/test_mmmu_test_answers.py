"""MMMU test split: withheld without answers; scored when ``answer_dict_test.json`` (the MMMU
repository's format, docs/protocols.md §3.9: ``{id: {question_type, ground_truth}}``) is given, in runs and in
``score-responses --answers``."""
from __future__ import annotations

import json
import shutil

import pytest

from mmbench_lib.core.items import DataError
from mmbench_lib.pipeline.config import RunConfig
from mmbench_lib.pipeline.rescoring import score_responses
from mmbench_lib.pipeline.runs import evaluate
from mmbench_lib.tasks import mmmu


@pytest.fixture()
def data(demo, tmp_path, monkeypatch):
    monkeypatch.setenv("MMBENCH_CACHE", str(tmp_path / "cache"))
    src = tmp_path / "mmmu"
    shutil.copytree(demo["mmmu"]["source"], src)
    items = mmmu.load(src, split="test")
    # golds for the test: alternating letters among each item's options (any gold works: scoring is checked)
    answers = {it.id: {"question_type": "multiple-choice", "ground_truth": it.letters[n % len(it.letters)]}
               for n, it in enumerate(items)}
    return src, items, answers


def demo_source(src):
    return src.parent / "demo_copy"


def test_withheld_without_answers_scored_with_them(data, tmp_path):
    src, items, answers = data
    shutil.copytree(src, demo_source(src))  # the same data without the answer file
    assert items and all(it.answer is None for it in items)
    (src / "answer_dict_test.json").write_text(json.dumps(answers))
    got = mmmu.load(src, split="test")
    assert [it.answer for it in got] == [answers[it.id]["ground_truth"] for it in got]
    val = mmmu.load(src, split="validation")  # other splits keep their own answers
    assert [it.answer for it in val] == [it.answer for it in mmmu.load(demo_source(src), split="validation")]


def test_run_scores_test_split_and_score_responses_agrees(data, tmp_path):
    src, items, answers = data
    withheld = evaluate(RunConfig(benchmark="mmmu", out_dir=tmp_path / "w", baseline="random", progress=False,
                                  source=str(src), split="test"))
    assert withheld["scored"] is False and "submission" in withheld
    (src / "answer_dict_test.json").write_text(json.dumps(answers))
    m = evaluate(RunConfig(benchmark="mmmu", out_dir=tmp_path / "s", baseline="random", progress=False,
                           source=str(src), split="test"))
    assert m["scored"] is True and m["overall"]["n"] == len(items)
    scored = [json.loads(line) for line in (tmp_path / "s" / "scored.jsonl").read_text().splitlines()]
    by_hand = sum(r["parsed_pred"] == answers[r["id"]]["ground_truth"] for r in scored)
    assert m["overall"]["correct"] == by_hand
    # the run's official output.json files (no answers in them) rescored with --answers give the same
    _, summary = score_responses("mmmu", tmp_path / "w" / "official", answers=src / "answer_dict_test.json")
    assert summary["overall"]["correct"] == by_hand and summary["overall"]["n"] == len(items)
    _, none = score_responses("mmmu", tmp_path / "w" / "official")
    assert none["counts"]["judged"] == 0


def test_bad_answer_file_names_file_item_and_field(data, tmp_path):
    src, items, answers = data
    answers[items[0].id]["ground_truth"] = "Z"
    (src / "answer_dict_test.json").write_text(json.dumps(answers))
    with pytest.raises(DataError, match=rf"answer_dict_test.json, item '{items[0].id}', field 'ground_truth': .*'Z'"):
        mmmu.load(src, split="test")
    (src / "answer_dict_test.json").write_text("[1, 2]")
    with pytest.raises(DataError, match="expected \\{id: \\{question_type, ground_truth\\}\\}, found a JSON list"):
        mmmu.load(src, split="test")
