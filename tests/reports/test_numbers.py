"""Reports show a run's number through the one result model (``reports.numbers`` over ``analysis.results``): where a
report's figure covers all of a run's scored items, its value, n and 95% interval cells are the ones ``results.json``,
``mmbench metrics`` and ``mmbench compare`` print for that run (notebooks 50, 51 and 52, real runs on the demo sets)."""
import pandas as pd
import pytest

from mmbench_lib.analysis import results
from mmbench_lib.analysis import tables as tbl
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunSpec
from mmbench_lib.reports import blind, blind_reference, circular, numbers
from mmbench_lib.reports import protocol as pr


def test_rows_and_run_agree_and_an_interval_prints_as_every_table_prints_it(demo, tmp_path):
    folder = tmp_path / "seed"
    runs.evaluate(RunSpec.from_params("seed", folder, data=runs.demo_args("seed", demo), model="random", progress=False))
    whole = numbers.of_run(folder)
    assert whole == results.result(results.collect(folder)["runs"][0])  # the record results.json holds
    rows = numbers.of_rows(pd.read_json(folder / "predictions.jsonl", lines=True), whole.label)
    assert rows == whole and rows.cells() == whole.cells()
    assert numbers.interval_cell(whole.low, whole.high) == whole.cells()[1]
    assert numbers.interval_cell(None, None) is None and numbers.interval_cell(float("nan"), None) is None
    none = numbers.of_rows(pd.DataFrame({"id": ["a"], "correct": [True], "status": ["failed"]}), "x")
    assert (none.value, none.n, none.cells()) == (None, 0, ("n/a", "-"))


def test_notebook_50_shows_the_run_s_own_result(demo, tmp_path):
    rep = pr.seed_report("mmb", runs.demo_args("mmb", demo), tmp_path / "50", model="random", protocols=["content-sum"],
                         scorer="reference", reuse=False, progress=False)
    head = pr.headline_table({"mmb": rep}).iloc[0]
    own = numbers.of_run(tmp_path / "50" / "mmb__seed1-ppl")
    assert head["n"] == own.n == head["scored in run"]  # every item scored by the one protocol: the whole run
    assert (f"{head['accuracy %']:.1f}", head["95% interval"]) == own.cells()


def test_notebook_51_blind_rows_show_the_run_s_own_result_and_paper_rows_empty_cells(demo, tmp_path):
    """MMMU-Val is the whole validation split: our row is the blind run's own result; a paper row has no n and no
    interval, and its cells print empty in the table's Markdown and CSV (not ``<NA>`` / ``nan``)."""
    data = runs.demo_args("mmmu", demo)
    config = RunSpec.from_params("mmmu", tmp_path, data={k: v for k, v in data.items() if k != "split"},
                                 split=data.get("split"), model="random", progress=False)
    folders = blind.blind_runs(config, ["random"], tmp_path)
    table, _note = blind_reference.reference_table(folders)
    ours, paper = table.iloc[0], table.iloc[1:]
    own = numbers.of_run(folders["random"])
    assert ours["source"] == "ours" and ours["n"] == own.n
    assert (f"{ours['accuracy %']:.1f}", ours["95% interval"]) == own.cells() and "demo data" in own.label
    assert paper["n"].isna().all() and paper["95% interval"].isna().all()
    csv, md = tbl.save_table(table, tmp_path, "blind_reference")
    text = md.read_text()
    assert "<NA>" not in text and " nan " not in text and "| ours " in text and own.cells()[1] in text
    chance = next(x for x in text.splitlines() if "| chance " in x)
    assert [c.strip() for c in chance.strip("|").split("|")][-3:] == ["", "22.1", ""]  # n, accuracy %, interval
    assert any(x.endswith(",,22.1,") for x in csv.read_text().splitlines())  # the CSV: the same empty cells


@pytest.mark.parametrize("benchmark", ["seed"])
def test_notebook_52_plain_accuracy_is_the_original_order_run_s_result(benchmark, demo, tmp_path):
    config = RunSpec.from_params(benchmark, tmp_path, data=runs.demo_args(benchmark, demo), model="random",
                                 recipe="qwen-vl-letters", progress=False)
    folders = circular.order_runs(config, tmp_path, permutations=2)
    report = circular.report(folders)
    head = circular.headline_table(report).iloc[-1]
    own = numbers.of_run(folders["rot-0"])
    assert head["items"] == own.n and (f"{head['plain %']:.1f}", head["plain 95%"]) == own.cells()
