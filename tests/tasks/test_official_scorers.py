"""The official scorers as task methods (issue 38 item 5): ``get_task(name).score_official(...)`` for MMMU and CMMMU as
for MMMU-Pro and MMStar; ``pipeline/rescoring.py`` dispatches to them; a task naming another's official format is
scored by that task (``Task.format_owner``); ``Task.problems()`` asks a task with its own scorer to say what its
files are."""
import json
import os
import random

import pytest

from mmbench_lib.pipeline import rescoring
from mmbench_lib.tasks import mmmu_parser as mparse
from mmbench_lib.tasks.base import GenerationTask, Task, all_tasks, get_task
from mmbench_lib.tasks.mmmu import MMMUTask


def _mmmu_folder(tmp_path):
    """Two subjects of ``output.json`` (docs/protocols.md §3.7): a bracketed letter, an unparseable answer (the
    ``random.Random(42)`` fallback), an open answer."""
    recs = {
        "Art": [{"id": "validation_Art_1", "question_type": "multiple-choice", "answer": "B", "all_choices": ["A", "B"],
                 "index2ans": {"A": "red", "B": "blue"}, "response": "The answer is (B)."},
                {"id": "validation_Art_2", "question_type": "multiple-choice", "answer": "A", "all_choices": ["A", "B"],
                 "index2ans": {"A": "red", "B": "blue"}, "response": "no idea"}],
        "Math": [{"id": "validation_Math_1", "question_type": "open", "answer": "0.75", "response": "It equals 0.75"}],
    }
    for subject, rows in recs.items():
        (tmp_path / subject).mkdir()
        (tmp_path / subject / "output.json").write_text(json.dumps(rows), encoding="utf-8")
    return tmp_path


@pytest.mark.filterwarnings("ignore:.*subjects have no output.json:UserWarning")
def test_mmmu_scores_its_folders_as_a_task_method(tmp_path):
    root = _mmmu_folder(tmp_path)
    rows, summary = get_task("mmmu").score_official(root)
    # the worked example: the fallback draws from random.Random(42) over A, B in the official subject order
    fallback = mparse.parse_multi_choice("no idea", ["A", "B"], {"A": "red", "B": "blue"}, random.Random(42)).pred
    assert [(r["id"], r["correct"]) for r in rows] == [("validation_Art_1", True), ("validation_Art_2", fallback == "A"),
                                                       ("validation_Math_1", True)]
    assert summary["format"] == "subject-folders" and summary["counts"]["fallbacks"] == 1
    assert (rows, summary) == rescoring.score_mmmu_outputs(root)  # the former name, the same scorer
    assert rescoring.score_responses("mmmu", root) == (rows, {"benchmark": "mmmu", **summary})


def test_cmmmu_scores_responses_against_gold_as_a_task_method(tmp_path):
    resp, gold = tmp_path / "responses.jsonl", tmp_path / "gold.jsonl"
    resp.write_text('{"id": 1, "type": "选择", "response": "答案是B"}\n{"id": 2, "type": "判断", "response": "正确"}\n',
                    encoding="utf-8")
    gold.write_text('{"id": 1, "type": "选择", "answer": "B", "category": "科学", "option1": "红", "option2": "蓝", '
                    '"option3": "绿", "option4": "黄"}\n'
                    '{"id": 2, "type": "判断", "answer": "对", "category": "科学"}\n', encoding="utf-8")
    rows, summary = get_task("cmmmu").score_official(resp, gold)
    assert [(r["id"], r["correct"]) for r in rows] == [("1", True), ("2", True)]
    assert summary["official"]["Overall"] == {"correct_num": 2, "entries_num": 2, "acc": 1.0}
    assert (rows, summary) == rescoring.score_cmmmu_outputs(resp, gold)
    with pytest.raises(ValueError) as e:
        get_task("cmmmu").score_official(resp)
    assert "needs --answers" in str(e.value) and "\n" not in str(e.value)


@pytest.mark.skipif(not os.environ.get("MMBENCH_MMMU_OUTPUTS"), reason="set MMBENCH_MMMU_OUTPUTS to the MMMU "
                    "repository's mmmu/example_outputs/qwen_vl")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_the_real_mmmu_outputs_score_the_same_through_the_task():
    root = os.environ["MMBENCH_MMMU_OUTPUTS"]
    assert get_task("mmmu").score_official(root) == rescoring.score_mmmu_outputs(root)


def test_each_scorable_task_owns_a_scorer_and_says_what_its_files_are():
    owners = {t.name: t.format_owner() for t in all_tasks()}
    scorable = {n for n, o in owners.items() if o is not None}
    assert scorable == {t.name for t in rescoring.scorable()} >= {"mmmu", "cmmmu", "mmmu-pro", "mmstar"}
    for name in scorable:
        t = get_task(name)
        assert owners[name] is t and type(t).score_official is not Task.score_official
        assert len(rescoring.format_help(t)) == 2 and all(rescoring.format_help(t))
    seed = get_task("seed")
    assert seed.format_owner() is None
    with pytest.raises(ValueError, match="score-responses supports .*mmmu.*, not 'seed'"):
        rescoring.score_responses("seed", "x")


@pytest.mark.filterwarnings("ignore:.*subjects have no output.json:UserWarning")
def test_a_task_naming_mmmus_format_is_scored_by_mmmu(tmp_path):
    """docs/adding_a_benchmark.md: a new benchmark writing MMMU's subject folders names the format and is scored by
    the task that owns it (no table to edit)."""
    class Sibling(GenerationTask):
        name, official_output = "sibling", MMMUTask.official_output

    task = Sibling()
    assert task.format_owner() is get_task("mmmu") and "score_official() and official_output_help" not in \
        " ".join(task.problems())
    root = _mmmu_folder(tmp_path)
    assert task.score_official(root) == get_task("mmmu").score_official(root)


def test_an_own_scorer_without_words_for_its_files_is_named():
    class Mute(GenerationTask):
        name, official_output = "mute", "mute-format"

        def score_official(self, responses, answers=None, questions=None, **kw):
            return [], {}

    assert any("score_official() and official_output_help go together" in p for p in Mute().problems())
