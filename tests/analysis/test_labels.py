"""Runs labelled by what they are: a display name (``model_name``; a local folder by its name), the data source
(demo data / full split / subset with n) in results rows and paper labels, the same run folded into one row and
never paired with itself."""
import json
import shutil
from pathlib import Path

import pytest

from mmbench_lib import paper
from mmbench_lib.analysis import results
from mmbench_lib.analysis.plots import model_name
from mmbench_lib.analysis.reader import load_run
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig


@pytest.fixture(scope="module")
def made(demo, tmp_path_factory):
    root = tmp_path_factory.mktemp("labels")
    named = root / "named"
    runs.evaluate(RunConfig("seed", named, data=runs.demo_args("seed", demo), model="random:1", model_name="My VLM",
                            progress=False))
    # the same questions outside the demo folder (no demo stamp): a full split, then a subset of it
    own = root / "data"
    shutil.copytree(Path(demo["seed"]["annotation_file"]).parent, own)
    args = {**runs.demo_args("seed", demo), "annotation_file": str(own / "SEED-Bench.json"), "image_root": str(own / "cc3m")}
    args["video_roots"] = {k: str(own / "videos" / k) for k in args.get("video_roots") or {}}
    full, part = root / "full", root / "part"
    runs.evaluate(RunConfig("seed", full, data=args, model="random:1", progress=False))
    runs.evaluate(RunConfig("seed", part, data=args, model="random:1", limit=10, progress=False))
    return named, full, part


def test_display_name_and_local_folders():
    assert model_name("vlm:/ckpt/run-7/step-500/") == "step-500"
    assert model_name("causal:~/models/mine") == "mine"
    assert model_name("vlm:llava-hf/llava-1.5-7b-hf") == "vlm:llava-hf/llava-1.5-7b-hf"  # a hub id stays whole
    assert model_name("smollm2") == "SmolLM2-135M-Instruct"


def test_results_rows_name_model_and_data(made):
    named, full, part = made
    rows = {p.name: results.run_result(load_run(p), p) for p in made}
    assert rows["named"]["model"] == "My VLM" and rows["named"]["data"] == "demo data"
    n = json.loads((full / "metrics.json").read_text())["counts"]["items"]
    assert rows["full"]["data"] == f"subset (n={n})"  # all of a file, but not the 17,990 items SEED-Bench declares
    assert rows["part"]["data"] == "subset (n=10)"
    table = results.format_table(results.collect(named))
    assert "My VLM" in table and "demo data" in table


def test_paper_labels_say_demo_data(made):
    named, full, part = made
    assert paper.label_of(load_run(named)) == "My VLM [ranking (seed1-ppl, sum), demo data] (ours)"
    assert paper.label_of(load_run(full)).startswith("random [ranking (seed1-ppl, sum), subset (n=")
    assert "subset (n=10)" in paper.label_of(load_run(part))


def test_the_same_run_twice_is_one_row_and_not_paired_with_itself(made, tmp_path):
    named, full, part = made
    copy = tmp_path / "copy"
    shutil.copytree(named, copy)  # the same run in another folder (a copy, or the notebook's demo run named again)
    folded = paper._as_runs([named, named, copy, full])
    assert [r.folder for r in folded] == [named, full]
    assert paper.paired_tests([named, copy]).empty
    pairs = paper.paired_tests([named, copy, full])
    assert len(pairs) == 1 and pairs.iloc[0]["run_a"] != pairs.iloc[0]["run_b"]
    t3 = paper.seed1_table3([named, copy])
    assert (t3["source"] == "ours").sum() == 1


def test_figure_legends_carry_name_and_data(made):
    from mmbench_lib.analysis import plots

    named, full, part = made
    metrics = {p.name: load_run(p).metrics for p in made}
    assert plots.run_label(metrics["named"]) == "My VLM (seed1-ppl, sum), demo data"
    assert plots.run_label(metrics["full"]) == "Random Choice (seed1-ppl, sum), subset (n=36)"  # not SEED's 17,990
    assert plots.run_label(metrics["part"]) == "Random Choice (seed1-ppl, sum), subset (n=10)"


def test_full_split_only_when_the_count_is_the_declared_split_size(made, monkeypatch, tmp_path):
    """'full split' is a fact of the task (Task.split_sizes: 17,990 for SEED-Bench, 24,371, 900, 1,730, ...),
    not of the file being outside the demo folder (issue 35)."""
    from mmbench_lib.tasks.base import get_task
    named, full, part = made
    man = json.loads((full / "manifest.json").read_text())
    n = json.loads((full / "metrics.json").read_text())["counts"]["items"]
    monkeypatch.setattr(type(get_task("seed")), "split_sizes", {"test": n})
    again = tmp_path / "again"
    runs.evaluate(RunConfig("seed", again, data=man["data"], model="random:1", progress=False))
    assert results.run_result(load_run(again), again)["data"] == "full split"
    assert paper.label_of(load_run(again)) == "random [ranking (seed1-ppl, sum)] (ours)"  # a full split needs no note
    from mmbench_lib.analysis import plots
    assert plots.run_label(load_run(again).metrics) == "Random Choice (seed1-ppl, sum)"
    monkeypatch.setattr(type(get_task("seed")), "split_sizes", {"test": n - 1})
    more = tmp_path / "more"
    runs.evaluate(RunConfig("seed", more, data=man["data"], model="random:1", progress=False))
    assert results.run_result(load_run(more), more)["data"] == f"n={n}, not the published {n - 1}"
    assert get_task("seed2").declared_size(None) == 24371 and get_task("mmmu").declared_size("validation") == 900
    assert get_task("mmmu-pro").declared_size("vision-cot") == 1730 and get_task("cmmmu").declared_size("test") == 0


def test_a_cot_run_never_reads_as_an_official_one():
    from mmbench_lib.analysis import plots
    cot = {"model": "smollm2", "baseline": "none", "label": "smollm2", "prompt_mode": "cot", "data": "demo data"}
    assert plots.run_label(cot) == "SmolLM2-135M-Instruct (cot prompt, not official), demo data"
    assert plots.run_label({**cot, "prompt_mode": "official"}) == "SmolLM2-135M-Instruct, demo data"
