"""MMBench's test split (answers not public): the file loads with every answer withheld, a run reports no accuracy
(never 0%) and writes the server's submission file, VLMEvalKit's prediction ``.xlsx`` (the TSV's rows without the
image, a ``prediction`` column; ``infer_data_job`` in vlmeval/inference.py at open-compass/VLMEvalKit@e8e78f05)."""
from __future__ import annotations

import csv

import pandas as pd
import pytest

from mmbench_lib.core.items import DataError
from mmbench_lib.core.metrics import summarize
from mmbench_lib.demo import mmbench as demo_mmb
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.pipeline.letters import letter_row
from mmbench_lib.pipeline.ranking import scored_row
from mmbench_lib.tasks import get_task
from mmbench_lib.tasks import mmbench as M
from mmbench_lib.tasks.recipes import get_recipe


@pytest.fixture
def files(tmp_path):
    paths = demo_mmb.make_mmbench_demo(tmp_path / "mmb")
    return {**paths, "test": demo_mmb.make_test_copy(paths["annotation_file"])}


def _file_rows(path) -> list[dict]:
    with open(path, encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f, delimiter="\t"))


def test_test_file_loads_with_answers_withheld(files, tmp_path):
    assert "answer" not in _file_rows(files["test"])[0]
    dev = M.load(files["annotation_file"], cache_dir=tmp_path / "c")
    test = M.load(files["test"], cache_dir=tmp_path / "c")
    assert [(it.id, it.choices) for it in test] == [(it.id, it.choices) for it in dev]
    assert all(it.answer is None and it.split == "test" for it in test) and test[0].meta["edition"] == "MMBench_TEST_EN"
    assert [len(it.meta["copy_rows"]) for it in test] == [it.meta["copies"] for it in dev]
    assert sum(len(it.meta["copy_rows"]) for it in test) == len(_file_rows(files["test"]))
    assert all("copy_rows" not in it.meta for it in dev)  # a dev file's items are as before


def test_a_dev_row_without_its_answer_is_still_an_error(files, tmp_path):
    rows = _file_rows(files["annotation_file"])
    rows[0]["answer"] = ""
    bad = tmp_path / "MMBench_DEV_EN.tsv"
    with open(bad, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerows(rows)
    with pytest.raises(DataError) as e:
        M.load(bad, cache_dir=tmp_path / "c")
    msg = str(e.value)
    assert "\n" not in msg and str(bad) in msg and "answer" in msg and "withheld" in msg


def test_a_file_with_no_answer_at_all_is_a_test_split(files, tmp_path):
    """A file none of whose rows has an answer (the column empty, or absent as in the test TSVs) loads withheld;
    one row without its answer among answered rows is the error above (tests/tasks/test_mmbench.py has the others)."""
    rows = _file_rows(files["annotation_file"])[:1]
    one = tmp_path / "MMBench_TEST_CN.tsv"
    with open(one, "w", encoding="utf-8", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]), delimiter="\t", lineterminator="\n")
        w.writeheader()
        w.writerow({**rows[0], "answer": ""})
    (it,) = M.load(one, cache_dir=tmp_path / "c")
    assert it.answer is None and it.meta["edition"] == "MMBench_TEST_CN" and len(it.meta["copy_rows"]) == 1


def test_withheld_rows_carry_no_correct_flag_and_no_accuracy(files, tmp_path):
    """Ranking and generated-letter rows of a withheld item: ``correct`` None (not False); the metrics say withheld."""
    item = M.load(files["test"], cache_dir=tmp_path / "c")[0]
    scores = [type("S", (), {"sum_logprob": -float(i), "mean_logprob": -float(i), "num_tokens": 1})() for i in range(3)]
    ranked = scored_row(item, scores, get_recipe("mmbench-letters"))
    generated = letter_row(item, "The answer is B.", get_recipe("mmbench-gen"))
    assert (ranked["prediction"], ranked["correct"]) == ("A", None)
    assert (generated["prediction"], generated["correct"]) == ("B", None)
    m = summarize([ranked, {**generated, "id": "x"}], get_task("mmb").groups)
    assert m["scored"] is False and m["counts"]["withheld"] == 2 and m["counts"]["scored"] == 0
    assert all(d["accuracy"] is None and d["n"] == 0 for d in m["per_dimension"] + m["groups"])
    dev = M.load(files["annotation_file"], cache_dir=tmp_path / "c")[0]
    assert "scored" not in summarize([scored_row(dev, scores, get_recipe("mmbench-letters"))], get_task("mmb").groups)


