"""Ranking runs against each other by level averages, N/A where a run lacks a level."""
from mmbench_lib.paper import reports
from mmbench_lib.pipeline import runs
from mmbench_lib.pipeline.config import RunConfig


def test_group_ranks_among_runs(demo, tmp_path):
    args = runs.demo_args("seed2", demo, level="L3")
    dirs = []
    for k, model in enumerate(["random:1", "random:2"]):
        extra = {"generated_dir": demo["seed2"]["generated_dir"], "clip_model": "ViT-S-32", "clip_pretrained": None} if k else {}
        runs.evaluate(RunConfig("seed2", tmp_path / str(k), data=args, model=model, progress=False, **extra))
        dirs.append(tmp_path / str(k))
    loaded = [reports.load_run(d) for d in dirs]
    table = reports.group_ranks(loaded, ["L2", "L3"])
    assert table.loc[0, "L3"] is None or table["L3"].isna()[0]  # run 0 had no image outputs: L3 is N/A
    assert table["L3 rank"].tolist()[1] == 1 and table["L3 rank"].isna()[0]
    l2 = table["L2"].tolist()
    expected = [1, 1] if l2[0] == l2[1] else ([1, 2] if l2[0] > l2[1] else [2, 1])
    assert table["L2 rank"].tolist() == expected
    assert set(table["recipe"]) == {"seed1-ppl"}
    dims = reports.dimension_comparison(loaded)
    assert len(dims) == 27 and dims.shape[1] == 5