@pytest.mark.slow
def test_ranking_run_on_the_test_split_writes_the_submission_file(files, smollm2, tmp_path):
    """SmolLM2 ranking the letters (recipe mmbench-letters) on the test copy: no accuracy in metrics.json or the
    results table; the submission file holds every row of the TSV, the questions' main rows with the ranked letter."""
    from mmbench_lib.analysis.results import collect, result

    spec = RunSpec.from_params("mmb", tmp_path / "run", data={"annotation_file": files["test"]}, model="smollm2",
                               recipe="mmbench-letters", reduction="mean", limit=6, progress=False)
    metrics = runs.evaluate(spec, smollm2)
    assert metrics["scored"] is False and metrics["counts"]["withheld"] == 6
    assert all(g["accuracy"] is None for g in metrics["groups"])
    record = next(iter(collect(tmp_path / "run")["runs"]))
    assert result(record).cells() == ("n/a", "-")
    sub = pd.read_excel(metrics["submission"], engine="openpyxl")
    tsv = [r for r in _file_rows(files["test"]) if int(r["index"]) % M.OFFSET < 6]  # the first six questions' rows
    assert metrics["submission"].endswith("mmb_MMBench_TEST_EN.xlsx")
    assert list(sub["index"]) == [int(r["index"]) for r in tsv] and "image" not in sub and "prediction" in sub
    preds = {int(r["id"]): r["prediction"] for r in runs.RunStore(tmp_path / "run", readonly=True).rows()}
    main = sub[sub["index"] < M.OFFSET]
    assert dict(zip(main["index"], main["prediction"])) == preds  # one order: the main rows only
    assert sub[sub["index"] >= M.OFFSET]["prediction"].isna().all()


@pytest.mark.slow
def test_circular_runs_fill_one_row_per_copy_with_a_letter(files, smollm2, tmp_path):
    """Every cyclic shift (notebook 52's order runs): each of the file's rows gets the letter the run showing its
    option order ranked first, a letter among that row's options."""
    from mmbench_lib.reports import circular

    spec = RunSpec.from_params("mmb", tmp_path / "circ", data={"annotation_file": files["test"]}, model="smollm2",
                               recipe="mmbench-letters", reduction="mean", limit=4, progress=False)  # 3, 4, 3, 2 options
    folders = circular.order_runs(spec, tmp_path / "circ", adapter=smollm2)
    assert list(folders) == ["rot-0", "rot-1", "rot-2", "rot-3"]
    sub = pd.read_excel(tmp_path / "circ" / "mmb_MMBench_TEST_EN.xlsx", engine="openpyxl")
    tsv = [r for r in _file_rows(files["test"]) if int(r["index"]) % M.OFFSET < 4]
    assert list(sub["index"]) == [int(r["index"]) for r in tsv]  # one row per copy row, in file order
    for _, r in sub.iterrows():
        given = [L for L in "ABCD" if isinstance(r[L], str) and r[L]]
        assert r["prediction"] in given, (r["index"], r["prediction"], given)
    # the rot-1 run's answer to question 0 is the prediction of the copy row showing rot-1's option order
    item = M.load(files["test"], cache_dir=tmp_path / "c")[0]
    row = next(r for r in runs.RunStore(folders["rot-1"], readonly=True).rows() if r["id"] == "0")
    shown = [item.choices[o] for o in row["option_order"]]
    copy = next(c for _, c in sub[sub["index"] % M.OFFSET == 0].iterrows()
                if [c[L] for L in "ABCD"[:len(shown)]] == shown)
    assert copy["prediction"] == row["prediction"]
